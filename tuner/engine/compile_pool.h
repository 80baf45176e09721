/* compile_pool.h - compiles many variants at once on a pool of threads, and hands each one
 * back as soon as it is compiled. Compilers are the slow part of tuning (tens to hundreds of
 * milliseconds a variant, against a millisecond or less to time one on a GPU), and each
 * backend's compile() is thread-safe, so a pool as wide as the host, running ahead of the
 * device, keeps the device busy: the caller times each variant while the rest compile. */
#ifndef FDT_COMPILE_POOL_H
#define FDT_COMPILE_POOL_H

#include <stdint.h>

#include "engine/variant.h"

typedef struct fdt_compile_job {
    fdt_variant variant;  /* in */
    fdt_code code;        /* out: the code object when status is FDT_OK */
    fdt_status status;
    char message[256];    /* the compiler's first words when it failed */
    double ms;            /* wall time of this compile */
} fdt_compile_job;

typedef struct fdt_compile_pool fdt_compile_pool;

/* Starts compiling every job's variant of problem p for arch on threads workers (0: one per
 * CPU) and returns at once; jobs, p and arch must outlive the pool. NULL when out of memory
 * (nothing started). */
fdt_compile_pool *fdt_compile_start(const fdt_backend_ops *ops, const char *arch,
                                    const fdt_problem *p, fdt_compile_job *jobs, size_t n,
                                    int threads);
/* The index of a job whose compile has ended and that was not handed back before, waiting
 * for one if none has; SIZE_MAX once every job was handed back. */
size_t fdt_compile_next(fdt_compile_pool *pool);
/* Wall time from the start to the last compile's end, in ms; 0 while one still runs. */
double fdt_compile_wall_ms(const fdt_compile_pool *pool);
/* Compiles not started yet are dropped (their jobs keep status FDT_ERROR); waits for those
 * running and frees the pool. */
void fdt_compile_end(fdt_compile_pool *pool);

/* Compiles every job, waiting for all: fdt_compile_start, every fdt_compile_next, end. */
void fdt_compile_all(const fdt_backend_ops *ops, const char *arch, const fdt_problem *p,
                     fdt_compile_job *jobs, size_t n, int threads);

#endif
