/* tiled.hip - the seeds' kernels 2 and 3: each thread computes FDT_M consecutive points in
 * y, so the u values of its column are loaded once and reused for the y terms of up to 2R+1
 * points. FDT_ORDER picks the order of the loads: 0 as kernel 2 (row by row, each row's x, y
 * and z neighbours together), 1 as kernel 3 (every load in ascending address order, which
 * kept the MI250X's L2 from evicting data about to be reused).
 *
 * Unlike the seeds, any ny works: rows past the grid are never read, and a tile that
 * straddles the y boundary takes a guarded copy of the body (EDGE) while tiles wholly inside
 * run without per-row tests. */

#define M FDT_M
#define COL (M + 2 * R) /* rows j0-R .. j0+M-1+R of the column */

struct tile {
    const real *u;
    idx_t pos, line, slice; /* pos: (i, j0, k) */
    int j0, ny;
};

template <bool EDGE>
__device__ __forceinline__ bool is_output(const tile &t, int n)
{
    return !EDGE || (t.j0 + n >= R && t.j0 + n < t.ny - R);
}

template <bool EDGE>
__device__ __forceinline__ real column_load(const tile &t, int n)
{
    if (EDGE && (t.j0 + n < 0 || t.j0 + n >= t.ny))
        return 0;
    return t.u[t.pos + n * t.line];
}

template <bool EDGE>
__device__ __forceinline__ void add_z(const tile &t, const coeffs &c, real *acc, int side)
{
#pragma unroll
    for (int q = 1; q <= R; q++) {
        const int r = side < 0 ? R + 1 - q : q; /* below: farthest plane first */
#pragma unroll
        for (int n = 0; n < M; n++)
            if (is_output<EDGE>(t, n))
                acc[n] += c.z[r] * t.u[t.pos + n * t.line + side * r * t.slice];
    }
}

template <bool EDGE>
__device__ __forceinline__ void add_x(const tile &t, const coeffs &c, real *acc, int n, int side)
{
    if (!is_output<EDGE>(t, n))
        return;
#pragma unroll
    for (int q = 1; q <= R; q++) {
        const int r = side < 0 ? R + 1 - q : q;
        acc[n] += c.x[r] * t.u[t.pos + n * t.line + side * r];
    }
}

template <bool EDGE>
__device__ __forceinline__ void compute_tile(const tile &t, const coeffs &c, real *acc)
{
    real col[COL];
#pragma unroll
    for (int n = 0; n < M; n++)
        acc[n] = 0;
#if FDT_ORDER == 1
    add_z<EDGE>(t, c, acc, -1);
#pragma unroll
    for (int n = -R; n < 0; n++)
        col[n + R] = column_load<EDGE>(t, n);
#pragma unroll
    for (int n = 0; n < M; n++) {
        add_x<EDGE>(t, c, acc, n, -1);
        col[n + R] = column_load<EDGE>(t, n);
        add_x<EDGE>(t, c, acc, n, +1);
    }
#pragma unroll
    for (int n = M; n < M + R; n++)
        col[n + R] = column_load<EDGE>(t, n);
    add_z<EDGE>(t, c, acc, +1);
#else
#pragma unroll
    for (int n = 0; n < M; n++) {
        col[n + R] = column_load<EDGE>(t, n);
        add_x<EDGE>(t, c, acc, n, -1);
        add_x<EDGE>(t, c, acc, n, +1);
        if (n == 0) {
#pragma unroll
            for (int b = -R; b < 0; b++)
                col[b + R] = column_load<EDGE>(t, b);
        }
        if (n == M - 1) {
#pragma unroll
            for (int a = M; a < M + R; a++)
                col[a + R] = column_load<EDGE>(t, a);
        }
        if (is_output<EDGE>(t, n)) {
#pragma unroll
            for (int r = 1; r <= R; r++)
                acc[n] += c.z[r] * (t.u[t.pos + n * t.line - r * t.slice]
                                    + t.u[t.pos + n * t.line + r * t.slice]);
        }
    }
#endif
#pragma unroll
    for (int n = 0; n < M; n++) {
        acc[n] += c.c0 * col[n + R];
#pragma unroll
        for (int r = 1; r <= R; r++)
            acc[n] += c.y[r] * (col[n + R - r] + col[n + R + r]);
    }
}

template <bool EDGE>
__device__ __forceinline__ void run_tile(const tile &t, const coeffs &c, real *f)
{
    real acc[M];
    compute_tile<EDGE>(t, c, acc);
#pragma unroll
    for (int n = 0; n < M; n++)
        if (is_output<EDGE>(t, n))
            store_f(&f[t.pos + n * t.line], acc[n]);
}

extern "C" __global__ FDT_BOUNDS void fdt_laplacian(FDT_KERNEL_ARGS)
{
    pitch = row_pitch(pitch, nx);
    const int i = threadIdx.x + BLOCK_X * FDT_BX;
    const int j0 = M * (threadIdx.y + BLOCK_Y * FDT_BY);
    const int k = threadIdx.z + BLOCK_Z * FDT_BZ;
    if (!interior(i, nx) || !interior(k, nz) || j0 >= ny - R)
        return;
    tile t;
    t.u = u;
    t.line = pitch;
    t.slice = (idx_t)pitch * ny;
    t.pos = i + t.line * j0 + t.slice * k;
    t.j0 = j0;
    t.ny = ny;
    const coeffs c = make_coeffs(cx, cy, cz);
    if (j0 >= R && j0 + M <= ny - R)
        run_tile<false>(t, c, f);
    else
        run_tile<true>(t, c, f);
}
