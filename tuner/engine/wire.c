/* wire.c - the JSON shapes of wire.h. Each struct is described once by a table of its
 * fields (name, kind, where, range); writing and strict parsing both walk the table, so
 * the two directions cannot drift apart. */
#include "engine/wire.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/stencil.h"

typedef enum field_kind { F_INT, F_U64, F_I64, F_REAL, F_TEXT } field_kind;

typedef struct field {
    const char *name;
    field_kind kind;
    size_t offset;
    size_t size;      /* F_TEXT: the buffer's size */
    double lo, hi;    /* F_INT, F_U64, F_I64, F_REAL: the accepted range */
} field;

#define INT(s, m, name, lo, hi) {name, F_INT, offsetof(s, m), 0, lo, hi}
#define U64(s, m, name) {name, F_U64, offsetof(s, m), 0, 0, 9.0e18}
#define I64(s, m, name) {name, F_I64, offsetof(s, m), 0, 0, 9.0e18}
#define REAL(s, m, name, lo, hi) {name, F_REAL, offsetof(s, m), 0, lo, hi}
#define TEXT(s, m, name) {name, F_TEXT, offsetof(s, m), sizeof(((s *)0)->m), 0, 0}

json_t *fdt_wire_text(const char *text)
{
    json_t *j = json_string(text);
    char *ascii = j ? NULL : strdup(text);
    if (!ascii)
        return j;
    for (char *c = ascii; *c; c++)
        if ((unsigned char)*c > 0x7f)
            *c = '?';
    j = json_string(ascii);
    free(ascii);
    return j;
}

static json_t *field_json(const field *f, const void *base)
{
    const char *at = (const char *)base + f->offset;
    switch (f->kind) {
    case F_INT: return json_integer(*(const int *)at);
    case F_U64: return json_integer((json_int_t)*(const uint64_t *)at);
    case F_I64: return json_integer((json_int_t)*(const int64_t *)at);
    case F_REAL:
        /* JSON has no NaN or infinity; null makes the reader name the field. */
        return isfinite(*(const double *)at) ? json_real(*(const double *)at) : json_null();
    case F_TEXT: return fdt_wire_text(at);
    }
    return json_null();
}

/* Adds every field of base to obj; obj, or NULL (freed) when memory ran out. */
static json_t *fields_json(json_t *obj, const field *fs, size_t n, const void *base)
{
    for (size_t i = 0; obj && i < n; i++)
        if (json_object_set_new(obj, fs[i].name, field_json(&fs[i], base)) != 0) {
            json_decref(obj);
            obj = NULL;
        }
    return obj;
}

static int fail(char *err, size_t errlen, const char *fmt, const char *name)
{
    snprintf(err, errlen, fmt, name);
    return -1;
}

static int parse_number(const field *f, const json_t *v, void *at, char *err, size_t errlen)
{
    if (f->kind != F_REAL && !json_is_integer(v))
        return fail(err, errlen, "'%s' must be an integer", f->name);
    if (!json_is_number(v))
        return fail(err, errlen, "'%s' must be a number", f->name);
    const double d = json_number_value(v);
    if (!(d >= f->lo && d <= f->hi)) {
        snprintf(err, errlen, "'%s' must be from %.15g to %.15g, not %.15g", f->name, f->lo,
                 f->hi, d);
        return -1;
    }
    if (f->kind == F_INT)
        *(int *)at = (int)json_integer_value(v);
    else if (f->kind == F_U64)
        *(uint64_t *)at = (uint64_t)json_integer_value(v);
    else if (f->kind == F_I64)
        *(int64_t *)at = (int64_t)json_integer_value(v);
    else
        *(double *)at = d;
    return 0;
}

static int parse_field(const field *f, const json_t *obj, void *base, char *err, size_t errlen)
{
    const json_t *v = json_object_get(obj, f->name);
    char *at = (char *)base + f->offset;
    if (!v)
        return fail(err, errlen, "'%s' is missing", f->name);
    if (f->kind != F_TEXT)
        return parse_number(f, v, at, err, errlen);
    if (!json_is_string(v))
        return fail(err, errlen, "'%s' must be a string", f->name);
    const size_t len = json_string_length(v);
    if (len >= f->size || strlen(json_string_value(v)) != len) {
        snprintf(err, errlen, "'%s' must be a string of at most %zu characters, without NUL",
                 f->name, f->size - 1);
        return -1;
    }
    memcpy(at, json_string_value(v), len + 1);
    return 0;
}

static int parse_fields(const json_t *obj, const field *fs, size_t n, void *base, char *err,
                        size_t errlen)
{
    if (!json_is_object(obj)) {
        snprintf(err, errlen, obj ? "expected a JSON object" : "missing");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (parse_field(&fs[i], obj, base, err, errlen) != 0)
            return -1;
    return 0;
}

#define COUNT(a) (sizeof a / sizeof a[0])

/* ---- devices ---- */

static const field device_fields[] = {
    TEXT(fdt_device_info, backend, "backend"),
    TEXT(fdt_device_info, vendor, "vendor"),
    TEXT(fdt_device_info, name, "name"),
    TEXT(fdt_device_info, arch, "arch"),
    INT(fdt_device_info, compute_units, "compute_units", 0, 1 << 24),
    U64(fdt_device_info, memory_bytes, "memory_bytes"),
    U64(fdt_device_info, l2_bytes, "l2_bytes"),
    TEXT(fdt_device_info, driver_version, "driver"),
    TEXT(fdt_device_info, compiler_version, "compiler"),
    INT(fdt_device_info, warp_size, "warp_size", 1, 1024),
    INT(fdt_device_info, max_threads_per_block, "max_threads_per_block", 1, 1 << 20),
    INT(fdt_device_info, max_shared_per_block, "max_shared_per_block", 0, 1 << 30),
    INT(fdt_device_info, block_barriers, "block_barriers", 0, 1),
    INT(fdt_device_info, l2_persist, "l2_persist", 0, 1),
};

json_t *fdt_wire_device_json(const fdt_device_info *d)
{
    json_t *obj = fields_json(json_object(), device_fields, COUNT(device_fields), d);
    json_t *grid = json_pack("[III]", (json_int_t)d->max_grid[0], (json_int_t)d->max_grid[1],
                             (json_int_t)d->max_grid[2]);
    if (obj && grid && json_object_set_new(obj, "max_grid", grid) == 0)
        return obj;
    json_decref(obj);
    return NULL;
}

int fdt_wire_device_parse(const json_t *j, fdt_device_info *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    if (parse_fields(j, device_fields, COUNT(device_fields), d, err, errlen) != 0)
        return -1;
    const json_t *grid = json_object_get(j, "max_grid");
    if (!json_is_array(grid) || json_array_size(grid) != 3) {
        snprintf(err, errlen, "'max_grid' must be an array of 3 integers");
        return -1;
    }
    for (size_t i = 0; i < 3; i++) {
        const json_t *g = json_array_get(grid, i);
        if (!json_is_integer(g) || json_integer_value(g) < 1 ||
            json_integer_value(g) > (json_int_t)UINT32_MAX) {
            snprintf(err, errlen, "'max_grid' must hold integers from 1 to %u", UINT32_MAX);
            return -1;
        }
        d->max_grid[i] = (unsigned)json_integer_value(g);
    }
    return 0;
}

/* ---- a device's balance ---- */

static const field balance_fields[] = {
    REAL(fdt_balance, copy_gbps, "copy_gbps", 0, 1e9),
    REAL(fdt_balance, l2_gbps, "l2_gbps", 0, 1e9),
    REAL(fdt_balance, copy_spread, "copy_spread", 0, 1e9),
    I64(fdt_balance, measured, "measured"),
};

json_t *fdt_wire_balance_json(const fdt_balance *b)
{
    return fields_json(json_object(), balance_fields, COUNT(balance_fields), b);
}

int fdt_wire_balance_parse(const json_t *j, fdt_balance *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    return parse_fields(j, balance_fields, COUNT(balance_fields), b, err, errlen);
}

/* ---- problems ---- */

/* A spec's stencil travels with its text, so that a worker knows it. */
json_t *fdt_wire_problem_json(const fdt_problem *p)
{
    const fdt_stencil *st = fdt_stencil_of(p);
    return json_pack("{s:s,s:s*,s:i,s:i,s:i,s:i,s:s,s:s,s:i,s:i}", "stencil", p->stencil,
                     "spec", st ? st->text : NULL, "nx", p->nx, "ny", p->ny, "nz", p->nz,
                     "radius", p->radius, "precision", fdt_precision_name(p->precision),
                     "cache", fdt_cache_mode_name(p->cache), "pitch", fdt_problem_pitch(p),
                     "offset", p->offset);
}

static const field problem_sides[] = {
    INT(fdt_problem, nx, "nx", 1, FDT_MAX_SIDE),
    INT(fdt_problem, ny, "ny", 1, FDT_MAX_SIDE),
    INT(fdt_problem, nz, "nz", 1, FDT_MAX_SIDE),
};
static const field problem_radius = INT(fdt_problem, radius, "radius", 1, FDT_MAX_RADIUS);
/* The layout: bounds wide enough for any, fdt_problem_check then holds it to the shape's. */
static const field problem_layout[] = {
    INT(fdt_problem, pitch, "pitch", 0, FDT_MAX_SIDE + FDT_PITCH_PAD_MAX),
    INT(fdt_problem, offset, "offset", 0, FDT_OFFSET_BYTES),
};
static const field problem_stencil = TEXT(fdt_problem, stencil, "stencil");

/* Makes the row of the spec a problem carries (its text), which must be the stencil the
 * problem names. 0, or -1 with err saying why. */
static int known_spec(const json_t *spec, const fdt_problem *p, char *err, size_t errlen)
{
    if (!json_is_string(spec))
        return fail(err, errlen, "'%s' must be a spec's JSON text", "spec");
    char why[256];
    const fdt_stencil *st =
        fdt_stencil_from_text(json_string_value(spec), json_string_length(spec), why, sizeof why);
    if (!st)
        return fail(err, errlen, "'spec': %s", why);
    if (strcmp(st->name, p->stencil) == 0)
        return 0;
    snprintf(err, errlen, "'spec' is the pattern of %s, not of %s", st->name, p->stencil);
    return -1;
}

/* stencil, radius, precision and cache may be left out: the default stencil, 1, double and
 * hot, as for a client's request. */
int fdt_wire_problem_parse(const json_t *j, fdt_problem *p, char *err, size_t errlen)
{
    *p = (fdt_problem){.radius = 1, .precision = FDT_DOUBLE};
    fdt_copy_text(p->stencil, sizeof p->stencil, fdt_stencil_default()->name);
    if (parse_fields(j, problem_sides, COUNT(problem_sides), p, err, errlen) != 0)
        return -1;
    if (json_object_get(j, "stencil") && parse_field(&problem_stencil, j, p, err, errlen) != 0)
        return -1;
    if (json_object_get(j, "spec") && known_spec(json_object_get(j, "spec"), p, err, errlen))
        return -1;
    if (json_object_get(j, "radius") && parse_field(&problem_radius, j, p, err, errlen) != 0)
        return -1;
    const json_t *prec = json_object_get(j, "precision");
    if (prec && (!json_is_string(prec) ||
                 fdt_precision_parse(json_string_value(prec), &p->precision) != 0)) {
        snprintf(err, errlen, "'precision' must be \"float\" or \"double\"");
        return -1;
    }
    const json_t *cache = json_object_get(j, "cache");
    if (cache && (!json_is_string(cache) ||
                  fdt_cache_mode_parse(json_string_value(cache), &p->cache) != 0)) {
        snprintf(err, errlen, "'cache' must be \"hot\", \"cold\", \"persist\" or \"auto\"");
        return -1;
    }
    for (size_t i = 0; i < COUNT(problem_layout); i++)
        if (json_object_get(j, problem_layout[i].name) &&
            parse_field(&problem_layout[i], j, p, err, errlen) != 0)
            return -1;
    fdt_problem_canonical_layout(p);
    const char *why = fdt_problem_check(p);
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    return 0;
}

/* ---- timing ---- */

static const field timing_fields[] = {
    INT(fdt_timing, samples, "samples", 1, 100000),
    REAL(fdt_timing, min_sample_ms, "min_sample_ms", 0, 60000),
    REAL(fdt_timing, timeout_ms, "timeout_ms", 1e-9, 86400000),
    REAL(fdt_timing, max_spread, "max_spread", 0, 1e6),
};

json_t *fdt_wire_timing_json(const fdt_timing *t)
{
    return fields_json(json_object(), timing_fields, COUNT(timing_fields), t);
}

int fdt_wire_timing_parse(const json_t *j, fdt_timing *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    return parse_fields(j, timing_fields, COUNT(timing_fields), t, err, errlen);
}

/* ---- statistics ---- */

/* fdt_stats and fdt_result_row name these members alike. */
#define STATS_FIELDS(s)                              \
    REAL(s, median_ms, "median_ms", 0, 1e12),        \
    REAL(s, min_ms, "min_ms", 0, 1e12),              \
    REAL(s, q1_ms, "q1_ms", 0, 1e12),                \
    REAL(s, q3_ms, "q3_ms", 0, 1e12),                \
    INT(s, samples, "samples", 0, 1 << 30),          \
    INT(s, reps, "reps", 0, 1 << 30)

static const field stats_fields[] = {STATS_FIELDS(fdt_stats)};

json_t *fdt_wire_stats_json(const fdt_stats *s)
{
    return fields_json(json_object(), stats_fields, COUNT(stats_fields), s);
}

int fdt_wire_stats_parse(const json_t *j, fdt_stats *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    return parse_fields(j, stats_fields, COUNT(stats_fields), s, err, errlen);
}

/* ---- results ---- */

static const field result_fields[] = {
    TEXT(fdt_result_row, variant, "variant"),
    TEXT(fdt_result_row, status, "status"),
    INT(fdt_result_row, leader, "leader", 0, 1),
    STATS_FIELDS(fdt_result_row),
    REAL(fdt_result_row, gbps, "gbps", 0, 1e12),
    REAL(fdt_result_row, compile_ms, "compile_ms", 0, 1e12),
    INT(fdt_result_row, vgprs, "vgprs", -1, 1 << 20),
    INT(fdt_result_row, sgprs, "sgprs", -1, 1 << 20),
    INT(fdt_result_row, scratch_bytes, "scratch_bytes", -1, 1 << 30),
    INT(fdt_result_row, shared_bytes, "shared_bytes", -1, 1 << 30),
    TEXT(fdt_result_row, message, "message"),
};

/* The statuses a result may carry: the engine's, and "crashed" (the worker died). */
static int known_status(const char *s)
{
    for (int st = FDT_OK; st <= FDT_ERROR; st++)
        if (strcmp(s, fdt_status_name((fdt_status)st)) == 0)
            return 1;
    return strcmp(s, "crashed") == 0;
}

json_t *fdt_wire_result_json(const fdt_result_row *r)
{
    return fields_json(json_object(), result_fields, COUNT(result_fields), r);
}

int fdt_wire_result_parse(const json_t *j, fdt_result_row *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (parse_fields(j, result_fields, COUNT(result_fields), r, err, errlen) != 0)
        return -1;
    if (!known_status(r->status)) {
        snprintf(err, errlen, "'status' must be a result status, not '%s'", r->status);
        return -1;
    }
    return 0;
}
