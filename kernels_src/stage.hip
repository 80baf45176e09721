/* stage.hip - planes of the block's xy tile staged in shared memory by bulk asynchronous
 * copies, each thread's z-window in registers: u crosses the L2 about once (the tile's halo
 * aside) with many bytes in flight and few registers.
 *
 * Why (issue 16): on the H200 the best stencils are bound by the fabric between the L2's two
 * halves, which carries the L1's misses as well as the memory's fills (docs/kernels.md, "The
 * H200"). Reading neighbours through L1 costs 1.7 to 2.3 reads of u from L2; shared tiles
 * cut that to the halo's share, but the earlier tiles (smem, ring, xytile) paid for it in
 * instructions, registers or bank conflicts. Here one lane a row starts a plane's copy
 * (cp.async.bulk, sm_90 and later: no registers, no per-thread addresses), and every
 * shared-memory read is a whole 16-byte vector (conflict-free): the own vector, the vectors
 * R rows above and below, and whole vectors beside it for x.
 *
 * A block of FDT_BX x FDT_BY threads owns a tile of FDT_BX vectors x FDT_BY*FDT_M rows
 * (thread (tx, ty) the vector tx of rows ty + q*FDT_BY) and walks FDT_MZ planes up in z.
 * Shared memory holds STAGES plane tiles with their halo: the plane being computed, the R
 * above it (the top one feeds the z-windows) and AHEAD more in flight. After a plane is
 * computed one barrier frees its tile, which takes the next plane to fetch.
 *
 * Where the bulk copy is missing (AMD: gfx90a and gfx906 have no global-to-LDS bulk copy;
 * gfx950's global_load_lds_dwordx4 would be the counterpart), or rows do not start on 16
 * bytes, every thread loads its share of the next plane into registers one plane early and
 * stores it to the tile after the barrier, so the loads' latency still overlaps a plane's
 * work. Needs block barriers: not on the cpu backend. */

#define AHEAD 2                   /* planes in flight; variant.c's STAGE_AHEAD */
#define STAGES (R + 1 + AHEAD)    /* plane tiles in shared memory */
#define HX (LANES * ((R + LANES - 1) / LANES)) /* x halo in whole vectors: copies stay aligned */
#define HV (HX / LANES)           /* halo vectors on each side */
#define TX (FDT_BX * LANES)       /* the tile's points in x and rows in y, halo aside */
#define TY (FDT_BY * FDT_M)
#define SX (TX + 2 * HX)          /* a tile row in shared memory, halo included */
#define SY (TY + 2 * R)
#define VROW (SX / LANES)         /* vectors in a tile row */
#define THREADS (FDT_BX * FDT_BY)
#define SHARE ((SY * VROW + THREADS - 1) / THREADS) /* vectors of a plane a thread loads */
#define WIN (2 * R + 1)           /* the own vector at planes k-R .. k+R */

#if (defined(__CUDACC_RTC__) || defined(__CUDACC__)) && __CUDA_ARCH__ >= 900
#define BULK 1

__device__ __forceinline__ unsigned shared_address(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void barrier_init(unsigned long long *b)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(b)) : "memory");
}

/* Makes the initialised barriers visible to the copy engine before any copy uses them. */
__device__ __forceinline__ void barrier_init_fence()
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/* The barrier's one arrival, with the bytes its phase waits for. Copies may land before
 * this: the phase cannot end while the arrival is pending. */
__device__ __forceinline__ void barrier_expect(unsigned long long *b, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                     shared_address(b)),
                 "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void barrier_wait(unsigned long long *b, unsigned parity)
{
    asm volatile("{\n"
                 ".reg .pred done;\n"
                 "WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra WAIT;\n"
                 "}" ::"r"(shared_address(b)),
                 "r"(parity)
                 : "memory");
}

/* bytes (a multiple of 16) from global src to shared dst, both 16-byte aligned; their
 * arrival completes on b. */
__device__ __forceinline__ void bulk_copy(real *dst, const real *src, unsigned bytes,
                                          unsigned long long *b)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
                 "[%0], [%1], %2, [%3];" ::"r"(shared_address(dst)),
                 "l"(src), "r"(bytes), "r"(shared_address(b))
                 : "memory");
}
#else
#define BULK 0
#endif

struct tile {
    const real *u;
    idx_t slice;
    int i0, j0, nx, ny; /* the tile's first point and row, halo aside */
};

struct shared_planes {
    alignas(16) real plane[STAGES][SY * SX];
    unsigned long long full[STAGES]; /* bulk copies only: one barrier a tile */
};

#if BULK
/* Warp 0 (lane) starts the copies of plane k's rows into tile s, halo included, the parts
 * outside the grid left out. The grid's rows start on 16 bytes, and so do the tile's
 * (i0 and HX are whole vectors), so every copy is aligned. */
__device__ __forceinline__ void fetch_bulk(const tile &t, int k, shared_planes &sp, int s,
                                           int lane)
{
    const int lo = max(t.i0 - HX, 0), hi = min(t.i0 + TX + HX, t.nx);
    const int first = max(t.j0 - R, 0), end = min(t.j0 + TY + R, t.ny);
    const unsigned bytes = (unsigned)(hi - lo) * sizeof(real);
    if (lane == 0)
        barrier_expect(&sp.full[s], bytes * (end - first));
    for (int j = first + lane; j < end; j += 32)
        bulk_copy(sp.plane[s] + (j - t.j0 + R) * SX + lo - t.i0 + HX,
                  t.u + lo + (idx_t)j * t.nx + t.slice * k, bytes, &sp.full[s]);
}
#endif

/* Vector v of plane k's tile (v < SY * VROW), zeros outside the grid. A vector is wholly
 * in or out in x: tiles and halos are whole vectors. */
template <bool ALIGNED>
__device__ __forceinline__ lanes tile_vector(const tile &t, int k, int v)
{
    const int x = t.i0 - HX + LANES * (v % VROW), j = t.j0 - R + v / VROW;
    if (v < SY * VROW && x >= 0 && x < t.nx && j >= 0 && j < t.ny)
        return load_lanes<ALIGNED>(t.u, x + (idx_t)j * t.nx + t.slice * k, t.nx - x);
    lanes zero;
#pragma unroll
    for (int e = 0; e < LANES; e++)
        zero.e[e] = 0;
    return zero;
}

template <bool ALIGNED>
__device__ __forceinline__ void load_share(const tile &t, int k, int tid, lanes *share)
{
#pragma unroll
    for (int s = 0; s < SHARE; s++)
        share[s] = tile_vector<ALIGNED>(t, k, tid + s * THREADS);
}

__device__ __forceinline__ void store_share(const lanes *share, real *plane, int tid)
{
#pragma unroll
    for (int s = 0; s < SHARE; s++) {
        const int v = tid + s * THREADS;
        if (v < SY * VROW)
            *reinterpret_cast<vec_t *>(plane + (v / VROW) * SX + LANES * (v % VROW)) =
                share[s].v;
    }
}

/* The output vector at offset at of a plane tile: x from the whole vectors beside it, y
 * from the vectors R rows up and down, z from the window. */
__device__ __forceinline__ lanes star_vector(const real *plane, int at, const lanes *win,
                                             const coeffs &c)
{
    real row[2 * HX + LANES];
#pragma unroll
    for (int h = 0; h < 2 * HV + 1; h++) {
        lanes l;
        l.v = *reinterpret_cast<const vec_t *>(plane + at - HX + LANES * h);
#pragma unroll
        for (int e = 0; e < LANES; e++)
            row[LANES * h + e] = l.e[e];
    }
    lanes up[R + 1], down[R + 1], out;
#pragma unroll
    for (int r = 1; r <= R; r++) {
        down[r].v = *reinterpret_cast<const vec_t *>(plane + at - r * SX);
        up[r].v = *reinterpret_cast<const vec_t *>(plane + at + r * SX);
    }
#pragma unroll
    for (int e = 0; e < LANES; e++) {
        real acc = c.c0 * row[HX + e];
#pragma unroll
        for (int r = 1; r <= R; r++)
            acc += c.x[r] * (row[HX + e - r] + row[HX + e + r])
                 + c.y[r] * (down[r].e[e] + up[r].e[e])
                 + c.z[r] * (win[R - r].e[e] + win[R + r].e[e]);
        out.e[e] = acc;
    }
    return out;
}

template <bool ALIGNED>
__device__ __forceinline__ void walk(const tile &t, int k0, int k1, real *f,
                                     const coeffs &c, shared_planes &sp)
{
    const bool bulk = BULK && ALIGNED;
    const int tid = threadIdx.x + FDT_BX * threadIdx.y;
    const int first = k0 - R, last = k1 - 1 + R; /* the planes this chunk reads */
    const int i = t.i0 + LANES * threadIdx.x;
    const bool whole = ALIGNED && i >= R && i + LANES <= t.nx - R;
    lanes share[SHARE], win[FDT_M][WIN];
#if BULK
    if (bulk) {
        if (tid < STAGES)
            barrier_init(&sp.full[tid]);
        barrier_init_fence();
        __syncthreads();
        if (tid < 32)
            for (int k = first; k <= min(first + STAGES - 1, last); k++)
                fetch_bulk(t, k, sp, k - first, tid);
    }
#endif
    if (!bulk) {
        /* Tiles of planes first .. first+STAGES-2 now, the next one's share in registers;
         * it is stored one plane later, AHEAD - 1 planes before it is read. */
        for (int k = first; k <= min(first + STAGES - 2, last); k++) {
            load_share<ALIGNED>(t, k, tid, share);
            store_share(share, sp.plane[k - first], tid);
        }
        if (first + STAGES - 1 <= last)
            load_share<ALIGNED>(t, first + STAGES - 1, tid, share);
        __syncthreads();
    }
    /* Plane k on top of the windows; plane k - R computed once it is in the chunk. */
    for (int k = first; k <= last; k++) {
        const int s = (k - first) % STAGES;
#if BULK
        if (bulk)
            barrier_wait(&sp.full[s], ((k - first) / STAGES) & 1);
#endif
#pragma unroll
        for (int q = 0; q < FDT_M; q++) {
#pragma unroll
            for (int d = 0; d < WIN - 1; d++)
                win[q][d] = win[q][d + 1];
            win[q][WIN - 1].v = *reinterpret_cast<const vec_t *>(
                sp.plane[s] + (R + threadIdx.y + q * FDT_BY) * SX + HX + LANES * threadIdx.x);
        }
        if (k < k0)
            continue; /* the windows fill, the tiles below k0 stay for no stencil */
        const int out = k - R;
        if (out >= k0) {
            const real *plane = sp.plane[(out - first) % STAGES];
#pragma unroll
            for (int q = 0; q < FDT_M; q++) {
                const int j = t.j0 + threadIdx.y + q * FDT_BY;
                const lanes v = star_vector(
                    plane, (R + threadIdx.y + q * FDT_BY) * SX + HX + LANES * threadIdx.x,
                    win[q], c);
                if (interior(j, t.ny) && i < t.nx)
                    store_lanes(f + i + (idx_t)j * t.nx + t.slice * out, v, i, t.nx, whole);
            }
        }
        /* Tile (k - R) is read by no one from here on: it takes plane k + 1 + AHEAD. */
        __syncthreads();
#if BULK
        if (bulk && tid < 32 && k + 1 + AHEAD <= last)
            fetch_bulk(t, k + 1 + AHEAD, sp, (k - R - first) % STAGES, tid);
#endif
        if (!bulk && k + AHEAD <= last) {
            store_share(share, sp.plane[(k + AHEAD - first) % STAGES], tid);
            if (k + 1 + AHEAD <= last)
                load_share<ALIGNED>(t, k + 1 + AHEAD, tid, share);
        }
    }
}

extern "C" __global__ FDT_BOUNDS void fdt_laplacian(FDT_KERNEL_ARGS)
{
    __shared__ shared_planes sp;
    const int k0 = R + BLOCK_Z * FDT_MZ;
    if (k0 >= nz - R)
        return; /* uniform across the block, so no barrier is left waiting */
    const tile t = {u, (idx_t)nx * ny, (int)BLOCK_X * TX, (int)BLOCK_Y * TY, nx, ny};
    const coeffs c = make_coeffs(cx, cy, cz);
    const int k1 = min(k0 + FDT_MZ, nz - R);
    if (nx % LANES == 0)
        walk<true>(t, k0, k1, f, c, sp);
    else
        walk<false>(t, k0, k1, f, c, sp);
}
