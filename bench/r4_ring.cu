// bench/r4_ring.cu - issue 31's first design, outside fdtune: is a ring of plane tiles in
// dynamic shared memory, filled by 16-byte asynchronous copies (cp.async) D planes ahead,
// worth a family at radius 4? xytile (whose prototype is r4_tile.cu) loads the next plane
// into registers and puts it into one of two tiles; a barrier each plane then waits on the
// slowest load of that plane, and the z-window holds 2R + 1 vectors a row in registers. Here
// the copies land in the ring without passing through registers, the barrier waits only on
// the copies issued D planes before, and the upper half of the z-window is read from the
// ring (the planes k + 1 .. k + R are in it already); the lower half stays in registers.
//
// Thread (tx, ty) owns one 16-byte vector column and MY consecutive rows of the tile, so
// the y neighbours of its rows are one column of MY + 2R vectors read once a plane. The ring
// holds N = R + 1 + D slots, each a tile with its halo (x halo in whole vectors); plane p
// goes to slot p % N. Each plane: wait for the copies of plane k + R, one barrier (every
// copy landed, every read of plane k - 1 done), issue plane k + R + D into the slot of plane
// k - 1, compute plane k. Copies of vectors off the grid are zero-filled (src-size 0).
// Needs nx % VX == 0 (rows start on 16 bytes). The AMD counterpart: no cp.async; the same
// ring filled by global loads issued D planes ahead into registers (or buffer_load ... lds
// on gfx90a), with 64-thread single-wavefront tiles whose barrier costs almost nothing.
//
//   nvcc -O3 -arch=sm_90 -o /tmp/r4_ring bench/r4_ring.cu && /tmp/r4_ring 512 512 512
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define FDT_REAL double
#define FDT_IDX long long
#define FDT_RADIUS 4
#include "../kernels_src/common.h"
#include "cuda_check.h"
#include "r4_harness.h"

__device__ __forceinline__ void copy_async16(void *shared, const void *global, int bytes)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(shared);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(global),
                 "r"(bytes));
}

__device__ __forceinline__ void copies_commit()
{
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int PENDING> __device__ __forceinline__ void copies_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING));
}

template <typename T> struct ring_shape {
    static constexpr int VX = 16 / sizeof(T);
    static constexpr int HX = VX * ((R + VX - 1) / VX), HV = HX / VX;
};

template <typename T, int BX, int BY, int MY, int MZ, int D>
__global__ void __launch_bounds__(BX *BY) ring25(T *f, const T *u, int nx, int ny, int nz)
{
    typedef pack<T, ring_shape<T>::VX> vec;
    constexpr int VX = ring_shape<T>::VX, HX = ring_shape<T>::HX, HV = ring_shape<T>::HV;
    constexpr int TX = BX * VX, TY = BY * MY, SX = TX + 2 * HX, SY = TY + 2 * R;
    constexpr int PLANE = SX * SY, N = R + 1 + D, ROWV = SX / VX, PV = ROWV * SY;
    constexpr int NT = BX * BY, CP = (PV + NT - 1) / NT; // copies a thread issues a plane
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    T *ring = reinterpret_cast<T *>(shared_bytes);
    const int tx = threadIdx.x, ty = threadIdx.y, tid = tx + BX * ty;
    const int i0 = blockIdx.x * TX, j0 = blockIdx.y * TY, k0 = R + blockIdx.z * MZ;
    if (k0 >= nz - R)
        return;
    const int k1 = min(k0 + MZ, nz - R), last = k1 + R; // planes k0 - R .. last - 1 are read
    const size_t slice = (size_t)nx * ny;

    // This thread's copies: where each lands in a slot (-1: none), where it comes from in a
    // plane, and whether it is on the grid (a whole vector is, or is not: nx % VX == 0).
    int to[CP], from[CP];
    bool on[CP];
#pragma unroll
    for (int c = 0; c < CP; c++) {
        const int e = tid + c * NT, row = e / ROWV, col = e % ROWV;
        const int gi = i0 - HX + VX * col, gj = j0 - R + row;
        on[c] = e < PV && gi >= 0 && gi < nx && gj >= 0 && gj < ny;
        to[c] = e < PV ? row * SX + VX * col : -1;
        from[c] = on[c] ? gi + nx * gj : 0;
    }
    auto issue = [&](int p) {
        if (p < last) {
            T *slot = ring + (p % N) * PLANE;
#pragma unroll
            for (int c = 0; c < CP; c++)
                if (to[c] >= 0)
                    copy_async16(slot + to[c], u + from[c] + slice * p, on[c] ? 16 : 0);
        }
        copies_commit(); // empty groups too: the count of groups pending stays one a plane
    };

    const int i = i0 + VX * tx, jtop = j0 + MY * ty;
    const int own = (R + MY * ty) * SX + HX + VX * tx; // row 0's vector in a slot
    vec lo[MY][R + 1]; // lo[q][r]: plane k - r of row q (r >= 1)
#pragma unroll
    for (int q = 0; q < MY; q++) {
        const bool in = i < nx && jtop + q < ny;
#pragma unroll
        for (int r = 1; r <= R; r++)
            if (in)
                lo[q][r] = *reinterpret_cast<const vec *>(u + i + (size_t)nx * (jtop + q) +
                                                          slice * (k0 - r));
            else
#pragma unroll
                for (int v = 0; v < VX; v++)
                    lo[q][r].v[v] = 0;
    }
    for (int p = k0; p < k0 + R + D; p++)
        issue(p);

    const T c0 = (T)(3 * fdt_weight(0));
    for (int k = k0; k < k1; k++) {
        copies_wait<D - 1>(); // plane k + R has landed, for this thread's copies
        __syncthreads();      // and for everyone's; plane k - 1 is read no more
        issue(k + R + D);
        const T *s = ring + (k % N) * PLANE + own;
        vec col[MY + 2 * R]; // rows -R .. MY + R - 1 of this thread's column
#pragma unroll
        for (int y = 0; y < MY + 2 * R; y++)
            col[y] = *reinterpret_cast<const vec *>(s + (y - R) * SX);
#pragma unroll
        for (int q = 0; q < MY; q++) {
            T row[2 * HX + VX];
#pragma unroll
            for (int h = 0; h <= 2 * HV; h++) {
                const vec x = h == HV ? col[q + R]
                                      : *reinterpret_cast<const vec *>(s + q * SX + VX * (h - HV));
#pragma unroll
                for (int v = 0; v < VX; v++)
                    row[VX * h + v] = x.v[v];
            }
            vec up[R + 1];
#pragma unroll
            for (int r = 1; r <= R; r++)
                up[r] = *reinterpret_cast<const vec *>(ring + ((k + r) % N) * PLANE + own +
                                                       q * SX);
            vec out;
#pragma unroll
            for (int v = 0; v < VX; v++) {
                T acc = c0 * row[HX + v];
#pragma unroll
                for (int r = 1; r <= R; r++)
                    acc += (T)fdt_weight(r) *
                           (row[HX + v - r] + row[HX + v + r] + col[q + R - r].v[v] +
                            col[q + R + r].v[v] + up[r].v[v] + lo[q][r].v[v]);
                out.v[v] = acc;
            }
            const int j = jtop + q;
            if (j >= R && j < ny - R) {
                T *at = f + i + (size_t)nx * j + slice * k;
                if (i >= R && i + VX <= nx - R)
                    *reinterpret_cast<vec *>(at) = out;
                else
#pragma unroll
                    for (int v = 0; v < VX; v++)
                        if (i + v >= R && i + v < nx - R)
                            at[v] = out.v[v];
            }
#pragma unroll
            for (int r = R; r > 1; r--)
                lo[q][r] = lo[q][r - 1];
            lo[q][1] = col[q + R];
        }
    }
    copies_wait<0>(); // no copy outlives the block
}

template <typename T, int BX, int BY, int MY, int MZ, int D>
static void run(const char *precision, problem<T> &p, double copy_ms)
{
    constexpr int VX = ring_shape<T>::VX, HX = ring_shape<T>::HX;
    constexpr int TX = BX * VX, TY = BY * MY;
    if (p.nx % VX)
        return;
    p.kernel = ring25<T, BX, BY, MY, MZ, D>;
    p.block = dim3(BX, BY);
    p.grid = dim3((p.nx + TX - 1) / TX, (p.ny + TY - 1) / TY, (p.nz - 2 * R + MZ - 1) / MZ);
    p.smem = sizeof(T) * (R + 1 + D) * (TX + 2 * HX) * (TY + 2 * R);
    CHECK(cudaFuncSetAttribute(p.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)p.smem));
    cudaFuncAttributes a;
    CHECK(cudaFuncGetAttributes(&a, p.kernel));
    int blocks = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, p.kernel, BX * BY, p.smem));
    const double err = verify(p);
    const float ms = time_ms(launch_kernel<T>, &p, 20);
    const double gbps = 2.0 * p.n * sizeof(T) / ms / 1e6;
    printf("%s ring25:%dx%dx1:my%d:mz%d:ahead%d  max_error=%.3g  %.4f ms  %.1f GB/s  "
           "over_copy=%.4f  regs=%d smem=%zu blocks/SM=%d\n",
           precision, BX, BY, MY, MZ, D, err, ms, gbps, copy_ms / ms, a.numRegs, p.smem,
           blocks);
    p.smem = 0;
}

template <typename T> static void shape(const char *precision, int nx, int ny, int nz)
{
    problem<T> p;
    problem_open(p, nx, ny, nz);
    const float copy_ms = time_ms(launch_copy<T>, &p, 20);
    printf("%s %dx%dx%d: copy %.4f ms %.1f GB/s\n", precision, nx, ny, nz, copy_ms,
           2.0 * p.n * sizeof(T) / copy_ms / 1e6);
    run<T, 16, 4, 4, 64, 1>(precision, p, copy_ms);
    run<T, 16, 4, 4, 64, 2>(precision, p, copy_ms);
    run<T, 16, 4, 4, 64, 3>(precision, p, copy_ms);
    run<T, 16, 8, 4, 64, 2>(precision, p, copy_ms);
    run<T, 16, 8, 2, 64, 2>(precision, p, copy_ms);
    run<T, 32, 4, 4, 64, 2>(precision, p, copy_ms);
    run<T, 32, 2, 4, 64, 2>(precision, p, copy_ms);
    run<T, 16, 4, 8, 64, 2>(precision, p, copy_ms);
    run<T, 16, 4, 4, 32, 2>(precision, p, copy_ms);
    run<T, 16, 4, 4, 128, 2>(precision, p, copy_ms);
    run<T, 8, 8, 4, 64, 2>(precision, p, copy_ms);
    problem_close(p);
}

int main(int argc, char **argv)
{
    return run_precisions(argc, argv, shape<double>, shape<float>);
}
