/* job_search.c - a job's search, fed from the store; see job_search.h. */
#include "daemon/job_search.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/stencil.h"

struct fdt_job_search {
    fdt_search_space space;
    fdt_warm warm;
    fdt_search search;
    double *stored; /* per index of the space: the job's stored first-pass speed, or NAN */
    size_t pending[FDT_SEARCH_BATCH_MAX];
};

/* The variants a job may measure: the space of its problem on its device, filtered by
 * family, and spread evenly when a subset was asked for, as `fdtune bench --subset` does. */
static int space_of(fdt_daemon *d, const fdt_problem *p, const char *family, int subset,
                    size_t device, fdt_search_space *out)
{
    const fdt_space_filter filter = {.family = family[0] ? family : NULL,
                                     .test_families = d->config.test_families};
    fdt_variant *vs = NULL;
    const long n = fdt_space_sample(p, &d->devices[device].info, &filter, (size_t)subset, &vs);
    const int rc = n < 0 ? -1 : fdt_search_space_init(out, vs, (size_t)n);
    free(vs);
    return rc;
}

typedef struct candidate {
    fdt_key key;
    double distance;
} candidate;

static int by_distance(const void *a, const void *b)
{
    const double x = ((const candidate *)a)->distance, y = ((const candidate *)b)->distance;
    return (x > y) - (x < y);
}

static int same_problem(const fdt_key *a, const fdt_key *b)
{
    return fdt_problem_same(&a->problem, &b->problem);
}

/* Whether problems of a's stencil and b's are served by the same families, so that b's
 * rows name variants of a's space: a spec's and a spec's, or two built-ins'. A stencil
 * this process has no row of is served by none. */
static int same_families(const fdt_problem *a, const fdt_problem *b)
{
    if (strcmp(a->stencil, b->stencil) == 0)
        return 1;
    const fdt_stencil *x = fdt_stencil_of(a), *y = fdt_stencil_of(b);
    return x && y && (x->spec != NULL) == (y->spec != NULL);
}

/* Another problem of key's cache mode whose rows may name variants of key's space (of
 * key's stencil, or of another served by the same families: a weaker hint, by its
 * distance): one more candidate, by its distance to key. The others would only take a
 * warm start's place. fresh: known not to be among the n already (the best rows are one
 * per problem). */
static void add_candidate(candidate *c, size_t *n, const fdt_key *key, const fdt_key *other,
                          int fresh)
{
    if (same_problem(other, key) || other->problem.cache != key->problem.cache ||
        !same_families(&key->problem, &other->problem))
        return;
    for (size_t i = 0; !fresh && i < *n; i++)
        if (same_problem(&c[i].key, other))
            return;
    c[(*n)++] = (candidate){*other, fdt_warm_distance(&key->problem, &other->problem)};
}

/* Running jobs whose problems may lend a warm start, at most: one per device is expected. */
#define RUNNING_MAX 64

/* The problems that may lend key a warm start on device device_id: those tuned there, and
 * those being tuned now, whose results so far count too. On a node of several GPUs the
 * nearest problems are often the ones the other GPUs are tuning at the same moment; without
 * their first results a job searches as if they were not there (bench/results/README.md,
 * issue 15). *out is malloc'd. 0 or -1. */
static int warm_candidates(fdt_daemon *d, const fdt_key *key, int64_t device_id,
                           candidate **out, size_t *count)
{
    fdt_best *rows = NULL;
    fdt_job *running = NULL;
    size_t nrows = 0, nrunning = 0, n = 0;
    if (fdt_store_best_all(d->store, &rows, &nrows) != 0 ||
        fdt_store_jobs(d->store, FDT_JOB_RUNNING, RUNNING_MAX, &running, &nrunning) != 0) {
        free(rows);
        return -1;
    }
    candidate *c = malloc((nrows + nrunning ? nrows + nrunning : 1) * sizeof *c);
    for (size_t i = 0; c && i < nrows; i++)
        if (rows[i].device_id == device_id)
            add_candidate(c, &n, key, &rows[i].key, 1);
    for (size_t i = 0; c && i < nrunning; i++)
        add_candidate(c, &n, key, &running[i].key, 0);
    free(rows);
    free(running);
    *out = c;
    *count = n;
    return c ? 0 : -1;
}

/* The problems nearest to key that lend it a warm start on device device_id (never key
 * itself: a problem tuned again is measured afresh), each by its fullest job there other
 * than exclude, as "id:rows,id:rows,..." in list: rows, the job's first-pass rows so far,
 * holds a job resumed later to what it saw at its start, though a running neighbour has
 * measured more since, so that it proposes what it would have. 0 or -1. */
static int choose_warm(fdt_daemon *d, const fdt_key *key, int64_t device_id, int64_t exclude,
                       char *list, size_t len)
{
    candidate *c;
    size_t nc;
    if (warm_candidates(d, key, device_id, &c, &nc) != 0)
        return -1;
    qsort(c, nc, sizeof *c, by_distance);
    int rc = 0;
    list[0] = '\0';
    for (size_t i = 0, taken = 0; i < nc && taken < FDT_WARM_MAX && rc == 0; i++) {
        int64_t id, rows;
        const int found = fdt_store_fullest_job(d->store, device_id, &c[i].key, &id, &rows);
        if (found < 0)
            rc = -1;
        else if (found && id != exclude) {
            /* An entry that does not fit whole ends the list: a cut one would name other
             * rows, or another job. */
            char entry[48];
            const size_t used = strlen(list);
            const int n = snprintf(entry, sizeof entry, "%s%" PRId64 ":%" PRId64,
                                   taken ? "," : "", id, rows);
            if ((size_t)n >= len - used)
                break;
            memcpy(list + used, entry, (size_t)n + 1);
            taken++;
        }
    }
    free(c);
    return rc;
}

/* Adds warm job id's first limit first-pass results, in the order they were stored; a job
 * the store no longer has is left out. */
static int add_warm_job(fdt_daemon *d, const fdt_search_space *space, fdt_warm *warm,
                        int64_t id, long long limit)
{
    fdt_job other;
    const int found = fdt_store_job_get(d->store, id, &other);
    if (found <= 0)
        return found;
    fdt_result_row *rows = NULL;
    size_t n = 0;
    if (fdt_store_job_results(d->store, id, &rows, &n) != 0)
        return -1;
    char(*names)[FDT_VARIANT_NAME_MAX] = malloc((n ? n : 1) * sizeof *names);
    double *gbps = malloc((n ? n : 1) * sizeof *gbps);
    size_t m = 0;
    for (size_t i = 0; names && gbps && i < n && (long long)m < limit; i++)
        if (!rows[i].leader) {
            memcpy(names[m], rows[i].variant, sizeof names[m]);
            gbps[m++] = fdt_result_row_speed(&rows[i]);
        }
    const int rc = names && gbps ? fdt_warm_add(warm, space, &other.key.problem,
                                                (const char(*)[FDT_VARIANT_NAME_MAX])names,
                                                gbps, m)
                                 : -1;
    free(names);
    free(gbps);
    free(rows);
    return rc;
}

/* Reads choose_warm's list back; an id without ":rows" (written by earlier builds) lends
 * all its rows. Reading stops at an entry it cannot parse: the jobs before it stand. */
static int load_warm(fdt_daemon *d, const fdt_search_space *space, fdt_warm *warm,
                     const char *list)
{
    for (const char *p = list; *p;) {
        char *end;
        const long long id = strtoll(p, &end, 10);
        long long rows = LLONG_MAX;
        if (end == p)
            return 0;
        if (*end == ':') {
            p = end + 1;
            rows = strtoll(p, &end, 10);
            if (end == p)
                return 0;
        }
        if (add_warm_job(d, space, warm, id, rows) != 0)
            return -1;
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

/* The job's warm start: chosen and kept in the job the first time it runs. */
static int warm_of(fdt_daemon *d, fdt_job *job, size_t device, fdt_job_search *js)
{
    if (!job->has_warm) {
        if (choose_warm(d, &job->key, d->devices[device].id, job->id, job->warm,
                        sizeof job->warm) != 0)
            return -1;
        job->has_warm = 1;
    }
    return load_warm(d, &js->space, &js->warm, job->warm);
}

static int lookup(void *ctx, size_t index, double *gbps)
{
    const double *stored = ctx;
    if (isnan(stored[index]))
        return 0;
    *gbps = stored[index];
    return 1;
}

/* What the job measured before, by index of the space. The search is rebuilt from it, and
 * asks it again before each batch: a search that goes another way than the one that
 * stored the rows (a daemon of another version, another space) may come to a stored
 * variant later, and must never measure it twice. Every first-pass row is charged to the
 * search with the seconds the job spent before, so that its budgets hold for the job as a
 * whole; the rebuild takes back the rows it comes to. */
static int load_stored(fdt_daemon *d, fdt_job_search *js, const fdt_job *job)
{
    fdt_result_row *rows = NULL;
    size_t n = 0;
    long first_pass = 0;
    js->stored = malloc((js->space.n ? js->space.n : 1) * sizeof *js->stored);
    if (!js->stored || fdt_store_job_results(d->store, job->id, &rows, &n) != 0)
        return -1;
    for (size_t i = 0; i < js->space.n; i++)
        js->stored[i] = NAN;
    for (size_t i = 0; i < n; i++) {
        const long k = rows[i].leader ? -1 : fdt_search_space_find(&js->space, rows[i].variant);
        first_pass += !rows[i].leader;
        if (k >= 0)
            js->stored[k] = fdt_result_row_speed(&rows[i]);
    }
    free(rows);
    fdt_search_charge(&js->search, first_pass, job->spent_s);
    return 0;
}

fdt_job_search *fdt_job_search_open(fdt_daemon *d, fdt_job *job, size_t device, char *err,
                                    size_t errlen)
{
    fdt_job_search *js = calloc(1, sizeof *js);
    const fdt_strategy *strategy = fdt_strategy_find(job->strategy);
    const fdt_search_limits limits = {.evals = job->budget, .seconds = job->budget_s,
                                      .patience = job->patience};
    const char *why = NULL;
    if (!js)
        why = "out of memory";
    else if (!strategy)
        why = "the job names a search strategy this build does not have";
    else if (space_of(d, &job->key.problem, job->family, job->subset, device, &js->space) != 0)
        why = "out of memory";
    else if (warm_of(d, job, device, js) != 0)
        why = "cannot read the warm start's results";
    else if (fdt_search_init(&js->search, strategy, &js->space, &js->warm, &job->key.problem,
                             (uint64_t)job->id, limits) != 0)
        why = "out of memory";
    else if (load_stored(d, js, job) != 0)
        why = "cannot read the job's results";
    if (!why)
        return js;
    snprintf(err, errlen, "cannot plan the job: %s", why);
    fdt_job_search_close(js);
    return NULL;
}

void fdt_job_search_close(fdt_job_search *js)
{
    if (!js)
        return;
    if (js->search.space)
        fdt_search_free(&js->search);
    fdt_warm_free(&js->warm);
    fdt_search_space_free(&js->space);
    free(js->stored);
    free(js);
}

size_t fdt_job_search_next(fdt_job_search *js, const char **names, size_t cap)
{
    if (cap > FDT_SEARCH_BATCH_MAX)
        cap = FDT_SEARCH_BATCH_MAX;
    fdt_search_replay(&js->search, lookup, js->stored);
    const size_t n = fdt_search_step(&js->search, NULL, 0, js->pending, cap);
    for (size_t i = 0; i < n; i++)
        names[i] = js->space.names[js->pending[i]];
    return n;
}

void fdt_job_search_feed(fdt_job_search *js, const char *variant, double gbps, double cost_s)
{
    const long k = fdt_search_space_find(&js->space, variant);
    if (k < 0) {
        fdt_search_charge(&js->search, 1, cost_s); /* stored all the same: the job spent it */
        return;
    }
    js->stored[k] = gbps > 0 ? gbps : 0;
    const fdt_search_result r = {.index = (size_t)k, .gbps = gbps, .cost_s = cost_s};
    fdt_search_step(&js->search, &r, 1, NULL, 0);
}

void fdt_job_search_charge(fdt_job_search *js, double seconds)
{
    fdt_search_charge(&js->search, 0, seconds);
}

double fdt_job_search_spent_s(const fdt_job_search *js)
{
    return fdt_search_spent_s(&js->search);
}

int fdt_job_search_expected_left(const fdt_job_search *js)
{
    const size_t left = fdt_search_expected_left(&js->search);
    return left < INT_MAX ? (int)left : INT_MAX;
}

int fdt_job_search_total(const fdt_job_search *js)
{
    const int64_t budget = js->search.limits.evals;
    return (int)(budget > 0 && (size_t)budget < js->space.n ? (size_t)budget : js->space.n);
}

const char *fdt_job_search_end(const fdt_job_search *js)
{
    return fdt_search_end_name(js->search.end);
}

int fdt_instant_answer(fdt_daemon *d, size_t device, int64_t device_id, const fdt_key *key,
                       char *variant, size_t len, double *expected, size_t *used)
{
    fdt_search_space space;
    fdt_warm warm = {0};
    char list[256];
    if (space_of(d, &key->problem, "", 0, device, &space) != 0)
        return -1;
    long v = -1;
    if (choose_warm(d, key, device_id, 0, list, sizeof list) == 0 &&
        load_warm(d, &space, &warm, list) == 0)
        v = fdt_search_instant(&space, &warm, &key->problem, expected, used);
    if (v >= 0)
        fdt_copy_text(variant, len, space.names[v]);
    fdt_warm_free(&warm);
    fdt_search_space_free(&space);
    return v >= 0 ? 0 : -1;
}
