/* compile_helper.h - compiling in helper processes, one per compile thread.
 *
 * NVRTC runs one compile at a time in a process, however many threads call it: on the
 * H100's 16-core host, 16 threads of one process compiled 128 variants no faster than one
 * thread, while 16 processes compiled them 4 times faster than those 16 threads
 * (bench/results/h100/issue14/nvrtc). So where the compiler is a library in the process
 * (NVRTC, hiprtc), each thread of the compile pool hands its compiles to a process of its
 * own: the calling program started again as `EXE --compile-helper BACKEND`, which reads one
 * request a line on stdin and answers one line on stdout, the code object in a frame after
 * it (common/frame.h), and dies with its parent.
 * Helpers start at their first compile and live as long as their set, so that a compiler
 * library's start (a third of a second for NVRTC) is paid once per thread, not per call.
 *
 * Lifetime: new (nothing started), compile from any thread (each slot from one thread at a
 * time), free (ends every helper). */
#ifndef FDT_COMPILE_HELPER_H
#define FDT_COMPILE_HELPER_H

#include "engine/variant.h"

/* How long a compile in a helper may take, in ms, unless its set is told otherwise: past it
 * the compiler is taken as stopped or hung (SIGSTOP, an include on a hung NFS mount). */
#define FDT_COMPILE_DEADLINE_MS 120000

/* The argument that makes a program a compile helper. */
#define FDT_COMPILE_HELPER_ARG "--compile-helper"

/* Where compile threads compile: auto is processes where the backend's compiler runs one
 * compile at a time per process, threads elsewhere (fdt_compile_in_processes); a worker,
 * whose compiles need a deadline that only a process can be held to, takes auto as
 * processes for every backend (worker.c). */
typedef enum { FDT_COMPILE_AUTO, FDT_COMPILE_PROCESSES, FDT_COMPILE_THREADS } fdt_compile_mode;

/* "auto", "processes" or "threads": 1 with *mode set (mode may be NULL), else 0. */
int fdt_compile_mode_parse(const char *text, fdt_compile_mode *mode);
/* Whether compiles for the backend go to helper processes in that mode. */
int fdt_compile_in_processes(fdt_compile_mode mode, const fdt_backend_ops *ops);

typedef struct fdt_compile_helpers fdt_compile_helpers;

/* A set of slots helpers for backend, started from exe (an absolute path, or
 * "/proc/self/exe"). NULL when out of memory. */
fdt_compile_helpers *fdt_compile_helpers_new(const char *exe, const char *backend, int slots);
/* From now on a compile waits at most ms for its helper's answer (FDT_COMPILE_DEADLINE_MS
 * until told). */
void fdt_compile_helpers_set_deadline(fdt_compile_helpers *set, int ms);
/* Compiles source (a variant's, fdt_variant_source; name, its family's, says which in
 * messages) with defines for arch in the helper of slot, starting it first if it is not
 * running. A helper that dies during a compile is replaced and the
 * compile tried again; a second death makes it a FDT_COMPILE_ERROR (the compiler crashed).
 * A compile past the deadline is FDT_TIMEOUT: the helper and every compiler it started are
 * killed (a process group), and the next compile starts another; the stderr names it.
 * An answer the channel does not carry (a code frame that is not what its line said, bytes
 * after it) is FDT_ERROR saying what was wrong, and the helper is ended.
 * A helper that cannot be started makes the slot compile in the calling process instead,
 * with no deadline. */
fdt_status fdt_compile_helpers_compile(fdt_compile_helpers *set, int slot, const char *arch,
                                       const char *name, const char *source, const char *entry,
                                       const char *const *defines, size_t ndefines,
                                       fdt_code *out, fdt_error *err);
/* Ends every helper (killed with what it started, then reaped: one stopped between compiles
 * cannot hold the caller) and frees the set. */
void fdt_compile_helpers_free(fdt_compile_helpers *set);

/* The helper's side: serves requests on stdin until it closes; the process's exit status. */
int fdt_compile_helper_main(const char *backend);

#endif
