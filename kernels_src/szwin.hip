/* szwin.hip - a user's stencil spec marched in z with z-windows in registers: each thread
 * owns one (i, j) column and walks FDT_MZ planes, keeping the planes of each field's own
 * column that the taps read (the spec's FDT_SPEC_WINDOW_* macros, sized by its taps' reach
 * in z) in registers, as zmarch.hip does for the Laplacian: a plane of a field is read from
 * memory once per column for its z taps, the x and y neighbours come from the caches.
 * Blocks are FDT_BX x FDT_BY x 1; grid z counts chunks of FDT_MZ interior planes. */

extern "C" __global__ FDT_BOUNDS void fdt_spec(FDT_SPEC_ARGS)
{
    pitch = row_pitch(pitch, nx);
    const int i = threadIdx.x + BLOCK_X * FDT_BX;
    const int j = threadIdx.y + BLOCK_Y * FDT_BY;
    const int k0 = R + BLOCK_Z * FDT_MZ;
    if (!interior(i, nx) || !interior(j, ny) || k0 >= nz - R)
        return;
    const int planes = min(FDT_MZ, nz - R - k0);
    const idx_t line = pitch;
    const idx_t slice = (idx_t)pitch * ny;
    idx_t pos = i + line * j + slice * k0;
    FDT_SPEC_WINDOW_DECL;
    FDT_SPEC_WINDOW_PRIME(pos, slice);
    /* Unrolled with an exit for the last chunk, as in zmarch.hip: the shifts become
     * register renames. */
#pragma unroll
    for (int m = 0; m < FDT_MZ; m++, pos += slice) {
        if (m == planes)
            break;
        FDT_SPEC_WINDOW_TOP(pos, slice);
        FDT_SPEC_WINDOW_POINT(pos, line, slice);
        FDT_SPEC_WINDOW_SHIFT;
    }
}
