/* scheduler.h - runs the durable job queue on the devices: one lane per device, each with
 * at most one worker and one job. A job is a search (daemon/job_search.c) whose batches the
 * worker measures, every result stored as it lands, then its leaders timed again; a job cut
 * short by a crash, a cancel or a restart of the daemon resumes from the store, never
 * measuring twice. */
#ifndef FDT_SCHEDULER_H
#define FDT_SCHEDULER_H

#include <jansson.h>

#include "daemon/daemon.h"

/* A lane's state: where its device's worker is, sent as its name (fdt_lane_state_name) in
 * devices' "worker" and status' "workers". Every legal transition is drawn at the top of
 * scheduler.c. */
typedef enum fdt_lane_state {
    FDT_LANE_DOWN = 0,
    FDT_LANE_STARTING,
    FDT_LANE_IDLE,
    FDT_LANE_BUSY,
    FDT_LANE_STATES           /* how many */
} fdt_lane_state;

/* Its name; "unknown" for a value out of range. */
const char *fdt_lane_state_name(fdt_lane_state s);

int fdt_scheduler_init(fdt_daemon *d, char *err, size_t errlen);
/* Starts queued jobs on lanes that are free; call after queueing. */
void fdt_scheduler_kick(fdt_daemon *d);
/* Cancels a queued or running job (a running one's worker is stopped); by, who asked
 * ("by uid 1000 (pid 4242)"), is logged and kept as the job's error. 1 done, 0 the job is
 * finished already, -1 a store error. */
int fdt_scheduler_cancel(fdt_daemon *d, int64_t job_id, const char *by);
/* [{"device":0,"state":"busy","pid":123,"job":12,"restarts":0}, ...] */
json_t *fdt_scheduler_lanes_json(fdt_daemon *d);
/* The job device runs now, as far as it has gone, or NULL. */
const fdt_job *fdt_scheduler_lane_job(fdt_daemon *d, size_t device);
/* How a running job goes on: the variants it measures yet, on the mean
 * (fdt_search_expected_left); its steady rate, variants a second since its first result of
 * this run (the compiles that fill the pipeline before it are paid once; 0 until then);
 * how long the last leaders' round on its device took (before any, a guess from this
 * run's first pass; 0 before a variant ran), and the seconds its own has run (0 before it
 * starts). */
typedef struct fdt_outlook {
    int left;
    double rate;
    double leaders_s, leaders_spent_s;
} fdt_outlook;
/* 0 with *out, while a lane runs job_id with its search open; else -1. */
int fdt_scheduler_outlook(fdt_daemon *d, int64_t job_id, fdt_outlook *out);
/* Brings each running job's wall time in the store up to now, for status: a job saves it
 * with each result, and a large job's leaders (seconds at 1024^3) or a long compile leave
 * it behind. Nothing while the store refuses writes. */
void fdt_scheduler_save_running(fdt_daemon *d);
/* The state of device i's lane. */
fdt_lane_state fdt_scheduler_lane_state(fdt_daemon *d, size_t device);
/* Why the store refuses writes (a full disk), and since when (unix s); NULL while it takes
 * them. Meanwhile every job is paused and new ones are refused. */
const char *fdt_scheduler_store_fault(fdt_daemon *d, int64_t *since);
/* Stops every worker; jobs they were running go back to the queue. The loop ends once the
 * workers are gone. */
void fdt_scheduler_stop(fdt_daemon *d);
/* After the loop has ended. */
void fdt_scheduler_free(fdt_daemon *d);

#endif
