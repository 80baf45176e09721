/* runner.h - runs variants of one problem on one device and judges them: owns the device
 * buffers (the stencil's input and output grids, a reference of each output and its
 * tolerance at every point), the random
 * inputs, the host implementation that checks the reference kernel, and the verification
 * kernel that checks every variant. For the Laplacian: one input u, one output f. */
#ifndef FDT_RUNNER_H
#define FDT_RUNNER_H

#include "engine/measure.h"
#include "engine/stencil.h"
#include "engine/variant.h"

typedef struct fdt_verdict {
    double error;       /* the worst interior point's |out - ref| over its tolerance: a right
                           output's is at most 1 (infinite where one is NaN) */
    double boundary_bad;/* boundary points written */
    double launch_ms;   /* the verified launch's duration (f just poisoned): what timing
                           needs to know of it (fdt_samples.launch_ms) */
} fdt_verdict;

typedef struct fdt_runner {
    const fdt_backend_ops *ops;
    fdt_backend *backend;
    fdt_problem problem;
    int pitch;                /* the problem's row pitch (fdt_problem_pitch), an argument */
    fdt_timing timing;
    const fdt_stencil *stencil; /* the problem's */
    double coeffs[FDT_STENCIL_COEFFS_MAX]; /* its launch constants, from grid spacings distinct
                                per axis so that swapped axes show */
    size_t points, bytes;     /* of one grid, dense: nx * ny * nz (what the copy moves) */
    size_t storage_points, storage_bytes; /* of one buffer in the problem's layout: the
                                offset and the row padding too (fdt_problem_storage_points) */
    fdt_devptr in[FDT_STENCIL_FIELDS_MAX], out[FDT_STENCIL_FIELDS_MAX]; /* the buffers */
    fdt_devptr in0[FDT_STENCIL_FIELDS_MAX], out0[FDT_STENCIL_FIELDS_MAX]; /* their points
                                (0,0,0), the buffers + the offset: what kernels are given */
    fdt_devptr ref[FDT_STENCIL_FIELDS_MAX]; /* kernel 1's outputs, once the host agreed */
    fdt_devptr tolerance[FDT_STENCIL_FIELDS_MAX]; /* each output's tolerance per point, in
                                float: the host's bound on rounding there, doubled */
    fdt_devptr partial;
    size_t partial_count;
    double *partial_host;
    fdt_kernel *compare;
    fdt_dim3 compare_grid, compare_block;
    fdt_kernel *persist;     /* cache modes persist and auto: holds the outputs' row edges in
                                L2 */
    int persisting;          /* f's row edges are held now (released at close) */
    double gpu_ms;           /* device time inside every timed region so far */
} fdt_runner;

/* Allocates the buffers, puts f in the problem's cache mode, fills u with random values
 * from seed, runs the reference kernel (the seeds' kernel 1) and checks it point by point
 * against the host implementation. A cache mode the device lacks is FDT_UNSUPPORTED. */
fdt_status fdt_runner_open(fdt_runner *r, const fdt_backend_ops *ops, fdt_backend *b,
                           const fdt_problem *p, const fdt_timing *timing, unsigned seed,
                           fdt_error *err);
void fdt_runner_close(fdt_runner *r);

/* Poisons f, runs the kernel once and compares every point with the reference:
 * FDT_OK, FDT_WRONG (verdict says how), or the launch's failure. */
fdt_status fdt_runner_verify(fdt_runner *r, fdt_kernel *k, const fdt_variant *v,
                             fdt_verdict *verdict, fdt_error *err);

/* Times the kernel (after a successful verify) with the runner's timing settings, adding
 * samples to acc. */
fdt_status fdt_runner_time(fdt_runner *r, fdt_kernel *k, const fdt_variant *v, int samples,
                           fdt_samples *acc, fdt_error *err);

/* Times a device-to-device copy of one grid's dense bytes (the bandwidth ceiling, alike
 * whatever the layout), adding samples to acc. */
fdt_status fdt_runner_time_copy(fdt_runner *r, int samples, fdt_samples *acc, fdt_error *err);

/* Times kernel k of the copy's signature, k(f, u, nx, ny, nz, pitch), launched with grid
 * and block (the interior copy, kernels_src/copy.hip), adding samples to acc. */
fdt_status fdt_runner_time_copy_kernel(fdt_runner *r, fdt_kernel *k, fdt_dim3 grid,
                                       fdt_dim3 block, int samples, fdt_samples *acc,
                                       fdt_error *err);

/* Cache mode auto, which opens hot: holds f's row edges in L2 (on) or releases them, so
 * that the leaders are timed in both states side by side. FDT_UNSUPPORTED where the device
 * has no persist (the runner then has no persist kernel). */
fdt_status fdt_runner_set_persist(fdt_runner *r, int on, fdt_error *err);

/* Switches an open runner to another cache mode, keeping its buffers and reference (they do
 * not depend on it): a job times its first pass hot and its leaders in mode auto, and a new
 * reference at 1024^3 costs seconds of host work each time. On failure the mode is as it
 * was. */
fdt_status fdt_runner_set_cache(fdt_runner *r, fdt_cache_mode cache, fdt_error *err);

#endif
