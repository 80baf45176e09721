/* broken.hip - TEST ONLY: kernel 1 with one deliberate bug, chosen by FDT_BUG, so the tests
 * can show that verification catches each kind of mistake at a single point:
 *   1  the last interior point is off by a thousandth of the outputs' scale
 *   2  one boundary point is written
 *   3  the last interior point is never written
 *   4  the source does not compile (the engine must record compile_error and go on)
 * The tuner offers this family only when test families are enabled. */

#if FDT_BUG == 4
#error "planted compile error (broken:bug4)"
#endif

extern "C" __global__ FDT_BOUNDS void fdt_laplacian(FDT_KERNEL_ARGS)
{
    pitch = row_pitch(pitch, nx);
    const int i = threadIdx.x + BLOCK_X * blockDim.x;
    const int j = threadIdx.y + BLOCK_Y * blockDim.y;
    const int k = threadIdx.z + BLOCK_Z * blockDim.z;
    const idx_t line = pitch, slice = (idx_t)pitch * ny;
    const idx_t pos = i + line * j + slice * k;
    const bool last = i == nx - R - 1 && j == ny - R - 1 && k == nz - R - 1;
    if (FDT_BUG == 2 && i == 0 && j == 0 && k == 0)
        f[pos] = 0;
    if (!interior(i, nx) || !interior(j, ny) || !interior(k, nz) || (FDT_BUG == 3 && last))
        return;
    const coeffs c = make_coeffs(cx, cy, cz);
    real v = star_point(u, pos, line, slice, c);
    if (FDT_BUG == 1 && last)
        v += c.c0 * (real)1e-3; /* c0 sets the scale of every output */
    store_f(&f[pos], v);
}
