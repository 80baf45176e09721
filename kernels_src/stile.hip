/* stile.hip - a user's stencil spec in 2.5D blocks: a block owns an FDT_BX x FDT_BY tile of
 * outputs and walks FDT_MZ planes up in z. Every plane at which a field is read off its own
 * column is loaded once per block, coalesced, into shared memory with the halo its taps
 * reach (the spec's FDT_SPEC_TILE_* macros: a ring of tiles per field, as deep as the planes
 * its off-column taps span, sized by their reach in x and y); each field's column is a
 * z-window in registers, as in szwin.hip. Two barriers a plane: after a plane's tiles are
 * loaded, and after they are read, before the next plane's load takes the oldest slot. */

/* Plane `origin` of field, the block's tile and an RX x RY halo, into tile: the points
 * outside the grid are left as they are (no interior point's tap reaches them). */
template <int RX, int RY>
__device__ __forceinline__ void spec_tile_load(real *tile, const real *field, idx_t origin,
                                               int i0, int j0, int nx, int ny, idx_t line)
{
    const int tw = FDT_BX + 2 * RX, th = FDT_BY + 2 * RY;
    for (int p = threadIdx.x + FDT_BX * threadIdx.y; p < tw * th; p += FDT_BX * FDT_BY) {
        const int x = p % tw - RX, y = p / tw - RY;
        if (i0 + x >= 0 && i0 + x < nx && j0 + y >= 0 && j0 + y < ny)
            tile[p] = field[origin + x + y * line];
    }
}

extern "C" __global__ FDT_BOUNDS void fdt_spec(FDT_SPEC_ARGS)
{
    pitch = row_pitch(pitch, nx);
    FDT_SPEC_TILE_DECL;
    const int k0 = R + BLOCK_Z * FDT_MZ;
    if (k0 >= nz - R)
        return; /* uniform across the block, so no barrier is left waiting */
    const int planes = min(FDT_MZ, nz - R - k0);
    const int i0 = BLOCK_X * FDT_BX, j0 = BLOCK_Y * FDT_BY;
    const int i = i0 + threadIdx.x, j = j0 + threadIdx.y;
    const bool active = interior(i, nx) && interior(j, ny);
    const idx_t line = pitch;
    const idx_t slice = (idx_t)pitch * ny;
    idx_t corner = i0 + line * j0 + slice * k0; /* the block's first point in this plane */
    idx_t pos = i + line * j + slice * k0;
    FDT_SPEC_WINDOW_DECL;
    if (active)
        FDT_SPEC_WINDOW_PRIME(pos, slice);
    FDT_SPEC_TILE_PRIME(corner, i0, j0, line, slice);
    /* Unrolled, as in szwin.hip: the windows' shifts become renames and every tile slot a
     * constant. */
#pragma unroll
    for (int m = 0; m < FDT_MZ; m++, pos += slice, corner += slice) {
        if (m == planes)
            break;
        FDT_SPEC_TILE_TOP(m, corner, i0, j0, line, slice);
        __syncthreads();
        if (active) {
            FDT_SPEC_WINDOW_TOP(pos, slice);
            FDT_SPEC_TILE_POINT(m, pos, line, slice);
            FDT_SPEC_WINDOW_SHIFT;
        }
        __syncthreads();
    }
}
