/* xytile.hip - 2.5D blocking for high orders: the plane's xy tile, halo included, in shared
 * memory, each thread's z-window in registers, and several rows a thread, so that the tile
 * is tall enough for its R-wide halo to cost little. At R = 4 the space's other families
 * read u 5 to 6 times from L2 and stall on the L2 fabric (bench/results/h100/issue12/
 * r4_bound/); a tile of 2*FDT_BX x FDT_BY*FDT_M points reads it about (in sectors, rows and
 * planes) (1 + 2R/width)(1 + 2R/height)(1 + 2R/FDT_MZ) times.
 *
 * Thread (tx, ty) owns the 2 points 2*tx, 2*tx+1 (one 16-byte access in double, 8 in
 * float) of the tile's rows ty + q*FDT_BY, q < FDT_M, and walks FDT_MZ planes up in z. Each
 * plane, every thread puts its centres into the tile and its share of the halo, gathered
 * by all threads alike rather than by the tile's edge threads; two tiles alternate, so one
 * barrier a plane suffices, and the next plane's values are loaded before the current one
 * is computed. Blocks are FDT_BX x FDT_BY x 1 over the whole xy plane, boundary included;
 * grid z counts chunks of FDT_MZ interior planes. Prototype and measurements:
 * bench/r4_tile.cu, bench/results/h100/issue12/. */

#define PX 2                          /* points a thread owns in a row */
#define TX (PX * FDT_BX)              /* the tile's interior width and height */
#define TY (FDT_BY * FDT_M)
#define SX (TX + 2 * R)               /* the tile with its halo */
#define SY (TY + 2 * R)
#define THREADS (FDT_BX * FDT_BY)
#define HALO_Y (2 * R * TX)           /* halo points above and below the tile */
#define HALO (HALO_Y + 2 * R * TY)    /* and left and right of it */
#define SHARE ((HALO + THREADS - 1) / THREADS) /* halo points a thread gathers */
#define WIN (2 * R + 1)               /* u at planes k-R .. k+R */

struct alignas(PX * sizeof(real)) pair {
    real e[PX];
};

/* Where a thread's share of the halo lies: its place in the tile (-1: none, or off the
 * grid) and in a plane of u. */
struct halo_share {
    int at[SHARE];
    idx_t pos[SHARE];
};

__device__ __forceinline__ void place_halo(halo_share &h, int tid, int i0, int j0, int nx,
                                           int ny)
{
#pragma unroll
    for (int s = 0; s < SHARE; s++) {
        const int e = tid + s * THREADS;
        int x = 0, y = 0;
        if (e < HALO_Y) { /* R rows below the tile, then R above */
            x = R + e % TX;
            y = e / TX < R ? e / TX : TY + e / TX;
        } else if (e < HALO) { /* R points left of every tile row, then R right */
            const int g = e - HALO_Y, side = g % (2 * R);
            x = side < R ? side : TX + side;
            y = R + g / (2 * R);
        }
        const int gi = i0 - R + x, gj = j0 - R + y;
        const bool used = e < HALO && gi >= 0 && gi < nx && gj >= 0 && gj < ny;
        h.at[s] = used ? y * SX + x : -1;
        h.pos[s] = used ? gi + (idx_t)nx * gj : 0;
    }
}

/* The thread's pair of row q at plane k, or zeros off the grid; one access where the rows
 * are aligned to pairs (nx even), else point by point. */
__device__ __forceinline__ pair load_pair(const real *u, idx_t pos, int i, int nx, bool in,
                                          bool aligned)
{
    pair p;
    if (in && aligned)
        return *reinterpret_cast<const pair *>(u + pos);
#pragma unroll
    for (int e = 0; e < PX; e++)
        p.e[e] = in && i + e < nx ? u[pos + e] : 0;
    return p;
}

extern "C" __global__ FDT_BOUNDS void fdt_laplacian(FDT_KERNEL_ARGS)
{
    __shared__ real tiles[2][SY * SX];
    const int k0 = R + BLOCK_Z * FDT_MZ;
    if (k0 >= nz - R)
        return; /* uniform across the block, so no barrier is left waiting */
    const int k1 = min(k0 + FDT_MZ, nz - R);
    const int tid = threadIdx.x + FDT_BX * threadIdx.y;
    /* Tiles start at 0, not at R, so that every pair starts on an even point. */
    const int i0 = BLOCK_X * TX, j0 = BLOCK_Y * TY;
    const int i = i0 + PX * threadIdx.x;
    const idx_t line = nx, slice = (idx_t)nx * ny;
    const bool aligned = nx % PX == 0;
    const coeffs c = make_coeffs(cx, cy, cz);
    halo_share h;
    place_halo(h, tid, i0, j0, nx, ny);

    /* A pair past the interior but in the grid is loaded (its points are neighbours);
     * only interior points are written. */
    bool in[FDT_M];
    idx_t pos[FDT_M];
#pragma unroll
    for (int q = 0; q < FDT_M; q++) {
        const int j = j0 + threadIdx.y + q * FDT_BY;
        in[q] = i < nx && j < ny;
        pos[q] = in[q] ? i + line * j : 0;
    }

    pair win[FDT_M][WIN], ahead[FDT_M];
    real halo[SHARE];
#pragma unroll
    for (int q = 0; q < FDT_M; q++) {
#pragma unroll
        for (int d = 0; d < WIN - 1; d++)
            win[q][d] = load_pair(u, pos[q] + slice * (k0 - R + d), i, nx, in[q], aligned);
        ahead[q] = load_pair(u, pos[q] + slice * (k0 + R), i, nx, in[q], aligned);
    }
#pragma unroll
    for (int s = 0; s < SHARE; s++)
        halo[s] = h.at[s] >= 0 ? u[h.pos[s] + slice * k0] : 0;

    for (int k = k0, b = 0; k < k1; k++, b ^= 1) {
        real *t = tiles[b];
#pragma unroll
        for (int q = 0; q < FDT_M; q++) {
            win[q][WIN - 1] = ahead[q];
#pragma unroll
            for (int e = 0; e < PX; e++)
                t[(R + threadIdx.y + q * FDT_BY) * SX + R + PX * threadIdx.x + e] =
                    win[q][R].e[e];
        }
#pragma unroll
        for (int s = 0; s < SHARE; s++)
            if (h.at[s] >= 0)
                t[h.at[s]] = halo[s];
        if (k + 1 < k1) {
#pragma unroll
            for (int q = 0; q < FDT_M; q++)
                ahead[q] = load_pair(u, pos[q] + slice * (k + 1 + R), i, nx, in[q], aligned);
#pragma unroll
            for (int s = 0; s < SHARE; s++)
                if (h.at[s] >= 0)
                    halo[s] = u[h.pos[s] + slice * (k + 1)];
        }
        __syncthreads();
#pragma unroll
        for (int q = 0; q < FDT_M; q++) {
            const int j = j0 + threadIdx.y + q * FDT_BY;
#pragma unroll
            for (int e = 0; e < PX; e++) {
                const real *s = t + (R + threadIdx.y + q * FDT_BY) * SX + R + PX * threadIdx.x + e;
                real acc = c.c0 * win[q][R].e[e];
#pragma unroll
                for (int r = 1; r <= R; r++)
                    acc += c.x[r] * (s[-r] + s[r]) + c.y[r] * (s[-r * SX] + s[r * SX])
                         + c.z[r] * (win[q][R - r].e[e] + win[q][R + r].e[e]);
                if (interior(i + e, nx) && interior(j, ny))
                    store_f(&f[pos[q] + e + slice * k], acc);
            }
#pragma unroll
            for (int d = 0; d < WIN - 1; d++)
                win[q][d] = win[q][d + 1];
        }
    }
}
