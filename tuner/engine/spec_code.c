/* spec_code.c - a spec's kernel macros; see spec_code.h. */
#include "engine/spec_code.h"

#include <stdio.h>
#include <stdlib.h>

/* The signature: outputs, fields read (inputs, then coefficient fields), shape, constants. */
static void print_args(FILE *out, const fdt_spec *s)
{
    fprintf(out, "#define FDT_SPEC_ARGS");
    for (size_t o = 0; o < s->noutputs; o++)
        fprintf(out, " real *__restrict__ spec_o%zu,", o);
    for (size_t i = 0; i < s->ninputs + s->ncoefficients; i++)
        fprintf(out, " const real *__restrict__ spec_i%zu,", i);
    fprintf(out, " int nx, int ny, int nz");
    for (size_t k = 0; k < s->nconstants; k++)
        fprintf(out, ", real spec_k%zu", k);
    fprintf(out, "\n");
}

/* grid[pos + dx + dy * line + dz * slice], the zero offsets left out. */
static void print_read(FILE *out, const char *grid, int dx, int dy, int dz)
{
    fprintf(out, "%s[(pos)", grid);
    if (dx)
        fprintf(out, " + (%d)", dx);
    if (dy)
        fprintf(out, " + (%d) * (line)", dy);
    if (dz)
        fprintf(out, " + (%d) * (slice)", dz);
    fprintf(out, "]");
}

static void print_tap(FILE *out, const fdt_spec *s, const fdt_spec_tap *t)
{
    char grid[16];
    fprintf(out, " \\\n        spec_acc += (real)%.17g", t->weight);
    if (t->constant >= 0)
        fprintf(out, " * spec_k%d", t->constant);
    if (t->coefficient >= 0) {
        snprintf(grid, sizeof grid, "spec_i%zu", s->ninputs + (size_t)t->coefficient);
        fprintf(out, " * ");
        print_read(out, grid, t->cdx, t->cdy, t->cdz);
    }
    snprintf(grid, sizeof grid, "spec_i%d", t->input);
    fprintf(out, " * ");
    print_read(out, grid, t->dx, t->dy, t->dz);
    fprintf(out, ";");
}

static void print_point(FILE *out, const fdt_spec *s)
{
    fprintf(out, "#define FDT_SPEC_POINT(pos, line, slice) do {");
    for (size_t o = 0; o < s->noutputs; o++) {
        const fdt_spec_output *op = &s->outputs[o];
        fprintf(out, " \\\n    { \\\n        real spec_acc = 0;");
        for (size_t t = 0; t < op->ntaps; t++)
            print_tap(out, s, &op->taps[t]);
        fprintf(out, " \\\n        store_f(&spec_o%zu[(pos)], spec_acc); \\\n    }", o);
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
    print_point(out, spec);
    if (fclose(out) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
