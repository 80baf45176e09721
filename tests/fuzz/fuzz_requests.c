/* fuzz_requests.c - libFuzzer target over fdtuned's request path: the bytes of one
 * connection go through the socket's line framer (engine/jsonl.c, as server.c feeds it) and
 * every complete line is answered by fdt_ops_answer, on a daemon state as real as a machine
 * without a GPU allows: a store on disk holding a few tuned problems, the cpu backend's
 * device, the query cache and the scheduler. Every answer must be one line holding a JSON object with "v":1 and a boolean
 * "ok": the protocol's promise for any input, checked here, not only the absence of faults.
 *
 * The input's first byte picks the peer (the daemon's own uid, which may change state, or an
 * untrusted one), the size of the reads the bytes arrive in, and the line limit (the
 * configured one, or a short one so that line_too_long is reached within libFuzzer's input
 * sizes); the rest is the stream. Each input is one connection to the same daemon, whose
 * store keeps what earlier inputs queued, as a long-running daemon's would.
 *
 * No worker is ever started (workers are processes, and the fuzzer must not fork them): the
 * scheduler's fdt_worker_start is wrapped by the linker (-Wl,--wrap, see the Makefile) to
 * fail the way a missing fdtune-worker does, so a queued job runs the scheduler's real path
 * to a failed state. */
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/ops.h"
#include "daemon/query.h"
#include "daemon/scheduler.h"
#include "daemon/supervisor.h"
#include "engine/hashes.h"
#include "engine/jsonl.h"

#define UNTRUSTED_UID 65534

static fdt_daemon daemon_state;
static char store_dir[64];

fdt_worker *__wrap_fdt_worker_start(fdt_daemon *d, int device, const fdt_worker_handler *h,
                                    char *err, size_t errlen);
void __wrap_fdt_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

fdt_worker *__wrap_fdt_worker_start(fdt_daemon *d, int device, const fdt_worker_handler *h,
                                    char *err, size_t errlen)
{
    (void)d, (void)device, (void)h;
    snprintf(err, errlen, "cannot start fdtune-worker: the fuzz target starts no process");
    return NULL;
}

/* The daemon logs a line per job it fails, which would bury libFuzzer's own report; the
 * message is still formatted, so that a bad format argument is caught. */
void __wrap_fdt_log(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
}

/* fdtuned.c's stop_soon starts a timer that stops the loop; no loop runs here, so the
 * shutdown op's effect is only stop_asked, which the next input resets. */
static void stop_soon(fdt_daemon *d, const char *why)
{
    (void)d, (void)why;
}

static void die(const char *what, const char *why)
{
    fprintf(stderr, "fuzz_requests: %s: %s\n", what, why);
    exit(1);
}

/* At exit (libFuzzer's time limit, or a finding): the store's files go with their
 * directory; the scheduler and the cache stay reachable from daemon_state until then. */
static void remove_store(void)
{
    fdt_store_close(daemon_state.store);
    const char *names[] = {"fdtuned.db", "fdtuned.db-wal", "fdtuned.db-shm", "fdtuned.db.lock"};
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
        job.key.problem = (fdt_problem){.nx = shapes[i][0], .ny = shapes[i][1],
                                        .nz = shapes[i][2], .radius = 1 + (int)i % 2,
                                        .precision = i % 2 ? FDT_FLOAT : FDT_DOUBLE,
                                        .cache = FDT_CACHE_HOT};
        fdt_copy_text(job.key.stencil, sizeof job.key.stencil, "laplacian");
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

/* fdtuned.c's start, less the socket and the worker's probe: the cpu backend's device is
 * read in-process and adopted as supervisor.c adopts a probe's answer. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fdt_daemon *d = &daemon_state;
    char err[512];
    d->loop = uv_default_loop();
    d->start_ns = uv_hrtime();
    d->stop_soon = stop_soon;
    fdt_config_defaults(&d->config, 0);
    snprintf(store_dir, sizeof store_dir, "/tmp/fdt-fuzz-XXXXXX");
    if (!mkdtemp(store_dir))
        die("mkdtemp", "cannot make the store's directory");
    snprintf(d->config.db, sizeof d->config.db, "%s/fdtuned.db", store_dir);
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

    if (fdt_query_cache_load(d, err, sizeof err) != 0 || fdt_scheduler_init(d, err, sizeof err) != 0)
        die("the daemon", err);
    atexit(remove_store);
    return 0;
}

static void check_answer(const char *answer)
{
    if (!answer)
        return; /* out of memory: the server drops the client, an honest end */
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

typedef struct connection {
    fdt_daemon *d;
    fdt_peer peer;
} connection;

/* server.c's on_line: a blank line is not a request; every other line gets one answer. */
static int on_line(void *ctx, char *line, size_t len)
{
    connection *c = ctx;
    if (len == 0)
        return 0;
    char *answer = fdt_ops_answer(c->d, &c->peer, line, len);
    check_answer(answer);
    free(answer);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t how = data[0];
    data++, size--;
    connection c = {.d = &daemon_state};
    c.peer.uid = how & 1 ? UNTRUSTED_UID : getuid();
    c.peer.gid = how & 1 ? UNTRUSTED_UID : getgid();
    c.peer.pid = getpid();
    daemon_state.stop_asked = 0;
    /* Reads of 1 to 64 bytes, or the whole input at once: lines split across reads are
     * where a framer goes wrong. */
    const size_t chunk = (how >> 1) & 63 ? (size_t)((how >> 1) & 63) : size + 1;
    const size_t max_line = how & 128 ? 64 : daemon_state.config.max_line_bytes;

    fdt_jsonl framer;
    fdt_jsonl_init(&framer, max_line);
    for (size_t at = 0; at < size;) {
        const size_t n = size - at < chunk ? size - at : chunk;
        const int rc = fdt_jsonl_feed(&framer, (const char *)data + at, n, on_line, &c);
        at += n;
        if (rc == -1) {
            /* server.c answers line_too_long and closes the connection. */
            char *answer = fdt_ops_error_line("line_too_long", "a request line is too long");
            check_answer(answer);
            free(answer);
            break;
        }
        if (rc != 0)
            break; /* out of memory: the server closes the connection */
    }
    fdt_jsonl_free(&framer);
    return 0;
}
