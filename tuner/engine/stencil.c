/* stencil.c - the stencils: the built-in Laplacian of radius R, and the rows made from
 * users' specs; see stencil.h. */
#include "engine/stencil.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/spec_code.h"
#include "engine/variant.h"

/* A built-in's own functions, as stencil.h's wrappers describe them. */
struct fdt_stencil_fns {
    void (*coefficients)(const double h[3], double *out);
    double (*ideal_bytes)(const fdt_problem *p);
    double (*point)(const fdt_problem *p, const void *const *in, const double *coeffs,
                    int output, size_t at, double *rounding);
};

/* Weights w[R][r] of the central second difference of order 2R (Fornberg's tables), the
 * same as kernels_src/common.h's fdt_weight:
 * d2u/dx2 ~ (w[0] u_i + sum_r w[r] (u_{i-r} + u_{i+r})) / hx^2. */
static const double laplacian_weights[5][5] = {
    {0},
    {-2.0, 1.0},
    {-5.0 / 2, 4.0 / 3, -1.0 / 12},
    {-49.0 / 18, 3.0 / 2, -3.0 / 20, 1.0 / 90},
    {-205.0 / 72, 8.0 / 5, -1.0 / 5, 8.0 / 315, -1.0 / 560},
};

static void laplacian_coefficients(const double h[3], double *out)
{
    for (int d = 0; d < 3; d++)
        out[d] = 1.0 / (h[d] * h[d]);
}

/* Each point read once (the interior and the six star arms of depth R) plus each interior
 * point written once: the seeds' formula for R = 1, generalized. */
static double laplacian_ideal_bytes(const fdt_problem *p)
{
    const double r2 = 2.0 * p->radius;
    const double ix = p->nx - r2, iy = p->ny - r2, iz = p->nz - r2;
    const double arms = r2 * (iy * iz + ix * iz + ix * iy);
    const double interior = ix * iy * iz;
    return (interior + arms + interior) * (double)fdt_real_size(p->precision);
}

static double load(const void *u, fdt_precision prec, size_t i)
{
    return prec == FDT_FLOAT ? ((const float *)u)[i] : ((const double *)u)[i];
}

/* The 6R + 1 taps: the centre's weight times cx + cy + cz, and each arm's. */
static double laplacian_point(const fdt_problem *p, const void *const *in, const double *c,
                              int output, size_t at, double *rounding)
{
    (void)output; /* one: f */
    const void *u = in[0];
    const int R = p->radius;
    const double *w = laplacian_weights[R];
    const ptrdiff_t line = fdt_problem_pitch(p), step[3] = {1, line, line * p->ny};
    const double centre = w[0] * (c[0] + c[1] + c[2]) * load(u, p->precision, at);
    double acc = centre, magnitude = fabs(centre);
    for (int r = 1; r <= R; r++)
        for (int axis = 0; axis < 3; axis++)
            for (int side = -1; side <= 1; side += 2) {
                const double tap = w[r] * c[axis] *
                                   load(u, p->precision, (size_t)((ptrdiff_t)at + side * r * step[axis]));
                acc += tap;
                magnitude += fabs(tap);
            }
    if (rounding)
        *rounding = fdt_rounding_bound(6 * (size_t)R + 1, magnitude);
    return acc;
}

static const fdt_stencil_fns laplacian_fns = {
    .coefficients = laplacian_coefficients, .ideal_bytes = laplacian_ideal_bytes,
    .point = laplacian_point};

static const fdt_stencil built_in[] = {
    {.name = "laplacian", .entry = "fdt_laplacian", .kernel1 = "naive", .min_radius = 1,
     .max_radius = FDT_MAX_RADIUS, .outputs = 1, .inputs = 1, .ncoeffs = 3,
     .fns = &laplacian_fns},
};
#define NBUILT_IN (sizeof built_in / sizeof built_in[0])

static const char *names[NBUILT_IN + 1];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void names_fill(void)
{
    for (size_t i = 0; i < NBUILT_IN; i++)
        names[i] = built_in[i].name;
}

/* The most families a spec is served by (those with fdt_family_serves_specs). */
#define SPEC_FAMILIES_MAX 8

/* The specs' rows, each with its own copy of the spec, its name and the source of every
 * family that serves it (its macros, then the family's source), made with the row: a job
 * compiles hundreds of variants of a few of them. Only ever added to. */
typedef struct spec_row {
    fdt_stencil row;
    fdt_spec spec;
    char *text;
    char name[FDT_STENCIL_NAME_MAX];
    const fdt_family *families[SPEC_FAMILIES_MAX];
    char *sources[SPEC_FAMILIES_MAX];
} spec_row;

static spec_row *spec_rows[FDT_STENCIL_SPECS_MAX];
static size_t nspec_rows;
static pthread_mutex_t spec_lock = PTHREAD_MUTEX_INITIALIZER;

static const fdt_stencil *spec_find_locked(const char *name)
{
    for (size_t i = 0; i < nspec_rows; i++)
        if (strcmp(spec_rows[i]->name, name) == 0)
            return &spec_rows[i]->row;
    return NULL;
}

const fdt_stencil *fdt_stencil_find(const char *name)
{
    for (size_t i = 0; i < NBUILT_IN; i++)
        if (strcmp(built_in[i].name, name) == 0)
            return &built_in[i];
    pthread_mutex_lock(&spec_lock);
    const fdt_stencil *st = spec_find_locked(name);
    pthread_mutex_unlock(&spec_lock);
    return st;
}

const fdt_stencil *fdt_stencil_of(const fdt_problem *p)
{
    return fdt_stencil_find(p->stencil);
}

const fdt_stencil *fdt_stencil_default(void)
{
    return &built_in[0];
}

const char *const *fdt_stencil_names(void)
{
    pthread_once(&names_once, names_fill);
    return names;
}

static void spec_row_free(spec_row *r, char *code)
{
    for (int i = 0; r && i < SPEC_FAMILIES_MAX; i++)
        free(r->sources[i]);
    if (r)
        free(r->text);
    free(r);
    free(code);
}

/* The sources of the spec families, code before each; -1 when out of memory. */
static int spec_row_sources(spec_row *r, const char *code)
{
    int n = 0;
    for (const fdt_family *const *f = fdt_families(); *f && n < SPEC_FAMILIES_MAX; f++) {
        if (!fdt_family_serves_specs(*f))
            continue;
        r->families[n] = *f;
        if (asprintf(&r->sources[n++], "%s%s", code, fdt_family_source(*f)) < 0) {
            r->sources[n - 1] = NULL;
            return -1;
        }
    }
    return 0;
}

/* A new row for spec (parsed from text, len bytes), named name; NULL when out of memory. */
static spec_row *spec_row_make(const fdt_spec *spec, const char *text, size_t len,
                               const char *name)
{
    spec_row *r = calloc(1, sizeof *r);
    char *code = fdt_spec_code(spec);
    if (r)
        r->text = strndup(text, len);
    if (!r || !code || !r->text || spec_row_sources(r, code) != 0) {
        spec_row_free(r, code);
        return NULL;
    }
    r->spec = *spec;
    fdt_copy_text(r->name, sizeof r->name, name);
    r->row = (fdt_stencil){.name = r->name, .entry = "fdt_spec", .kernel1 = "snaive",
                           .min_radius = spec->radius, .max_radius = spec->radius,
                           .outputs = (int)spec->noutputs,
                           .inputs = (int)(spec->ninputs + spec->ncoefficients),
                           .ncoeffs = spec->nconstants, .code = code, .spec = &r->spec,
                           .text = r->text};
    return r;
}

/* The row of spec, parsed from text: found, made, or NULL with err saying why. */
static const fdt_stencil *from_spec(const fdt_spec *spec, const char *text, size_t len,
                                    char *err, size_t errlen)
{
    if (spec->radius < 1 || spec->radius > FDT_MAX_RADIUS) {
        snprintf(err, errlen, "spec %s reaches %d points: the kernel families serve a reach "
                 "of 1 to %d", spec->name, spec->radius, FDT_MAX_RADIUS);
        return NULL;
    }
    char hash[17], name[FDT_STENCIL_NAME_MAX];
    fdt_spec_hash(spec, hash);
    snprintf(name, sizeof name, "spec-%s", hash);
    pthread_mutex_lock(&spec_lock);
    const fdt_stencil *st = spec_find_locked(name);
    if (!st && nspec_rows == FDT_STENCIL_SPECS_MAX)
        snprintf(err, errlen, "this process holds %d specs already, the most it takes",
                 FDT_STENCIL_SPECS_MAX);
    else if (!st && (spec_rows[nspec_rows] = spec_row_make(spec, text, len, name)) != NULL)
        st = &spec_rows[nspec_rows++]->row;
    else if (!st)
        snprintf(err, errlen, "out of memory for spec %s", spec->name);
    pthread_mutex_unlock(&spec_lock);
    return st;
}

const fdt_stencil *fdt_stencil_from_text(const char *text, size_t len, char *err,
                                         size_t errlen)
{
    fdt_spec *spec = malloc(sizeof *spec); /* 17 KiB: kept off the callers' stacks */
    if (!spec) {
        snprintf(err, errlen, "out of memory for a spec");
        return NULL;
    }
    const fdt_stencil *st = fdt_spec_parse(text, len, spec, err, errlen) == 0
                                ? from_spec(spec, text, len, err, errlen)
                                : NULL;
    free(spec);
    return st;
}

const char *fdt_stencil_source(const fdt_stencil *st, const fdt_family *f)
{
    if (!st->spec)
        return fdt_family_source(f);
    const spec_row *r = (const spec_row *)st; /* a spec's row is its spec_row's first member */
    for (int i = 0; i < SPEC_FAMILIES_MAX && r->families[i]; i++)
        if (r->families[i] == f)
            return r->sources[i];
    return fdt_family_source(f); /* a family that does not serve specs: compiles no spec */
}

void fdt_stencil_coefficients(const fdt_stencil *st, const double h[3], double *out)
{
    if (st->fns) {
        st->fns->coefficients(h, out);
        return;
    }
    for (size_t k = 0; k < st->ncoeffs; k++)
        out[k] = 0.7 + 0.2 * (double)(k % 4); /* distinct, so that swapped constants show */
}

double fdt_stencil_ideal_bytes(const fdt_stencil *st, const fdt_problem *p)
{
    return st->fns ? st->fns->ideal_bytes(p)
                   : fdt_spec_ideal_bytes(st->spec, p->nx, p->ny, p->nz,
                                          fdt_real_size(p->precision));
}

double fdt_stencil_point(const fdt_stencil *st, const fdt_problem *p, const void *const *in,
                         const double *coeffs, int output, size_t at, double *rounding)
{
    return st->fns ? st->fns->point(p, in, coeffs, output, at, rounding)
                   : fdt_spec_point(st->spec, (size_t)output, in, coeffs, fdt_problem_pitch(p),
                                    p->ny, p->precision, at, rounding);
}
