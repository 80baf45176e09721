// bench/r4_harness.h - what the standalone radius-4 prototypes share: a plain reference
// kernel, 16-byte packs, a device copy, best-of-five event timing, and verification of every
// point (the interior against the reference, the boundary left untouched). A prototype's
// kernel takes (f, u, nx, ny, nz) and is launched with its problem's grid, block and
// dynamic shared bytes. Include after common.h (R, fdt_weight) and cuda_check.h.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

template <typename T>
__global__ void reference(T *f, const T *u, int nx, int ny, int nz)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y, k = blockIdx.z;
    if (i < R || i >= nx - R || j < R || j >= ny - R || k < R || k >= nz - R)
        return;
    const size_t sx = 1, sy = nx, sz = (size_t)nx * ny, c = i + sy * j + sz * k;
    double acc = 3 * fdt_weight(0) * u[c];
    for (int r = 1; r <= R; r++)
        acc += fdt_weight(r) * ((double)u[c - r * sx] + u[c + r * sx] + u[c - r * sy] + u[c + r * sy] +
                       u[c - r * sz] + u[c + r * sz]);
    f[c] = (T)acc;
}

// VX consecutive points of a row, loaded and stored as one access (16 bytes for double2,
// float4).
template <typename T, int VX> struct alignas(sizeof(T) * VX) pack {
    T v[VX];
};

template <typename T>
__global__ void copy16(T *dst, const T *src, size_t n16)
{
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < n16;
         e += (size_t)gridDim.x * blockDim.x)
        reinterpret_cast<int4 *>(dst)[e] = reinterpret_cast<const int4 *>(src)[e];
}

static float time_ms(void (*launch)(void *), void *ctx, int reps)
{
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (int w = 0; w < 3; w++)
        launch(ctx);
    float best = 1e30f;
    for (int s = 0; s < 5; s++) {
        CHECK(cudaEventRecord(a));
        for (int r = 0; r < reps; r++)
            launch(ctx);
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        if (ms / reps < best)
            best = ms / reps;
    }
    CHECK(cudaGetLastError());
    return best;
}

template <typename T> struct problem {
    int nx, ny, nz;
    size_t n;
    T *u, *f, *g;
    void (*kernel)(T *, const T *, int, int, int);
    dim3 grid, block;
    size_t smem; /* dynamic shared bytes */
};

template <typename T> static void launch_kernel(void *ctx)
{
    problem<T> *p = (problem<T> *)ctx;
    p->kernel<<<p->grid, p->block, p->smem>>>(p->f, p->u, p->nx, p->ny, p->nz);
}

template <typename T> static void launch_copy(void *ctx)
{
    problem<T> *p = (problem<T> *)ctx;
    copy16<T><<<132 * 16, 256>>>(p->g, p->u, p->n * sizeof(T) / 16);
}

template <typename T> static void launch_reference(void *ctx)
{
    problem<T> *p = (problem<T> *)ctx;
    reference<T><<<dim3((p->nx + 127) / 128, p->ny, p->nz), 128>>>(p->g, p->u, p->nx, p->ny,
                                                                   p->nz);
}

// Sentinel in f, the kernel once, then every point against the reference in g.
template <typename T> static double verify(problem<T> &p)
{
    const T sentinel = (T)12345.0;
    T *h = (T *)malloc(p.n * sizeof(T)), *ref = (T *)malloc(p.n * sizeof(T));
    for (size_t e = 0; e < p.n; e++)
        h[e] = sentinel;
    CHECK(cudaMemcpy(p.f, h, p.n * sizeof(T), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(p.g, h, p.n * sizeof(T), cudaMemcpyHostToDevice));
    launch_kernel<T>(&p);
    launch_reference<T>(&p);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h, p.f, p.n * sizeof(T), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(ref, p.g, p.n * sizeof(T), cudaMemcpyDeviceToHost));
    double worst = 0;
    for (size_t e = 0; e < p.n; e++) {
        const double d = ref[e] == sentinel ? (h[e] == sentinel ? 0 : 1e30)
                                            : (double)h[e] - (double)ref[e];
        const double a = d < 0 ? -d : d;
        if (a > worst)
            worst = a;
    }
    free(h);
    free(ref);
    return worst;
}

// Buffers for nx x ny x nz points: u filled with a fixed pattern, f and g for the kernel's
// and the reference's answers.
template <typename T> static void problem_open(problem<T> &p, int nx, int ny, int nz)
{
    p.nx = nx;
    p.ny = ny;
    p.nz = nz;
    p.n = (size_t)nx * ny * nz;
    p.smem = 0;
    CHECK(cudaMalloc(&p.u, p.n * sizeof(T)));
    CHECK(cudaMalloc(&p.f, p.n * sizeof(T)));
    CHECK(cudaMalloc(&p.g, p.n * sizeof(T)));
    T *h = (T *)malloc(p.n * sizeof(T));
    for (size_t e = 0; e < p.n; e++)
        h[e] = (T)((e * 2654435761u % 1000) / 1000.0);
    CHECK(cudaMemcpy(p.u, h, p.n * sizeof(T), cudaMemcpyHostToDevice));
    free(h);
}

template <typename T> static void problem_close(problem<T> &p)
{
    CHECK(cudaFree(p.u));
    CHECK(cudaFree(p.f));
    CHECK(cudaFree(p.g));
}

// A prototype's main: its shape() for double, then float, on NX NY NZ from the command line
// (512^3 without them).
static int run_precisions(int argc, char **argv, void (*in_double)(const char *, int, int, int),
                          void (*in_float)(const char *, int, int, int))
{
    const int nx = argc > 3 ? atoi(argv[1]) : 512, ny = argc > 3 ? atoi(argv[2]) : 512,
              nz = argc > 3 ? atoi(argv[3]) : 512;
    in_double("double", nx, ny, nz);
    in_float("float", nx, ny, nz);
    return 0;
}
