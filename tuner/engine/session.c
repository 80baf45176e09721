/* session.c - one device, one problem's runner: compile (cache first), verify and time
 * variants, report each as it lands, and time the leaders beside kernel 1 and a copy. */
#include "engine/session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "engine/compile_pool.h"
#include "engine/stencil.h"
#include "hashes.h"

fdt_status fdt_session_open(fdt_session *s, const char *backend, int device,
                            int compile_threads, fdt_error *err)
{
    memset(s, 0, sizeof *s);
    fdt_status st = fdt_backend_open(backend, device, &s->ops, &s->backend, err);
    if (st != FDT_OK)
        return st;
    s->device = s->ops->info(s->backend);
    const int cpus = (int)uv_available_parallelism();
    s->compile_threads = compile_threads > 0 ? compile_threads : cpus;
    if (s->compile_threads > FDT_COMPILE_THREADS_MAX)
        s->compile_threads = FDT_COMPILE_THREADS_MAX;
    /* A GPU is timed while the host's cores compile; the cpu backend's device is those
     * cores, whose timings compiles beside them would spread. */
    s->pipeline = strcmp(s->device->backend, "cpu") != 0;
    return FDT_OK;
}

static void unprepare(fdt_session *s)
{
    if (s->prepared)
        fdt_runner_close(&s->runner);
    s->prepared = 0;
    s->fastest_ms = 0;
}

void fdt_session_close(fdt_session *s)
{
    if (!s->backend)
        return;
    unprepare(s);
    fdt_compile_helpers_free(s->helpers);
    s->ops->close(s->backend);
    memset(s, 0, sizeof *s);
}

/* The helpers' slot of the session's own compiles (a cached code object compiled afresh),
 * beyond the pool threads' slots: the pool may still be compiling in those. */
static int own_slot(const fdt_session *s)
{
    return s->compile_threads;
}

void fdt_session_compile_in_helpers(fdt_session *s, const char *exe)
{
    if (!s->helpers)
        s->helpers = fdt_compile_helpers_new(exe, s->ops->name, own_slot(s) + 1);
}

static int same_timing(const fdt_timing *a, const fdt_timing *b)
{
    return a->samples == b->samples && a->min_sample_ms == b->min_sample_ms &&
           a->timeout_ms == b->timeout_ms;
}

/* Whether a and b share their grid, layout and data; the cache mode aside, which an open
 * runner changes in place. */
static int same_data(const fdt_problem *a, const fdt_problem *b)
{
    return strcmp(a->stencil, b->stencil) == 0 && a->nx == b->nx && a->ny == b->ny &&
           a->nz == b->nz && a->radius == b->radius && a->precision == b->precision &&
           fdt_problem_pitch(a) == fdt_problem_pitch(b) && a->offset == b->offset;
}

static fdt_status refuse_if_lost(const fdt_session *s, fdt_error *err)
{
    if (s->lost_after[0])
        return fdt_fail(err, FDT_ERROR, "the device stopped working after %s", s->lost_after);
    return FDT_OK;
}

fdt_status fdt_session_prepare(fdt_session *s, const fdt_problem *p, const fdt_timing *timing,
                               unsigned seed, fdt_error *err)
{
    fdt_status st = refuse_if_lost(s, err);
    if (st != FDT_OK)
        return st;
    if (s->prepared && same_data(&s->runner.problem, p) &&
        same_timing(&s->runner.timing, timing) && s->seed == seed)
        return s->runner.problem.cache == p->cache
                   ? FDT_OK
                   : fdt_runner_set_cache(&s->runner, p->cache, err);
    unprepare(s);
    const char *why = fdt_problem_check(p);
    if (why)
        return fdt_fail(err, FDT_ERROR, "%s", why);
    st = fdt_runner_open(&s->runner, s->ops, s->backend, p, timing, seed, err);
    if (st != FDT_OK)
        return st;
    s->prepared = 1;
    s->references++;
    s->seed = seed;
    s->bytes = fdt_stencil_ideal_bytes(fdt_stencil_of(p), p); /* known: the check passed */
    return FDT_OK;
}

int fdt_session_device_alive(fdt_session *s)
{
    if (!s->prepared)
        return 1;
    fdt_samples samples = {0};
    fdt_error err;
    const int alive = fdt_runner_time_copy(&s->runner, 1, &samples, &err) == FDT_OK;
    fdt_samples_free(&samples);
    return alive;
}

/* ---- compiling, cache first ---- */

static void code_key(const fdt_session *s, const fdt_variant *v, char key[33])
{
    fdt_defines defines;
    fdt_variant_defines(v, &s->runner.problem, &defines);
    fdt_code_key(fdt_variant_source(v, &s->runner.problem), defines.list, defines.count,
                 s->device->arch, s->device->compiler_version, key);
}

/* The variants of one call being made ready: each refused (it cannot run here), found in
 * the cache, or compiling on the pool. Refused and cached ones are ready at once; the others
 * as their compiles end, each offered to the cache then. */
typedef struct ready_set {
    fdt_compile_job *jobs;   /* per variant: its code, or why it has none, once ready */
    fdt_compile_job *misses; /* the pool's jobs */
    size_t *miss_at;         /* the variant of each miss */
    size_t *order;           /* variants ready before any compile ended */
    size_t norder, taken;
    size_t cached;
    fdt_compile_pool *pool;
} ready_set;

/* Every code object is freed: both arrays are zeroed where none was made, and a miss handed
 * back has given its code to its variant's job. */
static void ready_free(ready_set *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (r->jobs)
            fdt_code_free(&r->jobs[i].code);
        if (r->misses)
            fdt_code_free(&r->misses[i].code);
    }
    free(r->jobs);
    free(r->misses);
    free(r->miss_at);
    free(r->order);
}

/* Looks each variant up: refused and cached ones go straight to order, misses to the pool. */
static size_t sort_variants(fdt_session *s, const fdt_variant *vs, size_t n,
                            const fdt_session_hooks *h, ready_set *r)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        r->jobs[i] = (fdt_compile_job){.variant = vs[i]};
        const char *why = fdt_variant_check(&vs[i], &s->runner.problem, s->device);
        char key[33];
        if (why) {
            r->jobs[i].status = FDT_UNSUPPORTED;
            snprintf(r->jobs[i].message, sizeof r->jobs[i].message, "cannot run here: %s", why);
        } else if (code_key(s, &vs[i], key), h->code_get &&
                   h->code_get(h->ctx, key, &r->jobs[i].code) == 1) {
            r->jobs[i].cached = 1;
            r->cached++;
        } else {
            r->misses[m] = r->jobs[i];
            r->miss_at[m++] = i;
            continue;
        }
        r->order[r->norder++] = i;
    }
    return m;
}

/* A job just compiled, offered to the cache. */
static void offer(const fdt_session *s, const fdt_session_hooks *h, const fdt_compile_job *job)
{
    if (job->status == FDT_OK && h->code_put) {
        char key[33];
        code_key(s, &job->variant, key);
        h->code_put(h->ctx, key, &job->code);
    }
}

/* The next compile to end, into its variant's job, offered to the cache; SIZE_MAX when
 * none is left. */
static size_t take_compiled(fdt_session *s, const fdt_session_hooks *h, ready_set *r)
{
    const size_t j = fdt_compile_next(r->pool);
    if (j == SIZE_MAX)
        return SIZE_MAX;
    const size_t i = r->miss_at[j];
    r->jobs[i] = r->misses[j];
    r->misses[j].code = (fdt_code){0};
    offer(s, h, &r->jobs[i]);
    return i;
}

/* Loads a job's kernel. Cached code that does not load was stored damaged, and would fail
 * every job that needs it for good: it is dropped and compiled afresh, once, here, and the
 * fresh object is loaded instead; only one that loads is offered to the cache, whose row it
 * replaces (code that no build of this device loads must not be rewritten at every job).
 * The recompile runs inside the variant's deadline (variant_deadline_ms), which the compile
 * deadline of the helper bounds in turn. */
static fdt_status load_job(fdt_session *s, const fdt_session_hooks *h, fdt_compile_job *job,
                           fdt_kernel **k, fdt_error *why)
{
    const char *entry = fdt_stencil_of(&s->runner.problem)->entry;
    fdt_status st = s->ops->load(s->backend, &job->code, entry, k, why);
    if (st == FDT_OK || !job->cached)
        return st;
    char damage[sizeof why->msg];
    fdt_copy_text(damage, sizeof damage, why->msg);
    fdt_code_free(&job->code);
    job->cached = 0;
    fdt_compile_one(s->ops, s->helpers, own_slot(s), s->device->arch, &s->runner.problem, job);
    if (job->status != FDT_OK)
        return fdt_fail(why, job->status, "its cached code did not load (%.200s), and compiled "
                        "afresh: %s", damage, job->message);
    st = s->ops->load(s->backend, &job->code, entry, k, why);
    if (st == FDT_OK)
        offer(s, h, job);
    return st;
}

/* Starts making vs[0..n) ready. wait_all: every compile ends before this returns (the
 * device is the host's CPU, which compiles would slow while it is timed, or the caller wants
 * them all at once). 0, or -1 when memory ran out (err says so). */
static int ready_open(fdt_session *s, const fdt_variant *vs, size_t n, const fdt_session_hooks *h,
                      int wait_all, ready_set *r, fdt_error *err)
{
    const size_t room = n ? n : 1;
    memset(r, 0, sizeof *r);
    r->jobs = calloc(room, sizeof *r->jobs);
    r->misses = calloc(room, sizeof *r->misses);
    r->miss_at = calloc(room, sizeof *r->miss_at);
    r->order = calloc(room, sizeof *r->order);
    size_t m = 0;
    if (r->jobs && r->misses && r->miss_at && r->order) {
        m = sort_variants(s, vs, n, h, r);
        r->pool = fdt_compile_start(s->ops, s->helpers, s->device->arch, &s->runner.problem,
                                    r->misses, m, s->compile_threads);
    }
    if (!r->pool) {
        ready_free(r, n);
        fdt_fail(err, FDT_ERROR, "out of memory for %zu variants", n);
        return -1;
    }
    for (size_t i; wait_all && (i = take_compiled(s, h, r)) != SIZE_MAX;)
        r->order[r->norder++] = i;
    return 0;
}

/* The next variant ready to run: the refused and cached first, then each as its compile
 * ends; SIZE_MAX when none is left. */
static size_t ready_next(fdt_session *s, const fdt_session_hooks *h, ready_set *r)
{
    return r->taken < r->norder ? r->order[r->taken++] : take_compiled(s, h, r);
}

/* Drops the compiles not started, waits for those running, frees every code object. */
static void ready_close(ready_set *r, size_t n)
{
    fdt_compile_end(r->pool);
    ready_free(r, n);
}

/* ---- the first pass ---- */

/* What a result says of registers and memory until its kernel is loaded. */
static const fdt_resources unknown_resources = {-1, -1, -1, -1, -1};

/* After a launch error or a timeout: whether the device is gone, noting after what. */
static int lost(fdt_session *s, fdt_status st, const fdt_variant *v, fdt_error *err)
{
    if ((st != FDT_LAUNCH_ERROR && st != FDT_TIMEOUT) || fdt_session_device_alive(s))
        return 0;
    if (v)
        fdt_variant_name(v, s->lost_after, sizeof s->lost_after);
    else
        fdt_copy_text(s->lost_after, sizeof s->lost_after, "the copy");
    fdt_fail(err, st, "the device stopped working after %s (%s)", s->lost_after,
             fdt_status_name(st));
    return 1;
}

/* A kernel is unloaded only while the device works: one still spinning on a lost device
 * would make the unload wait for it for good. */
static void release(fdt_session *s, fdt_kernel *k)
{
    if (k && !s->lost_after[0])
        s->ops->unload(s->backend, k);
}

/* A measurement whose spread is beyond the bound is taken again, this many times in all:
 * a burst of another process's work passes, a host that stays busy does not. */
#define NOISY_TRIES 3

static int beyond_bound(const fdt_session *s, const fdt_stats *st)
{
    const double bound = s->runner.timing.max_spread;
    return bound > 0 && fdt_stats_spread(st) > bound;
}

static fdt_status noisy(const fdt_session *s, const fdt_stats *st, int tries, fdt_error *why)
{
    return fdt_fail(why, FDT_NOISY, "a median %.0f%% above the fastest sample%s (bound %.0f%%): "
                    "the device or the host was busy", 100 * fdt_stats_spread(st),
                    tries > 1 ? " at best, over every try" : "",
                    100 * s->runner.timing.max_spread);
}

/* The first pass only finds the leaders, which are timed again. A variant whose first
 * RACED_SAMPLES samples put its median beyond the problem's fastest so far by more than
 * RACE_MARGIN, and by more than their own interquartile range, cannot be one: those samples
 * rank it, and the rest of the settings' count is spared. Over the H100's recorded 512^3
 * space that is 73% of the variants; the five leaders are within 0.3% of each other there. */
#define RACED_SAMPLES 5
#define RACE_MARGIN 0.05

static int raced_out(const fdt_session *s, const fdt_samples *samples)
{
    if (s->fastest_ms <= 0)
        return 0;
    fdt_stats st;
    fdt_samples_stats(samples, &st);
    const double margin = fmax(RACE_MARGIN * s->fastest_ms, st.q3_ms - st.q1_ms);
    return st.median_ms > s->fastest_ms + margin;
}

/* One measurement of a verified kernel, whose launch took launch_ms: RACED_SAMPLES samples,
 * then the rest of the settings' count unless those raced it out. */
static fdt_status time_raced(fdt_session *s, fdt_kernel *k, const fdt_variant *v,
                             double launch_ms, fdt_stats *out, fdt_error *why)
{
    const int n = s->runner.timing.samples, first = n < RACED_SAMPLES ? n : RACED_SAMPLES;
    fdt_samples samples = {.launch_ms = launch_ms};
    fdt_status st = fdt_runner_time(&s->runner, k, v, first, &samples, why);
    if (st == FDT_OK && n > first && !raced_out(s, &samples))
        st = fdt_runner_time(&s->runner, k, v, n - first, &samples, why);
    fdt_samples_stats(&samples, out);
    fdt_samples_free(&samples);
    return st;
}

/* Times a verified kernel, whose launch took launch_ms, until a measurement's spread is
 * within the bound, at most NOISY_TRIES times, keeping the steadiest; FDT_NOISY if none was. */
static fdt_status time_steadily(fdt_session *s, fdt_kernel *k, const fdt_variant *v,
                                double launch_ms, fdt_stats *out, fdt_error *why)
{
    fdt_status st = FDT_OK;
    for (int t = 0; t < NOISY_TRIES; t++) {
        fdt_stats stats;
        st = time_raced(s, k, v, launch_ms, &stats, why);
        if (st != FDT_OK || t == 0 || fdt_stats_spread(&stats) < fdt_stats_spread(out))
            *out = stats;
        if (st == FDT_OK && !beyond_bound(s, out) &&
            (s->fastest_ms <= 0 || out->median_ms < s->fastest_ms))
            s->fastest_ms = out->median_ms;
        if (st != FDT_OK || !beyond_bound(s, out))
            return st;
    }
    return noisy(s, out, NOISY_TRIES, why);
}

/* Verifies and times one variant; 1 when the device stopped working (err says so). */
static int measure_one(fdt_session *s, const fdt_session_hooks *h, fdt_compile_job *job,
                       fdt_result *res, fdt_error *err)
{
    fdt_runner *r = &s->runner;
    fdt_error why = {0};
    fdt_kernel *k = NULL;
    fdt_verdict verdict;
    fdt_status st = load_job(s, h, job, &k, &why);
    res->compile_ms = job->ms; /* a compile afresh of cached code counts */
    if (st == FDT_OK) {
        s->ops->resources(k, &res->resources);
        const char *unfit = fdt_variant_check_compiled(&res->variant, &res->resources);
        st = unfit ? fdt_fail(&why, FDT_UNSUPPORTED, "cannot run here: %s", unfit)
                   : fdt_runner_verify(r, k, &res->variant, &verdict, &why);
    }
    if (st == FDT_OK)
        st = time_steadily(s, k, &res->variant, verdict.launch_ms, &res->stats, &why);
    res->status = st;
    if (st == FDT_OK || st == FDT_NOISY) /* a noisy figure is kept for the record */
        res->gbps = fdt_gbps(s->bytes, res->stats.median_ms);
    if (st != FDT_OK)
        fdt_copy_text(res->message, sizeof res->message, why.msg);
    const int gone = lost(s, st, &res->variant, err);
    release(s, k);
    return gone;
}

static void begin(const fdt_session_hooks *h, const fdt_variant *v)
{
    if (h->begin)
        h->begin(h->ctx, v);
}

static fdt_status not_prepared(const fdt_session *s, fdt_error *err)
{
    fdt_status st = refuse_if_lost(s, err);
    if (st == FDT_OK && !s->prepared)
        st = fdt_fail(err, FDT_ERROR, "no problem prepared");
    return st;
}

/* One variant's outcome from its job: refused or not compiled, or verified and timed;
 * 1 when the device stopped working (err says so). */
static int evaluate(fdt_session *s, const fdt_session_hooks *h, fdt_compile_job *job,
                    size_t index, fdt_result *res, fdt_error *err)
{
    *res = (fdt_result){.variant = job->variant, .index = index, .compile_ms = job->ms,
                        .status = job->status, .resources = unknown_resources};
    if (job->status != FDT_OK) {
        fdt_copy_text(res->message, sizeof res->message, job->message);
        return 0;
    }
    begin(h, &job->variant);
    return measure_one(s, h, job, res, err);
}

fdt_status fdt_session_measure(fdt_session *s, const fdt_variant *vs, size_t n,
                               const fdt_session_hooks *h, fdt_error *err)
{
    fdt_status st = not_prepared(s, err);
    ready_set r;
    if (st != FDT_OK || ready_open(s, vs, n, h, !s->pipeline, &r, err) != 0)
        return st != FDT_OK ? st : FDT_ERROR;
    for (size_t i; st == FDT_OK && (i = ready_next(s, h, &r)) != SIZE_MAX;) {
        fdt_result res;
        const int gone = evaluate(s, h, &r.jobs[i], i, &res, err);
        h->result(h->ctx, &res);
        if (gone)
            st = res.status;
    }
    if (st == FDT_OK && h->compiled)
        h->compiled(h->ctx, n, r.cached, fdt_compile_wall_ms(r.pool));
    ready_close(&r, n);
    return st;
}

/* ---- the leaders ---- */

/* The leaders, kernel 1 and the copy are timed again in turns: each takes part of its
 * samples in every round, in an order that rotates, so that clock or thermal drift over the
 * phase touches all of them alike and the ratios compare numbers taken side by side. */
#define ROUNDS 5

typedef struct candidate {
    fdt_compile_job *job;    /* a variant's compile (its code object); NULL: a copy */
    fdt_result *result;      /* the variant's outcome; NULL: a copy */
    fdt_kernel *copy_kernel; /* an interior copy, loaded; NULL (no code): the device copy */
    fdt_stats *copy_stats;   /* the device copy's statistics go here */
    fdt_dim3 grid, block;    /* the interior copy's launch */
    fdt_status status;       /* an interior copy's: one that fails drops out of the rounds */
    int baseline;            /* kernel 1 or the copy: without them the round means nothing */
    int persist;             /* cache mode auto: timed with f's row edges held in L2 */
    fdt_samples samples;
} candidate;

/* Cache mode auto times the leaders in both states where the runner can make persist. */
static int times_both_states(const fdt_session *s)
{
    return s->runner.problem.cache == FDT_CACHE_AUTO && s->runner.persist;
}

/* f in the candidate's state before its turn (only mode auto switches). */
static fdt_status set_state(fdt_session *s, const candidate *c, fdt_error *why)
{
    return times_both_states(s) ? fdt_runner_set_persist(&s->runner, c->persist, why) : FDT_OK;
}

/* One turn of one candidate; on a failure, lost_after says whether the device is gone. */
static fdt_status time_turn(fdt_session *s, const fdt_session_hooks *h, candidate *c,
                            int samples, fdt_error *why, fdt_error *err)
{
    const fdt_variant *v = c->result ? &c->result->variant : NULL;
    begin(h, v);
    fdt_kernel *k = NULL;
    fdt_status st = set_state(s, c, why);
    if (st == FDT_OK && c->job)
        st = load_job(s, h, c->job, &k, why);
    if (st == FDT_OK && k) {
        s->ops->resources(k, &c->result->resources);
        st = fdt_runner_time(&s->runner, k, v, samples, &c->samples, why);
    } else if (st == FDT_OK && c->copy_kernel)
        st = fdt_runner_time_copy_kernel(&s->runner, c->copy_kernel, c->grid, c->block,
                                         samples, &c->samples, why);
    else if (st == FDT_OK)
        st = fdt_runner_time_copy(&s->runner, samples, &c->samples, why);
    if (st != FDT_OK)
        lost(s, st, v, err);
    release(s, k);
    return st;
}

/* A leader that fails leaves the rounds with its status; kernel 1 or the copy failing, or
 * the device stopping, ends them. */
static fdt_status time_in_rounds(fdt_session *s, const fdt_session_hooks *h, candidate *cs,
                                 size_t n, int samples, fdt_error *err)
{
    const int per_turn = (samples + ROUNDS - 1) / ROUNDS;
    for (size_t round = 0; round < ROUNDS; round++)
        for (size_t i = 0; i < n; i++) {
            candidate *c = &cs[(i + round) % n];
            if ((c->result && c->result->status != FDT_OK) || c->status != FDT_OK)
                continue;
            fdt_error why = {0};
            const fdt_status st = time_turn(s, h, c, per_turn, &why, err);
            if (st == FDT_OK)
                continue;
            if (c->result) {
                c->result->status = st;
                fdt_copy_text(c->result->message, sizeof c->result->message, why.msg);
            }
            c->status = c->copy_kernel ? st : FDT_OK;
            if (s->lost_after[0]) {
                if (!c->baseline)
                    h->result(h->ctx, c->result);
                return st;
            }
            if (c->baseline) {
                *err = why;
                return st;
            }
        }
    return FDT_OK;
}

/* A candidate's statistics into its result, the device copy's or, for the fastest interior
 * copy, the interior copy's. */
static void conclude(fdt_session *s, candidate *c, fdt_session_baseline *out)
{
    fdt_stats interior;
    fdt_stats *st = c->result ? &c->result->stats : c->copy_kernel ? &interior : c->copy_stats;
    fdt_samples_stats(&c->samples, st);
    if (c->result && c->result->status == FDT_OK) {
        c->result->gbps = fdt_gbps(s->bytes, st->median_ms);
        fdt_error why;
        if (beyond_bound(s, st)) { /* the rounds were its tries: it is not timed again */
            c->result->status = noisy(s, st, 1, &why);
            fdt_copy_text(c->result->message, sizeof c->result->message, why.msg);
        }
    }
    if (c->copy_kernel && c->status == FDT_OK && st->samples > 0 &&
        (!out->interior_copy.samples || st->median_ms < out->interior_copy.median_ms)) {
        out->interior_copy = *st;
        const double bytes = fdt_interior_points(&s->runner.problem) *
                             (double)fdt_real_size(s->runner.problem.precision);
        out->interior_copy_gbps = fdt_copy_gbps(bytes, st->median_ms);
    }
    fdt_samples_free(&c->samples);
}

/* The interior copy's shapes, compiled and loaded for the prepared problem, as candidates;
 * a shape that fails to build drops out (the ceiling is the fastest of those that run). */
static size_t interior_copies(fdt_session *s, candidate *cs)
{
    if (!s->interior_copy)
        return 0;
    for (int w = 0; w < FDT_INTERIOR_COPIES; w++) {
        fdt_defines d;
        fdt_code code = {0};
        fdt_error why = {0};
        fdt_interior_copy_kernel(w, &s->runner.problem, &d, &cs[w].grid, &cs[w].block);
        cs[w].status = s->ops->compile(s->device->arch, fdt_interior_copy_source(),
                                       "fdt_interior_copy", d.list, d.count, &code, &why);
        if (cs[w].status == FDT_OK)
            cs[w].status = s->ops->load(s->backend, &code, "fdt_interior_copy",
                                        &cs[w].copy_kernel, &why);
        fdt_code_free(&code);
        if (cs[w].status != FDT_OK)
            cs[w].copy_kernel = NULL;
    }
    return FDT_INTERIOR_COPIES;
}

/* The candidates of jobs[0..n] (kernel 1, then the leaders) and of the copy, in one state;
 * returns how many. */
static size_t state_candidates(fdt_compile_job *jobs, fdt_result *results, size_t n,
                               int persist, fdt_stats *copy_stats, candidate *cs)
{
    for (size_t i = persist; i <= n; i++) { /* kernel 1 is the baseline in hot alone */
        results[i] = (fdt_result){.variant = jobs[i].variant, .index = i ? i - 1 : 0,
                                  .leader = 1, .status = jobs[i].status,
                                  .compile_ms = jobs[i].ms, .resources = unknown_resources};
        if (jobs[i].status != FDT_OK)
            fdt_copy_text(results[i].message, sizeof results[i].message, jobs[i].message);
        cs[i - persist] = (candidate){.job = &jobs[i], .result = &results[i],
                                      .baseline = i == 0, .persist = persist};
    }
    cs[n + 1 - persist] = (candidate){.baseline = 1, .persist = persist,
                                      .copy_stats = copy_stats};
    return n + 2 - persist;
}

/* The fastest of results[1..n] that ran, or NULL. */
static const fdt_result *fastest(const fdt_result *results, size_t n)
{
    const fdt_result *best = NULL;
    for (size_t i = 1; i <= n; i++)
        if (results[i].status == FDT_OK &&
            (!best || results[i].stats.median_ms < best->stats.median_ms))
            best = &results[i];
    return best;
}

/* Mode auto: persist's fastest leader, and the state that wins (persist NULL: the device
 * cannot persist). Persist must win by more than noise and by 0.5%. */
static void choose_state(const fdt_result *hot, const fdt_result *persist, size_t n,
                         fdt_session_baseline *out)
{
    const fdt_result *h = fastest(hot, n), *p = persist ? fastest(persist, n) : NULL;
    if (!p)
        return;
    out->persist_best = *p;
    if (!h || fdt_stats_faster(&h->stats, &p->stats, 0.005))
        out->cache = FDT_CACHE_PERSIST;
}

/* jobs[0] is kernel 1, jobs[1..n] the leaders; results likewise, and persisted likewise
 * (kernel 1's slot unused) when mode auto times the persist state too. */
static fdt_status leaders_timed(fdt_session *s, const fdt_session_hooks *h,
                                fdt_compile_job *jobs, fdt_result *results,
                                fdt_result *persisted, size_t n, int samples,
                                fdt_session_baseline *out, fdt_error *err)
{
    candidate *cs = calloc(2 * n + 3 + FDT_INTERIOR_COPIES, sizeof *cs);
    if (!cs)
        return fdt_fail(err, FDT_ERROR, "out of memory");
    size_t all = state_candidates(jobs, results, n, 0, &out->copy, cs);
    all += interior_copies(s, cs + all);
    if (persisted)
        all += state_candidates(jobs, persisted, n, 1, &out->persist_copy, cs + all);
    fdt_status st = time_in_rounds(s, h, cs, all, samples, err);
    if (persisted && st == FDT_OK) /* back to hot, the state variants are measured in */
        st = fdt_runner_set_persist(&s->runner, 0, err);
    for (size_t i = 0; i < all; i++) {
        conclude(s, &cs[i], out);
        release(s, cs[i].copy_kernel);
    }
    free(cs);
    out->kernel1 = results[0];
    out->cache = s->runner.problem.cache == FDT_CACHE_PERSIST ? FDT_CACHE_PERSIST
                                                               : FDT_CACHE_HOT;
    if (s->runner.problem.cache == FDT_CACHE_AUTO)
        choose_state(results, persisted, n, out);
    out->copy_gbps = fdt_copy_gbps(s->runner.bytes, out->copy.median_ms);
    out->persist_copy_gbps = persisted ? fdt_copy_gbps(s->runner.bytes,
                                                       out->persist_copy.median_ms) : 0;
    if (st == FDT_OK)
        for (size_t i = 1; i <= n; i++)
            h->result(h->ctx, &results[i]);
    return st;
}

double fdt_session_leaders_guess_ms(size_t n, int both_states, int samples, double sample_ms,
                                    double launch_ms, double compile_ms)
{
    const double in_state = (double)(n + 2) * (both_states ? 2 : 1); /* kernel 1, the copy */
    const double candidates = in_state + FDT_INTERIOR_COPIES;
    const int per_turn = (samples + ROUNDS - 1) / ROUNDS;
    return FDT_INTERIOR_COPIES * compile_ms +
           candidates * ROUNDS * (per_turn * sample_ms + 2 * launch_ms);
}

fdt_status fdt_session_leaders(fdt_session *s, const fdt_variant *vs, size_t n, int samples,
                               const fdt_session_hooks *h, fdt_session_baseline *out,
                               fdt_error *err)
{
    memset(out, 0, sizeof *out);
    out->persist_best.status = FDT_ERROR; /* none, unless mode auto times one */
    fdt_status st = not_prepared(s, err);
    if (st != FDT_OK)
        return st;
    const int both = times_both_states(s);
    fdt_variant *all = malloc((n + 1) * sizeof *all);
    fdt_result *results = calloc(2 * (n + 1), sizeof *results);
    if (!all || !results) {
        free(all);
        free(results);
        return fdt_fail(err, FDT_ERROR, "out of memory");
    }
    all[0] = fdt_variant_kernel1(&s->runner.problem);
    memcpy(all + 1, vs, n * sizeof *vs);
    ready_set r;
    if (ready_open(s, all, n + 1, h, 1, &r, err) != 0)
        st = FDT_ERROR;
    else if (r.jobs[0].status != FDT_OK)
        st = fdt_fail(err, r.jobs[0].status, "kernel 1 does not compile: %s",
                      r.jobs[0].message);
    else
        st = leaders_timed(s, h, r.jobs, results, both ? results + n + 1 : NULL, n, samples,
                           out, err);
    if (r.pool) /* else ready_open failed, and freed what it had made */
        ready_close(&r, n + 1);
    free(all);
    free(results);
    return st;
}
