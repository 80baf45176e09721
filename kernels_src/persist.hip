/* persist.hip - cache mode "persist" (NVIDIA, sm_80 and later): keeps in L2 the sectors
 * where each interior row of f begins and ends.
 *
 * Why: no kernel may write f's boundary, so the 32-byte sectors holding a row's first and
 * last interior points are only partly written, and on an H100 at 256^3 those partial
 * sectors cost about 6% of a copy's time (bench/results/README.md). One launch with
 * release = 0 fetches each of them into L2 with evict_last priority; the stencil, and a
 * copy into f, then run faster for as long as the lines keep that priority. The kernel
 * writes nothing. release = 1 gives the same lines back their normal priority: a solver
 * must do that before it frees f, or the lines stay evict_last for the rest of the
 * context (and the next buffer at that address inherits them).
 *
 * Signature: fdt_persist_edges(const real *f, int nx, int ny, int nz, int pitch, int release)
 * (rows pitch points apart, as every kernel's: common.h);
 * one thread per row: any block (bx, 1, 1) with grid (nz, ceil(ny / bx), 1) (fdtuned
 * answers bx = 256: fdt_persist_geometry). */

#if defined(__HIPCC_RTC__) || defined(FDT_CPU)
#error "persist.hip needs NVIDIA's L2 eviction priorities (PTX prefetch.L2::evict_last, sm_80 and later)"
#endif

__device__ __forceinline__ void persist_line(const real *p)
{
    /* A prefetch, not a load: ptxas deletes a load whose value is unused, even a strong one. */
    asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(p) : "memory");
}

__device__ __forceinline__ void release_line(const real *p)
{
    /* applypriority works on whole 128-byte lines, given by their first byte. */
    const unsigned long long line = (unsigned long long)p & ~127ull;
    asm volatile("applypriority.global.L2::evict_normal [%0], 128;" ::"l"(line) : "memory");
}

extern "C" __global__ void fdt_persist_edges(const real *f, int nx, int ny, int nz, int pitch,
                                             int release)
{
    const int k = blockIdx.x, j = threadIdx.x + blockIdx.y * blockDim.x;
    if (!interior(j, ny) || !interior(k, nz))
        return;
    const real *row = f + (idx_t)pitch * (j + (idx_t)ny * k);
    const real *first = row + R, *last = row + nx - 1 - R;
    if (release) {
        release_line(first);
        release_line(last);
        return;
    }
    persist_line(first);
    persist_line(last);
}
