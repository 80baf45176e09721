/* stencil.h - what a kernel computes, as data: a stencil (operator) is a row of one table,
 * named by the problem (fdt_problem.stencil), the store's key and the protocol ("stencil").
 * Every part asks the row for what depends on the operator, and nothing else names it: the
 * entry point its kernels define, the family that is its kernel 1, the radii it takes, its
 * grids and launch constants, the host reference that verifies kernel 1, and the bytes the
 * figure of merit counts.
 *
 * Two kinds of rows:
 *   built-in  the Laplacian of radius R (the central second difference of order 2R along
 *             each axis, weighted by cx, cy, cz = 1/h^2), served by the hand-written
 *             families of kernels_src/;
 *   spec      a user's stencil spec (engine/spec.h, docs/stencils.md) made a row at run
 *             time by fdt_stencil_from_text, named "spec-" and its pattern's hash, served by
 *             the spec families, whose sources are its generated macros (engine/spec_code.h)
 *             followed by their templates. Its radius is its reach.
 * Rows live as long as the process: pointers to them stay valid. */
#ifndef FDT_STENCIL_H
#define FDT_STENCIL_H

#include <stddef.h>

#include "engine/spec.h"
#include "problem.h"

/* The most constants a stencil's kernels take at launch, and the most grids they read or
 * write. Every kernel of a stencil takes its grids, then the shape and the row pitch, then
 * the constants:
 *   entry(out_0 .. out_{outputs-1}, in_0 .. in_{inputs-1}, nx, ny, nz, pitch,
 *         c_0 .. c_{ncoeffs-1})
 * each grid given as its point (0,0,0), nx * ny * nz points of the problem's precision, x
 * fastest, rows pitch points apart (the problem's layout, common/problem.h). */
#define FDT_STENCIL_COEFFS_MAX FDT_SPEC_CONSTANTS_MAX
#define FDT_STENCIL_FIELDS_MAX 8
/* How many specs one process makes rows of: beyond it fdt_stencil_from_text refuses. */
#define FDT_STENCIL_SPECS_MAX 256

typedef struct fdt_stencil_fns fdt_stencil_fns;
typedef struct fdt_family fdt_family;

typedef struct fdt_stencil {
    const char *name;       /* what problems, the store and the protocol say */
    const char *entry;      /* the entry point every kernel family of it defines */
    const char *kernel1;    /* the family whose plain kernel checks every variant */
    int min_radius, max_radius; /* the radii it takes */
    int outputs, inputs;    /* grids written and read (coefficient fields are inputs) */
    size_t ncoeffs;         /* constants given at launch */
    const char *code;       /* a spec's macros, put before every family's source; NULL */
    const fdt_spec *spec;   /* the spec a row was made from; NULL for a built-in */
    const char *text;       /* that spec's JSON text, as it came; NULL for a built-in */
    const fdt_stencil_fns *fns; /* a built-in's own functions (stencil.c) */
} fdt_stencil;

/* The stencil called name (a built-in, or a spec's row made before), or NULL. */
const fdt_stencil *fdt_stencil_find(const char *name);
/* The stencil p names, or NULL where it names none that exists. */
const fdt_stencil *fdt_stencil_of(const fdt_problem *p);
/* The stencil a request that names none means (the protocol's and libfdtune's default). */
const fdt_stencil *fdt_stencil_default(void);
/* Every built-in's name, NULL-terminated, for the protocol's choices and messages. */
const char *const *fdt_stencil_names(void);

/* The row of the spec in text (len bytes of JSON, docs/stencils.md): made the first time
 * its pattern is seen (later specs of one pattern get the first one's row: one pattern is
 * one key), or NULL with err saying why (where the spec is wrong and how, a reach the
 * families do not serve, too many specs, out of memory). Thread-safe. */
const fdt_stencil *fdt_stencil_from_text(const char *text, size_t len, char *err,
                                         size_t errlen);

/* What family f compiles for st: f's source (fdt_family_source), after st's macros when st
 * is a spec's (made with its row). Valid for the life of the program. */
const char *fdt_stencil_source(const fdt_stencil *st, const fdt_family *f);

/* The launch constants for grid spacings h[0..2] along x, y, z (a spec's: distinct values
 * of order one, since its constants' meaning is the user's). */
void fdt_stencil_coefficients(const fdt_stencil *st, const double h[3], double *out);
/* The bytes a pass must move at least (each point it reads once, each point it writes
 * once): the figure of merit's numerator. */
double fdt_stencil_ideal_bytes(const fdt_stencil *st, const fdt_problem *p);
/* Output `output` at the interior point at (its index in p's storage layout: offset, rows
 * pitch points apart), in double, from the input grids in[0..inputs) (p's precision, each a
 * whole buffer in that layout): the host reference kernel 1 is checked
 * against. *rounding (unless NULL): the most a right kernel's rounding may move it there,
 * in unit roundoffs of p's precision (fdt_rounding_bound over the output's terms), which
 * makes the point's tolerance. The runner walks the points (in parallel: safe to call
 * from any thread). */
double fdt_stencil_point(const fdt_stencil *st, const fdt_problem *p, const void *const *in,
                         const double *coeffs, int output, size_t at, double *rounding);

#endif
