/* xytile.hip - 2.5D blocking for high orders, and for GPUs whose L2 fabric bounds even R = 1
 * (the H200): the plane's xy tile, halo included, in shared memory, each thread's z-window
 * in registers, and several rows a thread, so that the tile is tall enough for its R-wide
 * halo to cost little. At R = 4 the space's other families read u 5 to 6 times from L2 and
 * stall on the L2 fabric (bench/results/h100/issue12/r4_bound/); a tile of FDT_BX vectors x FDT_BY*FDT_M rows reads it about (in sectors, rows
 * and planes) (1 + 2HX/width)(1 + 2R/height)(1 + 2R/FDT_MZ) times.
 *
 * Thread (tx, ty) owns one 16-byte vector of x points (2 doubles, 4 floats) in the tile's
 * rows ty + q*FDT_BY, q < FDT_M, and walks FDT_MZ planes up in z. Every shared-memory
 * access is a whole, aligned vector, so a warp's reads never conflict: the tile's rows keep
 * an x halo of HX points, R rounded up to whole vectors, and x neighbours come from the
 * vectors beside the own one. Each plane, every thread puts its own vectors into the tile
 * and its share of the halo vectors, gathered by all threads alike; two tiles alternate, so
 * one barrier a plane suffices, and the next plane's values are loaded before the current
 * one is computed. Blocks are FDT_BX x FDT_BY x 1 over the whole xy plane, boundary
 * included; grid z counts chunks of FDT_MZ interior planes. Rows that do not start on 16
 * bytes (rows_aligned) take the same code with scalar global loads and stores. Prototype
 * and measurements: bench/r4_tile.cu, bench/results/h100/issue12/. */

#define HX (LANES * ((R + LANES - 1) / LANES)) /* x halo, whole vectors */
#define HV (HX / LANES)               /* halo vectors on each side of a row */
#define TX (FDT_BX * LANES)           /* the tile's interior width and height */
#define TY (FDT_BY * FDT_M)
#define SX (TX + 2 * HX)              /* the tile with its halo */
#define SY (TY + 2 * R)
#define THREADS (FDT_BX * FDT_BY)
#define HALO_Y (2 * R * FDT_BX)       /* halo vectors above and below the tile */
#define HALO (HALO_Y + 2 * HV * TY)   /* and left and right of it */
#define SHARE ((HALO + THREADS - 1) / THREADS) /* halo vectors a thread gathers */
#define WIN (2 * R + 1)               /* u at planes k-R .. k+R */

/* Where a thread's share of the halo lies: its offset in the tile (-1: none, or off the
 * grid), its place in a plane of u and the points of its row from there on. */
struct halo_share {
    int at[SHARE], in_row[SHARE];
    idx_t pos[SHARE];
};

__device__ __forceinline__ void place_halo(halo_share &h, int tid, int i0, int j0, int nx,
                                           int ny, idx_t line)
{
#pragma unroll
    for (int s = 0; s < SHARE; s++) {
        const int e = tid + s * THREADS;
        int col = 0, row = 0; /* in vectors and rows of the tile, halo included */
        if (e < HALO_Y) { /* R rows below the tile, then R above */
            col = HV + e % FDT_BX;
            row = e / FDT_BX < R ? e / FDT_BX : TY + e / FDT_BX;
        } else if (e < HALO) { /* HV vectors left of every tile row, then HV right */
            const int g = e - HALO_Y, side = g % (2 * HV);
            col = side < HV ? side : FDT_BX + side;
            row = R + g / (2 * HV);
        }
        const int gi = i0 - HX + LANES * col, gj = j0 - R + row;
        const bool used = e < HALO && gi >= 0 && gi < nx && gj >= 0 && gj < ny;
        h.at[s] = used ? row * SX + LANES * col : -1;
        h.pos[s] = used ? gi + line * gj : 0;
        h.in_row[s] = nx - gi;
    }
}

template <bool ALIGNED>
__device__ __forceinline__ lanes load_vector(const real *u, idx_t pos, int in_row, bool in)
{
    if (in)
        return load_lanes<ALIGNED>(u, pos, in_row);
    lanes zero;
#pragma unroll
    for (int e = 0; e < LANES; e++)
        zero.e[e] = 0;
    return zero;
}

__device__ __forceinline__ void put_vector(real *tile, int at, const lanes &v)
{
    *reinterpret_cast<vec_t *>(tile + at) = v.v;
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
    for (int h = 0; h < 2 * HV + 1; h++) {
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

template <bool ALIGNED>
__device__ __forceinline__ void walk(real *f, const real *u, int nx, int ny, int pitch, int k0,
                                     int k1, const coeffs &c, real (*tiles)[SY * SX])
{
    const int tid = threadIdx.x + FDT_BX * threadIdx.y;
    /* Tiles start at 0, not at R, so that every vector starts on a whole vector. */
    const int i0 = BLOCK_X * TX, j0 = BLOCK_Y * TY;
    const int i = i0 + LANES * threadIdx.x;
    const idx_t line = pitch, slice = (idx_t)pitch * ny;
    const bool whole = ALIGNED && i >= R && i + LANES <= nx - R;
    halo_share h;
    place_halo(h, tid, i0, j0, nx, ny, line);

    /* A vector past the interior but in the grid is loaded (its points are neighbours);
     * only interior points are written. */
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

    lanes win[FDT_M][WIN], ahead[FDT_M], halo[SHARE];
#pragma unroll
    for (int q = 0; q < FDT_M; q++) {
#pragma unroll
        for (int d = 0; d < WIN - 1; d++)
            win[q][d] = load_vector<ALIGNED>(u, pos[q] + slice * (k0 - R + d), nx - i, in[q]);
        ahead[q] = load_vector<ALIGNED>(u, pos[q] + slice * (k0 + R), nx - i, in[q]);
    }
#pragma unroll
    for (int s = 0; s < SHARE; s++)
        halo[s] = load_vector<ALIGNED>(u, h.pos[s] + slice * k0, h.in_row[s], h.at[s] >= 0);

    for (int k = k0, b = 0; k < k1; k++, b ^= 1) {
        real *t = tiles[b];
#pragma unroll
        for (int q = 0; q < FDT_M; q++) {
            win[q][WIN - 1] = ahead[q];
            put_vector(t, at[q], win[q][R]);
        }
#pragma unroll
        for (int s = 0; s < SHARE; s++)
            if (h.at[s] >= 0)
                put_vector(t, h.at[s], halo[s]);
        if (k + 1 < k1) {
#pragma unroll
            for (int q = 0; q < FDT_M; q++)
                ahead[q] = load_vector<ALIGNED>(u, pos[q] + slice * (k + 1 + R), nx - i, in[q]);
#pragma unroll
            for (int s = 0; s < SHARE; s++)
                halo[s] = load_vector<ALIGNED>(u, h.pos[s] + slice * (k + 1), h.in_row[s],
                                               h.at[s] >= 0);
        }
        __syncthreads();
#pragma unroll
        for (int q = 0; q < FDT_M; q++) {
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
    pitch = row_pitch(pitch, nx);
    __shared__ vec_t store[2][SY * SX / LANES]; /* vectors, so that every row is aligned */
    real(*tiles)[SY * SX] = reinterpret_cast<real(*)[SY * SX]>(store);
    const int k0 = R + BLOCK_Z * FDT_MZ;
    if (k0 >= nz - R)
        return; /* uniform across the block, so no barrier is left waiting */
    const int k1 = min(k0 + FDT_MZ, nz - R);
    const coeffs c = make_coeffs(cx, cy, cz);
    if (rows_aligned(pitch))
        walk<true>(f, u, nx, ny, pitch, k0, k1, c, tiles);
    else
        walk<false>(f, u, nx, ny, pitch, k0, k1, c, tiles);
}
