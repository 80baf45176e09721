/* balance.c - the devices' balance, see balance.h. Measured at start-up rather than by a
 * job's worker so that it never shares the device with a job's timings, and before the
 * socket opens so that `devices` answers it from the first request; a doubted one again
 * when its device is idle, the scheduler starting no job there meanwhile. A worker measures it as
 * one task, {"op":"balance"}, under the supervisor's heartbeat and deadline, so that a
 * device that hangs or faults costs the start at most those, never the daemon. */
#include "daemon/balance.h"

#include "daemon/doubt.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/log.h"
#include "daemon/supervisor.h"
#include "engine/wire.h"

/* One device's measurement. */
typedef struct measuring {
    fdt_daemon *d;
    size_t device;
    size_t *pending; /* start-up: measurements not ended yet; NULL for a measurement again */
    fdt_balance_done_fn done; /* a measurement again: called at its end */
    int answered;    /* the worker said done or failed, and was told to quit */
} measuring;

void fdt_balance_describe(const fdt_device_slot *slot, char *out, size_t len)
{
    const fdt_balance *b = &slot->balance;
    if (!b->measured) {
        snprintf(out, len, "balance not measured");
        return;
    }
    char when[32];
    const time_t t = (time_t)b->measured;
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
    snprintf(out, len, "copy %.1f GB/s, L2 %.1f MiB at %.1f GB/s, measured %s%s%s",
             b->copy_gbps, slot->info.l2_bytes / 1048576.0, b->l2_gbps, when,
             b->doubt[0] ? "; doubtful: " : "", b->doubt);
}

/* A compiler's message ends with a newline, which the log line must not. */
static void not_measured(size_t device, int at_start, const char *why)
{
    int len = (int)strlen(why);
    while (len > 0 && isspace((unsigned char)why[len - 1]))
        len--;
    fdt_log_at(FDT_LOG_WARNING, "device %zu: balance not measured (%s): %.*s", device,
               at_start ? "the next start tries again" : "tried again later", len, why);
}

static void send_op(fdt_worker *w, json_t *msg)
{
    fdt_worker_send(w, msg);
    json_decref(msg);
}

/* Done or failed: the worker has nothing more to do. */
static void answered(fdt_worker *w, measuring *m)
{
    m->answered = 1;
    send_op(w, json_pack("{s:s}", "op", "quit"));
}

/* The worker's answer, judged, stored and kept in the slot; or why it could not be. A
 * doubted balance measured again, doubted again and slower, is kept as it was: noise only
 * ever slows a copy, so the host is busy still, and it is tried again later. */
static void store(measuring *m, json_t *ev)
{
    fdt_device_slot *slot = &m->d->devices[m->device];
    fdt_balance b;
    char err[256], said[512];
    if (fdt_wire_balance_parse(json_object_get(ev, "balance"), &b, err, sizeof err) != 0) {
        snprintf(said, sizeof said, "the worker's answer is unreadable: %s", err);
        not_measured(m->device, m->pending != NULL, said);
        return;
    }
    fdt_doubt_balance_measured(m->d, slot, &b);
    if (b.doubt[0] && slot->balance.doubt[0] && b.copy_gbps < slot->balance.copy_gbps) {
        fdt_log_at(FDT_LOG_NOTICE, "device %zu: balance measured again, copy %.1f GB/s, slower "
                   "than the doubted %.1f: the host is busy still; kept, tried again later",
                   m->device, b.copy_gbps, slot->balance.copy_gbps);
        return;
    }
    if (fdt_store_device_balance_put(m->d->store, slot->id, &b) != 0) {
        not_measured(m->device, m->pending != NULL, fdt_store_error(m->d->store));
        return;
    }
    slot->balance = b;
    if (!b.doubt[0])
        slot->outran_gbps = 0;
    fdt_balance_describe(slot, said, sizeof said);
    fdt_log_at(b.doubt[0] ? FDT_LOG_WARNING : FDT_LOG_INFO, "device %zu: balance stored: %s",
               m->device, said);
}

static void on_event(fdt_worker *w, json_t *ev, void *ctx)
{
    measuring *m = ctx;
    const char *kind = json_string_value(json_object_get(ev, "ev"));
    const char *message = json_string_value(json_object_get(ev, "message"));
    if (!kind || m->answered)
        return;
    if (strcmp(kind, "hello") == 0) {
        send_op(w, json_pack("{s:s, s:i, s:o}", "op", "balance", "task", 1, "timing",
                             fdt_worker_timing_json(m->d)));
    } else if (strcmp(kind, "done") == 0) {
        store(m, ev);
        answered(w, m);
    } else if (strcmp(kind, "failed") == 0) {
        not_measured(m->device, m->pending != NULL,
                     message ? message : "the worker could not measure it");
        answered(w, m);
    } else if (strcmp(kind, "fatal") == 0 || strcmp(kind, "error") == 0 ||
               strcmp(kind, "log") == 0) {
        fdt_log_worker(m->device, kind, message);
    }
}

static void on_ended(fdt_worker *w, fdt_worker_end end, int64_t status, int sig, void *ctx)
{
    (void)w;
    measuring *m = ctx;
    if (!m->answered && !m->d->stopping) { /* a stop's own end is no failure */
        char why[160];
        fdt_worker_end_describe(m->d, end, status, sig, why, sizeof why);
        not_measured(m->device, m->pending != NULL, why);
    }
    if (m->pending)
        --*m->pending;
    else
        m->done(m->d, m->device);
    free(m);
}

/* The worker measuring the device, or NULL when none could start (logged). */
static fdt_worker *start_measuring(fdt_daemon *d, size_t device, size_t *pending,
                                   fdt_balance_done_fn done)
{
    char err[256];
    measuring *m = calloc(1, sizeof *m);
    if (!m) {
        not_measured(device, pending != NULL, "out of memory");
        return NULL;
    }
    *m = (measuring){.d = d, .device = device, .pending = pending, .done = done};
    const fdt_worker_handler h = {.event = on_event, .ended = on_ended, .ctx = m};
    fdt_worker *w = fdt_worker_start(d, (int)device, &h, err, sizeof err);
    if (!w) {
        not_measured(device, pending != NULL, err);
        free(m);
        return NULL;
    }
    if (pending)
        fdt_log("device %zu: measuring its balance (copy and L2 bandwidth)", device);
    else
        fdt_log("device %zu: measuring its doubted balance again (%s)", device,
                d->devices[device].balance.doubt);
    return w;
}

void fdt_balance_measure_missing(fdt_daemon *d)
{
    size_t pending = 0;
    for (size_t i = 0; i < d->ndevices; i++)
        if (!d->devices[i].balance.measured)
            pending += start_measuring(d, i, &pending, NULL) != NULL;
    while (pending > 0)
        uv_run(d->loop, UV_RUN_ONCE);
}

fdt_worker *fdt_balance_remeasure(fdt_daemon *d, size_t device, fdt_balance_done_fn done)
{
    return start_measuring(d, device, NULL, done);
}
