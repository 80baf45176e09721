/* stencil.c - the stencils' table and the built-in Laplacian of radius R; see stencil.h. */
#include "engine/stencil.h"

#include <pthread.h>
#include <string.h>

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

static double laplacian_point(const fdt_problem *p, const void *const *in, const double *c,
                              int output, size_t at)
{
    (void)output; /* one: f */
    const void *u = in[0];
    const int R = p->radius;
    const double *w = laplacian_weights[R];
    const size_t line = (size_t)p->nx, slice = (size_t)p->nx * p->ny;
    double acc = w[0] * (c[0] + c[1] + c[2]) * load(u, p->precision, at);
    for (int r = 1; r <= R; r++)
        acc += w[r] * (c[0] * (load(u, p->precision, at - r) + load(u, p->precision, at + r))
                     + c[1] * (load(u, p->precision, at - r * line)
                               + load(u, p->precision, at + r * line))
                     + c[2] * (load(u, p->precision, at - r * slice)
                               + load(u, p->precision, at + r * slice)));
    return acc;
}

static const fdt_stencil stencils[] = {
    {.name = "laplacian", .entry = "fdt_laplacian", .max_radius = 4, .outputs = 1, .inputs = 1,
     .ncoeffs = 3, .coefficients = laplacian_coefficients,
     .ideal_bytes = laplacian_ideal_bytes, .point = laplacian_point},
};
#define NSTENCILS (sizeof stencils / sizeof stencils[0])

static const char *names[NSTENCILS + 1];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void names_fill(void)
{
    for (size_t i = 0; i < NSTENCILS; i++)
        names[i] = stencils[i].name;
}

const fdt_stencil *fdt_stencil_find(const char *name)
{
    for (size_t i = 0; i < NSTENCILS; i++)
        if (strcmp(stencils[i].name, name) == 0)
            return &stencils[i];
    return NULL;
}

const fdt_stencil *fdt_stencil_of(const fdt_problem *p)
{
    return fdt_stencil_find(p->stencil);
}

const fdt_stencil *fdt_stencil_default(void)
{
    return &stencils[0];
}

const char *const *fdt_stencil_names(void)
{
    pthread_once(&names_once, names_fill);
    return names;
}
