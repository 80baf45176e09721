/* naive.hip - the seeds' kernel 1: one thread per grid point, every neighbour read from
 * global memory. Kept as the seed wrote it (runtime blockDim, size_t offsets, no
 * __restrict__) because it is the baseline every speedup is measured against; the
 * options lb, nt and map apply to it like to every family. */

extern "C" __global__ FDT_BOUNDS void fdt_laplacian(real *f, const real *u, int nx, int ny,
                                                    int nz, int pitch, real cx, real cy,
                                                    real cz)
{
    pitch = row_pitch(pitch, nx);
    int i = threadIdx.x + BLOCK_X * blockDim.x;
    int j = threadIdx.y + BLOCK_Y * blockDim.y;
    int k = threadIdx.z + BLOCK_Z * blockDim.z;
    if (!interior(i, nx) || !interior(j, ny) || !interior(k, nz))
        return;
    const size_t line = pitch;
    const size_t slice = (size_t)pitch * ny;
    size_t pos = i + line * j + slice * k;
    store_f(&f[pos], star_point(u, pos, line, slice, make_coeffs(cx, cy, cz)));
}
