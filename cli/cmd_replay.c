/* cmd_replay.c - `fdtune replay`: search strategies replayed on recorded spaces, on the
 * CPU, many seeds each. Every problem of the files is tuned again from its recording, with
 * the problem itself left out of its warm start (the other problems of the same device,
 * of every stencil, are the warm start, as the daemon's store would be), and the table
 * says, per problem and stencil, how many evaluations each strategy needed to come within
 * 1% of the recording's best. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "config.h"
#include "search/replay.h"
#include "search/search.h"

static const char replay_help[] =
    "usage: fdtune replay FILE... [options]\n"
    "\n"
    "Replays search strategies on recorded spaces: FILE is what `fdtune export --what\n"
    "results --format csv` writes (gzip accepted). For each problem (its shape, stencil,\n"
    "precision and radius; a spec's stencil is \"spec-\" and its hash), the evaluations needed\n"
    "to come within 1% of the recording's best (median and 90th percentile over seeds, in\n"
    "evaluations and in % of the space), random search's beside it, and the instant\n"
    "answer's speed over the best before and after the quick job (the guided search's\n"
    "first evaluations). The last line sums it up for scripts. A variant's repeated rows\n"
    "count once, at the fastest it ran; a field over 4 KiB or a line over 64 KiB is refused.\n"
    "\n"
    "  --strategy S              exhaustive, random or guided (default guided)\n"
    "  --seeds N                 seeds per problem (default 20)\n"
    "  --budget N                evaluations at most per run (default: the whole space)\n"
    "  --budget-s SECONDS        seconds of measuring at most per run, as a job's budget_s:\n"
    "                            each variant costs what the recording says it took (its\n"
    "                            compile_ms, and samples x reps x median_ms); a run stops\n"
    "                            at the first batch past it (default: no limit)\n"
    "  --patience N              stop a run after N evaluations without a 0.5% gain, as a\n"
    "                            job would; a line before the last then says where the\n"
    "                            runs stopped and how close to the best they got\n"
    "  --without-nearest N       leave each problem's N nearest problems out of its warm\n"
    "                            start too, as when they are still being tuned on another\n"
    "                            GPU (default 0)\n"
    "\n"
    "With --patience, a line also says how true the count a job's ETA rests on is: at the\n"
    "first batch past 25, 50 and 75% of each run, the evaluations the search then expected\n"
    "to have left (fdt_search_expected_left) against those it took; the median error and the\n"
    "share of runs within 25%.\n";

/* The table's stencil column: a spec's name, "spec-" and 16 hex digits, whole, since the
 * recording has no other name for it. */
#define STENCIL_WIDTH 21

/* The share of the best that counts as found. */
#define WITHIN 0.99

typedef struct replay_args {
    const fdt_strategy *strategy;
    long seeds;
    long budget;
    double budget_s;
    long patience;
    long without_nearest;
} replay_args;

/* One problem made ready: its space (the recorded variants this build knows) and speeds
 * in the space's order, and the warm start from the other problems. */
typedef struct prepared {
    const fdt_recorded_problem *rec;
    fdt_search_space space;
    double *speed;
    double *cost; /* seconds, NAN when the recording has none */
    double best;
    fdt_warm warm;
} prepared;

/* Per problem and strategy: evaluations to within 1% for each seed (-1 if never), and
 * where the runs stopped: evaluations spent, the best found over the recording's best. */
typedef struct outcome {
    long *evals;
    double *eta_error; /* traced runs: per seed, at each mark, the count's error (NAN: none) */
    double median, p90;
    long spent, spent_max;
    double log_found, found_worst;
} outcome;

/* A budget of seconds: above 0 (a replay without one has none), at most a job's. */
static int parse_seconds(const char *text, double *out)
{
    char *end;
    const double v = strtod(text, &end);
    if (end == text || *end || !(v > 0 && v <= FDT_SEARCH_SECONDS_MAX)) {
        fprintf(stderr, "fdtune replay: --budget-s must be a number of seconds above 0, at "
                "most %d, got '%s'\n", FDT_SEARCH_SECONDS_MAX, text);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, replay_args *a, int *first_file)
{
    enum { OPT_STRATEGY = 256, OPT_SEEDS, OPT_BUDGET, OPT_BUDGET_S, OPT_PATIENCE, OPT_WITHOUT,
           OPT_HELP };
    static const struct option options[] = {
        {"strategy", required_argument, NULL, OPT_STRATEGY},
        {"seeds", required_argument, NULL, OPT_SEEDS},
        {"budget", required_argument, NULL, OPT_BUDGET},
        {"budget-s", required_argument, NULL, OPT_BUDGET_S},
        {"patience", required_argument, NULL, OPT_PATIENCE},
        {"without-nearest", required_argument, NULL, OPT_WITHOUT},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    *a = (replay_args){.strategy = fdt_strategy_find("guided"), .seeds = 20, .budget = 0};
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (opt) {
        case OPT_STRATEGY:
            if (!(a->strategy = fdt_strategy_find(optarg))) {
                fprintf(stderr, "fdtune replay: unknown strategy '%s' (exhaustive, random, "
                        "guided)\n", optarg);
                return FDT_EXIT_USAGE;
            }
            break;
        case OPT_SEEDS:
            if (fdt_parse_int(optarg, 1, 100000, "--seeds", &a->seeds))
                return FDT_EXIT_USAGE;
            break;
        case OPT_BUDGET:
            if (fdt_parse_int(optarg, 1, 100000000, "--budget", &a->budget))
                return FDT_EXIT_USAGE;
            break;
        case OPT_BUDGET_S:
            if (parse_seconds(optarg, &a->budget_s))
                return FDT_EXIT_USAGE;
            break;
        case OPT_PATIENCE:
            if (fdt_parse_int(optarg, 1, 100000000, "--patience", &a->patience))
                return FDT_EXIT_USAGE;
            break;
        case OPT_WITHOUT:
            if (fdt_parse_int(optarg, 0, 100000, "--without-nearest", &a->without_nearest))
                return FDT_EXIT_USAGE;
            break;
        case 'h':
        case OPT_HELP:
            fputs(replay_help, stdout);
            return FDT_EXIT_OK;
        default:
            fprintf(stderr, "fdtune replay: unknown or incomplete option '%s'\n%s",
                    argv[optind - 1], replay_help);
            return FDT_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "fdtune replay: name at least one recorded file\n%s", replay_help);
        return FDT_EXIT_USAGE;
    }
    *first_file = optind;
    return -1;
}

/* Whether b may lend a a warm start: the same device and cache mode, of any stencil (one
 * of another stencil at fdt_warm_distance's penalty, and lending only the variants their
 * spaces share: a spec's to a spec, not the Laplacian's). */
static int same_device(const fdt_recorded_problem *a, const fdt_recorded_problem *b)
{
    return strcmp(a->fingerprint, b->fingerprint) == 0 && a->problem.cache == b->problem.cache;
}

/* Whether o is among the `without` problems nearest to r (ties go to the earlier one). */
static int held_back(const fdt_recording *rec, const fdt_recorded_problem *r,
                     const fdt_recorded_problem *o, long without)
{
    const double d = fdt_warm_distance(&r->problem, &o->problem);
    long nearer = 0;
    for (size_t q = 0; q < rec->n && nearer < without; q++) {
        const fdt_recorded_problem *x = &rec->problems[q];
        if (x == r || x == o || !same_device(x, r))
            continue;
        const double dx = fdt_warm_distance(&r->problem, &x->problem);
        nearer += dx < d || (dx == d && x < o);
    }
    return nearer < without;
}

static int prepare(prepared *p, const fdt_recording *rec, size_t which, long without)
{
    const fdt_recorded_problem *r = &rec->problems[which];
    fdt_variant *vs = malloc((r->n ? r->n : 1) * sizeof *vs);
    p->rec = r;
    p->speed = malloc((r->n ? r->n : 1) * sizeof *p->speed);
    p->cost = malloc((r->n ? r->n : 1) * sizeof *p->cost);
    if (!vs || !p->speed || !p->cost) {
        free(vs);
        return -1;
    }
    size_t n = 0;
    char err[128];
    for (size_t i = 0; i < r->n; i++)
        if (fdt_variant_parse(r->names[i], &vs[n], err, sizeof err) == 0) {
            p->speed[n] = r->gbps[i];
            p->cost[n++] = r->cost_s[i];
        }
    int rc = fdt_search_space_init(&p->space, vs, n);
    free(vs);
    p->best = 0;
    for (size_t i = 0; i < n; i++)
        p->best = fmax(p->best, p->speed[i]);
    for (size_t q = 0; q < rec->n && rc == 0; q++) {
        const fdt_recorded_problem *o = &rec->problems[q];
        if (q != which && same_device(o, r) && !held_back(rec, r, o, without))
            rc = fdt_warm_add(&p->warm, &p->space, &o->problem,
                              (const char(*)[FDT_VARIANT_NAME_MAX])o->names, o->gbps, o->n);
    }
    return rc;
}

static void release(prepared *p)
{
    fdt_warm_free(&p->warm);
    fdt_search_space_free(&p->space);
    free(p->speed);
    free(p->cost);
}

/* The ETA's count at 25, 50 and 75% of a run. */
#define MARKS 3
static const double marks[MARKS] = {0.25, 0.5, 0.75};

/* Where a run stood at each batch's start: evaluations so far, and those the search then
 * expected to have left. */
typedef struct eta_trace {
    long *done, *left;
    size_t n, cap;
} eta_trace;

/* One run's measurements, answered from the recording in the order the search asks. */
typedef struct run_tally {
    const prepared *p;
    long count, found;
    double fastest;
    const fdt_search *s;
    eta_trace *trace; /* NULL: not traced */
} run_tally;

static void trace_batch(run_tally *t)
{
    eta_trace *e = t->trace;
    if (!e || (size_t)t->count != t->s->nfed || e->n == e->cap)
        return;
    e->done[e->n] = t->count;
    e->left[e->n++] = (long)fdt_search_expected_left(t->s);
}

static void measure_recorded(void *ctx, fdt_search_result *r)
{
    run_tally *t = ctx;
    trace_batch(t);
    r->gbps = t->p->speed[r->index];
    r->cost_s = t->p->cost[r->index];
    t->count++;
    t->fastest = fmax(t->fastest, r->gbps);
    if (t->found < 0 && r->gbps >= WITHIN * t->p->best)
        t->found = t->count;
}

/* Runs a search until it stops, measuring from the recording. Returns the evaluations it
 * took to come within 1% of the best (-1 if it never did); *fastest is the best speed it
 * measured, *spent how many it measured. */
static long run_search(const prepared *p, const fdt_strategy *st, uint64_t seed,
                       fdt_search_limits limits, eta_trace *trace, double *fastest, long *spent)
{
    fdt_search s;
    run_tally t = {.p = p, .found = -1, .s = &s, .trace = trace};
    *fastest = 0;
    *spent = 0;
    if (fdt_search_init(&s, st, &p->space, &p->warm, &p->rec->problem, seed, limits) != 0)
        return -1;
    fdt_search_run(&s, measure_recorded, &t);
    fdt_search_free(&s);
    *fastest = t.fastest;
    *spent = t.count;
    return t.found;
}

static int by_evals(const void *a, const void *b)
{
    /* a miss (-1) sorts last: it took more than any budget */
    const long x = *(const long *)a, y = *(const long *)b;
    const long ux = x < 0 ? __LONG_MAX__ : x, uy = y < 0 ? __LONG_MAX__ : y;
    return (ux > uy) - (ux < uy);
}

static double as_value(long evals)
{
    return evals < 0 ? INFINITY : (double)evals;
}

static void summarize(outcome *o, long seeds)
{
    qsort(o->evals, (size_t)seeds, sizeof *o->evals, by_evals);
    const long mid = (seeds - 1) / 2;
    o->median = seeds % 2 ? as_value(o->evals[mid])
                          : (as_value(o->evals[mid]) + as_value(o->evals[mid + 1])) / 2;
    o->p90 = as_value(o->evals[(long)ceil(0.9 * seeds) - 1]); /* nearest rank */
}

/* At each mark of a run that took total evaluations, the error of the count expected left
 * at the first batch past it: (expected - took) / took, NAN where none was past it. */
static void eta_errors(const eta_trace *e, long total, double *out)
{
    for (int m = 0; m < MARKS; m++) {
        out[m] = NAN;
        for (size_t i = 0; i < e->n; i++) {
            const long took = total - e->done[i];
            if (e->done[i] >= marks[m] * (double)total && took > 0) {
                out[m] = (double)(e->left[i] - took) / (double)took;
                break;
            }
        }
    }
}

/* traced: each run's ETA count is traced too (o->eta_error). */
static int measure(const prepared *p, const fdt_strategy *st, const replay_args *a, int traced,
                   outcome *o)
{
    const size_t cap = p->space.n + 1;
    eta_trace e = {.done = traced ? malloc(cap * sizeof *e.done) : NULL,
                   .left = traced ? malloc(cap * sizeof *e.left) : NULL, .cap = cap};
    o->evals = malloc((size_t)a->seeds * sizeof *o->evals);
    o->eta_error = traced ? malloc((size_t)a->seeds * MARKS * sizeof *o->eta_error) : NULL;
    if (!o->evals || (traced && (!e.done || !e.left || !o->eta_error))) {
        free(e.done);
        free(e.left);
        return -1;
    }
    const fdt_search_limits limits = {.evals = a->budget, .seconds = a->budget_s,
                                      .patience = a->patience};
    o->found_worst = INFINITY;
    for (long seed = 0; seed < a->seeds; seed++) {
        double fastest;
        long spent;
        e.n = 0;
        o->evals[seed] = run_search(p, st, (uint64_t)seed + 1, limits, traced ? &e : NULL,
                                    &fastest, &spent);
        if (traced)
            eta_errors(&e, spent, o->eta_error + seed * MARKS);
        o->spent += spent;
        o->spent_max = spent > o->spent_max ? spent : o->spent_max;
        o->log_found += log(fmax(fastest / p->best, 1e-9));
        o->found_worst = fmin(o->found_worst, fastest / p->best);
    }
    summarize(o, a->seeds);
    free(e.done);
    free(e.left);
    return 0;
}

/* The quick job's result: the worst over seeds of the best speed the guided search
 * measured in its first FDT_SEARCH_QUICK_EVALS evaluations, over the recording's best. */
static double quick_ratio(const prepared *p, long seeds)
{
    double worst = INFINITY, fastest;
    long spent;
    for (long seed = 0; seed < seeds; seed++) {
        run_search(p, fdt_strategy_find("guided"), (uint64_t)seed + 1,
                   (fdt_search_limits){.evals = FDT_SEARCH_QUICK_EVALS}, NULL, &fastest,
                   &spent);
        worst = fmin(worst, fastest / p->best);
    }
    return worst;
}

static double instant_ratio(const prepared *p)
{
    double expected;
    size_t used;
    const long v = fdt_search_instant(&p->space, &p->warm, &p->rec->problem, &expected, &used);
    return v < 0 ? 0 : p->speed[v] / p->best;
}

static double pct(double evals, size_t space)
{
    return 100.0 * evals / (double)space;
}

static void print_evals(double evals, size_t space)
{
    if (isinf(evals))
        printf(" %7s %6s", "miss", "");
    else
        printf(" %7.1f %5.1f%%", evals, pct(evals, space));
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (sorted here). */
static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct totals {
    size_t n;
    double *med, *rand_med;
    double *eta_error[MARKS]; /* with --patience: every run's, at each mark */
    size_t neta[MARKS];
    double worst_med, worst_p90, log_instant, instant_worst, quick_worst;
    long spent, spent_max;
    double log_found, found_worst;
} totals;

static void print_row(const prepared *p, const outcome *st, const outcome *rnd, double instant,
                      double quick)
{
    const fdt_problem *q = &p->rec->problem;
    char shape[48];
    snprintf(shape, sizeof shape, "%dx%dx%d", q->nx, q->ny, q->nz);
    printf("%-16s %-*s %-6s %d %6zu %8.1f", shape, STENCIL_WIDTH, q->stencil,
           fdt_precision_name(q->precision), q->radius, p->space.n, p->best);
    print_evals(st->median, p->space.n);
    print_evals(st->p90, p->space.n);
    print_evals(rnd->median, p->space.n);
    print_evals(rnd->p90, p->space.n);
    printf(" %7.4f %7.4f\n", instant, quick);
}

static int replay_problem(const fdt_recording *rec, size_t which, const replay_args *a,
                          totals *t)
{
    prepared p = {0};
    outcome st = {0}, rnd = {0};
    int rc = prepare(&p, rec, which, a->without_nearest);
    if (rc == 0 && (p.space.n == 0 || p.best <= 0)) {
        release(&p);
        return 0; /* nothing ran: nothing to find */
    }
    if (rc == 0)
        rc = measure(&p, a->strategy, a, a->patience > 0, &st);
    if (rc == 0)
        rc = measure(&p, fdt_strategy_find("random"), a, 0, &rnd);
    if (rc == 0) {
        const double instant = instant_ratio(&p), quick = quick_ratio(&p, a->seeds);
        print_row(&p, &st, &rnd, instant, quick);
        t->med[t->n] = pct(st.median, p.space.n);
        t->rand_med[t->n] = pct(rnd.median, p.space.n);
        t->worst_med = fmax(t->worst_med, pct(st.median, p.space.n));
        t->worst_p90 = fmax(t->worst_p90, pct(st.p90, p.space.n));
        t->log_instant += log(fmax(instant, 1e-9));
        t->instant_worst = fmin(t->instant_worst, instant);
        t->quick_worst = fmin(t->quick_worst, quick);
        t->spent += st.spent;
        t->spent_max = st.spent_max > t->spent_max ? st.spent_max : t->spent_max;
        t->log_found += st.log_found;
        t->found_worst = fmin(t->found_worst, st.found_worst);
        t->n++;
        for (long k = 0; st.eta_error && k < a->seeds * MARKS; k++)
            if (!isnan(st.eta_error[k]))
                t->eta_error[k % MARKS][t->neta[k % MARKS]++] = st.eta_error[k];
    }
    free(st.eta_error);
    free(st.evals);
    free(rnd.evals);
    release(&p);
    return rc;
}

/* The ETA count's error at each mark: its median, and the share of runs within 25%. */
static void print_eta(totals *t)
{
    printf("eta count:");
    for (int m = 0; m < MARKS; m++) {
        size_t within = 0;
        for (size_t i = 0; i < t->neta[m]; i++)
            within += fabs(t->eta_error[m][i]) <= 0.25;
        if (t->neta[m] == 0)
            printf(" at %.0f%% no run;", 100 * marks[m]);
        else
            printf(" at %.0f%% median %+.0f%%, %.0f%% of %zu runs within 25%%;", 100 * marks[m],
                   100 * median_of(t->eta_error[m], t->neta[m]),
                   100.0 * (double)within / (double)t->neta[m], t->neta[m]);
    }
    printf("\n");
}

static int replay_all(const fdt_recording *rec, const replay_args *a)
{
    totals t = {.instant_worst = INFINITY, .quick_worst = INFINITY, .found_worst = INFINITY};
    t.med = malloc((rec->n ? rec->n : 1) * sizeof *t.med);
    t.rand_med = malloc((rec->n ? rec->n : 1) * sizeof *t.rand_med);
    int rc = t.med && t.rand_med ? 0 : -1;
    for (int m = 0; m < MARKS && a->patience; m++)
        if (!(t.eta_error[m] = malloc((rec->n ? rec->n : 1) * (size_t)a->seeds *
                                      sizeof *t.eta_error[m])))
            rc = -1;
    printf("%-16s %-*s %-6s %s %6s %8s %15s %15s %15s %15s %7s %7s\n", "shape", STENCIL_WIDTH,
           "stencil", "prec", "R", "space", "best", "median to 1%", "p90 to 1%",
           "random median", "random p90", "instant", "quick");
    for (size_t i = 0; i < rec->n && rc == 0; i++)
        rc = replay_problem(rec, i, a, &t);
    if (rc != 0)
        fprintf(stderr, "fdtune replay: out of memory\n");
    else if (t.n == 0) {
        fprintf(stderr, "fdtune replay: the files hold no problem with a variant that ran\n");
        rc = -1;
    }
    if (rc == 0 && (a->patience || a->budget || a->budget_s))
        printf("stopped: evaluations mean %.1f max %ld; best found over the recording's best: "
               "geomean %.4f worst %.4f\n", (double)t.spent / (double)(t.n * a->seeds),
               t.spent_max, exp(t.log_found / (double)(t.n * a->seeds)), t.found_worst);
    if (rc == 0 && a->patience)
        print_eta(&t);
    if (rc == 0) {
        const double random_median = median_of(t.rand_med, t.n);
        printf("replay problems=%zu seeds=%ld strategy=%s median_pct_to_1pct=%.2f "
               "worst_median_pct_to_1pct=%.2f p90_pct_to_1pct=%.2f random_median_pct_to_1pct=%.2f "
               "instant_geomean=%.4f instant_worst=%.4f quick_worst=%.4f\n",
               t.n, a->seeds, a->strategy->name, median_of(t.med, t.n), t.worst_med, t.worst_p90,
               random_median, exp(t.log_instant / t.n), t.instant_worst, t.quick_worst);
    }
    free(t.med);
    free(t.rand_med);
    for (int m = 0; m < MARKS; m++)
        free(t.eta_error[m]);
    return rc;
}

/* Whether every recorded variant has its cost (a file without cost columns has none). */
static int costs_known(const fdt_recording *rec)
{
    for (size_t i = 0; i < rec->n; i++)
        for (size_t k = 0; k < rec->problems[i].n; k++)
            if (isnan(rec->problems[i].cost_s[k]))
                return 0;
    return 1;
}

int fdt_cmd_replay(int argc, char **argv)
{
    replay_args a;
    int first;
    const int parsed = parse_args(argc, argv, &a, &first);
    if (parsed >= 0)
        return parsed;
    fdt_recording rec = {0};
    char err[512];
    for (int i = first; i < argc; i++)
        if (fdt_recording_load(&rec, argv[i], err, sizeof err) != 0) {
            fprintf(stderr, "fdtune replay: %s\n", err);
            fdt_recording_free(&rec);
            return FDT_EXIT_FAILED;
        }
    if (a.budget_s && !costs_known(&rec)) {
        fprintf(stderr, "fdtune replay: --budget-s needs what each variant cost, and the "
                "files have no compile_ms, samples, reps and median_ms columns\n");
        fdt_recording_free(&rec);
        return FDT_EXIT_USAGE;
    }
    const int rc = replay_all(&rec, &a);
    fdt_recording_free(&rec);
    return rc == 0 ? FDT_EXIT_OK : FDT_EXIT_FAILED;
}
