/* common.h - what every kernel family shares: the element type, the weights of the
 * Laplacian of radius R, the block index mapping, launch bounds and the store of f.
 * The tuner prepends this file to each family's source before compiling it with hiprtc,
 * NVRTC or the host C++ compiler (cpu backend, which defines FDT_CPU).
 *
 * Parameters arrive as -D macros:
 *   FDT_REAL      float | double
 *   FDT_RADIUS    stencil radius R: the central difference of order 2R in x, y and z
 *   FDT_IDX       int when every index of the grid fits, else long long
 *   FDT_BX/BY/BZ  block dimensions
 *   FDT_LB        1: __launch_bounds__(block threads), so the compiler may use more registers
 *   FDT_WPE       0 (unset), or the least waves per EU (SIMD) the AMD compiler must leave
 *                 registers for: amdgpu_waves_per_eu(FDT_WPE), what HIP's __launch_bounds__
 *                 makes of its second argument; ignored by NVRTC and the host (below)
 *   FDT_NT        1: nontemporal (streaming) stores of f, which is not read again soon
 *   FDT_MAP       1: blog part 4's remapped grid (blockIdx.x -> y, .y -> z, .z -> x), so that
 *                 consecutive blocks walk y first and share the xy planes they read in L2
 *   FDT_BAND      0, or blog part 4's y-subdomains in one launch: blocks are taken x first,
 *                 then FDT_BAND block rows in y, then z, then the next band of rows, so that
 *                 the planes a band has in flight fit in L2 when whole planes do not
 * Families add their own (FDT_M, FDT_ORDER, FDT_MZ).
 *
 * Every kernel has the same signature, so one launcher serves every family:
 *   fdt_laplacian(real *f, const real *u, int nx, int ny, int nz, int pitch,
 *                 real cx, real cy, real cz)
 * with cx = 1/hx^2 and so on. The pointers are point (0,0,0) of each field, whose rows are
 * pitch points apart (pitch >= nx; the points from nx to pitch are padding, never read as
 * data nor written): u(i,j,k) = u[i + pitch*(j + ny*k)]. Bounds are nx, ny, nz; strides
 * pitch and pitch*ny. The pointers need not be 16-byte aligned (a solver's offset may move
 * them): the vector families take whole aligned vectors only where rows_aligned says every
 * row of every field starts on 16 bytes. The R outermost layers of f are boundary points
 * that no kernel may write. */

typedef FDT_REAL real;
typedef FDT_IDX idx_t;

#define R FDT_RADIUS

#if FDT_RADIUS < 1 || FDT_RADIUS > 4
#error "FDT_RADIUS must be 1, 2, 3 or 4"
#endif

/* Weights w[r] of the central second difference of order 2R (Fornberg's tables):
 * d2u/dx2 ~ (w[0] u_i + sum_r w[r] (u_{i-r} + u_{i+r})) / hx^2. */
__host__ __device__ constexpr double fdt_weight(int r)
{
    return R == 1 ? (r == 0 ? -2.0 : 1.0)
         : R == 2 ? (r == 0 ? -5.0 / 2 : r == 1 ? 4.0 / 3 : -1.0 / 12)
         : R == 3 ? (r == 0 ? -49.0 / 18 : r == 1 ? 3.0 / 2 : r == 2 ? -3.0 / 20 : 1.0 / 90)
         : (r == 0 ? -205.0 / 72 : r == 1 ? 8.0 / 5 : r == 2 ? -1.0 / 5
            : r == 3 ? 8.0 / 315 : -1.0 / 560);
}

/* The stencil's coefficients with the grid spacings folded in, computed once per thread. */
struct coeffs {
    real c0;
    real x[R + 1], y[R + 1], z[R + 1];
};

__device__ __forceinline__ coeffs make_coeffs(real cx, real cy, real cz)
{
    coeffs c;
    c.c0 = (real)fdt_weight(0) * (cx + cy + cz);
#pragma unroll
    for (int r = 1; r <= R; r++) {
        c.x[r] = (real)fdt_weight(r) * cx;
        c.y[r] = (real)fdt_weight(r) * cy;
        c.z[r] = (real)fdt_weight(r) * cz;
    }
    return c;
}

/* The whole star at pos, every point read from memory (the seeds' kernel 1 does this). */
template <typename I>
__device__ __forceinline__ real star_point(const real *u, I pos, I line, I slice, const coeffs &c)
{
    real acc = c.c0 * u[pos];
#pragma unroll
    for (int r = 1; r <= R; r++)
        acc += (u[pos - r] + u[pos + r]) * c.x[r]
             + (u[pos - r * line] + u[pos + r * line]) * c.y[r]
             + (u[pos - r * slice] + u[pos + r * slice]) * c.z[r];
    return acc;
}

#ifndef FDT_WPE
#define FDT_WPE 0
#endif

#if FDT_LB
#define FDT_LAUNCH_BOUNDS __launch_bounds__(FDT_BX * FDT_BY * FDT_BZ)
#else
#define FDT_LAUNCH_BOUNDS
#endif

/* The attribute itself, not __launch_bounds__' second argument: hiprtc's own header does not
 * promise the two-argument form, and clang takes the attribute with or without lb. NVRTC
 * ignores it: __launch_bounds__' second argument there counts blocks per SM, which the
 * NVIDIA space never varies, and a guess at converting waves per SIMD into it would tune
 * something the name does not say; a wpe variant on NVIDIA is its wpe-0 twin's code. */
#if FDT_WPE && defined(__HIPCC_RTC__)
#define FDT_OCCUPANCY __attribute__((amdgpu_waves_per_eu(FDT_WPE)))
#else
#define FDT_OCCUPANCY
#endif

#define FDT_BOUNDS FDT_LAUNCH_BOUNDS FDT_OCCUPANCY

#if FDT_MAP
#define BLOCK_X blockIdx.z
#define BLOCK_Y blockIdx.x
#define BLOCK_Z blockIdx.y
#elif FDT_BAND
/* Blocks start in launch order, x fastest, then y, then z; this renumbers the (y, z) pairs
 * so that launch order walks z inside a band of FDT_BAND block rows before the next band.
 * The last band may be shorter. Unsigned: gridDim.y * gridDim.z can pass 2^31. */
struct fdt_band_block {
    unsigned y, z;
};

__device__ __forceinline__ fdt_band_block fdt_banded(unsigned by, unsigned bz)
{
    const unsigned rows = gridDim.y, planes = gridDim.z;
    const unsigned at = by + rows * bz; /* the pair's place in launch order */
    const unsigned band = at / (FDT_BAND * planes);
    const unsigned in_band = at - band * FDT_BAND * planes;
    const unsigned height = min((unsigned)FDT_BAND, rows - band * FDT_BAND);
    return {band * FDT_BAND + in_band % height, in_band / height};
}

#define BLOCK_X blockIdx.x
#define BLOCK_Y ((int)fdt_banded(blockIdx.y, blockIdx.z).y)
#define BLOCK_Z ((int)fdt_banded(blockIdx.y, blockIdx.z).z)
#else
#define BLOCK_X blockIdx.x
#define BLOCK_Y blockIdx.y
#define BLOCK_Z blockIdx.z
#endif

/* Stores one value of f, or (zvec) one vector of them. */
template <typename T>
__device__ __forceinline__ void store_f(T *p, T v)
{
#if FDT_NT && defined(FDT_CPU)
    *p = v; /* the host has no use for a streaming hint here */
#elif FDT_NT && defined(__HIPCC_RTC__)
    __builtin_nontemporal_store(v, p);
#elif FDT_NT
    __stcs(p, v);
#else
    *p = v;
#endif
}

__device__ __forceinline__ bool interior(int i, int n)
{
    return i >= R && i < n - R;
}

/* The families that give a thread one 16-byte vector of x points (zvec, zroll, xytile): 2
 * doubles or 4 floats, loaded and stored with one wide access where the row allows it. */
#define LANES ((int)(16 / sizeof(real)))

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
template <int BYTES> struct vector_of;
template <> struct vector_of<8> { typedef double2 type; };
template <> struct vector_of<4> { typedef float4 type; };
typedef vector_of<sizeof(real)>::type vec_t;
#else /* clang (hiprtc) and the host compiler: a GCC-style vector */
typedef real vec_t __attribute__((vector_size(16)));
#endif

/* The lanes of one vector, addressable one by one. */
union lanes {
    vec_t v;
    real e[LANES];
};

/* The stride between rows, as the kernel is to read it: the pitch argument where the
 * variant was built for padded rows (FDT_PADDED_ROWS, engine/variant.c), else nx itself, so
 * that one register serves the stride and the bound. Every kernel entry starts with
 * pitch = row_pitch(pitch, nx). Why: with both live, zvec's float variants of four planes a
 * thread hold 48 registers, not 40, and lose a third of their resident warps and 5% of the
 * copy at 512^3 on the H200 (bench/results/h200/issue31/layout/ab_run1.txt). */
__device__ __forceinline__ int row_pitch(int pitch, int nx)
{
#if FDT_PADDED_ROWS
    (void)nx;
    return pitch;
#else
    (void)pitch;
    return nx;
#endif
}

/* Whether every row of every field starts on 16 bytes, so that a vector family may load and
 * store whole vectors (a misaligned one faults on a GPU and is undefined on the host);
 * elsewhere it takes its scalar path. The fields' first points are where the problem's
 * layout puts them (a 256-byte base and the offset), which engine/variant.c compiles in
 * (FDT_UNALIGNED_FIELDS where the offset is off 16 bytes), and which the runner and
 * libfdtune hold every launch to (libfdtune refuses a field off it); the pitch is tested
 * here, where it also tells the compiler that the rows are whole vectors. Not the
 * addresses themselves: that test alone cost zvec's float variants 8 registers a thread
 * and 1 to 5% of the copy on the H200 (bench/results/h200/issue31/layout/ab_run2.txt). */
#ifndef FDT_UNALIGNED_FIELDS
#define FDT_UNALIGNED_FIELDS 0
#endif
__device__ __forceinline__ bool rows_aligned(int pitch)
{
    return !FDT_UNALIGNED_FIELDS && pitch % LANES == 0;
}

/* Whether a whole vector at p would be misaligned where that goes unseen: on the host, x86
 * reads and writes it as it is (or faults, by the instruction the compiler picks), where a
 * GPU faults. So the cpu backend's build makes every misaligned whole vector of global
 * memory NaNs, loaded or stored, which verification catches. A GPU's build has none of it:
 * even a test that is always false moved zvec's registers under NVRTC. */
#ifdef FDT_CPU
__device__ __forceinline__ bool misaligned_on_host(const real *p)
{
    return (unsigned long long)(const void *)p % 16 != 0;
}

__device__ __forceinline__ lanes nan_lanes()
{
    lanes l;
#pragma unroll
    for (int e = 0; e < LANES; e++)
        l.e[e] = (real)__builtin_nan("");
    return l;
}
#endif

/* The whole vector at p of global memory, which must start on 16 bytes (rows_aligned). */
__device__ __forceinline__ vec_t vector_at(const real *p)
{
#ifdef FDT_CPU
    if (misaligned_on_host(p))
        return nan_lanes().v;
#endif
    return *reinterpret_cast<const vec_t *>(p);
}

/* The row's vector at pos; in an unaligned row lanes past the row's end are not read. In an
 * aligned row (rows_aligned) the lanes past nx are the row's padding, inside its pitch. */
template <bool ALIGNED>
__device__ __forceinline__ lanes load_lanes(const real *u, idx_t pos, int in_row)
{
    lanes l;
    if (ALIGNED)
        l.v = vector_at(u + pos);
    else
#pragma unroll
        for (int e = 0; e < LANES; e++)
            l.e[e] = e < in_row ? u[pos + e] : 0;
    return l;
}

/* Row's vector v at p (first point i0) with R points on each side: row[R + e] is lane e, and
 * the R outside the vector on each side come from memory (0 past the row's ends). */
__device__ __forceinline__ void lanes_with_x_halo(const real *u, idx_t p, int i0, int nx,
                                                  const lanes &v, real *row)
{
#pragma unroll
    for (int e = 0; e < LANES; e++)
        row[R + e] = v.e[e];
#pragma unroll
    for (int r = 1; r <= R; r++) {
        row[R - r] = i0 - r >= 0 ? u[p - r] : 0;
        row[R + LANES - 1 + r] = i0 + LANES - 1 + r < nx ? u[p + LANES - 1 + r] : 0;
    }
}

/* Stores the vector out whose first point is i0: one wide store where every lane is an
 * interior point of an aligned row (whole), else only the interior lanes one by one. */
__device__ __forceinline__ void store_lanes(real *dst, const lanes &out, int i0, int nx,
                                            bool whole)
{
#ifdef FDT_CPU
    if (whole && misaligned_on_host(dst)) {
#pragma unroll
        for (int e = 0; e < LANES; e++)
            dst[e] = nan_lanes().e[e];
        return;
    }
#endif
    if (whole) {
        store_f(reinterpret_cast<vec_t *>(dst), out.v);
        return;
    }
#pragma unroll
    for (int e = 0; e < LANES; e++)
        if (interior(i0 + e, nx))
            store_f(dst + e, out.e[e]);
}

/* The dynamic shared memory a launch of this module must give, in bytes, which the cuda
 * backend reads at load (cuModuleGetGlobal) and launches with: FDT_SHARED_BYTES, which
 * engine/variant.c defines for the ring alone. Every module built from this file declares
 * it, so that the lookup finds it (compute-sanitizer counts a failed one as an error). */
#ifndef FDT_SHARED_BYTES
#define FDT_SHARED_BYTES 0
#endif
extern "C" {
__device__ unsigned fdt_dynamic_shared = FDT_SHARED_BYTES;
}

#define FDT_KERNEL_ARGS \
    real *__restrict__ f, const real *__restrict__ u, int nx, int ny, int nz, int pitch, real cx, \
        real cy, real cz
