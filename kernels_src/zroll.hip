/* zroll.hip - each thread owns one 16-byte vector of x points in FDT_M consecutive rows, and
 * rolls a register window of 2R+1 planes of those rows up FDT_MZ planes in z, the next
 * plane's loads in flight while the current one is computed.
 *
 * Why (issue 16): on the H200 the stencils are bound by the fabric between the two halves
 * of the L2, which carries the memory's traffic and the L1's misses alike (docs/kernels.md,
 * "The H200"). zvec's chunks are short, so each plane is read again from L2 by the next
 * chunk: 2.3 times the grid's bytes at 512^3. Here z comes from registers over a long
 * chunk and the rows beside a thread's own are other threads' (L1 hits inside a block), so
 * L2 reads fall to 1.9 times; wide loads keep the memory busy. m = 1 wins wherever zroll
 * wins; m = 2 stays in the space for the grids and GPUs where registers are cheaper.
 *
 * Blocks are FDT_BX x FDT_BY x 1; grid x counts vectors, grid y tiles of FDT_BY x FDT_M rows
 * (from row 0, as tiled), grid z chunks of FDT_MZ planes. Rows that do not start on 16 bytes
 * (rows_aligned) take the same code with scalar loads and stores. */

#define M FDT_M
#define ROWS (M + 2 * R) /* rows j0-R .. j0+M-1+R of one plane */

struct slab {
    const real *u;
    idx_t pos, line, slice; /* pos: (i0, j0, k0) */
    int i0, j0, nx, ny, in_row, planes;
};

/* Row n (-R <= n < M+R) of the slab at plane offset dz; outside the grid, 0. */
template <bool ALIGNED>
__device__ __forceinline__ lanes slab_row(const slab &s, int n, int dz)
{
    if (s.j0 + n < 0 || s.j0 + n >= s.ny) {
        lanes zero;
#pragma unroll
        for (int e = 0; e < LANES; e++)
            zero.e[e] = 0;
        return zero;
    }
    return load_lanes<ALIGNED>(s.u, s.pos + n * s.line + dz * s.slice, s.in_row);
}

/* The thread's own rows 0 .. M-1 of plane dz, into plane[R .. R+M-1]. */
template <bool ALIGNED>
__device__ __forceinline__ void load_own(const slab &s, int dz, lanes *plane)
{
#pragma unroll
    for (int n = 0; n < M; n++)
        plane[R + n] = slab_row<ALIGNED>(s, n, dz);
}

/* The R rows on each side of the own rows (other threads' rows: mostly L1 hits), plane dz. */
template <bool ALIGNED>
__device__ __forceinline__ void load_beside(const slab &s, int dz, lanes *plane)
{
#pragma unroll
    for (int r = 1; r <= R; r++) {
        plane[R - r] = slab_row<ALIGNED>(s, -r, dz);
        plane[R + M - 1 + r] = slab_row<ALIGNED>(s, M - 1 + r, dz);
    }
}

/* The M output vectors of the current plane: window[R + d][R + n] is row n at plane offset
 * d; window[R][..] holds the 2R rows beside the own rows too. */
__device__ __forceinline__ void plane_outputs(const slab &s, lanes (*window)[ROWS], int q,
                                              const coeffs &c, bool whole, real *f)
{
#pragma unroll
    for (int n = 0; n < M; n++) {
        if (!interior(s.j0 + n, s.ny))
            continue;
        const idx_t p = s.pos + n * s.line + q * s.slice;
        real row[LANES + 2 * R];
        lanes_with_x_halo(s.u, p, s.i0, s.nx, window[R][R + n], row);
        lanes out;
#pragma unroll
        for (int e = 0; e < LANES; e++)
            out.e[e] = c.c0 * row[R + e];
#pragma unroll
        for (int r = 1; r <= R; r++)
#pragma unroll
            for (int e = 0; e < LANES; e++)
                out.e[e] += c.x[r] * (row[R + e - r] + row[R + e + r])
                          + c.y[r] * (window[R][R + n - r].e[e] + window[R][R + n + r].e[e])
                          + c.z[r] * (window[R - r][R + n].e[e] + window[R + r][R + n].e[e]);
        store_lanes(f + p, out, s.i0, s.nx, whole);
    }
}

template <bool ALIGNED>
__device__ __forceinline__ void run_slab(const slab &s, const coeffs &c, real *f)
{
    /* window[R + d]: the own rows at plane k + d of the current plane k (d = -R .. R), and in
     * window[R] the rows beside them too. In flight during plane k's arithmetic: next, plane
     * k+1+R's own rows, and beside, plane k+1's rows beside. Loading two planes ahead cost
     * registers and gained nothing on the H200 (bench/results/h200/issue16/). */
    lanes window[2 * R + 1][ROWS], next[ROWS], beside[ROWS];
#pragma unroll
    for (int d = -R; d < R; d++)
        load_own<ALIGNED>(s, d, window[R + d]);
    load_own<ALIGNED>(s, R, next);
    load_beside<ALIGNED>(s, 0, beside);
    const bool whole = ALIGNED && s.i0 >= R && s.i0 + LANES <= s.nx - R;
#pragma unroll
    for (int q = 0; q < FDT_MZ; q++) {
        if (q >= s.planes)
            break;
#pragma unroll
        for (int n = 0; n < ROWS; n++) {
            if (n >= R && n < R + M)
                window[2 * R][n] = next[n];
            else
                window[R][n] = beside[n];
        }
        if (q + 1 < s.planes) {
            load_own<ALIGNED>(s, q + 1 + R, next);
            load_beside<ALIGNED>(s, q + 1, beside);
        }
        plane_outputs(s, window, q, c, whole, f);
#pragma unroll
        for (int d = 0; d < 2 * R; d++)
#pragma unroll
            for (int n = R; n < R + M; n++)
                window[d][n] = window[d + 1][n];
    }
}

extern "C" __global__ FDT_BOUNDS void fdt_laplacian(FDT_KERNEL_ARGS)
{
    pitch = row_pitch(pitch, nx);
    const int i0 = LANES * (threadIdx.x + BLOCK_X * FDT_BX);
    const int j0 = M * (threadIdx.y + BLOCK_Y * FDT_BY);
    const int k0 = R + BLOCK_Z * FDT_MZ;
    if (i0 + LANES <= R || i0 >= nx - R || j0 + M <= R || j0 >= ny - R || k0 >= nz - R)
        return; /* no interior point in this thread's vectors or chunk */
    slab s;
    s.u = u;
    s.line = pitch;
    s.slice = (idx_t)pitch * ny;
    s.pos = i0 + s.line * j0 + s.slice * k0;
    s.i0 = i0;
    s.j0 = j0;
    s.nx = nx;
    s.ny = ny;
    s.in_row = min(LANES, nx - i0);
    s.planes = min(FDT_MZ, nz - R - k0);
    const coeffs c = make_coeffs(cx, cy, cz);
    if (rows_aligned(pitch))
        run_slab<true>(s, c, f);
    else
        run_slab<false>(s, c, f);
}
