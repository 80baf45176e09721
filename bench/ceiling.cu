// ceiling.cu - what a copy of the stencil's own points costs on this GPU, beside the
// device-to-device copy that fdtune bench takes as its ceiling.
//
// A Laplacian kernel reads u and writes only f's interior: the R = 1 boundary points of f are
// never written. In x those points share 32-byte sectors with interior points, so every row
// of f ends in two partially written sectors. This program times, side by side in one run:
//   memcpyDtoD          cudaMemcpyAsync, the ceiling fdtune bench reports against
//   copy     rows       every point of every row, one 16-byte vector per thread
//   copy     interior   the same, but only f's interior points written (boundary untouched)
//   scalar   rows / interior: the same two with one 8-byte point per thread
// and prints each time as the stencil's effective bandwidth (fdtune's formula, R = 1) over
// the memcpy's: a stencil kernel that leaves the boundary untouched moves at least what
// "copy interior" moves. Double precision; nx must be even.
//
// PAD_MB (default 0) allocates that much between u and f, to see whether where f lands
// relative to u matters.
//
// MODE (default plain) times the same table in several L2 states of f, made by
// kernels_src/persist.hip (cache mode "persist"):
//   persist  plain; after fdt_persist_edges; after its release; persisted again; after
//            cudaCtxResetPersistingL2Cache: whether each way back really restores plain
//   leave    plain; after fdt_persist_edges; then exits without releasing, so that the next
//            process shows whether the state outlives the context
//
//   nvcc -O3 -arch=sm_90 -o ceiling bench/ceiling.cu && ./ceiling 256 256 256 [PAD_MB [MODE]]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cstring>
#include <cuda_runtime.h>

#define FDT_REAL double
#define FDT_IDX long long
#define FDT_RADIUS 1
#include "../kernels_src/common.h"
#include "../kernels_src/persist.hip"

#include "cuda_check.h"

// One thread per PER points of row (j, k); ONLY_INTERIOR skips f's boundary points.
template <int PER, bool ONLY_INTERIOR>
__global__ void copy_rows(double *__restrict__ f, const double *__restrict__ u, int nx, int ny, int nz)
{
    const int i = PER * (threadIdx.x + blockIdx.x * blockDim.x), j = blockIdx.y, k = blockIdx.z;
    if (i >= nx || !interior(j, ny) || !interior(k, nz))
        return;
    const size_t p = i + (size_t)nx * (j + (size_t)ny * k);
    if (PER == 1) {
        if (!ONLY_INTERIOR || interior(i, nx))
            f[p] = u[p];
        return;
    }
    const double2 v = *reinterpret_cast<const double2 *>(u + p);
    if (!ONLY_INTERIOR || (interior(i, nx) && interior(i + 1, nx))) {
        *reinterpret_cast<double2 *>(f + p) = v;
        return;
    }
    if (interior(i, nx))
        f[p] = v.x;
    if (interior(i + 1, nx))
        f[p + 1] = v.y;
}

struct candidate {
    const char *name;
    void (*kernel)(double *, const double *, int, int, int);
    int per;
    std::vector<float> ms;
};

struct grid3 {
    int nx, ny, nz;
    size_t bytes;
    double *u, *f;
};

static void launch(const grid3 &g, const candidate &c)
{
    if (!c.kernel) {
        CHECK(cudaMemcpyAsync(g.f, g.u, g.bytes, cudaMemcpyDeviceToDevice));
        return;
    }
    const int threads = 128;
    dim3 grid((g.nx / c.per + threads - 1) / threads, g.ny, g.nz);
    c.kernel<<<grid, threads>>>(g.f, g.u, g.nx, g.ny, g.nz);
}

// As fdtune bench: an untimed launch ahead of each sample, 10 launches per sample,
// candidates in rotating rounds so that drift hits all alike.
static void time_table(const grid3 &g, const char *state)
{
    std::vector<candidate> cs = {
        {"memcpyDtoD", nullptr, 0, {}},
        {"copy rows (16-byte vectors)", copy_rows<2, false>, 2, {}},
        {"copy interior (16-byte vectors)", copy_rows<2, true>, 2, {}},
        {"scalar copy rows", copy_rows<1, false>, 1, {}},
        {"scalar copy interior", copy_rows<1, true>, 1, {}},
    };
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    const int rounds = 6, samples = 8, reps = 10;
    for (int r = 0; r < rounds; r++)
        for (size_t n = 0; n < cs.size(); n++) {
            candidate &c = cs[(n + r) % cs.size()];
            for (int s = 0; s < samples; s++) {
                launch(g, c);
                CHECK(cudaEventRecord(start));
                for (int q = 0; q < reps; q++)
                    launch(g, c);
                CHECK(cudaEventRecord(stop));
                CHECK(cudaEventSynchronize(stop));
                float ms;
                CHECK(cudaEventElapsedTime(&ms, start, stop));
                c.ms.push_back(ms / reps);
            }
        }
    CHECK(cudaGetLastError());
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));

    const double ix = g.nx - 2.0, iy = g.ny - 2.0, iz = g.nz - 2.0;
    const double effective = (2 * ix * iy * iz + 2 * (iy * iz + ix * iz + ix * iy)) * sizeof(double);
    double memcpy_us = 0;
    printf("f's L2 state: %s; median of %d samples of %d launches\n", state, rounds * samples, reps);
    printf("%-34s %10s %12s %14s\n", "", "median us", "copy GB/s", "stencil bound");
    for (candidate &c : cs) {
        std::sort(c.ms.begin(), c.ms.end());
        const double us = c.ms[c.ms.size() / 2] * 1e3;
        if (!c.kernel)
            memcpy_us = us;
        // copy GB/s: 2 x bytes moved by a whole copy; stencil bound: the stencil's effective
        // bandwidth at this time, over the memcpy's bandwidth.
        const double copy_gbps = 2.0 * g.bytes / (us * 1e3);
        const double bound = (effective / (us * 1e3)) / (2.0 * g.bytes / (memcpy_us * 1e3));
        printf("%-34s %10.2f %12.1f %13.1f%%\n", c.name, us, copy_gbps, 100 * bound);
    }
    printf("\n");
}

static void persist_edges(const grid3 &g, int release)
{
    const int threads = 256;
    fdt_persist_edges<<<dim3(g.nz, (g.ny + threads - 1) / threads), threads>>>(g.f, g.nx, g.ny,
                                                                               g.nz, release);
    CHECK(cudaDeviceSynchronize());
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 6) {
        fprintf(stderr, "usage: ceiling NX NY NZ [PAD_MB [plain|persist|leave]]\n");
        return 2;
    }
    grid3 g = {atoi(argv[1]), atoi(argv[2]), atoi(argv[3]), 0, nullptr, nullptr};
    const size_t pad_mb = argc >= 5 ? strtoul(argv[4], nullptr, 10) : 0;
    const char *mode = argc == 6 ? argv[5] : "plain";
    if (g.nx < 4 || g.ny < 3 || g.nz < 3 || g.nx % 2) {
        fprintf(stderr, "ceiling: nx must be even and >= 4, ny and nz >= 3\n");
        return 2;
    }
    if (strcmp(mode, "plain") && strcmp(mode, "persist") && strcmp(mode, "leave")) {
        fprintf(stderr, "ceiling: MODE must be plain, persist or leave, not '%s'\n", mode);
        return 2;
    }
    g.bytes = (size_t)g.nx * g.ny * g.nz * sizeof(double);
    void *pad = nullptr;
    CHECK(cudaMalloc(&g.u, g.bytes));
    if (pad_mb)
        CHECK(cudaMalloc(&pad, pad_mb << 20));
    CHECK(cudaMalloc(&g.f, g.bytes));
    CHECK(cudaMemset(g.u, 0, g.bytes));
    CHECK(cudaMemset(g.f, 0, g.bytes));
    printf("shape %dx%dx%d double, %zu MiB between u and f, mode %s\n\n", g.nx, g.ny, g.nz,
           pad_mb, mode);

    time_table(g, "plain");
    if (!strcmp(mode, "plain"))
        return 0;
    persist_edges(g, 0);
    time_table(g, "after fdt_persist_edges");
    if (!strcmp(mode, "leave"))
        return 0;
    persist_edges(g, 1);
    time_table(g, "after fdt_persist_edges with release = 1");
    persist_edges(g, 0);
    time_table(g, "after fdt_persist_edges again");
    CHECK(cudaCtxResetPersistingL2Cache());
    time_table(g, "after cudaCtxResetPersistingL2Cache");
    return 0;
}
