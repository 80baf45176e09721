/* spec_code.h - the code of a user's stencil spec: the macros that the spec families'
 * templates (kernels_src/snaive.hip, smarch.hip) are compiled with, generated from the
 * spec's normalized taps (engine/spec.h). The text goes before a family's source, so it
 * defines macros alone, expanded inside the kernel after common.h:
 *   FDT_SPEC_ARGS   the parameters: spec_o0.. (outputs), spec_i0.. (inputs, then
 *                   coefficient fields), int nx, ny, nz, spec_k0.. (constants), grids of
 *                   type real (names a template's own locals do not take)
 *   FDT_SPEC_POINT(pos, line, slice)  every output at pos, summed in real in the taps'
 *                   canonical order and stored with store_f
 * Weights are printed with 17 significant digits, so they survive the trip exactly. */
#ifndef FDT_SPEC_CODE_H
#define FDT_SPEC_CODE_H

#include "engine/spec.h"

/* The macros' text for spec, malloc'd; NULL when out of memory. */
char *fdt_spec_code(const fdt_spec *spec);

#endif
