/* worker.c - fdtune-worker, the only process that touches a GPU. It opens one device, runs
 * the daemon's tasks (measure, leaders, balance) read as JSON lines on the tasks fd, and
 * reports every step as JSON lines on the events fd (docs/protocol.md, "Worker pipe"). A
 * variant that faults or hangs takes down at most this process; the daemon starts another
 * and goes on.
 *
 * The protocol never uses stdin or stdout: vendor libraries (the driver, NVRTC, hiprtc) and
 * whatever starts the worker may print there, and one stray JSON object taken for an event
 * misleads the daemon. stdout is pointed at stderr before anything is loaded.
 *
 * Code objects already compiled are read from the daemon's store, opened read-only: the
 * one include of db/ in the engine, allowed because nothing includes a main
 * (docs/architecture.md, "Layers"). New ones go back over the pipe to the store's writer.
 *
 * Threads: the main one runs the libuv loop that reads the tasks fd and the tasks themselves
 * (one at a time, blocking); a heartbeat thread beats while a task runs. Both write through
 * emit(), which keeps every line whole. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

#include "engine/balance.h"
#include "frame.h"
#include "jsonl.h"
#include "result_row.h"
#include "engine/session.h"
#include "engine/wire.h"
#include "store.h"
#include "version.h"

/* Exit statuses beyond 0 (the tasks ended or quit) and 1 (the device or the events fd
 * cannot open). */
enum { EXIT_USAGE = 2, EXIT_DEVICE_LOST = 3 };

/* Longest task line: a few thousand variant names fit many times over. */
#define MAX_LINE (16u << 20)
/* Devices a probe tries at most. */
#define MAX_DEVICES 64

static const char usage[] =
    "usage: fdtune-worker --probe --backend B --events-fd FD\n"
    "       fdtune-worker --version\n"
    "       fdtune-worker --backend B --device N --tasks-fd FD --events-fd FD [--db PATH]\n"
    "                     [--heartbeat-ms MS] [--compile-threads N] [--nice N]\n"
    "                     [--compile-in auto|processes|threads] [--compile-deadline-ms MS]\n"
    "                     [--share N]\n"
    "                     [--test-families]\n"
    "       fdtune-worker " FDT_COMPILE_HELPER_ARG " B (compiles for another worker)\n"
    "Both: [--cpu-devices N] (the cpu backend presents N devices of one kind)\n"
    "The protocol's fds are 3 or above: stdin, stdout and stderr are never its channel.";

typedef struct options {
    const char *backend;
    int device;
    const char *db;
    int heartbeat_ms;
    int compile_threads;
    const char *compile_in; /* auto, processes or threads (compile_helper.h) */
    int compile_deadline_ms; /* a compile's longest wait in a helper process */
    int cpu_devices;
    int share; /* workers sharing the host's cores, this one included */
    int nice;
    int has_nice;
    int test_families;
    int probe;
    int version; /* --version: print it and exit */
    int tasks_fd, events_fd; /* the channel: tasks in, events out; -1 until given */
} options;

/* ---- output ---- */

static uv_mutex_t out_lock;
static FILE *events; /* the events fd, blocking: a line is written whole or the daemon is gone */

/* Writes ev (a reference it takes) as one line and, when code is not NULL, its bytes as
 * the frame the line announces (common/frame.h), flushed, never interleaved with another:
 * a beat written between a line and its frame would be read as the frame's bytes. */
static void emit_framed(json_t *ev, const fdt_code *code)
{
    char *text = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
    uv_mutex_lock(&out_lock);
    fputs(text ? text : "{\"ev\":\"log\",\"message\":\"out of memory for an event\"}", events);
    fputc('\n', events);
    if (text && code)
        fdt_frame_write(events, code->data, code->size); /* fails only with the daemon gone */
    fflush(events);
    uv_mutex_unlock(&out_lock);
    free(text);
    json_decref(ev);
}

static void emit(json_t *ev)
{
    emit_framed(ev, NULL);
}

static void emit_message(const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void emit_message(const char *kind, const char *fmt, ...)
{
    char message[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    emit(json_pack("{s:s, s:o}", "ev", kind, "message", fdt_wire_text(message)));
}

/* ---- heartbeat ---- */

typedef struct heartbeat {
    uv_thread_t thread;
    uv_mutex_t lock;
    uv_cond_t wake;
    int stop;
    uint64_t period_ns;
} heartbeat;

/* Beats on a schedule of its own: a spurious wake-up neither beats early nor skips one. */
static void beat_loop(void *arg)
{
    heartbeat *hb = arg;
    uv_mutex_lock(&hb->lock);
    uint64_t next = uv_hrtime() + hb->period_ns;
    while (!hb->stop) {
        const uint64_t now = uv_hrtime();
        if (now < next) {
            uv_cond_timedwait(&hb->wake, &hb->lock, next - now);
            continue;
        }
        emit(json_pack("{s:s}", "ev", "beat"));
        next = now + hb->period_ns;
    }
    uv_mutex_unlock(&hb->lock);
}

static int heartbeat_start(heartbeat *hb, int ms)
{
    hb->stop = 0;
    hb->period_ns = (uint64_t)ms * 1000000u;
    if (uv_mutex_init(&hb->lock) != 0)
        return -1;
    if (uv_cond_init(&hb->wake) != 0 || uv_thread_create(&hb->thread, beat_loop, hb) != 0) {
        uv_mutex_destroy(&hb->lock);
        return -1;
    }
    return 0;
}

static void heartbeat_stop(heartbeat *hb)
{
    uv_mutex_lock(&hb->lock);
    hb->stop = 1;
    uv_cond_signal(&hb->wake);
    uv_mutex_unlock(&hb->lock);
    uv_thread_join(&hb->thread);
    uv_cond_destroy(&hb->wake);
    uv_mutex_destroy(&hb->lock);
}

/* ---- the worker ---- */

typedef struct worker {
    options opt;
    fdt_session session;
    fdt_store *cache;   /* the daemon's store, read-only, for code objects; or NULL */
    json_int_t task;    /* the task running */
    uv_pipe_t in;
    fdt_jsonl lines;
    int exit_code;
} worker;

static json_t *task_event(const worker *w, const char *kind)
{
    return json_pack("{s:s, s:I}", "ev", kind, "task", w->task);
}

static void result_row(const fdt_result *r, fdt_result_row *row)
{
    *row = (fdt_result_row){
        .leader = r->leader, .median_ms = r->stats.median_ms, .min_ms = r->stats.min_ms,
        .q1_ms = r->stats.q1_ms, .q3_ms = r->stats.q3_ms, .gbps = r->gbps,
        .compile_ms = r->compile_ms, .samples = r->stats.samples, .reps = r->stats.reps,
        .vgprs = r->resources.vgprs, .sgprs = r->resources.sgprs,
        .scratch_bytes = r->resources.scratch_bytes, .shared_bytes = r->resources.shared_bytes,
    };
    fdt_variant_name(&r->variant, row->variant, sizeof row->variant);
    fdt_copy_text(row->status, sizeof row->status, fdt_status_name(r->status));
    fdt_copy_text(row->message, sizeof row->message, r->message);
}

static void emit_row(const worker *w, const fdt_result_row *row)
{
    json_t *ev = task_event(w, "result");
    json_object_set_new(ev, "result", fdt_wire_result_json(row));
    emit(ev);
}

/* ---- session hooks ---- */

/* A store that fails a lookup is dropped: tuning goes on, compiling everything. */
static int on_code_get(void *ctx, const char *key, fdt_code *code)
{
    worker *w = ctx;
    if (!w->cache)
        return 0;
    const int rc = fdt_store_code_get(w->cache, key, code);
    if (rc < 0) {
        emit_message("log", "code cache disabled: %s", fdt_store_error(w->cache));
        fdt_store_close(w->cache);
        w->cache = NULL;
    }
    return rc == 1;
}

/* The code event announces the frame of the object's bytes that follows it. */
static void on_code_put(void *ctx, const char *key, const fdt_code *code)
{
    (void)ctx;
    if (code->size > FDT_FRAME_MAX) {
        emit_message("log", "a code object of %zu bytes is over the %zu a frame carries: not "
                     "cached", code->size, FDT_FRAME_MAX);
        return;
    }
    emit_framed(json_pack("{s:s, s:s, s:I}", "ev", "code", "key", key, "bytes",
                          (json_int_t)code->size),
                code);
}

static void on_compiled(void *ctx, size_t count, size_t cached, double wall_ms)
{
    worker *w = ctx;
    json_t *ev = task_event(w, "compiled");
    json_object_set_new(ev, "count", json_integer((json_int_t)count));
    json_object_set_new(ev, "cached", json_integer((json_int_t)cached));
    json_object_set_new(ev, "wall_ms", json_real(wall_ms));
    emit(ev);
}

static void on_begin(void *ctx, const fdt_variant *v)
{
    worker *w = ctx;
    char name[FDT_VARIANT_NAME_MAX] = "copy";
    if (v)
        fdt_variant_name(v, name, sizeof name);
    json_t *ev = task_event(w, "begin");
    json_object_set_new(ev, "variant", json_string(name));
    emit(ev);
}

static void on_result(void *ctx, const fdt_result *r)
{
    fdt_result_row row;
    result_row(r, &row);
    emit_row(ctx, &row);
}

/* ---- tasks ---- */

typedef struct task {
    fdt_problem problem;
    fdt_timing timing;
    unsigned seed;
    int samples;          /* leaders */
    fdt_variant *variants;/* the names that parse and may run here */
    size_t count;
} task;

static int int_field(const json_t *msg, const char *name, long long lo, long long hi,
                     long long *out, char *err, size_t errlen)
{
    const json_t *v = json_object_get(msg, name);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        snprintf(err, errlen, "'%s' must be an integer from %lld to %lld", name, lo, hi);
        return -1;
    }
    *out = json_integer_value(v);
    return 0;
}

/* Why the worker refuses a variant by name before compiling anything, or NULL. */
static const char *refusal(const worker *w, const char *name, fdt_variant *v, char *why,
                           size_t len)
{
    if (fdt_variant_parse(name, v, why, len) != 0)
        return why;
    if (fdt_family_test_only(v->family) && !w->opt.test_families) {
        snprintf(why, len, "%s is a test-only family; this worker was started without "
                 "--test-families", fdt_family_name(v->family));
        return why;
    }
    return NULL;
}

/* Reports the names refused as results with status error; keeps the others in t. */
static int take_variants(const worker *w, const json_t *names, int leader, task *t, char *err,
                         size_t errlen)
{
    if (!json_is_array(names)) {
        snprintf(err, errlen, "'variants' must be an array of variant names");
        return -1;
    }
    for (size_t i = 0; i < json_array_size(names); i++)
        if (!json_is_string(json_array_get(names, i))) {
            snprintf(err, errlen, "'variants' must be an array of variant names; item %zu "
                     "is not a string", i);
            return -1;
        }
    t->variants = malloc((json_array_size(names) + 1) * sizeof *t->variants);
    if (!t->variants) {
        snprintf(err, errlen, "out of memory for %zu variants", json_array_size(names));
        return -1;
    }
    for (size_t i = 0; i < json_array_size(names); i++) {
        const char *name = json_string_value(json_array_get(names, i));
        char why[256];
        if (!refusal(w, name, &t->variants[t->count], why, sizeof why)) {
            t->count++;
            continue;
        }
        fdt_result_row row = {.leader = leader, .vgprs = -1, .sgprs = -1,
                              .scratch_bytes = -1, .shared_bytes = -1};
        fdt_copy_text(row.variant, sizeof row.variant, name);
        fdt_copy_text(row.status, sizeof row.status, fdt_status_name(FDT_ERROR));
        fdt_copy_text(row.message, sizeof row.message, why);
        emit_row(w, &row);
    }
    return 0;
}

static int parse_task(const worker *w, const json_t *msg, int leaders, task *t, char *err,
                      size_t errlen)
{
    long long seed, samples = 0;
    char why[384];
    memset(t, 0, sizeof *t);
    if (fdt_wire_problem_parse(json_object_get(msg, "problem"), &t->problem, why, sizeof why)) {
        snprintf(err, errlen, "problem: %s", why);
        return -1;
    }
    if (fdt_wire_timing_parse(json_object_get(msg, "timing"), &t->timing, why, sizeof why)) {
        snprintf(err, errlen, "timing: %s", why);
        return -1;
    }
    if (int_field(msg, "seed", 0, UINT_MAX, &seed, err, errlen) != 0 ||
        (leaders && int_field(msg, "samples", 1, 100000, &samples, err, errlen) != 0))
        return -1;
    t->seed = (unsigned)seed;
    t->samples = (int)samples;
    return take_variants(w, json_object_get(msg, "variants"), leaders, t, err, errlen);
}

/* A device that stopped working cannot be trusted with another variant: the daemon starts
 * a fresh worker. _exit, because closing a context with a kernel still spinning on it can
 * block for good. */
static void give_up_if_lost(const worker *w)
{
    if (!w->session.lost_after[0])
        return;
    emit_message("fatal", "device lost after %s", w->session.lost_after);
    _exit(EXIT_DEVICE_LOST);
}

/* Cache mode auto: the state chosen, and persist's fastest leader with the copy beside it
 * (the hot leaders came as result events). */
static void add_auto(json_t *ev, const fdt_session_baseline *base)
{
    json_object_set_new(ev, "state", json_string(fdt_cache_mode_name(base->cache)));
    if (base->persist_best.status != FDT_OK)
        return;
    char name[FDT_VARIANT_NAME_MAX];
    fdt_variant_name(&base->persist_best.variant, name, sizeof name);
    json_object_set_new(ev, "persist",
                        json_pack("{s:s, s:f, s:f, s:f}", "variant", name, "median_ms",
                                  base->persist_best.stats.median_ms, "gbps",
                                  base->persist_best.gbps, "copy_gbps", base->persist_copy_gbps));
}

/* A task's end, done or failed, with the device time it spent inside timed regions. */
static json_t *end_event(const worker *w, const char *kind, double gpu_ms)
{
    json_t *ev = task_event(w, kind);
    json_object_set_new(ev, "gpu_ms", json_real(gpu_ms));
    return ev;
}

static void finish_leaders(worker *w, const task *t, const fdt_session_baseline *base,
                           double gpu_ms)
{
    json_t *ev = end_event(w, "done", gpu_ms);
    if (t->problem.cache == FDT_CACHE_AUTO)
        add_auto(ev, base);
    json_object_set_new(ev, "copy", fdt_wire_stats_json(&base->copy));
    json_object_set_new(ev, "copy_gbps", json_real(base->copy_gbps));
    json_object_set_new(ev, "interior_copy", fdt_wire_stats_json(&base->interior_copy));
    json_object_set_new(ev, "interior_copy_gbps", json_real(base->interior_copy_gbps));
    json_object_set_new(ev, "kernel1", fdt_wire_stats_json(&base->kernel1.stats));
    json_object_set_new(ev, "kernel1_gbps", json_real(base->kernel1.gbps));
    double ceiling = 0;
    fdt_error err;
    if (fdt_balance_copy(w->session.ops, w->session.backend, &t->timing, &ceiling, &err) == FDT_OK)
        json_object_set_new(ev, "ceiling_gbps", json_real(ceiling));
    else /* the daemon then has nothing to compare: the job's figures go undoubted */
        emit_message("log", "the copy ceiling could not be timed again: %s", err.msg);
    emit(ev);
}

static void run_task(worker *w, const task *t, int leaders)
{
    const fdt_session_hooks hooks = {
        .ctx = w, .code_get = on_code_get, .code_put = on_code_put,
        .compiled = leaders ? NULL : on_compiled, .begin = on_begin, .result = on_result,
    };
    fdt_error err = {0};
    fdt_session_baseline base;
    fdt_status s = fdt_session_prepare(&w->session, &t->problem, &t->timing, t->seed, &err);
    const double busy = w->session.runner.gpu_ms; /* the runner is kept from task to task */
    if (s == FDT_OK)
        s = leaders ? fdt_session_leaders(&w->session, t->variants, t->count, t->samples, &hooks,
                                          &base, &err)
                    : fdt_session_measure(&w->session, t->variants, t->count, &hooks, &err);
    give_up_if_lost(w);
    const double gpu_ms = w->session.runner.gpu_ms - busy;
    if (s != FDT_OK) {
        json_t *ev = end_event(w, "failed", gpu_ms);
        json_object_set_new(ev, "message", fdt_wire_text(err.msg));
        emit(ev);
    } else if (leaders)
        finish_leaders(w, t, &base, gpu_ms);
    else
        emit(end_event(w, "done", gpu_ms));
}

/* The task's number, the one its events carry, into w->task; 0, or -1 when it cannot be
 * read (said as a line: the task cannot be answered as one). */
static int take_task_id(worker *w, const json_t *msg)
{
    char err[512];
    long long id;
    if (int_field(msg, "task", 0, LLONG_MAX, &id, err, sizeof err) != 0) {
        emit_message("error", "%s", err);
        return -1;
    }
    w->task = id;
    return 0;
}

/* A task that cannot be read fails as a task when its number can be read (the daemon then
 * moves on), and as a line otherwise. */
static void on_task(worker *w, const json_t *msg, int leaders)
{
    char err[512];
    if (take_task_id(w, msg) != 0)
        return;
    task t;
    if (parse_task(w, msg, leaders, &t, err, sizeof err) != 0) {
        json_t *ev = task_event(w, "failed");
        json_object_set_new(ev, "message", fdt_wire_text(err));
        emit(ev);
    } else
        run_task(w, &t, leaders);
    free(t.variants);
}

/* The device's balance (engine/balance.h), timed with the task's timing: done with it, or
 * failed. Its begin names it, so that the daemon's deadline covers it as a variant's. */
static void on_balance(worker *w, const json_t *msg)
{
    char why[384];
    fdt_timing timing;
    fdt_balance b;
    fdt_error err = {0};
    if (take_task_id(w, msg) != 0)
        return;
    fdt_status s = FDT_ERROR;
    if (fdt_wire_timing_parse(json_object_get(msg, "timing"), &timing, why, sizeof why) != 0) {
        snprintf(err.msg, sizeof err.msg, "timing: %s", why);
    } else {
        json_t *ev = task_event(w, "begin");
        json_object_set_new(ev, "variant", json_string("balance"));
        emit(ev);
        s = fdt_balance_measure(w->session.ops, w->session.backend, &timing, &b, &err);
    }
    json_t *ev = task_event(w, s == FDT_OK ? "done" : "failed");
    if (s == FDT_OK)
        json_object_set_new(ev, "balance", fdt_wire_balance_json(&b));
    else
        json_object_set_new(ev, "message", fdt_wire_text(err.msg));
    emit(ev);
}

/* ---- the tasks fd ---- */

static void finish(worker *w, int code)
{
    w->exit_code = code;
    uv_read_stop((uv_stream_t *)&w->in);
    if (!uv_is_closing((uv_handle_t *)&w->in))
        uv_close((uv_handle_t *)&w->in, NULL);
}

/* Returns 1 to stop reading (quit). */
static int on_line(void *ctx, char *line, size_t len)
{
    worker *w = ctx;
    if (strspn(line, " \t\r") == len)
        return 0;
    json_error_t jerr;
    json_t *msg = json_loadb(line, len, 0, &jerr);
    const char *op = json_string_value(json_object_get(msg, "op"));
    int stop = 0;
    if (!json_is_object(msg))
        emit_message("error", "not a JSON object: %s", msg ? "another JSON value" : jerr.text);
    else if (!op)
        emit_message("error", "'op' is missing or not a string");
    else if (strcmp(op, "measure") == 0 || strcmp(op, "leaders") == 0)
        on_task(w, msg, op[0] == 'l');
    else if (strcmp(op, "balance") == 0)
        on_balance(w, msg);
    else if (strcmp(op, "quit") == 0)
        stop = 1;
    else
        emit_message("error", "unknown op '%.64s' (expected measure, leaders, balance or "
                     "quit)", op);
    json_decref(msg);
    return stop;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h, (void)suggested;
    static char slab[65536];
    *buf = uv_buf_init(slab, sizeof slab);
}

static void on_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf)
{
    worker *w = stream->data;
    int rc = 0;
    if (n == UV_EOF && fdt_jsonl_pending(&w->lines))
        rc = fdt_jsonl_feed(&w->lines, "\n", 1, on_line, w); /* a last line with no newline */
    else if (n > 0)
        rc = fdt_jsonl_feed(&w->lines, buf->base, (size_t)n, on_line, w);
    if (rc == -1)
        emit_message("fatal", "a task line is longer than %u bytes", MAX_LINE);
    else if (rc == -2)
        emit_message("fatal", "out of memory reading the tasks");
    else if (n < 0 && n != UV_EOF)
        emit_message("fatal", "cannot read the tasks: %s", uv_strerror((int)n));
    if (rc < 0 || (n < 0 && n != UV_EOF))
        finish(w, 1);
    else if (rc == 1 || n == UV_EOF)
        finish(w, 0);
}

static int serve(worker *w)
{
    uv_loop_t *loop = uv_default_loop();
    int rc = uv_pipe_init(loop, &w->in, 0);
    if (rc == 0 && (rc = uv_pipe_open(&w->in, w->opt.tasks_fd)) != 0)
        uv_close((uv_handle_t *)&w->in, NULL);
    w->in.data = w;
    if (rc == 0 && (rc = uv_read_start((uv_stream_t *)&w->in, on_alloc, on_read)) != 0)
        uv_close((uv_handle_t *)&w->in, NULL);
    if (rc != 0) {
        emit_message("fatal", "cannot read tasks from fd %d (a pipe is expected): %s",
                     w->opt.tasks_fd, uv_strerror(rc));
        w->exit_code = 1;
    }
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
    return w->exit_code;
}

/* ---- start-up ---- */

static int probe(const char *backend)
{
    const fdt_backend_ops *ops;
    fdt_backend *b;
    fdt_error err = {0};
    if (fdt_backend_open(backend, 0, &ops, &b, &err) != FDT_OK) {
        emit_message("fatal", "%s", err.msg);
        return 1;
    }
    json_t *devices = json_array();
    for (int d = 1; d <= MAX_DEVICES; d++) {
        json_array_append_new(devices, fdt_wire_device_json(ops->info(b)));
        ops->close(b);
        if (d == MAX_DEVICES || ops->open(d, &b, &err) != FDT_OK)
            break;
    }
    emit(json_pack("{s:s, s:s, s:o}", "ev", "devices", "backend", ops->name, "devices",
                   devices));
    return 0;
}

static void open_cache(worker *w)
{
    char why[512];
    w->cache = fdt_store_open_readonly(w->opt.db, why, sizeof why);
    if (!w->cache)
        emit_message("log", "code cache disabled: %s", why);
}

/* A worker must not outlive its daemon: one left measuring after `kill -9 fdtuned` would
 * share the device with the next daemon's worker and skew its timings. */
static void die_with_parent(void)
{
    const pid_t parent = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        emit_message("log", "cannot tie the worker to its daemon: %s", strerror(errno));
    else if (getppid() != parent)
        _exit(1); /* the daemon died before the call: no signal will come */
}

/* Compiles go to helper processes unless told threads, whatever the backend: only a
 * compile in a process of its own can be ended at its deadline, and a compiler stopped or
 * hung (SIGSTOP, an include on a hung NFS mount) would otherwise hold the job for good. The
 * cpu backend's compiles are processes already, so a helper adds little to their cost. */
static void compile_in_helpers(worker *w)
{
    fdt_compile_mode mode;
    fdt_compile_mode_parse(w->opt.compile_in, &mode);
    if (mode == FDT_COMPILE_THREADS)
        return;
    fdt_session_compile_in_helpers(&w->session, "/proc/self/exe");
    if (w->session.helpers)
        fdt_compile_helpers_set_deadline(w->session.helpers, w->opt.compile_deadline_ms);
}

static int run_worker(worker *w)
{
    die_with_parent();
    if (w->opt.has_nice && setpriority(PRIO_PROCESS, 0, w->opt.nice) != 0)
        emit_message("log", "cannot set nice %d: %s", w->opt.nice, strerror(errno));
    fdt_error err = {0};
    if (fdt_session_open(&w->session, w->opt.backend, w->opt.device, w->opt.compile_threads,
                         &err) != FDT_OK) {
        emit_message("fatal", "%s", err.msg);
        return 1;
    }
    compile_in_helpers(w);
    emit_message("log", "%d compile threads%s, host work on %d threads (1/%d of the host's "
                 "cores)", w->session.compile_threads,
                 w->session.helpers ? " in helper processes" : "", omp_get_max_threads(),
                 w->opt.share);
    /* Every job's leaders round times the interior copy beside the device copy, as fdtune
     * bench does: the second ceiling, which pays for f's partly written row ends as a
     * stencil does. Measure tasks time no ceiling, so they are unaffected. */
    w->session.interior_copy = 1;
    emit(json_pack("{s:s, s:s, s:o}", "ev", "hello", "backend", w->session.ops->name, "device",
                   fdt_wire_device_json(w->session.device)));
    if (w->opt.db)
        open_cache(w);
    heartbeat hb;
    int code;
    fdt_jsonl_init(&w->lines, MAX_LINE);
    if (heartbeat_start(&hb, w->opt.heartbeat_ms) != 0) {
        emit_message("fatal", "cannot start the heartbeat thread");
        code = 1;
    } else {
        code = serve(w);
        heartbeat_stop(&hb);
    }
    fdt_jsonl_free(&w->lines);
    if (w->cache)
        fdt_store_close(w->cache);
    fdt_session_close(&w->session);
    return code;
}

/* A worker beside others on one host takes its share of the cores: for its host work
 * (OpenMP: the reference, the cpu backend's kernels) and, unless told, its compile threads.
 * Workers that each took every core would run several threads a core between them. */
static void take_share(options *o)
{
    if (o->share <= 1)
        return;
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN) / o->share;
    if (cores < 1)
        cores = 1;
    omp_set_num_threads(cores);
    if (o->compile_threads == 0)
        o->compile_threads = cores;
}

static int parse_int(const char *text, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    const long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* getopt_long's codes: the flags and the text options, then those with a whole number. */
enum {
    OPT_PROBE = 256, OPT_TEST_FAMILIES, OPT_BACKEND, OPT_DB, OPT_COMPILE_IN, OPT_VERSION,
    OPT_DEVICE, OPT_HEARTBEAT_MS, OPT_COMPILE_THREADS, OPT_COMPILE_DEADLINE_MS,
    OPT_CPU_DEVICES, OPT_SHARE, OPT_NICE, OPT_TASKS_FD, OPT_EVENTS_FD
};

static const struct option long_options[] = {
    {"probe", no_argument, NULL, OPT_PROBE},
    {"test-families", no_argument, NULL, OPT_TEST_FAMILIES},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"db", required_argument, NULL, OPT_DB},
    {"compile-in", required_argument, NULL, OPT_COMPILE_IN},
    {"version", no_argument, NULL, OPT_VERSION},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"heartbeat-ms", required_argument, NULL, OPT_HEARTBEAT_MS},
    {"compile-threads", required_argument, NULL, OPT_COMPILE_THREADS},
    {"compile-deadline-ms", required_argument, NULL, OPT_COMPILE_DEADLINE_MS},
    {"cpu-devices", required_argument, NULL, OPT_CPU_DEVICES},
    {"share", required_argument, NULL, OPT_SHARE},
    {"nice", required_argument, NULL, OPT_NICE},
    {"tasks-fd", required_argument, NULL, OPT_TASKS_FD},
    {"events-fd", required_argument, NULL, OPT_EVENTS_FD},
    {NULL, 0, NULL, 0},
};

/* The field of a whole-number option, and its range; NULL for any other code. */
static int *number_option(options *o, int opt, int *lo, int *hi)
{
    switch (opt) {
    case OPT_DEVICE: return *lo = 0, *hi = 1023, &o->device;
    case OPT_HEARTBEAT_MS: return *lo = 10, *hi = 3600000, &o->heartbeat_ms;
    case OPT_COMPILE_THREADS: return *lo = 0, *hi = 256, &o->compile_threads;
    case OPT_COMPILE_DEADLINE_MS: return *lo = 100, *hi = 86400000, &o->compile_deadline_ms;
    case OPT_CPU_DEVICES: return *lo = 1, *hi = 64, &o->cpu_devices;
    case OPT_SHARE: return *lo = 1, *hi = 1024, &o->share;
    case OPT_NICE: return o->has_nice = 1, *lo = -20, *hi = 19, &o->nice;
    case OPT_TASKS_FD: return *lo = 3, *hi = INT_MAX, &o->tasks_fd;
    case OPT_EVENTS_FD: return *lo = 3, *hi = INT_MAX, &o->events_fd;
    default: return NULL;
    }
}

/* One option getopt_long found (given: as the user wrote it, for messages): 0, or -1 with
 * the reason in why. */
static int take_option(options *o, int opt, const char *arg, const char *given, char *why,
                       size_t len)
{
    int lo = 0, hi = 0, *number = number_option(o, opt, &lo, &hi);
    switch (opt) {
    case OPT_PROBE: o->probe = 1; return 0;
    case OPT_TEST_FAMILIES: o->test_families = 1; return 0;
    case OPT_BACKEND: o->backend = arg; return 0;
    case OPT_DB: o->db = arg; return 0;
    case OPT_COMPILE_IN: o->compile_in = arg; return 0;
    case OPT_VERSION: o->version = 1; return 0;
    }
    if (!number) {
        snprintf(why, len, "unknown option or missing value: '%s'", given);
        return -1;
    }
    if (parse_int(arg, lo, hi, number) != 0) {
        snprintf(why, len, "%s must be a whole number from %d to %d, not '%s'", given, lo, hi,
                 arg);
        return -1;
    }
    return 0;
}

/* 0, or -1 with the reason in why. */
static int parse_options(int argc, char **argv, options *o, char *why, size_t len)
{
    *o = (options){.backend = "auto", .device = -1, .heartbeat_ms = 1000, .cpu_devices = 1,
                   .share = 1, .compile_in = "auto", .compile_deadline_ms = FDT_COMPILE_DEADLINE_MS,
                   .tasks_fd = -1, .events_fd = -1};
    opterr = 0;
    int opt, at = -1;
    while ((opt = getopt_long(argc, argv, "", long_options, &at)) != -1) {
        char given[64];
        if (opt == '?' || at < 0)
            snprintf(given, sizeof given, "%s", argv[optind - 1]);
        else
            snprintf(given, sizeof given, "--%s", long_options[at].name);
        if (take_option(o, opt, optarg, given, why, len) != 0)
            return -1;
        at = -1;
    }
    if (optind < argc) {
        snprintf(why, len, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    if (o->version)
        return 0;
    if (!fdt_compile_mode_parse(o->compile_in, NULL)) {
        snprintf(why, len, "--compile-in must be auto, processes or threads, not '%s'",
                 o->compile_in);
        return -1;
    }
    if (strcmp(o->backend, "auto") != 0 && !fdt_backend_find(o->backend)) {
        snprintf(why, len, "--backend must be auto, hip, cuda or cpu, not '%s'", o->backend);
        return -1;
    }
    const char *missing = o->events_fd < 0 ? "--events-fd"
                          : o->probe        ? NULL
                          : o->device < 0   ? "--device"
                          : o->tasks_fd < 0 ? "--tasks-fd" : NULL;
    if (missing) {
        snprintf(why, len, "%s is required", missing);
        return -1;
    }
    return 0;
}

/* The events fd as a stream; NULL with the reason on stderr. */
static FILE *open_events(int fd)
{
    FILE *f = fdopen(fd, "w");
    if (!f)
        fprintf(stderr, "fdtune-worker: cannot write events to fd %d: %s\n", fd,
                strerror(errno));
    return f;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], FDT_COMPILE_HELPER_ARG) == 0)
        return fdt_compile_helper_main(argv[2]); /* compiles for a worker: compile_helper.h */
    worker w = {0};
    char why[256];
    const int parsed = parse_options(argc, argv, &w.opt, why, sizeof why);
    if (parsed == 0 && w.opt.version) {
        printf("fdtune-worker %s\n", FDT_VERSION); /* on stdout, before it is stderr's */
        return 0;
    }
    /* Then, before a backend loads a vendor library: whatever prints on stdout lands
     * beside the worker's stderr, in the daemon's log. Should it fail (no stderr), stdout
     * stays as given, which is still not the channel. */
    (void)dup2(STDERR_FILENO, STDOUT_FILENO);
    if (uv_mutex_init(&out_lock) != 0)
        return 1;
    int code;
    if (parsed != 0) {
        fprintf(stderr, "fdtune-worker: %s\n%s\n", why, usage);
        code = EXIT_USAGE;
    } else if (!(events = open_events(w.opt.events_fd)))
        code = 1;
    else {
        fdt_cpu_set_devices(w.opt.cpu_devices);
        take_share(&w.opt);
        code = w.opt.probe ? probe(w.opt.backend) : run_worker(&w);
    }
    uv_mutex_destroy(&out_lock);
    return code;
}
