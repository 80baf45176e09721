/* xypipe.hip - xytile's tiles filled by asynchronous copies, several planes ahead: the
 * block's xy tile of each plane, halo included, goes from global to shared memory without
 * passing through registers (cp.async on NVIDIA sm_80 and later), so a thread holds only its
 * z-window while AHEAD planes of copies are in flight. Why (issue 16): on the H200 xytile's
 * best tiles are short (8 planes) and small because the bytes a thread keeps in flight cost
 * registers and so warps; here the bytes in flight cost shared memory instead, and long,
 * tall tiles read u little more than once from L2.
 *
 * Thread (tx, ty) owns one 16-byte vector of x points in the tile's rows ty + q*FDT_BY,
 * q < FDT_M, as in xytile, and walks FDT_MZ planes up in z. SLOTS tiles make a ring: while
 * plane k is computed, tiles k .. k+R are read (x and y neighbours from tile k, the newest
 * plane of the z-window from tile k+R's own vector), AHEAD later ones are being filled, and
 * one more is left to warps still finishing plane k-1. One barrier a plane.
 *
 * On AMD (hiprtc) gfx90a and gfx906 have no counterpart of cp.async; the copies there are
 * plain loads and shared-memory stores, issued AHEAD planes ahead all the same. The host (cpu
 * backend) cannot run block barriers, so this family is not offered there. */

#ifndef FDT_AHEAD
#define FDT_AHEAD 1
#endif
#define AHEAD FDT_AHEAD
#define SLOTS (R + AHEAD + 2)
#define HX (LANES * ((R + LANES - 1) / LANES)) /* x halo, whole vectors */
#define TX (FDT_BX * LANES)           /* the tile's interior width and height */
#define TY (FDT_BY * FDT_M)
#define SX (TX + 2 * HX)              /* the tile with its halo */
#define SY (TY + 2 * R)
#define SXV (SX / LANES)              /* vectors in a tile row */
#define TILE_V (SY * SXV)             /* vectors in a tile */
#define THREADS (FDT_BX * FDT_BY)
#define COPIES ((TILE_V + THREADS - 1) / THREADS) /* vectors a thread copies a plane */
#define WIN (2 * R + 1)               /* u at planes k-R .. k+R */

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
__device__ __forceinline__ unsigned shared_address(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void copy_vector(real *dst, const real *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_address(dst)),
                 "l"(src));
}

__device__ __forceinline__ void copy_point(real *dst, const real *src)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(shared_address(dst)),
                 "l"(src), "n"(sizeof(real)));
}

__device__ __forceinline__ void copies_commit()
{
    asm volatile("cp.async.commit_group;\n" ::);
}

/* Until at most PENDING of this thread's committed groups are still in flight. */
template <int PENDING>
__device__ __forceinline__ void copies_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING));
}
#else
__device__ __forceinline__ void copy_vector(real *dst, const real *src)
{
    *reinterpret_cast<vec_t *>(dst) = *reinterpret_cast<const vec_t *>(src);
}

__device__ __forceinline__ void copy_point(real *dst, const real *src)
{
    *dst = *src;
}

__device__ __forceinline__ void copies_commit() {}

template <int PENDING>
__device__ __forceinline__ void copies_wait() {}
#endif

/* The vectors of a tile one thread copies: their offsets in the tile (-1: none, or off the
 * grid), their places in a plane of u and the points of their rows from there on. */
struct copy_share {
    int at[COPIES], in_row[COPIES];
    idx_t pos[COPIES];
};

__device__ __forceinline__ void place_copies(copy_share &s, int tid, int i0, int j0, int nx,
                                             int ny)
{
#pragma unroll
    for (int c = 0; c < COPIES; c++) {
        const int e = tid + c * THREADS, row = e / SXV, col = e % SXV;
        const int gi = i0 - HX + LANES * col, gj = j0 - R + row;
        const bool used = e < TILE_V && gi >= 0 && gi < nx && gj >= 0 && gj < ny;
        s.at[c] = used ? row * SX + LANES * col : -1;
        s.pos[c] = used ? gi + (idx_t)nx * gj : 0;
        s.in_row[c] = nx - gi;
    }
}

/* Starts the copies of the plane at offset plane of u into tile and commits them as one
 * group. Vectors off the grid are not copied: they only feed points that are not stored. */
template <bool ALIGNED>
__device__ __forceinline__ void copy_plane(real *tile, const real *u, idx_t plane,
                                           const copy_share &s)
{
#pragma unroll
    for (int c = 0; c < COPIES; c++) {
        if (s.at[c] < 0)
            continue;
        if (ALIGNED)
            copy_vector(tile + s.at[c], u + plane + s.pos[c]);
        else
#pragma unroll
            for (int e = 0; e < LANES; e++)
                if (e < s.in_row[c])
                    copy_point(tile + s.at[c] + e, u + plane + s.pos[c] + e);
    }
    copies_commit();
}

__device__ __forceinline__ lanes get_vector(const real *tile, int at)
{
    lanes l;
    l.v = *reinterpret_cast<const vec_t *>(tile + at);
    return l;
}

/* The output vector at offset at of a plane tile: x from the whole vectors beside it, y
 * from the vectors R rows up and down, z from the window. */
__device__ __forceinline__ lanes star_vector(const real *tile, int at, const lanes *win,
                                             const coeffs &c)
{
    real row[2 * HX + LANES];
#pragma unroll
    for (int h = 0; h < 2 * HX / LANES + 1; h++) {
        const lanes l = get_vector(tile, at - HX + LANES * h);
#pragma unroll
        for (int e = 0; e < LANES; e++)
            row[LANES * h + e] = l.e[e];
    }
    lanes out;
#pragma unroll
    for (int e = 0; e < LANES; e++)
        out.e[e] = c.c0 * row[HX + e];
#pragma unroll
    for (int r = 1; r <= R; r++) {
        const lanes down = get_vector(tile, at - r * SX), up = get_vector(tile, at + r * SX);
#pragma unroll
        for (int e = 0; e < LANES; e++)
            out.e[e] += c.x[r] * (row[HX + e - r] + row[HX + e + r])
                      + c.y[r] * (down.e[e] + up.e[e])
                      + c.z[r] * (win[R - r].e[e] + win[R + r].e[e]);
    }
    return out;
}

__device__ __forceinline__ int slot_after(int slot, int d)
{
    return slot + d < SLOTS ? slot + d : slot + d - SLOTS;
}

template <bool ALIGNED>
__device__ __forceinline__ void walk(real *f, const real *u, int nx, int ny, int k0, int k1,
                                     const coeffs &c, real (*tiles)[SY * SX])
{
    const int tid = threadIdx.x + FDT_BX * threadIdx.y;
    /* Tiles start at 0, not at R, so that every vector starts on a whole vector. */
    const int i0 = BLOCK_X * TX, j0 = BLOCK_Y * TY;
    const int i = i0 + LANES * threadIdx.x;
    const idx_t line = nx, slice = (idx_t)nx * ny;
    const bool whole = ALIGNED && i >= R && i + LANES <= nx - R;
    copy_share s;
    place_copies(s, tid, i0, j0, nx, ny);

    bool in[FDT_M];
    idx_t pos[FDT_M];
    int at[FDT_M];
#pragma unroll
    for (int q = 0; q < FDT_M; q++) {
        const int j = j0 + threadIdx.y + q * FDT_BY;
        in[q] = i < nx && j < ny;
        pos[q] = in[q] ? i + line * j : 0;
        at[q] = (R + threadIdx.y + q * FDT_BY) * SX + HX + LANES * threadIdx.x;
    }

    /* Tiles k0 .. k0+R+AHEAD-1 in flight, one group each (empty past the chunk's last
     * plane + R, so that every wait counts the same groups). */
#pragma unroll
    for (int d = 0; d < R + AHEAD; d++) {
        if (k0 + d < k1 + R)
            copy_plane<ALIGNED>(tiles[d], u, slice * (k0 + d), s);
        else
            copies_commit();
    }
    /* The window's planes below the chunk come straight from u; the others from tiles. */
    lanes win[FDT_M][WIN];
#pragma unroll
    for (int q = 0; q < FDT_M; q++)
#pragma unroll
        for (int d = 0; d < R; d++)
            win[q][d] = load_lanes<ALIGNED>(u, pos[q] + slice * (k0 - R + d), nx - i);
    copies_wait<AHEAD>();
    __syncthreads();
#pragma unroll
    for (int q = 0; q < FDT_M; q++)
#pragma unroll
        for (int d = 0; d < R; d++)
            win[q][R + d] = get_vector(tiles[d], at[q]);

    for (int k = k0, slot = 0; k < k1; k++, slot = slot_after(slot, 1)) {
        if (k + R + AHEAD < k1 + R)
            copy_plane<ALIGNED>(tiles[slot_after(slot, R + AHEAD)], u,
                                slice * (k + R + AHEAD), s);
        else
            copies_commit();
        copies_wait<AHEAD>();
        __syncthreads();
        const real *t = tiles[slot];
#pragma unroll
        for (int q = 0; q < FDT_M; q++) {
            win[q][WIN - 1] = get_vector(tiles[slot_after(slot, R)], at[q]);
            const int j = j0 + threadIdx.y + q * FDT_BY;
            const lanes out = star_vector(t, at[q], win[q], c);
            if (in[q] && interior(j, ny))
                store_lanes(f + pos[q] + slice * k, out, i, nx, whole);
#pragma unroll
            for (int d = 0; d < WIN - 1; d++)
                win[q][d] = win[q][d + 1];
        }
    }
}

extern "C" __global__ FDT_BOUNDS void fdt_laplacian(FDT_KERNEL_ARGS)
{
    __shared__ vec_t store[SLOTS][SY * SX / LANES]; /* vectors, so every row is aligned */
    real(*tiles)[SY * SX] = reinterpret_cast<real(*)[SY * SX]>(store);
    const int k0 = R + BLOCK_Z * FDT_MZ;
    if (k0 >= nz - R)
        return; /* uniform across the block, so no barrier is left waiting */
    const int k1 = min(k0 + FDT_MZ, nz - R);
    const coeffs c = make_coeffs(cx, cy, cz);
    if (nx % LANES == 0)
        walk<true>(f, u, nx, ny, k0, k1, c, tiles);
    else
        walk<false>(f, u, nx, ny, k0, k1, c, tiles);
}
