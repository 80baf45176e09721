/* zvec.hip - each thread owns one 16-byte vector of consecutive points in x (2 doubles or 4
 * floats) of one row, for a chunk of FDT_MZ planes in z, and loads the whole z-window of that
 * column (FDT_MZ + 2R vectors) before it computes anything. Wide loads, all independent and
 * all in flight at once, are what let a plain copy run at the memory's speed on the H100;
 * one value per thread (every other family) left 3% of the copy's bandwidth behind.
 *
 * The y neighbours come as vectors too; the x neighbours inside the vector come from its own
 * lanes and the R on each side with scalar loads. Rows that do not start on a 16-byte
 * boundary (rows_aligned: the pitch not a multiple of the lanes, or a field's first point
 * off 16 bytes) take the same code with scalar loads and stores.
 * Blocks are FDT_BX x FDT_BY x 1; grid x counts vectors, grid z chunks of FDT_MZ planes. */

#define WIN (FDT_MZ + 2 * R) /* planes k0-R .. k0+FDT_MZ-1+R */

struct column {
    const real *u;
    idx_t pos, line, slice; /* pos: (i0, j, k0) */
    int i0, nx, in_row, planes;
};

/* The LANES outputs of plane q: x from the vector's own lanes and R scalars on each side. */
template <bool ALIGNED>
__device__ __forceinline__ void plane_outputs(const column &t, const lanes *w, int q,
                                              const coeffs &c, real *out)
{
    const idx_t p = t.pos + q * t.slice;
    real row[LANES + 2 * R];
    lanes_with_x_halo(t.u, p, t.i0, t.nx, w[q + R], row);
#pragma unroll
    for (int e = 0; e < LANES; e++)
        out[e] = c.c0 * row[R + e];
#pragma unroll
    for (int r = 1; r <= R; r++) {
        const lanes below = load_lanes<ALIGNED>(t.u, p - r * t.line, t.in_row);
        const lanes above = load_lanes<ALIGNED>(t.u, p + r * t.line, t.in_row);
#pragma unroll
        for (int e = 0; e < LANES; e++)
            out[e] += c.x[r] * (row[R + e - r] + row[R + e + r])
                    + c.y[r] * (below.e[e] + above.e[e])
                    + c.z[r] * (w[q + R - r].e[e] + w[q + R + r].e[e]);
    }
}

template <bool ALIGNED>
__device__ __forceinline__ void run_column(const column &t, const coeffs &c, real *f)
{
    lanes w[WIN];
#pragma unroll
    for (int q = 0; q < WIN; q++)
        if (q < t.planes + 2 * R)
            w[q] = load_lanes<ALIGNED>(t.u, t.pos + (q - R) * t.slice, t.in_row);
    const bool whole = ALIGNED && t.i0 >= R && t.i0 + LANES <= t.nx - R;
#pragma unroll
    for (int q = 0; q < FDT_MZ; q++) {
        if (q >= t.planes)
            continue;
        lanes out;
        plane_outputs<ALIGNED>(t, w, q, c, out.e);
        store_lanes(f + t.pos + q * t.slice, out, t.i0, t.nx, whole);
    }
}

extern "C" __global__ FDT_BOUNDS void fdt_laplacian(FDT_KERNEL_ARGS)
{
    pitch = row_pitch(pitch, nx);
    const int i0 = LANES * (threadIdx.x + BLOCK_X * FDT_BX);
    const int j = threadIdx.y + BLOCK_Y * FDT_BY;
    const int k0 = R + BLOCK_Z * FDT_MZ;
    if (i0 + LANES <= R || i0 >= nx - R || !interior(j, ny) || k0 >= nz - R)
        return; /* no interior point in this thread's vector, row or chunk */
    column t;
    t.u = u;
    t.line = pitch;
    t.slice = (idx_t)pitch * ny;
    t.pos = i0 + t.line * j + t.slice * k0;
    t.i0 = i0;
    t.nx = nx;
    t.in_row = min(LANES, nx - i0);
    t.planes = min(FDT_MZ, nz - R - k0);
    const coeffs c = make_coeffs(cx, cy, cz);
    if (rows_aligned(pitch))
        run_column<true>(t, c, f);
    else
        run_column<false>(t, c, f);
}
