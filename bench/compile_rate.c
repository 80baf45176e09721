/* compile_rate.c - how fast the compile pool compiles, in helper processes and in threads:
 * the first N variants of a problem's space compiled by T threads, each way, the wall time
 * and the compiles per second printed. Issue 14: whether compiles keep ahead of the GPU.
 * Built against the engine's objects of a STATIC=1 build, for a GPU host without libuv:
 *   cc -Ituner -Icommon -O2 -std=c11 -D_GNU_SOURCE -fopenmp -o build-static/compile_rate \
 *      bench/compile_rate.c $(ls build-static/common/*.o build-static/tuner/backends/*.o \
 *      build-static/tuner/engine/*.o |
 *      grep -v worker.o) build-static/kernel_sources.o -Wl,-Bstatic -ljansson -luv_a \
 *      -lmsgpackc -lelf -lz -Wl,-Bdynamic -l:libzstd.so.1 -lpthread -ldl -lm
 *   compile_rate BACKEND NX NY NZ N THREADS
 * It serves FDT_COMPILE_HELPER_ARG itself: its helpers are started from /proc/self/exe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "engine/compile_pool.h"

static double compile_all(const fdt_backend_ops *ops, fdt_compile_helpers *helpers,
                          const char *arch, const fdt_problem *p, const fdt_variant *vs,
                          size_t n, int threads, size_t *failed)
{
    fdt_compile_job *jobs = calloc(n, sizeof *jobs);
    for (size_t i = 0; i < n; i++)
        jobs[i].variant = vs[i];
    const uint64_t t0 = uv_hrtime();
    fdt_compile_pool *pool = fdt_compile_start(ops, helpers, arch, p, jobs, n, threads);
    while (fdt_compile_next(pool) != SIZE_MAX)
        continue;
    fdt_compile_end(pool);
    const double s = (double)(uv_hrtime() - t0) / 1e9;
    *failed = 0;
    for (size_t i = 0; i < n; i++) {
        *failed += jobs[i].status != FDT_OK;
        fdt_code_free(&jobs[i].code);
    }
    free(jobs);
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], FDT_COMPILE_HELPER_ARG) == 0)
        return fdt_compile_helper_main(argv[2]); /* its own helpers */
    if (argc != 7) {
        fprintf(stderr, "usage: compile_rate BACKEND NX NY NZ N THREADS\n");
        return 2;
    }
    const fdt_backend_ops *ops;
    fdt_backend *b;
    fdt_error err = {0};
    if (fdt_backend_open(argv[1], 0, &ops, &b, &err) != FDT_OK) {
        fprintf(stderr, "compile_rate: %s\n", err.msg);
        return 1;
    }
    const fdt_device_info *dev = ops->info(b);
    const fdt_problem p = {.nx = atoi(argv[2]), .ny = atoi(argv[3]), .nz = atoi(argv[4]),
                           .radius = 1, .precision = FDT_DOUBLE};
    size_t n = (size_t)atol(argv[5]), failed;
    const int threads = atoi(argv[6]);
    fdt_variant *vs = malloc(n * sizeof *vs);
    const fdt_space_filter every = {0};
    const size_t all = fdt_space_enumerate(&p, dev, &every, vs, n);
    n = n < all ? n : all;
    fdt_compile_helpers *helpers = fdt_compile_helpers_new("/proc/self/exe", ops->name, threads);
    for (int round = 0; round < 2; round++) { /* the first round pays the helpers' start */
        const double s = compile_all(ops, helpers, dev->arch, &p, vs, n, threads, &failed);
        printf("%s: %zu compiles, %d helper processes (round %d): %.2f s, %.0f/s, %zu failed\n",
               ops->name, n, threads, round + 1, s, n / s, failed);
    }
    const double s = compile_all(ops, NULL, dev->arch, &p, vs, n, threads, &failed);
    printf("%s: %zu compiles, %d threads: %.2f s, %.0f/s, %zu failed\n", ops->name, n, threads,
           s, n / s, failed);
    fdt_compile_helpers_free(helpers);
    free(vs);
    ops->close(b);
    return 0;
}
