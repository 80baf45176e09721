/* supervisor.c - fdtune-worker processes and their watchdogs; see supervisor.h.
 *
 * Handle lifetimes: a worker owns a process handle, two pipes and its watchdog's timer. They
 * are all closed together when the process has exited (or could not start), and the worker
 * is freed once the last close callback has run, after the handler's ended() call.
 *
 * The watchdog judges a worker by the time the daemon was running, never by wall time across
 * the daemon's own pause (SIGSTOP, a paused VM, a stalled loop): a worker cannot be heard
 * while the daemon does not read. Its timer ticks TICK_PARTS times per heartbeat timeout; a
 * tick that comes late says the daemon did not run meanwhile, and only one tick's worth of
 * that time is counted. And a verdict needs two ticks in a row past a limit: libuv runs due
 * timers before it reads the pipes and reads them between two ticks, so a worker whose lines
 * were only waiting to be read is never taken for silent. */
#include "daemon/supervisor.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/log.h"
#include "frame.h"
#include "hashes.h"
#include "engine/wire.h"

#define WORKER_HANDLES 4 /* process, tasks pipe, events pipe, watchdog timer */
/* The longest event line, as the tasks' (worker.c): code objects travel in frames of their
 * own, so a line is an event's fields and a message at most. */
#define MAX_EVENT_LINE (16u << 20)
/* The worker's protocol runs on fds of its own, never its stdin or stdout: a vendor library
 * (or a wrapper script) that prints a JSON object there must not be taken for an event. Its
 * stdout and stderr are the daemon's stderr, so what they say is logged. */
#define TASKS_FD 3
#define EVENTS_FD 4
#define FD_TEXT(fd) #fd
#define FD_ARG(fd) FD_TEXT(fd)
/* The watchdog ticks this many times per heartbeat timeout, at most every TICK_MAX_MS: a
 * silent worker is killed between 1 + 1/TICK_PARTS and 1 + 2/TICK_PARTS timeouts. */
#define TICK_PARTS 8
#define TICK_MAX_MS 1000
/* Ticks in a row past a limit that make a verdict: the pipes are read between two. */
#define STRIKES 2

struct fdt_worker {
    fdt_daemon *d;
    int device;
    fdt_worker_handler h;
    uv_process_t proc;
    uv_pipe_t in, out;
    /* The watchdog, with the settings the worker was started with: a reload changes the
     * workers started after it, never the beat a running one was told to keep. */
    uv_timer_t watch;
    int beat_ms, silence_ms, deadline_ms;
    uint64_t tick_ms;
    uint64_t last_tick;  /* loop time of the last tick */
    uint64_t awake_ms;   /* the daemon's running time since the start, as the ticks count it */
    uint64_t line_at;    /* awake_ms when its last bytes were read */
    uint64_t begin_at;   /* awake_ms when its current variant began */
    int strikes;         /* ticks in a row that found it past a limit */
    int open_handles;
    int spawned, exited, closing;
    int discarded;       /* never started: closed without an ended() call */
    int64_t exit_status;
    int term_signal;
    fdt_worker_end end;  /* set when we kill it, so the exit is not taken for a crash */
    int end_chosen;
    fdt_jsonl framer;
    json_t *code_ev;     /* the code event whose frame is being read, or NULL */
    fdt_frame frame;     /* its bytes */
    int refused;         /* its stream was unreadable: nothing more of it is read */
    char current[FDT_VARIANT_NAME_MAX];
};

int fdt_worker_pid(const fdt_worker *w)
{
    return w->spawned ? w->proc.pid : 0;
}

const char *fdt_worker_current(const fdt_worker *w)
{
    return w->current[0] ? w->current : NULL;
}

/* Where the worker is: configured; else beside the daemon's own executable (a build tree);
 * else where make install puts it, ../libexec/fdtuned/ from the daemon's directory. */
static void worker_path(const fdt_daemon *d, char *out, size_t len)
{
    if (d->config.worker_path[0]) {
        fdt_copy_text(out, len, d->config.worker_path);
        return;
    }
    char exe[FDT_PATH_MAX - 64]; /* room for the names after the directory */
    size_t n = sizeof exe;
    if (uv_exepath(exe, &n) != 0) {
        fdt_copy_text(out, len, "fdtune-worker");
        return;
    }
    char *slash = strrchr(exe, '/');
    if (slash)
        slash[1] = '\0';
    snprintf(out, len, "%sfdtune-worker", slash ? exe : "");
    uv_fs_t req;
    const int beside = uv_fs_access(d->loop, &req, out, X_OK, NULL) == 0;
    uv_fs_req_cleanup(&req);
    if (slash && !beside)
        snprintf(out, len, "%s../libexec/fdtuned/fdtune-worker", exe);
}

static void on_closed(uv_handle_t *handle)
{
    fdt_worker *w = handle->data;
    if (--w->open_handles > 0)
        return;
    fdt_jsonl_free(&w->framer);
    fdt_frame_free(&w->frame);
    json_decref(w->code_ev);
    if (!w->discarded)
        w->h.ended(w, w->end, w->exit_status, w->term_signal, w->h.ctx);
    free(w);
}

static void close_all(fdt_worker *w)
{
    if (w->closing)
        return;
    w->closing = 1;
    uv_handle_t *handles[WORKER_HANDLES] = {(uv_handle_t *)&w->proc, (uv_handle_t *)&w->in,
                                            (uv_handle_t *)&w->out, (uv_handle_t *)&w->watch};
    for (int i = 0; i < WORKER_HANDLES; i++)
        if (!uv_is_closing(handles[i]))
            uv_close(handles[i], on_closed);
}

static void kill_for(fdt_worker *w, fdt_worker_end why)
{
    if (w->exited || w->closing)
        return;
    if (!w->end_chosen) {
        w->end = why;
        w->end_chosen = 1;
    }
    uv_process_kill(&w->proc, SIGKILL);
}

void fdt_worker_stop(fdt_worker *w)
{
    kill_for(w, FDT_END_STOPPED);
}

/* The daemon's running time now: the ticks' count and the time since the last tick, which
 * is never more than a tick (a late tick runs before anything is read). */
static uint64_t awake_now(const fdt_worker *w)
{
    const uint64_t since = uv_now(w->d->loop) - w->last_tick;
    return w->awake_ms + (since < w->tick_ms ? since : w->tick_ms);
}

/* Past a limit at STRIKES ticks in a row: killed, for silence before a deadline. */
static void judge(fdt_worker *w)
{
    const int silent = w->awake_ms - w->line_at > (uint64_t)w->silence_ms;
    const int overdue = w->current[0] && w->awake_ms - w->begin_at > (uint64_t)w->deadline_ms;
    w->strikes = silent || overdue ? w->strikes + 1 : 0;
    if (w->strikes < STRIKES)
        return;
    if (silent) {
        fdt_log_at(FDT_LOG_WARNING, "worker %d (pid %d) sent nothing for %d ms: killing it",
                   w->device, w->proc.pid, w->silence_ms);
        kill_for(w, FDT_END_SILENT);
    } else {
        fdt_log_at(FDT_LOG_WARNING, "worker %d (pid %d) spent over %d ms on %s: killing it",
                   w->device, w->proc.pid, w->deadline_ms, w->current);
        kill_for(w, FDT_END_DEADLINE);
    }
}

/* A tick more than half a tick late means the daemon itself was not running: one tick is
 * counted, and nothing judged until the pipes have been read. The strikes are kept, not
 * cleared: a loop so busy that every other tick comes late must still reach a verdict on a
 * worker that is really silent (the pipes are read between any two ticks that judge). */
static void on_tick(uv_timer_t *t)
{
    fdt_worker *w = t->data;
    const uint64_t now = uv_now(w->d->loop);
    const uint64_t elapsed = now - w->last_tick;
    w->last_tick = now;
    if (elapsed <= w->tick_ms + w->tick_ms / 2) {
        w->awake_ms += elapsed;
        judge(w);
        return;
    }
    w->awake_ms += w->tick_ms;
    fdt_log_at(FDT_LOG_WARNING,
               "a watchdog of worker %d fired %llu ms late (was the daemon paused?): that time is "
               "not counted, and the worker is judged once its lines are read",
               w->device, (unsigned long long)(elapsed - w->tick_ms));
}

static void on_worker_exit(uv_process_t *proc, int64_t exit_status, int term_signal)
{
    fdt_worker *w = proc->data;
    w->exited = 1;
    w->exit_status = exit_status;
    w->term_signal = term_signal;
    if (!w->end_chosen)
        w->end = term_signal ? FDT_END_SIGNALED : FDT_END_EXITED;
    close_all(w);
}

/* The deadline runs from a variant's begin to its result; compiling and idling are covered
 * by the heartbeat alone. */
static void track_progress(fdt_worker *w, json_t *ev)
{
    const char *kind = json_string_value(json_object_get(ev, "ev"));
    if (!kind)
        return;
    if (strcmp(kind, "begin") == 0) {
        fdt_copy_text(w->current, sizeof w->current,
                      json_string_value(json_object_get(ev, "variant")) ?: "?");
        w->begin_at = awake_now(w);
    } else if (strcmp(kind, "result") == 0 || strcmp(kind, "done") == 0) {
        w->current[0] = '\0';
    }
}

/* The stream cannot be read on (a line too long, a frame that is not what its line said):
 * nothing more of it is read, and the worker is killed. */
static void refuse(fdt_worker *w, const char *what)
{
    fdt_log_at(FDT_LOG_WARNING, "worker %d (pid %d) sent %s: killing it", w->device,
               w->proc.pid, what);
    w->refused = 1;
    uv_read_stop((uv_stream_t *)&w->out);
    kill_for(w, FDT_END_SIGNALED);
}

/* A code event announces the frame of the object's bytes that follows its line
 * (common/frame.h); the event is handled once the frame is whole. */
static void announce(fdt_worker *w, json_t *ev)
{
    const json_t *bytes = json_object_get(ev, "bytes");
    char why[160], what[200];
    if (!json_is_integer(bytes) || json_integer_value(bytes) < 0)
        snprintf(why, sizeof why, "'bytes' must be the size of the frame that follows");
    else if (fdt_frame_begin(&w->frame, (size_t)json_integer_value(bytes), why,
                             sizeof why) == 0) {
        w->code_ev = json_incref(ev);
        return;
    }
    snprintf(what, sizeof what, "a code event the daemon cannot read (%s)", why);
    refuse(w, what);
}

static int on_line(void *ctx, char *line, size_t len)
{
    fdt_worker *w = ctx;
    json_error_t jerr;
    json_t *ev = json_loadb(line, len, 0, &jerr);
    if (!json_is_object(ev)) {
        fdt_log_at(FDT_LOG_WARNING, "worker %d sent a line that is not a JSON object: %.80s",
                   w->device, line);
        json_decref(ev);
        return 0;
    }
    const char *kind = json_string_value(json_object_get(ev, "ev"));
    if (kind && strcmp(kind, "code") == 0) {
        announce(w, ev);
    } else {
        track_progress(w, ev);
        w->h.event(w, ev, w->h.ctx);
    }
    json_decref(ev);
    return w->closing || w->refused;
}

/* Reads what it can of the frame being read; a whole one goes to the handler with its
 * event. *used: the bytes it took. */
static void take_frame(fdt_worker *w, const char *data, size_t n, size_t *used)
{
    char why[200], what[240];
    const fdt_frame_state st = fdt_frame_feed(&w->frame, data, n, used, why, sizeof why);
    if (st == FDT_FRAME_MORE)
        return;
    if (st == FDT_FRAME_BAD) {
        snprintf(what, sizeof what, "an unreadable code frame (%s)", why);
        refuse(w, what);
        return;
    }
    size_t size;
    void *bytes = fdt_frame_take(&w->frame, &size);
    json_t *ev = w->code_ev;
    w->code_ev = NULL;
    if (w->h.code)
        w->h.code(w, ev, bytes, size, w->h.ctx);
    free(bytes);
    json_decref(ev);
}

/* A read's bytes go to the frame being read, else to the line framer a line at a time, so
 * that the bytes after a line that announces a frame are left to the frame. */
static void take(fdt_worker *w, const char *data, size_t n)
{
    while (n > 0 && !w->closing && !w->refused) {
        size_t used;
        if (w->code_ev) {
            take_frame(w, data, n, &used);
        } else {
            const char *nl = memchr(data, '\n', n);
            used = nl ? (size_t)(nl - data) + 1 : n;
            const int rc = fdt_jsonl_feed(&w->framer, data, used, on_line, w);
            if (rc == -1)
                refuse(w, "a line longer than any event may be");
            else if (rc == -2)
                refuse(w, "a line the daemon has no memory for");
        }
        data += used;
        n -= used;
    }
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    (void)handle;
    buf->base = malloc(suggested);
    buf->len = buf->base ? suggested : 0;
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    fdt_worker *w = stream->data;
    if (nread > 0) {
        w->line_at = awake_now(w);
        take(w, buf->base, (size_t)nread);
    } else if (nread < 0) {
        if (w->code_ev) /* the exit callback says how it ended */
            fdt_log_at(FDT_LOG_WARNING, "worker %d (pid %d) ended partway through a code "
                       "frame (%zu of its bytes read, for a code object of %zu): the code "
                       "object is dropped", w->device, w->proc.pid, w->frame.have,
                       w->frame.size);
        uv_read_stop(stream); /* EOF: the exit callback follows */
    }
    free(buf->base);
}

typedef struct write_req {
    uv_write_t req;
    char *text;
} write_req;

static void on_written(uv_write_t *req, int status)
{
    (void)status; /* a worker that died mid-write is reported by its exit */
    write_req *wr = (write_req *)req;
    free(wr->text);
    free(wr);
}

int fdt_worker_send(fdt_worker *w, json_t *msg)
{
    if (w->exited || w->closing)
        return -1;
    write_req *wr = malloc(sizeof *wr);
    char *text = json_dumps(msg, JSON_COMPACT);
    if (!wr || !text) {
        free(wr);
        free(text);
        return -1;
    }
    const size_t len = strlen(text);
    wr->text = text;
    text[len] = '\n'; /* json_dumps leaves the NUL; the newline takes its place */
    uv_buf_t buf = uv_buf_init(text, (unsigned)len + 1);
    if (uv_write(&wr->req, (uv_stream_t *)&w->in, &buf, 1, on_written) != 0) {
        free(text);
        free(wr);
        return -1;
    }
    return 0;
}

static void build_args(const fdt_worker *w, char store[][32], char **argv)
{
    fdt_daemon *d = w->d;
    const fdt_config *c = &d->config;
    int n = 1; /* argv[0] is filled by the caller */
    snprintf(store[0], 32, "%d", w->device);
    snprintf(store[1], 32, "%d", w->beat_ms);
    snprintf(store[2], 32, "%d", c->worker_nice);
    snprintf(store[3], 32, "%d", c->compile_threads);
    snprintf(store[4], 32, "%d", c->cpu_devices);
    snprintf(store[5], 32, "%zu", d->ndevices);
    snprintf(store[6], 32, "%d", c->compile_deadline_ms);
    argv[n++] = "--backend";
    argv[n++] = d->backend;
    argv[n++] = "--device";
    argv[n++] = store[0];
    argv[n++] = "--heartbeat-ms";
    argv[n++] = store[1];
    argv[n++] = "--nice";
    argv[n++] = store[2];
    argv[n++] = "--compile-threads";
    argv[n++] = store[3];
    argv[n++] = "--compile-in";
    argv[n++] = (char *)c->compile_in;
    argv[n++] = "--compile-deadline-ms";
    argv[n++] = store[6];
    argv[n++] = "--cpu-devices";
    argv[n++] = store[4];
    argv[n++] = "--share";
    argv[n++] = store[5];
    argv[n++] = "--db";
    argv[n++] = (char *)c->db;
    if (c->test_families)
        argv[n++] = "--test-families";
    argv[n++] = "--tasks-fd";
    argv[n++] = FD_ARG(TASKS_FD);
    argv[n++] = "--events-fd";
    argv[n++] = FD_ARG(EVENTS_FD);
    argv[n] = NULL;
}

static int spawn(fdt_worker *w, char **argv, char *err, size_t errlen)
{
    uv_loop_t *loop = w->d->loop;
    uv_pipe_init(loop, &w->in, 0);
    uv_pipe_init(loop, &w->out, 0);
    uv_timer_init(loop, &w->watch);
    w->in.data = w->out.data = w->watch.data = w->proc.data = w;
    w->open_handles = WORKER_HANDLES;
    uv_stdio_container_t stdio[EVENTS_FD + 1] = {
        {.flags = UV_IGNORE}, /* /dev/null */
        {.flags = UV_INHERIT_FD, .data.fd = 2},
        {.flags = UV_INHERIT_FD, .data.fd = 2},
        [TASKS_FD] = {.flags = UV_CREATE_PIPE | UV_READABLE_PIPE,
                      .data.stream = (uv_stream_t *)&w->in},
        [EVENTS_FD] = {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE,
                       .data.stream = (uv_stream_t *)&w->out},
    };
    uv_process_options_t opts = {.exit_cb = on_worker_exit, .file = argv[0], .args = argv,
                                 .stdio_count = EVENTS_FD + 1, .stdio = stdio};
    const int rc = uv_spawn(loop, &w->proc, &opts);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start %s: %s", argv[0], uv_strerror(rc));
        return -1;
    }
    w->spawned = 1;
    uv_read_start((uv_stream_t *)&w->out, on_alloc, on_read);
    w->last_tick = uv_now(loop);
    uv_timer_start(&w->watch, on_tick, w->tick_ms, w->tick_ms);
    return 0;
}

static fdt_worker *worker_new(fdt_daemon *d, int device, const fdt_worker_handler *h)
{
    fdt_worker *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->d = d;
    w->device = device;
    w->h = *h;
    w->beat_ms = d->config.heartbeat_ms;
    w->silence_ms = d->config.heartbeat_timeout_ms;
    w->deadline_ms = d->config.variant_deadline_ms;
    w->tick_ms = (uint64_t)w->silence_ms / TICK_PARTS;
    if (w->tick_ms > TICK_MAX_MS)
        w->tick_ms = TICK_MAX_MS;
    fdt_jsonl_init(&w->framer, MAX_EVENT_LINE);
    return w;
}

/* A spawn that failed leaves its handles initialized (uv_spawn's process handle too) but
 * no process: they are closed without an ended() call, since the caller gets NULL and an
 * error instead. */
static void discard(fdt_worker *w)
{
    w->discarded = 1;
    close_all(w);
}

fdt_worker *fdt_worker_start(fdt_daemon *d, int device, const fdt_worker_handler *h,
                             char *err, size_t errlen)
{
    fdt_worker *w = worker_new(d, device, h);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    char path[FDT_PATH_MAX], store[7][32];
    char *argv[32];
    worker_path(d, path, sizeof path);
    argv[0] = path;
    build_args(w, store, argv);
    if (spawn(w, argv, err, errlen) != 0) {
        discard(w);
        return NULL;
    }
    return w;
}

json_t *fdt_worker_timing_json(const fdt_daemon *d)
{
    const fdt_config *c = &d->config;
    const fdt_timing timing = {.min_sample_ms = c->min_sample_ms, .samples = c->samples,
                               .timeout_ms = c->timeout_ms, .max_spread = c->max_spread};
    return fdt_wire_timing_json(&timing);
}

void fdt_worker_end_describe(const fdt_daemon *d, fdt_worker_end end, int64_t status, int sig,
                             char *out, size_t len)
{
    switch (end) {
    case FDT_END_SIGNALED:
        snprintf(out, len, "the worker died of signal %d (%s)", sig, strsignal(sig));
        break;
    case FDT_END_DEADLINE:
        snprintf(out, len, "ran past the deadline of %d ms; the worker was killed",
                 d->config.variant_deadline_ms);
        break;
    case FDT_END_SILENT:
        snprintf(out, len, "the worker stopped answering and was killed");
        break;
    case FDT_END_EXITED:
        snprintf(out, len, "the worker exited with status %lld", (long long)status);
        break;
    case FDT_END_STOPPED:
        snprintf(out, len, "the worker was stopped");
        break;
    }
}

/* The probe: a worker run once with --probe, its one line kept. */
typedef struct probe {
    fdt_daemon *d;
    json_t *answer;
    int done;
} probe;

static void on_probe_event(fdt_worker *w, json_t *ev, void *ctx)
{
    (void)w;
    probe *p = ctx;
    if (!p->answer)
        p->answer = json_incref(ev);
}

static void on_probe_ended(fdt_worker *w, fdt_worker_end end, int64_t status, int sig, void *ctx)
{
    (void)w, (void)end, (void)status, (void)sig;
    probe *p = ctx;
    p->done = 1;
}

static int adopt_devices(fdt_daemon *d, json_t *answer, char *err, size_t errlen)
{
    const char *ev = json_string_value(json_object_get(answer, "ev"));
    if (!ev || strcmp(ev, "devices") != 0) {
        const char *msg = json_string_value(json_object_get(answer, "message"));
        snprintf(err, errlen, "no device: %s", msg ? msg : "the worker's probe failed");
        return -1;
    }
    json_t *list = json_object_get(answer, "devices");
    const size_t n = json_array_size(list);
    d->devices = n ? calloc(n, sizeof *d->devices) : NULL;
    if (n == 0 || !d->devices) {
        snprintf(err, errlen, n ? "out of memory" : "no device: the probe found none");
        return -1;
    }
    fdt_copy_text(d->backend, sizeof d->backend,
                  json_string_value(json_object_get(answer, "backend")) ?: "?");
    for (size_t i = 0; i < n; i++) {
        fdt_device_slot *slot = &d->devices[i];
        if (fdt_wire_device_parse(json_array_get(list, i), &slot->info, err, errlen) != 0)
            return -1;
        fdt_device_fingerprint(&slot->info, slot->fingerprint);
        if (fdt_store_device_upsert(d->store, &slot->info, &slot->id, &slot->balance) != 0) {
            snprintf(err, errlen, "cannot store the device: %s", fdt_store_error(d->store));
            return -1;
        }
        d->ndevices++;
    }
    return 0;
}

int fdt_worker_probe(fdt_daemon *d, char *err, size_t errlen)
{
    probe p = {.d = d};
    const fdt_worker_handler h = {.event = on_probe_event, .ended = on_probe_ended, .ctx = &p};
    fdt_worker *w = worker_new(d, -1, &h);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char path[FDT_PATH_MAX];
    worker_path(d, path, sizeof path);
    char devices[16];
    snprintf(devices, sizeof devices, "%d", d->config.cpu_devices);
    char *argv[] = {path, "--probe", "--backend", d->config.backend, "--cpu-devices", devices,
                    "--events-fd", FD_ARG(EVENTS_FD), NULL};
    if (spawn(w, argv, err, errlen) != 0) {
        discard(w);
        return -1;
    }
    while (!p.done)
        uv_run(d->loop, UV_RUN_ONCE);
    int rc = -1;
    if (p.answer)
        rc = adopt_devices(d, p.answer, err, errlen);
    else
        snprintf(err, errlen, "the worker's probe (%s) answered nothing", path);
    json_decref(p.answer);
    return rc;
}
