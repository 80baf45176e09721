/* balance.c - the devices' balance, see balance.h. Measured at start-up rather than by a
 * job's worker so that it never shares the device with a job's timings, and before the
 * socket opens so that `devices` answers it from the first request. A worker measures it as
 * one task, {"op":"balance"}, under the supervisor's heartbeat and deadline, so that a
 * device that hangs or faults costs the start at most those, never the daemon. */
#include "daemon/balance.h"

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
    size_t *pending; /* measurements not ended yet */
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
    snprintf(out, len, "copy %.1f GB/s, L2 %.1f MiB at %.1f GB/s, measured %s", b->copy_gbps,
             slot->info.l2_bytes / 1048576.0, b->l2_gbps, when);
}

/* A compiler's message ends with a newline, which the log line must not. */
static void not_measured(size_t device, const char *why)
{
    int len = (int)strlen(why);
    while (len > 0 && isspace((unsigned char)why[len - 1]))
        len--;
    fdt_log_at(FDT_LOG_WARNING,
               "device %zu: balance not measured (the next start tries again): %.*s", device, len,
               why);
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

/* The worker's answer, stored and kept in the slot; or why it could not be. */
static void store(measuring *m, json_t *ev)
{
    fdt_device_slot *slot = &m->d->devices[m->device];
    fdt_balance b;
    char err[256], said[320];
    if (fdt_wire_balance_parse(json_object_get(ev, "balance"), &b, err, sizeof err) != 0) {
        snprintf(said, sizeof said, "the worker's answer is unreadable: %s", err);
        not_measured(m->device, said);
        return;
    }
    if (fdt_store_device_balance_put(m->d->store, slot->id, &b) != 0) {
        not_measured(m->device, fdt_store_error(m->d->store));
        return;
    }
    slot->balance = b;
    fdt_balance_describe(slot, said, sizeof said);
    fdt_log("device %zu: balance stored: %s", m->device, said);
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
        not_measured(m->device, message ? message : "the worker could not measure it");
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
    if (!m->answered) {
        char why[160];
        fdt_worker_end_describe(m->d, end, status, sig, why, sizeof why);
        not_measured(m->device, why);
    }
    --*m->pending;
    free(m);
}

/* 1 when a worker is measuring the device, 0 when none could start (logged). */
static int start_measuring(fdt_daemon *d, size_t device, size_t *pending)
{
    char err[256];
    measuring *m = calloc(1, sizeof *m);
    if (!m) {
        not_measured(device, "out of memory");
        return 0;
    }
    *m = (measuring){.d = d, .device = device, .pending = pending};
    const fdt_worker_handler h = {.event = on_event, .ended = on_ended, .ctx = m};
    if (!fdt_worker_start(d, (int)device, &h, err, sizeof err)) {
        not_measured(device, err);
        free(m);
        return 0;
    }
    fdt_log("device %zu: measuring its balance (copy and L2 bandwidth), once for this device",
            device);
    return 1;
}

void fdt_balance_measure_missing(fdt_daemon *d)
{
    size_t pending = 0;
    for (size_t i = 0; i < d->ndevices; i++)
        if (!d->devices[i].balance.measured)
            pending += (size_t)start_measuring(d, i, &pending);
    while (pending > 0)
        uv_run(d->loop, UV_RUN_ONCE);
}
