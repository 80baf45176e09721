/* smarch.hip - a user's stencil spec marched in z: each thread owns one (i, j) column and
 * computes FDT_MZ planes of it one after another, so that the planes a column's taps read
 * in z come back from the caches rather than memory. Blocks are FDT_BX x FDT_BY x 1; grid z
 * counts chunks of FDT_MZ interior planes. The spec's macros as in snaive.hip. */

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
#pragma unroll 4
    for (int m = 0; m < planes; m++, pos += slice)
        FDT_SPEC_POINT(pos, line, slice);
}
