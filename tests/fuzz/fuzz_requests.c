/* fuzz_requests.c - libFuzzer target over fdtuned's request path as a client meets it: the
 * bytes of one connection go through a real Unix socket into the daemon's own server
 * (daemon/server.c: accept, SO_PEERCRED, the connection slots, line framing, the queue that
 * answers one request a turn) and its operation table with its permission checks, on a
 * daemon state as real as a machine without a GPU allows: a store on disk holding a few
 * tuned problems, the cpu backend's device, the query cache and the scheduler, all on the
 * daemon's libuv loop, which the target drives until the server has answered and closed the
 * connection. Every answer must be one line holding a JSON object with "v":1 and a boolean
 * "ok", and every request line one answer, unless a line was too long: the protocol's
 * promises for any input, checked here, not only the absence of faults.
 *
 * The input's first byte picks the peer (the daemon's own uid, which may change state, or
 * uid 65534, which is refused tune, batch, cancel and shutdown: the connect is made with
 * that effective uid, so the kernel's SO_PEERCRED names it), the size of the writes the
 * bytes go out in (1 to 64 bytes, the loop run between them, or the whole input at once),
 * and the line limit (the configured one, or a short one so that line_too_long is reached
 * within libFuzzer's input sizes); the rest is the stream. Each input is one connection to
 * the same daemon, whose store keeps what earlier inputs queued, as a long-running
 * daemon's would. Becoming uid 65534 takes root: run as another user, the target runs
 * itself again under `unshare --map-auto --map-root-user` (uidmap), root in a user
 * namespace with 65536 uids, and stops with the reason if it cannot.
 *
 * No worker is ever started (workers are processes, and the fuzzer must not fork them): the
 * scheduler's fdt_worker_start is wrapped by the linker (-Wl,--wrap, see the Makefile) to
 * fail the way a missing fdtune-worker does, so a queued job runs the scheduler's real path
 * to a failed state. */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/log.h"
#include "daemon/ops.h"
#include "daemon/query.h"
#include "daemon/scheduler.h"
#include "daemon/server.h"
#include "daemon/supervisor.h"
#include "engine/sources.h"
#include "hashes.h"
#include "jsonl.h"

#define UNTRUSTED_UID 65534
/* Set in the environment of the run under unshare, so that it does not run itself again. */
#define IN_NAMESPACE "FDT_FUZZ_IN_NAMESPACE"

static fdt_daemon daemon_state;
static char store_dir[64];
static size_t configured_max_line; /* the settings' line limit, or the short one */

fdt_worker *__wrap_fdt_worker_start(fdt_daemon *d, int device, const fdt_worker_handler *h,
                                    char *err, size_t errlen);
void __wrap_fdt_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void __wrap_fdt_log_at(fdt_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

fdt_worker *__wrap_fdt_worker_start(fdt_daemon *d, int device, const fdt_worker_handler *h,
                                    char *err, size_t errlen)
{
    (void)d, (void)device, (void)h;
    snprintf(err, errlen, "cannot start fdtune-worker: the fuzz target starts no process");
    return NULL;
}

/* The daemon logs a line per job it fails and per request it refuses, which would bury
 * libFuzzer's own report; the message is still formatted, so that a bad format argument
 * is caught. */
void __wrap_fdt_log(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
}

void __wrap_fdt_log_at(fdt_log_level level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    (void)level;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
}

/* fdtuned.c's stop_soon starts a timer that stops the daemon; here the daemon serves every
 * input, so the shutdown op's effect is only stop_asked, which the next input resets. */
static void stop_soon(fdt_daemon *d, const char *why)
{
    (void)d, (void)why;
}

static void die(const char *what, const char *why)
{
    fprintf(stderr, "fuzz_requests: %s: %s\n", what, why);
    exit(1);
}

/* At exit (libFuzzer's time limit, or a finding): the store's files and the socket go with
 * their directory; the scheduler, the server and the cache stay reachable from daemon_state
 * until then. */
static void remove_store(void)
{
    fdt_store_close(daemon_state.store);
    const char *names[] = {"fdtuned.db", "fdtuned.db-wal", "fdtuned.db-shm", "fdtuned.db.lock",
                           "fdtuned.sock"};
    char path[128];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", store_dir, names[i]);
        unlink(path);
    }
    rmdir(store_dir);
}

/* Problems tuned before, as finished jobs leave them (results, then the best row), so that
 * queries meet exact, nearest and modelled answers and exports have rows: on an empty store
 * every query answers "default" and most of the query's code goes unreached. */
static void store_tuned(fdt_daemon *d)
{
    static const int shapes[][3] = {{64, 64, 64}, {128, 128, 128}, {256, 128, 64}, {96, 96, 32}};
    static const char *const variants[] = {"naive:64x1x1", "naive:128x2x1", "naive:256x1x2"};
    const size_t nvariants = sizeof variants / sizeof variants[0];
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        fdt_job job = {.device_index = 0, .strategy = "guided"};
        job.key.problem = (fdt_problem){.stencil = "laplacian", .nx = shapes[i][0],
                                        .ny = shapes[i][1], .nz = shapes[i][2],
                                        .radius = 1 + (int)i % 2,
                                        .precision = i % 2 ? FDT_FLOAT : FDT_DOUBLE,
                                        .cache = FDT_CACHE_HOT};
        if (fdt_store_job_create(d->store, &job) != 0)
            die("a tuned job", fdt_store_error(d->store));
        job.state = FDT_JOB_DONE; /* a job is created queued */
        job.finished = (int64_t)time(NULL);
        for (size_t v = 0; v < nvariants; v++) {
            fdt_result_row r = {.job_id = job.id, .status = "ok", .leader = v == 0,
                                .median_ms = 1.0 + (double)v, .min_ms = 0.9 + (double)v,
                                .q1_ms = 0.95 + (double)v, .q3_ms = 1.05 + (double)v,
                                .gbps = 100.0 / (1.0 + (double)v), .samples = 3, .reps = 1};
            fdt_copy_text(r.variant, sizeof r.variant, variants[v]);
            if (fdt_store_result_add(d->store, d->devices[0].id, &job.key, fdt_kernels_version(),
                                     &r) != 0)
                die("a tuned result", fdt_store_error(d->store));
        }
        fdt_best b = {.device_id = d->devices[0].id, .key = job.key, .gbps = 100.0,
                      .median_ms = 1.0, .copy_gbps = 150.0, .state = FDT_CACHE_HOT,
                      .job_id = job.id, .updated = (int64_t)time(NULL)};
        fdt_copy_text(b.variant, sizeof b.variant, variants[0]);
        fdt_copy_text(b.kernels, sizeof b.kernels, fdt_kernels_version());
        fdt_copy_text(job.best_variant, sizeof job.best_variant, variants[0]);
        job.best_gbps = b.gbps;
        job.total = job.done = job.ok = (int)nvariants;
        if (fdt_store_best_put(d->store, &b) != 0 || fdt_store_job_update(d->store, &job) != 0)
            die("a best row", fdt_store_error(d->store));
    }
}

/* Only root can connect as another uid; anyone else becomes root of a user namespace
 * first, by running this same command under unshare. */
static void become_root(char **argv)
{
    if (geteuid() == 0)
        return;
    if (getenv(IN_NAMESPACE))
        die("the user namespace", "still not root inside it");
    int argc = 0;
    while (argv[argc])
        argc++;
    char **args = calloc((size_t)argc + 5, sizeof *args);
    if (!args)
        die("unshare", "out of memory");
    const char *prefix[] = {"unshare", "--map-auto", "--map-root-user", "--"};
    for (int i = 0; i < 4; i++)
        args[i] = (char *)prefix[i];
    memcpy(args + 4, argv, (size_t)argc * sizeof *args);
    setenv(IN_NAMESPACE, "1", 1);
    execvp("unshare", args);
    die("unshare --map-auto --map-root-user (the uidmap package and /etc/subuid) to connect "
        "as uid 65534 when not root", strerror(errno));
}

/* fdtuned.c's start, less the worker's probe: the cpu backend's device is read in-process
 * and adopted as supervisor.c adopts a probe's answer. The socket admits every uid (0666),
 * as a site that lets any user query sets it, so that the untrusted peer meets the
 * permission checks rather than the file's mode; its directory lets others search it. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    become_root(*argv);
    fdt_daemon *d = &daemon_state;
    char err[512];
    d->loop = uv_default_loop();
    d->start_ns = uv_hrtime();
    d->stop_soon = stop_soon;
    fdt_config_defaults(&d->config, 0);
    configured_max_line = d->config.max_line_bytes;
    snprintf(store_dir, sizeof store_dir, "/tmp/fdt-fuzz-XXXXXX");
    if (!mkdtemp(store_dir) || chmod(store_dir, 0711) != 0)
        die("mkdtemp", "cannot make the store's directory");
    snprintf(d->config.db, sizeof d->config.db, "%s/fdtuned.db", store_dir);
    snprintf(d->config.socket, sizeof d->config.socket, "%s/fdtuned.sock", store_dir);
    d->config.socket_mode = 0666;
    d->store = fdt_store_open(d->config.db, err, sizeof err);
    if (!d->store)
        die("the store", err);

    const fdt_backend_ops *ops;
    fdt_backend *b;
    fdt_error berr = {0};
    if (fdt_backend_open("cpu", 0, &ops, &b, &berr) != FDT_OK)
        die("the cpu backend", berr.msg);
    d->devices = calloc(1, sizeof *d->devices);
    if (!d->devices)
        die("the device", "out of memory");
    d->devices[0].info = *ops->info(b);
    ops->close(b);
    fdt_copy_text(d->backend, sizeof d->backend, "cpu");
    fdt_device_fingerprint(&d->devices[0].info, d->devices[0].fingerprint);
    if (fdt_store_device_upsert(d->store, &d->devices[0].info, &d->devices[0].id,
                                &d->devices[0].balance) != 0)
        die("the device", fdt_store_error(d->store));
    d->ndevices = 1;
    store_tuned(d);

    atexit(remove_store);
    if (fdt_query_cache_load(d, err, sizeof err) != 0 ||
        fdt_scheduler_init(d, err, sizeof err) != 0 || fdt_server_start(d, err, sizeof err) != 0)
        die("the daemon", err);
    return 0;
}

static void check_answer(const char *answer)
{
    if (strchr(answer, '\n'))
        die("an answer spans lines", answer);
    json_error_t jerr;
    json_t *a = json_loads(answer, JSON_REJECT_DUPLICATES, &jerr);
    json_t *v = json_object_get(a, "v");
    if (!json_is_object(a) || !json_is_integer(v) ||
        json_integer_value(v) != FDT_PROTOCOL_VERSION || !json_is_boolean(json_object_get(a, "ok")))
        die("an answer breaks the envelope", answer);
    json_decref(a);
}

/* The request lines of an input: those ended by a newline and not blank (nothing but the
 * '\r' of a CRLF), each owed one answer. */
static size_t request_lines(const uint8_t *data, size_t size)
{
    size_t n = 0, start = 0;
    for (size_t i = 0; i < size; i++) {
        if (data[i] != '\n')
            continue;
        const size_t len = i - start;
        n += len > 1 || (len == 1 && data[start] != '\r');
        start = i + 1;
    }
    return n;
}

/* A connection to the daemon's socket, made as the peer the input picked: with that
 * effective uid and gid, which SO_PEERCRED reports, then back to root. Non-blocking. */
static int connect_as(int untrusted)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", daemon_state.config.socket);
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        die("socket", strerror(errno));
    if (untrusted && (setegid(UNTRUSTED_UID) != 0 || seteuid(UNTRUSTED_UID) != 0))
        die("becoming uid 65534", strerror(errno));
    const int rc = connect(fd, (const struct sockaddr *)&addr, sizeof addr);
    const int e = errno;
    if (untrusted && (seteuid(0) != 0 || setegid(0) != 0))
        die("becoming root again", strerror(errno));
    if (rc != 0)
        die("connect", strerror(e));
    return fd;
}

typedef struct reply {
    fdt_jsonl framer;
    size_t answers;
    int too_long; /* a line_too_long answer came: the lines after it are owed nothing */
} reply;

static int on_answer(void *ctx, char *line, size_t len)
{
    reply *r = ctx;
    (void)len;
    check_answer(line);
    r->answers++;
    r->too_long |= strstr(line, "\"code\":\"line_too_long\"") != NULL;
    return 0;
}

/* Reads what the daemon has answered so far; 1 once it has closed the connection. */
static int read_answers(int fd, reply *r)
{
    char buf[65536];
    for (;;) {
        const ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n == 0)
            return 1;
        if (n < 0)
            return errno == EAGAIN ? 0 : 1;
        if (fdt_jsonl_feed(&r->framer, buf, (size_t)n, on_answer, r) != 0)
            die("an answer", "longer than any answer may be");
    }
}

/* Sends up to n bytes; how many went (0 while the daemon reads nothing more: its queue is
 * full, or it closed the connection after line_too_long). */
static size_t send_some(int fd, const uint8_t *data, size_t n)
{
    const ssize_t sent = send(fd, data, n, MSG_NOSIGNAL);
    return sent > 0 ? (size_t)sent : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t how = data[0];
    data++, size--;
    fdt_daemon *d = &daemon_state;
    d->stop_asked = 0;
    /* Writes of 1 to 64 bytes with the loop run between them, or the whole input at once:
     * lines split across reads are where a framer goes wrong. */
    const size_t chunk = (how >> 1) & 63 ? (size_t)((how >> 1) & 63) : size + 1;
    d->config.max_line_bytes = how & 128 ? 64 : configured_max_line;
    const int fd = connect_as(how & 1);
    reply r = {0};
    fdt_jsonl_init(&r.framer, (size_t)1 << 30);
    int closed = 0, shut = 0;
    for (size_t at = 0; !closed;) {
        if (at < size) {
            at += send_some(fd, data + at, size - at < chunk ? size - at : chunk);
        } else if (!shut) {
            shutdown(fd, SHUT_WR); /* the end of the requests: the daemon answers, then closes */
            shut = 1;
        }
        uv_run(d->loop, UV_RUN_NOWAIT);
        closed = read_answers(fd, &r);
    }
    close(fd); /* the server closed its end in the loop turn that closed the connection */
    if ((how & 1) && d->stop_asked)
        die("uid 65534", "was let stop the daemon: the permission check was passed by");
    if (!r.too_long && r.answers != request_lines(data, size))
        die("a request", "was not answered exactly once");
    fdt_jsonl_free(&r.framer);
    return 0;
}
