/* export.c - rows of the store as JSON objects, and CSV written from the same objects, so
 * that both formats always carry the same columns in the same order.
 *
 * An export is answered one page at a time, as Redis's SCAN is: each request reads at most
 * FDT_EXPORT_PAGE_MAX rows with one short keyset query and answers them with a cursor the
 * client sends back for the next page. The daemon keeps nothing between pages, so memory is
 * one page whatever the store's size, other clients are answered between pages, and a
 * client that goes away mid-export leaves nothing behind. */
#include "daemon/export.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csvout.h"
#include "export_format.h"

/* What a result row's export says of its job: where it was measured, and the winner it
 * stored for its problem, if that is still the problem's best. Read once per job of a page
 * (a page's rows come in measurement order, so a job's rows mostly together). */
typedef struct job_facts {
    int64_t id;
    fdt_job job;
    int has_best, has_auto;
    fdt_best best, auto_best; /* its winner, and under cache auto the state it chose */
} job_facts;

typedef struct page {
    fdt_store *store;
    const char *host; /* this daemon's host: where its own jobs measured */
    fdt_device_row *devices;
    size_t ndevices;
    job_facts facts;  /* the last row's job */
    size_t limit;     /* rows answered; one more is read to know whether more follow */
    json_t *rows;
    int64_t last_id;  /* results: the id of the last row answered */
    int more;         /* a row beyond the page exists */
    int failed;       /* the store failed while the page was read */
} page;

/* The stored device of a row; NULL for one the store no longer lists. */
static const fdt_device_row *device_of(const page *e, int64_t id)
{
    for (size_t i = 0; i < e->ndevices; i++)
        if (e->devices[i].id == id)
            return &e->devices[i];
    return NULL;
}

/* A row's first columns (common/export_format.c): its format, its device and every field
 * of the device's fingerprint, its problem. */
static json_t *key_json(const page *e, const char *format, int64_t device_id,
                        const fdt_key *k)
{
    const fdt_problem *p = &k->problem;
    const fdt_device_row *dev = device_of(e, device_id);
    const fdt_device_info none = {0}, *i = dev ? &dev->info : &none;
    char name[32];
    snprintf(name, sizeof name, "%s/%d", format, FDT_FORMAT_VERSION);
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:I, s:s, s:s, s:s, s:i, s:s, s:i, "
                     "s:i, s:i, s:s, s:i, s:i}",
                     "format", name, "fingerprint", dev ? dev->fingerprint : "", "device",
                     i->name, "backend", i->backend, "vendor", i->vendor, "arch", i->arch,
                     "compute_units", i->compute_units, "memory_bytes",
                     (json_int_t)i->memory_bytes, "driver_version", i->driver_version,
                     "compiler_version", i->compiler_version, "stencil", k->problem.stencil,
                     "radius", p->radius, "precision", fdt_precision_name(p->precision),
                     "nx", p->nx, "ny", p->ny, "nz", p->nz, "cache",
                     fdt_cache_mode_name(p->cache), "pitch", fdt_problem_pitch(p), "offset",
                     p->offset);
}

/* The facts of job_id, read unless the last row's job was the same: 0, -1 store error. A
 * job the store no longer has (none is deleted) reads as this host's. */
static int facts_of(page *e, int64_t job_id, int64_t device_id, const fdt_key *key)
{
    job_facts *f = &e->facts;
    if (f->id == job_id)
        return 0;
    memset(f, 0, sizeof *f);
    fdt_key automatic = *key;
    automatic.problem.cache = FDT_CACHE_AUTO;
    const int found = fdt_store_job_get(e->store, job_id, &f->job);
    const int best = found < 0 ? -1 : fdt_store_best_get(e->store, device_id, key, &f->best);
    const int chose = best < 0 ? -1
                               : fdt_store_best_get(e->store, device_id, &automatic,
                                                    &f->auto_best);
    if (chose < 0)
        return -1;
    f->id = job_id;
    f->has_best = best && f->best.job_id == job_id;
    f->has_auto = chose && f->auto_best.job_id == job_id;
    return 0;
}

/* Where a job measured: its origin for an imported one, else this host, store and job. */
static const char *host_of(const page *e, const fdt_job *j)
{
    return j->origin_store[0] ? j->origin_host : e->host;
}

static const char *store_of(const page *e, const fdt_job *j)
{
    return j->origin_store[0] ? j->origin_store : fdt_store_id(e->store);
}

static int64_t job_there(const fdt_job *j, int64_t id)
{
    return j->origin_store[0] ? j->origin_job : id;
}

static json_t *best_json(page *e, const fdt_best *b)
{
    if (facts_of(e, b->job_id, b->device_id, &b->key) != 0)
        return NULL;
    const fdt_job *j = &e->facts.job;
    json_t *row = key_json(e, FDT_FORMAT_BEST, b->device_id, &b->key);
    json_t *rest = json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:s, s:I, s:I, s:s, s:s, "
                             "s:s, s:s}",
                             "state", fdt_cache_mode_name(b->state), "variant", b->variant,
                             "gbps", b->gbps, "median_ms", b->median_ms, "copy_gbps",
                             b->copy_gbps, "interior_copy_gbps", b->interior_copy_gbps,
                             "kernel1_gbps", b->kernel1_gbps, "kernels", b->kernels, "job",
                             (json_int_t)job_there(j, b->job_id), "updated",
                             (json_int_t)b->updated, "doubt", b->doubt, "host", host_of(e, j),
                             "store", store_of(e, j), "fdtuned", j->fdtuned);
    json_object_update(row, rest);
    json_decref(rest);
    return row;
}

/* A result row's provenance and its job's outcome (common/export_format.c): the winner's
 * figures on its row alone. */
static json_t *outcome_json(const page *e, const fdt_result_row *r)
{
    const job_facts *f = &e->facts;
    const int winner = f->has_best && r->leader && strcmp(f->best.variant, r->variant) == 0;
    const int chose = winner && f->has_auto;
    const fdt_best *b = &f->best, *a = &f->auto_best;
    return json_pack("{s:s, s:I, s:s, s:s, s:s, s:s, s:b, s:s, s:f, s:f, s:f, s:s, s:s, s:s, "
                     "s:f, s:f, s:f}",
                     "kernels", r->kernels, "measured", (json_int_t)r->measured, "host",
                     host_of(e, &f->job), "store", store_of(e, &f->job), "fdtuned",
                     f->job.fdtuned, "strategy", f->job.strategy, "winner", winner, "state",
                     winner ? fdt_cache_mode_name(b->state) : "", "copy_gbps",
                     winner ? b->copy_gbps : 0.0, "interior_copy_gbps",
                     winner ? b->interior_copy_gbps : 0.0, "kernel1_gbps",
                     winner ? b->kernel1_gbps : 0.0, "doubt", winner ? b->doubt : "",
                     "auto_state", chose ? fdt_cache_mode_name(a->state) : "", "auto_variant",
                     chose ? a->variant : "", "auto_gbps", chose ? a->gbps : 0.0,
                     "auto_median_ms", chose ? a->median_ms : 0.0, "auto_copy_gbps",
                     chose ? a->copy_gbps : 0.0);
}

static int add_result_row(void *ctx, int64_t id, int64_t device_id, const fdt_key *key,
                          const fdt_result_row *r)
{
    page *e = ctx;
    if (json_array_size(e->rows) == e->limit) {
        e->more = 1;
        return 1;
    }
    if (facts_of(e, r->job_id, device_id, key) != 0) {
        e->failed = 1;
        return 1;
    }
    json_t *row = key_json(e, FDT_FORMAT_RESULTS, device_id, key);
    json_t *rest = json_pack("{s:I, s:s, s:s, s:b, s:f, s:f, s:f, s:f, s:i, s:i, s:f, s:f, "
                             "s:i, s:i, s:i, s:i, s:s}",
                             "job", (json_int_t)job_there(&e->facts.job, r->job_id), "variant",
                             r->variant, "status",
                             r->status, "leader", r->leader, "median_ms", r->median_ms, "min_ms",
                             r->min_ms, "q1_ms", r->q1_ms, "q3_ms", r->q3_ms, "samples",
                             r->samples, "reps", r->reps, "gbps", r->gbps, "compile_ms",
                             r->compile_ms, "vgprs", r->vgprs, "sgprs", r->sgprs, "scratch_bytes",
                             r->scratch_bytes, "shared_bytes", r->shared_bytes, "message",
                             r->message);
    json_object_update(row, rest);
    json_decref(rest);
    rest = outcome_json(e, r);
    json_object_update(row, rest);
    json_decref(rest);
    json_array_append_new(e->rows, row);
    e->last_id = id;
    return 0;
}

/* A value as a CSV field: text as fdt_csv_field writes it, booleans 1 and 0. */
static void csv_field(FILE *out, json_t *v)
{
    if (json_is_string(v)) {
        fdt_csv_field(out, json_string_value(v));
    } else if (json_is_true(v) || json_is_false(v)) {
        fputs(json_is_true(v) ? "1" : "0", out);
    } else if (json_is_integer(v)) {
        fprintf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); /* most fields: no malloc */
    } else {
        char *text = json_dumps(v, JSON_ENCODE_ANY);
        fputs(text ? text : "", out);
        free(text);
    }
}

/* The page's rows as CSV lines, after the header line when with_header. */
static char *csv(json_t *rows, const fdt_column *columns, int with_header)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (!out)
        return NULL;
    for (size_t c = 0; with_header && columns[c].name; c++)
        fprintf(out, "%s%s", c ? "," : "", columns[c].name);
    if (with_header)
        fputc('\n', out);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        for (size_t c = 0; columns[c].name; c++) {
            if (c)
                fputc(',', out);
            csv_field(out, json_object_get(row, columns[c].name));
        }
        fputc('\n', out);
    }
    fclose(out);
    return text;
}

static int pick(json_t *req, const char *name, const char *a, const char *b, int *second)
{
    json_t *v = json_object_get(req, name);
    *second = 0;
    if (!v)
        return 0;
    if (!json_is_string(v))
        return -1;
    if (strcmp(json_string_value(v), a) == 0)
        return 0;
    *second = 1;
    return strcmp(json_string_value(v), b) == 0 ? 0 : -1;
}

/* A best row's cursor: its device and key in the table's order. */
static json_t *best_cursor(const fdt_best *b)
{
    const fdt_problem *p = &b->key.problem;
    return json_pack("[I, s, i, s, s, i, i, i, i, i]", (json_int_t)b->device_id,
                     b->key.problem.stencil, p->radius, fdt_precision_name(p->precision),
                     fdt_cache_mode_name(p->cache), p->nx, p->ny, p->nz, p->pitch, p->offset);
}

static int int_at(json_t *a, size_t i, int *out)
{
    json_t *v = json_array_get(a, i);
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > INT32_MAX)
        return -1;
    *out = (int)json_integer_value(v);
    return 0;
}

/* The inverse of best_cursor; -1 for anything it could not have made. */
static int parse_best_cursor(json_t *a, fdt_best *b)
{
    const char *stencil = json_string_value(json_array_get(a, 1));
    const char *precision = json_string_value(json_array_get(a, 3));
    const char *cache = json_string_value(json_array_get(a, 4));
    fdt_problem *p = &b->key.problem;
    int device;
    memset(b, 0, sizeof *b);
    if (json_array_size(a) != 10 || !stencil || !precision || !cache || int_at(a, 0, &device) ||
        int_at(a, 2, &p->radius) || int_at(a, 5, &p->nx) || int_at(a, 6, &p->ny) ||
        int_at(a, 7, &p->nz) || int_at(a, 8, &p->pitch) || int_at(a, 9, &p->offset) ||
        fdt_precision_parse(precision, &p->precision) ||
        fdt_cache_mode_parse(cache, &p->cache))
        return -1;
    b->device_id = device;
    fdt_copy_text(b->key.problem.stencil, sizeof b->key.problem.stencil, stencil);
    return 0;
}

static int best_page(fdt_daemon *d, page *e, json_t *after, json_t **next)
{
    fdt_best from, *rows = NULL;
    size_t n = 0;
    if (after && parse_best_cursor(after, &from) != 0)
        return 1;
    if (fdt_store_best_page(d->store, after ? &from : NULL, e->limit + 1, &rows, &n) != 0)
        return -1;
    e->more = n > e->limit;
    for (size_t i = 0; i < n && i < e->limit; i++) {
        json_t *row = best_json(e, &rows[i]);
        if (!row) {
            free(rows);
            return -1;
        }
        json_array_append_new(e->rows, row);
    }
    if (e->more)
        *next = best_cursor(&rows[e->limit - 1]);
    free(rows);
    return 0;
}

static int results_page(fdt_daemon *d, page *e, json_t *after, json_t **next)
{
    if (after && (!json_is_integer(after) || json_integer_value(after) < 0))
        return 1;
    const int64_t from = after ? json_integer_value(after) : 0;
    if (fdt_store_results_page(d->store, from, e->limit + 1, add_result_row, e) != 0 ||
        e->failed)
        return -1;
    if (e->more)
        *next = json_integer(e->last_id);
    return 0;
}

static int page_size(json_t *req, size_t *limit)
{
    json_t *v = json_object_get(req, "limit");
    *limit = FDT_EXPORT_PAGE_MAX;
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 1 ||
        json_integer_value(v) > FDT_EXPORT_PAGE_MAX)
        return -1;
    *limit = (size_t)json_integer_value(v);
    return 0;
}

/* Reads the page's rows; 0, 1 for a cursor this export could not have made, -1 when the
 * store failed. */
static int read_page(fdt_daemon *d, page *e, int results, json_t *after, json_t **next)
{
    e->store = d->store;
    e->host = d->host;
    if (fdt_store_devices(d->store, &e->devices, &e->ndevices) != 0)
        return -1;
    const int rc = results ? results_page(d, e, after, next) : best_page(d, e, after, next);
    free(e->devices);
    return rc;
}

static void fill(json_t *ans, page *e, int results, int as_csv, int first, json_t *next)
{
    json_object_set_new(ans, "what", json_string(results ? "results" : "best"));
    json_object_set_new(ans, "format", json_string(as_csv ? "csv" : "json"));
    json_object_set_new(ans, "count", json_integer((json_int_t)json_array_size(e->rows)));
    if (next)
        json_object_set_new(ans, "next", next);
    if (!as_csv) {
        json_object_set_new(ans, "rows", e->rows);
        return;
    }
    char *text = csv(e->rows, results ? fdt_result_columns : fdt_best_columns, first);
    json_object_set_new(ans, "data", json_string(text ? text : ""));
    free(text);
    json_decref(e->rows);
}

int fdt_export(fdt_daemon *d, json_t *req, json_t *ans, const char **code, char *message,
               size_t len)
{
    int results, as_csv;
    page e = {0};
    *code = "bad_request";
    if (pick(req, "what", "best", "results", &results) != 0 ||
        pick(req, "format", "json", "csv", &as_csv) != 0) {
        snprintf(message, len, "'what' must be best or results, 'format' json or csv");
        return -1;
    }
    if (page_size(req, &e.limit) != 0) {
        snprintf(message, len, "'limit' must be an integer from 1 to %d", FDT_EXPORT_PAGE_MAX);
        return -1;
    }
    json_t *after = json_object_get(req, "after"), *next = NULL;
    e.rows = json_array();
    const int rc = read_page(d, &e, results, after, &next);
    if (rc != 0) {
        json_decref(e.rows);
        json_decref(next);
        if (rc > 0) {
            snprintf(message, len, "'after' must be the 'next' of a %s export's page",
                     results ? "results" : "best");
            return -1;
        }
        *code = "internal";
        snprintf(message, len, "the store failed: %s", fdt_store_error(d->store));
        return -1;
    }
    fill(ans, &e, results, as_csv, after == NULL, next);
    return 0;
}
