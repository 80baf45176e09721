/* fdtune_kernel.h - libfdtune's kernel API: run the Laplacian fdtuned chose inside the
 * solver, on the solver's own GPU context and stream, in three calls:
 *
 *     fdtune_device *dev;                   (the GPU this thread already uses, or the cpu)
 *     fdtune_device_open(NULL, -1, stream, &dev, err, sizeof err);
 *     fdtune_problem p = {.nx = 512, .ny = 512, .nz = 512};
 *     fdtune_kernel *k;
 *     fdtune_kernel_open(dev, &p, NULL, &k, err, sizeof err);   (1: query, compile, load)
 *     fdtune_field_alloc(k, &f, err, sizeof err);   (fields in the kernel's layout, u too)
 *     for (step...)
 *         fdtune_kernel_launch(k, f, u, 1 / (hx * hx), 1 / (hy * hy), 1 / (hz * hz),
 *                              err, sizeof err);                (2: f = Laplacian(u))
 *     fdtune_kernel_close(k);                                   (3)
 *
 * fdtune_kernel_open never fails a solver over tuning: with no daemon, no answer, or an
 * answer that does not compile, it loads the seeds' kernel 1 (correct for every shape) and
 * says why in fdtune_kernel_info's reason. It fails only where no kernel at all can run
 * (no compiler library, no device), and then says why in err.
 *
 * Compilers are the vendors' runtime compilers, loaded with dlopen: hiprtc on AMD, NVRTC on
 * NVIDIA, the host C++ compiler ($CXX, else c++) on the cpu; so linking libfdtune adds no
 * GPU runtime to a solver. Compiled modules are cached on disk (see fdtune_kernel_options),
 * so a solver started on many ranks compiles each module once per node.
 *
 * Pointers are device pointers of the solver's runtime (hipMalloc, cudaMalloc, cuMemAlloc),
 * or host pointers on the cpu, to point (0, 0, 0) of a field. Every field a kernel reads or
 * writes is laid out as its info's layout says (fdtune.h, fdtune_problem): the asked one, or
 * with pitch FDTUNE_PITCH_AUTO the answer's, so a solver that lets the tuner pick allocates
 * its fields after opening the kernel, with fdtune_field_alloc, and indexes them with
 * info.layout.pitch. A field off the layout's 32-byte sector gives the right results,
 * slower; one off 16 bytes where the layout puts it on them is refused at launch.
 * Every call reports failure as a status and text in err; the library never exits, aborts
 * or prints. A device handle, and the kernels made with it, serve one thread at a time,
 * and, as the solver's own launches, need that thread on the handle's device (its context
 * current on NVIDIA): the library never switches it back.
 *
 * What runs is what this library builds: an answer names a variant, and its defines, entry
 * and launch must be the ones this library computes for that variant and problem, or kernel
 * 1 runs instead. The kernel source comes from the library itself when the daemon's is the
 * same version, else from the daemon's "source" operation, checked against the answer's
 * hash; the daemon's socket is what a solver trusts (docs/protocol.md, Security). */
#ifndef FDTUNE_KERNEL_H
#define FDTUNE_KERNEL_H

#include <stddef.h>

#include "fdtune.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fdtune_device fdtune_device;

/* Binds to a device. backend: "hip", "cuda", "cpu", or NULL / "auto" for the first of hip,
 * cuda, cpu that opens. device < 0: the device and context the calling thread already uses
 * (the solver's; device 0 where it uses none); device >= 0: that device, made the thread's
 * current one (as cudaSetDevice / hipSetDevice). stream: the hipStream_t or CUstream
 * (cudaStream_t) of that device every launch of this handle is queued on; NULL is the
 * default stream. fdtune_upload and fdtune_download copy synchronously on the default
 * stream: with a non-blocking stream, fdtune_synchronize first. */
int fdtune_device_open(const char *backend, int device, void *stream, fdtune_device **out,
                       char *err, size_t errlen);
void fdtune_device_close(fdtune_device *d);
/* "hip", "cuda" or "cpu"; the device's name; its architecture (gfx90a, sm_90, x86_64). */
const char *fdtune_device_backend(const fdtune_device *d);
const char *fdtune_device_name(const fdtune_device *d);
const char *fdtune_device_arch(const fdtune_device *d);

typedef struct fdtune_kernel_options {
    const char *socket;    /* the daemon; NULL: fdtune_default_socket() */
    int timeout_ms;        /* bounds the talk with the daemon; 0 or less: 2000 */
    const char *cache_dir; /* compiled modules; NULL: $FDTUNE_CACHE_DIR, else
                              $XDG_CACHE_HOME/fdtune, else ~/.cache/fdtune; "": none. A
                              directory another user owns or may write is not used. */
    int kernel1;           /* 1: ask no daemon and load kernel 1 (a baseline to compare) */
} fdtune_kernel_options;

typedef struct fdtune_kernel fdtune_kernel;

/* What a kernel is and where it came from. */
typedef struct fdtune_kernel_info {
    int tuned;                      /* 1: fdtuned's answer; 0: the fallback, kernel 1 */
    char reason[512];               /* why the fallback ("" when tuned) */
    char variant[FDTUNE_NAME_MAX];  /* e.g. tiled:64x2x2:m8:seed, or naive:256x1x1 */
    char match[16];                 /* the answer's match (exact, nearest, default); "" */
    int grid[3], block[3];          /* the launch of fdtune_kernel_launch */
    double stored_gbps;             /* what fdtuned measured for the tuned shape; 0 */
    double copy_gbps;               /* the device copy it measured beside it; 0 */
    int persist;                    /* 1: answer measured in cache mode persist */
    double module_ms;               /* time to get the module(s): compile or disk cache */
    int cache_hits, compiles;       /* modules read from the disk cache, and compiled */
    char note[512];                 /* what else to know, "" if nothing: the disk cache was
                                       not used and why; the answer was measured on another
                                       device than this one, or in another layout */
    fdtune_layout layout;           /* the fields' layout launches assume: pitch (nx: dense)
                                       and offset; dense_gbps and gain as the answer's when
                                       tuned with pitch auto, else 0 */
} fdtune_kernel_info;

/* Call 1: asks fdtuned (o->socket) for problem p (in its layout: fdtune.h), gets the
 * kernel's source from it unless the disk cache already holds the module, compiles (hiprtc,
 * NVRTC, c++) and loads it on d; on any failure of that path, kernel 1 compiled the same
 * way. o may be NULL. */
int fdtune_kernel_open(fdtune_device *d, const fdtune_problem *p,
                       const fdtune_kernel_options *o, fdtune_kernel **out, char *err,
                       size_t errlen);

/* Call 1 for a stencil of the solver's own: spec is its JSON text (docs/stencils.md), which
 * names its fields, constants and taps, and its radius (p's radius is not read). The kernel
 * is generated from this spec by the library itself: an answer gives only the variant (its
 * family, parameters, defines and launch, checked as for the Laplacian), so specs that share
 * a pattern share answers whatever their weights. A spec that is wrong is FDTUNE_ERR_ARG
 * with where and why in err; the fallback is the spec's kernel 1 (snaive, 256x1x1). */
int fdtune_kernel_open_spec(fdtune_device *d, const fdtune_problem *p, const char *spec,
                            const fdtune_kernel_options *o, fdtune_kernel **out, char *err,
                            size_t errlen);

/* The same from an answer the caller already has (fdtune_query); c fetches the source when
 * the disk cache lacks the module, and may be NULL (then a miss falls back to kernel 1).
 * With p's pitch FDTUNE_PITCH_AUTO the kernel takes a's layout. */
int fdtune_kernel_load(fdtune_device *d, fdtune_conn *c, const fdtune_problem *p,
                       const fdtune_answer *a, const fdtune_kernel_options *o,
                       fdtune_kernel **out, char *err, size_t errlen);

/* Call 2: queues f = Laplacian(u) on the device's stream, with cx = 1/hx^2 and so on
 * (converted to the problem's precision). Only f's interior is written: its R outermost
 * layers are the solver's boundary. A spec's kernel is launched with
 * fdtune_kernel_launch_fields instead (FDTUNE_ERR_ARG here). */
int fdtune_kernel_launch(fdtune_kernel *k, void *f, const void *u, double cx, double cy,
                         double cz, char *err, size_t errlen);

/* Call 2 for any kernel: queues its stencil on the device's stream: outputs[i] (the spec's
 * outputs, in its order) from inputs[i] (its inputs, then its coefficient fields), with
 * constants[i] (its constants' values in its order, converted to the problem's precision).
 * The Laplacian's are outputs {f}, inputs {u}, constants {cx, cy, cz}. Only the outputs'
 * interiors are written: their R outermost layers are the solver's boundary. */
int fdtune_kernel_launch_fields(fdtune_kernel *k, void *const *outputs,
                                const void *const *inputs, const double *constants,
                                char *err, size_t errlen);

/* The bytes one launch of k moves as fdtuned counts them (each field read once over the
 * points its interior's taps reach, each output written once over the interior:
 * docs/stencils.md; for the Laplacian fdtune_laplacian_bytes), so that a solver's own GB/s
 * compare with the stored ones. */
double fdtune_kernel_bytes(const fdtune_kernel *k);

/* One field in k's layout (info.layout) on k's device: a 256-byte-aligned buffer of
 * offset + pitch * ny * nz points, rounded up to whole 256 bytes so that a vector access
 * aligned to its size, which may reach past the last point, stays inside. *field is point
 * (0, 0, 0), what launches take; the pitch * ny * nz points from it are the field's
 * (fdtune_upload and fdtune_download copy them). Free it with fdtune_field_free, with the
 * same kernel, or one of the same layout. The memory is not cleared. */
int fdtune_field_alloc(fdtune_kernel *k, void **field, char *err, size_t errlen);
void fdtune_field_free(fdtune_kernel *k, void *field);

/* Whether a field of the solver's own allocation is aligned as k's layout: point (0, 0, 0)
 * offset points past a 32-byte boundary (a sector: what a 256-byte-aligned base plus the
 * offset gives). FDTUNE_OK, or FDTUNE_ERR_LAYOUT with how far off it is in err: off 16
 * bytes where the layout puts it on them, a launch on it is refused (the kernel's
 * whole-vector accesses would fault); else launches on it compute the right results,
 * slower than the answer measured. */
int fdtune_kernel_check_field(const fdtune_kernel *k, const void *field, char *err,
                              size_t errlen);

/* Cache mode persist (info.persist): holds the row edges of buffer f in L2 (release 0,
 * once per buffer the stencil writes, before the time steps) or gives them back (release
 * 1, before freeing f). Does nothing for other kernels. */
int fdtune_kernel_persist(fdtune_kernel *k, void *f, int release, char *err, size_t errlen);

const fdtune_kernel_info *fdtune_kernel_get_info(const fdtune_kernel *k);

/* The bytes one Laplacian moves as fdtuned counts them (docs/measurement.md: u's interior
 * and its 2R-deep arms read once, f's interior written once), so that a solver's own GB/s
 * compare with the stored ones. */
double fdtune_laplacian_bytes(const fdtune_problem *p);

/* Call 3: unloads and frees; NULL is allowed. */
void fdtune_kernel_close(fdtune_kernel *k);

/* --- the solver's own kernels, and memory, for solvers written against no GPU runtime --- */

typedef struct fdtune_function fdtune_function;

/* Compiles source (HIP/CUDA syntax; an extern "C" __global__ entry, at most 127 bytes of
 * name) with -D defines ("NAME=VALUE") for d, through the disk cache of o (may be NULL; all
 * zeros means the same); the same source runs on hip, cuda and cpu. */
int fdtune_function_compile(fdtune_device *d, const char *source, const char *entry,
                            const char *const *defines, int ndefines,
                            const fdtune_kernel_options *o, fdtune_function **out, char *err,
                            size_t errlen);
/* Queues a launch; args as for cuLaunchKernel: an array of pointers to each argument. */
int fdtune_function_launch(fdtune_function *fn, const int grid[3], const int block[3],
                           void **args, char *err, size_t errlen);
void fdtune_function_free(fdtune_function *fn);

int fdtune_alloc(fdtune_device *d, size_t bytes, void **ptr, char *err, size_t errlen);
void fdtune_free(fdtune_device *d, void *ptr);
int fdtune_upload(fdtune_device *d, void *dst, const void *src, size_t bytes, char *err,
                  size_t errlen);
int fdtune_download(fdtune_device *d, void *dst, const void *src, size_t bytes, char *err,
                    size_t errlen);
/* Waits for everything queued on the device's stream. */
int fdtune_synchronize(fdtune_device *d, char *err, size_t errlen);
/* Device-event timing of the work queued between start and stop, in milliseconds; stop
 * waits for that work. */
int fdtune_timer_start(fdtune_device *d, char *err, size_t errlen);
int fdtune_timer_stop(fdtune_device *d, double *ms, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
