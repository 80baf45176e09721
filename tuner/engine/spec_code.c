/* spec_code.c - a spec's kernel macros; see spec_code.h. */
#include "engine/spec_code.h"

#include <stdio.h>
#include <stdlib.h>

/* Where the point's reads come from: memory alone; each field's column from its z-window
 * (the rest from memory); the column from the z-window and the rest from the field's
 * tiles; or, for a vector of points (svec), the rows loaded for it. */
typedef enum source { FROM_MEMORY, FROM_WINDOWS, FROM_TILES, FROM_ROWS } source;

static size_t nfields(const fdt_spec *s)
{
    return s->ninputs + s->ncoefficients;
}

/* The signature: outputs, fields read (inputs, then coefficient fields), shape, row pitch,
 * constants. */
static void print_args(FILE *out, const fdt_spec *s)
{
    fprintf(out, "#define FDT_SPEC_ARGS");
    for (size_t o = 0; o < s->noutputs; o++)
        fprintf(out, " real *__restrict__ spec_o%zu,", o);
    for (size_t i = 0; i < nfields(s); i++)
        fprintf(out, " const real *__restrict__ spec_i%zu,", i);
    fprintf(out, " int nx, int ny, int nz, int pitch");
    for (size_t k = 0; k < s->nconstants; k++)
        fprintf(out, ", real spec_k%zu", k);
    fprintf(out, "\n");
}

/* ---- vectors in x (svec) ----
 * A vector point computes the LANES points i0 .. i0 + LANES - 1 of a row at once. Every row
 * its taps read (a field at one dy, dz) is loaded once, as the aligned vectors that cover
 * the points it reaches, xlo .. LANES - 1 + xhi about i0 (svec.hip's spec_row), into
 * real spec_rF_Y_Z[LANES + xhi - xlo]; a tap at dx of lane e is then element e + dx - xlo.
 * The column's own vector of a plane the z-window holds comes from the window. */

typedef struct vec_row {
    int f, dy, dz, xlo, xhi;
} vec_row;

typedef struct vec_rows {
    size_t n;
    vec_row r[FDT_SPEC_OUTPUTS_MAX * FDT_SPEC_TAPS_MAX * 2];
} vec_rows;

/* The index of field f's row at (dy, dz), or rows->n when there is none yet. */
static size_t row_index(const vec_rows *rows, int f, int dy, int dz)
{
    size_t i = 0;
    while (i < rows->n && !(rows->r[i].f == f && rows->r[i].dy == dy && rows->r[i].dz == dz))
        i++;
    return i;
}

static void add_row(vec_rows *rows, int f, int dx, int dy, int dz)
{
    vec_row *r = &rows->r[row_index(rows, f, dy, dz)];
    if (r == &rows->r[rows->n]) {
        rows->n++;
        *r = (vec_row){f, dy, dz, dx, dx};
    }
    r->xlo = dx < r->xlo ? dx : r->xlo;
    r->xhi = dx > r->xhi ? dx : r->xhi;
}

static void collect_rows(const fdt_spec *s, vec_rows *rows)
{
    rows->n = 0;
    for (size_t o = 0; o < s->noutputs; o++)
        for (size_t i = 0; i < s->outputs[o].ntaps; i++) {
            const fdt_spec_tap *t = &s->outputs[o].taps[i];
            add_row(rows, t->input, t->dx, t->dy, t->dz);
            if (t->coefficient >= 0)
                add_row(rows, (int)s->ninputs + t->coefficient, t->cdx, t->cdy, t->cdz);
        }
}

/* Offsets are at most FDT_SPEC_OFFSET_MAX: shifted by it, they name a row. */
static void print_row_name(FILE *out, const vec_row *r)
{
    fprintf(out, "spec_r%d_%d_%d", r->f, r->dy + FDT_SPEC_OFFSET_MAX, r->dz + FDT_SPEC_OFFSET_MAX);
}

static void print_row_load(FILE *out, const fdt_spec *s, const vec_row *r)
{
    const fdt_spec_hold *h = &s->hold[r->f];
    fprintf(out, " \\\n    real ");
    print_row_name(out, r);
    const int in_window = r->dy == 0 && r->dz >= h->lo && r->dz <= h->hi;
    fprintf(out, "[LANES + %d]; spec_row<%d, %d, aligned, %s>(spec_i%d, (pos)", r->xhi - r->xlo,
            r->xlo, r->xhi, in_window ? "true" : "false", r->f);
    if (r->dy)
        fprintf(out, " + (%d) * (line)", r->dy);
    if (r->dz)
        fprintf(out, " + (%d) * (slice)", r->dz);
    fprintf(out, ", i0, nx, ");
    if (in_window)
        fprintf(out, "spec_v%d[%d], ", r->f, r->dz - h->lo);
    else
        fprintf(out, "lanes{}, ");
    print_row_name(out, r);
    fprintf(out, ");");
}

/* Field f at (dx, dy, dz) of lane spec_e, from its row. */
static void print_row_read(FILE *out, const vec_rows *rows, int f, int dx, int dy, int dz)
{
    const vec_row *r = &rows->r[row_index(rows, f, dy, dz)];
    print_row_name(out, r);
    fprintf(out, "[spec_e + %d]", dx - r->xlo);
}

/* Where reads come from, and for FROM_ROWS the rows. */
typedef struct reads {
    source from;
    const vec_rows *rows;
} reads;

/* Field f at pos + dx + dy * line + dz * slice: from its row, its z-window or its tiles as
 * r says, else spec_if[...] with the zero offsets left out. A tile's slot for plane dz at
 * step m of the walk is (m + dz - zlo) mod its depth (stile.hip). */
static void print_read(FILE *out, const fdt_spec *s, size_t f, int dx, int dy, int dz,
                       const reads *r)
{
    const fdt_spec_hold *h = &s->hold[f];
    const source from = r->from;
    if (from == FROM_ROWS) {
        print_row_read(out, r->rows, (int)f, dx, dy, dz);
        return;
    }
    if (from != FROM_MEMORY && dx == 0 && dy == 0) {
        fprintf(out, "spec_w%zu[%d]", f, dz - h->lo);
        return;
    }
    if (from == FROM_TILES) {
        fprintf(out, "spec_t%zu[((m) + %d) %% %d][(threadIdx.y + %d) * (FDT_BX + %d) + "
                "threadIdx.x + %d]", f, dz - h->zlo, h->zhi - h->zlo + 1, h->ry + dy,
                2 * h->rx, h->rx + dx);
        return;
    }
    fprintf(out, "spec_i%zu[(pos)", f);
    if (dx)
        fprintf(out, " + (%d)", dx);
    if (dy)
        fprintf(out, " + (%d) * (line)", dy);
    if (dz)
        fprintf(out, " + (%d) * (slice)", dz);
    fprintf(out, "]");
}

/* A tap added to the sum named sum (its line's indent included), its reads as r says. */
static void print_tap(FILE *out, const fdt_spec *s, const fdt_spec_tap *t, const reads *r,
                      const char *sum)
{
    fprintf(out, " \\\n%s += (real)%.17g", sum, t->weight);
    if (t->constant >= 0)
        fprintf(out, " * spec_k%d", t->constant);
    if (t->coefficient >= 0) {
        fprintf(out, " * ");
        print_read(out, s, s->ninputs + (size_t)t->coefficient, t->cdx, t->cdy, t->cdz, r);
    }
    fprintf(out, " * ");
    print_read(out, s, (size_t)t->input, t->dx, t->dy, t->dz, r);
    fprintf(out, ";");
}

/* The macro `head`: every output at pos, each read where from says. */
static void print_point(FILE *out, const fdt_spec *s, const char *head, source from)
{
    const reads r = {from, NULL};
    fprintf(out, "#define %s do {", head);
    for (size_t o = 0; o < s->noutputs; o++) {
        const fdt_spec_output *op = &s->outputs[o];
        fprintf(out, " \\\n    { \\\n        real spec_acc = 0;");
        for (size_t t = 0; t < op->ntaps; t++)
            print_tap(out, s, &op->taps[t], &r, "        spec_acc");
        fprintf(out, " \\\n        store_f(&spec_o%zu[(pos)], spec_acc); \\\n    }", o);
    }
    fprintf(out, " \\\n} while (0)\n");
}

/* A z-window holds one value of a field's column a plane (szwin, stile), or one vector of
 * LANES consecutive points in x (svec): the names, types and loads of either. */
typedef struct window_kind {
    const char *macro, *name, *type, *aligned; /* aligned: the macros' extra parameter */
} window_kind;

static const window_kind point_window = {"FDT_SPEC_WINDOW", "spec_w", "real", ""};
static const window_kind vector_window = {"FDT_SPEC_VEC_WINDOW", "spec_v", "lanes", ", aligned"};

/* Plane dz of field f's column into slot q of its window. */
static void print_window_load(FILE *out, const window_kind *k, size_t f, int q, int dz)
{
    if (k == &vector_window)
        fprintf(out, " \\\n    %s%zu[%d] = load_lanes<aligned>(spec_i%zu, (pos) + (%d) * (slice), "
                "spec_in_row);", k->name, f, q, f, dz);
    else
        fprintf(out, " \\\n    %s%zu[%d] = spec_i%zu[(pos) + (%d) * (slice)];", k->name, f, q, f,
                dz);
}

/* The z-windows' macros (spec_code.h): the windows, their first planes, each step's top
 * plane, and the shift down a plane. */
static void print_windows(FILE *out, const fdt_spec *s, const window_kind *k)
{
    fprintf(out, "#define %s_DECL", k->macro);
    for (size_t f = 0; f < nfields(s); f++)
        if (fdt_spec_holds_window(&s->hold[f]))
            fprintf(out, " %s %s%zu[%d];", k->type, k->name, f, s->hold[f].hi - s->hold[f].lo + 1);
    fprintf(out, "\n#define %s_PRIME(pos, slice%s) do {", k->macro, k->aligned);
    for (size_t f = 0; f < nfields(s); f++)
        for (int dz = s->hold[f].lo; dz < s->hold[f].hi; dz++)
            print_window_load(out, k, f, dz - s->hold[f].lo, dz);
    fprintf(out, " \\\n} while (0)\n#define %s_TOP(pos, slice%s) do {", k->macro, k->aligned);
    for (size_t f = 0; f < nfields(s); f++)
        if (fdt_spec_holds_window(&s->hold[f]))
            print_window_load(out, k, f, s->hold[f].hi - s->hold[f].lo, s->hold[f].hi);
    fprintf(out, " \\\n} while (0)\n#define %s_SHIFT do {", k->macro);
    for (size_t f = 0; f < nfields(s); f++)
        for (int q = 0; q < s->hold[f].hi - s->hold[f].lo; q++)
            fprintf(out, " \\\n    %s%zu[%d] = %s%zu[%d];", k->name, f, q, k->name, f, q + 1);
    fprintf(out, " \\\n} while (0)\n");
}

/* FDT_SPEC_VEC_POINT(pos, line, slice, aligned): every output at the LANES points of the
 * vector at pos (first point i0), stored by store_lanes. */
static void print_vec_point(FILE *out, const fdt_spec *s, const vec_rows *rows)
{
    const reads r = {FROM_ROWS, rows};
    fprintf(out, "#define FDT_SPEC_VEC_POINT(pos, line, slice, aligned) do {");
    for (size_t i = 0; i < rows->n; i++)
        print_row_load(out, s, &rows->r[i]);
    for (size_t o = 0; o < s->noutputs; o++) {
        const fdt_spec_output *op = &s->outputs[o];
        fprintf(out, " \\\n    { \\\n        lanes spec_acc; \\\n        _Pragma(\"unroll\") "
                "for (int spec_e = 0; spec_e < LANES; spec_e++) { \\\n            real spec_sum = 0;");
        for (size_t i = 0; i < op->ntaps; i++)
            print_tap(out, s, &op->taps[i], &r, "            spec_sum");
        fprintf(out, " \\\n            spec_acc.e[spec_e] = spec_sum; \\\n        } \\\n"
                "        store_lanes(&spec_o%zu[(pos)], spec_acc, i0, nx, (aligned) && spec_whole); "
                "\\\n    }", o);
    }
    fprintf(out, " \\\n} while (0)\n");
}

/* Field f's plane dz into its tile's slot: spec_tile_load (stile.hip) with its halo. */
static void print_tile_load(FILE *out, size_t f, const fdt_spec_hold *h, const char *slot,
                            int dz)
{
    fprintf(out, " \\\n    spec_tile_load<%d, %d>(spec_t%zu[%s], spec_i%zu, (corner) + (%d) * "
            "(slice), i0, j0, nx, ny, line);", h->rx, h->ry, f, slot, f, dz);
}

/* The tiles' macros (spec_code.h): the rings of tiles, their first planes and each step's
 * top plane. */
static void print_tiles(FILE *out, const fdt_spec *s)
{
    char slot[48];
    fprintf(out, "#define FDT_SPEC_TILE_DECL");
    for (size_t f = 0; f < nfields(s); f++) {
        const fdt_spec_hold *h = &s->hold[f];
        if (fdt_spec_holds_tiles(h))
            fprintf(out, " __shared__ real spec_t%zu[%d][(FDT_BY + %d) * (FDT_BX + %d)];", f,
                    h->zhi - h->zlo + 1, 2 * h->ry, 2 * h->rx);
    }
    fprintf(out, "\n#define FDT_SPEC_TILE_PRIME(corner, i0, j0, line, slice) do {");
    for (size_t f = 0; f < nfields(s); f++)
        for (int dz = s->hold[f].zlo; dz < s->hold[f].zhi; dz++) {
            snprintf(slot, sizeof slot, "%d", dz - s->hold[f].zlo);
            print_tile_load(out, f, &s->hold[f], slot, dz);
        }
    fprintf(out, " \\\n} while (0)\n");
    fprintf(out, "#define FDT_SPEC_TILE_TOP(m, corner, i0, j0, line, slice) do {");
    for (size_t f = 0; f < nfields(s); f++) {
        const fdt_spec_hold *h = &s->hold[f];
        if (!fdt_spec_holds_tiles(h))
            continue;
        snprintf(slot, sizeof slot, "((m) + %d) %% %d", h->zhi - h->zlo, h->zhi - h->zlo + 1);
        print_tile_load(out, f, h, slot, h->zhi);
    }
    fprintf(out, " \\\n} while (0)\n");
}

char *fdt_spec_code(const fdt_spec *spec)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (!out)
        return NULL;
    fprintf(out, "/* generated from the stencil spec %s by tuner/engine/spec_code.c */\n",
            spec->name);
    print_args(out, spec);
    print_point(out, spec, "FDT_SPEC_POINT(pos, line, slice)", FROM_MEMORY);
    print_windows(out, spec, &point_window);
    print_point(out, spec, "FDT_SPEC_WINDOW_POINT(pos, line, slice)", FROM_WINDOWS);
    print_tiles(out, spec);
    print_point(out, spec, "FDT_SPEC_TILE_POINT(m, pos, line, slice)", FROM_TILES);
    print_windows(out, spec, &vector_window);
    vec_rows *rows = malloc(sizeof *rows); /* some 40 KiB */
    const int have_rows = rows != NULL;
    if (have_rows) {
        collect_rows(spec, rows);
        print_vec_point(out, spec, rows);
    }
    free(rows);
    if (fclose(out) != 0 || !have_rows) {
        free(text);
        return NULL;
    }
    return text;
}
