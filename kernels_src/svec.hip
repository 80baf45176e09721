/* svec.hip - a user's stencil spec marched in z with vectors in x: each thread owns one
 * 16-byte vector of consecutive points in x (2 doubles or 4 floats, as zvec.hip) of one
 * row and walks FDT_MZ planes of it. Every row its taps read (a field at one dy, dz) comes
 * as the few aligned vectors that cover the points it reaches (the spec's
 * FDT_SPEC_VEC_POINT, spec_row below): 5 wide loads for the 10 points an 8th-order x
 * derivative of 2 doubles reads, where one value a thread takes 18 narrow ones; the fewer,
 * wider reads of L1 are what the wide stencils are bound by. Each field's column is a
 * z-window of vectors (FDT_SPEC_VEC_WINDOW_*), as szwin.hip's of values.
 *
 * Rows that do not start on a 16-byte boundary (rows_aligned: the pitch, and the offset
 * engine/variant.c compiles in) take the same code with scalar loads and stores. Blocks are
 * FDT_BX x FDT_BY x 1; grid x counts vectors, grid z chunks of FDT_MZ planes. The macros
 * read the locals i0, nx, spec_in_row (the vector's points inside the row) and spec_whole
 * (every lane an interior point). */

/* a / b rounded down, a constant expression (no function: NVRTC takes a constexpr
 * function as host code). */
#define SPEC_FLOOR_DIV(a, b) ((a) >= 0 ? (a) / (b) : -(((b) - 1 - (a)) / (b)))

/* row[q] = the point i0 + XLO + q of the row whose vector at i0 is at p, for q in 0 ..
 * LANES + XHI - XLO - 1, loaded as the vectors that cover them; 0 outside the row (no
 * interior point reads it, and a vector past the grid's last row must not be read). mid:
 * the vector at p when a z-window holds it (HAS_MID), by value: a pointer into a window
 * would keep the window in memory where AMD's compiler cannot make it registers. */
template <int XLO, int XHI, bool ALIGNED, bool HAS_MID>
__device__ __forceinline__ void spec_row(const real *u, idx_t p, int i0, int nx, lanes mid,
                                         real *row)
{
    constexpr int first = SPEC_FLOOR_DIV(XLO, LANES), last = SPEC_FLOOR_DIV(LANES - 1 + XHI, LANES);
#pragma unroll
    for (int v = first; v <= last; v++) {
        const int x = i0 + v * LANES;
        lanes l;
        if (v == 0 && HAS_MID)
            l = mid;
        else if (ALIGNED)
            l.v = x >= 0 && x < nx ? vector_at(u + p + v * LANES) : vec_t{};
        else
#pragma unroll
            for (int e = 0; e < LANES; e++)
                l.e[e] = x + e >= 0 && x + e < nx ? u[p + v * LANES + e] : 0;
#pragma unroll
        for (int e = 0; e < LANES; e++) {
            const int q = v * LANES + e - XLO;
            if (q >= 0 && q < LANES + XHI - XLO)
                row[q] = l.e[e];
        }
    }
}

/* The chunk's walk, with the rows aligned or not. Unrolled with an exit for the last chunk,
 * as in szwin.hip: the windows' shifts become register renames. */
#define SVEC_WALK(aligned)                                                                 \
    do {                                                                                   \
        FDT_SPEC_VEC_WINDOW_DECL;                                                          \
        FDT_SPEC_VEC_WINDOW_PRIME(pos, slice, aligned);                                    \
        _Pragma("unroll") for (int m = 0; m < FDT_MZ; m++, pos += slice)                   \
        {                                                                                  \
            if (m == planes)                                                               \
                break;                                                                     \
            FDT_SPEC_VEC_WINDOW_TOP(pos, slice, aligned);                                  \
            FDT_SPEC_VEC_POINT(pos, line, slice, aligned);                                 \
            FDT_SPEC_VEC_WINDOW_SHIFT;                                                     \
        }                                                                                  \
    } while (0)

extern "C" __global__ FDT_BOUNDS void fdt_spec(FDT_SPEC_ARGS)
{
    pitch = row_pitch(pitch, nx);
    const int i0 = LANES * (threadIdx.x + BLOCK_X * FDT_BX);
    const int j = threadIdx.y + BLOCK_Y * FDT_BY;
    const int k0 = R + BLOCK_Z * FDT_MZ;
    if (i0 + LANES <= R || i0 >= nx - R || !interior(j, ny) || k0 >= nz - R)
        return; /* no interior point in this thread's vector, row or chunk */
    const int planes = min(FDT_MZ, nz - R - k0);
    const int spec_in_row = min(LANES, nx - i0);
    const bool spec_whole = i0 >= R && i0 + LANES <= nx - R;
    const idx_t line = pitch;
    const idx_t slice = (idx_t)pitch * ny;
    idx_t pos = i0 + line * j + slice * k0;
    if (rows_aligned(pitch))
        SVEC_WALK(true);
    else
        SVEC_WALK(false);
}
