// bench/r4_tile.cu - a prototype for issue 12's radius 4, outside fdtune: is a 2.5D tile (the
// plane's xy tile with its halo in shared memory, each thread's z-window in registers,
// several rows a thread) worth a family? The space's best at 512^3 R=4 reads u 5 to 6 times
// from L2 and is bound by the L2 fabric (bench/results/h100/issue12/r4_bound/). Here the
// tile's shape sets the L2 reads (l2_reads_model: in sectors in x, halo included; rows in y;
// planes in z). Each configuration is verified against a plain kernel (every interior point,
// and the boundary left untouched) and timed beside a device copy in the same run.
//
//   nvcc -O3 -arch=sm_90 -o /tmp/r4_tile bench/r4_tile.cu && /tmp/r4_tile 512 512 512
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

// R and fdt_weight (Fornberg's weights) from the kernels' own header; h = 1 on each axis.
#define FDT_REAL double
#define FDT_IDX long long
#define FDT_RADIUS 4
#include "../kernels_src/common.h"
#include "cuda_check.h"
#include "r4_harness.h"

// Block BX x BY threads; thread (tx, ty) owns VX points in x of rows ty + q*BY (q < MY) of
// the block's tile of BX*VX x BY*MY columns, and walks MZ planes up in z. Two shared tiles
// alternate, so one barrier a plane; the next plane's values are loaded before the current
// one is computed. Needs nx % VX == 0, so that a vector is in the grid whole or not at all.
template <typename T, int VX, int BX, int BY, int MY, int MZ>
__global__ void __launch_bounds__(BX *BY) tile25(T *f, const T *u, int nx, int ny, int nz)
{
    typedef pack<T, VX> vec;
    constexpr int TX = BX * VX, TY = BY * MY, SX = TX + 2 * R, SY = TY + 2 * R;
    constexpr int HY = 2 * R * TX, HX = 2 * R * TY;          // halo points: y rows, x columns
    constexpr int NT = BX * BY, HN = (HY + HX + NT - 1) / NT; // halo points a thread loads
    __shared__ T tiles[2][SY][SX];
    const int tx = threadIdx.x, ty = threadIdx.y, t = tx + BX * ty;
    const int i0 = R + blockIdx.x * TX, j0 = R + blockIdx.y * TY, k0 = R + blockIdx.z * MZ;
    const int kend = min(k0 + MZ, nz - R);
    const size_t sy = nx, sz = (size_t)nx * ny;
    vec zero;
#pragma unroll
    for (int v = 0; v < VX; v++)
        zero.v[v] = 0;

    // Where each of this thread's halo points sits in the tile and in u (-1: none).
    int hs[HN];
    long long hg[HN];
#pragma unroll
    for (int h = 0; h < HN; h++) {
        const int e = t + h * NT;
        int x, y;
        if (e < HY) { // rows j0-R .. j0-1 and j0+TY .. j0+TY+R-1, TX columns each
            const int row = e / TX;
            x = R + e % TX;
            y = row < R ? row : TY + row;
        } else if (e < HY + HX) { // R columns left and right of every tile row
            const int g = e - HY, col = g % (2 * R);
            y = R + g / (2 * R);
            x = col < R ? col : TX + col;
        } else {
            hs[h] = -1;
            hg[h] = 0;
            continue;
        }
        const int gi = i0 - R + x, gj = j0 - R + y;
        const bool in = gi < nx && gj < ny;
        hs[h] = in ? y * SX + x : -1;
        hg[h] = in ? gi + (long long)sy * gj : 0;
    }
    // A vector past the interior but in the grid is loaded (it is a neighbour); only its
    // interior points are written.
    const int i = i0 + tx * VX;
    bool ingrid[MY];
    int jrow[MY];
    size_t col[MY];
#pragma unroll
    for (int q = 0; q < MY; q++) {
        jrow[q] = j0 + ty + q * BY;
        ingrid[q] = i < nx && jrow[q] < ny;
        col[q] = ingrid[q] ? i + sy * jrow[q] : 0;
    }
    auto load = [&](int q, int k) -> vec {
        return ingrid[q] ? *reinterpret_cast<const vec *>(u + col[q] + sz * k) : zero;
    };

    vec win[MY][2 * R + 1], ahead[MY];
    T halo[HN];
#pragma unroll
    for (int q = 0; q < MY; q++) {
#pragma unroll
        for (int d = 0; d < 2 * R; d++)
            win[q][d] = load(q, k0 - R + d);
        ahead[q] = k0 + R < nz ? load(q, k0 + R) : zero;
    }
#pragma unroll
    for (int h = 0; h < HN; h++)
        halo[h] = hs[h] >= 0 ? u[hg[h] + sz * k0] : (T)0;

    for (int k = k0, b = 0; k < kend; k++, b ^= 1) {
        T *s = &tiles[b][0][0];
#pragma unroll
        for (int q = 0; q < MY; q++) {
            win[q][2 * R] = ahead[q];
#pragma unroll
            for (int v = 0; v < VX; v++)
                s[(R + ty + q * BY) * SX + R + tx * VX + v] = win[q][R].v[v];
        }
#pragma unroll
        for (int h = 0; h < HN; h++)
            if (hs[h] >= 0)
                s[hs[h]] = halo[h];
        if (k + 1 < kend) {
#pragma unroll
            for (int q = 0; q < MY; q++)
                ahead[q] = load(q, k + 1 + R);
#pragma unroll
            for (int h = 0; h < HN; h++)
                if (hs[h] >= 0)
                    halo[h] = u[hg[h] + sz * (k + 1)];
        }
        __syncthreads();
#pragma unroll
        for (int q = 0; q < MY; q++) {
            const bool rowin = jrow[q] < ny - R;
#pragma unroll
            for (int v = 0; v < VX; v++) {
                const T *c = s + (R + ty + q * BY) * SX + R + tx * VX + v;
                T acc = (T)(3 * fdt_weight(0)) * win[q][R].v[v];
#pragma unroll
                for (int r = 1; r <= R; r++)
                    acc += (T)fdt_weight(r) * (c[-r] + c[r] + c[-r * SX] + c[r * SX] +
                                      win[q][R - r].v[v] + win[q][R + r].v[v]);
                if (rowin && i + v < nx - R)
                    f[col[q] + v + sz * k] = acc;
            }
#pragma unroll
            for (int d = 0; d < 2 * R; d++)
                win[q][d] = win[q][d + 1];
        }
    }
}

template <typename T, int VX, int BX, int BY, int MY, int MZ>
static void run(const char *precision, problem<T> &p, double copy_ms)
{
    if (p.nx % VX)
        return;
    p.kernel = tile25<T, VX, BX, BY, MY, MZ>;
    p.smem = 0;
    p.block = dim3(BX, BY);
    p.grid = dim3((p.nx - 2 * R + BX * VX - 1) / (BX * VX),
                  (p.ny - 2 * R + BY * MY - 1) / (BY * MY), (p.nz - 2 * R + MZ - 1) / MZ);
    const double err = verify(p);
    const float ms = time_ms(launch_kernel<T>, &p, 20);
    const double gbps = 2.0 * p.n * sizeof(T) / ms / 1e6;
    const double sectors = BX * VX * sizeof(T) / 32.0; // a tile row's, halo aside
    printf("%s tile25:%dx%dx1:vx%d:my%d:mz%d  max_error=%.3g  %.4f ms  %.1f GB/s  "
           "over_copy=%.4f  l2_reads_model=%.2f\n",
           precision, BX, BY, VX, MY, MZ, err, ms, gbps, copy_ms / ms,
           (sectors + 2) / sectors * (BY * MY + 2.0 * R) / (BY * MY) * (MZ + 2.0 * R) / MZ);
}

template <typename T> static void shape(const char *precision, int nx, int ny, int nz)
{
    problem<T> p;
    problem_open(p, nx, ny, nz);
    const float copy_ms = time_ms(launch_copy<T>, &p, 20);
    p.kernel = nullptr;
    const float ref_ms = time_ms(launch_reference<T>, &p, 20);
    printf("%s %dx%dx%d: copy %.4f ms %.1f GB/s; plain reference %.4f ms over_copy=%.4f\n",
           precision, nx, ny, nz, copy_ms, 2.0 * p.n * sizeof(T) / copy_ms / 1e6, ref_ms,
           copy_ms / ref_ms);
    constexpr int V = 16 / sizeof(T); // one 16-byte vector
    run<T, 1, 32, 8, 4, 64>(precision, p, copy_ms);
    run<T, 1, 64, 4, 4, 64>(precision, p, copy_ms);
    run<T, 2, 32, 8, 2, 64>(precision, p, copy_ms);
    run<T, 2, 32, 8, 4, 64>(precision, p, copy_ms);
    run<T, 2, 32, 4, 4, 64>(precision, p, copy_ms);
    run<T, 2, 64, 4, 2, 64>(precision, p, copy_ms);
    run<T, 2, 16, 8, 4, 64>(precision, p, copy_ms);
    run<T, 2, 32, 16, 2, 64>(precision, p, copy_ms);
    run<T, V, 16, 8, 2, 64>(precision, p, copy_ms);
    run<T, V, 16, 8, 4, 64>(precision, p, copy_ms);
    run<T, V, 32, 4, 2, 64>(precision, p, copy_ms);
    run<T, V, 32, 8, 2, 64>(precision, p, copy_ms);
    run<T, V, 16, 16, 2, 64>(precision, p, copy_ms);
    run<T, V, 32, 4, 4, 64>(precision, p, copy_ms);
    problem_close(p);
}

int main(int argc, char **argv)
{
    return run_precisions(argc, argv, shape<double>, shape<float>);
}
