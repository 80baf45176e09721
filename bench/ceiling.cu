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
//   nvcc -O3 -arch=sm_90 -o ceiling bench/ceiling.cu && ./ceiling 256 256 256 [PAD_MB]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x)                                                                  \
    do {                                                                          \
        cudaError_t e_ = (x);                                                     \
        if (e_ != cudaSuccess) {                                                  \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

__device__ bool interior(int i, int n) { return i >= 1 && i < n - 1; }

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

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: ceiling NX NY NZ [PAD_MB]\n");
        return 2;
    }
    const int nx = atoi(argv[1]), ny = atoi(argv[2]), nz = atoi(argv[3]);
    const size_t pad_mb = argc == 5 ? strtoul(argv[4], nullptr, 10) : 0;
    if (nx < 4 || ny < 3 || nz < 3 || nx % 2) {
        fprintf(stderr, "ceiling: nx must be even and >= 4, ny and nz >= 3\n");
        return 2;
    }
    const size_t points = (size_t)nx * ny * nz, bytes = points * sizeof(double);
    double *u, *f;
    void *pad = nullptr;
    CHECK(cudaMalloc(&u, bytes));
    if (pad_mb)
        CHECK(cudaMalloc(&pad, pad_mb << 20));
    CHECK(cudaMalloc(&f, bytes));
    CHECK(cudaMemset(u, 0, bytes));
    CHECK(cudaMemset(f, 0, bytes));

    std::vector<candidate> cs = {
        {"memcpyDtoD", nullptr, 0, {}},
        {"copy rows (16-byte vectors)", copy_rows<2, false>, 2, {}},
        {"copy interior (16-byte vectors)", copy_rows<2, true>, 2, {}},
        {"scalar copy rows", copy_rows<1, false>, 1, {}},
        {"scalar copy interior", copy_rows<1, true>, 1, {}},
    };
    auto launch = [&](const candidate &c) {
        if (!c.kernel) {
            CHECK(cudaMemcpyAsync(f, u, bytes, cudaMemcpyDeviceToDevice));
            return;
        }
        const int threads = 128;
        dim3 grid((nx / c.per + threads - 1) / threads, ny, nz);
        c.kernel<<<grid, threads>>>(f, u, nx, ny, nz);
    };
    // As fdtune bench: an untimed launch ahead of each sample, 10 launches per sample,
    // candidates in rotating rounds so that drift hits all alike.
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    const int rounds = 6, samples = 8, reps = 10;
    for (int r = 0; r < rounds; r++)
        for (size_t n = 0; n < cs.size(); n++) {
            candidate &c = cs[(n + r) % cs.size()];
            for (int s = 0; s < samples; s++) {
                launch(c);
                CHECK(cudaEventRecord(start));
                for (int q = 0; q < reps; q++)
                    launch(c);
                CHECK(cudaEventRecord(stop));
                CHECK(cudaEventSynchronize(stop));
                float ms;
                CHECK(cudaEventElapsedTime(&ms, start, stop));
                c.ms.push_back(ms / reps);
            }
        }
    CHECK(cudaGetLastError());

    const double ix = nx - 2.0, iy = ny - 2.0, iz = nz - 2.0;
    const double effective = (2 * ix * iy * iz + 2 * (iy * iz + ix * iz + ix * iy)) * sizeof(double);
    double memcpy_us = 0;
    printf("shape %dx%dx%d double, %zu MiB between u and f; median of %d samples of %d launches\n",
           nx, ny, nz, pad_mb, rounds * samples, reps);
    printf("%-34s %10s %12s %14s\n", "", "median us", "copy GB/s", "stencil bound");
    for (candidate &c : cs) {
        std::sort(c.ms.begin(), c.ms.end());
        const double us = c.ms[c.ms.size() / 2] * 1e3;
        if (!c.kernel)
            memcpy_us = us;
        // copy GB/s: 2 x bytes moved by a whole copy; stencil bound: the stencil's effective
        // bandwidth at this time, over the memcpy's bandwidth.
        const double copy_gbps = 2.0 * bytes / (us * 1e3);
        const double bound = (effective / (us * 1e3)) / (2.0 * bytes / (memcpy_us * 1e3));
        printf("%-34s %10.2f %12.1f %13.1f%%\n", c.name, us, copy_gbps, 100 * bound);
    }
    return 0;
}
