// kernel3_sweep.cu - a plain sweep of the seeds' kernel 3 over block shapes, tiling factor m
// and launch bounds, on one grid shape, beside the device copy and the seeds' kernel 1.
//
// Why: issue 12 asks for evidence that there is "no shape where a plain sweep of the seeds'
// kernel 3 over blocks and m beats the best" that fdtune finds. This program is that plain
// sweep, independent of the tuner (no NVRTC, no kernels_src/, none of its verification or
// timing code), so its best can be set beside `fdtune bench` on the same shape.
//
// What it runs (radius 1, the 7-point Laplacian; u(i,j,k) = u[i + j*nx + k*nx*ny]):
//   kernel1   the seed blog's laplacian_kernel (kernel 1, baseline), ported from HIP as written,
//             at 256x1x1, the seeds' default block.
//   kernel3   the blog's kernel 3 (loop tiling by m in y, every load of u in ascending
//             address order), ported from HIP with the same index math (int offsets summed
//             into a size_t pos), the same loads in the same order and the same grid
//             ((n - 1) / block + 1, y divided by block.y * m). m is a template parameter
//             (the blog's #define) instantiated for m in {1, 2, 4, 8, 16}; its loops over m
//             carry #pragma unroll (the blog relies on the compiler unrolling them, which
//             keeps Lu[m] in registers; nothing else changes).
//   kernel3:lb  the same kernel with __launch_bounds__(bx*by*bz), as blog part 3 adds to stop
//             register spills at m = 16.
// Blocks (bx, by, bz): bx in {32, 64, ..., 1024}, by and bz in {1, 2, 4, 8, 16}, 32 <= threads
// <= 1024, for every m, with and without launch bounds.
//
// The guard. Kernel 3 as the blog wrote it reads rows j .. j+m-1 of u unguarded, so it is
// only in bounds where ny is a multiple of block.y * m (the blog notes that it is written for
// such ny only); elsewhere the last block row reads rows past ny-1 (other
// planes, and past the end of u in the last planes). Where ny % (by*m) == 0 the kernel run
// is the blog's, unchanged. Elsewhere it is the same kernel with one extra test per thread:
// a thread whose tile lies wholly inside y (j + m <= ny) runs the blog's code unchanged; the
// few others (the last tile row) run a guarded copy that exits if none of its rows is
// interior (j >= ny - 1) and skips every load of a row j + n >= ny (those rows only feed
// results that are never stored). The output's "# guarded copy" line lists the by*m that take
// it; the second copy costs registers (double, m = 16: 72 against the blog's 64). Every
// other access of the blog's kernel is already in bounds (i, k interior; the y - 1 and y + 1
// loads carry the blog's own bound checks). The index math is the blog's int arithmetic, so
// shapes with nx*ny*nz > INT_MAX are refused rather than overflowed.
//
// Verification: kernel 1's output is checked on the host against a double-precision
// reference; every kernel 3 variant is run once on f poisoned with all-ones bytes (NaN) and
// compared on the device with kernel 1's output: max |f - f1| over interior points / max
// |ref| must be <= 1e-12 (double) or 1e-5 (float), as fdtune's own verification, and no
// boundary point of f may be written. A wrong variant is printed as wrong, still timed, and
// never the best. A variant that cannot launch (more threads than its registers allow, which
// is what launch bounds fix) is printed as skipped.
//
// Timing: cudaEvents on the default stream; per candidate 3 warm-up launches, a calibration
// that picks enough back-to-back launches for one sample to take >= 20 ms, then 7 samples
// (each after one untimed launch); the median per launch. After the sweep the device copy
// (cudaMemcpyAsync DtoD of one grid), kernel 1 and the best variant are timed again in 7
// interleaved rounds, and the final line quotes those, side by side.
//
// Bandwidth: effective bytes as fdtune computes them (tuner/engine/measure.c,
// fdt_effective_bytes, R = 1): (interior + arms + interior) * sizeof(real), interior =
// (nx-2)(ny-2)(nz-2), arms = 2((ny-2)(nz-2) + (nx-2)(nz-2) + (nx-2)(ny-2)); the copy's is
// 2 x the grid's bytes. GB/s = bytes / seconds / 1e9.
//
// Output: `baseline` lines for copy and kernel 1, then one line per variant
//   variant kernel3:BXxBYxBZ:mM[:lb] median_ms=... gbps=... ok|wrong
// (or `skipped kernel3:... reason=...`), `final` lines for the interleaved rounds, and
//   sweep3 shape=NXxNYxNZ precision=P variants=N wrong=N skipped=N copy_gbps=X kernel1_gbps=X
//          best_gbps=X best_over_copy=X best_over_kernel1=X best=kernel3:...
// (one line) where variants counts those verified and timed (wrong ones included) and
// skipped those never run. Exit status 0; 1 if kernel 1 or any variant is wrong or CUDA fails.
// One shape should take about 1.5 minutes on an H100 (an estimate: 540 variants at ~0.15 s).
//
//   nvcc -O3 -arch=sm_90 -o kernel3_sweep bench/kernel3_sweep.cu
//   ./kernel3_sweep 512 512 512 [float|double]        (default double)
//   bench/h100.sh sweep3                               (every shape of $BENCH_SHAPES)
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <cuda_runtime.h>

#include "cuda_check.h"

static const double TARGET_SAMPLE_MS = 20.0; // one sample's launches take at least this long
static const int SAMPLES = 7;                // samples per candidate; the median is quoted
static const int WARMUP = 3;

// ---------------------------------------------------------------------------------------
// The seeds' kernel 1 (blog part 1 and 2), as written.
template <typename T>
__global__ void laplacian_kernel1(T *f, const T *u, int nx, int ny, int nz, T invhx2, T invhy2,
                                  T invhz2, T invhxyz2)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    int j = threadIdx.y + blockIdx.y * blockDim.y;
    int k = threadIdx.z + blockIdx.z * blockDim.z;

    // Exit if this thread is on the boundary
    if (i == 0 || i >= nx - 1 ||
        j == 0 || j >= ny - 1 ||
        k == 0 || k >= nz - 1)
        return;

    const int slice = nx * ny;
    size_t pos = i + nx * j + slice * k;

    // Compute the result of the stencil operation
    f[pos] = u[pos] * invhxyz2
           + (u[pos - 1]     + u[pos + 1]) * invhx2
           + (u[pos - nx]    + u[pos + nx]) * invhy2
           + (u[pos - slice] + u[pos + slice]) * invhz2;
}

// ---------------------------------------------------------------------------------------
// The seeds' kernel 3 (blog part 2, "reordered loads"), after the xz exit. GUARD = false is
// the blog's code; GUARD = true adds the tests described in the header (rows j + n >= ny are
// never read), which only the last tile row in y ever takes. (__host__ too, so that the body
// can be exercised on the host.)
template <typename T, int m, bool GUARD>
__host__ __device__ __forceinline__ void kernel3_body(T *f, const T *u, int nx, int ny, int nz, T invhx2,
                                             T invhy2, T invhz2, T invhxyz2, int i, int j, int k)
{
    // GUARD: no row of this tile is interior in y; nothing to store, nothing to read.
    if (GUARD && j >= ny - 1)
        return;

    const int slice = nx * ny;
    size_t pos = i + nx * j + slice * k;

    // Each thread accumulates m stencils in the y direction
    T Lu[m] = {0};

    // Scalar for reusable data
    T center;

    // z - 1, loop tiled
#pragma unroll
    for (int n = 0; n < m; n++)
        if (!GUARD || j + n < ny)
            Lu[n] += u[pos - slice + n*nx] * invhz2;

    // y - 1
    Lu[0]   += j > 0 ? u[pos - 1*nx] * invhy2 : 0; // bound check

    // x direction, loop tiled
#pragma unroll
    for (int n = 0; n < m; n++) {
        if (!GUARD || j + n < ny) {
            // x - 1
            Lu[n] += u[pos - 1 + n*nx] * invhx2;

            // x
            center = u[pos + n*nx]; // store for reuse
            Lu[n] += center * invhxyz2;

            // x + 1
            Lu[n] += u[pos + 1 + n*nx] * invhx2;

            // reuse: y + 1 for prev n
            if (n > 0) Lu[n-1] += center * invhy2;

            // reuse: y - 1 for next n
            if (n < m - 1) Lu[n+1] += center * invhy2;
        }
    }

    // y + 1
    Lu[m-1]  += j < ny - m ? u[pos + m*nx] * invhy2 : 0; // bound check

    // z + 1, loop tiled
#pragma unroll
    for (int n = 0; n < m; n++)
        if (!GUARD || j + n < ny)
            Lu[n] += u[pos + slice + n*nx] * invhz2;

    // Store only if thread is inside y boundary
#pragma unroll
    for (int n = 0; n < m; n++)
      if (n + j > 0 && n + j < ny - 1)
        f[pos + n*nx] = Lu[n];
}

// The kernel's start as the blog wrote it. SPLIT = false: the blog's kernel (the host runs
// it only where ny % (block.y * m) == 0, so every tile lies inside y); SPLIT = true: tiles
// reaching past ny - 1 take the guarded copy.
template <typename T, int m, bool SPLIT>
__device__ __forceinline__ void kernel3_entry(T *f, const T *u, int nx, int ny, int nz, T invhx2,
                                              T invhy2, T invhz2, T invhxyz2)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    int j = m*(threadIdx.y + blockIdx.y * blockDim.y);
    int k = threadIdx.z + blockIdx.z * blockDim.z;

    // Exit if this thread is on the xz boundary
    if (i == 0 || i >= nx - 1 ||
        k == 0 || k >= nz - 1)
        return;

    if (!SPLIT || j + m <= ny)
        kernel3_body<T, m, false>(f, u, nx, ny, nz, invhx2, invhy2, invhz2, invhxyz2, i, j, k);
    else
        kernel3_body<T, m, true>(f, u, nx, ny, nz, invhx2, invhy2, invhz2, invhxyz2, i, j, k);
}

template <typename T, int m, bool SPLIT>
__global__ void laplacian_kernel3(T *f, const T *u, int nx, int ny, int nz, T invhx2, T invhy2,
                                  T invhz2, T invhxyz2)
{
    kernel3_entry<T, m, SPLIT>(f, u, nx, ny, nz, invhx2, invhy2, invhz2, invhxyz2);
}

// Blog part 3: the same kernel with launch bounds of the block's own thread count.
template <typename T, int m, bool SPLIT, int THREADS>
__global__ void __launch_bounds__(THREADS)
laplacian_kernel3_lb(T *f, const T *u, int nx, int ny, int nz, T invhx2, T invhy2, T invhz2,
                     T invhxyz2)
{
    kernel3_entry<T, m, SPLIT>(f, u, nx, ny, nz, invhx2, invhy2, invhz2, invhxyz2);
}

// ---------------------------------------------------------------------------------------
// Verification on the device: f against kernel 1's output ref. out[0]: max |f - ref| over
// interior points (bits of a non-negative double); out[1]: interior points whose difference
// exceeds tol_abs or is NaN; out[2]: boundary points of f that are not the poison (all-ones
// bytes).
template <typename T>
__device__ __forceinline__ bool is_poison(T v)
{
    unsigned long long b = 0;
    memcpy(&b, &v, sizeof(T));
    return b == (sizeof(T) == 8 ? ~0ull : 0xffffffffull);
}

template <typename T>
__global__ void compare_kernel(const T *f, const T *ref, int nx, int ny, int nz, double tol_abs,
                               unsigned long long *out)
{
    const size_t n = (size_t)nx * ny * nz, slice = (size_t)nx * ny;
    double max_diff = 0;
    unsigned long long bad = 0, boundary = 0;
    for (size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x) {
        const int i = (int)(p % nx), j = (int)((p / nx) % ny), k = (int)(p / slice);
        if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1 && k > 0 && k < nz - 1) {
            const double d = fabs((double)f[p] - (double)ref[p]);
            if (!(d <= tol_abs))
                bad++;
            max_diff = fmax(max_diff, d); // fmax drops a NaN; bad counts it
        } else if (!is_poison(f[p])) {
            boundary++;
        }
    }
    for (int off = 16; off > 0; off /= 2) {
        max_diff = fmax(max_diff, __shfl_down_sync(0xffffffffu, max_diff, off));
        bad += __shfl_down_sync(0xffffffffu, bad, off);
        boundary += __shfl_down_sync(0xffffffffu, boundary, off);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMax(&out[0], (unsigned long long)__double_as_longlong(max_diff));
        atomicAdd(&out[1], bad);
        atomicAdd(&out[2], boundary);
    }
}

// ---------------------------------------------------------------------------------------
template <typename T>
using kernel_fn = void (*)(T *, const T *, int, int, int, T, T, T, T);

template <typename T, int m, bool SPLIT>
static kernel_fn<T> pick_lb(int lb_threads)
{
    switch (lb_threads) {
    case 0: return laplacian_kernel3<T, m, SPLIT>;
    case 32: return laplacian_kernel3_lb<T, m, SPLIT, 32>;
    case 64: return laplacian_kernel3_lb<T, m, SPLIT, 64>;
    case 128: return laplacian_kernel3_lb<T, m, SPLIT, 128>;
    case 256: return laplacian_kernel3_lb<T, m, SPLIT, 256>;
    case 512: return laplacian_kernel3_lb<T, m, SPLIT, 512>;
    case 1024: return laplacian_kernel3_lb<T, m, SPLIT, 1024>;
    }
    return nullptr;
}

// Kernel 3 for m, guarded copy or not, launch bounds of lb_threads threads (0: none).
template <typename T>
static kernel_fn<T> pick_kernel3(int m, bool split, int lb_threads)
{
    switch (m) {
    case 1: return split ? pick_lb<T, 1, true>(lb_threads) : pick_lb<T, 1, false>(lb_threads);
    case 2: return split ? pick_lb<T, 2, true>(lb_threads) : pick_lb<T, 2, false>(lb_threads);
    case 4: return split ? pick_lb<T, 4, true>(lb_threads) : pick_lb<T, 4, false>(lb_threads);
    case 8: return split ? pick_lb<T, 8, true>(lb_threads) : pick_lb<T, 8, false>(lb_threads);
    case 16: return split ? pick_lb<T, 16, true>(lb_threads) : pick_lb<T, 16, false>(lb_threads);
    }
    return nullptr;
}

template <typename T>
struct problem {
    int nx, ny, nz;
    size_t points, bytes;
    T *u, *f, *f1; // f1: kernel 1's output, the reference of every variant
    T invhx2, invhy2, invhz2, invhxyz2;
    double effective; // fdt_effective_bytes, R = 1
    double max_ref;   // max |reference| over interior points
    unsigned long long *counters;
};

template <typename T>
struct candidate {
    std::string name;
    kernel_fn<T> fn; // nullptr: the device copy
    dim3 grid, block;
    int reps;
    double median_ms, gbps;
};

template <typename T>
static candidate<T> make_copy()
{
    return {"copy", nullptr, dim3(), dim3(), 1, 0, 0};
}

// The seed's launch: grid = (n - 1) / block + 1, y divided by block.y * m.
template <typename T>
static candidate<T> make_kernel(const problem<T> &p, const std::string &name, kernel_fn<T> fn,
                                int bx, int by, int bz, int m)
{
    dim3 block(bx, by, bz);
    dim3 grid((p.nx - 1) / block.x + 1, (p.ny - 1) / (block.y * m) + 1, (p.nz - 1) / block.z + 1);
    return {name, fn, grid, block, 1, 0, 0};
}

template <typename T>
static void launch(const problem<T> &p, const candidate<T> &c)
{
    if (!c.fn) {
        CHECK(cudaMemcpyAsync(p.f, p.u, p.bytes, cudaMemcpyDeviceToDevice));
        return;
    }
    c.fn<<<c.grid, c.block>>>(p.f, p.u, p.nx, p.ny, p.nz, p.invhx2, p.invhy2, p.invhz2,
                              p.invhxyz2);
}

static cudaEvent_t ev_start, ev_stop;

// One sample: an untimed launch (so the device is busy when start is recorded), then reps
// launches between the events; ms per launch.
template <typename T>
static double time_sample(const problem<T> &p, const candidate<T> &c, int reps)
{
    launch(p, c);
    CHECK(cudaEventRecord(ev_start));
    for (int r = 0; r < reps; r++)
        launch(p, c);
    CHECK(cudaEventRecord(ev_stop));
    CHECK(cudaEventSynchronize(ev_stop));
    CHECK(cudaGetLastError());
    float ms;
    CHECK(cudaEventElapsedTime(&ms, ev_start, ev_stop));
    return (double)ms / reps;
}

// Warm-up, then the number of launches for one sample of >= TARGET_SAMPLE_MS.
template <typename T>
static void calibrate(const problem<T> &p, candidate<T> &c)
{
    for (int w = 0; w < WARMUP; w++)
        launch(p, c);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaGetLastError());
    const double est = time_sample(p, c, 3);
    const double reps = est > 0 ? std::ceil(TARGET_SAMPLE_MS / est) : 1e6;
    c.reps = (int)std::min(std::max(reps, 1.0), 1e6);
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <typename T>
static double gbps_of(const problem<T> &p, const candidate<T> &c, double ms)
{
    const double bytes = c.fn ? p.effective : 2.0 * p.bytes;
    return bytes / (ms * 1e-3) / 1e9;
}

template <typename T>
static void measure(const problem<T> &p, candidate<T> &c)
{
    calibrate(p, c);
    std::vector<double> ms;
    for (int s = 0; s < SAMPLES; s++)
        ms.push_back(time_sample(p, c, c.reps));
    c.median_ms = median(ms);
    c.gbps = gbps_of(p, c, c.median_ms);
}

// f (a variant's output, written over poisoned f) against kernel 1's output, on the device;
// the relative error is max |f - f1| / max |ref|, as fdtune's verification.
template <typename T>
static bool compare_with_kernel1(const problem<T> &p, double tol, double *rel,
                                 unsigned long long *bad, unsigned long long *boundary)
{
    CHECK(cudaMemset(p.counters, 0, 3 * sizeof(unsigned long long)));
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    compare_kernel<T><<<sms * 8, 256>>>(p.f, p.f1, p.nx, p.ny, p.nz, tol * p.max_ref,
                                        p.counters);
    CHECK(cudaGetLastError());
    unsigned long long h[3];
    CHECK(cudaMemcpy(h, p.counters, sizeof h, cudaMemcpyDeviceToHost));
    double max_diff;
    memcpy(&max_diff, &h[0], sizeof max_diff);
    *rel = max_diff / p.max_ref;
    *bad = h[1];
    *boundary = h[2];
    return h[1] == 0 && h[2] == 0 && *rel <= tol;
}

// Kernel 1's output (in p.f1) against a double-precision host reference; sets p.max_ref.
template <typename T>
static bool verify_kernel1(problem<T> &p, const std::vector<T> &hu, double tol)
{
    std::vector<T> hf(p.points);
    CHECK(cudaMemcpy(hf.data(), p.f1, p.bytes, cudaMemcpyDeviceToHost));
    const int nx = p.nx, ny = p.ny, nz = p.nz;
    const size_t line = nx, slice = (size_t)nx * ny;
    const double cx = p.invhx2, cy = p.invhy2, cz = p.invhz2, c0 = p.invhxyz2;
    double max_err = 0, max_ref = 0;
    size_t boundary = 0;
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                const size_t c = i + line * j + slice * k;
                if (i == 0 || i == nx - 1 || j == 0 || j == ny - 1 || k == 0 || k == nz - 1) {
                    unsigned long long b = 0;
                    memcpy(&b, &hf[c], sizeof(T));
                    if (b != (sizeof(T) == 8 ? ~0ull : 0xffffffffull))
                        boundary++;
                    continue;
                }
                const double ref = c0 * hu[c] + cx * ((double)hu[c - 1] + hu[c + 1])
                                 + cy * ((double)hu[c - line] + hu[c + line])
                                 + cz * ((double)hu[c - slice] + hu[c + slice]);
                const double o = hf[c];
                const double e = std::isnan(o) ? INFINITY : std::fabs(o - ref);
                max_err = std::max(max_err, e);
                max_ref = std::max(max_ref, std::fabs(ref));
            }
    p.max_ref = max_ref > 0 ? max_ref : 1;
    const double rel = max_err / p.max_ref;
    const bool ok = rel <= tol && boundary == 0;
    printf("# kernel1 against the host reference: max_rel_error=%.3g (tolerance %.0e) "
           "boundary_written=%zu %s\n", rel, tol, boundary, ok ? "ok" : "wrong");
    return ok;
}

template <typename T>
static int run(int nx, int ny, int nz, const char *precision)
{
    problem<T> p{};
    p.nx = nx, p.ny = ny, p.nz = nz;
    p.points = (size_t)nx * ny * nz;
    p.bytes = p.points * sizeof(T);
    // The seed's coefficients for spacings hx = 1, hy = 1/2, hz = 1/4: exact, and distinct
    // in x, y and z so that a load in the wrong direction shows.
    const double hx = 1.0, hy = 0.5, hz = 0.25;
    p.invhx2 = (T)1. / (T)hx / (T)hx;
    p.invhy2 = (T)1. / (T)hy / (T)hy;
    p.invhz2 = (T)1. / (T)hz / (T)hz;
    p.invhxyz2 = (T)(-2. * (p.invhx2 + p.invhy2 + p.invhz2));
    const double ix = nx - 2.0, iy = ny - 2.0, iz = nz - 2.0;
    const double interior = ix * iy * iz, arms = 2.0 * (iy * iz + ix * iz + ix * iy);
    p.effective = (interior + arms + interior) * sizeof(T);
    const double tol = sizeof(T) == 4 ? 1e-5 : 1e-12;

    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("# kernel3_sweep %dx%dx%d %s on %s: %d SMs, %.0f MiB L2; effective bytes %.0f, "
           "grid bytes %zu\n", nx, ny, nz, precision, prop.name, prop.multiProcessorCount,
           prop.l2CacheSize / 1048576.0, p.effective, p.bytes);

    CHECK(cudaMalloc(&p.u, p.bytes));
    CHECK(cudaMalloc(&p.f, p.bytes));
    CHECK(cudaMalloc(&p.f1, p.bytes));
    CHECK(cudaMalloc(&p.counters, 3 * sizeof(unsigned long long)));
    CHECK(cudaEventCreate(&ev_start));
    CHECK(cudaEventCreate(&ev_stop));

    // u: uniform in [-1, 1), boundary included (the kernels read it).
    std::vector<T> hu(p.points);
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t c = 0; c < p.points; c++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        hu[c] = (T)((double)(s >> 11) * 0x1.0p-52 - 1.0);
    }
    CHECK(cudaMemcpy(p.u, hu.data(), p.bytes, cudaMemcpyHostToDevice));

    // Kernel 1, the reference of every variant, checked against the host.
    candidate<T> copy = make_copy<T>();
    candidate<T> k1 = make_kernel(p, "kernel1:256x1x1", laplacian_kernel1<T>, 256, 1, 1, 1);
    CHECK(cudaMemset(p.f, 0xff, p.bytes));
    launch(p, k1);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(p.f1, p.f, p.bytes, cudaMemcpyDeviceToDevice));
    if (!verify_kernel1(p, hu, tol))
        return 1;
    hu.clear();
    hu.shrink_to_fit();

    measure(p, copy);
    measure(p, k1);
    printf("baseline %s median_ms=%.4f gbps=%.1f\n", copy.name.c_str(), copy.median_ms, copy.gbps);
    printf("baseline %s median_ms=%.4f gbps=%.1f ok\n", k1.name.c_str(), k1.median_ms, k1.gbps);

    const int ms_[] = {1, 2, 4, 8, 16};
    const int bxs[] = {32, 64, 128, 256, 512, 1024};
    const int bys[] = {1, 2, 4, 8, 16};
    std::vector<int> guarded; // the by*m whose variants run the guarded copy
    for (int m : ms_)
        for (int by : bys)
            if (ny % (by * m) && std::find(guarded.begin(), guarded.end(), by * m) == guarded.end())
                guarded.push_back(by * m);
    std::sort(guarded.begin(), guarded.end());
    printf("# guarded copy (ny %% (by*m) != 0) for by*m in {");
    for (size_t g = 0; g < guarded.size(); g++)
        printf("%s%d", g ? "," : "", guarded[g]);
    printf("}\n");
    fflush(stdout);

    int variants = 0, wrong = 0, skipped = 0;
    candidate<T> best{};
    bool have_best = false;
    for (int m : ms_)
        for (int bx : bxs)
            for (int by : bys)
                for (int bz : bys) {
                    const int threads = bx * by * bz;
                    if (threads < 32 || threads > 1024)
                        continue;
                    const bool split = ny % (by * m) != 0;
                    for (int lb : {0, threads}) {
                        char name[64];
                        snprintf(name, sizeof name, "kernel3:%dx%dx%d:m%d%s", bx, by, bz, m,
                                 lb ? ":lb" : "");
                        candidate<T> c = make_kernel(p, name, pick_kernel3<T>(m, split, lb),
                                                     bx, by, bz, m);
                        cudaFuncAttributes attr;
                        CHECK(cudaFuncGetAttributes(&attr, (const void *)c.fn));
                        if (threads > attr.maxThreadsPerBlock) {
                            printf("skipped %s reason=registers:%d_allow_at_most_%d_threads\n",
                                   name, attr.numRegs, attr.maxThreadsPerBlock);
                            skipped++;
                            continue;
                        }
                        CHECK(cudaMemset(p.f, 0xff, p.bytes));
                        launch(p, c);
                        const cudaError_t e = cudaGetLastError();
                        if (e != cudaSuccess) { // a launch error: not sticky, go on
                            printf("skipped %s reason=%s\n", name, cudaGetErrorName(e));
                            skipped++;
                            continue;
                        }
                        CHECK(cudaDeviceSynchronize());
                        double rel;
                        unsigned long long bad, boundary;
                        const bool ok = compare_with_kernel1(p, tol, &rel, &bad, &boundary);
                        measure(p, c);
                        variants++;
                        if (ok) {
                            printf("variant %s median_ms=%.4f gbps=%.1f ok\n", name, c.median_ms,
                                   c.gbps);
                            if (!have_best || c.gbps > best.gbps)
                                best = c, have_best = true;
                        } else {
                            wrong++;
                            printf("variant %s median_ms=%.4f gbps=%.1f wrong\n", name,
                                   c.median_ms, c.gbps);
                            printf("# %s: max_rel_error=%.3g (tolerance %.0e), %llu interior "
                                   "points off, %llu boundary points written\n", name, rel, tol,
                                   bad, boundary);
                        }
                        fflush(stdout);
                    }
                }

    // Copy, kernel 1 and the best again, in interleaved rounds (rotating the order), so that
    // the ratios come from one stretch of time.
    std::vector<candidate<T> *> final_set = {&copy, &k1};
    if (have_best)
        final_set.push_back(&best);
    std::vector<std::vector<double>> ms(final_set.size());
    for (candidate<T> *c : final_set)
        calibrate(p, *c);
    for (int r = 0; r < SAMPLES; r++)
        for (size_t q = 0; q < final_set.size(); q++) {
            const size_t n = (q + r) % final_set.size();
            ms[n].push_back(time_sample(p, *final_set[n], final_set[n]->reps));
        }
    for (size_t n = 0; n < final_set.size(); n++) {
        candidate<T> &c = *final_set[n];
        c.median_ms = median(ms[n]);
        c.gbps = gbps_of(p, c, c.median_ms);
        printf("final %s median_ms=%.4f gbps=%.1f\n", c.name.c_str(), c.median_ms, c.gbps);
    }

    const double best_gbps = have_best ? best.gbps : 0;
    printf("sweep3 shape=%dx%dx%d precision=%s variants=%d wrong=%d skipped=%d copy_gbps=%.1f "
           "kernel1_gbps=%.1f best_gbps=%.1f best_over_copy=%.4f best_over_kernel1=%.4f best=%s\n",
           nx, ny, nz, precision, variants, wrong, skipped, copy.gbps, k1.gbps, best_gbps,
           best_gbps / copy.gbps, best_gbps / k1.gbps, have_best ? best.name.c_str() : "none");

    CHECK(cudaEventDestroy(ev_start));
    CHECK(cudaEventDestroy(ev_stop));
    CHECK(cudaFree(p.counters));
    CHECK(cudaFree(p.f1));
    CHECK(cudaFree(p.f));
    CHECK(cudaFree(p.u));
    return wrong ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: kernel3_sweep NX NY NZ [float|double]\n");
        return 2;
    }
    const long long nx = atoll(argv[1]), ny = atoll(argv[2]), nz = atoll(argv[3]);
    const char *precision = argc == 5 ? argv[4] : "double";
    if (strcmp(precision, "float") && strcmp(precision, "double")) {
        fprintf(stderr, "kernel3_sweep: precision must be float or double, not '%s'\n", precision);
        return 2;
    }
    if (nx < 3 || ny < 3 || nz < 3) {
        fprintf(stderr, "kernel3_sweep: NX, NY and NZ must be >= 3\n");
        return 2;
    }
    if (ny > 65535 || nz > 65535) {
        fprintf(stderr, "kernel3_sweep: NY and NZ must be <= 65535 (grid y and z)\n");
        return 2;
    }
    if ((double)nx * ny * nz > (double)INT_MAX) {
        fprintf(stderr, "kernel3_sweep: NX*NY*NZ must be <= %d: the seeds' kernels index "
                        "with int arithmetic\n", INT_MAX);
        return 2;
    }
    return strcmp(precision, "float") ? run<double>((int)nx, (int)ny, (int)nz, precision)
                                      : run<float>((int)nx, (int)ny, (int)nz, precision);
}
