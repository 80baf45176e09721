/* supervisor.h - fdtune-worker processes: start one, talk JSON lines over its pipes (and
 * read the code objects it sends in frames after their lines, common/frame.h), watch
 * its heartbeat and its deadline per variant, and kill it when it stops answering. The
 * daemon never touches a GPU; everything that can fault or hang runs in a worker, and a
 * worker's death is an event the scheduler handles, never the daemon's. A worker is watched
 * by the heartbeat settings it was started with (a reload changes the next workers'), over
 * the time the daemon was running: a daemon paused for any time kills no healthy worker. */
#ifndef FDT_SUPERVISOR_H
#define FDT_SUPERVISOR_H

#include <jansson.h>

#include "daemon/daemon.h"
#include "jsonl.h"

typedef enum fdt_worker_end {
    FDT_END_EXITED,   /* it exited by itself (code in exit_status) */
    FDT_END_SIGNALED, /* a signal it did not ask for: a fault, the OOM killer */
    FDT_END_DEADLINE, /* killed: one variant ran past variant_deadline_ms */
    FDT_END_SILENT,   /* killed: no line for heartbeat_timeout_ms */
    FDT_END_STOPPED   /* killed on purpose: cancel, shutdown */
} fdt_worker_end;

typedef struct fdt_worker fdt_worker;

typedef struct fdt_worker_handler {
    /* Each event line the worker printed, parsed; ev is borrowed. */
    void (*event)(fdt_worker *w, json_t *ev, void *ctx);
    /* Each code event, once the frame its line announced is read: ev and the code
     * object's size bytes are borrowed. NULL: code objects are read and dropped. */
    void (*code)(fdt_worker *w, json_t *ev, const void *bytes, size_t size, void *ctx);
    /* The process is gone and every handle closed; w is freed after this returns. */
    void (*ended)(fdt_worker *w, fdt_worker_end end, int64_t exit_status, int term_signal,
                  void *ctx);
    void *ctx;
} fdt_worker_handler;

/* Starts a worker for device index device, with the settings' heartbeat_ms,
 * heartbeat_timeout_ms and variant_deadline_ms of now. NULL with the reason in err. */
fdt_worker *fdt_worker_start(fdt_daemon *d, int device, const fdt_worker_handler *h,
                             char *err, size_t errlen);
/* Writes one line (the JSON of msg); 0 or -1 when the worker is going away. */
int fdt_worker_send(fdt_worker *w, json_t *msg);
/* Kills the worker (SIGKILL); ended() follows with FDT_END_STOPPED unless it already died. */
void fdt_worker_stop(fdt_worker *w);
int fdt_worker_pid(const fdt_worker *w);
/* The variant the worker began and has not finished, or NULL. */
const char *fdt_worker_current(const fdt_worker *w);
/* The timing every task is sent with: the settings' samples, min_sample_ms, timeout_ms and
 * max_spread. */
json_t *fdt_worker_timing_json(const fdt_daemon *d);
/* How a worker ended, in words, for logs and stored messages. */
void fdt_worker_end_describe(const fdt_daemon *d, fdt_worker_end end, int64_t status, int sig,
                             char *out, size_t len);

/* Runs `fdtune-worker --probe` to completion on the loop and parses its device list.
 * 0, or -1 with the reason in err. */
int fdt_worker_probe(fdt_daemon *d, char *err, size_t errlen);

#endif
