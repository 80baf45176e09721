/* store.h - the SQLite store: devices, the durable job queue, every measured result, the
 * best configuration per problem, and the code-object cache. The only code in fdtuned that
 * speaks SQL; every statement is prepared once with bound parameters.
 *
 * The daemon is the store's only writer (the lock of fdt_store_open). fdtune-worker opens the same file read-only
 * (fdt_store_open_readonly) to look up cached code objects; new ones travel back to the
 * daemon over the worker pipe and are written here.
 *
 * Strings returned inside structs are copies owned by the struct (fixed-size fields), so
 * nothing points into SQLite's memory after a call returns. */
#ifndef FDT_STORE_H
#define FDT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "problem.h"
#include "result_row.h"
#include "util.h"

/* The schema version this build writes; older files are migrated on open, newer ones are
 * refused (a downgrade must not damage data it does not understand). */
#define FDT_SCHEMA_VERSION 13

typedef struct fdt_store fdt_store;

/* What a problem is keyed by in the store, beyond the device: the whole problem (its
 * stencil, shape, radius, precision and cache mode). */
typedef struct fdt_key {
    fdt_problem problem;
} fdt_key;

/* A job's state: stored in the jobs table and sent over the socket as its name
 * (fdt_job_state_name), the same text in both. Every legal transition is drawn at the top
 * of db/store_jobs.c. */
typedef enum fdt_job_state {
    FDT_JOB_QUEUED = 0,
    FDT_JOB_RUNNING,
    FDT_JOB_DONE,
    FDT_JOB_FAILED,
    FDT_JOB_CANCELLED,
    FDT_JOB_STATES            /* how many; fdt_job_state_parse's answer for no state */
} fdt_job_state;

/* Where a running job stands; FDT_JOB_PHASE_NONE (named "") in every other state. Stored
 * and sent as its name, as the state is. */
typedef enum fdt_job_phase {
    FDT_JOB_PHASE_NONE = 0,
    FDT_JOB_PHASE_MEASURE,    /* the search's batches */
    FDT_JOB_PHASE_QUICK,      /* the quick job's leaders, timed again while the search goes on */
    FDT_JOB_PHASE_LEADERS,    /* the search is over: its leaders timed again */
    FDT_JOB_PHASES            /* how many; fdt_job_phase_parse's answer for no phase */
} fdt_job_phase;

/* The name of a state or phase; "unknown" for a value out of range. */
const char *fdt_job_state_name(fdt_job_state s);
const char *fdt_job_phase_name(fdt_job_phase p);
/* The state or phase a name says (the store's text, a client's request, an answer), or
 * FDT_JOB_STATES / FDT_JOB_PHASES when it says none. */
fdt_job_state fdt_job_state_parse(const char *name);
fdt_job_phase fdt_job_phase_parse(const char *name);
/* Every state's name, for messages: "queued, running, done, failed or cancelled". */
void fdt_job_states_text(char *out, size_t len);

typedef struct fdt_job {
    int64_t id;
    fdt_job_state state;
    int device_index;         /* which of the daemon's devices runs it; -1: any idle one
                                 whose fingerprint is fingerprint ("": any at all) */
    char fingerprint[20];
    fdt_key key;
    char family[16];          /* only this family, or empty for every one */
    int subset;               /* measure this many variants spread over the space; 0: all */
    int total, done, ok, failed; /* variants: in the job, measured so far, of them ok, failed */
    fdt_job_phase phase;
    char best_variant[FDT_VARIANT_NAME_MAX];
    double best_gbps;
    char error[256];          /* why the job failed, or empty */
    int64_t created, started, finished; /* unix seconds; 0: not yet */
    /* How the job searches its space (tuner/search/) and when it stops; 0: no limit. */
    char strategy[16];
    int64_t budget;           /* evaluations */
    double budget_s;          /* seconds spent measuring */
    int64_t patience;         /* evaluations in a row without a 0.5% gain */
    int quick;                /* store the winner of the first evaluations at once */
    /* The jobs whose results are its warm start, "id:rows,id:rows,..." (rows: how many of
     * that job's first-pass rows), chosen when it first runs and kept so that a resumed job
     * rebuilds the same search; has_warm 0 until then. */
    int has_warm;
    char warm[256];
    double spent_s;           /* seconds spent measuring, over every run of the job */
    int choose_cache;         /* cache mode auto: leaders timed hot and persist, the choice
                                 stored under cache auto (the key's cache is hot) */
    /* Seconds over every run: a device's wall time on the job, the compilers' wall time
     * inside it, and device time inside timed regions. */
    double wall_s, compile_s, gpu_s;
    int priority;             /* 1: an interactive tune, taken before queued batch jobs */
    int64_t batch;            /* the id of its batch's first job; 0: not queued in a batch */
    char ended_by[16];        /* why its search ended: space, budget, patience, time; "" */
    int ran_on;               /* the device index that ran it last; -1 before it ran */
    int noisy;                /* of its failed results, those too noisy to rank */
    int64_t remeasures;       /* the job whose doubtful winner it measures again; 0: asked for */
    char doubt[200];          /* its winner's doubt as stored (daemon/doubt.h), or empty */
    /* Where its results were measured (db/migrate_12.sql): the store (fdt_store_id), its
     * host and the job's id there, "", "" and 0 for this daemon's own job; the fdtuned
     * version that measured them (a job of this daemon's: FDT_VERSION, filled in by
     * fdt_store_job_create); when they were imported (unix s), 0 for its own. */
    char origin_store[40];
    char origin_host[64];
    int64_t origin_job;
    char fdtuned[16];
    int64_t imported;
} fdt_job;

/* The best configuration of one problem on one device. */
typedef struct fdt_best {
    int64_t device_id;
    fdt_key key;
    char variant[FDT_VARIANT_NAME_MAX];
    double gbps, median_ms, copy_gbps, kernel1_gbps;
    double interior_copy_gbps; /* the interior copy timed beside the copy; 0: not timed */
    fdt_cache_mode state;     /* what gbps and copy_gbps were timed in: the key's cache, or
                                 under cache auto the state chosen */
    char kernels[20];         /* the kernel sources' version it was measured with */
    int64_t job_id, updated;
    char doubt[200];          /* why its figures may not be trusted (a busy host); empty */
    int64_t remeasure_after;  /* when an idle daemon tunes it again (unix s); 0: never */
} fdt_best;

/* A device as stored: its fingerprint and what it is matched by when it is not the same. */
typedef struct fdt_device_row {
    int64_t id;
    char fingerprint[20];     /* 16 hex digits over every field of fdt_device_info */
    fdt_device_info info;
} fdt_device_row;

/* Opens (creating if needed) the store at path for the daemon: WAL, foreign keys, schema
 * migrated to FDT_SCHEMA_VERSION. One daemon per store: it holds an exclusive lock on
 * "<path>.lock" (0600, naming its pid) until fdt_store_close, and an open while another
 * handle holds it fails naming that pid. A new store and its -wal and -shm are created
 * 0600; an existing one keeps its mode. On failure returns NULL with the reason in err. */
fdt_store *fdt_store_open(const char *path, char *err, size_t errlen);
/* Opens an existing store read-only (the worker's code-cache lookups). */
fdt_store *fdt_store_open_readonly(const char *path, char *err, size_t errlen);
void fdt_store_close(fdt_store *s);
/* The store's identity: 32 hex digits made when it was created (or migrated to version 12),
 * what exports name as the store their rows were measured into. */
const char *fdt_store_id(const fdt_store *s);
/* The last SQLite error, for messages. */
const char *fdt_store_error(fdt_store *s);

/* One transaction around several writes, so that they all land or none does (a batch of
 * jobs), and commit once instead of once per write. Not nested; 0 or -1 (fdt_store_error). */
int fdt_store_begin(fdt_store *s);
int fdt_store_commit(fdt_store *s);
void fdt_store_rollback(fdt_store *s);

/* Inserts the device or refreshes its last-seen time; *id is its row and *balance the
 * balance stored with it (measured 0: none yet). A row of the same device under an older
 * build's fingerprint is adopted, jobs naming that fingerprint with it (store_devices.c);
 * not inside fdt_store_begin's transaction. 0 or -1. */
int fdt_store_device_upsert(fdt_store *s, const fdt_device_info *d, int64_t *id,
                            fdt_balance *balance);
/* A device an imported file names: its row inserted (or its last-seen time refreshed), in
 * the caller's transaction; *id its row. 0 or -1. */
int fdt_store_device_import(fdt_store *s, const fdt_device_info *d, int64_t *id);
/* Stores the balance measured on device id, replacing any earlier one. 0, or -1 (also when
 * the store has no device id). */
int fdt_store_device_balance_put(fdt_store *s, int64_t id, const fdt_balance *balance);
/* Every stored device, for fallback matching; *out is malloc'd (free it). 0 or -1. */
int fdt_store_devices(fdt_store *s, fdt_device_row **out, size_t *count);

/* Jobs. Creating fills job->id, state queued and created. */
int fdt_store_job_create(fdt_store *s, fdt_job *job);
/* 1 found, 0 not found, -1 error. */
int fdt_store_job_get(fdt_store *s, int64_t id, fdt_job *out);
/* A queued or running job with the same device, key, family, subset and strategy, if there
 * is one: asking twice for the same tuning gets the same job. 1, 0 or -1. */
int fdt_store_job_find_active(fdt_store *s, const fdt_job *like, fdt_job *out);
/* Writes state, counts, phase, best, error, times, costs and batch of job->id. */
int fdt_store_job_update(fdt_store *s, const fdt_job *job);
/* The next queued job device_index may run: its own or any device's of its fingerprint,
 * the highest priority first, then the oldest. 1, 0 or -1. */
int fdt_store_job_next(fdt_store *s, int device_index, const char *fingerprint,
                       fdt_job *out);
/* Jobs, newest first, optionally only in one state (state < 0: all); at most limit.
 * *out is malloc'd. */
int fdt_store_jobs(fdt_store *s, int state, size_t limit, fdt_job **out, size_t *count);
/* A batch with jobs still queued or running, for its progress. */
typedef struct fdt_batch_progress {
    int64_t batch;            /* its first job's id */
    int jobs, ended, running;
    double running_part;      /* the running jobs' measured share of their spaces, summed */
    int64_t started;          /* when its first job started (unix seconds); 0: none yet */
    double points, ended_points, running_points; /* grid points: all, ended, running */
    double running_wall;      /* the running jobs' wall seconds so far, summed */
    /* Over the jobs done, with p their points and w their wall seconds: count, sum p,
     * sum w, sum p^2, sum p w (a least-squares fit of w = a + b p). */
    double fit_n, fit_p, fit_w, fit_pp, fit_pw;
} fdt_batch_progress;

/* The share of the batch's work done, 0 to 1. Jobs cost what their done ones say: a fit of
 * wall time to grid points (a fixed cost and one per point), so that a 1024^3 job weighs
 * as much as it takes, not as a 64^3 one, and a running job has done its wall time so far
 * of what it should cost (at most 95% of it: it is not over yet), since a guided search's
 * share of its space says nothing of how near it is to its end. Until two done jobs of
 * different sizes show a cost per point, each job weighs alike and a running one counts
 * its share of its space. */
double fdt_batch_share(const fdt_batch_progress *b);

/* Every batch not finished, oldest first; *out is malloc'd. 0 or -1. */
int fdt_store_batches_active(fdt_store *s, fdt_batch_progress **out, size_t *count);

/* The job that rows measured into store as its job job went to when they were imported,
 * for key on the device fingerprint: 1 found (*out), 0 none yet, -1 error. */
int fdt_store_job_of_origin(fdt_store *s, const char *store, int64_t job,
                            const char *fingerprint, const fdt_key *key, fdt_job *out);
/* Counts of jobs in each state, indexed by fdt_job_state. */
int fdt_store_job_counts(fdt_store *s, int counts[FDT_JOB_STATES]);
/* At start-up: jobs left running by a daemon that died go back to queued, keeping their
 * results, so they resume where they stopped. Returns how many, or -1. */
int fdt_store_jobs_requeue_running(fdt_store *s);

/* Results. A first-pass result is stored once per (job, variant): adding it again keeps the
 * first and returns 1, the error saying so, never a silent second measurement; -1 is a
 * write the store refused. Leader results replace an earlier leader result of the same
 * variant (a leaders phase cut short is redone). */
int fdt_store_result_add(fdt_store *s, int64_t device_id, const fdt_key *key,
                         const char *kernels, const fdt_result_row *r);
/* A result row measured elsewhere (its kernels and measured as the file says), into its
 * import job: 1 added, 0 that job has the row already (a file imported twice), -1 error. */
int fdt_store_result_import(fdt_store *s, int64_t device_id, const fdt_key *key,
                            const fdt_result_row *r);
/* The job's n fastest ok first-pass variants, fastest first; *names is a malloc'd array of
 * malloc'd strings; free with fdt_store_names_free. */
int fdt_store_job_leaders(fdt_store *s, int64_t job_id, size_t n, char ***names,
                          size_t *count);
void fdt_store_names_free(char **names, size_t count);
/* Every result row of a job, in measurement order; *out malloc'd. */
int fdt_store_job_results(fdt_store *s, int64_t job_id, fdt_result_row **out, size_t *count);
/* The job with the most first-pass results of a problem on a device: the richest record
 * of how its variants compare. 1 with *job_id and its count of first-pass rows in *rows, 0
 * when none measured it, -1 error. */
int fdt_store_fullest_job(fdt_store *s, int64_t device_id, const fdt_key *key,
                          int64_t *job_id, int64_t *rows);

/* Best. Upsert replaces the row of (device, key); get reads it: 1, 0 none, -1 error. */
int fdt_store_best_put(fdt_store *s, const fdt_best *b);
int fdt_store_best_get(fdt_store *s, int64_t device_id, const fdt_key *key, fdt_best *out);
/* The doubtful best row of device_id whose remeasure_after is earliest and not after now:
 * 1 with it in *out, 0 when none is due, -1 error. */
int fdt_store_best_due(fdt_store *s, int64_t device_id, int64_t now, fdt_best *out);
/* Sets remeasure_after to when on every best row of device_id that job_id stored (a cache
 * auto row and its hot row are one job's). 0 or -1. */
int fdt_store_best_defer(fdt_store *s, int64_t device_id, int64_t job_id, int64_t when);
/* Every best row: the daemon keeps them in memory for queries. */
int fdt_store_best_all(fdt_store *s, fdt_best **out, size_t *count);
/* A result row as an export reads it: id orders the rows and is the next page's start. */
typedef int (*fdt_result_fn)(void *ctx, int64_t id, int64_t device_id, const fdt_key *key,
                             const fdt_result_row *r);
/* One page of an export: the result rows whose id is above after (0: from the first), in
 * id order, at most limit; calls row() for each and stops early when it returns nonzero.
 * Each page is one short query, so an export never holds the store or memory for long. */
int fdt_store_results_page(fdt_store *s, int64_t after, size_t limit, fdt_result_fn row,
                           void *ctx);
/* One page of the best rows: those whose (device, key) comes after after's (NULL: from the
 * first), in that order, at most limit; *out malloc'd. */
int fdt_store_best_page(fdt_store *s, const fdt_best *after, size_t limit, fdt_best **out,
                        size_t *count);

/* Code cache. key: fdt_code_key's text. get: 1 found (*code malloc'd), 0 missing, -1 error. */
int fdt_store_code_get(fdt_store *s, const char *key, fdt_code *code);

/* Users' stencil specs by name (db/migrate_9.sql): put keeps the first text of a name; each
 * calls fn(ctx, name, spec) for every row, oldest first, until fn answers nonzero (fn may
 * write to the store); rename changes a stencil's name from from to to in every row that
 * carries it (its spec, jobs, results and best rows), in one transaction. 0 or -1. */
int fdt_store_stencil_put(fdt_store *s, const char *name, const char *spec);
int fdt_store_stencils_each(fdt_store *s, int (*fn)(void *ctx, const char *name,
                                                    const char *spec), void *ctx);
int fdt_store_stencil_rename(fdt_store *s, const char *from, const char *to);
int fdt_store_code_put(fdt_store *s, const char *key, const void *data, size_t size);

#endif
