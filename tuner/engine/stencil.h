/* stencil.h - what a kernel computes, as data: a stencil (operator) is a row of one table,
 * named by the problem (fdt_problem.stencil), the store's key and the protocol ("stencil").
 * Every part asks the row for what depends on the operator, and nothing else names it: the
 * entry point its kernels define, the radii it takes, the constants given at launch, the
 * host reference that verifies kernel 1, and the bytes the figure of merit counts.
 *
 * Today the table holds one built-in, the Laplacian of radius R (the central second
 * difference of order 2R along each axis, weighted by cx, cy, cz = 1/h^2). A user's stencil
 * spec (issue 30) is meant to become a row made at run time. */
#ifndef FDT_STENCIL_H
#define FDT_STENCIL_H

#include <stddef.h>

#include "problem.h"

/* The most constants a stencil's kernels take at launch, and the most grids they read or
 * write. Every kernel of a stencil takes its grids, then the shape, then the constants:
 *   entry(out_0 .. out_{outputs-1}, in_0 .. in_{inputs-1}, nx, ny, nz, c_0 .. c_{ncoeffs-1})
 * each grid nx * ny * nz points of the problem's precision, x fastest. */
#define FDT_STENCIL_COEFFS_MAX 16
#define FDT_STENCIL_FIELDS_MAX 8

typedef struct fdt_stencil {
    const char *name;       /* "laplacian": what problems, the store and the protocol say */
    const char *entry;      /* the entry point every kernel family of it defines */
    int max_radius;         /* radii 1 to max_radius */
    int outputs, inputs;    /* grids written and read (coefficient fields are inputs) */
    size_t ncoeffs;         /* constants given at launch */
    /* The launch constants for grid spacings h[0..2] along x, y, z. */
    void (*coefficients)(const double h[3], double *out);
    /* The bytes a pass must move at least (each point it reads once, each point it writes
     * once): the figure of merit's numerator. */
    double (*ideal_bytes)(const fdt_problem *p);
    /* Output `output` at the interior point at (its index in the grid), in double, from the
     * input grids in[0..inputs) (p's precision): the host reference kernel 1 is checked
     * against. The runner walks the points (in parallel: this must be safe to call from any
     * thread). */
    double (*point)(const fdt_problem *p, const void *const *in, const double *coeffs,
                    int output, size_t at);
} fdt_stencil;

/* The stencil called name, or NULL. */
const fdt_stencil *fdt_stencil_find(const char *name);
/* The stencil p names, or NULL where it names none that exists. */
const fdt_stencil *fdt_stencil_of(const fdt_problem *p);
/* The stencil a request that names none means (the protocol's and libfdtune's default). */
const fdt_stencil *fdt_stencil_default(void);
/* Every stencil's name, NULL-terminated, for the protocol's choices and messages. */
const char *const *fdt_stencil_names(void);

#endif
