/* spec_code.c - a spec's kernel macros; see spec_code.h. */
#include "engine/spec_code.h"

#include <stdio.h>
#include <stdlib.h>

/* Where the point's reads come from: memory alone; each field's column from its z-window
 * (the rest from memory); or the column from the z-window and the rest from the field's
 * tiles. */
typedef enum source { FROM_MEMORY, FROM_WINDOWS, FROM_TILES } source;

static size_t nfields(const fdt_spec *s)
{
    return s->ninputs + s->ncoefficients;
}

/* The signature: outputs, fields read (inputs, then coefficient fields), shape, constants. */
static void print_args(FILE *out, const fdt_spec *s)
{
    fprintf(out, "#define FDT_SPEC_ARGS");
    for (size_t o = 0; o < s->noutputs; o++)
        fprintf(out, " real *__restrict__ spec_o%zu,", o);
    for (size_t i = 0; i < nfields(s); i++)
        fprintf(out, " const real *__restrict__ spec_i%zu,", i);
    fprintf(out, " int nx, int ny, int nz");
    for (size_t k = 0; k < s->nconstants; k++)
        fprintf(out, ", real spec_k%zu", k);
    fprintf(out, "\n");
}

/* Field f at pos + dx + dy * line + dz * slice: from its z-window or its tiles as from
 * says, else spec_if[...] with the zero offsets left out. A tile's slot for plane dz at step
 * m of the walk is (m + dz - zlo) mod its depth (stile.hip). */
static void print_read(FILE *out, const fdt_spec *s, size_t f, int dx, int dy, int dz,
                       source from)
{
    const fdt_spec_hold *h = &s->hold[f];
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

static void print_tap(FILE *out, const fdt_spec *s, const fdt_spec_tap *t, source from)
{
    fprintf(out, " \\\n        spec_acc += (real)%.17g", t->weight);
    if (t->constant >= 0)
        fprintf(out, " * spec_k%d", t->constant);
    if (t->coefficient >= 0) {
        fprintf(out, " * ");
        print_read(out, s, s->ninputs + (size_t)t->coefficient, t->cdx, t->cdy, t->cdz, from);
    }
    fprintf(out, " * ");
    print_read(out, s, (size_t)t->input, t->dx, t->dy, t->dz, from);
    fprintf(out, ";");
}

/* The macro `head`: every output at pos, each read where from says. */
static void print_point(FILE *out, const fdt_spec *s, const char *head, source from)
{
    fprintf(out, "#define %s do {", head);
    for (size_t o = 0; o < s->noutputs; o++) {
        const fdt_spec_output *op = &s->outputs[o];
        fprintf(out, " \\\n    { \\\n        real spec_acc = 0;");
        for (size_t t = 0; t < op->ntaps; t++)
            print_tap(out, s, &op->taps[t], from);
        fprintf(out, " \\\n        store_f(&spec_o%zu[(pos)], spec_acc); \\\n    }", o);
    }
    fprintf(out, " \\\n} while (0)\n");
}

/* The z-windows' macros (spec_code.h): the windows, their first planes, each step's top
 * plane, and the shift down a plane. */
static void print_windows(FILE *out, const fdt_spec *s)
{
    fprintf(out, "#define FDT_SPEC_WINDOW_DECL");
    for (size_t f = 0; f < nfields(s); f++)
        if (fdt_spec_holds_window(&s->hold[f]))
            fprintf(out, " real spec_w%zu[%d];", f, s->hold[f].hi - s->hold[f].lo + 1);
    fprintf(out, "\n#define FDT_SPEC_WINDOW_PRIME(pos, slice) do {");
    for (size_t f = 0; f < nfields(s); f++)
        for (int dz = s->hold[f].lo; dz < s->hold[f].hi; dz++)
            fprintf(out, " \\\n    spec_w%zu[%d] = spec_i%zu[(pos) + (%d) * (slice)];", f,
                    dz - s->hold[f].lo, f, dz);
    fprintf(out, " \\\n} while (0)\n#define FDT_SPEC_WINDOW_TOP(pos, slice) do {");
    for (size_t f = 0; f < nfields(s); f++)
        if (fdt_spec_holds_window(&s->hold[f]))
            fprintf(out, " \\\n    spec_w%zu[%d] = spec_i%zu[(pos) + (%d) * (slice)];", f,
                    s->hold[f].hi - s->hold[f].lo, f, s->hold[f].hi);
    fprintf(out, " \\\n} while (0)\n#define FDT_SPEC_WINDOW_SHIFT do {");
    for (size_t f = 0; f < nfields(s); f++)
        for (int q = 0; q < s->hold[f].hi - s->hold[f].lo; q++)
            fprintf(out, " \\\n    spec_w%zu[%d] = spec_w%zu[%d];", f, q, f, q + 1);
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
    print_windows(out, spec);
    print_point(out, spec, "FDT_SPEC_WINDOW_POINT(pos, line, slice)", FROM_WINDOWS);
    print_tiles(out, spec);
    print_point(out, spec, "FDT_SPEC_TILE_POINT(m, pos, line, slice)", FROM_TILES);
    if (fclose(out) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
