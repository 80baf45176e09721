/* hazard.hip - TEST ONLY: kernel 1, except that the variant with blocks 64 wide does what
 * no worker survives, chosen by FDT_HAZARD (one family each):
 *   1  fault: every thread writes through a wild pointer, far past any address space:
 *      SIGSEGV on the cpu backend, an illegal address (a poisoned context) on a GPU
 *   2  spin: every thread loops forever on volatile reads the compiler must keep
 * so the tests can show that the daemon outlives a worker that faults or hangs and goes
 * on with the other variants. The tuner offers these families only when test families are
 * enabled. */

#if FDT_HAZARD != 1 && FDT_HAZARD != 2
#error "FDT_HAZARD must be 1 (fault) or 2 (spin)"
#endif

extern "C" __global__ FDT_BOUNDS void fdt_laplacian(FDT_KERNEL_ARGS)
{
    pitch = row_pitch(pitch, nx);
    const int i = threadIdx.x + BLOCK_X * blockDim.x;
    const int j = threadIdx.y + BLOCK_Y * blockDim.y;
    const int k = threadIdx.z + BLOCK_Z * blockDim.z;
    if (!interior(i, nx) || !interior(j, ny) || !interior(k, nz))
        return;
    const idx_t line = pitch, slice = (idx_t)pitch * ny;
    const idx_t pos = i + line * j + slice * k;
#if FDT_BX == 64 && FDT_HAZARD == 1
    /* 2^52 elements past f: no CPU or GPU maps addresses that high. */
    *(volatile real *)(f + ((size_t)1 << 52)) = u[pos];
#elif FDT_BX == 64 && FDT_HAZARD == 2
    /* u holds finite values, and a finite value equals itself, so this never ends; the
     * reads are of global memory and volatile, so no compiler may drop them (NVRTC does
     * drop a loop on a volatile local). */
    volatile const real *same = u + pos;
    while (*same == *same)
        ;
#endif
    store_f(&f[pos], star_point(u, pos, line, slice, make_coeffs(cx, cy, cz)));
}
