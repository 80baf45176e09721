/* store_jobs.c - the jobs table: the durable queue, its states and each job's progress.
 *
 * A job's states (fdt_job_state), and every move between them. They are drawn here, where
 * the state is kept: the scheduler (tuner/daemon/scheduler.c) decides every move but the
 * first and the requeue, which are this file's, and writes each here
 * (fdt_store_job_update) before it counts.
 *
 *            fdt_store_job_create (tune, batch, a query's tune_if_missing)
 *                   |
 *                   v
 *      +-------> QUEUED --cancel (no lane holds it)----------> CANCELLED
 *      |            |
 *      |            | a lane takes it up (fdt_store_job_next; the scheduler's take_next_job)
 *      |            v
 *      +-------- RUNNING --the lane's finish_job--> DONE | FAILED | CANCELLED (a cancel)
 *   back to the queue, its results kept: the daemon stops (fdt_scheduler_stop), or
 *   fdt_store_jobs_requeue_running finds it left running by a daemon that died (at start)
 *   or paused by a write the store refused (once a write goes through again)
 *
 * DONE, FAILED and CANCELLED are final: nothing moves a job out of them (a cancel answers
 * busy). A job paused by a refused write stays RUNNING in the store, as its last write
 * left it, until it is requeued.
 *
 * A job's phase (fdt_job_phase) is NONE in every state but RUNNING, and back to NONE when
 * the job leaves RUNNING (finish_job, the stop, the requeue). While it runs:
 *
 *   NONE --its first step--> MEASURE, QUICK or LEADERS (a resumed job may be past measure)
 *   MEASURE --its first evaluations are in--> QUICK --its winner stored--> MEASURE
 *   MEASURE or QUICK --the search is over--> LEADERS
 *   a step taken again (the next batch; a dead worker's task sent to the next) keeps it */
#include "store_int.h"
#include "version.h"

#include <math.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The names, as the store keeps them and the socket sends them; indexed by the enums. */
static const char *const job_states[FDT_JOB_STATES] = {"queued", "running", "done", "failed",
                                                       "cancelled"};
static const char *const job_phases[FDT_JOB_PHASES] = {"", "measure", "quick", "leaders"};

/* The index of name in names[n], or n when it is none of them. */
static size_t name_index(const char *const *names, size_t n, const char *name)
{
    size_t i = 0;
    while (i < n && strcmp(name, names[i]) != 0)
        i++;
    return i;
}

const char *fdt_job_state_name(fdt_job_state s)
{
    return (unsigned)s < FDT_JOB_STATES ? job_states[s] : "unknown";
}

const char *fdt_job_phase_name(fdt_job_phase p)
{
    return (unsigned)p < FDT_JOB_PHASES ? job_phases[p] : "unknown";
}

fdt_job_state fdt_job_state_parse(const char *name)
{
    return (fdt_job_state)name_index(job_states, FDT_JOB_STATES, name);
}

fdt_job_phase fdt_job_phase_parse(const char *name)
{
    return (fdt_job_phase)name_index(job_phases, FDT_JOB_PHASES, name);
}

void fdt_job_states_text(char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < FDT_JOB_STATES && used < len; i++) {
        const char *sep = i == 0 ? "" : i + 1 < FDT_JOB_STATES ? ", " : " or ";
        const int n = snprintf(out + used, len - used, "%s%s", sep, job_states[i]);
        used += n > 0 ? (size_t)n : 0;
    }
}

static int read_job(fdt_store *s, sqlite3_stmt *st, void *out)
{
    fdt_job *j = out;
    reader r = {st, 0};
    char state[16], phase[16];
    memset(j, 0, sizeof *j);
    j->id = col_int(&r);
    col_text(&r, state, sizeof state);
    j->device_index = col_int(&r);
    if (col_key(s, &r, &j->key) != 0)
        return -1;
    col_text(&r, j->family, sizeof j->family);
    j->subset = col_int(&r);
    j->total = col_int(&r);
    j->done = col_int(&r);
    j->ok = col_int(&r);
    j->failed = col_int(&r);
    col_text(&r, phase, sizeof phase);
    col_text(&r, j->best_variant, sizeof j->best_variant);
    j->best_gbps = col_real(&r);
    col_text(&r, j->error, sizeof j->error);
    j->created = col_int(&r);
    j->started = col_int(&r);
    j->finished = col_int(&r);
    col_text(&r, j->strategy, sizeof j->strategy);
    j->budget = col_int(&r);
    j->budget_s = col_real(&r);
    j->patience = col_int(&r);
    j->quick = (int)col_int(&r);
    j->has_warm = sqlite3_column_type(st, r.next) != SQLITE_NULL;
    col_text(&r, j->warm, sizeof j->warm);
    j->spent_s = col_real(&r);
    j->choose_cache = (int)col_int(&r);
    j->wall_s = col_real(&r);
    j->compile_s = col_real(&r);
    j->gpu_s = col_real(&r);
    j->priority = (int)col_int(&r);
    j->batch = col_int(&r);
    col_text(&r, j->fingerprint, sizeof j->fingerprint);
    col_text(&r, j->ended_by, sizeof j->ended_by);
    j->ran_on = (int)col_int(&r);
    j->noisy = (int)col_int(&r);
    j->remeasures = col_int(&r);
    col_text(&r, j->doubt, sizeof j->doubt);
    col_text(&r, j->origin_store, sizeof j->origin_store);
    col_text(&r, j->origin_host, sizeof j->origin_host);
    j->origin_job = col_int(&r);
    col_text(&r, j->fdtuned, sizeof j->fdtuned);
    j->imported = col_int(&r);
    j->state = fdt_job_state_parse(state);
    if (j->state == FDT_JOB_STATES)
        return store_fail(s, "job %" PRId64 " has an unknown state '%s'", j->id, state);
    j->phase = fdt_job_phase_parse(phase);
    if (j->phase == FDT_JOB_PHASES)
        return store_fail(s, "job %" PRId64 " has an unknown phase '%s'", j->id, phase);
    return 0;
}

/* The columns a job's progress changes, in the order JOB_COLUMNS and ST_JOB_UPDATE name
 * them: total .. error. */
static void bind_job_progress(binder *b, const fdt_job *job)
{
    bind_int(b, job->total);
    bind_int(b, job->done);
    bind_int(b, job->ok);
    bind_int(b, job->failed);
    bind_text(b, fdt_job_phase_name(job->phase), SIZE_MAX);
    bind_text(b, job->best_variant, sizeof job->best_variant);
    bind_real(b, job->best_gbps);
    bind_text(b, job->error, sizeof job->error);
}

/* wall_s, compile_s, gpu_s, in JOB_COLUMNS' and ST_JOB_UPDATE's order. */
static void bind_job_cost(binder *b, const fdt_job *job)
{
    bind_real(b, job->wall_s);
    bind_real(b, job->compile_s);
    bind_real(b, job->gpu_s);
}

int fdt_store_job_create(fdt_store *s, fdt_job *job)
{
    binder b;
    if (stmt_start(s, ST_JOB_CREATE, &b) != 0)
        return -1;
    const int64_t created = store_now();
    bind_text(&b, fdt_job_state_name(FDT_JOB_QUEUED), SIZE_MAX);
    bind_int(&b, job->device_index);
    bind_key(&b, &job->key);
    bind_text(&b, job->family, sizeof job->family);
    bind_int(&b, job->subset);
    bind_job_progress(&b, job);
    bind_int(&b, created);
    bind_int(&b, job->started);
    bind_int(&b, job->finished);
    bind_text(&b, job->strategy, sizeof job->strategy);
    bind_int(&b, job->budget);
    bind_real(&b, job->budget_s);
    bind_int(&b, job->patience);
    bind_int(&b, job->quick);
    bind_text(&b, job->has_warm ? job->warm : NULL, sizeof job->warm);
    bind_real(&b, job->spent_s);
    bind_int(&b, job->choose_cache);
    bind_job_cost(&b, job);
    bind_int(&b, job->priority);
    bind_int(&b, job->batch);
    bind_text(&b, job->fingerprint, sizeof job->fingerprint);
    bind_text(&b, job->ended_by, sizeof job->ended_by);
    bind_int(&b, job->ran_on);
    bind_int(&b, job->noisy);
    bind_int(&b, job->remeasures);
    bind_text(&b, job->doubt, sizeof job->doubt);
    bind_text(&b, job->origin_store, sizeof job->origin_store);
    bind_text(&b, job->origin_host, sizeof job->origin_host);
    bind_int(&b, job->origin_job);
    if (!job->fdtuned[0])
        fdt_copy_text(job->fdtuned, sizeof job->fdtuned, FDT_VERSION);
    bind_text(&b, job->fdtuned, sizeof job->fdtuned);
    bind_int(&b, job->imported);
    if (stmt_run(s, &b) != 0)
        return -1;
    job->id = sqlite3_last_insert_rowid(s->db);
    job->state = FDT_JOB_QUEUED;
    job->created = created;
    return 0;
}

int fdt_store_job_of_origin(fdt_store *s, const char *store, int64_t job,
                            const char *fingerprint, const fdt_key *key, fdt_job *out)
{
    binder b;
    if (stmt_start(s, ST_JOB_OF_ORIGIN, &b) != 0)
        return -1;
    bind_text(&b, store, SIZE_MAX);
    bind_int(&b, job);
    bind_text(&b, fingerprint, SIZE_MAX);
    bind_key(&b, key);
    return stmt_fetch_one(s, &b, read_job, out);
}

int fdt_store_job_get(fdt_store *s, int64_t id, fdt_job *out)
{
    binder b;
    if (stmt_start(s, ST_JOB_GET, &b) != 0)
        return -1;
    bind_int(&b, id);
    return stmt_fetch_one(s, &b, read_job, out);
}

int fdt_store_job_find_active(fdt_store *s, const fdt_job *like, fdt_job *out)
{
    binder b;
    if (stmt_start(s, ST_JOB_FIND_ACTIVE, &b) != 0)
        return -1;
    bind_int(&b, like->device_index);
    bind_text(&b, like->fingerprint, sizeof like->fingerprint);
    bind_key(&b, &like->key);
    bind_text(&b, like->family, sizeof like->family);
    bind_int(&b, like->subset);
    bind_text(&b, like->strategy, sizeof like->strategy);
    bind_int(&b, like->choose_cache);
    return stmt_fetch_one(s, &b, read_job, out);
}

int fdt_store_job_update(fdt_store *s, const fdt_job *job)
{
    binder b;
    if (stmt_start(s, ST_JOB_UPDATE, &b) != 0)
        return -1;
    bind_text(&b, fdt_job_state_name(job->state), SIZE_MAX);
    bind_job_progress(&b, job);
    bind_int(&b, job->started);
    bind_int(&b, job->finished);
    bind_text(&b, job->has_warm ? job->warm : NULL, sizeof job->warm);
    bind_real(&b, job->spent_s);
    bind_job_cost(&b, job);
    bind_int(&b, job->batch);
    bind_text(&b, job->ended_by, sizeof job->ended_by);
    bind_int(&b, job->ran_on);
    bind_int(&b, job->noisy);
    bind_text(&b, job->doubt, sizeof job->doubt);
    bind_int(&b, job->id);
    if (stmt_run(s, &b) != 0)
        return -1;
    if (sqlite3_changes(s->db) == 0)
        return store_fail(s, "no job %" PRId64, job->id);
    return 0;
}

int fdt_store_job_next(fdt_store *s, int device_index, const char *fingerprint,
                       fdt_job *out)
{
    binder b;
    if (stmt_start(s, ST_JOB_NEXT, &b) != 0)
        return -1;
    bind_int(&b, device_index);
    bind_text(&b, fingerprint, SIZE_MAX);
    return stmt_fetch_one(s, &b, read_job, out);
}

int fdt_store_jobs(fdt_store *s, int state, size_t limit, fdt_job **out, size_t *count)
{
    binder b;
    void *rows;
    if (state >= FDT_JOB_STATES)
        return store_fail(s, "no job state %d", state);
    if (stmt_start(s, ST_JOBS, &b) != 0)
        return -1;
    bind_text(&b, state < 0 ? NULL : fdt_job_state_name((fdt_job_state)state), SIZE_MAX);
    bind_limit(&b, limit);
    if (stmt_fetch_all(s, &b, sizeof **out, read_job, NULL, &rows, count) != 0)
        return -1;
    *out = rows;
    return 0;
}

int fdt_store_job_counts(fdt_store *s, int counts[FDT_JOB_STATES])
{
    binder b;
    int rc;
    if (stmt_start(s, ST_JOB_COUNTS, &b) != 0)
        return -1;
    memset(counts, 0, FDT_JOB_STATES * sizeof counts[0]);
    while ((rc = stmt_step(&b)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(b.st, 0);
        const fdt_job_state state = name ? fdt_job_state_parse(name) : FDT_JOB_STATES;
        if (state == FDT_JOB_STATES) {
            rc = store_fail(s, "the store holds a job in an unknown state '%s'",
                            name ? name : "");
            break;
        }
        counts[state] = sqlite3_column_int(b.st, 1);
    }
    return stmt_finish(s, b.st, rc);
}

static int read_batch(fdt_store *s, sqlite3_stmt *st, void *out)
{
    (void)s;
    fdt_batch_progress *b = out;
    reader r = {st, 0};
    b->batch = col_int(&r);
    b->jobs = (int)col_int(&r);
    b->ended = (int)col_int(&r);
    b->running = (int)col_int(&r);
    b->running_part = col_real(&r);
    b->started = col_int(&r);
    b->points = col_real(&r);
    b->ended_points = col_real(&r);
    b->running_points = col_real(&r);
    b->running_wall = col_real(&r);
    b->fit_n = col_real(&r);
    b->fit_p = col_real(&r);
    b->fit_w = col_real(&r);
    b->fit_pp = col_real(&r);
    b->fit_pw = col_real(&r);
    return 0;
}

double fdt_batch_share(const fdt_batch_progress *b)
{
    const double count_share = b->jobs > 0 ? (b->ended + b->running_part) / b->jobs : 0;
    const double det = b->fit_n * b->fit_pp - b->fit_p * b->fit_p;
    if (b->fit_n < 2 || det <= 0)
        return count_share;
    const double per_point = (b->fit_n * b->fit_pw - b->fit_p * b->fit_w) / det;
    const double fixed = fmax(0, (b->fit_w - per_point * b->fit_p) / b->fit_n);
    if (per_point <= 0)
        return count_share;
    const double all = fixed * b->jobs + per_point * b->points;
    const double running = fixed * b->running + per_point * b->running_points;
    const double done = fixed * b->ended + per_point * b->ended_points +
                        fmin(0.95 * running, b->running_wall);
    return all > 0 ? done / all : count_share;
}

int fdt_store_batches_active(fdt_store *s, fdt_batch_progress **out, size_t *count)
{
    binder b;
    void *rows;
    if (stmt_start(s, ST_BATCHES_ACTIVE, &b) != 0 ||
        stmt_fetch_all(s, &b, sizeof **out, read_batch, NULL, &rows, count) != 0)
        return -1;
    *out = rows;
    return 0;
}

int fdt_store_jobs_requeue_running(fdt_store *s)
{
    binder b;
    if (stmt_start(s, ST_JOBS_REQUEUE, &b) != 0 || stmt_run(s, &b) != 0)
        return -1;
    return sqlite3_changes(s->db);
}
