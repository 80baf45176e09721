/* export.c - rows of the store as JSON objects, and CSV written from the same objects, so
 * that both formats always carry the same columns in the same order. */
#include "daemon/export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct exporter {
    fdt_device_row *devices;
    size_t ndevices;
    json_t *rows;
} exporter;

/* The stored device of a row; NULL for one the store no longer lists. */
static const fdt_device_row *device_of(const exporter *e, int64_t id)
{
    for (size_t i = 0; i < e->ndevices; i++)
        if (e->devices[i].id == id)
            return &e->devices[i];
    return NULL;
}

static json_t *key_json(const exporter *e, int64_t device_id, const fdt_key *k)
{
    const fdt_problem *p = &k->problem;
    const fdt_device_row *dev = device_of(e, device_id);
    return json_pack("{s:s, s:s, s:s, s:i, s:s, s:i, s:i, s:i, s:s}", "fingerprint",
                     dev ? dev->fingerprint : "", "device", dev ? dev->info.name : "",
                     "stencil", k->stencil, "radius", p->radius, "precision",
                     fdt_precision_name(p->precision), "nx", p->nx, "ny", p->ny, "nz", p->nz,
                     "cache", fdt_cache_mode_name(p->cache));
}

static int add_best_rows(fdt_daemon *d, exporter *e)
{
    fdt_best *rows = NULL;
    size_t n = 0;
    if (fdt_store_best_all(d->store, &rows, &n) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const fdt_best *b = &rows[i];
        json_t *row = key_json(e, b->device_id, &b->key);
        json_t *rest = json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:s, s:I, s:I}",
                                 "state", fdt_cache_mode_name(b->state), "variant", b->variant,
                                 "gbps", b->gbps, "median_ms", b->median_ms, "copy_gbps",
                                 b->copy_gbps, "interior_copy_gbps", b->interior_copy_gbps,
                                 "kernel1_gbps", b->kernel1_gbps, "kernels", b->kernels, "job",
                                 (json_int_t)b->job_id, "updated", (json_int_t)b->updated);
        json_object_update(row, rest);
        json_decref(rest);
        json_array_append_new(e->rows, row);
    }
    free(rows);
    return 0;
}

static int add_result_row(void *ctx, int64_t device_id, const fdt_key *key,
                          const fdt_result_row *r)
{
    exporter *e = ctx;
    json_t *row = key_json(e, device_id, key);
    json_t *rest = json_pack("{s:I, s:s, s:s, s:b, s:f, s:f, s:f, s:f, s:i, s:i, s:f, s:f, "
                             "s:i, s:i, s:i, s:i, s:s}",
                             "job", (json_int_t)r->job_id, "variant", r->variant, "status",
                             r->status, "leader", r->leader, "median_ms", r->median_ms, "min_ms",
                             r->min_ms, "q1_ms", r->q1_ms, "q3_ms", r->q3_ms, "samples",
                             r->samples, "reps", r->reps, "gbps", r->gbps, "compile_ms",
                             r->compile_ms, "vgprs", r->vgprs, "sgprs", r->sgprs, "scratch_bytes",
                             r->scratch_bytes, "shared_bytes", r->shared_bytes, "message",
                             r->message);
    json_object_update(row, rest);
    json_decref(rest);
    json_array_append_new(e->rows, row);
    return 0;
}

/* A CSV field: quoted when it holds a separator, a quote or a line break (RFC 4180). */
static void csv_field(FILE *out, json_t *v)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (!strpbrk(s, ",\"\r\n")) {
            fputs(s, out);
            return;
        }
        fputc('"', out);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', out);
            fputc(*s, out);
        }
        fputc('"', out);
    } else if (json_is_true(v) || json_is_false(v)) {
        fputs(json_is_true(v) ? "1" : "0", out);
    } else {
        char *text = json_dumps(v, JSON_ENCODE_ANY);
        fputs(text ? text : "", out);
        free(text);
    }
}

static char *csv(json_t *rows, const char *const *columns, size_t ncolumns)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (!out)
        return NULL;
    for (size_t c = 0; c < ncolumns; c++)
        fprintf(out, "%s%s", c ? "," : "", columns[c]);
    fputc('\n', out);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        for (size_t c = 0; c < ncolumns; c++) {
            if (c)
                fputc(',', out);
            csv_field(out, json_object_get(row, columns[c]));
        }
        fputc('\n', out);
    }
    fclose(out);
    return text;
}

/* The column order of the first row's object, which every row shares. */
static size_t columns_of(json_t *rows, const char **columns, size_t cap)
{
    size_t n = 0;
    const char *key;
    json_t *v;
    json_object_foreach(json_array_get(rows, 0), key, v) {
        if (n < cap)
            columns[n++] = key;
    }
    return n;
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

int fdt_export(fdt_daemon *d, json_t *req, json_t *ans, const char **code, char *message,
               size_t len)
{
    int results, as_csv;
    if (pick(req, "what", "best", "results", &results) != 0 ||
        pick(req, "format", "json", "csv", &as_csv) != 0) {
        *code = "bad_request";
        snprintf(message, len, "'what' must be best or results, 'format' json or csv");
        return -1;
    }
    exporter e = {.rows = json_array()};
    int rc = fdt_store_devices(d->store, &e.devices, &e.ndevices);
    if (rc == 0)
        rc = results ? fdt_store_results_each(d->store, add_result_row, &e) : add_best_rows(d, &e);
    free(e.devices);
    if (rc != 0) {
        json_decref(e.rows);
        *code = "internal";
        snprintf(message, len, "the store failed: %s", fdt_store_error(d->store));
        return -1;
    }
    json_object_set_new(ans, "what", json_string(results ? "results" : "best"));
    json_object_set_new(ans, "format", json_string(as_csv ? "csv" : "json"));
    if (!as_csv) {
        json_object_set_new(ans, "rows", e.rows);
        return 0;
    }
    const char *columns[64];
    char *text = csv(e.rows, columns, columns_of(e.rows, columns, 64));
    json_object_set_new(ans, "data", json_string(text ? text : ""));
    free(text);
    json_decref(e.rows);
    return 0;
}
