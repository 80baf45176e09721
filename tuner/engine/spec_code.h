/* spec_code.h - the code of a user's stencil spec: the macros that the spec families'
 * templates (kernels_src/snaive.hip, smarch.hip, szwin.hip, svec.hip, stile.hip) are compiled with,
 * from the spec's normalized taps (engine/spec.h). The text goes before a family's source,
 * so it defines macros alone, expanded inside the kernel after common.h:
 *   FDT_SPEC_ARGS   the parameters: spec_o0.. (outputs), spec_i0.. (inputs, then
 *                   coefficient fields), int nx, ny, nz, pitch (the row pitch, common.h),
 *                   spec_k0.. (constants), grids of type real (names a template's own
 *                   locals do not take)
 *   FDT_SPEC_POINT(pos, line, slice)  every output at pos, summed in real in the taps'
 *                   canonical order and stored with store_f
 * and a z-march's registers: each field's z-window, the planes lo..hi of its own column
 * (dx = dy = 0) that some tap reads, held in real spec_wF[hi - lo + 1], spec_wF[q] the
 * plane at dz = lo + q of the point being computed:
 *   FDT_SPEC_WINDOW_DECL              declares the windows
 *   FDT_SPEC_WINDOW_PRIME(pos, slice) loads the planes lo .. hi - 1 of the first point
 *   FDT_SPEC_WINDOW_TOP(pos, slice)   loads plane hi of the point at pos (each step's one
 *                   read of the column per field)
 *   FDT_SPEC_WINDOW_POINT(pos, line, slice)  FDT_SPEC_POINT with the column's reads taken
 *                   from the windows
 *   FDT_SPEC_WINDOW_SHIFT             moves every window down a plane, for the next point
 * and a 2.5D block's shared memory: each field's planes zlo..zhi read off its column, as a
 * ring of tiles spec_tF[zhi - zlo + 1][(FDT_BY + 2 ry) * (FDT_BX + 2 rx)], the plane at dz
 * of step m in slot (m + dz - zlo) mod the ring's depth, loaded by stile.hip's
 * spec_tile_load (the block's corner point in the step's plane, i0, j0 its indices):
 *   FDT_SPEC_TILE_DECL                declares the rings
 *   FDT_SPEC_TILE_PRIME(corner, i0, j0, line, slice)  loads the planes zlo .. zhi - 1 of
 *                   step 0
 *   FDT_SPEC_TILE_TOP(m, corner, i0, j0, line, slice)  loads plane zhi of step m
 *   FDT_SPEC_TILE_POINT(m, pos, line, slice)  FDT_SPEC_POINT with the column's reads from
 *                   the windows and the rest from the tiles
 * and svec's vectors of LANES points in x (the locals i0, the vector's first point,
 * spec_in_row, its points inside the row, and spec_whole, every lane interior, in scope;
 * aligned: whether rows start on 16 bytes, a constant):
 *   FDT_SPEC_VEC_WINDOW_DECL, _PRIME(pos, slice, aligned), _TOP(pos, slice, aligned),
 *   _SHIFT            the z-windows as above, of vectors: lanes spec_vF[hi - lo + 1]
 *   FDT_SPEC_VEC_POINT(pos, line, slice, aligned)  every output at the vector's LANES
 *                   points: each row a tap reads (a field at one dy, dz) loaded once by
 *                   svec.hip's spec_row as the vectors that cover it, the column's own
 *                   vector from the window where it holds that plane; stored by store_lanes
 * Weights are printed with 17 significant digits, so they survive the trip exactly. */
#ifndef FDT_SPEC_CODE_H
#define FDT_SPEC_CODE_H

#include "engine/spec.h"

/* The macros' text for spec, malloc'd; NULL when out of memory. */
char *fdt_spec_code(const fdt_spec *spec);

#endif
