/* job_search.h - the search a running job follows (tuner/search/), fed from the store: its
 * space for the job's problem and device, its warm start from the results of the nearest
 * tuned problems on the same device, and its state rebuilt from the job's own stored rows,
 * so that a job resumed after a crash, a cancel or kill -9 proposes what it would have. */
#ifndef FDT_JOB_SEARCH_H
#define FDT_JOB_SEARCH_H

#include "daemon/daemon.h"
#include "search/search.h"

/* Warm problems a job draws on at most: the nearest, by fdt_warm_distance. */
#define FDT_WARM_MAX 8

typedef struct fdt_job_search fdt_job_search;

/* Opens the search of job on device index device. The first time a job runs, its warm
 * start is chosen and written into job->warm (the caller stores the job); later runs read
 * the same jobs' results back. NULL with the reason in err. */
fdt_job_search *fdt_job_search_open(fdt_daemon *d, fdt_job *job, size_t device, char *err,
                                    size_t errlen);
void fdt_job_search_close(fdt_job_search *js);

/* The variants to measure next (names valid until the next call): at most cap, and at
 * most what the job's budgets allow (the search's step enforces them, over the whole job);
 * 0 when the search is over. */
size_t fdt_job_search_next(fdt_job_search *js, const char **names, size_t cap);
/* A first-pass result of the job landed and is stored: gbps for an ok variant, else 0;
 * cost_s, the seconds of measuring it took. */
void fdt_job_search_feed(fdt_job_search *js, const char *variant, double gbps,
                         double cost_s);
/* Seconds of measuring that no result took (a task's tail after its last result). */
void fdt_job_search_charge(fdt_job_search *js, double seconds);
/* Seconds of measuring the job spent, over every run of it: what its budget_s counts. */
double fdt_job_search_spent_s(const fdt_job_search *js);

/* Variants the job measures before its search ends if no later result gains on its best
 * (fdt_search_expected_left). */
int fdt_job_search_expected_left(const fdt_job_search *js);
/* Variants the job measures at most: the space, or its evaluation budget if smaller. */
int fdt_job_search_total(const fdt_job_search *js);
/* Why the search ended, for the log: "space", "budget", "patience", "time", or NULL. */
const char *fdt_job_search_end(const fdt_job_search *js);

/* The instant answer for a problem not tuned: the variant of the problem's space on device
 * index device that the guided model expects fastest, fed with the results of the tuned
 * problems nearest to it on stored device device_id. 0 with the name in variant, the
 * speed over the best it expects in *expected and the problems it drew on in *used; -1
 * when the store holds nothing to draw on. It reads the store (milliseconds): ops.c keeps a
 * query's answer in memory until something new is tuned. */
int fdt_instant_answer(fdt_daemon *d, size_t device, int64_t device_id, const fdt_key *key,
                       char *variant, size_t len, double *expected, size_t *used);

#endif
