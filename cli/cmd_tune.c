/* cmd_tune.c - `fdtune tune` and `fdtune batch`: queueing tuning jobs, one or many, and
 * waiting for them with a progress bar; `fdtune watch`, the same wait for jobs queued
 * before. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client_json.h"
#include "cmd_daemon.h"
#include "commands.h"
#include "config.h"
#include "progress.h"
#include "store.h"
#include "engine/variant.h"
#include "search/search.h"

#define BATCH_MAX_SHAPES 10000 /* the most one batch request may carry (docs/protocol.md) */
#define POLL_NS 500000000L

#define SEARCH_HELP                                                                        \
    "  --family F                tune only this kernel family (" FDT_FAMILIES_HELP ")\n" \
    "  --subset N                measure N variants spread evenly over the space, not all\n" \
    "  --strategy S              guided (a model of the nearest tuned problems), random or\n" \
    "                            exhaustive; default: the daemon's [search] strategy\n"      \
    "  --budget N                measure at most N variants (0: no limit)\n"                 \
    "  --budget-s T              stop measuring after T seconds (0: no limit)\n"             \
    "  --patience N              stop after N variants in a row without a 0.5% gain (0:\n"  \
    "                            never); the daemon's [search] settings are the defaults\n"

static const char tune_help[] =
    "usage: fdtune tune NX NY NZ [options]\n"
    "\n"
    "Queues a tuning job for one problem and prints its id.\n"
    "\n"
    FDT_PROBLEM_HELP
    SEARCH_HELP
    "  --wait                    wait for the job, showing its progress; exit 0 when it is\n"
    "                            done, 1 when it failed or was cancelled\n"
    FDT_DAEMON_HELP;

static const char batch_help[] =
    "usage: fdtune batch FILE [options]\n"
    "       fdtune batch --sweep NX_LIST NY_LIST NZ_LIST [options]\n"
    "\n"
    "Queues a tuning job per shape. FILE holds one \"NX NY NZ\" per line ('#' begins a\n"
    "comment; '-' reads standard input); --sweep takes every combination of three comma\n"
    "lists, e.g. 256,512 256,512 64,128. When any shape is bad, nothing is queued.\n"
    "\n"
    FDT_PROBLEM_HELP
    SEARCH_HELP
    "  --sweep                   the arguments are three comma lists, not a file\n"
    "  --wait                    wait for every job, showing the overall progress; exit 0\n"
    "                            when all are done, 1 when any failed or was cancelled\n"
    FDT_DAEMON_HELP;

enum { OPT_FAMILY = FDT_OPT_OWN, OPT_SUBSET, OPT_WAIT, OPT_SWEEP, OPT_STRATEGY, OPT_BUDGET,
       OPT_BUDGET_S, OPT_PATIENCE };

#define SEARCH_OPTIONS                                              \
    {"family", required_argument, NULL, OPT_FAMILY},               \
    {"subset", required_argument, NULL, OPT_SUBSET},               \
    {"strategy", required_argument, NULL, OPT_STRATEGY},           \
    {"budget", required_argument, NULL, OPT_BUDGET},               \
    {"budget-s", required_argument, NULL, OPT_BUDGET_S},           \
    {"patience", required_argument, NULL, OPT_PATIENCE}

static const struct option tune_options[] = {
    FDT_PROBLEM_OPTIONS,
    FDT_DAEMON_OPTIONS,
    SEARCH_OPTIONS,
    {"wait", no_argument, NULL, OPT_WAIT},
    {NULL, 0, NULL, 0},
};

static const struct option batch_options[] = {
    FDT_PROBLEM_OPTIONS,
    FDT_DAEMON_OPTIONS,
    SEARCH_OPTIONS,
    {"sweep", no_argument, NULL, OPT_SWEEP},
    {"wait", no_argument, NULL, OPT_WAIT},
    {NULL, 0, NULL, 0},
};

typedef struct tune_args {
    const char *family;
    long subset;
    const char *strategy;
    long budget, patience; /* -1: the daemon's default */
    double budget_s;       /* negative: the daemon's default */
    int wait;
    int sweep;
} tune_args;

static int parse_seconds(const char *arg, double *out)
{
    char *end;
    const double v = strtod(arg, &end);
    if (end == arg || *end || !(v >= 0 && v <= FDT_SEARCH_SECONDS_MAX)) {
        fprintf(stderr, "fdtune: --budget-s must be a number of seconds from 0 to %d, "
                "got '%s'\n", FDT_SEARCH_SECONDS_MAX, arg);
        return -1;
    }
    *out = v;
    return 0;
}

static int own_option(int opt, const char *arg, void *ctx)
{
    tune_args *t = ctx;
    switch (opt) {
    case OPT_FAMILY:
        t->family = arg;
        return fdt_parse_family(arg);
    case OPT_SUBSET: return fdt_parse_int(arg, 1, 1000000, "--subset", &t->subset);
    case OPT_STRATEGY:
        t->strategy = arg;
        if (fdt_strategy_find(arg))
            return 0;
        fprintf(stderr, "fdtune: --strategy must be guided, random or exhaustive, got '%s'\n", arg);
        return -1;
    case OPT_BUDGET: return fdt_parse_int(arg, 0, FDT_SEARCH_EVALS_MAX, "--budget", &t->budget);
    case OPT_BUDGET_S: return parse_seconds(arg, &t->budget_s);
    case OPT_PATIENCE: return fdt_parse_int(arg, 0, FDT_SEARCH_EVALS_MAX, "--patience", &t->patience);
    case OPT_WAIT: t->wait = 1; return 0;
    case OPT_SWEEP: t->sweep = 1; return 0;
    }
    return -1;
}

/* Waiting: the jobs' latest status answers, and how progress was last shown. */
typedef struct waiter {
    fdt_client *c;
    size_t n;
    const long long *ids;
    json_t **answers;   /* the latest status answer of each job */
    fdt_progress progress;
} waiter;

static const json_t *job_of(const waiter *w, size_t i)
{
    return json_object_get(w->answers[i], "job");
}

/* The variants a running job is expected to measure in all: what its search expects
 * (cost.expected: a guided search stops long before its space), else its space. */
static long long job_expected(const json_t *job)
{
    const json_t *expected = json_object_get(json_object_get(job, "cost"), "expected");
    return json_is_integer(expected) ? json_integer_value(expected) : fdt_jint(job, "total");
}

/* A job that measured every variant it will still times its leaders: 100% only once done;
 * one that failed or was cancelled stays where it stopped. */
static double job_fraction(const json_t *job)
{
    if (fdt_job_state_parse(fdt_jstr(job, "state")) == FDT_JOB_DONE)
        return 1;
    const double expected = (double)job_expected(job);
    const double frac = expected > 0 ? (double)fdt_jint(job, "done") / expected : 0;
    return frac < 0.99 ? frac : 0.99;
}

/* One job's state in a few words, the figures before the names that a narrow terminal cuts:
 * "54/110 of 1656 variants  best 2930.0 GB/s NAME". */
static void describe_job(const json_t *job, char *out, size_t len)
{
    const char *state = fdt_jstr(job, "state");
    if (fdt_job_state_parse(state) != FDT_JOB_RUNNING) {
        snprintf(out, len, "%s", state);
        return;
    }
    const long long expected = job_expected(job), total = fdt_jint(job, "total");
    int n = expected < total
                ? snprintf(out, len, "%lld/%lld of %lld variants", fdt_jint(job, "done"),
                           expected, total)
                : snprintf(out, len, "%lld/%lld variants", fdt_jint(job, "done"), total);
    if (*fdt_jstr(job, "best") && n > 0 && (size_t)n < len)
        snprintf(out + n, len - (size_t)n, "  best %.1f GB/s %s", fdt_jnum(job, "best_gbps"),
                 fdt_jstr(job, "best"));
}

/* The summary after the bar, and the fraction of all the work done. */
static double summarize(const waiter *w, char *out, size_t len)
{
    char one[160];
    double sum = 0;
    size_t finished = 0;
    const json_t *shown = NULL;
    for (size_t i = 0; i < w->n; i++) {
        const json_t *job = job_of(w, i);
        sum += job_fraction(job);
        finished += fdt_job_finished(job) != 0;
        if (!shown && fdt_job_state_parse(fdt_jstr(job, "state")) == FDT_JOB_RUNNING)
            shown = job;
    }
    if (w->n == 1) {
        describe_job(job_of(w, 0), out, len);
    } else if (shown) {
        describe_job(shown, one, sizeof one);
        snprintf(out, len, "%zu/%zu jobs  job %lld: %s", finished, w->n, fdt_jint(shown, "id"),
                 one);
    } else {
        snprintf(out, len, "%zu/%zu jobs", finished, w->n);
    }
    return sum / (double)w->n;
}

/* When the wait should end: a single job's own ETA (its rate of evaluations, from the
 * daemon), else the time so far scaled by the share still to do; -1 when unknown. */
static double eta_seconds(const waiter *w, double frac)
{
    if (w->n == 1) {
        const json_t *eta = json_object_get(json_object_get(job_of(w, 0), "cost"), "eta_s");
        if (json_is_number(eta))
            return json_number_value(eta);
    }
    const double elapsed = fdt_progress_elapsed(&w->progress);
    return frac > 0.01 && frac < 1 ? elapsed * (1 - frac) / frac : -1;
}

static void show_progress(waiter *w)
{
    char text[256];
    const double frac = summarize(w, text, sizeof text);
    fdt_progress_show(&w->progress, frac, eta_seconds(w, frac), text);
}

/* Asks for the status of every job not yet finished and counts those still unfinished;
 * returns the exit code of a failed request, else FDT_EXIT_OK. */
static int poll_jobs(waiter *w, size_t *unfinished)
{
    *unfinished = 0;
    for (size_t i = 0; i < w->n; i++) {
        if (w->answers[i] && fdt_job_finished(job_of(w, i)))
            continue;
        json_t *req = fdt_request("status"), *answer;
        json_object_set_new(req, "job", json_integer(w->ids[i]));
        const int rc = fdt_client_poll(w->c, req, &answer);
        if (rc)
            return rc;
        json_decref(w->answers[i]);
        w->answers[i] = answer;
        *unfinished += !fdt_job_finished(job_of(w, i));
    }
    return FDT_EXIT_OK;
}

static int report(const waiter *w)
{
    size_t done = 0;
    for (size_t i = 0; i < w->n; i++)
        done += fdt_job_state_parse(fdt_jstr(job_of(w, i), "state")) == FDT_JOB_DONE;
    if (w->c->json) {
        for (size_t i = 0; i < w->n; i++) {
            json_dumpf(w->answers[i], stdout, JSON_COMPACT);
            printf("\n");
        }
    } else if (w->n == 1) {
        fdt_print_job_outcome(job_of(w, 0));
    } else {
        fdt_table *t = fdt_jobs_table();
        for (size_t i = 0; t && i < w->n; i++)
            fdt_jobs_table_row(t, job_of(w, i));
        if (t)
            fdt_table_print(t, FDT_TABLE_TEXT, 0, stdout);
        printf("%zu jobs: %zu done, %zu failed or cancelled\n", w->n, done, w->n - done);
    }
    return done == w->n ? FDT_EXIT_OK : FDT_EXIT_FAILED;
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* Ctrl-C ends the wait, never the jobs: says so, and how to follow them again. */
static int leave_jobs(const fdt_client *c, const long long *ids, size_t n)
{
    fprintf(stderr, "fdtune %s: stopped waiting; the job%s go%s on in fdtuned. Follow %s with "
            "'fdtune watch", c->cmd, n > 1 ? "s" : "", n > 1 ? "" : "es", n > 1 ? "them" : "it");
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, " %lld", ids[i]);
    fprintf(stderr, "', stop %s with 'fdtune cancel JOB'.\n", n > 1 ? "one" : "it");
    return FDT_EXIT_INTERRUPTED;
}

/* Polls the jobs every half second until each has finished, or Ctrl-C. */
static int wait_jobs(fdt_client *c, const long long *ids, size_t n)
{
    waiter w = {.c = c, .n = n, .ids = ids, .answers = calloc(n, sizeof(json_t *))};
    if (!w.answers) {
        fprintf(stderr, "fdtune %s: out of memory\n", c->cmd);
        return FDT_EXIT_FAILED;
    }
    fdt_progress_start(&w.progress, c->cmd);
    /* A wait started with SIGINT ignored (a script's background job) keeps ignoring it. */
    struct sigaction on_int = {.sa_handler = on_interrupt}, before;
    sigaction(SIGINT, NULL, &before);
    if (before.sa_handler != SIG_IGN)
        sigaction(SIGINT, &on_int, NULL);
    size_t unfinished;
    int rc;
    while ((rc = poll_jobs(&w, &unfinished)) == FDT_EXIT_OK && !interrupted) {
        show_progress(&w);
        if (!unfinished)
            break;
        nanosleep(&(struct timespec){0, POLL_NS}, NULL);
    }
    sigaction(SIGINT, &before, NULL);
    fdt_progress_end(&w.progress);
    if (interrupted)
        rc = leave_jobs(c, ids, n);
    else if (rc == FDT_EXIT_OK)
        rc = report(&w);
    for (size_t i = 0; i < n; i++)
        json_decref(w.answers[i]);
    free(w.answers);
    return rc;
}

/* A tune or batch request: the problem and the search's options. */
static json_t *tuning_request(const char *op, const fdt_daemon_args *a, const tune_args *t,
                              int with_shape)
{
    json_t *req = fdt_problem_request(a, op, with_shape);
    if (t->family)
        json_object_set_new(req, "family", json_string(t->family));
    if (t->subset)
        json_object_set_new(req, "subset", json_integer(t->subset));
    if (t->strategy)
        json_object_set_new(req, "strategy", json_string(t->strategy));
    if (t->budget >= 0)
        json_object_set_new(req, "budget", json_integer(t->budget));
    if (t->budget_s >= 0)
        json_object_set_new(req, "budget_s", json_real(t->budget_s));
    if (t->patience >= 0)
        json_object_set_new(req, "patience", json_integer(t->patience));
    return req;
}

/* The jobs a tune queued, printed unless quiet: one, or under --pitch auto one per candidate
 * layout ("jobs"); their count, their ids in ids. */
static size_t tuned_layouts(const json_t *answer, long long ids[FDT_LAYOUTS_MAX], int quiet)
{
    const json_t *jobs = json_object_get(answer, "jobs");
    if (!jobs) {
        if (!quiet)
            printf("job %lld %s%s\n", ids[0],
                   json_is_true(json_object_get(answer, "existing")) ? "already " : "",
                   fdt_jstr(answer, "state"));
        return 1;
    }
    size_t n = 0, i;
    const json_t *id;
    json_array_foreach(jobs, i, id)
        if (n < FDT_LAYOUTS_MAX)
            ids[n++] = (long long)json_integer_value(id);
    for (i = 0; !quiet && i < n; i++)
        printf("job %lld queued, layout %zu of %zu\n", ids[i], i + 1, n);
    return n;
}

int fdt_cmd_tune(int argc, char **argv)
{
    fdt_daemon_args a;
    tune_args t = {.budget = -1, .patience = -1, .budget_s = -1};
    const int parsed = fdt_daemon_parse(argc, argv, "h", tune_options, tune_help, own_option,
                                        &t, &a);
    if (parsed)
        return parsed > 0 ? FDT_EXIT_OK : FDT_EXIT_USAGE;
    if (a.npos != 3)
        return fdt_usage_error("tune", "expected the grid shape NX NY NZ");
    if (fdt_parse_shape(a.pos, &a.problem))
        return FDT_EXIT_USAGE;

    json_t *req = tuning_request("tune", &a, &t, 1);
    fdt_client c;
    int rc = fdt_client_open(&c, "tune", &a);
    if (rc) {
        json_decref(req);
        return rc;
    }
    json_t *answer;
    rc = fdt_client_call(&c, req, &answer);
    if (rc == FDT_EXIT_OK) {
        long long ids[FDT_LAYOUTS_MAX] = {fdt_jint(answer, "job")};
        const size_t n = tuned_layouts(answer, ids, c.json);
        fflush(stdout); /* the ids at once, also into a pipe or a log, before the wait */
        if (t.wait)
            rc = wait_jobs(&c, ids, n);
    }
    json_decref(answer);
    fdt_client_close(&c);
    return rc;
}

/* The shapes of a batch, as a JSON array of [nx, ny, nz]. */
typedef struct shape_list {
    json_t *shapes;
    const char *name;   /* the file, for messages */
    size_t line;
} shape_list;

static int add_shape(shape_list *s, fdtune_problem *p, char *text)
{
    char *fields[4], *save = NULL;
    int n = 0;
    for (char *tok = strtok_r(text, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save))
        if (n < 4)
            fields[n++] = tok;
    if (n == 0)
        return 0;
    if (n != 3) {
        fprintf(stderr, "fdtune batch: %s:%zu: expected NX NY NZ, found %s%d field%s\n",
                s->name, s->line, n > 3 ? "more than " : "", n > 3 ? 3 : n, n == 1 ? "" : "s");
        return -1;
    }
    static const char *const names[3] = {"NX", "NY", "NZ"};
    char what[FDT_PATH_MAX + 64];
    long v[3];
    for (int d = 0; d < 3; d++) {
        snprintf(what, sizeof what, "%s:%zu: %s", s->name, s->line, names[d]);
        if (fdt_parse_int(fields[d], 1, FDT_MAX_SIDE, what, &v[d]))
            return -1;
    }
    p->nx = (int)v[0], p->ny = (int)v[1], p->nz = (int)v[2];
    const char *why = fdt_check_problem(p);
    if (why) {
        fprintf(stderr, "fdtune batch: %s:%zu: %s\n", s->name, s->line, why);
        return -1;
    }
    json_array_append_new(s->shapes, json_pack("[i, i, i]", p->nx, p->ny, p->nz));
    return 0;
}

/* Reads FILE ('-': standard input) into s->shapes; -1 after naming the bad line. */
static int read_shapes(const char *path, fdtune_problem p, shape_list *s)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    s->name = strcmp(path, "-") == 0 ? "(stdin)" : path;
    if (!f) {
        fprintf(stderr, "fdtune batch: cannot read %s: %s\n", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int st = 0;
    while (st == 0 && getline(&line, &cap, f) >= 0) {
        s->line++;
        line[strcspn(line, "#\n")] = '\0';
        st = add_shape(s, &p, line);
    }
    if (st == 0 && ferror(f)) {
        fprintf(stderr, "fdtune batch: reading %s: %s\n", s->name, strerror(errno));
        st = -1;
    }
    if (st == 0 && json_array_size(s->shapes) == 0) {
        fprintf(stderr, "fdtune batch: %s holds no shape\n", s->name);
        st = -1;
    }
    free(line);
    if (f != stdin)
        fclose(f);
    return st;
}

/* A comma list of sides ("256,512") into a JSON array; -1 when reported. */
static int parse_list(char *text, const char *what, json_t *out)
{
    for (char *item = text;;) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = '\0';
        long v;
        if (fdt_parse_int(item, 1, FDT_MAX_SIDE, what, &v))
            return -1;
        json_array_append_new(out, json_integer(v));
        if (!comma)
            return 0;
        item = comma + 1;
    }
}

/* {"nx":[..],"ny":[..],"nz":[..]} from three comma lists, every combination checked. */
static json_t *parse_sweep(char **lists, fdtune_problem p)
{
    static const char *const what[3] = {"each value of NX_LIST", "each value of NY_LIST",
                                        "each value of NZ_LIST"};
    json_t *l[3] = {json_array(), json_array(), json_array()};
    json_t *sweep = json_pack("{s:o, s:o, s:o}", "nx", l[0], "ny", l[1], "nz", l[2]);
    for (int d = 0; d < 3; d++)
        if (parse_list(lists[d], what[d], l[d])) {
            json_decref(sweep);
            return NULL;
        }
    const size_t count = json_array_size(l[0]) * json_array_size(l[1]) * json_array_size(l[2]);
    if (count > BATCH_MAX_SHAPES) {
        fdt_usage_error("batch", "the sweep makes %zu shapes, more than the %d of one batch",
                        count, BATCH_MAX_SHAPES);
        json_decref(sweep);
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        p.nx = (int)json_integer_value(json_array_get(l[0], i % json_array_size(l[0])));
        p.ny = (int)json_integer_value(
            json_array_get(l[1], i / json_array_size(l[0]) % json_array_size(l[1])));
        p.nz = (int)json_integer_value(
            json_array_get(l[2], i / json_array_size(l[0]) / json_array_size(l[1])));
        const char *why = fdt_check_problem(&p);
        if (why) {
            fprintf(stderr, "fdtune batch: the sweep's shape %dx%dx%d: %s\n", p.nx, p.ny, p.nz,
                    why);
            json_decref(sweep);
            return NULL;
        }
    }
    return sweep;
}

/* The batch requests: one per BATCH_MAX_SHAPES shapes of a file, or the sweep. */
static json_t *batch_requests(const fdt_daemon_args *a, const tune_args *t)
{
    json_t *reqs = json_array();
    if (t->sweep) {
        json_t *sweep = parse_sweep(a->pos, a->problem);
        if (!sweep) {
            json_decref(reqs);
            return NULL;
        }
        json_t *req = tuning_request("batch", a, t, 0);
        json_object_set_new(req, "sweep", sweep);
        json_array_append_new(reqs, req);
        return reqs;
    }
    shape_list s = {json_array(), NULL, 0};
    if (read_shapes(a->pos[0], a->problem, &s)) {
        json_decref(s.shapes);
        json_decref(reqs);
        return NULL;
    }
    for (size_t first = 0; first < json_array_size(s.shapes); first += BATCH_MAX_SHAPES) {
        json_t *req = tuning_request("batch", a, t, 0), *part = json_array();
        for (size_t i = first; i < json_array_size(s.shapes) && i < first + BATCH_MAX_SHAPES;
             i++)
            json_array_append(part, json_array_get(s.shapes, i));
        json_object_set_new(req, "shapes", part);
        json_array_append_new(reqs, req);
    }
    json_decref(s.shapes);
    return reqs;
}

/* Sends the requests in turn, gathering the jobs' ids. */
static int queue_batch(fdt_client *c, json_t *reqs, long long **ids, size_t *n)
{
    size_t i;
    json_t *req;
    json_array_foreach(reqs, i, req) {
        json_t *answer;
        const int rc = fdt_client_call(c, json_incref(req), &answer);
        if (rc) {
            if (*n)
                fprintf(stderr, "fdtune batch: %zu jobs were queued before this failure\n", *n);
            return rc;
        }
        const json_t *jobs = json_object_get(answer, "jobs");
        long long *grown = realloc(*ids, (*n + json_array_size(jobs) + 1) * sizeof **ids);
        if (!grown) {
            json_decref(answer);
            fprintf(stderr, "fdtune batch: out of memory\n");
            return FDT_EXIT_FAILED;
        }
        *ids = grown;
        size_t k;
        const json_t *id;
        json_array_foreach(jobs, k, id)
            (*ids)[(*n)++] = (long long)json_integer_value(id);
        json_decref(answer);
    }
    return FDT_EXIT_OK;
}

static void print_queued(const long long *ids, size_t n)
{
    if (n == 1)
        printf("queued 1 job: %lld\n", ids[0]);
    else if (n > 1)
        printf("queued %zu jobs: %lld ... %lld\n", n, ids[0], ids[n - 1]);
    else
        printf("queued no job\n");
}

int fdt_cmd_batch(int argc, char **argv)
{
    fdt_daemon_args a;
    tune_args t = {.budget = -1, .patience = -1, .budget_s = -1};
    const int parsed = fdt_daemon_parse(argc, argv, "h", batch_options, batch_help, own_option,
                                        &t, &a);
    if (parsed)
        return parsed > 0 ? FDT_EXIT_OK : FDT_EXIT_USAGE;
    if (t.sweep && a.npos != 3)
        return fdt_usage_error("batch", "--sweep expects three comma lists NX_LIST NY_LIST "
                               "NZ_LIST");
    if (!t.sweep && a.npos != 1)
        return fdt_usage_error("batch", "expected one FILE of shapes ('-' for standard input)");
    json_t *reqs = batch_requests(&a, &t);
    if (!reqs)
        return FDT_EXIT_USAGE;

    fdt_client c;
    int rc = fdt_client_open(&c, "batch", &a);
    long long *ids = NULL;
    size_t n = 0;
    if (rc == FDT_EXIT_OK)
        rc = queue_batch(&c, reqs, &ids, &n);
    json_decref(reqs);
    if (rc == FDT_EXIT_OK && !c.json)
        print_queued(ids, n);
    if (rc == FDT_EXIT_OK && t.wait && n)
        rc = wait_jobs(&c, ids, n);
    free(ids);
    fdt_client_close(&c);
    return rc;
}

static const struct option watch_options[] = {
    FDT_DAEMON_OPTIONS,
    {NULL, 0, NULL, 0},
};

static const char watch_help[] =
    "usage: fdtune watch JOB... [options]\n"
    "\n"
    "Follows jobs queued before (by tune, batch, or another shell) with the progress of\n"
    "--wait until each has ended; exit 0 when all are done, 1 when one failed or was\n"
    "cancelled. Ctrl-C stops watching, never the jobs (exit 130).\n"
    "\n"
    FDT_DAEMON_HELP;

int fdt_cmd_watch(int argc, char **argv)
{
    fdt_daemon_args a;
    const int parsed = fdt_daemon_parse(argc, argv, "h", watch_options, watch_help, NULL, NULL,
                                        &a);
    if (parsed)
        return parsed > 0 ? FDT_EXIT_OK : FDT_EXIT_USAGE;
    if (a.npos < 1)
        return fdt_usage_error("watch", "expected the JOB ids to follow");
    long long *ids = calloc((size_t)a.npos, sizeof *ids);
    if (!ids)
        return FDT_EXIT_FAILED;
    int rc = FDT_EXIT_OK;
    for (int i = 0; i < a.npos && rc == FDT_EXIT_OK; i++) {
        long v = 0;
        rc = fdt_parse_int(a.pos[i], 1, INT32_MAX, "JOB", &v) ? FDT_EXIT_USAGE : FDT_EXIT_OK;
        ids[i] = v;
    }
    fdt_client c;
    if (rc == FDT_EXIT_OK && (rc = fdt_client_open(&c, "watch", &a)) == FDT_EXIT_OK) {
        rc = wait_jobs(&c, ids, (size_t)a.npos);
        fdt_client_close(&c);
    }
    free(ids);
    return rc;
}
