/* backend.h - the one interface every GPU (or CPU) backend implements.
 *
 * A backend compiles kernel sources to code objects, loads them, moves memory,
 * launches and times kernels. Three implementations (hip, cuda, cpu) are chosen
 * at run time by name; vendor libraries are loaded with dlopen inside each
 * backend, so one build of fdtuned runs on AMD, NVIDIA and GPU-less hosts.
 *
 * Lifetimes: a backend handle owns everything made through it, and the device
 * context open() made for it; kernels must be unloaded and buffers freed before
 * close(). A handle from attach() may borrow its caller's context instead, and
 * never owns its stream: close() leaves both alone.
 * compile() needs no open handle (CI compiles for gfx90a on a host with no GPU)
 * and must be safe to call from several threads at once.
 *
 * The backends are linked into libfdtune, which runs inside solvers' processes,
 * as well as into the tuner: they use no libuv, only POSIX. */
#ifndef FDT_BACKEND_H
#define FDT_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "util.h"

/* Device memory as the kernels see it: a CUdeviceptr, a hipDeviceptr_t or a host address. */
typedef uint64_t fdt_devptr;

/* Resource usage read from the compiled kernel; -1 where a backend cannot tell. */
typedef struct fdt_resources {
    int vgprs;          /* registers per thread (VGPRs on AMD) */
    int sgprs;          /* scalar registers (AMD only) */
    int scratch_bytes;  /* private/local memory per thread: spills and stack */
    int shared_bytes;   /* shared (LDS) memory per block: static, and dynamic where a module
                           declares it (the ring's) */
    int max_threads;    /* the largest block the kernel launches with: what its registers and
                           shared memory leave room for (NVIDIA), its launch bounds (AMD) */
} fdt_resources;

typedef struct fdt_backend fdt_backend; /* an open device context */
typedef struct fdt_kernel fdt_kernel;   /* a loaded module and its entry point */

/* Boundaries timer_lap() may record between a timer_start() and its timer_stop(). */
#define FDT_TIMER_LAPS 64

typedef struct fdt_backend_ops {
    const char *name;

    /* The compiler's version string, or a failure if its library cannot be loaded. */
    fdt_status (*compiler_version)(char *out, size_t len, fdt_error *err);
    /* Compiles source for arch ("gfx90a", "sm_90", "host") with -D defines ("NAME=VALUE");
     * thread-safe; on FDT_COMPILE_ERROR err->msg holds the compiler log. */
    fdt_status (*compile)(const char *arch, const char *source, const char *entry,
                          const char *const *defines, size_t ndefines,
                          fdt_code *out, fdt_error *err);
    /* 1: compile() calls in one process run one after another, whatever the threads (a
     * compiler that is a library with a lock of its own), so compiles side by side need
     * processes; 0: they run side by side. */
    int compiles_one_at_a_time;

    /* The tuner's way in: device (an ordinal) is made the calling thread's current device
     * (on NVIDIA, its primary context, retained until close()), and all queued work goes to
     * the default stream. */
    fdt_status (*open)(int device, fdt_backend **out, fdt_error *err);
    /* libfdtune's way in: a solver's kernels must run in the solver's own context, on the
     * buffers it allocated there, and in order with the rest of its work. So this binds a
     * handle to the device and context the calling thread already uses, and queues all of
     * the handle's work (launch, fill32, copy, the timer's events) on stream, a CUstream or
     * cudaStream_t, or a hipStream_t (NULL: the default stream; the cpu backend has no
     * streams and ignores it). device < 0 means the device the thread uses; device >= 0
     * names one, made the thread's current device as open() does where the thread is on
     * another. upload() and download() stay synchronous copies on the default stream, which
     * waits for other streams' work unless they were created non-blocking: with one of
     * those, call sync() before them. */
    fdt_status (*attach)(int device, void *stream, fdt_backend **out, fdt_error *err);
    void (*close)(fdt_backend *b);
    const fdt_device_info *(*info)(fdt_backend *b);

    fdt_status (*load)(fdt_backend *b, const fdt_code *code, const char *entry,
                       fdt_kernel **out, fdt_error *err);
    void (*unload)(fdt_backend *b, fdt_kernel *k);
    void (*resources)(fdt_kernel *k, fdt_resources *out);

    /* A buffer aligned to 256 bytes at least, the base a layout's offset counts from. */
    fdt_status (*alloc)(fdt_backend *b, size_t bytes, fdt_devptr *out, fdt_error *err);
    void (*free)(fdt_backend *b, fdt_devptr p);
    fdt_status (*upload)(fdt_backend *b, fdt_devptr dst, const void *src, size_t bytes,
                         fdt_error *err);
    fdt_status (*download)(fdt_backend *b, void *dst, fdt_devptr src, size_t bytes,
                           fdt_error *err);
    /* Sets count 32-bit words to value (the NaN poison written before verified runs). */
    fdt_status (*fill32)(fdt_backend *b, fdt_devptr dst, uint32_t value, size_t count,
                         fdt_error *err);
    /* Enqueues a device-to-device copy (the bandwidth ceiling is timed with it). */
    fdt_status (*copy)(fdt_backend *b, fdt_devptr dst, fdt_devptr src, size_t bytes,
                       fdt_error *err);
    /* Enqueues a launch; args as in cuLaunchKernel (an array of pointers to each argument). */
    fdt_status (*launch)(fdt_backend *b, fdt_kernel *k, fdt_dim3 grid, fdt_dim3 block,
                         void **args, fdt_error *err);
    /* Waits until all work queued on the handle's stream has finished, so that a solver may
     * read what the kernels wrote; unlike timer_stop() it has no time limit. Faults raised by
     * the work surface here as FDT_LAUNCH_ERROR. */
    fdt_status (*sync)(fdt_backend *b, fdt_error *err);

    /* Timing with device events: timer_start() records the start; timer_stop() records the
     * end and waits for it at most timeout_ms, so that a hung kernel reports FDT_TIMEOUT
     * instead of blocking; faults raised by queued work surface here as FDT_LAUNCH_ERROR.
     * Between the two, timer_lap() records a boundary (at most FDT_TIMER_LAPS of them), and
     * after the stop, timer_split() reads the time between boundary i and i + 1 (0: the
     * start, the last: the end): samples queued back to back, with no wait between them,
     * keep the device busy and are read at once. */
    fdt_status (*timer_start)(fdt_backend *b, fdt_error *err);
    fdt_status (*timer_lap)(fdt_backend *b, fdt_error *err);
    fdt_status (*timer_stop)(fdt_backend *b, double timeout_ms, double *elapsed_ms,
                             fdt_error *err);
    fdt_status (*timer_split)(fdt_backend *b, int i, double *ms, fdt_error *err);
} fdt_backend_ops;

extern const fdt_backend_ops fdt_backend_hip;
extern const fdt_backend_ops fdt_backend_cuda;
extern const fdt_backend_ops fdt_backend_cpu;

/* How many devices the cpu backend presents (1 to 64; 1 unless set), all of one fingerprint,
 * so that a daemon's work for several devices (a batch spread over them, results shared
 * between devices of one kind) runs and is tested on any host. Set before the backend is
 * opened; the process that opens one of them gives it its share of the cores (OpenMP's
 * thread count: fdtune-worker does). */
void fdt_cpu_set_devices(int n);

/* The backend called name, or NULL. */
const fdt_backend_ops *fdt_backend_find(const char *name);

/* Opens the named backend's device, or with "auto" the first of hip, cuda, cpu that opens.
 * On success *ops names the backend chosen. */
fdt_status fdt_backend_open(const char *name, int device, const fdt_backend_ops **ops,
                            fdt_backend **out, fdt_error *err);

#endif
