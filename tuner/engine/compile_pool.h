/* compile_pool.h - compiles many variants at once on a pool of threads, and hands each one
 * back as soon as it is compiled. Compiles cost about as much as timing (10 to 20 ms a
 * variant with NVRTC, a few ms to a few tens of ms to time one on a GPU), so a pool as wide
 * as the host, running ahead of the device, keeps the device busy: the caller times each
 * variant while the rest compile. Each backend's compile() is thread-safe, but a compiler
 * that is a library may run one compile at a time per process (NVRTC does): then each
 * thread compiles in a helper process of its own (compile_helper.h). */
#ifndef FDT_COMPILE_POOL_H
#define FDT_COMPILE_POOL_H

#include <stdint.h>

#include "engine/compile_helper.h"
#include "engine/variant.h"

typedef struct fdt_compile_job {
    fdt_variant variant;  /* in */
    fdt_code code;        /* out: the code object when status is FDT_OK */
    fdt_status status;
    char message[256];    /* the compiler's first words when it failed */
    double ms;            /* wall time of this compile */
    int cached;           /* the code came from a code cache, not from this compile */
} fdt_compile_job;

typedef struct fdt_compile_pool fdt_compile_pool;

/* The most threads a pool runs. */
#define FDT_COMPILE_THREADS_MAX 256

/* Starts compiling every job's variant of problem p for arch on threads workers (0: one per
 * CPU), thread i in helpers' slot i (helpers NULL: in this process; else with a slot per
 * thread), and returns at once; jobs, p, arch and helpers must outlive the pool. NULL when
 * out of memory (nothing started). */
fdt_compile_pool *fdt_compile_start(const fdt_backend_ops *ops, fdt_compile_helpers *helpers,
                                    const char *arch, const fdt_problem *p,
                                    fdt_compile_job *jobs, size_t n, int threads);
/* The index of a job whose compile has ended and that was not handed back before, waiting
 * for one if none has; SIZE_MAX once every job was handed back. */
size_t fdt_compile_next(fdt_compile_pool *pool);
/* Wall time from the start to the last compile's end, in ms; 0 while one still runs. */
double fdt_compile_wall_ms(const fdt_compile_pool *pool);
/* Compiles not started yet are dropped (their jobs keep status FDT_ERROR); waits for those
 * running and frees the pool. */
void fdt_compile_end(fdt_compile_pool *pool);

/* Compiles one job here, in helpers' slot (helpers NULL: in this process); the pool's
 * threads compile each of theirs so. */
void fdt_compile_one(const fdt_backend_ops *ops, fdt_compile_helpers *helpers, int slot,
                     const char *arch, const fdt_problem *p, fdt_compile_job *job);

/* Compiles every job, waiting for all: fdt_compile_start, every fdt_compile_next, end. */
void fdt_compile_all(const fdt_backend_ops *ops, fdt_compile_helpers *helpers,
                     const char *arch, const fdt_problem *p, fdt_compile_job *jobs, size_t n,
                     int threads);

#endif
