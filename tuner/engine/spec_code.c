/* spec_code.c - a spec's kernel macros; see spec_code.h. */
#include "engine/spec_code.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A field's z-window: the planes lo..hi of its own column (dx = dy = 0) that the taps
 * read; empty (lo > hi) where none does. Fields are numbered as the kernel's spec_i. */
typedef struct window {
    int lo, hi;
} window;

static void widen(window *w, int dz)
{
    w->lo = dz < w->lo ? dz : w->lo;
    w->hi = dz > w->hi ? dz : w->hi;
}

static size_t nfields(const fdt_spec *s)
{
    return s->ninputs + s->ncoefficients;
}

static void column_windows(const fdt_spec *s, window *w)
{
    for (size_t f = 0; f < nfields(s); f++)
        w[f] = (window){.lo = INT8_MAX, .hi = INT8_MIN}; /* offsets are int8_t */
    for (size_t o = 0; o < s->noutputs; o++)
        for (size_t i = 0; i < s->outputs[o].ntaps; i++) {
            const fdt_spec_tap *t = &s->outputs[o].taps[i];
            if (t->dx == 0 && t->dy == 0)
                widen(&w[t->input], t->dz);
            if (t->coefficient >= 0 && t->cdx == 0 && t->cdy == 0)
                widen(&w[s->ninputs + (size_t)t->coefficient], t->cdz);
        }
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

/* Field f at pos + dx + dy * line + dz * slice: from its z-window where w is given and the
 * read is in the column, else spec_if[...] with the zero offsets left out. */
static void print_read(FILE *out, size_t f, int dx, int dy, int dz, const window *w)
{
    if (w && dx == 0 && dy == 0) {
        fprintf(out, "spec_w%zu[%d]", f, dz - w[f].lo);
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

static void print_tap(FILE *out, const fdt_spec *s, const fdt_spec_tap *t, const window *w)
{
    fprintf(out, " \\\n        spec_acc += (real)%.17g", t->weight);
    if (t->constant >= 0)
        fprintf(out, " * spec_k%d", t->constant);
    if (t->coefficient >= 0) {
        fprintf(out, " * ");
        print_read(out, s->ninputs + (size_t)t->coefficient, t->cdx, t->cdy, t->cdz, w);
    }
    fprintf(out, " * ");
    print_read(out, (size_t)t->input, t->dx, t->dy, t->dz, w);
    fprintf(out, ";");
}

/* The macro `name`: every output at pos, its column reads from the z-windows w, or from
 * memory where w is NULL. */
static void print_point(FILE *out, const fdt_spec *s, const char *name, const window *w)
{
    fprintf(out, "#define %s(pos, line, slice) do {", name);
    for (size_t o = 0; o < s->noutputs; o++) {
        const fdt_spec_output *op = &s->outputs[o];
        fprintf(out, " \\\n    { \\\n        real spec_acc = 0;");
        for (size_t t = 0; t < op->ntaps; t++)
            print_tap(out, s, &op->taps[t], w);
        fprintf(out, " \\\n        store_f(&spec_o%zu[(pos)], spec_acc); \\\n    }", o);
    }
    fprintf(out, " \\\n} while (0)\n");
}

/* The z-windows' macros (spec_code.h): the windows, their first planes, each step's top
 * plane, and the shift down a plane. */
static void print_windows(FILE *out, const fdt_spec *s, const window *w)
{
    fprintf(out, "#define FDT_SPEC_WINDOW_DECL");
    for (size_t f = 0; f < nfields(s); f++)
        if (w[f].lo <= w[f].hi)
            fprintf(out, " real spec_w%zu[%d];", f, w[f].hi - w[f].lo + 1);
    fprintf(out, "\n#define FDT_SPEC_WINDOW_PRIME(pos, slice) do {");
    for (size_t f = 0; f < nfields(s); f++)
        for (int dz = w[f].lo; dz < w[f].hi; dz++)
            fprintf(out, " \\\n    spec_w%zu[%d] = spec_i%zu[(pos) + (%d) * (slice)];", f,
                    dz - w[f].lo, f, dz);
    fprintf(out, " \\\n} while (0)\n#define FDT_SPEC_WINDOW_TOP(pos, slice) do {");
    for (size_t f = 0; f < nfields(s); f++)
        if (w[f].lo <= w[f].hi)
            fprintf(out, " \\\n    spec_w%zu[%d] = spec_i%zu[(pos) + (%d) * (slice)];", f,
                    w[f].hi - w[f].lo, f, w[f].hi);
    fprintf(out, " \\\n} while (0)\n#define FDT_SPEC_WINDOW_SHIFT do {");
    for (size_t f = 0; f < nfields(s); f++)
        for (int q = 0; q < w[f].hi - w[f].lo; q++)
            fprintf(out, " \\\n    spec_w%zu[%d] = spec_w%zu[%d];", f, q, f, q + 1);
    fprintf(out, " \\\n} while (0)\n");
}

char *fdt_spec_code(const fdt_spec *spec)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (!out)
        return NULL;
    window w[FDT_SPEC_INPUTS_MAX + FDT_SPEC_COEFFICIENTS_MAX];
    column_windows(spec, w);
    fprintf(out, "/* generated from the stencil spec %s by tuner/engine/spec_code.c */\n",
            spec->name);
    print_args(out, spec);
    print_point(out, spec, "FDT_SPEC_POINT", NULL);
    print_windows(out, spec, w);
    print_point(out, spec, "FDT_SPEC_WINDOW_POINT", w);
    if (fclose(out) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
