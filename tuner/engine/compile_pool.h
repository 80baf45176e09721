/* compile_pool.h - compiles many variants at once on a pool of threads. Compilers are the
 * slow part of tuning (tens to hundreds of milliseconds a variant), and each backend's
 * compile() is thread-safe, so a pool as wide as the host keeps the device busy. */
#ifndef FDT_COMPILE_POOL_H
#define FDT_COMPILE_POOL_H

#include "engine/variant.h"

typedef struct fdt_compile_job {
    fdt_variant variant;  /* in */
    fdt_code code;        /* out: the code object when status is FDT_OK */
    fdt_status status;
    char message[256];    /* the compiler's first words when it failed */
    double ms;            /* wall time of this compile */
} fdt_compile_job;

/* Compiles every job's variant of problem p for arch, with threads workers (0: one per CPU). */
void fdt_compile_all(const fdt_backend_ops *ops, const char *arch, const fdt_problem *p,
                     fdt_compile_job *jobs, size_t n, int threads);

#endif
