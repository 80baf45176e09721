/* session.h - one open device and the runner of one problem on it: the engine that
 * `fdtune bench` and fdtune-worker share. A session compiles variants in parallel (asking
 * a code cache first, through hooks), verifies and times each, and reports every outcome
 * as it lands; it times the leaders again beside kernel 1 and a device-to-device copy.
 *
 * Lifetime: open (the device), prepare (a problem: buffers, random input, the reference
 * checked), any number of measure and leaders calls, prepare again for another problem,
 * close. A session whose device stopped working (see lost_after) refuses further work. */
#ifndef FDT_SESSION_H
#define FDT_SESSION_H

#include "engine/bench.h"
#include "engine/compile_helper.h"
#include "engine/runner.h"

/* What the caller learns and supplies while a session works; every hook but result is
 * optional (NULL). Hooks run on the calling thread. */
typedef struct fdt_session_hooks {
    void *ctx;
    /* Before compiling: the code object cached under key (fdt_code_key's text), if any.
     * Returns 1 and fills code (malloc'd; the session frees it) on a hit, else 0. */
    int (*code_get)(void *ctx, const char *key, fdt_code *code);
    /* After compiling: a code object the cache did not have, or one to replace what it
     * had that did not load (stored damaged: compiled afresh, once); copy it to keep it. */
    void (*code_put)(void *ctx, const char *key, const fdt_code *code);
    /* Every variant is compiled or came from the cache (measure only). */
    void (*compiled)(void *ctx, size_t count, size_t cached, double wall_ms);
    /* A variant's launches are about to start; NULL: the copy (leaders only). */
    void (*begin)(void *ctx, const fdt_variant *v);
    /* One variant's outcome; r->index is its position in the caller's array. */
    void (*result)(void *ctx, const fdt_result *r);
} fdt_session_hooks;

typedef struct fdt_session {
    const fdt_backend_ops *ops;
    fdt_backend *backend;
    const fdt_device_info *device;
    int compile_threads;      /* 0: one per CPU */
    fdt_compile_helpers *helpers; /* a helper process per compile thread, and one for the
                                     session's own compiles; NULL: threads */
    int pipeline;             /* time each variant as soon as it is compiled, the others
                                 compiling meanwhile; 0: compile all, then time */
    int interior_copy;        /* time the interior copy beside the device copy (leaders) */
    fdt_runner runner;        /* open while prepared */
    int prepared;
    unsigned references;      /* runners opened: each a host reference, seconds at 1024^3 */
    unsigned seed;
    double bytes;             /* the figure of merit's bytes of the prepared problem */
    double fastest_ms;        /* the fastest first-pass median of the prepared problem so far
                                 (0: none): a variant far slower gets fewer samples */
    char lost_after[FDT_VARIANT_NAME_MAX]; /* the variant after which the device stopped */
} fdt_session;

/* Opens device of the named backend (auto, hip, cuda, cpu). */
fdt_status fdt_session_open(fdt_session *s, const char *backend, int device,
                            int compile_threads, fdt_error *err);
void fdt_session_close(fdt_session *s);
/* From now on each compile thread compiles in a helper process started from exe, this
 * program (see compile_helper.h): where the compiler runs one compile at a time per process.
 * Without memory for it, compiles stay in threads. */
void fdt_session_compile_in_helpers(fdt_session *s, const char *exe);

/* Makes p the session's problem: keeps the runner when the problem, timing and seed are
 * those already prepared, else opens a new one (which checks the reference kernel). */
fdt_status fdt_session_prepare(fdt_session *s, const fdt_problem *p, const fdt_timing *timing,
                               unsigned seed, fdt_error *err);

/* Compiles, verifies and times each of vs[0..n), calling h->result for each as it lands
 * (compile failures and variants that cannot run on this device included): the cached ones
 * first, then each as its compile ends (pipeline) or once all have. FDT_OK, or an
 * error when no more can be measured: not prepared, out of memory, or the device stopped
 * working after a launch error or a timeout (lost_after names the variant; the results of
 * the variants after it are not reported). */
fdt_status fdt_session_measure(fdt_session *s, const fdt_variant *vs, size_t n,
                               const fdt_session_hooks *h, fdt_error *err);

/* Times kernel 1, the copy and vs[0..n) again in rotating rounds, samples each (rounded up
 * to a multiple of the rounds), calling h->begin before every turn and h->result for each
 * of vs (leader set) at the end. FDT_OK when kernel 1 and the copy were timed; a leader
 * that fails gets its status in its result. In cache mode auto the leaders and the copy
 * take turns in both states, hot and persist; the results reported are the hot ones, and
 * out says which state wins (persist only where its fastest leader beats hot's by more than
 * noise, since it costs the solver a set-up step) and persist's fastest leader. */
fdt_status fdt_session_leaders(fdt_session *s, const fdt_variant *vs, size_t n, int samples,
                               const fdt_session_hooks *h, fdt_session_baseline *out,
                               fdt_error *err);

/* What a session's first fdt_session_leaders round of n leaders is likely to take, in ms,
 * before one has been timed on the device: from the mean first-pass variant of the same
 * problem (its sample of reps launches, one launch, one compile), every candidate's samples
 * and, in each rotating round, its warm-up and timing launches; the interior copies are
 * compiled afresh (the leaders come from the code cache, and kernel 1 too where the first
 * pass measured it). both_states: cache mode auto, where leaders and copy take turns in both
 * states. */
double fdt_session_leaders_guess_ms(size_t n, int both_states, int samples, double sample_ms,
                                    double launch_ms, double compile_ms);

/* Whether the device still runs work (a trivial copy of the problem's grid); after a launch
 * error or a timeout the context may be gone for good (an illegal address poisons a
 * CUDA/HIP context). With no problem prepared there is nothing to copy: it answers 1. */
int fdt_session_device_alive(fdt_session *s);

#endif
