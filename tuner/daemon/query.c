/* query.c - exact, nearest and default answers; see query.h. */
#include "daemon/query.h"
#include "daemon/site.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sources.h"
#include "engine/stencil.h"
#include "engine/variant.h"

const char *fdt_match_name(fdt_match m)
{
    static const char *const names[] = {"exact", "nearest", "default"};
    return names[m];
}

const char *fdt_level_name(fdt_level l)
{
    static const char *const names[] = {"fingerprint", "model", "arch", "none"};
    return names[l];
}

fdt_level fdt_query_level(const fdt_device_info *a, const fdt_device_info *s)
{
    if (strcmp(a->backend, s->backend) != 0 || strcmp(a->arch, s->arch) != 0)
        return FDT_LEVEL_NONE;
    /* The CU count and memory belong to the model: a part with fewer CUs under the same name
     * (a cut-down or partitioned device) is another model. */
    const int model = strcmp(a->vendor, s->vendor) == 0 && strcmp(a->name, s->name) == 0 &&
                      a->compute_units == s->compute_units &&
                      a->memory_bytes == s->memory_bytes;
    if (!model)
        return FDT_LEVEL_ARCH;
    const int same_software = strcmp(a->driver_version, s->driver_version) == 0 &&
                              strcmp(a->compiler_version, s->compiler_version) == 0;
    return same_software ? FDT_LEVEL_FINGERPRINT : FDT_LEVEL_MODEL;
}

/* Whether the planes a z-marching stencil keeps in flight fit in the L2 cache. */
static int fits_l2(const fdt_problem *p, uint64_t l2_bytes)
{
    const double planes = (2.0 * p->radius + 1.0) * (double)p->nx * (double)p->ny *
                          (double)fdt_real_size(p->precision);
    return planes <= (double)l2_bytes;
}

static double log_ratio(double a, double b)
{
    return fabs(log2(a / b));
}

/* Whether two problems lay their rows out alike: as much padding after each, and the same
 * offset. The same shape in another layout is not an exact answer, only a near one. */
static int same_layout(const fdt_problem *a, const fdt_problem *t)
{
    return fdt_problem_pitch(a) - a->nx == fdt_problem_pitch(t) - t->nx &&
           a->offset == t->offset;
}

double fdt_query_distance(const fdt_problem *a, const fdt_problem *t, uint64_t l2_bytes)
{
    const double regime = fits_l2(a, l2_bytes) != fits_l2(t, l2_bytes) ? 4.0 : 0.0;
    const double layout = same_layout(a, t) ? 0.0 : 0.25;
    return regime + layout + log_ratio((double)a->nx * a->ny, (double)t->nx * t->ny) +
           0.5 * log_ratio(a->nx, t->nx) + 0.25 * log_ratio(a->nz, t->nz);
}

static double points(const fdt_problem *p)
{
    return (double)p->nx * p->ny * p->nz;
}

/* The nearest of the candidates that eligible() accepts (all, when it is NULL); -1 if none. */
static long nearest_where(const fdt_problem *asked, const fdt_best *c, size_t n,
                          uint64_t l2_bytes, int (*eligible)(const fdt_best *, const void *),
                          const void *ctx, double *distance)
{
    long best = -1;
    double best_d = 0;
    for (size_t i = 0; i < n; i++) {
        if (eligible && !eligible(&c[i], ctx))
            continue;
        const double d = fdt_query_distance(asked, &c[i].key.problem, l2_bytes);
        /* Ties go to the larger tuned shape: its measurement is the longer, steadier one;
         * then to the store's own row over the site's (query.c's add_site puts them last). */
        if (best < 0 || d < best_d ||
            (d == best_d && points(&c[i].key.problem) > points(&c[best].key.problem)) ||
            (d == best_d && points(&c[i].key.problem) == points(&c[best].key.problem) &&
             c[best].device_id < 0 && c[i].device_id >= 0)) {
            best = (long)i;
            best_d = d;
        }
    }
    if (best >= 0)
        *distance = best_d;
    return best;
}

long fdt_query_nearest(const fdt_problem *asked, const fdt_best *c, size_t n, uint64_t l2_bytes,
                       double *distance)
{
    return nearest_where(asked, c, n, l2_bytes, NULL, NULL, distance);
}

/* The daemon is the store's only writer, so the best rows and the devices are kept in
 * memory as well: a query is answered without SQLite, whose file locks would otherwise cost
 * more than the rest of the answer. */
#define MEMO_SLOTS 4096 /* direct-mapped; a host's solvers ask a few shapes again and again */

typedef struct memo_entry {
    uint64_t generation; /* 0: empty */
    int device;
    fdt_key key;
    char *body;
} memo_entry;

struct fdt_query_cache {
    fdt_best *best;
    size_t nbest, cap;
    fdt_device_row *devices;
    size_t ndevices;
    /* Whole answers already written, valid while the best rows have not changed since. */
    memo_entry memo[MEMO_SLOTS];
    uint64_t generation;
};

/* The site store's devices and winners after the store's own (site.c): a tie between a
 * row of the store and one of the site goes to the store's, which comes first. */
static int add_site(fdt_query_cache *c, const fdt_site *site)
{
    if (!site)
        return 0;
    fdt_best *best = realloc(c->best, (c->nbest + site->nbest + 1) * sizeof *best);
    if (best)
        c->best = best;
    fdt_device_row *devices = realloc(c->devices,
                                      (c->ndevices + site->ndevices + 1) * sizeof *devices);
    if (devices)
        c->devices = devices;
    if (!best || !devices)
        return -1;
    memcpy(c->best + c->nbest, site->best, site->nbest * sizeof *best);
    c->nbest += site->nbest;
    memcpy(c->devices + c->ndevices, site->devices, site->ndevices * sizeof *devices);
    c->ndevices += site->ndevices;
    return 0;
}

int fdt_query_cache_load(fdt_daemon *d, char *err, size_t errlen)
{
    fdt_query_cache *c = calloc(1, sizeof *c);
    if (!c || fdt_store_best_all(d->store, &c->best, &c->nbest) != 0 ||
        fdt_store_devices(d->store, &c->devices, &c->ndevices) != 0 ||
        add_site(c, d->site) != 0) {
        snprintf(err, errlen, "cannot load the tuned shapes: %s",
                 c ? fdt_store_error(d->store) : "out of memory");
        if (c) {
            free(c->best);
            free(c->devices);
        }
        free(c);
        return -1;
    }
    c->cap = c->nbest;
    c->generation = 1;
    d->query_cache = c;
    return 0;
}

void fdt_query_cache_free(fdt_daemon *d)
{
    if (!d->query_cache)
        return;
    for (size_t i = 0; i < MEMO_SLOTS; i++)
        free(d->query_cache->memo[i].body);
    free(d->query_cache->best);
    free(d->query_cache->devices);
    free(d->query_cache);
    d->query_cache = NULL;
}

static int same_key(const fdt_key *a, const fdt_key *b)
{
    return a->problem.radius == b->problem.radius &&
           a->problem.precision == b->problem.precision &&
           strcmp(a->problem.stencil, b->problem.stencil) == 0 && a->problem.cache == b->problem.cache;
}

/* The shape and its layout, as asked (pitch auto is a layout of its own here). */
static int same_shape(const fdt_problem *a, const fdt_problem *b)
{
    return a->nx == b->nx && a->ny == b->ny && a->nz == b->nz && a->pitch == b->pitch &&
           a->offset == b->offset;
}

static size_t memo_slot(int device, const fdt_key *k)
{
    const fdt_problem *p = &k->problem;
    const uint64_t fields[] = {(uint64_t)device, (uint64_t)p->nx, (uint64_t)p->ny,
                               (uint64_t)p->nz, (uint64_t)p->radius, (uint64_t)p->precision,
                               (uint64_t)p->cache, (uint64_t)p->stencil[0],
                               (uint64_t)p->pitch, (uint64_t)p->offset};
    return (size_t)(fdt_hash_bytes(fields, sizeof fields) % MEMO_SLOTS);
}

static int memo_matches(const memo_entry *e, uint64_t generation, int device, const fdt_key *k)
{
    return e->generation == generation && e->device == device && same_key(&e->key, k) &&
           same_shape(&e->key.problem, &k->problem);
}

const char *fdt_query_memo_get(fdt_daemon *d, int device, const fdt_key *key)
{
    const fdt_query_cache *c = d->query_cache;
    const memo_entry *e = &c->memo[memo_slot(device, key)];
    return memo_matches(e, c->generation, device, key) ? e->body : NULL;
}

const char *fdt_query_memo_put(fdt_daemon *d, int device, const fdt_key *key, char *body)
{
    fdt_query_cache *c = d->query_cache;
    memo_entry *e = &c->memo[memo_slot(device, key)];
    free(e->body);
    *e = (memo_entry){.generation = c->generation, .device = device, .key = *key, .body = body};
    return body;
}

int fdt_query_remember(fdt_daemon *d, const fdt_best *b)
{
    fdt_query_cache *c = d->query_cache;
    c->generation++; /* every answer written so far may have changed */
    for (size_t i = 0; i < c->nbest; i++)
        if (c->best[i].device_id == b->device_id && same_key(&c->best[i].key, &b->key) &&
            same_shape(&c->best[i].key.problem, &b->key.problem)) {
            c->best[i] = *b;
            return 0;
        }
    if (c->nbest == c->cap) {
        const size_t cap = c->cap ? 2 * c->cap : 64;
        fdt_best *grown = realloc(c->best, cap * sizeof *grown);
        if (!grown)
            return -1;
        c->best = grown;
        c->cap = cap;
    }
    c->best[c->nbest++] = *b;
    return 0;
}

/* The rows of one stored device, and for the asked device's own those of the site devices
 * of its fingerprint (site.c): a site winner of the very shape beats a nearer guess. */
typedef struct row_filter {
    int64_t device_id;
    const char *fingerprint;  /* the site devices of this fingerprint too; NULL: none */
    const fdt_query_cache *c;
    const fdt_key *key;
} row_filter;

static const fdt_device_row *device_row(const fdt_query_cache *c, int64_t id)
{
    for (size_t i = 0; i < c->ndevices; i++)
        if (c->devices[i].id == id)
            return &c->devices[i];
    return NULL;
}

static int of_device_and_key(const fdt_best *b, const void *ctx)
{
    const row_filter *f = ctx;
    if (!same_key(&b->key, f->key))
        return 0;
    if (b->device_id == f->device_id)
        return 1;
    const fdt_device_row *site = b->device_id < 0 && f->fingerprint ? device_row(f->c, b->device_id)
                                                                  : NULL;
    return site && strcmp(site->fingerprint, f->fingerprint) == 0;
}

/* Picks the answer among one device's tuned shapes; 1 when it had any. */
static int answer_from(const fdt_query_cache *c, const fdt_device_slot *dev, int64_t device_id,
                       const fdt_key *key, fdt_answer *out)
{
    const row_filter filter = {.device_id = device_id, .c = c, .key = key,
                               .fingerprint = device_id == dev->id ? dev->fingerprint : NULL};
    double distance = 0;
    const long i = nearest_where(&key->problem, c->best, c->nbest, dev->info.l2_bytes,
                                 of_device_and_key, &filter, &distance);
    if (i < 0)
        return 0;
    out->best = c->best[i];
    out->distance = distance;
    out->match = distance == 0 ? FDT_MATCH_EXACT : FDT_MATCH_NEAREST;
    return 1;
}

void fdt_query_find(fdt_daemon *d, const fdt_device_slot *dev, const fdt_key *key,
                    fdt_answer *out)
{
    const fdt_query_cache *c = d->query_cache;
    memset(out, 0, sizeof *out);
    out->match = FDT_MATCH_DEFAULT;
    out->level = FDT_LEVEL_NONE;
    if (answer_from(c, dev, dev->id, key, out)) {
        out->level = FDT_LEVEL_FINGERPRINT;
        out->from = dev->info;
        return;
    }
    for (fdt_level level = FDT_LEVEL_MODEL; level < FDT_LEVEL_NONE; level++)
        for (size_t i = 0; i < c->ndevices; i++) {
            const fdt_device_row *row = &c->devices[i];
            if (row->id != dev->id && fdt_query_level(&dev->info, &row->info) == level &&
                answer_from(c, dev, row->id, key, out)) {
                out->level = level;
                out->from = row->info;
                return;
            }
        }
}

static json_t *dim3_json(fdt_dim3 v)
{
    return json_pack("[I,I,I]", (json_int_t)v.x, (json_int_t)v.y, (json_int_t)v.z);
}

json_t *fdt_query_persist_json(const fdt_problem *asked)
{
    fdt_dim3 grid, block;
    fdt_persist_geometry(asked, &grid, &block);
    return json_pack("{s:[s,s], s:s, s:s, s:o, s:o}", "sources", "common.h", "persist.hip",
                     "source_hash", fdt_built_in_hash(fdt_persist_source()), "entry",
                     "fdt_persist_edges", "block", dim3_json(block), "grid", dim3_json(grid));
}

/* The answer's "params": each parameter the table gives an answer, as it says. */
static json_t *params_json(const fdt_variant *v)
{
    json_t *params = json_object();
    for (int p = 0; p < FDT_PARAMS; p++) {
        const fdt_param *q = &fdt_params()[p];
        const int value = fdt_param_value(v, p);
        switch (q->answer) {
        case FDT_ANSWER_INT: json_object_set_new(params, q->name, json_integer(value)); break;
        case FDT_ANSWER_BOOL: json_object_set_new(params, q->name, json_boolean(value)); break;
        case FDT_ANSWER_WORD:
            json_object_set_new(params, q->name, json_string(q->words[value != 0]));
            break;
        case FDT_ANSWER_NONE: break;
        }
    }
    return params;
}

json_t *fdt_query_config_json(const char *name, const fdt_problem *asked)
{
    fdt_variant v;
    char err[128];
    const fdt_stencil *stencil = fdt_stencil_of(asked);
    if (!stencil || fdt_variant_parse(name, &v, err, sizeof err) != 0)
        return NULL;
    fdt_dim3 grid, block;
    fdt_variant_geometry(&v, asked, &grid, &block);
    fdt_defines defs;
    fdt_variant_defines(&v, asked, &defs);
    json_t *defines = json_array();
    for (size_t i = 0; i < defs.count; i++)
        json_array_append_new(defines, json_string(defs.list[i]));
    char source[32], hash[33];
    snprintf(source, sizeof source, "%s.hip", fdt_family_name(v.family));
    const char *text = fdt_variant_source(&v, asked);
    if (fdt_built_in_hash(text)) /* a built-in's, computed once */
        fdt_copy_text(hash, sizeof hash, fdt_built_in_hash(text));
    else
        fdt_source_hash(text, hash);
    return json_pack("{s:s, s:s, s:[s,s], s:s, s:s, s:o, s:o, s:o, s:I, s:o}", "variant", name,
                     "family", fdt_family_name(v.family), "sources", "common.h", source,
                     "source_hash", hash, "entry", stencil->entry, "params", params_json(&v),
                     "block", dim3_json(block), "grid", dim3_json(grid), "shared_bytes",
                     (json_int_t)fdt_variant_dynamic_shared_bytes(&v, asked), "defines",
                     defines);
}
