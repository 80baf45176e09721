/* ztile.hip - z in registers, x and y from a shared-memory tile of one plane at a time: the
 * scheme of high-order stencils (Micikevicius; the seismic stencil work on MI250X). A block
 * owns an FDT_BX x FDT_BY tile of columns and walks FDT_MZ planes up in z. Each thread keeps
 * its column's 2R+1 values in z in registers, as zmarch does, and each plane it puts the
 * centre one into the block's tile, while the threads at the tile's edges add the R-wide
 * halo; the 4R neighbours in x and y then come from shared memory instead of L1 and L2,
 * which is what a radius of 4 needs. Two tiles alternate, so one barrier per plane is
 * enough, and the next plane's values are loaded before the current one is computed.
 * Needs FDT_BX >= R and FDT_BY >= R (the space's blocks are). Blocks are FDT_BX x FDT_BY x 1;
 * grid z counts chunks of FDT_MZ interior planes. */

#define TX (FDT_BX + 2 * R)
#define TY (FDT_BY + 2 * R)
#define WIN (2 * R + 1) /* u at planes k-R .. k+R */

struct column_at {
    const real *u;
    int i, j, nx, ny; /* the thread's column, which may lie past the grid's edge */
    idx_t line, slice;
};

/* u at (i + di, j + dj) of plane k; 0 off the grid (such values are never used). */
__device__ __forceinline__ real load_at(const column_at &c, int di, int dj, int k)
{
    const int gi = c.i + di, gj = c.j + dj;
    if (gi < 0 || gi >= c.nx || gj < 0 || gj >= c.ny)
        return 0;
    return c.u[gi + c.line * gj + c.slice * k];
}

/* What one thread puts into a plane's tile: its centre, and, at the tile's edges, halo
 * points in x (threads tx < R) and y (threads ty < R). */
struct plane_share {
    real centre, left, right, below, above;
};

__device__ __forceinline__ void load_halo(const column_at &c, int k, plane_share &s)
{
    if (threadIdx.x < R) {
        s.left = load_at(c, -R, 0, k);
        s.right = load_at(c, FDT_BX, 0, k);
    }
    if (threadIdx.y < R) {
        s.below = load_at(c, 0, -R, k);
        s.above = load_at(c, 0, FDT_BY, k);
    }
}

__device__ __forceinline__ void put(real (*t)[TX], const plane_share &s)
{
    const int x = threadIdx.x + R, y = threadIdx.y + R;
    t[y][x] = s.centre;
    if (threadIdx.x < R) {
        t[y][x - R] = s.left;
        t[y][x + FDT_BX] = s.right;
    }
    if (threadIdx.y < R) {
        t[y - R][x] = s.below;
        t[y + FDT_BY][x] = s.above;
    }
}

__device__ __forceinline__ real star(const real (*t)[TX], const real *win, const coeffs &c)
{
    const int x = threadIdx.x + R, y = threadIdx.y + R;
    real acc = c.c0 * win[R];
#pragma unroll
    for (int r = 1; r <= R; r++)
        acc += c.x[r] * (t[y][x - r] + t[y][x + r]) + c.y[r] * (t[y - r][x] + t[y + r][x])
             + c.z[r] * (win[R - r] + win[R + r]);
    return acc;
}

extern "C" __global__ FDT_BOUNDS void fdt_laplacian(FDT_KERNEL_ARGS)
{
    __shared__ real tiles[2][TY][TX];
    const int k0 = R + BLOCK_Z * FDT_MZ;
    if (k0 >= nz - R)
        return; /* uniform across the block, so no barrier is left waiting */
    const int planes = min(FDT_MZ, nz - R - k0); /* uniform too */
    column_at col;
    col.u = u;
    col.i = threadIdx.x + BLOCK_X * FDT_BX;
    col.j = threadIdx.y + BLOCK_Y * FDT_BY;
    col.nx = nx;
    col.ny = ny;
    col.line = nx;
    col.slice = (idx_t)nx * ny;
    const bool active = interior(col.i, nx) && interior(col.j, ny);
    const coeffs c = make_coeffs(cx, cy, cz);

    real win[WIN];
#pragma unroll
    for (int q = 0; q < WIN - 1; q++)
        win[q] = load_at(col, 0, 0, k0 - R + q);
    real ahead = load_at(col, 0, 0, k0 + R); /* the window's next top value */
    plane_share next = {0, 0, 0, 0, 0};
    load_halo(col, k0, next);

    /* Unrolled with an exit, as zmarch: the window's shifts become register renames. */
#pragma unroll
    for (int m = 0; m < FDT_MZ; m++) {
        if (m == planes)
            break;
        const int k = k0 + m;
        win[WIN - 1] = ahead;
        plane_share now = next;
        now.centre = win[R];
        if (m + 1 < planes) {
            ahead = load_at(col, 0, 0, k + 1 + R);
            load_halo(col, k + 1, next);
        }
        real (*t)[TX] = tiles[m & 1];
        put(t, now);
        __syncthreads();
        if (active)
            store_f(&f[col.i + col.line * col.j + col.slice * k], star(t, win, c));
#pragma unroll
        for (int q = 0; q < WIN - 1; q++)
            win[q] = win[q + 1];
    }
}
