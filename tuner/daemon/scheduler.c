/* scheduler.c - the job queue on the devices; see scheduler.h.
 *
 * A lane is one device: its worker (or none), the job it runs (or none), and where that job
 * stands. Every step reads what it needs back from the store, so that resuming after a
 * crash, a cancel or a daemon restart takes the same path as starting fresh.
 *
 * A lane's states (fdt_lane_state), the worker and job each has, and every move between
 * them:
 *
 *   DOWN      no worker; a job waiting for its worker's restart, or none
 *   STARTING  a worker started, its hello not read yet; a job, or none
 *   IDLE      the worker is ready, with no task; no job, but for the step that gives one
 *   BUSY      the worker runs a task of the lane's job
 *
 *   DOWN --start_worker--> STARTING --hello--> IDLE --dispatch--> BUSY --finish_job--> IDLE
 *   STARTING, IDLE or BUSY --detach_worker--> DOWN: the worker was told to quit (no job
 *   left), stopped (a cancel, a store fault) or ended by itself; what it still sends, and
 *   its end, are ignored.
 *   DOWN --start_worker fails--> DOWN, and the job it was for fails.
 *   DOWN with no job, the device's balance doubted: balance.c's own worker measures it
 *   again (l->balancing); the lane takes no job until balance_remeasured kicks the queue.
 *
 * A lane that has a job when its worker says hello dispatches it at once (IDLE -> BUSY in
 * one step); one that finds no job in the queue tells its worker to quit (IDLE -> DOWN). A
 * job may end in any state (a cancel, a failed start): only BUSY moves with it, to IDLE.
 * The job's own states and phases are drawn in db/store_jobs.c.
 *
 * So l->worker is set exactly in STARTING, IDLE and BUSY, and only a lane that holds its
 * worker sends to it. A write the store refuses (a full disk) pauses every job at once
 * (pause_on_store_fault): each lane's job is dropped where the store last kept it, its
 * worker detached and stopped. The step that met the refusal ends there, touching neither
 * the job nor the worker it no longer has (save_job, finish_job, store_result and
 * store_winner say so), and no job starts until a write goes through again. */
#include "daemon/scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/balance.h"
#include "daemon/doubt.h"
#include "daemon/job_search.h"
#include "daemon/log.h"
#include "daemon/notify.h"
#include "daemon/query.h"
#include "daemon/supervisor.h"
#include "engine/session.h"
#include "engine/sources.h"
#include "hashes.h"
#include "engine/wire.h"

/* Variants sent to a worker at once, at most: a search's batch (FDT_SEARCH_BATCH_MAX). */
#define CHUNK FDT_SEARCH_BATCH_MAX
/* A worker that dies is started again after this pause, so a crash loop does not spin. */
#define RESTART_DELAY_MS 200
/* While the store refuses writes, how often it is tried again. */
#define STORE_RETRY_MS 2000
/* How often idle devices look for doubts due to be measured again (remeasure_doubtful_s):
 * a store query per idle device, and a doubt waits at most this past its time. */
#define IDLE_CHECK_MS 5000

typedef struct lane {
    fdt_scheduler *s;
    size_t device;
    fdt_lane_state state;
    fdt_worker *worker;
    uv_timer_t restart;
    int has_job;
    fdt_job job;
    fdt_job_search *search; /* the running job's, open while it runs */
    int quick_done;     /* the quick job's leaders were timed (a leader row is stored) */
    char chunk[CHUNK][FDT_VARIANT_NAME_MAX]; /* the variants of the task in flight */
    size_t nchunk;
    uint64_t measured_to_ms; /* the chunk's measuring time is counted up to here (uv_now) */
    uint64_t wall_mark_ms;  /* the job's wall time is counted up to here (uv_now) */
    int64_t task;       /* the task id last sent; events of older tasks are ignored */
    size_t readied, cached; /* this run of the job's variants made ready, and of those how
                               many came from the code cache */
    /* This run's first first-pass result: when (uv_now) and the job's count after it. The
     * compiles that fill the pipeline before it are paid once; the rate from it on is the
     * job's steady one. first_ms is 0 until then. */
    uint64_t first_ms;
    int first_done;
    /* The leaders' round: when this job's was sent (uv_now; 0 before), and how long the
     * last one on this lane took (0 before any), the best guess at the next one's. */
    uint64_t leaders_ms;
    double last_leaders_s;
    /* This run's first-pass variants that ran: how many, and their samples', launches' and
     * compiles' milliseconds summed, the guess at a leaders' round before one was timed. */
    int ran;
    double ran_sample_ms, ran_launch_ms, ran_compile_ms;
    /* A doubted balance is being measured again by a worker of balance.c's own: the lane
     * starts nothing meanwhile (DOWN), and its end kicks the queue. balance_tried: when the
     * last such measurement started (unix s), so a busy host is tried at most once per
     * remeasure_doubtful_s. */
    fdt_worker *balancing;
    int64_t balance_tried;
    int crashes;        /* worker deaths in a row without a result */
    int restarts;       /* worker deaths since the daemon started */
    char last_end[160];
} lane;

struct fdt_scheduler {
    fdt_daemon *d;
    lane *lanes;
    size_t nlanes;
    /* The store refused a job's write (a full disk): every job is paused, left in the store
     * as its last write left it, and new ones are refused, until a write goes through. */
    char store_fault[256]; /* why, empty when the store takes writes */
    int64_t store_fault_since;
    uv_timer_t store_retry;
    uv_timer_t idle_check;
};

static void start_worker(lane *l);
static void dispatch(lane *l);

static int64_t now_s(void)
{
    return (int64_t)time(NULL);
}

/* The names the socket sends, indexed by fdt_lane_state. */
static const char *const lane_names[FDT_LANE_STATES] = {"down", "starting", "idle", "busy"};

const char *fdt_lane_state_name(fdt_lane_state s)
{
    return (unsigned)s < FDT_LANE_STATES ? lane_names[s] : "unknown";
}

fdt_lane_state fdt_scheduler_lane_state(fdt_daemon *d, size_t device)
{
    return d->scheduler->lanes[device].state;
}

json_t *fdt_scheduler_lanes_json(fdt_daemon *d)
{
    json_t *list = json_array();
    for (size_t i = 0; i < d->scheduler->nlanes; i++) {
        const lane *l = &d->scheduler->lanes[i];
        json_array_append_new(list, json_pack("{s:I, s:s, s:i, s:I, s:i}", "device", (json_int_t)i,
                                              "state", fdt_lane_state_name(l->state), "pid",
                                              l->worker ? fdt_worker_pid(l->worker) : 0, "job",
                                              (json_int_t)(l->has_job ? l->job.id : 0),
                                              "restarts", l->restarts));
    }
    return list;
}

const fdt_job *fdt_scheduler_lane_job(fdt_daemon *d, size_t device)
{
    const lane *l = &d->scheduler->lanes[device];
    return l->has_job ? &l->job : NULL;
}

/* The lane's first leaders' round, before it has timed one: as this run's first pass
 * measured its variants (fdt_session_leaders_guess_ms); 0 before any ran. */
static double leaders_guess_s(const lane *l)
{
    const fdt_config *c = &l->s->d->config;
    if (l->ran == 0)
        return 0;
    const size_t leaders = (size_t)(l->ran < c->leaders ? l->ran : c->leaders);
    return fdt_session_leaders_guess_ms(leaders, l->job.choose_cache, c->leader_samples,
                                        l->ran_sample_ms / l->ran, l->ran_launch_ms / l->ran,
                                        l->ran_compile_ms / l->ran) / 1e3;
}

int fdt_scheduler_outlook(fdt_daemon *d, int64_t job_id, fdt_outlook *out)
{
    for (size_t i = 0; i < d->scheduler->nlanes; i++) {
        const lane *l = &d->scheduler->lanes[i];
        if (!l->has_job || l->job.id != job_id || !l->search)
            continue;
        const double since_first = (double)(uv_now(d->loop) - l->first_ms) / 1e3;
        out->left = fdt_job_search_expected_left(l->search);
        out->rate = l->first_ms && since_first > 0 ? (l->job.done - l->first_done) / since_first
                                                   : 0;
        out->leaders_s = l->last_leaders_s > 0 ? l->last_leaders_s : leaders_guess_s(l);
        out->leaders_spent_s = l->leaders_ms ? (double)(uv_now(d->loop) - l->leaders_ms) / 1e3 : 0;
        return 0;
    }
    return -1;
}

static void close_search(lane *l)
{
    fdt_job_search_close(l->search);
    l->search = NULL;
    l->nchunk = 0;
}

static void pause_on_store_fault(fdt_scheduler *s, const char *what);

/* The wall time since the last count goes to the job, so that what the store keeps is
 * never older than the last save, even after a kill -9. */
static void count_wall(lane *l)
{
    const uint64_t now = uv_now(l->s->d->loop);
    l->job.wall_s += (double)(now - l->wall_mark_ms) / 1e3;
    l->wall_mark_ms = now;
}

/* 0, or -1: the store refused it, and every job is paused (this lane's with the rest). */
static int save_job(lane *l)
{
    fdt_daemon *d = l->s->d;
    char what[64];
    count_wall(l);
    if (fdt_store_job_update(d->store, &l->job) == 0)
        return 0;
    snprintf(what, sizeof what, "job %lld's progress", (long long)l->job.id);
    pause_on_store_fault(l->s, what);
    return -1;
}

void fdt_scheduler_save_running(fdt_daemon *d)
{
    fdt_scheduler *s = d->scheduler;
    for (size_t i = 0; i < s->nlanes && !s->store_fault[0]; i++)
        if (s->lanes[i].has_job)
            save_job(&s->lanes[i]);
}

/* A job done says what it found and what it cost (of the variants made ready since this
 * daemon took the job up, how many the code cache held); any other end, why. */
static void log_end(const lane *l, const char *error)
{
    const fdt_job *j = &l->job;
    fdt_notify_status("job %lld %s on device %zu", (long long)j->id, fdt_job_state_name(j->state),
                      l->device);
    if (j->state != FDT_JOB_DONE) {
        fdt_log_at(j->state == FDT_JOB_FAILED ? FDT_LOG_WARNING : FDT_LOG_NOTICE,
                   "job %lld %s%s%s", (long long)j->id, fdt_job_state_name(j->state),
                   error ? ": " : "", error ? error : "");
        return;
    }
    fdt_log("job %lld done: best %s %.1f GB/s; %d evaluations in %.1f s (%.1f/s); %zu of %zu "
            "variants from the code cache, compile wall %.1f s; GPU busy %.0f%%",
            (long long)j->id, j->best_variant, j->best_gbps, j->done, j->wall_s,
            j->wall_s > 0 ? j->done / j->wall_s : 0, l->cached, l->readied, j->compile_s,
            j->wall_s > 0 ? 100 * j->gpu_s / j->wall_s : 0);
}

/* Ends the lane's job in a final state; the worker stays for the next job. -1: the store
 * refused the end, and the job is paused instead (it resumes, and ends, later). */
static int finish_job(lane *l, fdt_job_state state, const char *error)
{
    l->job.state = state;
    l->job.phase = FDT_JOB_PHASE_NONE;
    l->job.finished = now_s();
    fdt_copy_text(l->job.error, sizeof l->job.error, error ? error : "");
    if (save_job(l) != 0)
        return -1;
    log_end(l, error);
    l->has_job = 0;
    close_search(l);
    if (l->state == FDT_LANE_BUSY)
        l->state = FDT_LANE_IDLE;
    return 0;
}

/* The job's problem, timed in cache mode cache; the lane holds its worker (IDLE or BUSY). */
static int send_task(lane *l, json_t *task, fdt_cache_mode cache)
{
    fdt_problem p = l->job.key.problem;
    p.cache = cache;
    json_object_set_new(task, "task", json_integer(++l->task));
    json_object_set_new(task, "problem", fdt_wire_problem_json(&p));
    json_object_set_new(task, "timing", fdt_worker_timing_json(l->s->d));
    json_object_set_new(task, "seed", json_integer(l->s->d->config.seed));
    const int rc = fdt_worker_send(l->worker, task);
    json_decref(task);
    return rc;
}

/* Keeps the job's new phase, then sends it the task. Every task goes through here: a save
 * the store refused has paused every job and detached this lane's worker, so the task is
 * dropped, never sent to a worker the lane no longer holds. */
static void save_and_send(lane *l, json_t *task, fdt_cache_mode cache)
{
    if (save_job(l) != 0) {
        json_decref(task);
        return;
    }
    if (send_task(l, task, cache) != 0)
        fdt_worker_stop(l->worker); /* it is going away; ended() resumes the job */
}

static json_t *names_json(char *const *names, size_t from, size_t to)
{
    json_t *list = json_array();
    for (size_t i = from; i < to; i++)
        json_array_append_new(list, json_string(names[i]));
    return list;
}

static void send_chunk(lane *l, const char **names, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        fdt_copy_text(l->chunk[i], sizeof l->chunk[i], names[i]);
        json_array_append_new(list, json_string(names[i]));
    }
    l->nchunk = n;
    l->measured_to_ms = uv_now(l->s->d->loop);
    l->job.phase = FDT_JOB_PHASE_MEASURE;
    json_t *task = json_pack("{s:s, s:o}", "op", "measure", "variants", list);
    save_and_send(l, task, l->job.key.problem.cache);
}

/* phase: QUICK (the quick job's winner, stored at once; the search goes on) or LEADERS (the
 * search is over). A job that chooses the cache state times its leaders in mode auto;
 * its first pass is hot, as its key says. */
static void send_leaders(lane *l, fdt_job_phase phase)
{
    fdt_daemon *d = l->s->d;
    char **names = NULL;
    size_t n = 0;
    if (fdt_store_job_leaders(d->store, l->job.id, (size_t)d->config.leaders, &names, &n) != 0) {
        finish_job(l, FDT_JOB_FAILED, fdt_store_error(d->store));
        return;
    }
    if (n == 0) {
        finish_job(l, FDT_JOB_FAILED, "no variant passed verification");
        return;
    }
    l->job.phase = phase;
    l->nchunk = 0;
    if (phase == FDT_JOB_PHASE_LEADERS)
        l->leaders_ms = uv_now(d->loop);
    json_t *task = json_pack("{s:s, s:i, s:o}", "op", "leaders", "samples",
                             d->config.leader_samples, "variants", names_json(names, 0, n));
    fdt_store_names_free(names, n);
    save_and_send(l, task, l->job.choose_cache ? FDT_CACHE_AUTO : l->job.key.problem.cache);
}

static int in_chunk(const lane *l, const char *name)
{
    for (size_t i = 0; i < l->nchunk; i++)
        if (strcmp(l->chunk[i], name) == 0)
            return 1;
    return 0;
}

/* Counts one first-pass result into the job's progress and best so far. */
static void count_result(fdt_job *job, const fdt_result_row *r)
{
    job->done++;
    if (strcmp(r->status, "ok") != 0) {
        job->failed++;
        job->noisy += strcmp(r->status, "noisy") == 0;
        return;
    }
    job->ok++;
    if (r->gbps > job->best_gbps) {
        job->best_gbps = r->gbps;
        fdt_copy_text(job->best_variant, sizeof job->best_variant, r->variant);
    }
}

/* Counts and the best so far, from what the store holds for the job; a leader row means
 * the quick job's leaders were timed already. */
static int tally(lane *l)
{
    fdt_result_row *rows = NULL;
    size_t n = 0;
    if (fdt_store_job_results(l->s->d->store, l->job.id, &rows, &n) != 0)
        return -1;
    l->job.done = l->job.ok = l->job.failed = l->job.noisy = 0;
    l->quick_done = 0;
    for (size_t i = 0; i < n; i++) {
        if (!rows[i].leader)
            count_result(&l->job, &rows[i]);
        l->quick_done |= rows[i].leader;
    }
    free(rows);
    return 0;
}

/* The job's search, opened from the store when the job (re)starts on this lane: the warm
 * start it chooses the first time is stored with the job. */
static int plan(lane *l)
{
    char err[256];
    if (!l->search) {
        l->search = fdt_job_search_open(l->s->d, &l->job, l->device, err, sizeof err);
        if (!l->search) {
            finish_job(l, FDT_JOB_FAILED, err);
            return -1;
        }
        l->job.total = fdt_job_search_total(l->search);
        l->first_ms = 0;
        l->leaders_ms = 0;
        l->ran = 0;
        l->ran_sample_ms = l->ran_launch_ms = l->ran_compile_ms = 0;
    }
    if (tally(l) != 0) {
        finish_job(l, FDT_JOB_FAILED, fdt_store_error(l->s->d->store));
        return -1;
    }
    return 0;
}

/* The job's next step: the next batch its search proposes, the quick job's leaders once
 * their evaluations are in (and one of them ran), or, when the search is over, the
 * leaders. */
static void next_step(lane *l)
{
    const char *names[CHUNK];
    const size_t n = fdt_job_search_next(l->search, names, CHUNK);
    if (n > 0 && l->job.quick && !l->quick_done && l->job.done >= FDT_SEARCH_QUICK_EVALS &&
        l->job.ok > 0)
        send_leaders(l, FDT_JOB_PHASE_QUICK);
    else if (n > 0)
        send_chunk(l, names, n);
    else
        send_leaders(l, FDT_JOB_PHASE_LEADERS);
}

/* Sends the job's next step to an idle worker. */
static void dispatch(lane *l)
{
    if (plan(l) != 0)
        return;
    l->state = FDT_LANE_BUSY;
    next_step(l);
}

/* The lane forgets a worker that is going away (asked to quit, or killed); its end, when it
 * comes, is ignored, and the lane may start a fresh worker at once. */
static void detach_worker(lane *l)
{
    l->worker = NULL;
    l->state = FDT_LANE_DOWN;
}

static void quit_worker(lane *l)
{
    json_t *quit = json_pack("{s:s}", "op", "quit");
    fdt_worker_send(l->worker, quit);
    json_decref(quit);
    detach_worker(l);
}

static void balance_remeasured(fdt_daemon *d, size_t device)
{
    d->scheduler->lanes[device].balancing = NULL;
    fdt_scheduler_kick(d);
}

/* The device idle and its balance doubted, last measured or tried remeasure_doubtful_s
 * ago: it is measured again, alone on the device. A lane that still holds its worker tells
 * it to quit first and starts nothing this turn: the next kick (idle_check) finds the
 * device free. 1 when the balance is due (the lane then takes no job this turn). */
static int remeasure_balance(lane *l)
{
    fdt_daemon *d = l->s->d;
    const fdt_balance *b = &d->devices[l->device].balance;
    const int64_t last = b->measured > l->balance_tried ? b->measured : l->balance_tried;
    if (!b->doubt[0] || d->config.remeasure_doubtful_s == 0 ||
        now_s() < last + d->config.remeasure_doubtful_s)
        return 0;
    if (l->worker) {
        quit_worker(l);
        return 1;
    }
    l->balance_tried = now_s();
    l->balancing = fdt_balance_remeasure(d, l->device, balance_remeasured);
    return l->balancing != NULL;
}

/* The job that measures a doubtful winner again, as its own job did; 0 when that job is no
 * longer stored (nothing to copy: the winner is then never measured again). */
static int remeasure_job(lane *l, const fdt_best *due, fdt_job *job)
{
    fdt_daemon *d = l->s->d;
    fdt_job was;
    if (fdt_store_job_get(d->store, due->job_id, &was) != 1)
        return 0;
    *job = (fdt_job){.device_index = (int)l->device, .key = was.key, .subset = was.subset,
                     .budget = was.budget, .budget_s = was.budget_s, .patience = was.patience,
                     .choose_cache = was.choose_cache, .ran_on = -1, .remeasures = was.id};
    fdt_copy_text(job->fingerprint, sizeof job->fingerprint, d->devices[l->device].fingerprint);
    fdt_copy_text(job->family, sizeof job->family, was.family);
    fdt_copy_text(job->strategy, sizeof job->strategy, was.strategy);
    return 1;
}

/* The device idle: the doubtful winner of a disturbed host due first, if any, gets one
 * job that tunes it again as its own job did, queued behind any other. Its rows (a cache
 * auto row and its hot row are one job's) are due no more: the new job's winner says afresh
 * whether it is doubted, and the winner of such a job is never measured again by itself, so
 * a host busy for good costs one job a doubt, not one a period. 1 when a job is queued, 0
 * none, -1 the store refused a write (every job is paused) or could not be read (logged). */
static int queue_remeasure(lane *l)
{
    fdt_daemon *d = l->s->d;
    fdt_best due;
    fdt_job job;
    const int found = d->config.remeasure_doubtful_s == 0
                          ? 0
                          : fdt_store_best_due(d->store, d->devices[l->device].id, now_s(), &due);
    if (found < 0)
        fdt_log_at(FDT_LOG_ERR, "cannot read the doubtful answers: %s", fdt_store_error(d->store));
    if (found <= 0)
        return found;
    const int copied = remeasure_job(l, &due, &job);
    if ((copied && fdt_store_job_create(d->store, &job) != 0) ||
        fdt_store_best_defer(d->store, due.device_id, due.job_id, 0) != 0) {
        pause_on_store_fault(l->s, "a doubtful winner's job to measure it again");
        return -1;
    }
    if (!copied) {
        fdt_log_at(FDT_LOG_NOTICE, "the doubtful winner of %dx%dx%d is not measured again: its "
                   "job %lld is no longer stored", due.key.problem.nx, due.key.problem.ny,
                   due.key.problem.nz, (long long)due.job_id);
        return 0;
    }
    fdt_log_at(FDT_LOG_NOTICE, "job %lld queued: the device is idle, and job %lld's winner for "
               "%dx%dx%d was doubtful (%s)", (long long)job.id, (long long)job.remeasures,
               job.key.problem.nx, job.key.problem.ny, job.key.problem.nz, due.doubt);
    return 1;
}

/* No job starts while the store refuses writes, nor while the device's balance is measured
 * again; an idle device measures its doubts of a disturbed host again. */
static void take_next_job(lane *l)
{
    fdt_daemon *d = l->s->d;
    /* A stop has put the jobs back in the queue; a worker's hello still in its pipe must not
     * take one up again. */
    if (d->stopping || l->s->store_fault[0])
        return;
    if (l->balancing)
        return;
    int found = fdt_store_job_next(d->store, (int)l->device, d->devices[l->device].fingerprint,
                                   &l->job);
    if (found == 0 && remeasure_balance(l))
        return;
    if (found == 0 && queue_remeasure(l) > 0)
        found = fdt_store_job_next(d->store, (int)l->device, d->devices[l->device].fingerprint,
                                   &l->job);
    if (found <= 0) {
        if (found < 0)
            fdt_log_at(FDT_LOG_ERR, "cannot read the job queue: %s", fdt_store_error(d->store));
        /* Nothing to do: the worker goes, and with it the device memory it holds. */
        if (l->worker && l->state == FDT_LANE_IDLE)
            quit_worker(l);
        return;
    }
    l->has_job = 1;
    l->readied = l->cached = 0;
    l->wall_mark_ms = uv_now(d->loop);
    l->job.state = FDT_JOB_RUNNING;
    l->job.ran_on = (int)l->device;
    if (!l->job.started)
        l->job.started = now_s();
    if (save_job(l) != 0)
        return;
    fdt_log("job %lld running on device %zu: %dx%dx%d", (long long)l->job.id, l->device,
            l->job.key.problem.nx, l->job.key.problem.ny, l->job.key.problem.nz);
    fdt_notify_status("job %lld running on device %zu: %dx%dx%d", (long long)l->job.id,
                      l->device, l->job.key.problem.nx, l->job.key.problem.ny,
                      l->job.key.problem.nz);
    if (l->state == FDT_LANE_IDLE)
        dispatch(l);
    else if (l->state == FDT_LANE_DOWN)
        start_worker(l);
}

void fdt_scheduler_kick(fdt_daemon *d)
{
    if (d->stopping)
        return;
    for (size_t i = 0; i < d->scheduler->nlanes; i++) {
        lane *l = &d->scheduler->lanes[i];
        if (!l->has_job && (l->state == FDT_LANE_IDLE || l->state == FDT_LANE_DOWN))
            take_next_job(l);
    }
}

/* The chunk's measuring time since it was last counted, in seconds, now counted. */
static double measuring_since(lane *l)
{
    const uint64_t now = uv_now(l->s->d->loop);
    const double seconds = (double)(now - l->measured_to_ms) / 1e3;
    l->measured_to_ms = now;
    return seconds;
}

/* 0 stored (or unreadable, and said), -1 the store refused it: every job is paused. A
 * variant measured twice (a fault of ours: resuming must never do it) is said, and the job
 * goes on with the first result kept, rather than pausing every job at each retry. */
static int store_result(lane *l, json_t *ev)
{
    fdt_daemon *d = l->s->d;
    fdt_result_row r;
    char err[256];
    if (fdt_wire_result_parse(json_object_get(ev, "result"), &r, err, sizeof err) != 0) {
        fdt_log_at(FDT_LOG_WARNING, "job %lld: a result the worker sent is unreadable: %s",
                   (long long)l->job.id, err);
        return 0;
    }
    r.job_id = l->job.id;
    const int added = fdt_store_result_add(d->store, l->s->d->devices[l->device].id,
                                           &l->job.key, fdt_kernels_version(), &r);
    if (added < 0) {
        char what[FDT_VARIANT_NAME_MAX + 32];
        snprintf(what, sizeof what, "job %lld's result of %s", (long long)l->job.id, r.variant);
        pause_on_store_fault(l->s, what); /* measured again once the store takes it */
        return -1;
    }
    if (added > 0)
        fdt_log_at(FDT_LOG_WARNING, "job %lld: %s", (long long)l->job.id,
                   fdt_store_error(d->store));
    l->crashes = 0;
    if (r.leader)
        return 0;
    if (fdt_result_row_speed(&r) > 0) {
        l->ran++;
        l->ran_sample_ms += r.reps * r.median_ms;
        l->ran_launch_ms += r.median_ms;
        l->ran_compile_ms += r.compile_ms;
    }
    if (l->search)
        fdt_job_search_feed(l->search, r.variant, fdt_result_row_speed(&r),
                            l->nchunk ? measuring_since(l) : 0);
    if (added == 0)
        count_result(&l->job, &r);
    if (!l->first_ms) {
        l->first_ms = uv_now(d->loop);
        l->first_done = l->job.done;
    }
    return save_job(l);
}

/* A code object the worker compiled, read whole from the frame after its event. */
static void on_code(fdt_worker *w, json_t *ev, const void *bytes, size_t size, void *ctx)
{
    lane *l = ctx;
    if (l->worker != w)
        return; /* as on_event: a detached worker's */
    const char *key = json_string_value(json_object_get(ev, "key"));
    if (!key) {
        fdt_log_at(FDT_LOG_WARNING, "device %zu: a code object the worker sent has no key",
                   l->device);
        return;
    }
    if (fdt_store_code_put(l->s->d->store, key, bytes, size) != 0)
        fdt_log_at(FDT_LOG_WARNING, "cannot cache a code object: %s",
                   fdt_store_error(l->s->d->store));
}

/* A best row the store refused: every job is paused, and the job's leaders are timed again
 * when it resumes. */
static int best_refused(lane *l)
{
    char what[64];
    snprintf(what, sizeof what, "job %lld's best", (long long)l->job.id);
    pause_on_store_fault(l->s, what);
    return -1;
}

/* Cache mode auto's row: the hot winner hot, or persist's fastest leader with the copy
 * timed beside it in that state, as the worker chose. As store_winner. */
static int store_choice(lane *l, const fdt_best *hot, json_t *ev, const char **why)
{
    fdt_daemon *d = l->s->d;
    fdt_best b = *hot;
    b.key.problem.cache = FDT_CACHE_AUTO;
    b.state = FDT_CACHE_HOT;
    const json_t *persist = json_object_get(ev, "persist");
    const char *state = json_string_value(json_object_get(ev, "state"));
    const char *variant = json_string_value(json_object_get(persist, "variant"));
    if (state && strcmp(state, "persist") == 0 && variant) {
        b.state = FDT_CACHE_PERSIST;
        fdt_copy_text(b.variant, sizeof b.variant, variant);
        b.gbps = json_number_value(json_object_get(persist, "gbps"));
        b.median_ms = json_number_value(json_object_get(persist, "median_ms"));
        b.copy_gbps = json_number_value(json_object_get(persist, "copy_gbps"));
    }
    if (fdt_store_best_put(d->store, &b) != 0)
        return best_refused(l);
    if (fdt_query_remember(d, &b) != 0) {
        *why = "out of memory";
        return 1;
    }
    return 0;
}

/* A copy beside the leaders that outran the device's balance: the balance is doubted,
 * stored so and measured again once the device is idle (remeasure_balance). */
static void doubt_balance(lane *l, double ceiling)
{
    fdt_daemon *d = l->s->d;
    fdt_device_slot *slot = &d->devices[l->device];
    if (!fdt_doubt_balance_outrun(d, slot, ceiling, l->job.id))
        return;
    fdt_log_at(FDT_LOG_WARNING, "device %zu: its balance is doubtful: %s", l->device,
               slot->balance.doubt);
    if (fdt_store_device_balance_put(d->store, slot->id, &slot->balance) != 0)
        fdt_log_at(FDT_LOG_WARNING, "device %zu: the balance's doubt is kept until a restart "
                   "only: %s", l->device, fdt_store_error(d->store));
}

/* The leaders are timed: the fastest of every leader timing of the job so far is the
 * problem's best configuration, stored and answered at once. 0 stored; 1 there is none, and
 * why; -1 the store refused it, and every job is paused. */
static int store_winner(lane *l, json_t *ev, const char **why)
{
    fdt_daemon *d = l->s->d;
    fdt_result_row *rows = NULL;
    size_t n = 0;
    const double ceiling = json_number_value(json_object_get(ev, "ceiling_gbps"));
    doubt_balance(l, ceiling); /* whether or not a leader could be timed */
    if (fdt_store_job_results(d->store, l->job.id, &rows, &n) != 0) {
        *why = fdt_store_error(d->store);
        return 1;
    }
    const fdt_result_row *win = NULL;
    for (size_t i = 0; i < n; i++)
        if (rows[i].leader && strcmp(rows[i].status, "ok") == 0 &&
            (!win || rows[i].median_ms < win->median_ms))
            win = &rows[i];
    if (!win) {
        free(rows);
        *why = "no leader could be timed again (see their results: a leader too noisy to time "
               "is never the winner)";
        return 1;
    }
    fdt_best b = {.device_id = d->devices[l->device].id, .key = l->job.key,
                  .gbps = win->gbps, .median_ms = win->median_ms,
                  .copy_gbps = json_number_value(json_object_get(ev, "copy_gbps")),
                  .interior_copy_gbps =
                      json_number_value(json_object_get(ev, "interior_copy_gbps")),
                  .kernel1_gbps = json_number_value(json_object_get(ev, "kernel1_gbps")),
                  .job_id = l->job.id, .updated = now_s()};
    fdt_copy_text(b.variant, sizeof b.variant, win->variant);
    fdt_copy_text(b.kernels, sizeof b.kernels, fdt_kernels_version());
    fdt_copy_text(l->job.best_variant, sizeof l->job.best_variant, win->variant);
    l->job.best_gbps = win->gbps;
    const int host = fdt_doubt_judge(d, l->device, &l->job.key.problem, rows, n, win,
                                     b.kernel1_gbps, ceiling, b.doubt, sizeof b.doubt);
    /* once a doubt: a job that measured one again is not measured again by itself */
    if (host && d->config.remeasure_doubtful_s > 0 && !l->job.remeasures)
        b.remeasure_after = b.updated + d->config.remeasure_doubtful_s;
    if (b.doubt[0])
        fdt_log_at(FDT_LOG_WARNING, "job %lld: its figures are doubtful%s: %s",
                   (long long)l->job.id, b.remeasure_after ? " (measured again once the device "
                   "is idle)" : "", b.doubt);
    fdt_copy_text(l->job.doubt, sizeof l->job.doubt, b.doubt);
    free(rows);
    if (fdt_store_best_put(d->store, &b) != 0)
        return best_refused(l);
    if (fdt_query_remember(d, &b) != 0) {
        *why = "out of memory";
        return 1;
    }
    return l->job.choose_cache ? store_choice(l, &b, ev, why) : 0;
}

/* The search is over and its leaders timed: the job's winner, or why there is none. */
static void conclude(lane *l, json_t *ev)
{
    const char *why = NULL;
    const int stored = store_winner(l, ev, &why);
    if (stored < 0)
        return;
    if (stored > 0) {
        finish_job(l, FDT_JOB_FAILED, why);
        return;
    }
    const char *end = fdt_job_search_end(l->search);
    fdt_copy_text(l->job.ended_by, sizeof l->job.ended_by, end ? end : "");
    fdt_log("job %lld: the search ended (%s)", (long long)l->job.id, end ? end : "?");
    finish_job(l, FDT_JOB_DONE, NULL);
}

/* The quick job's leaders are timed: its winner answers at once, and the search goes on
 * whether or not there is one (the final leaders try again), unless the store refused it. */
static void conclude_quick(lane *l, json_t *ev)
{
    const char *why = NULL;
    const int stored = store_winner(l, ev, &why);
    if (stored < 0)
        return;
    l->quick_done = 1;
    if (stored > 0)
        fdt_log("job %lld: the quick job has no winner (%s); the search goes on",
                (long long)l->job.id, why);
    else
        fdt_log("job %lld: the quick job's winner %s is stored; the search goes on",
                (long long)l->job.id, l->job.best_variant);
    next_step(l);
}

/* The chunk is over: its time after its last result goes to the search too, which holds
 * the job's budget_s, and the job keeps what it spent, over every run of the job. */
static void count_time(lane *l)
{
    if (l->nchunk == 0)
        return;
    fdt_job_search_charge(l->search, measuring_since(l));
    l->job.spent_s = fdt_job_search_spent_s(l->search);
    l->nchunk = 0;
}

static void on_task_done(lane *l, json_t *ev)
{
    count_time(l);
    if (l->job.phase == FDT_JOB_PHASE_LEADERS && l->leaders_ms)
        l->last_leaders_s = (double)(uv_now(l->s->d->loop) - l->leaders_ms) / 1e3;
    if (l->job.phase == FDT_JOB_PHASE_LEADERS)
        conclude(l, ev);
    else if (l->job.phase == FDT_JOB_PHASE_QUICK)
        conclude_quick(l, ev);
    else
        next_step(l);
    if (!l->has_job)
        take_next_job(l);
}

static int64_t event_task(json_t *ev)
{
    return json_integer_value(json_object_get(ev, "task"));
}

static void on_event(fdt_worker *w, json_t *ev, void *ctx)
{
    lane *l = ctx;
    const char *kind = json_string_value(json_object_get(ev, "ev"));
    const char *message = json_string_value(json_object_get(ev, "message"));
    if (l->worker != w || !kind)
        return; /* a detached worker's lines, read before its end: the lane has moved on */
    if (strcmp(kind, "hello") == 0) {
        l->state = FDT_LANE_IDLE;
        if (l->has_job)
            dispatch(l);
        else
            take_next_job(l);
    } else if (strcmp(kind, "fatal") == 0 || strcmp(kind, "log") == 0 ||
               strcmp(kind, "error") == 0) {
        fdt_log_worker(l->device, kind, message);
    } else if (!l->has_job || event_task(ev) != l->task) {
        return; /* the rest belongs to a task; one that was cancelled is over */
    } else if (strcmp(kind, "result") == 0) {
        store_result(l, ev);
    } else if (strcmp(kind, "compiled") == 0) {
        l->job.compile_s += json_number_value(json_object_get(ev, "wall_ms")) / 1e3;
        l->readied += (size_t)json_integer_value(json_object_get(ev, "count"));
        l->cached += (size_t)json_integer_value(json_object_get(ev, "cached"));
    } else if (strcmp(kind, "done") == 0) {
        l->job.gpu_s += json_number_value(json_object_get(ev, "gpu_ms")) / 1e3;
        on_task_done(l, ev);
    } else if (strcmp(kind, "failed") == 0) {
        l->job.gpu_s += json_number_value(json_object_get(ev, "gpu_ms")) / 1e3;
        finish_job(l, FDT_JOB_FAILED, message ? message : "the worker could not run the job");
        take_next_job(l);
    }
}

/* The variant a dead worker was running is the one to blame: it is stored as crashed or
 * timeout, so that resuming goes on with the next one instead of dying on it again. -1: the
 * store refused it, and every job is paused. */
static int blame(lane *l, const char *variant, fdt_worker_end end)
{
    if (!variant || l->job.phase != FDT_JOB_PHASE_MEASURE || !in_chunk(l, variant))
        return 0;
    fdt_result_row r = {.job_id = l->job.id};
    fdt_copy_text(r.variant, sizeof r.variant, variant);
    fdt_copy_text(r.status, sizeof r.status,
                  end == FDT_END_DEADLINE || end == FDT_END_SILENT ? "timeout" : "crashed");
    fdt_copy_text(r.message, sizeof r.message, l->last_end);
    json_t *ev = json_pack("{s:o}", "result", fdt_wire_result_json(&r));
    const int stored = store_result(l, ev);
    json_decref(ev);
    l->crashes = 0; /* the culprit is recorded: the next worker starts on fresh ground */
    return stored;
}

static void on_restart(uv_timer_t *t)
{
    lane *l = t->data;
    if (!l->s->d->stopping && l->state == FDT_LANE_DOWN && l->has_job)
        start_worker(l);
}

static void on_ended(fdt_worker *w, fdt_worker_end end, int64_t status, int sig, void *ctx)
{
    lane *l = ctx;
    fdt_daemon *d = l->s->d;
    if (l->worker != w)
        return; /* detached: the lane has moved on */
    const char *current = fdt_worker_current(w);
    detach_worker(l);
    if (!l->has_job || d->stopping || end == FDT_END_STOPPED)
        return;
    fdt_worker_end_describe(d, end, status, sig, l->last_end, sizeof l->last_end);
    fdt_log_at(FDT_LOG_WARNING, "device %zu, job %lld: %s%s%s", l->device, (long long)l->job.id,
               l->last_end, current ? " while measuring " : "", current ? current : "");
    l->restarts++;
    l->crashes++;
    if (blame(l, current, end) != 0)
        return;
    count_time(l);
    if (l->crashes > d->config.max_restarts) {
        char why[256];
        snprintf(why, sizeof why, "the worker failed %d times in a row: %s", l->crashes,
                 l->last_end);
        finish_job(l, FDT_JOB_FAILED, why);
        l->crashes = 0;
        fdt_scheduler_kick(d);
        return;
    }
    uv_timer_start(&l->restart, on_restart, RESTART_DELAY_MS, 0);
}

static void start_worker(lane *l)
{
    char err[256];
    const fdt_worker_handler h = {.event = on_event, .code = on_code, .ended = on_ended,
                                  .ctx = l};
    l->worker = fdt_worker_start(l->s->d, (int)l->device, &h, err, sizeof err);
    if (!l->worker) {
        fdt_log_at(FDT_LOG_ERR, "device %zu: %s", l->device, err);
        if (l->has_job)
            finish_job(l, FDT_JOB_FAILED, err);
        l->state = FDT_LANE_DOWN;
        return;
    }
    l->state = FDT_LANE_STARTING;
}

/* A write goes through again: the paused jobs, still 'running' in the store where their
 * last write left them, go back to the queue and resume from their stored results. The
 * device's last-seen time is written first, so that the probe is a real write even when
 * no job was left running. */
static void on_store_retry(uv_timer_t *t)
{
    fdt_scheduler *s = t->data;
    fdt_daemon *d = s->d;
    int64_t id;
    fdt_balance balance;
    int requeued = -1;
    if (fdt_store_device_upsert(d->store, &d->devices[0].info, &id, &balance) == 0)
        requeued = fdt_store_jobs_requeue_running(d->store);
    if (requeued < 0)
        return; /* still refused; the next tick tries again */
    fdt_log_at(FDT_LOG_NOTICE,
               "the store takes writes again (refused since %lld s ago): %d job(s) resume",
               (long long)(now_s() - s->store_fault_since), requeued);
    s->store_fault[0] = '\0';
    uv_timer_stop(&s->store_retry);
    fdt_scheduler_kick(d);
}

/* Stops every lane's job where the store last kept it and its worker with it: a job that
 * cannot store what it measures would measure for nothing, and its end could not be kept
 * either. The true reason is logged and shown by status; new jobs are refused meanwhile. */
static void pause_on_store_fault(fdt_scheduler *s, const char *what)
{
    fdt_daemon *d = s->d;
    fdt_log_at(FDT_LOG_ERR, "cannot store %s: %s", what, fdt_store_error(d->store));
    if (!s->store_fault[0]) {
        snprintf(s->store_fault, sizeof s->store_fault, "cannot store %s: %s", what,
                 fdt_store_error(d->store));
        s->store_fault_since = now_s();
        fdt_log_at(FDT_LOG_ERR,
                   "the store refuses writes: every job paused, new ones refused, until a write "
                   "goes through (tried every %d ms)",
                   STORE_RETRY_MS);
        uv_timer_start(&s->store_retry, on_store_retry, STORE_RETRY_MS, STORE_RETRY_MS);
    }
    for (size_t i = 0; i < s->nlanes; i++) {
        lane *l = &s->lanes[i];
        fdt_worker *w = l->worker;
        if (!l->has_job)
            continue;
        l->has_job = 0;
        close_search(l);
        if (w) {
            detach_worker(l);
            fdt_worker_stop(w); /* its variant in flight is measured again on resuming */
        }
    }
}

const char *fdt_scheduler_store_fault(fdt_daemon *d, int64_t *since)
{
    fdt_scheduler *s = d->scheduler;
    if (!s || !s->store_fault[0])
        return NULL;
    *since = s->store_fault_since;
    return s->store_fault;
}

int fdt_scheduler_cancel(fdt_daemon *d, int64_t job_id, const char *by)
{
    for (size_t i = 0; i < d->scheduler->nlanes; i++) {
        lane *l = &d->scheduler->lanes[i];
        if (l->has_job && l->job.id == job_id) {
            fdt_worker *w = l->worker;
            if (finish_job(l, FDT_JOB_CANCELLED, by) != 0)
                return -1; /* paused instead: its worker is stopped */
            if (w) {
                detach_worker(l);
                fdt_worker_stop(w); /* abandons the variant in flight; nothing of it is kept */
            }
            fdt_scheduler_kick(d);
            return 1;
        }
    }
    fdt_job job;
    const int found = fdt_store_job_get(d->store, job_id, &job);
    if (found <= 0)
        return found;
    if (job.state != FDT_JOB_QUEUED)
        return 0;
    job.state = FDT_JOB_CANCELLED;
    job.finished = now_s();
    fdt_copy_text(job.error, sizeof job.error, by);
    if (fdt_store_job_update(d->store, &job) != 0)
        return -1;
    fdt_log_at(FDT_LOG_NOTICE, "job %lld cancelled while queued: %s", (long long)job_id, by);
    return 1;
}

void fdt_scheduler_stop(fdt_daemon *d)
{
    for (size_t i = 0; i < d->scheduler->nlanes; i++) {
        lane *l = &d->scheduler->lanes[i];
        if (l->has_job) {
            /* Back to the queue: the next start resumes it from its stored results. */
            count_time(l);
            l->job.state = FDT_JOB_QUEUED;
            l->job.phase = FDT_JOB_PHASE_NONE;
            save_job(l);
            l->has_job = 0;
            close_search(l);
        }
        if (l->worker)
            fdt_worker_stop(l->worker);
        if (l->balancing)
            fdt_worker_stop(l->balancing);
        uv_close((uv_handle_t *)&l->restart, NULL);
    }
    uv_close((uv_handle_t *)&d->scheduler->store_retry, NULL);
    uv_close((uv_handle_t *)&d->scheduler->idle_check, NULL);
}

void fdt_scheduler_free(fdt_daemon *d)
{
    if (!d->scheduler)
        return;
    free(d->scheduler->lanes);
    free(d->scheduler);
    d->scheduler = NULL;
}

/* Jobs are taken up as they are queued; the check only finds doubts come due. */
static void on_idle_check(uv_timer_t *t)
{
    fdt_scheduler *s = t->data;
    if (s->d->config.remeasure_doubtful_s > 0)
        fdt_scheduler_kick(s->d);
}

int fdt_scheduler_init(fdt_daemon *d, char *err, size_t errlen)
{
    const int requeued = fdt_store_jobs_requeue_running(d->store);
    if (requeued < 0) {
        snprintf(err, errlen, "cannot requeue unfinished jobs: %s", fdt_store_error(d->store));
        return -1;
    }
    if (requeued > 0)
        fdt_log("%d job(s) left running by an earlier fdtuned resume", requeued);
    fdt_scheduler *s = calloc(1, sizeof *s);
    lane *lanes = calloc(d->ndevices, sizeof *lanes);
    if (!s || !lanes) {
        free(s);
        free(lanes);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->d = d;
    s->lanes = lanes;
    s->nlanes = d->ndevices;
    uv_timer_init(d->loop, &s->store_retry);
    s->store_retry.data = s;
    uv_timer_init(d->loop, &s->idle_check);
    s->idle_check.data = s;
    uv_timer_start(&s->idle_check, on_idle_check, IDLE_CHECK_MS, IDLE_CHECK_MS);
    for (size_t i = 0; i < s->nlanes; i++) {
        lanes[i] = (lane){.s = s, .device = i};
        uv_timer_init(d->loop, &lanes[i].restart);
        lanes[i].restart.data = &lanes[i];
    }
    d->scheduler = s;
    return 0;
}
