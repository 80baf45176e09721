/* ring.hip - the patent's circular queue of planes in shared memory, filled by asynchronous
 * copies: a block owns a tile of FDT_BX 16-byte vectors x FDT_BY rows and walks FDT_MZ planes
 * up in z. Shared memory holds a ring of 2R+1+AHEAD planes of the tile with its halo: the
 * 2R+1 the current plane's stencil reads and AHEAD more whose copies are in flight. Every
 * point of u is read from L2 once per tile (halo included) and every neighbour comes from
 * shared memory, so the L1 sees no request but the copies; on NVIDIA the copies
 * (cp.async, sm_80 and later) go from L2 to shared memory without passing through
 * registers, so many bytes are in flight without costing registers.
 *
 * Why (issue 16): on the H200 the kernels that read neighbours through L1 and L2 are bound
 * by the fabric between the L2's two halves, not by HBM.
 *
 * On AMD (hiprtc) the counterpart of cp.async on gfx90a/gfx906 is none: the copies there are
 * plain loads and shared-memory stores, still AHEAD planes ahead of their use. The host
 * (cpu backend) cannot run block barriers, so this family is not offered there. */

#define AHEAD 2                       /* planes whose copies are in flight */
#define SLOTS (2 * R + 1 + AHEAD)     /* planes in the ring */
#define HX (LANES * ((R + LANES - 1) / LANES)) /* x halo, whole vectors so copies stay aligned */
#define TW (FDT_BX * LANES + 2 * HX)  /* points in a tile row, halo included */
#define TH (FDT_BY + 2 * R)           /* rows in a tile, halo included */
#define THREADS (FDT_BX * FDT_BY)

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
/* A copy of bytes (4, 8 or 16) from global to shared memory; a source outside the grid
 * (valid false) fills zeros and reads nothing. */
template <int BYTES>
__device__ __forceinline__ void copy_async(real *dst, const real *src, bool valid)
{
    const unsigned to = (unsigned)__cvta_generic_to_shared(dst);
    if (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(src),
                     "r"(valid ? 16 : 0));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(to), "l"(src),
                     "n"(BYTES), "r"(valid ? BYTES : 0));
}

__device__ __forceinline__ void copies_commit()
{
    asm volatile("cp.async.commit_group;\n" ::);
}

/* Until at most `pending` of this thread's committed groups are still in flight. */
template <int PENDING>
__device__ __forceinline__ void copies_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING));
}
#else
template <int BYTES>
__device__ __forceinline__ void copy_async(real *dst, const real *src, bool valid)
{
    if (BYTES == 16)
        *reinterpret_cast<vec_t *>(dst) = valid ? *reinterpret_cast<const vec_t *>(src) : vec_t{};
    else
        *dst = valid ? *src : 0;
}

__device__ __forceinline__ void copies_commit() {}

template <int PENDING>
__device__ __forceinline__ void copies_wait() {}
#endif

struct tile {
    const real *u;
    idx_t slice;
    int i0, j0, nx, ny; /* i0, j0: the tile's first point and row, halo included */
};

/* Starts the copy of plane k of the tile into slot; rows and points outside the grid are 0.
 * ALIGNED rows (nx a multiple of LANES) are copied in 16-byte vectors, others point by point. */
template <bool ALIGNED>
__device__ __forceinline__ void fetch_plane(const tile &t, int k, real *slot, int tid)
{
    const int per_row = ALIGNED ? TW / LANES : TW, step = ALIGNED ? LANES : 1;
    for (int c = tid; c < TH * per_row; c += THREADS) {
        const int row = c / per_row, i = t.i0 + (c % per_row) * step, j = t.j0 + row;
        const bool valid = j >= 0 && j < t.ny && i >= 0 && i < t.nx;
        const real *src = valid ? t.u + i + (idx_t)j * t.nx + t.slice * k : t.u;
        real *dst = slot + row * TW + (c % per_row) * step;
        if (ALIGNED)
            copy_async<16>(dst, src, valid);
        else
            copy_async<sizeof(real)>(dst, src, valid);
    }
}

/* The thread's output vector at plane slot q_slot: x and y from that plane, z from the
 * R planes below and above it in the ring. */
__device__ __forceinline__ lanes vector_out(const real (*ring)[TH * TW], int k_slot, int at,
                                            const coeffs &c)
{
    const real *plane = ring[k_slot];
    lanes out;
#pragma unroll
    for (int e = 0; e < LANES; e++) {
        const int p = at + e;
        real acc = c.c0 * plane[p];
#pragma unroll
        for (int r = 1; r <= R; r++)
            acc += c.x[r] * (plane[p - r] + plane[p + r])
                 + c.y[r] * (plane[p - r * TW] + plane[p + r * TW])
                 + c.z[r] * (ring[(k_slot + SLOTS - r) % SLOTS][p] + ring[(k_slot + r) % SLOTS][p]);
        out.e[e] = acc;
    }
    return out;
}

template <bool ALIGNED>
__device__ __forceinline__ void run_tile(const tile &t, int k0, int planes, real *f,
                                         const coeffs &c, real (*ring)[TH * TW])
{
    const int tid = threadIdx.x + FDT_BX * threadIdx.y;
    const int i0 = t.i0 + HX + LANES * threadIdx.x, j = t.j0 + R + threadIdx.y;
    const int at = (threadIdx.y + R) * TW + HX + LANES * threadIdx.x;
    const bool row_out = interior(j, t.ny) && i0 + LANES > R && i0 < t.nx - R;
    const bool whole = ALIGNED && i0 >= R && i0 + LANES <= t.nx - R;
    /* Planes k0-R .. k0+R-1+AHEAD: one commit group each, so that waiting for all but the
     * newest AHEAD groups means the stencil's top plane has landed. */
#pragma unroll 1
    for (int d = -R; d < R + AHEAD; d++) {
        if (d < planes + R)
            fetch_plane<ALIGNED>(t, k0 + d, ring[(d + SLOTS) % SLOTS], tid);
        copies_commit();
    }
#pragma unroll 1
    for (int q = 0; q < planes; q++) {
        copies_wait<AHEAD - 1>();
        __syncthreads(); /* every thread's copies of plane k0+q+R landed; plane q-R-1 is free */
        if (q + R + AHEAD < planes + R)
            fetch_plane<ALIGNED>(t, k0 + q + R + AHEAD, ring[(q + R + AHEAD) % SLOTS], tid);
        copies_commit();
        if (row_out) {
            const lanes out = vector_out(ring, q % SLOTS, at, c);
            store_lanes(f + i0 + (idx_t)j * t.nx + t.slice * (k0 + q), out, i0, t.nx, whole);
        }
    }
}

extern "C" __global__ FDT_BOUNDS void fdt_laplacian(FDT_KERNEL_ARGS)
{
    const int k0 = R + BLOCK_Z * FDT_MZ;
    if (k0 >= nz - R)
        return; /* uniform across the block, so no barrier is left waiting */
    tile t;
    t.u = u;
    t.slice = (idx_t)nx * ny;
    t.i0 = BLOCK_X * FDT_BX * LANES - HX;
    t.j0 = BLOCK_Y * FDT_BY - R;
    t.nx = nx;
    t.ny = ny;
    const coeffs c = make_coeffs(cx, cy, cz);
    const int planes = min(FDT_MZ, nz - R - k0);
    __shared__ __align__(16) real ring[SLOTS][TH * TW]; /* one array for both row kinds */
    if (nx % LANES == 0)
        run_tile<true>(t, k0, planes, f, c, ring);
    else
        run_tile<false>(t, k0, planes, f, c, ring);
}
