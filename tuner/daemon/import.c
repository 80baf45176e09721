/* import.c - results measured by another fdtuned, merged into the store (import.h).
 *
 * A file comes in pages, as an export goes out (export.c): the first request opens a set,
 * each page's rows are checked against common/export_format.h and staged in memory, and the
 * last page's request merges the whole set in one transaction, so that a file lands whole
 * or not at all. A row that fails its check drops the set, and the refusal names the row's
 * line in the file (the client says it) and what is wrong. A set that no request touched for
 * FDT_IMPORT_IDLE_S seconds is dropped when the next import begins.
 *
 * Where rows go, and which row wins (docs/protocol.md, "import"):
 * - Rows are keyed by their device's fingerprint, checked against the device's fields: a
 *   device this store never saw gets a row of its own, and answers queries at the model and
 *   arch levels, or exactly on a device of that fingerprint.
 * - The rows of one job there (its store, job id, device, problem) go to one job here, state
 *   done, ended by "import", with their provenance (jobs.origin_store, origin_host,
 *   origin_job, fdtuned, imported, and the strategy that searched there; each row's kernels
 *   and measured). Importing the same file again finds that job and adds nothing, since a
 *   job holds one row per variant. Rows of this store's own jobs (a file exported here) find
 *   those jobs, and add nothing either.
 * - A job's winner (its leader row marked winner) becomes the problem's best row, and where
 *   the job chose the cache state its choice the cache auto row, unless the stored best
 *   stays:
 *     1. a best row measured here is never replaced by an imported one;
 *     2. of two imported winners, the one measured with this build's kernel sources wins;
 *     3. then the one measured later; a tie keeps the stored one.
 * - With confirm_imported, a winner stored for a device of a kind this daemon tunes gets a
 *   short job that times it here; until that job stores its own winner (which then stands,
 *   by rule 1), queries answer the imported one with match "imported" (ops.c). */
#include "daemon/import.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/query.h"
#include "daemon/scheduler.h"
#include "engine/sources.h"
#include "engine/stencil.h"
#include "engine/variant.h"
#include "export_format.h"
#include "search/search.h"
#include "hashes.h"
#include "import_file.h"
#include "util.h"

#define SETS_MAX 8

/* One job there: its rows go to one job here, its winner to the problem's best row. */
typedef struct group {
    size_t device;            /* in the set's devices */
    fdt_key key;
    char host[64];
    char store[40];           /* the store it is in there (fdt_store_id) */
    int64_t job;              /* its id there */
    char fdtuned[16];
    char strategy[16];        /* how it searched there */
    long winner;              /* the row of its winner, -1: none */
    fdt_cache_mode state;
    double copy_gbps, interior_copy_gbps, kernel1_gbps;
    char doubt[200];
    /* Where it chose the cache state (cache auto): what it chose, and that choice's
     * variant and figures; chose 0 where it chose nothing. */
    int chose;
    fdt_cache_mode auto_state;
    char auto_variant[FDT_VARIANT_NAME_MAX];
    double auto_gbps, auto_median_ms, auto_copy_gbps;
    int measured, ok;         /* its first-pass rows in the file, and of them those ok */
} group;

typedef struct staged {
    fdt_result_row r;
    size_t group;
} staged;

typedef struct import_set {
    int64_t id;
    int64_t touched;          /* unix s */
    fdt_device_info *devices;
    size_t ndevices;
    group *groups;
    size_t ngroups;
    staged *rows;
    size_t nrows, cap;
} import_set;

struct fdt_imports {
    import_set sets[SETS_MAX];
    int64_t last_id;
};

/* ---- the checks of one row ---------------------------------------------------------- */

/* Where a row's check reports: its line in the file, and the first thing wrong. */
typedef struct check {
    json_t *row;
    long line;
    char *why;
    size_t len;
    int failed;
} check;

static void wrong(check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void wrong(check *c, const char *fmt, ...)
{
    if (c->failed)
        return;
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(c->why, c->len, "line %ld: %s", c->line, what);
    c->failed = 1;
}

static void text(check *c, const char *name, char *out, size_t size, int required)
{
    const json_t *v = json_object_get(c->row, name);
    out[0] = '\0';
    if (!json_is_string(v))
        wrong(c, "'%s' must be text", name);
    else if (json_string_length(v) >= size)
        wrong(c, "'%s' is longer than %zu characters", name, size - 1);
    else if (required && json_string_length(v) == 0)
        wrong(c, "'%s' is empty", name);
    else
        fdt_copy_text(out, size, json_string_value(v));
}

static int64_t integer(check *c, const char *name, int64_t lo, int64_t hi)
{
    const json_t *v = json_object_get(c->row, name);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        wrong(c, "'%s' must be an integer from %lld to %lld", name, (long long)lo,
              (long long)hi);
        return lo;
    }
    return json_integer_value(v);
}

/* A measured figure: a number, finite and not negative (a variant that failed has 0). */
static double figure(check *c, const char *name)
{
    const json_t *v = json_object_get(c->row, name);
    const double x = json_number_value(v);
    if (!json_is_number(v) || !isfinite(x) || x < 0) {
        wrong(c, "'%s' must be a number, 0 or more", name);
        return 0;
    }
    return x;
}

static int boolean(check *c, const char *name)
{
    const json_t *v = json_object_get(c->row, name);
    if (json_is_boolean(v))
        return json_is_true(v);
    if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1))
        return (int)json_integer_value(v);
    wrong(c, "'%s' must be true or false", name);
    return 0;
}

/* "fdtuned-results/1": another kind of export, another program's file and a newer
 * fdtuned's are each refused with what they are. */
static void format(check *c)
{
    char name[64];
    if (!json_object_get(c->row, "format")) {
        wrong(c, "not an fdtuned results export (no format column)");
        return;
    }
    text(c, "format", name, sizeof name, 1);
    if (c->failed)
        return;
    const char *slash = strrchr(name, '/');
    const size_t stem = slash ? (size_t)(slash - name) : strlen(name);
    const long version = slash ? strtol(slash + 1, NULL, 10) : 0;
    if (stem == strlen(FDT_FORMAT_BEST) && strncmp(name, FDT_FORMAT_BEST, stem) == 0)
        wrong(c, "a best export (export --what best): import takes export --what results");
    else if (stem != strlen(FDT_FORMAT_RESULTS) || strncmp(name, FDT_FORMAT_RESULTS, stem) != 0)
        wrong(c, "format '%s' is not an fdtuned results export", name);
    else if (version > FDT_FORMAT_VERSION)
        wrong(c, "written by a newer fdtuned (format %ld; this one reads %d)", version,
              FDT_FORMAT_VERSION);
    else if (version < 1)
        wrong(c, "format '%s' has no version", name);
}

/* The device, its fingerprint made again from its fields and compared. */
static void device(check *c, fdt_device_info *d)
{
    char fingerprint[20], made[20];
    memset(d, 0, sizeof *d);
    text(c, "fingerprint", fingerprint, sizeof fingerprint, 1);
    text(c, "device", d->name, sizeof d->name, 1);
    text(c, "backend", d->backend, sizeof d->backend, 1);
    text(c, "vendor", d->vendor, sizeof d->vendor, 0);
    text(c, "arch", d->arch, sizeof d->arch, 1);
    d->compute_units = (int)integer(c, "compute_units", 0, INT32_MAX);
    d->memory_bytes = (uint64_t)integer(c, "memory_bytes", 0, INT64_MAX);
    text(c, "driver_version", d->driver_version, sizeof d->driver_version, 0);
    text(c, "compiler_version", d->compiler_version, sizeof d->compiler_version, 0);
    if (c->failed)
        return;
    fdt_device_fingerprint(d, made);
    if (strcmp(made, fingerprint) != 0)
        wrong(c, "fingerprint %s is not that of its device's fields (%s): damaged, or written "
              "by an fdtuned that hashed otherwise", fingerprint, made);
}

/* The problem: a stencil this daemon knows, a shape it takes. */
static void problem(check *c, fdt_key *k)
{
    char precision[16], cache[16];
    fdt_problem *p = &k->problem;
    memset(k, 0, sizeof *k);
    text(c, "stencil", p->stencil, sizeof p->stencil, 1);
    p->radius = (int)integer(c, "radius", 1, FDT_MAX_RADIUS);
    text(c, "precision", precision, sizeof precision, 1);
    p->nx = (int)integer(c, "nx", 1, FDT_MAX_SIDE);
    p->ny = (int)integer(c, "ny", 1, FDT_MAX_SIDE);
    p->nz = (int)integer(c, "nz", 1, FDT_MAX_SIDE);
    text(c, "cache", cache, sizeof cache, 1);
    /* A version 1 row has no layout: it was measured dense. */
    if (json_object_get(c->row, "pitch") || json_object_get(c->row, "offset")) {
        p->pitch = (int)integer(c, "pitch", 1, FDT_MAX_SIDE + FDT_PITCH_PAD_MAX);
        p->offset = (int)integer(c, "offset", 0, FDT_OFFSET_BYTES);
    }
    if (c->failed)
        return;
    fdt_problem_canonical_layout(p);
    if (fdt_precision_parse(precision, &p->precision) != 0)
        wrong(c, "precision '%s' is not float or double", precision);
    else if (fdt_cache_mode_parse(cache, &p->cache) != 0 || p->cache == FDT_CACHE_AUTO)
        wrong(c, "cache '%s' is not a mode results are measured in", cache);
    else if (!fdt_stencil_of(p))
        wrong(c, "stencil '%s' is not known here (a spec's name is known once a job of it "
              "was queued here)", p->stencil);
    else if (fdt_problem_check(p))
        wrong(c, "%s", fdt_problem_check(p));
}

/* The results table's statuses (db/migrate_7.sql and on). */
static const char *const statuses[] = {"ok", "wrong", "compile_error", "launch_error",
                                       "timeout", "unsupported", "noisy", "error",
                                       "crashed", NULL};

static void measurement(check *c, fdt_result_row *r)
{
    memset(r, 0, sizeof *r);
    text(c, "variant", r->variant, sizeof r->variant, 1);
    text(c, "status", r->status, sizeof r->status, 1);
    r->leader = boolean(c, "leader");
    r->median_ms = figure(c, "median_ms");
    r->min_ms = figure(c, "min_ms");
    r->q1_ms = figure(c, "q1_ms");
    r->q3_ms = figure(c, "q3_ms");
    r->samples = (int)integer(c, "samples", 0, INT32_MAX);
    r->reps = (int)integer(c, "reps", 0, INT32_MAX);
    r->gbps = figure(c, "gbps");
    r->compile_ms = figure(c, "compile_ms");
    r->vgprs = (int)integer(c, "vgprs", -1, INT32_MAX);
    r->sgprs = (int)integer(c, "sgprs", -1, INT32_MAX);
    r->scratch_bytes = (int)integer(c, "scratch_bytes", -1, INT32_MAX);
    r->shared_bytes = (int)integer(c, "shared_bytes", -1, INT32_MAX);
    text(c, "message", r->message, sizeof r->message, 0);
    text(c, "kernels", r->kernels, sizeof r->kernels, 1);
    r->measured = integer(c, "measured", 0, INT64_MAX);
    size_t i = 0;
    while (!c->failed && statuses[i] && strcmp(statuses[i], r->status) != 0)
        i++;
    if (!c->failed && !statuses[i])
        wrong(c, "status '%s' is not one a measurement ends in", r->status);
}

/* The job there that measured it, and its outcome. */
static void origin(check *c, group *g)
{
    char state[16];
    text(c, "host", g->host, sizeof g->host, 1);
    text(c, "store", g->store, sizeof g->store, 1);
    g->job = integer(c, "job", 1, INT64_MAX);
    text(c, "fdtuned", g->fdtuned, sizeof g->fdtuned, 1);
    text(c, "strategy", g->strategy, sizeof g->strategy, 1);
    if (!c->failed && !fdt_strategy_find(g->strategy))
        wrong(c, "strategy '%s' is not a search this fdtuned knows", g->strategy);
    g->winner = boolean(c, "winner") ? 0 : -1; /* the row's index is set once staged */
    text(c, "state", state, sizeof state, 0);
    g->copy_gbps = figure(c, "copy_gbps");
    g->interior_copy_gbps = figure(c, "interior_copy_gbps");
    g->kernel1_gbps = figure(c, "kernel1_gbps");
    text(c, "doubt", g->doubt, sizeof g->doubt, 0);
    g->state = FDT_CACHE_HOT;
    if (!c->failed && g->winner == 0 && fdt_cache_mode_parse(state, &g->state) != 0)
        wrong(c, "state '%s' is not hot or persist", state);
    text(c, "auto_state", state, sizeof state, 0);
    text(c, "auto_variant", g->auto_variant, sizeof g->auto_variant, 0);
    g->auto_gbps = figure(c, "auto_gbps");
    g->auto_median_ms = figure(c, "auto_median_ms");
    g->auto_copy_gbps = figure(c, "auto_copy_gbps");
    g->chose = !c->failed && g->winner == 0 && state[0];
    if (g->chose && (fdt_cache_mode_parse(state, &g->auto_state) != 0 || !g->auto_variant[0]))
        wrong(c, "auto_state '%s' is not hot or persist with its auto_variant", state);
}

/* The best row group g's winner makes for its key's cache mode, or for cache auto (where
 * its job chose: the state chosen, and that choice's variant and figures). */
static fdt_best group_best(const import_set *s, const group *g, int automatic)
{
    const fdt_result_row *r = &s->rows[g->winner].r;
    fdt_best b = {.key = g->key, .gbps = r->gbps, .median_ms = r->median_ms,
                  .copy_gbps = g->copy_gbps, .interior_copy_gbps = g->interior_copy_gbps,
                  .kernel1_gbps = g->kernel1_gbps, .state = g->state, .updated = r->measured};
    fdt_copy_text(b.variant, sizeof b.variant, r->variant);
    fdt_copy_text(b.kernels, sizeof b.kernels, r->kernels);
    fdt_copy_text(b.doubt, sizeof b.doubt, g->doubt);
    if (!automatic)
        return b;
    b.key.problem.cache = FDT_CACHE_AUTO;
    b.state = g->auto_state;
    fdt_copy_text(b.variant, sizeof b.variant, g->auto_variant);
    b.gbps = g->auto_gbps;
    b.median_ms = g->auto_median_ms;
    b.copy_gbps = g->auto_copy_gbps;
    return b;
}

/* ---- staging ------------------------------------------------------------------------ */

static size_t device_index(import_set *s, const fdt_device_info *d)
{
    for (size_t i = 0; i < s->ndevices; i++)
        if (memcmp(&s->devices[i], d, sizeof *d) == 0)
            return i;
    fdt_device_info *grown = realloc(s->devices, (s->ndevices + 1) * sizeof *grown);
    if (!grown)
        return SIZE_MAX;
    s->devices = grown;
    s->devices[s->ndevices] = *d;
    return s->ndevices++;
}

static int same_group(const group *a, const group *b)
{
    return a->device == b->device && a->job == b->job && strcmp(a->store, b->store) == 0 &&
           memcmp(&a->key, &b->key, sizeof a->key) == 0;
}

/* The set's group of g's job, added if new (the last one first: a file's rows come by
 * job). */
static size_t group_index(import_set *s, const group *g)
{
    for (size_t i = s->ngroups; i-- > 0;)
        if (same_group(&s->groups[i], g))
            return i;
    group *grown = realloc(s->groups, (s->ngroups + 1) * sizeof *grown);
    if (!grown)
        return SIZE_MAX;
    s->groups = grown;
    s->groups[s->ngroups] = *g;
    s->groups[s->ngroups].winner = -1;
    return s->ngroups++;
}

static int stage_row(import_set *s, const fdt_result_row *r, size_t gi, int winner,
                     const group *g, check *c)
{
    if (s->nrows == s->cap) {
        const size_t cap = s->cap ? 2 * s->cap : 1024;
        staged *grown = realloc(s->rows, cap * sizeof *grown);
        if (!grown)
            return -1;
        s->rows = grown;
        s->cap = cap;
    }
    group *to = &s->groups[gi];
    if (winner && to->winner >= 0) {
        wrong(c, "a second winner of job %lld on %s", (long long)g->job, g->host);
        return 0;
    }
    if (winner) {
        const int measured = to->measured, ok = to->ok;
        *to = *g;
        to->winner = (long)s->nrows;
        to->measured = measured;
        to->ok = ok;
    }
    to->measured += !r->leader;
    to->ok += !r->leader && strcmp(r->status, "ok") == 0;
    s->rows[s->nrows++] = (staged){.r = *r, .group = gi};
    return 0;
}

/* Checks one row and stages it; 0, or -1 with why (the row's fault, or memory). */
static int take_row(import_set *s, json_t *row, size_t at, char *why, size_t len)
{
    check c = {.row = row, .line = (long)at + 1, .why = why, .len = len};
    if (!json_is_object(row)) {
        snprintf(why, len, "row %zu of the page is not an object", at + 1);
        return -1;
    }
    const json_t *line = json_object_get(row, "line");
    if (json_is_integer(line))
        c.line = (long)json_integer_value(line);
    fdt_device_info d;
    group g = {0};
    fdt_result_row r;
    format(&c);
    device(&c, &d);
    problem(&c, &g.key);
    measurement(&c, &r);
    origin(&c, &g);
    if (!c.failed && g.winner == 0 && (!r.leader || strcmp(r.status, "ok") != 0))
        wrong(&c, "the winner of a job must be a leader that ran ok");
    if (c.failed)
        return -1;
    const int winner = g.winner == 0;
    g.device = device_index(s, &d);
    const size_t gi = g.device == SIZE_MAX ? SIZE_MAX : group_index(s, &g);
    if (gi == SIZE_MAX || stage_row(s, &r, gi, winner, &g, &c) != 0) {
        snprintf(why, len, "out of memory for the file's rows");
        return -1;
    }
    return c.failed ? -1 : 0;
}

static void set_free(import_set *s)
{
    free(s->devices);
    free(s->groups);
    free(s->rows);
    memset(s, 0, sizeof *s);
}

/* The set a request names, or a new one for a request that names none (the first page);
 * NULL with why. Sets left idle are dropped first. */
static import_set *set_of(fdt_daemon *d, json_t *req, char *why, size_t len)
{
    if (!d->imports && !(d->imports = calloc(1, sizeof *d->imports))) {
        snprintf(why, len, "out of memory");
        return NULL;
    }
    const int64_t now = (int64_t)time(NULL);
    import_set *free_slot = NULL;
    for (size_t i = 0; i < SETS_MAX; i++) {
        import_set *s = &d->imports->sets[i];
        if (s->id && now - s->touched > FDT_IMPORT_IDLE_S)
            set_free(s);
        if (!s->id && !free_slot)
            free_slot = s;
    }
    const json_t *id = json_object_get(req, "set");
    if (id) {
        for (size_t i = 0; i < SETS_MAX; i++)
            if (json_is_integer(id) && d->imports->sets[i].id == json_integer_value(id)) {
                d->imports->sets[i].touched = now;
                return &d->imports->sets[i];
            }
        snprintf(why, len, "no import set %lld here (idle for over %d s, refused, or never "
                 "begun): import the file again", (long long)json_integer_value(id),
                 FDT_IMPORT_IDLE_S);
        return NULL;
    }
    if (!free_slot) {
        snprintf(why, len, "%d imports are under way already; try again once one ends",
                 SETS_MAX);
        return NULL;
    }
    free_slot->id = ++d->imports->last_id;
    free_slot->touched = now;
    return free_slot;
}

/* ---- the merge ---------------------------------------------------------------------- */

typedef struct merged {
    size_t added, present, jobs, best, kept;
    fdt_job *confirm;         /* the jobs that time imported winners here (confirm_imported) */
    size_t nconfirm;
} merged;

static int same_key(const fdt_key *a, const fdt_key *b)
{
    return memcmp(&a->problem, &b->problem, sizeof a->problem) == 0;
}

/* The job group g's rows go to here: this store's own job where the file came from this
 * store, the job an earlier import of it made, or a new one. */
static int job_for(fdt_daemon *d, const import_set *s, const group *g, int64_t *id,
                   merged *m)
{
    char fingerprint[20];
    fdt_job j;
    fdt_device_fingerprint(&s->devices[g->device], fingerprint);
    int found = strcmp(g->store, fdt_store_id(d->store)) == 0
                    ? fdt_store_job_get(d->store, g->job, &j)
                    : 0;
    if (found > 0 && same_key(&j.key, &g->key)) {
        *id = j.id;
        return 0;
    }
    found = fdt_store_job_of_origin(d->store, g->store, g->job, fingerprint, &g->key, &j);
    if (found != 0) {
        *id = j.id;
        return found < 0 ? -1 : 0;
    }
    memset(&j, 0, sizeof j);
    j.device_index = -1;
    j.ran_on = -1;
    fdt_copy_text(j.fingerprint, sizeof j.fingerprint, fingerprint);
    j.key = g->key;
    fdt_copy_text(j.strategy, sizeof j.strategy, g->strategy);
    fdt_copy_text(j.origin_store, sizeof j.origin_store, g->store);
    fdt_copy_text(j.origin_host, sizeof j.origin_host, g->host);
    j.origin_job = g->job;
    fdt_copy_text(j.fdtuned, sizeof j.fdtuned, g->fdtuned);
    j.imported = (int64_t)time(NULL);
    j.total = j.done = g->measured;
    j.ok = g->ok;
    j.failed = g->measured - g->ok;
    if (fdt_store_job_create(d->store, &j) != 0)
        return -1;
    j.state = FDT_JOB_DONE;
    j.started = j.finished = j.imported;
    fdt_copy_text(j.ended_by, sizeof j.ended_by, "import");
    if (g->winner >= 0) {
        fdt_copy_text(j.best_variant, sizeof j.best_variant, s->rows[g->winner].r.variant);
        j.best_gbps = s->rows[g->winner].r.gbps;
    }
    m->jobs++;
    *id = j.id;
    return fdt_store_job_update(d->store, &j);
}

/* Whether the imported winner cand replaces stored (the rules at the top of this file). */
static int replaces(fdt_daemon *d, const fdt_best *stored, const fdt_best *cand, int *rc)
{
    fdt_job j;
    *rc = fdt_store_job_get(d->store, stored->job_id, &j);
    if (*rc <= 0 || !j.origin_store[0]) /* measured here, or by a job no longer known */
        return 0;
    return fdt_import_stands_over(cand, stored);
}

int fdt_import_stands_over(const fdt_best *a, const fdt_best *b)
{
    const int a_current = strcmp(a->kernels, fdt_kernels_version()) == 0;
    if (a_current != (strcmp(b->kernels, fdt_kernels_version()) == 0))
        return a_current;
    return a->updated > b->updated;
}

static int offer_best(fdt_daemon *d, const fdt_best *cand, merged *m)
{
    fdt_best stored;
    int rc = fdt_store_best_get(d->store, cand->device_id, &cand->key, &stored);
    if (rc < 0)
        return -1;
    if (rc > 0 && !replaces(d, &stored, cand, &rc)) {
        m->kept++;
        return rc < 0 ? -1 : 0;
    }
    m->best++;
    return fdt_store_best_put(d->store, cand);
}

/* Where confirm_imported is set and the winner's device is of a kind this daemon tunes, a
 * short job to time it here: a guided search of its problem, warm-started from the stored
 * results (the imported ones among them), twice the leaders' evaluations. */
static int plan_confirm(fdt_daemon *d, const char *fingerprint, const group *g, merged *m)
{
    size_t i = 0;
    while (i < d->ndevices && strcmp(d->devices[i].fingerprint, fingerprint) != 0)
        i++;
    if (!d->config.confirm_imported || i == d->ndevices)
        return 0;
    fdt_job *grown = realloc(m->confirm, (m->nconfirm + 1) * sizeof *grown);
    if (!grown)
        return -1;
    m->confirm = grown;
    fdt_job *j = &m->confirm[m->nconfirm++];
    memset(j, 0, sizeof *j);
    j->key = g->key;
    j->device_index = -1;
    j->ran_on = -1;
    fdt_copy_text(j->fingerprint, sizeof j->fingerprint, fingerprint);
    fdt_copy_text(j->strategy, sizeof j->strategy, "guided");
    j->budget = 2 * (d->config.leaders > 0 ? d->config.leaders : 1);
    j->choose_cache = g->chose;
    return 0;
}

/* The jobs plan_confirm planned, queued once the import landed (one already queued or
 * running for the same tuning is not queued twice). */
static int queue_confirms(fdt_daemon *d, merged *m)
{
    for (size_t i = 0; i < m->nconfirm; i++) {
        fdt_job found;
        const int active = fdt_store_job_find_active(d->store, &m->confirm[i], &found);
        if (active < 0 || (!active && fdt_store_job_create(d->store, &m->confirm[i]) != 0))
            return -1;
    }
    if (m->nconfirm)
        fdt_scheduler_kick(d);
    return 0;
}

/* The group's winner as the best row of its problem, and of cache auto where it chose. */
static int winner_best(fdt_daemon *d, const import_set *s, const group *g, int64_t device_id,
                       int64_t job_id, merged *m)
{
    const size_t stored = m->best;
    for (int automatic = 0; automatic <= g->chose; automatic++) {
        fdt_best b = group_best(s, g, automatic);
        b.device_id = device_id;
        b.job_id = job_id;
        if (offer_best(d, &b, m) != 0)
            return -1;
    }
    char fingerprint[20];
    fdt_device_fingerprint(&s->devices[g->device], fingerprint);
    return m->best > stored ? plan_confirm(d, fingerprint, g, m) : 0;
}

static int merge(fdt_daemon *d, const import_set *s, merged *m)
{
    int64_t *device_ids = calloc(s->ndevices + 1, sizeof *device_ids);
    int64_t *job_ids = calloc(s->ngroups + 1, sizeof *job_ids);
    int rc = device_ids && job_ids ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < s->ndevices; i++)
        rc = fdt_store_device_import(d->store, &s->devices[i], &device_ids[i]);
    for (size_t i = 0; rc == 0 && i < s->ngroups; i++)
        rc = job_for(d, s, &s->groups[i], &job_ids[i], m);
    for (size_t i = 0; rc == 0 && i < s->nrows; i++) {
        fdt_result_row r = s->rows[i].r;
        const group *g = &s->groups[s->rows[i].group];
        r.job_id = job_ids[s->rows[i].group];
        const int added = fdt_store_result_import(d->store, device_ids[g->device], &g->key, &r);
        rc = added < 0 ? -1 : 0;
        m->added += added > 0;
        m->present += added == 0;
    }
    for (size_t i = 0; rc == 0 && i < s->ngroups; i++)
        if (s->groups[i].winner >= 0)
            rc = winner_best(d, s, &s->groups[i], device_ids[s->groups[i].device], job_ids[i],
                             m);
    free(device_ids);
    free(job_ids);
    return rc;
}

/* The whole set in one transaction; then the queries' rows read again. */
static int merge_all(fdt_daemon *d, const import_set *s, merged *m, char *why, size_t len)
{
    if (fdt_store_begin(d->store) != 0 || merge(d, s, m) != 0 ||
        fdt_store_commit(d->store) != 0) {
        snprintf(why, len, "the store refused the import, and keeps what it had: %s",
                 fdt_store_error(d->store));
        fdt_store_rollback(d->store);
        return -1;
    }
    if (queue_confirms(d, m) != 0) {
        snprintf(why, len, "the import landed, but its winners' confirming jobs could not be "
                 "queued: %s", fdt_store_error(d->store));
        return -1;
    }
    fdt_query_cache_free(d);
    return fdt_query_cache_load(d, why, len);
}

int fdt_import(fdt_daemon *d, json_t *req, json_t *ans, const char **code, char *message,
               size_t len)
{
    json_t *rows = json_object_get(req, "rows"), *last = json_object_get(req, "last");
    *code = "bad_request";
    if (!json_is_array(rows) || json_array_size(rows) > FDT_IMPORT_PAGE_MAX ||
        (last && !json_is_boolean(last))) {
        snprintf(message, len, "'rows' must be an array of at most %d rows, 'last' true or "
                 "false", FDT_IMPORT_PAGE_MAX);
        return -1;
    }
    import_set *s = set_of(d, req, message, len);
    if (!s)
        return -1;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        if (s->nrows == FDT_IMPORT_ROWS_MAX) {
            snprintf(message, len, "the file holds over %d rows", FDT_IMPORT_ROWS_MAX);
            break;
        }
        if (take_row(s, row, s->nrows, message, len) != 0)
            break;
    }
    if (i < json_array_size(rows)) {
        set_free(s);
        return -1;
    }
    json_object_set_new(ans, "set", json_integer(s->id));
    json_object_set_new(ans, "staged", json_integer((json_int_t)s->nrows));
    if (!json_is_true(last))
        return 0;
    merged m = {0};
    const int rc = merge_all(d, s, &m, message, len);
    const size_t total = s->nrows;
    set_free(s);
    free(m.confirm);
    if (rc != 0) {
        *code = "internal";
        return -1;
    }
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "rows", (json_int_t)total,
                          "added", (json_int_t)m.added, "present", (json_int_t)m.present,
                          "jobs", (json_int_t)m.jobs, "best", (json_int_t)m.best, "kept",
                          (json_int_t)m.kept, "confirming", (json_int_t)m.nconfirm);
    json_object_update(ans, o);
    json_decref(o);
    return 0;
}

/* ---- a file's winners, unmerged (the site store) ------------------------------------ */

/* A file's rows staged as they are read; the first bad one stops the read. */
typedef struct file_stage {
    import_set set;
    char why[512];
} file_stage;

static int stage_from_file(void *ctx, json_t *row)
{
    file_stage *f = ctx;
    return take_row(&f->set, row, f->set.nrows, f->why, sizeof f->why);
}

/* Group g's winner as fdt_file_winner w, for cache auto or its own key's. */
static void winner_of(const import_set *s, const group *g, int automatic, fdt_file_winner *w)
{
    memset(w, 0, sizeof *w);
    w->device = s->devices[g->device];
    w->best = group_best(s, g, automatic);
    fdt_copy_text(w->host, sizeof w->host, g->host);
    fdt_copy_text(w->store, sizeof w->store, g->store);
    fdt_copy_text(w->fdtuned, sizeof w->fdtuned, g->fdtuned);
    w->job = g->job;
}

int fdt_import_winners(const char *path, fdt_file_winner **out, size_t *n, char *why,
                       size_t len)
{
    file_stage f = {.set = {0}};
    import_set s;
    char read_why[512] = "";
    *out = NULL;
    *n = 0;
    if (fdt_import_file_read(path, stage_from_file, &f, read_why, sizeof read_why) != 0) {
        if (f.why[0])
            snprintf(why, len, "%s: %s", path, f.why);
        else
            snprintf(why, len, "%s", read_why);
        set_free(&f.set);
        return -1;
    }
    s = f.set;
    fdt_file_winner *w = calloc(2 * s.ngroups + 1, sizeof *w);
    for (size_t i = 0; w && i < s.ngroups; i++) {
        const group *g = &s.groups[i];
        if (g->winner < 0)
            continue;
        for (int automatic = 0; automatic <= g->chose; automatic++)
            winner_of(&s, g, automatic, &w[(*n)++]);
    }
    set_free(&s);
    if (!w) {
        snprintf(why, len, "%s: out of memory", path);
        return -1;
    }
    *out = w;
    return 0;
}

void fdt_imports_free(fdt_daemon *d)
{
    if (!d->imports)
        return;
    for (size_t i = 0; i < SETS_MAX; i++)
        set_free(&d->imports->sets[i]);
    free(d->imports);
    d->imports = NULL;
}
