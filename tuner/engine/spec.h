/* spec.h - a user's stencil spec (issue 30): the JSON text (docs/stencils.md, version 1)
 * parsed, validated and normalized into what kernels are generated from and the host
 * reference is evaluated from: per output, a merged list of taps in a canonical order.
 * Also what the tuner keys and counts by a spec: the hash of its pattern (which fields at
 * which offsets, which products, which constant each weight uses; never the constants'
 * values or names) and the bytes a pass must move at least.
 *
 * A spec's fields are numbered inputs first, then coefficient fields: fdt_spec_point reads
 * fields[input] and fields[ninputs + coefficient]. Constants are numbered in the order the
 * spec names them; their values are given at launch, in that order. */
#ifndef FDT_SPEC_H
#define FDT_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "problem.h"

/* The format this reader reads: the spec's top-level "fdtune_stencil". */
#define FDT_SPEC_VERSION 1
/* Bounds of a spec, each refused with its own message (docs/stencils.md, "Bounds"). */
#define FDT_SPEC_TEXT_MAX 65536       /* bytes of JSON text */
#define FDT_SPEC_DEPTH_MAX 6          /* nesting of arrays and objects; the format needs 5 */
#define FDT_SPEC_NAME_MAX 16          /* characters of a name, NUL excluded */
#define FDT_SPEC_INPUTS_MAX 8
#define FDT_SPEC_COEFFICIENTS_MAX 8
#define FDT_SPEC_READ_MAX 8           /* inputs and coefficient fields together */
#define FDT_SPEC_OUTPUTS_MAX 4
#define FDT_SPEC_CONSTANTS_MAX 16
#define FDT_SPEC_TERMS_MAX 64         /* terms of one output, as written */
#define FDT_SPEC_TAPS_MAX 256         /* taps of one output, generators expanded */
#define FDT_SPEC_OFFSET_MAX 8         /* |dx|, |dy|, |dz| of any tap */
#define FDT_SPEC_ORDER_MAX 8          /* accuracy order of a derivative generator */

/* One term of an output once normalized: weight * constant * coefficient(at + c) *
 * input(at + d), where the constant is 1 when constant is -1 and the coefficient field is
 * 1 when coefficient is -1 (its offset then 0). */
typedef struct fdt_spec_tap {
    int8_t input;               /* index into the spec's inputs */
    int8_t dx, dy, dz;          /* the input's offset */
    int8_t coefficient;         /* index into the coefficient fields, or -1 */
    int8_t cdx, cdy, cdz;       /* the coefficient field's offset */
    int8_t constant;            /* index into the constants, or -1 */
    double weight;              /* never 0 */
} fdt_spec_tap;

typedef struct fdt_spec_output {
    char name[FDT_SPEC_NAME_MAX + 1];
    size_t ntaps;               /* at least 1 */
    /* Like taps (same input, offsets, coefficient and constant) merged into one, zero
     * weights dropped, ordered by input, dz, dy, dx, coefficient, cdz, cdy, cdx, constant. */
    fdt_spec_tap taps[FDT_SPEC_TAPS_MAX];
} fdt_spec_output;

/* How the z-marching families hold field f (numbered as the kernels' spec_i: the inputs,
 * then the coefficient fields) over a column's walk in z: the planes lo..hi of its own
 * column (dx = dy = 0) that the taps read, in registers (a z-window); the planes zlo..zhi
 * at which it is read off that column, at most rx and ry away, in shared memory (tiles with
 * that halo). A range that holds nothing has lo > hi (zlo > zhi). */
typedef struct fdt_spec_hold {
    int lo, hi;
    int zlo, zhi, rx, ry;
} fdt_spec_hold;

/* Whether h holds a z-window, and whether it holds tiles. */
int fdt_spec_holds_window(const fdt_spec_hold *h);
int fdt_spec_holds_tiles(const fdt_spec_hold *h);

typedef struct fdt_spec {
    char name[FDT_SPEC_NAME_MAX + 1];
    size_t ninputs, ncoefficients, nconstants, noutputs;
    char inputs[FDT_SPEC_INPUTS_MAX][FDT_SPEC_NAME_MAX + 1];
    char coefficients[FDT_SPEC_COEFFICIENTS_MAX][FDT_SPEC_NAME_MAX + 1];
    char constants[FDT_SPEC_CONSTANTS_MAX][FDT_SPEC_NAME_MAX + 1];
    fdt_spec_output outputs[FDT_SPEC_OUTPUTS_MAX];
    /* The largest |offset| of any tap (input or coefficient field) along x, y, z, and over
     * the three: the interior is the grid less radius points at both ends of every axis
     * (one interior for every axis, as the kernels and the verification share it). */
    int reach[3];
    int radius;
    fdt_spec_hold hold[FDT_SPEC_INPUTS_MAX + FDT_SPEC_COEFFICIENTS_MAX];
} fdt_spec;

/* Parses the len bytes of text (JSON, not NUL-terminated) into *out (about 17 KiB: keep
 * it off small stacks). 0, or -1 with err holding "LOCATION: what is wrong", where LOCATION
 * is a path like outputs.un[2].order ("spec" for the whole text). Bounded in time and
 * memory on any input; *out is undefined after an error. */
int fdt_spec_parse(const char *text, size_t len, fdt_spec *out, char *err, size_t errlen);

/* The spec's pattern as 16 hex digits: its field counts, its number of constants, and per
 * output each tap's input, offsets, coefficient field and constant index. Not the names,
 * not the constants' values, not the numeric weights (they change a kernel's arithmetic,
 * never its memory traffic, and the kernel is generated from the user's spec anyway). */
void fdt_spec_hash(const fdt_spec *spec, char out[17]);

/* The bytes a pass over an nx x ny x nz grid must move at least: each input and coefficient
 * field read once over the region the interior's taps reach, each output written once over
 * the interior (docs/stencils.md, "Ideal bytes"). 0 where the grid has no interior. */
double fdt_spec_ideal_bytes(const fdt_spec *spec, int nx, int ny, int nz, size_t real_size);

/* The value of output at the interior point at (its index in a grid of ny rows a plane,
 * rows nx points apart: pass a layout's pitch as nx), in double, from fields (inputs then
 * coefficient fields, in precision) and the constants' values: the host reference.
 * *rounding (unless NULL): the most a right kernel's rounding may move it there, in units
 * of its precision's unit roundoff (fdt_rounding_bound over the output's terms). Reads
 * only; safe to call from any thread. */
double fdt_spec_point(const fdt_spec *spec, size_t output, const void *const *fields,
                      const double *constants, int nx, int ny, fdt_precision precision,
                      size_t at, double *rounding);

#endif
