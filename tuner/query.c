/* query.c - exact, nearest and default answers; see query.h. */
#include "query.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

double fdt_query_distance(const fdt_problem *a, const fdt_problem *t, uint64_t l2_bytes)
{
    const double regime = fits_l2(a, l2_bytes) != fits_l2(t, l2_bytes) ? 4.0 : 0.0;
    return regime + log_ratio((double)a->nx * a->ny, (double)t->nx * t->ny) +
           0.5 * log_ratio(a->nx, t->nx) + 0.25 * log_ratio(a->nz, t->nz);
}

static double points(const fdt_problem *p)
{
    return (double)p->nx * p->ny * p->nz;
}

long fdt_query_nearest(const fdt_problem *asked, const fdt_best *c, size_t n, uint64_t l2_bytes,
                       double *distance)
{
    long best = -1;
    double best_d = 0;
    for (size_t i = 0; i < n; i++) {
        const double d = fdt_query_distance(asked, &c[i].key.problem, l2_bytes);
        /* Ties go to the larger tuned shape: its measurement is the longer, steadier one. */
        if (best < 0 || d < best_d ||
            (d == best_d && points(&c[i].key.problem) > points(&c[best].key.problem))) {
            best = (long)i;
            best_d = d;
        }
    }
    if (best >= 0)
        *distance = best_d;
    return best;
}

/* Picks the answer among one stored device's tuned shapes; 1 when it had any. */
static int answer_from(fdt_daemon *d, const fdt_device_slot *dev, const fdt_device_row *row,
                       const fdt_key *key, fdt_answer *out, int *failed)
{
    fdt_best *cands = NULL;
    size_t n = 0;
    if (fdt_store_best_for(d->store, row->id, key, &cands, &n) != 0) {
        *failed = 1;
        return 0;
    }
    double distance = 0;
    const long i = fdt_query_nearest(&key->problem, cands, n, dev->info.l2_bytes, &distance);
    if (i >= 0) {
        out->best = cands[i];
        out->from = row->info;
        out->distance = distance;
        out->match = distance == 0 ? FDT_MATCH_EXACT : FDT_MATCH_NEAREST;
    }
    free(cands);
    return i >= 0;
}

/* The device's own rows are looked at first without listing every stored device: the
 * common case costs one statement. */
int fdt_query_find(fdt_daemon *d, const fdt_device_slot *dev, const fdt_key *key,
                   fdt_answer *out)
{
    memset(out, 0, sizeof *out);
    out->match = FDT_MATCH_DEFAULT;
    out->level = FDT_LEVEL_NONE;
    int failed = 0;
    const fdt_device_row self = {.id = dev->id, .info = dev->info};
    if (answer_from(d, dev, &self, key, out, &failed)) {
        out->level = FDT_LEVEL_FINGERPRINT;
        return 0;
    }
    fdt_device_row *rows = NULL;
    size_t n = 0;
    if (failed || fdt_store_devices(d->store, &rows, &n) != 0)
        return -1;
    for (fdt_level level = FDT_LEVEL_MODEL; level < FDT_LEVEL_NONE && !failed; level++) {
        for (size_t i = 0; i < n && !failed; i++) {
            if (rows[i].id == dev->id || fdt_query_level(&dev->info, &rows[i].info) != level)
                continue;
            if (answer_from(d, dev, &rows[i], key, out, &failed)) {
                out->level = level;
                free(rows);
                return 0;
            }
        }
    }
    free(rows);
    return failed ? -1 : 0;
}

static json_t *dim3_json(fdt_dim3 v)
{
    return json_pack("[I,I,I]", (json_int_t)v.x, (json_int_t)v.y, (json_int_t)v.z);
}

json_t *fdt_query_config_json(const char *name, const fdt_problem *asked)
{
    fdt_variant v;
    char err[128];
    if (fdt_variant_parse(name, &v, err, sizeof err) != 0)
        return NULL;
    fdt_dim3 grid, block;
    fdt_variant_geometry(&v, asked, &grid, &block);
    fdt_defines defs;
    fdt_variant_defines(&v, asked, &defs);
    json_t *defines = json_array();
    for (size_t i = 0; i < defs.count; i++)
        json_array_append_new(defines, json_string(defs.list[i]));
    char source[32];
    snprintf(source, sizeof source, "%s.hip", fdt_family_name(v.family));
    json_t *params = json_pack("{s:i, s:i, s:i, s:i, s:i, s:s, s:b, s:b, s:b}", "bx", v.bx, "by",
                               v.by, "bz", v.bz, "m", v.m, "mz", v.mz, "order",
                               v.order ? "asc" : "seed", "lb", v.lb, "nt", v.nt, "map", v.map);
    return json_pack("{s:s, s:s, s:[s,s], s:s, s:o, s:o, s:o, s:o}", "variant", name, "family",
                     fdt_family_name(v.family), "sources", "common.h", source, "entry",
                     "fdt_laplacian", "params", params, "block", dim3_json(block), "grid",
                     dim3_json(grid), "defines", defines);
}
