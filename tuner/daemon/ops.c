/* ops.c - one handler per protocol operation, dispatched by name from a table that also
 * says which operations change state and need the admin's rights. Handlers read the request
 * with strict type checks and fill the answer; an error is a code and a message naming the
 * field, and never touches what is stored. */
#include "daemon/ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/export.h"
#include "daemon/import.h"
#include "daemon/log.h"
#include "daemon/job_search.h"
#include "daemon/query.h"
#include "daemon/scheduler.h"
#include "daemon/site.h"
#include "engine/sources.h"
#include "engine/stencil.h"
#include "hashes.h"
#include "engine/wire.h"
#include "search/search.h"

#define MAX_BATCH 10000
/* A request that names no device, or "any"; see parse_device. */
#define FDT_DEVICE_KIND (-1)
#define FDT_DEVICE_ANY (-2)
#define MAX_LIST 10000

typedef struct op_ctx {
    fdt_daemon *d;
    const fdt_peer *peer;
    json_t *req;
    json_t *ans;
    const char *body;  /* a query's answer fields as JSON text, memoized; NULL: ans has them */
    const char *code;
    char message[512];
} op_ctx;

static int fail(op_ctx *c, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(op_ctx *c, const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->message, sizeof c->message, fmt, ap);
    va_end(ap);
    c->code = code;
    return -1;
}

static int store_failed(op_ctx *c)
{
    return fail(c, "internal", "the store failed: %s", fdt_store_error(c->d->store));
}

int fdt_peer_is_admin(const fdt_daemon *d, const fdt_peer *peer)
{
    if (peer->uid == 0 || peer->uid == getuid())
        return 1;
    if (!d->has_admin_gid)
        return 0;
    if (peer->gid == d->admin_gid)
        return 1;
    for (int i = 0; i < peer->ngroups; i++)
        if (peer->groups[i] == d->admin_gid)
            return 1;
    return 0;
}

/* --- reading the request ------------------------------------------------------------- */

/* An optional integer field in [min, max]; 0 (left as is when absent) or -1. */
static int opt_int(op_ctx *c, json_t *from, const char *name, long long min, long long max,
                   long long *out)
{
    json_t *v = json_object_get(from, name);
    if (!v)
        return 0;
    if (!json_is_integer(v))
        return fail(c, "bad_request", "'%s' must be an integer", name);
    const long long x = json_integer_value(v);
    if (x < min || x > max)
        return fail(c, "bad_request", "'%s' must be between %lld and %lld, got %lld", name, min,
                    max, x);
    *out = x;
    return 0;
}

/* An optional string field that must be one of choices (NULL-terminated); index in *out. */
static int opt_choice(op_ctx *c, const char *name, const char *const *choices, int *out)
{
    json_t *v = json_object_get(c->req, name);
    if (!v)
        return 0;
    if (!json_is_string(v))
        return fail(c, "bad_request", "'%s' must be a string", name);
    for (int i = 0; choices[i]; i++)
        if (strcmp(json_string_value(v), choices[i]) == 0) {
            *out = i;
            return 0;
        }
    return fail(c, "bad_request", "'%s' cannot be '%.64s'", name, json_string_value(v));
}

static int side(op_ctx *c, json_t *v, const char *name, int *out)
{
    if (!v)
        return fail(c, "bad_request", "'%s' is required", name);
    if (!json_is_integer(v))
        return fail(c, "bad_request", "'%s' must be an integer", name);
    const long long x = json_integer_value(v);
    if (x < 1 || x > FDT_MAX_SIDE)
        return fail(c, "bad_shape", "%s must be between 1 and %d, got %lld", name, FDT_MAX_SIDE,
                    x);
    *out = (int)x;
    return 0;
}

static const char *const precisions[] = {"float", "double", NULL};

/* The fields every problem shares, the shape aside. */
/* "device": an index; "any": any device (FDT_DEVICE_ANY); absent: FDT_DEVICE_KIND, which a
 * query reads as device 0 and a job as any device of device 0's fingerprint. */
static int parse_device(op_ctx *c, int *device)
{
    json_t *v = json_object_get(c->req, "device");
    long long dev = 0;
    if (!v || (json_is_string(v) && strcmp(json_string_value(v), "any") == 0)) {
        *device = v ? FDT_DEVICE_ANY : FDT_DEVICE_KIND;
        return 0;
    }
    if (!json_is_integer(v))
        return fail(c, "bad_request", "'device' must be a device index or \"any\"");
    if (opt_int(c, c->req, "device", 0, 1024, &dev))
        return -1;
    if ((size_t)dev >= c->d->ndevices)
        return fail(c, "no_device", "device %lld does not exist; this host has %zu", dev,
                    c->d->ndevices);
    *device = (int)dev;
    return 0;
}

/* A request's "spec" (a stencil spec as a JSON object, docs/stencils.md): its row's name
 * and radius into p. It names the stencil and the radius itself, so neither may be sent. */
static int parse_spec(op_ctx *c, json_t *spec, fdt_problem *p)
{
    if (json_object_get(c->req, "stencil") || json_object_get(c->req, "radius"))
        return fail(c, "bad_request", "a 'spec' names its stencil and its radius (its reach): "
                    "send neither 'stencil' nor 'radius' with it");
    if (!json_is_object(spec))
        return fail(c, "bad_request", "'spec' must be a stencil spec, a JSON object "
                    "(docs/stencils.md)");
    char *text = json_dumps(spec, JSON_COMPACT);
    char why[256] = "out of memory";
    const fdt_stencil *st = text ? fdt_stencil_from_text(text, strlen(text), why, sizeof why)
                                 : NULL;
    free(text);
    if (!st)
        return fail(c, "bad_request", "spec: %s", why);
    fdt_copy_text(p->stencil, sizeof p->stencil, st->name);
    p->radius = st->min_radius;
    return 0;
}

/* "pitch" (a row pitch, or "auto") and "offset" into p, checked with its shape. */
static int parse_layout(op_ctx *c, fdt_problem *p)
{
    json_t *pitch = json_object_get(c->req, "pitch");
    long long offset = 0, rows = 0;
    if (json_is_string(pitch) && strcmp(json_string_value(pitch), "auto") == 0) {
        if (json_object_get(c->req, "offset"))
            return fail(c, "bad_request", "pitch \"auto\" chooses the offset too: send no "
                        "'offset' with it");
        p->pitch = FDT_PITCH_AUTO;
        return 0;
    }
    if (pitch && !json_is_integer(pitch))
        return fail(c, "bad_request", "'pitch' must be a row pitch in points or \"auto\"");
    if (opt_int(c, c->req, "pitch", 1, FDT_MAX_SIDE + FDT_PITCH_PAD_MAX, &rows) ||
        opt_int(c, c->req, "offset", 0, FDT_OFFSET_BYTES, &offset))
        return -1;
    p->pitch = (int)rows;
    p->offset = (int)offset;
    return 0;
}

static int parse_problem_options(op_ctx *c, fdt_key *key, int *device)
{
    int precision = 1, cache = FDT_CACHE_AUTO, stencil = -1; /* -1: the default stencil */
    long long radius = 1;
    if (opt_choice(c, "precision", precisions, &precision) ||
        opt_choice(c, "cache", fdt_cache_mode_names(), &cache) ||
        opt_choice(c, "stencil", fdt_stencil_names(), &stencil) ||
        opt_int(c, c->req, "radius", 1, FDT_MAX_RADIUS, &radius) || parse_device(c, device))
        return -1;
    memset(key, 0, sizeof *key);
    key->problem.precision = precision == 0 ? FDT_FLOAT : FDT_DOUBLE;
    key->problem.radius = (int)radius;
    fdt_copy_text(key->problem.stencil, sizeof key->problem.stencil,
                  stencil < 0 ? fdt_stencil_default()->name : fdt_stencil_names()[stencil]);
    key->problem.cache = (fdt_cache_mode)cache;
    json_t *spec = json_object_get(c->req, "spec");
    if (spec && parse_spec(c, spec, &key->problem))
        return -1;
    return parse_layout(c, &key->problem);
}

/* The shape and layout's checks; pitch auto is checked as the dense layout it starts from. */
static int check_shape(op_ctx *c, fdt_problem *p)
{
    const int pitch = p->pitch;
    if (pitch == FDT_PITCH_AUTO)
        p->pitch = 0;
    fdt_problem_canonical_layout(p);
    const char *why = fdt_problem_check(p);
    p->pitch = pitch == FDT_PITCH_AUTO ? pitch : p->pitch;
    return why ? fail(c, "bad_shape", "%s", why) : 0;
}

static int parse_key(op_ctx *c, fdt_key *key, int *device)
{
    if (parse_problem_options(c, key, device) || side(c, json_object_get(c->req, "nx"), "nx",
                                                      &key->problem.nx) ||
        side(c, json_object_get(c->req, "ny"), "ny", &key->problem.ny) ||
        side(c, json_object_get(c->req, "nz"), "nz", &key->problem.nz))
        return -1;
    return check_shape(c, &key->problem);
}

static int job_id_field(op_ctx *c, int64_t *id)
{
    json_t *v = json_object_get(c->req, "job");
    if (!v)
        return fail(c, "bad_request", "'job' is required");
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        return fail(c, "bad_request", "'job' must be a positive integer");
    *id = json_integer_value(v);
    return 0;
}

/* --- writing the answer ---------------------------------------------------------------- */

/* What is left of the leaders' round that ends a job: as long as the last one on its
 * device took, or before any, as its first pass says (fdt_scheduler_outlook). */
static double leaders_left_s(const fdt_outlook *next)
{
    return next->leaders_s > next->leaders_spent_s ? next->leaders_s - next->leaders_spent_s : 0;
}

/* What a job has cost so far, and while its search runs, how far it goes: the evaluations
 * it expects in all (done, and what its search takes yet on the mean:
 * fdt_scheduler_outlook, never the whole space of a search that stops by patience), and
 * the time they take at its steady rate, no later than its budget of seconds ends it, and
 * its leaders' round after them. */
static json_t *cost_json(fdt_daemon *d, const fdt_job *j)
{
    const double rate = j->wall_s > 0 ? j->done / j->wall_s : 0;
    json_t *o = json_pack("{s:f, s:f, s:f, s:f, s:f}", "wall_s", j->wall_s, "compile_s",
                          j->compile_s, "gpu_s", j->gpu_s, "gpu_busy",
                          j->wall_s > 0 ? j->gpu_s / j->wall_s : 0, "evals_per_s", rate);
    fdt_outlook next;
    if (j->state != FDT_JOB_RUNNING || fdt_scheduler_outlook(d, j->id, &next) != 0)
        return o;
    json_object_set_new(o, "expected", json_integer(j->done + next.left));
    if (next.rate > 0) {
        double eta = next.left / next.rate;
        if (j->budget_s > 0 && j->budget_s - j->spent_s < eta)
            eta = j->budget_s > j->spent_s ? j->budget_s - j->spent_s : 0;
        json_object_set_new(o, "eta_s", json_real(eta + leaders_left_s(&next)));
    }
    return o;
}

/* Which devices may run the job: its index, or "any" with the fingerprint they must have
 * ("" : any device at all). */
static void add_device(json_t *o, const fdt_job *j)
{
    if (j->device_index >= 0) {
        json_object_set_new(o, "device", json_integer(j->device_index));
        return;
    }
    json_object_set_new(o, "device", json_string("any"));
    json_object_set_new(o, "fingerprint", json_string(j->fingerprint));
}

/* A job that chooses the cache state reads as it was asked for: auto. */
static json_t *job_json(fdt_daemon *d, const fdt_job *j)
{
    const fdt_problem *p = &j->key.problem;
    const fdt_cache_mode cache = j->choose_cache ? FDT_CACHE_AUTO : p->cache;
    json_t *o = json_pack("{s:I, s:s, s:s, s:i, s:i, s:i, s:s, s:i, s:s, s:s, s:s, s:i, s:i, "
                          "s:I}",
                          "id", (json_int_t)j->id, "state", fdt_job_state_name(j->state), "phase",
                          fdt_job_phase_name(j->phase), "nx", p->nx, "ny", p->ny, "nz", p->nz, "precision",
                          fdt_precision_name(p->precision), "radius", p->radius, "stencil",
                          j->key.problem.stencil, "cache", fdt_cache_mode_name(cache), "family",
                          j->family, "subset", j->subset, "priority", j->priority, "batch",
                          (json_int_t)j->batch);
    add_device(o, j);
    json_object_set_new(o, "pitch", json_integer(fdt_problem_pitch(p)));
    json_object_set_new(o, "offset", json_integer(p->offset));
    json_object_set_new(o, "cost", cost_json(d, j));
    json_t *more = json_pack("{s:i, s:i, s:i, s:i, s:s?, s:f, s:I, s:I, s:I, s:s}", "total",
                             j->total, "done", j->done, "ok", j->ok, "failed", j->failed, "best",
                             j->best_variant[0] ? j->best_variant : NULL, "best_gbps",
                             j->best_gbps, "created", (json_int_t)j->created, "started",
                             (json_int_t)j->started, "finished", (json_int_t)j->finished,
                             "error", j->error);
    json_object_update(o, more);
    json_decref(more);
    json_t *search = json_pack("{s:s, s:I, s:f, s:I, s:b, s:f, s:s?, s:s}", "strategy",
                               j->strategy, "budget", (json_int_t)j->budget, "budget_s",
                               j->budget_s, "patience", (json_int_t)j->patience, "quick",
                               j->quick, "spent_s", j->spent_s, "warm",
                               j->has_warm ? j->warm : NULL, "ended_by", j->ended_by);
    json_object_set_new(search, "ran_on",
                        j->ran_on >= 0 ? json_integer(j->ran_on) : json_null());
    json_object_set_new(search, "noisy", json_integer(j->noisy));
    json_object_set_new(search, "doubt", json_string(j->doubt));
    json_object_set_new(search, "remeasures", json_integer(j->remeasures));
    json_object_update(o, search);
    json_decref(search);
    if (j->origin_store[0]) /* its rows came from another fdtuned's store (import.c) */
        json_object_set_new(o, "origin",
                            json_pack("{s:s, s:s, s:I, s:s, s:I}", "store", j->origin_store,
                                      "host", j->origin_host, "job", (json_int_t)j->origin_job,
                                      "fdtuned", j->fdtuned, "imported",
                                      (json_int_t)j->imported));
    return o;
}

static json_t *device_json(fdt_daemon *d, size_t i)
{
    const fdt_device_slot *s = &d->devices[i];
    json_t *o = fdt_wire_device_json(&s->info);
    json_object_set_new(o, "index", json_integer((json_int_t)i));
    json_object_set_new(o, "fingerprint", json_string(s->fingerprint));
    json_t *balance = fdt_wire_balance_json(&s->balance);
    json_object_set_new(balance, "doubt", json_string(s->balance.doubt));
    json_object_set_new(o, "balance", balance);
    json_object_set_new(o, "worker",
                        json_string(fdt_lane_state_name(fdt_scheduler_lane_state(d, i))));
    return o;
}

/* --- operations ------------------------------------------------------------------------ */

static int op_ping(op_ctx *c)
{
    json_object_set_new(c->ans, "pong", json_true());
    json_object_set_new(c->ans, "version", json_string(FDT_VERSION));
    return 0;
}

static int op_devices(op_ctx *c)
{
    json_t *list = json_array();
    for (size_t i = 0; i < c->d->ndevices; i++)
        json_array_append_new(list, device_json(c->d, i));
    json_object_set_new(c->ans, "devices", list);
    return 0;
}

/* Queues a job unless the same one is queued or running; the answer names it either way. */
/* A job of a spec's stencil keeps the spec in the store first, so that the daemon knows the
 * stencil again after a restart (a resumed job, a query of its answers). */
static int queue_job(op_ctx *c, fdt_job *job, int *existing)
{
    const fdt_stencil *st = fdt_stencil_of(&job->key.problem);
    if (st && st->text && fdt_store_stencil_put(c->d->store, st->name, st->text) != 0)
        return store_failed(c);
    fdt_job found;
    const int active = fdt_store_job_find_active(c->d->store, job, &found);
    if (active < 0)
        return store_failed(c);
    *existing = active;
    if (active) {
        *job = found;
        return 0;
    }
    if (fdt_store_job_create(c->d->store, job) != 0)
        return store_failed(c);
    return 0;
}

/* How the job searches, the daemon's [search] settings where the request is silent. */
static int parse_search(op_ctx *c, fdt_job *job)
{
    const fdt_config *cfg = &c->d->config;
    int strategy = 0;
    long long budget = cfg->budget, patience = cfg->patience;
    double budget_s = cfg->budget_s;
    fdt_copy_text(job->strategy, sizeof job->strategy, cfg->strategy);
    json_t *seconds = json_object_get(c->req, "budget_s");
    if (opt_int(c, c->req, "budget", 0, FDT_SEARCH_EVALS_MAX, &budget) ||
        opt_int(c, c->req, "patience", 0, FDT_SEARCH_EVALS_MAX, &patience))
        return -1;
    if (seconds && (!json_is_number(seconds) || !(json_number_value(seconds) >= 0) ||
                    json_number_value(seconds) > FDT_SEARCH_SECONDS_MAX))
        return fail(c, "bad_request", "'budget_s' must be a number of seconds from 0 to %d",
                    FDT_SEARCH_SECONDS_MAX);
    if (seconds)
        budget_s = json_number_value(seconds);
    if (json_object_get(c->req, "strategy")) {
        if (opt_choice(c, "strategy", fdt_strategy_names(), &strategy))
            return -1;
        fdt_copy_text(job->strategy, sizeof job->strategy, fdt_strategy_names()[strategy]);
    }
    /* Exhaustive means every variant: the configured patience is for the searches that
     * choose, and applies to exhaustive only when the request names it. */
    if (strcmp(job->strategy, "exhaustive") == 0 && !json_object_get(c->req, "patience"))
        patience = 0;
    job->budget = budget;
    job->budget_s = budget_s;
    job->patience = patience;
    return 0;
}

static int parse_tuning_options(op_ctx *c, fdt_job *job)
{
    json_t *family = json_object_get(c->req, "family");
    long long subset = 0;
    /* Auto measures hot, as its first pass does, and chooses in the leaders' rounds. */
    if (job->key.problem.cache == FDT_CACHE_AUTO) {
        job->key.problem.cache = FDT_CACHE_HOT;
        job->choose_cache = 1;
    }
    /* The workers time with the same buffers sample after sample; a cold-cache measurement
     * (L2 flushed or buffers rotated) is not built yet, and storing hot numbers under
     * "cold" would be a lie. */
    if (job->key.problem.cache == FDT_CACHE_COLD)
        return fail(c, "bad_request", "cold-cache tuning is not implemented yet; \"cache\": "
                    "\"hot\" and \"persist\" can be tuned");
    const int index = job->device_index >= 0 ? job->device_index : 0;
    const fdt_device_info *dev = &c->d->devices[index].info;
    if (job->key.problem.cache == FDT_CACHE_PERSIST && !dev->l2_persist)
        return fail(c, "bad_request", "device %d (%s, %s backend) cannot hold f's row edges in "
                    "L2: cache mode persist needs NVIDIA sm_80 or later", index, dev->name,
                    dev->backend);
    if (opt_int(c, c->req, "subset", 0, 1000000, &subset) || parse_search(c, job))
        return -1;
    job->subset = (int)subset;
    if (!family)
        return 0;
    if (!json_is_string(family))
        return fail(c, "bad_request", "'family' must be a string");
    const fdt_family *f = fdt_family_find(json_string_value(family));
    if (!f)
        return fail(c, "bad_request", "unknown kernel family '%.32s'", json_string_value(family));
    if (fdt_family_test_only(f) && !c->d->config.test_families)
        return fail(c, "bad_request", "family '%s' is test-only; the daemon's configuration "
                    "does not enable test_families", fdt_family_name(f));
    fdt_copy_text(job->family, sizeof job->family, fdt_family_name(f));
    return 0;
}

/* A job for device (an index, FDT_DEVICE_KIND or FDT_DEVICE_ANY); priority 1: an
 * interactive tune, which runs before queued batch jobs. */
static int new_job(op_ctx *c, const fdt_key *key, int device, int priority, fdt_job *job)
{
    memset(job, 0, sizeof *job);
    job->key = *key;
    job->device_index = device >= 0 ? device : -1;
    job->ran_on = -1;
    if (device == FDT_DEVICE_KIND)
        fdt_copy_text(job->fingerprint, sizeof job->fingerprint, c->d->devices[0].fingerprint);
    job->priority = priority;
    return parse_tuning_options(c, job);
}

static int queue_batch(op_ctx *c, const fdt_job *like, const fdt_problem *ps, size_t n,
                       json_t *ids);

/* The layouts a problem stands for: its own, or under pitch auto every candidate. */
static int layouts_of(const fdt_problem *p, fdt_problem out[FDT_LAYOUTS_MAX])
{
    if (p->pitch != FDT_PITCH_AUTO) {
        out[0] = *p;
        return 1;
    }
    fdt_problem dense = *p;
    dense.pitch = 0;
    return fdt_layout_candidates(&dense, out);
}

/* The job's problem queued in each of its layouts: one job, or under pitch auto one per
 * candidate in one transaction (a batch, however few). `to` names the first (the dense
 * layout's) as "job"; a single job's state and whether it was there already, or under
 * auto every one in "jobs" (tune_if_missing's answer takes "job" alone). */
static int queue_layouts(op_ctx *c, fdt_job *job, json_t *to, int job_alone)
{
    int existing;
    if (job->key.problem.pitch != FDT_PITCH_AUTO) {
        if (queue_job(c, job, &existing))
            return -1;
        json_object_set_new(to, "job", json_integer(job->id));
        if (!job_alone) {
            json_object_set_new(to, "state", json_string(fdt_job_state_name(job->state)));
            json_object_set_new(to, "existing", json_boolean(existing));
        }
        return 0;
    }
    fdt_problem layouts[FDT_LAYOUTS_MAX];
    const int n = layouts_of(&job->key.problem, layouts);
    json_t *ids = json_array();
    if (queue_batch(c, job, layouts, (size_t)n, ids)) {
        json_decref(ids);
        return -1;
    }
    json_object_set(to, "job", json_array_get(ids, 0));
    if (!job_alone)
        json_object_set(to, "jobs", ids);
    json_decref(ids);
    return 0;
}

static int op_tune(op_ctx *c)
{
    fdt_key key;
    fdt_job job;
    int device;
    if (parse_key(c, &key, &device) || new_job(c, &key, device, 1, &job) ||
        queue_layouts(c, &job, c->ans, 0))
        return -1;
    fdt_scheduler_kick(c->d);
    return 0;
}

/* An exact answer measured on this very device's kind (its fingerprint). */
static int a_exact_here(const json_t *to)
{
    return strcmp(json_string_value(json_object_get(to, "match")), "exact") == 0 &&
           strcmp(json_string_value(json_object_get(to, "device_match")), "fingerprint") == 0;
}

/* Whether the answer comes from the store or the site store ("source"), and where and when
 * its winner was measured: "measured": {host, job (its id there), fdtuned, kernels, at, and
 * imported (when, 0: measured here) or site (the site store's path)}. An imported winner of
 * this device's kind answers as match "imported" under confirm_imported until a job here
 * has timed it (import.c). */
static int add_provenance(op_ctx *c, const fdt_best *b, json_t *to)
{
    fdt_job j;
    const fdt_site_origin *site = fdt_site_origin_of(c->d, b);
    json_object_set_new(to, "source", json_string(site ? "site" : "store"));
    if (site) {
        json_object_set_new(to, "measured",
                            json_pack("{s:s, s:I, s:s, s:s, s:I, s:s}", "host", site->host,
                                      "job", (json_int_t)site->job, "fdtuned", site->fdtuned,
                                      "kernels", b->kernels, "at", (json_int_t)b->updated,
                                      "site", c->d->site->path));
        return 0;
    }
    const int found = fdt_store_job_get(c->d->store, b->job_id, &j);
    if (found < 0)
        return store_failed(c);
    if (found == 0) /* a best row older than its job's record: nothing to say */
        return 0;
    if (j.imported && c->d->config.confirm_imported && a_exact_here(to))
        json_object_set_new(to, "match", json_string("imported"));
    json_object_set_new(to, "measured",
                        json_pack("{s:s, s:I, s:s, s:s, s:I, s:I}", "host",
                                  j.origin_store[0] ? j.origin_host : c->d->host, "job",
                                  (json_int_t)(j.origin_store[0] ? j.origin_job : j.id),
                                  "fdtuned", j.fdtuned, "kernels", b->kernels, "at",
                                  (json_int_t)b->updated, "imported", (json_int_t)j.imported));
    return 0;
}

/* The layout the solver is to lay its fields out in: "pitch" and "offset" (docs/protocol.md,
 * "query"). Under pitch auto also the dense layout's figure and what the answer's gains on
 * it (null where the dense layout was not measured, or the answer is not exact). */
static void add_layout(const fdt_answer *a, const fdt_problem *asked, json_t *to)
{
    json_t *o = json_pack("{s:i, s:i}", "pitch", fdt_problem_pitch(asked), "offset",
                          asked->offset);
    if (a->layout_auto) {
        const int known = a->match == FDT_MATCH_EXACT && a->dense_gbps > 0;
        json_object_set_new(o, "dense_gbps", known ? json_real(a->dense_gbps) : json_null());
        json_object_set_new(o, "gain", known ? json_real(a->best.gbps / a->dense_gbps)
                                             : json_null());
    }
    json_object_set_new(to, "layout", o);
}

static int add_answer_fields(op_ctx *c, const fdt_answer *a, const fdt_problem *asked,
                             json_t *to)
{
    const char *variant = a->match == FDT_MATCH_DEFAULT ? NULL : a->best.variant;
    char kernel1[FDT_VARIANT_NAME_MAX];
    if (!variant) {
        const fdt_variant k1 = fdt_variant_kernel1(asked);
        fdt_variant_name(&k1, kernel1, sizeof kernel1);
        variant = kernel1;
    }
    json_t *config = fdt_query_config_json(variant, asked);
    if (!config)
        return fail(c, "internal", "the stored variant '%s' does not parse", variant);
    json_object_set_new(to, "match", json_string(fdt_match_name(a->match)));
    json_object_set_new(to, "device_match", json_string(fdt_level_name(a->level)));
    json_object_set_new(to, "config", config);
    add_layout(a, asked, to);
    if (a->match == FDT_MATCH_DEFAULT)
        return 0;
    /* The state the figures were timed in; persist's set-up step is the solver's to run. */
    json_object_set_new(to, "cache", json_string(fdt_cache_mode_name(a->best.state)));
    if (a->best.state == FDT_CACHE_PERSIST)
        json_object_set_new(config, "persist", fdt_query_persist_json(asked));
    const fdt_problem *t = &a->best.key.problem;
    json_object_set_new(to, "from",
                        json_pack("{s:i, s:i, s:i, s:s, s:s, s:s}", "nx", t->nx, "ny", t->ny,
                                  "nz", t->nz, "device", a->from.name, "driver",
                                  a->from.driver_version, "compiler", a->from.compiler_version));
    json_object_set_new(to, "distance", json_real(a->distance));
    if (a->match == FDT_MATCH_NEAREST)
        json_object_set_new(to, "chosen_by", json_string(a->chosen_by));
    if (a->match == FDT_MATCH_NEAREST && strcmp(a->chosen_by, "model") == 0) {
        json_object_set_new(to, "neighbours", json_integer((json_int_t)a->neighbours));
        json_object_set_new(to, "expected", json_real(a->expected));
    }
    json_object_set_new(to, "gbps", json_real(a->best.gbps));
    json_object_set_new(to, "copy_gbps", json_real(a->best.copy_gbps));
    json_object_set_new(to, "interior_copy_gbps", json_real(a->best.interior_copy_gbps));
    json_object_set_new(to, "kernel1_gbps", json_real(a->best.kernel1_gbps));
    json_object_set_new(to, "kernels_current",
                        json_boolean(strcmp(a->best.kernels, fdt_kernels_version()) == 0));
    if (a->best.doubt[0])
        json_object_set_new(to, "doubt", json_string(a->best.doubt));
    return add_provenance(c, &a->best, to);
}

/* The answer to a problem: from memory, and for a shape not tuned on a device that has
 * results, the guided model's choice among the nearest tuned problems' measured variants
 * rather than the nearest one's winner alone. Auto answers a shape's own choice; a shape
 * never tuned in auto answers as hot, which asks the solver for no set-up. */
static void find_answer(op_ctx *c, const fdt_key *asked, int device, fdt_answer *a)
{
    fdt_key key = *asked;
    fdt_query_find(c->d, &c->d->devices[device], &key, a);
    if (key.problem.cache == FDT_CACHE_AUTO && a->match != FDT_MATCH_EXACT) {
        key.problem.cache = FDT_CACHE_HOT;
        fdt_query_find(c->d, &c->d->devices[device], &key, a);
    }
    if (a->match != FDT_MATCH_NEAREST)
        return;
    a->chosen_by = "nearest";
    char variant[FDT_VARIANT_NAME_MAX];
    if (fdt_instant_answer(c->d, (size_t)device, a->best.device_id, &key, variant,
                           sizeof variant, &a->expected, &a->neighbours) == 0) {
        fdt_copy_text(a->best.variant, sizeof a->best.variant, variant);
        a->chosen_by = "model";
    }
}

/* Pitch auto: the fastest of the candidate layouts measured for the asked shape itself
 * (exact), else the dense layout's answer (nearest or default). *chosen: the layout the
 * answer names, which the solver lays its fields out in. */
static void find_layout_answer(op_ctx *c, const fdt_key *asked, int device, fdt_answer *a,
                               fdt_problem *chosen)
{
    fdt_problem layouts[FDT_LAYOUTS_MAX];
    const int n = layouts_of(&asked->problem, layouts);
    fdt_key key = *asked;
    double dense_gbps = 0;
    for (int i = 0; i < n; i++) {
        fdt_answer one;
        key.problem = layouts[i];
        find_answer(c, &key, device, &one);
        const int better = one.match == FDT_MATCH_EXACT &&
                           (a->match != FDT_MATCH_EXACT || one.best.gbps > a->best.gbps);
        if (i == 0 || better) {
            *a = one;
            *chosen = layouts[i];
        }
        if (i == 0 && one.match == FDT_MATCH_EXACT)
            dense_gbps = one.best.gbps;
    }
    a->layout_auto = asked->problem.pitch == FDT_PITCH_AUTO;
    a->dense_gbps = dense_gbps;
}

/* A miss that may queue a job: answered in full, never memoized. */
static int query_and_tune(op_ctx *c, const fdt_key *key, int device)
{
    fdt_answer a;
    fdt_problem chosen;
    find_layout_answer(c, key, device >= 0 ? device : 0, &a, &chosen);
    if (add_answer_fields(c, &a, &chosen, c->ans))
        return -1;
    if (a.match == FDT_MATCH_EXACT)
        return 0;
    if (!fdt_peer_is_admin(c->d, c->peer))
        return fail(c, "forbidden", "tune_if_missing needs the rights of tune");
    fdt_job job;
    if (new_job(c, key, device, 1, &job))
        return -1;
    /* The quick job first: the answer improves within seconds, then the search goes on. */
    job.quick = strcmp(job.strategy, "exhaustive") != 0;
    if (queue_layouts(c, &job, c->ans, 1))
        return -1;
    fdt_scheduler_kick(c->d);
    return 0;
}

/* Solvers ask the same shapes over and over; the answer's text is kept until something new
 * is tuned, so that most queries cost a lookup instead of building JSON. */
static int op_query(op_ctx *c)
{
    fdt_key key;
    int device;
    json_t *tune = json_object_get(c->req, "tune_if_missing");
    if (parse_key(c, &key, &device))
        return -1;
    if (tune && !json_is_boolean(tune))
        return fail(c, "bad_request", "'tune_if_missing' must be true or false");
    if (json_is_true(tune))
        return query_and_tune(c, &key, device);
    device = device >= 0 ? device : 0; /* answers are a device's: device 0's by default */
    c->body = fdt_query_memo_get(c->d, device, &key);
    if (c->body)
        return 0;
    fdt_answer a;
    fdt_problem chosen;
    find_layout_answer(c, &key, device, &a, &chosen);
    json_t *fields = json_object();
    const int rc = add_answer_fields(c, &a, &chosen, fields);
    if (rc == 0)
        c->body = fdt_query_memo_put(c->d, device, &key, json_dumps(fields, JSON_COMPACT));
    if (rc == 0 && !c->body)
        json_object_update(c->ans, fields); /* out of memory for the text: answer anyway */
    json_decref(fields);
    return rc;
}

static int shape_triple(op_ctx *c, json_t *item, size_t index, fdt_problem *p)
{
    char name[32];
    if (!json_is_array(item) || json_array_size(item) != 3)
        return fail(c, "bad_request", "shapes[%zu] must be [nx, ny, nz]", index);
    int *sides[3] = {&p->nx, &p->ny, &p->nz};
    for (size_t k = 0; k < 3; k++) {
        snprintf(name, sizeof name, "shapes[%zu][%zu]", index, k);
        if (side(c, json_array_get(item, k), name, sides[k]))
            return -1;
    }
    if (check_shape(c, p) == 0)
        return 0;
    char why[sizeof c->message];
    memcpy(why, c->message, sizeof why);
    return fail(c, "bad_shape", "shapes[%zu]: %s", index, why);
}

static int sweep_list(op_ctx *c, json_t *sweep, const char *axis, json_t **out)
{
    json_t *list = json_object_get(sweep, axis);
    if (!json_is_array(list) || json_array_size(list) == 0)
        return fail(c, "bad_request", "sweep.%s must be a non-empty list of integers", axis);
    *out = list;
    return 0;
}

/* A sweep is every combination of its axes, written out as a list of shapes. */
static int expand_sweep(op_ctx *c, json_t *sweep, json_t **shapes)
{
    json_t *x, *y, *z;
    if (!json_is_object(sweep))
        return fail(c, "bad_request", "'sweep' must be an object with nx, ny and nz lists");
    if (sweep_list(c, sweep, "nx", &x) || sweep_list(c, sweep, "ny", &y) ||
        sweep_list(c, sweep, "nz", &z))
        return -1;
    const size_t n = json_array_size(x) * json_array_size(y) * json_array_size(z);
    if (n > MAX_BATCH)
        return fail(c, "bad_request", "the sweep has %zu shapes; at most %d", n, MAX_BATCH);
    *shapes = json_array();
    for (size_t i = 0; i < json_array_size(x); i++)
        for (size_t j = 0; j < json_array_size(y); j++)
            for (size_t k = 0; k < json_array_size(z); k++)
                json_array_append_new(*shapes, json_pack("[O,O,O]", json_array_get(x, i),
                                                         json_array_get(y, j),
                                                         json_array_get(z, k)));
    return 0;
}

static int batch_shapes(op_ctx *c, json_t **shapes)
{
    json_t *list = json_object_get(c->req, "shapes");
    json_t *sweep = json_object_get(c->req, "sweep");
    if (!list == !sweep)
        return fail(c, "bad_request", "give either 'shapes' or 'sweep'");
    if (sweep)
        return expand_sweep(c, sweep, shapes);
    if (!json_is_array(list) || json_array_size(list) == 0)
        return fail(c, "bad_request", "'shapes' must be a non-empty list of [nx, ny, nz]");
    if (json_array_size(list) > MAX_BATCH)
        return fail(c, "bad_request", "%zu shapes; at most %d", json_array_size(list), MAX_BATCH);
    *shapes = json_incref(list);
    return 0;
}

/* Queues one job per problem in one transaction: all of them or, when a write fails (a
 * full disk), none, so that no job is queued whose id the answer does not carry. One
 * commit also makes 10,000 shapes cost milliseconds instead of seconds. */
static int queue_batch(op_ctx *c, const fdt_job *like, const fdt_problem *ps, size_t n,
                       json_t *ids)
{
    int existing;
    int64_t batch = 0;
    if (fdt_store_begin(c->d->store) != 0)
        return store_failed(c);
    for (size_t i = 0; i < n; i++) {
        fdt_job one = *like;
        one.key.problem = ps[i];
        if (queue_job(c, &one, &existing) != 0) {
            fdt_store_rollback(c->d->store);
            json_array_clear(ids);
            return -1;
        }
        json_array_append_new(ids, json_integer(one.id));
        if (existing)
            continue; /* a job queued before keeps its own batch */
        batch = batch ? batch : one.id; /* a batch is named by its first new job */
        one.batch = batch;
        if (fdt_store_job_update(c->d->store, &one) != 0) {
            fdt_store_rollback(c->d->store);
            json_array_clear(ids);
            return store_failed(c);
        }
    }
    if (fdt_store_commit(c->d->store) != 0) {
        json_array_clear(ids);
        return store_failed(c);
    }
    return 0;
}

/* Every shape is checked before any job is queued: a bad batch queues nothing. */
static int op_batch(op_ctx *c)
{
    fdt_key key;
    fdt_job job;
    int device;
    json_t *shapes = NULL;
    if (parse_problem_options(c, &key, &device) || new_job(c, &key, device, 0, &job) ||
        batch_shapes(c, &shapes))
        return -1;
    int rc = 0;
    size_t n = 0;
    fdt_problem *ps = calloc(json_array_size(shapes) * FDT_LAYOUTS_MAX, sizeof *ps);
    if (!ps)
        rc = fail(c, "internal", "out of memory");
    for (size_t i = 0; rc == 0 && i < json_array_size(shapes); i++) {
        fdt_problem p = job.key.problem; /* as the job's options left it: auto tunes hot */
        rc = shape_triple(c, json_array_get(shapes, i), i, &p);
        n += rc == 0 ? (size_t)layouts_of(&p, &ps[n]) : 0;
    }
    json_t *ids = json_array();
    if (rc == 0)
        rc = queue_batch(c, &job, ps, n, ids);
    free(ps);
    json_decref(shapes);
    if (rc != 0) {
        json_decref(ids);
        return rc;
    }
    fdt_scheduler_kick(c->d);
    json_object_set_new(c->ans, "count", json_integer((json_int_t)json_array_size(ids)));
    json_object_set_new(c->ans, "jobs", ids);
    return 0;
}

/* Each unfinished batch: its jobs ended of all, and an ETA from the time since its first
 * job started and the share of its work done (fdt_batch_share: ended jobs, and the running
 * ones' share of their spaces, weighed by what jobs of their size cost), which holds
 * however many devices run it. */
static json_t *batches_json(op_ctx *c)
{
    fdt_batch_progress *rows = NULL;
    size_t n = 0;
    if (fdt_store_batches_active(c->d->store, &rows, &n) != 0)
        return NULL;
    json_t *list = json_array();
    const double now = (double)time(NULL);
    for (size_t i = 0; i < n; i++) {
        const fdt_batch_progress *b = &rows[i];
        const double share = fdt_batch_share(b);
        json_t *o = json_pack("{s:I, s:i, s:i, s:i, s:f}", "batch", (json_int_t)b->batch,
                              "jobs", b->jobs, "ended", b->ended, "running", b->running,
                              "done_share", share);
        if (b->started && share > 0)
            json_object_set_new(o, "eta_s",
                                json_real((now - (double)b->started) * (1 - share) / share));
        json_array_append_new(list, o);
    }
    free(rows);
    return list;
}

/* Each device's worker, and how far its job has gone: evaluations of the space, their
 * rate and the time left. */
static json_t *workers_json(fdt_daemon *d)
{
    json_t *list = fdt_scheduler_lanes_json(d);
    for (size_t i = 0; i < json_array_size(list); i++) {
        const fdt_job *j = fdt_scheduler_lane_job(d, i);
        if (!j)
            continue;
        json_t *progress = cost_json(d, j);
        json_object_set_new(progress, "done", json_integer(j->done));
        json_object_set_new(progress, "total", json_integer(j->total));
        json_object_set_new(json_array_get(list, i), "progress", progress);
    }
    return list;
}

static int daemon_status(op_ctx *c)
{
    int counts[FDT_JOB_STATES];
    if (fdt_store_job_counts(c->d->store, counts) != 0)
        return store_failed(c);
    json_t *jobs = json_object();
    for (int s = 0; s < FDT_JOB_STATES; s++)
        json_object_set_new(jobs, fdt_job_state_name((fdt_job_state)s), json_integer(counts[s]));
    const double uptime = (double)(uv_hrtime() - c->d->start_ns) / 1e9;
    json_object_set_new(c->ans, "version", json_string(FDT_VERSION));
    json_object_set_new(c->ans, "pid", json_integer(getpid()));
    json_object_set_new(c->ans, "uptime_s", json_integer((json_int_t)uptime));
    json_object_set_new(c->ans, "socket", json_string(c->d->config.socket));
    json_object_set_new(c->ans, "db", json_string(c->d->config.db));
    json_object_set_new(c->ans, "backend", json_string(c->d->backend));
    json_object_set_new(c->ans, "kernels", json_string(fdt_kernels_version()));
    fdt_scheduler_save_running(c->d);
    json_t *batches = batches_json(c);
    if (!batches) {
        json_decref(jobs);
        return store_failed(c);
    }
    json_object_set_new(c->ans, "jobs", jobs);
    json_object_set_new(c->ans, "batches", batches);
    json_object_set_new(c->ans, "workers", workers_json(c->d));
    int64_t since;
    const char *fault = fdt_scheduler_store_fault(c->d, &since);
    json_object_set_new(c->ans, "store",
                        fault ? json_pack("{s:b, s:s, s:I}", "writable", 0, "error", fault,
                                          "since", (json_int_t)since)
                              : json_pack("{s:b}", "writable", 1));
    return 0;
}

static int op_status(op_ctx *c)
{
    if (!json_object_get(c->req, "job"))
        return daemon_status(c);
    int64_t id;
    fdt_job job;
    if (job_id_field(c, &id))
        return -1;
    const int found = fdt_store_job_get(c->d->store, id, &job);
    if (found < 0)
        return store_failed(c);
    if (!found)
        return fail(c, "not_found", "no job %lld", (long long)id);
    json_object_set_new(c->ans, "job", job_json(c->d, &job));
    return 0;
}

static int op_jobs(op_ctx *c)
{
    long long limit = 100;
    json_t *state = json_object_get(c->req, "state");
    if (opt_int(c, c->req, "limit", 1, MAX_LIST, &limit))
        return -1;
    const fdt_job_state s =
        json_is_string(state) ? fdt_job_state_parse(json_string_value(state)) : FDT_JOB_STATES;
    if (state && s == FDT_JOB_STATES) {
        char states[64];
        fdt_job_states_text(states, sizeof states);
        return fail(c, "bad_request", "'state' must be %s", states);
    }
    fdt_job *jobs = NULL;
    size_t n = 0;
    if (fdt_store_jobs(c->d->store, state ? (int)s : -1, (size_t)limit, &jobs, &n) != 0)
        return store_failed(c);
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, job_json(c->d, &jobs[i]));
    free(jobs);
    json_object_set_new(c->ans, "jobs", list);
    return 0;
}

static int op_cancel(op_ctx *c)
{
    int64_t id;
    if (job_id_field(c, &id))
        return -1;
    fdt_job job;
    const int found = fdt_store_job_get(c->d->store, id, &job);
    if (found < 0)
        return store_failed(c);
    if (!found)
        return fail(c, "not_found", "no job %lld", (long long)id);
    char by[64];
    snprintf(by, sizeof by, "by uid %u (pid %d)", (unsigned)c->peer->uid, (int)c->peer->pid);
    const int rc = fdt_scheduler_cancel(c->d, id, by);
    if (rc < 0)
        return store_failed(c);
    if (rc == 0)
        return fail(c, "busy", "job %lld is %s already", (long long)id,
                    fdt_job_state_name(job.state));
    json_object_set_new(c->ans, "job", json_integer(id));
    json_object_set_new(c->ans, "state", json_string(fdt_job_state_name(FDT_JOB_CANCELLED)));
    return 0;
}

/* The stop begins once the answer is written; until then requests already read, even on
 * the same connection, are refused as if it had begun. */
static int op_shutdown(op_ctx *c)
{
    c->d->stop_asked = 1;
    c->d->stop_soon(c->d, "asked to shut down");
    return 0;
}

static int op_source(op_ctx *c)
{
    json_t *hash = json_object_get(c->req, "hash");
    if (!json_is_string(hash))
        return fail(c, "bad_request", "'hash' is required and must be a string");
    const char *text = fdt_built_in_source(json_string_value(hash));
    if (!text)
        return fail(c, "not_found", "no kernel source has hash '%.64s'", json_string_value(hash));
    json_object_set_new(c->ans, "hash", json_copy(hash));
    json_object_set_new(c->ans, "text", json_string(text));
    return 0;
}

static int op_export(op_ctx *c)
{
    return fdt_export(c->d, c->req, c->ans, &c->code, c->message, sizeof c->message);
}


/* While the store refuses writes (a full disk), nothing that would write is accepted, as
 * Redis refuses writes when it cannot save; what is stored is still served. */
static int store_refuses(op_ctx *c)
{
    int64_t since;
    const char *why = fdt_scheduler_store_fault(c->d, &since);
    if (!why)
        return 0;
    return fail(c, "store_unwritable",
                "the store refuses writes since %lld s ago (%s); jobs resume once it takes them",
                (long long)((int64_t)time(NULL) - since), why);
}

static int op_import(op_ctx *c)
{
    if (store_refuses(c))
        return -1;
    return fdt_import(c->d, c->req, c->ans, &c->code, c->message, sizeof c->message);
}

typedef struct op {
    const char *name;
    int (*run)(op_ctx *c);
    int admin; /* changes what the daemon does: the daemon's uid, root or admin_group only */
} op;

static const op ops[] = {
    {"ping", op_ping, 0},         {"devices", op_devices, 0}, {"query", op_query, 0},
    {"tune", op_tune, 1},         {"batch", op_batch, 1},     {"status", op_status, 0},
    {"jobs", op_jobs, 0},         {"cancel", op_cancel, 1},   {"export", op_export, 0},
    {"shutdown", op_shutdown, 1}, {"source", op_source, 0},     {"import", op_import, 1},
};
#define NOPS (sizeof ops / sizeof ops[0])

static int dispatch(op_ctx *c)
{
    json_t *v = json_object_get(c->req, "v");
    json_t *name = json_object_get(c->req, "op");
    if (v && (!json_is_integer(v) || json_integer_value(v) != FDT_PROTOCOL_VERSION))
        return fail(c, "bad_version", "this daemon speaks protocol version %d",
                    FDT_PROTOCOL_VERSION);
    if (!json_is_string(name))
        return fail(c, "bad_request", "'op' is required and must be a string");
    for (size_t i = 0; i < NOPS; i++) {
        if (strcmp(json_string_value(name), ops[i].name) != 0)
            continue;
        if (ops[i].admin && !fdt_peer_is_admin(c->d, c->peer))
            return fail(c, "forbidden", "'%s' is allowed only to uid %d, root or the admin group",
                        ops[i].name, (int)getuid());
        if (ops[i].admin && (c->d->stopping || c->d->stop_asked))
            return fail(c, "shutting_down", "the daemon is stopping");
        if (ops[i].admin && ops[i].run != op_shutdown && store_refuses(c))
            return -1;
        return ops[i].run(c);
    }
    return fail(c, "unknown_op", "unknown op '%.64s'", json_string_value(name));
}

/* A refused request, with who sent it; a question with no answer (not_found) is no
 * refusal. Forbidden is a warning: someone tried what they may not. */
static void log_refusal(const op_ctx *c)
{
    if (strcmp(c->code, "not_found") == 0)
        return;
    const char *op = json_string_value(json_object_get(c->req, "op"));
    fdt_log_at(strcmp(c->code, "forbidden") == 0 ? FDT_LOG_WARNING : FDT_LOG_NOTICE,
               "refused uid %u (pid %d): %.32s: %s: %s", (unsigned)c->peer->uid,
               (int)c->peer->pid, op ? op : "?", c->code, c->message);
}

/* The envelope around a memoized body: {"v":1,"id":..., <body's fields>, "ok":true}. */
static char *wrap_body(json_t *ans, const char *body)
{
    char *head = json_dumps(ans, JSON_COMPACT); /* {"v":1,"id":...} */
    const size_t hlen = head ? strlen(head) : 0, blen = strlen(body);
    char *line = head ? malloc(hlen + blen + 16) : NULL;
    if (line) {
        memcpy(line, head, hlen - 1);
        line[hlen - 1] = ',';
        memcpy(line + hlen, body + 1, blen - 2);
        strcpy(line + hlen + blen - 2, ",\"ok\":true}");
    }
    free(head);
    json_decref(ans);
    return line;
}

static char *finish(json_t *ans, int ok, const op_ctx *c)
{
    if (ok && c->body)
        return wrap_body(ans, c->body);
    json_object_set_new(ans, "ok", json_boolean(ok));
    if (!ok)
        json_object_set_new(ans, "error", json_pack("{s:s, s:s}", "code", c->code, "message",
                                                    c->message));
    char *line = json_dumps(ans, JSON_COMPACT);
    json_decref(ans);
    return line;
}

/* {"v":1} and the request's id, if it had one: what every answer starts with. */
static json_t *envelope(json_t *id)
{
    json_t *ans = json_pack("{s:i}", "v", FDT_PROTOCOL_VERSION);
    if (id)
        json_object_set(ans, "id", id);
    return ans;
}

char *fdt_ops_error_line(const char *code, const char *message)
{
    op_ctx c = {.code = code};
    fdt_copy_text(c.message, sizeof c.message, message);
    return finish(envelope(NULL), 0, &c);
}

char *fdt_ops_answer(fdt_daemon *d, const fdt_peer *peer, const char *line, size_t len)
{
    json_error_t jerr;
    op_ctx c = {.d = d, .peer = peer};
    c.req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(c.req)) {
        const char *why = c.req ? "a request must be a JSON object" : jerr.text;
        char *answer = fdt_ops_error_line("bad_json", why);
        json_decref(c.req);
        return answer;
    }
    json_t *id = json_object_get(c.req, "id");
    c.ans = envelope(id);
    const int ok = dispatch(&c) == 0;
    if (!ok)
        log_refusal(&c);
    if (!ok) {
        /* Fields a handler set before it failed are dropped: an error carries only itself. */
        json_decref(c.ans);
        c.ans = envelope(id);
    }
    json_decref(c.req);
    return finish(c.ans, ok, &c);
}
