/* search.c - the search driver every strategy shares: the space and its name index, the
 * warm start, batches, the step every caller drives a search through, the budgets (the one
 * place they are enforced) and the rebuild from stored results. */
#include "search/search.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "search/strategies.h"

static const fdt_strategy *const strategies[] = {&fdt_strategy_exhaustive,
                                                 &fdt_strategy_random, &fdt_strategy_guided};
#define NSTRATEGIES (sizeof strategies / sizeof strategies[0])

const fdt_strategy *fdt_strategy_find(const char *name)
{
    for (size_t i = 0; i < NSTRATEGIES; i++)
        if (strcmp(strategies[i]->name, name) == 0)
            return strategies[i];
    return NULL;
}

const char *const *fdt_strategy_names(void)
{
    static const char *names[NSTRATEGIES + 1];
    for (size_t i = 0; i < NSTRATEGIES; i++)
        names[i] = strategies[i]->name;
    return names;
}

uint64_t fdt_search_random(uint64_t seed, uint64_t a, uint64_t b)
{
    /* splitmix64's finalizer over the three inputs: cheap, and no state to carry. */
    uint64_t z = seed ^ (a * 0x9e3779b97f4a7c15ULL) ^ (b * 0xbf58476d1ce4e5b9ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* --- the space ------------------------------------------------------------------------- */

static int by_name(const void *a, const void *b, void *space)
{
    const fdt_search_space *s = space;
    return strcmp(s->names[*(const size_t *)a], s->names[*(const size_t *)b]);
}

int fdt_search_space_init(fdt_search_space *s, const fdt_variant *vs, size_t n)
{
    memset(s, 0, sizeof *s);
    s->variants = malloc((n ? n : 1) * sizeof *s->variants);
    s->names = malloc((n ? n : 1) * sizeof *s->names);
    s->by_name = malloc((n ? n : 1) * sizeof *s->by_name);
    if (!s->variants || !s->names || !s->by_name) {
        fdt_search_space_free(s);
        return -1;
    }
    s->n = n;
    for (size_t i = 0; i < n; i++) {
        s->variants[i] = vs[i];
        fdt_variant_name(&vs[i], s->names[i], sizeof s->names[i]);
        s->by_name[i] = i;
    }
    qsort_r(s->by_name, n, sizeof *s->by_name, by_name, s);
    return 0;
}

void fdt_search_space_free(fdt_search_space *s)
{
    free(s->variants);
    free(s->names);
    free(s->by_name);
    memset(s, 0, sizeof *s);
}

long fdt_search_space_find(const fdt_search_space *s, const char *name)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(s->names[s->by_name[mid]], name);
        if (c == 0)
            return (long)s->by_name[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* --- the warm start -------------------------------------------------------------------- */

int fdt_warm_add(fdt_warm *w, const fdt_search_space *space, const fdt_problem *p,
                 const char (*names)[FDT_VARIANT_NAME_MAX], const double *gbps, size_t n)
{
    float *score = malloc((space->n ? space->n : 1) * sizeof *score);
    if (!score)
        return -1;
    for (size_t i = 0; i < space->n; i++)
        score[i] = -1;
    double best = 0;
    for (size_t i = 0; i < n; i++)
        if (gbps[i] > best)
            best = gbps[i];
    size_t known = 0;
    for (size_t i = 0; i < n && best > 0; i++) {
        const long k = fdt_search_space_find(space, names[i]);
        if (k >= 0) {
            score[k] = gbps[i] > 0 ? (float)(gbps[i] / best) : 0;
            known++;
        }
    }
    if (known == 0) {
        free(score);
        return 0;
    }
    fdt_warm_problem *grown = realloc(w->problems, (w->n + 1) * sizeof *grown);
    if (!grown) {
        free(score);
        return -1;
    }
    w->problems = grown;
    w->problems[w->n++] = (fdt_warm_problem){.problem = *p, .score = score};
    return 0;
}

void fdt_warm_free(fdt_warm *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->problems[i].score);
    free(w->problems);
    memset(w, 0, sizeof *w);
}

/* A shape's effect on speed goes by ratios (twice the rows, half the planes), so shapes
 * are compared on a log scale; another precision, radius or operator (stencil) counts as a
 * doubling and a half of every side: a weaker hint, never none. Another operator is much
 * weaker still: on the six specs' recorded spaces another operator at the same shape
 * disagrees with a problem's profile three times as much as the same operator at a distance
 * of 1.4 to 2.5 does, and at 2 its many rows outvoted the problem's own neighbours (the worst
 * problem from 5.7% of the space to 7.7%: bench/results/README.md, issue 30). At 6 any
 * neighbour of the same operator outweighs them, so an operator with tuned problems of its
 * own searches as before, and one with none starts from the others'. */
#define OTHER_PRECISION 2.0
#define OTHER_RADIUS 2.0
#define OTHER_STENCIL 6.0

double fdt_warm_distance(const fdt_problem *target, const fdt_problem *other)
{
    const double dx = log((double)target->nx / other->nx);
    const double dy = log((double)target->ny / other->ny);
    const double dz = log((double)target->nz / other->nz);
    return sqrt(dx * dx + dy * dy + dz * dz) +
           (target->precision != other->precision ? OTHER_PRECISION : 0) +
           (target->radius != other->radius ? OTHER_RADIUS : 0) +
           (strcmp(target->stencil, other->stencil) != 0 ? OTHER_STENCIL : 0);
}

/* --- the driver ------------------------------------------------------------------------ */

int fdt_search_init(fdt_search *s, const fdt_strategy *strategy, const fdt_search_space *space,
                    const fdt_warm *warm, const fdt_problem *problem, uint64_t seed,
                    fdt_search_limits limits)
{
    static const fdt_warm none;
    memset(s, 0, sizeof *s);
    const size_t n = space->n ? space->n : 1;
    s->gbps = malloc(n * sizeof *s->gbps);
    s->queued = calloc(n, 1);
    s->sequence = malloc(n * sizeof *s->sequence);
    s->batch = malloc(FDT_SEARCH_BATCH_MAX * sizeof *s->batch);
    if (!s->gbps || !s->queued || !s->sequence || !s->batch) {
        fdt_search_free(s);
        return -1;
    }
    for (size_t i = 0; i < space->n; i++)
        s->gbps[i] = NAN;
    s->strategy = strategy;
    s->space = space;
    s->warm = warm ? warm : &none;
    s->problem = *problem;
    s->seed = seed;
    s->limits = limits;
    return 0;
}

void fdt_search_free(fdt_search *s)
{
    if (s->model && s->strategy->free_model)
        s->strategy->free_model(s->model);
    free(s->gbps);
    free(s->queued);
    free(s->sequence);
    free(s->batch);
    memset(s, 0, sizeof *s);
}

const char *fdt_search_end_name(fdt_search_end end)
{
    static const char *const names[] = {NULL, "space", "budget", "patience", "time"};
    return (unsigned)end < sizeof names / sizeof names[0] ? names[end] : NULL;
}

/* The completed batch joins the sequence in proposal order; the patience rule counts along
 * that order, so it does not depend on the order results came back in. */
static void close_batch(fdt_search *s)
{
    for (size_t i = 0; i < s->nbatch; i++) {
        const size_t k = s->batch[i];
        s->queued[k] = 0;
        s->sequence[s->nmeasured++] = k;
        /* Failures before anything ran do not count: patience waits for a first result. */
        if (s->gbps[k] > s->best * FDT_SEARCH_GAIN)
            s->since_gain = 0;
        else if (s->best > 0)
            s->since_gain++;
        if (s->gbps[k] > s->best)
            s->best = s->gbps[k];
    }
    s->nbatch = 0;
}

double fdt_search_spent_s(const fdt_search *s)
{
    return s->spent_s + s->charged_s;
}

static long spent_evals(const fdt_search *s)
{
    return (long)s->nfed + s->charged_evals;
}

/* The budget of seconds or of evaluations that is spent, seconds first. */
static fdt_search_end budget_spent(const fdt_search *s)
{
    if (s->limits.seconds > 0 && fdt_search_spent_s(s) >= s->limits.seconds)
        return FDT_SEARCH_TIME;
    if (s->limits.evals > 0 && spent_evals(s) >= s->limits.evals)
        return FDT_SEARCH_BUDGET;
    return FDT_SEARCH_GOING;
}

size_t fdt_search_allowed(const fdt_search *s)
{
    if (s->end || budget_spent(s))
        return 0;
    return s->limits.evals > 0 ? (size_t)(s->limits.evals - spent_evals(s)) : SIZE_MAX;
}

/* Why the search stops at a batch's end, if it does. */
static fdt_search_end stop_reason(const fdt_search *s)
{
    const fdt_search_end spent = budget_spent(s);
    if (spent)
        return spent;
    if (s->nmeasured >= s->space->n)
        return FDT_SEARCH_SPACE;
    if (s->limits.patience > 0 && s->since_gain >= s->limits.patience)
        return FDT_SEARCH_PATIENCE;
    return FDT_SEARCH_GOING;
}

/* The gain model. Evaluation i + 1 is a gain (by FDT_SEARCH_GAIN over the best before it)
 * with probability scale / (i + 1)^GAIN_DECAY, scale fitted to the gains the search has
 * made so far. Random order would give 1 / (i + 1); a guided search front-loads its gains,
 * and 1.5 is what its recorded runs show: replayed with patience 48 on eight recordings
 * (H100 Laplacian and spec spaces, bench/results/eta/replay_eta_count.txt), the count's
 * median error at 25, 50 and 75% of a run stays within 25% on each, where 1 overshoots by
 * 30 to 65% at 25%. */
#define GAIN_DECAY 1.5

static double gain_chance(double scale, size_t i)
{
    return fmin(1, scale / pow((double)(i + 1), GAIN_DECAY));
}

/* The model's scale: the gains after the first result over those the model expects of the
 * evaluations measured (1 when it expects none yet). */
static double gain_scale(const fdt_search *s)
{
    double best = 0, expected = 0;
    long gains = 0;
    for (size_t i = 0; i < s->nmeasured; i++) {
        const double g = s->gbps[s->sequence[i]];
        if (best > 0) {
            gains += g > best * FDT_SEARCH_GAIN;
            expected += gain_chance(1, i);
        }
        best = g > best ? g : best;
    }
    return expected > 0 ? (double)gains / expected : 1;
}

/* The evaluations a search with patience takes yet, on the mean, from done evaluations
 * with since of them after its last gain, in a space of n, under the gain model with scale:
 * the search stops once patience go by without a gain. run[k] is the chance that it is
 * still going with k evaluations since its last gain; each step still going costs one
 * evaluation. O((n - done) patience), a few milliseconds at most. */
static double patience_left(size_t done, long since, long patience, size_t n, double scale)
{
    double *run = calloc((size_t)patience, sizeof *run);
    if (!run)
        return (double)(n - done);
    run[since < patience ? since : patience - 1] = 1;
    double going = 1, left = 0;
    for (size_t i = done; i < n && going > 1e-6; i++) {
        const double gain = gain_chance(scale, i);
        left += going;
        for (long k = patience - 1; k > 0; k--)
            run[k] = run[k - 1] * (1 - gain);
        run[0] = going * gain;
        going = 0;
        for (long k = 0; k < patience; k++)
            going += run[k];
    }
    free(run);
    return left;
}

/* Patience runs out mid-batch, and the batch is measured whole: on the mean, half of the
 * current batch's size past it. */
size_t fdt_search_expected_left(const fdt_search *s)
{
    if (s->end)
        return 0;
    size_t left = s->space->n - s->nfed;
    /* patience counts from the first result that ran: before one, nothing can end it */
    if (s->limits.patience > 0 && (size_t)s->limits.patience < left && s->best > 0) {
        const double overshoot = s->nbatch > 0 ? (double)(s->nbatch - 1) / 2 : 0;
        const double mean = patience_left(s->nfed, s->since_gain, s->limits.patience,
                                          s->space->n, gain_scale(s)) + overshoot;
        left = mean < (double)left ? (size_t)(mean + 0.5) : left;
    }
    const size_t allowed = fdt_search_allowed(s);
    return left < allowed ? left : allowed;
}

/* A batch is sized by the search's own sequence, never by charges: a rebuilt search must
 * propose the batches the uninterrupted one did, and a step holds the rest to the budget. */
static void next_batch(fdt_search *s)
{
    size_t cap = FDT_SEARCH_BATCH_MAX;
    if (s->limits.evals > 0 && (size_t)s->limits.evals - s->nmeasured < cap)
        cap = (size_t)s->limits.evals - s->nmeasured;
    s->nbatch = s->strategy->propose(s, s->batch, cap);
    for (size_t i = 0; i < s->nbatch; i++)
        s->queued[s->batch[i]] = 1;
    if (s->nbatch == 0)
        s->end = FDT_SEARCH_SPACE; /* a strategy with nothing left to propose */
}

static size_t unmeasured_of_batch(const fdt_search *s, size_t *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nbatch && n < cap; i++)
        if (isnan(s->gbps[s->batch[i]]))
            out[n++] = s->batch[i];
    return n;
}

/* The current batch's variants still to measure, at most cap, closing complete batches and
 * proposing the next until the search ends. within_budgets: at most what the budgets
 * allow; a rebuild sees the whole batch, as what it takes was measured already. */
static size_t pending(fdt_search *s, size_t *out, size_t cap, int within_budgets)
{
    while (!s->end) {
        const size_t n = unmeasured_of_batch(s, out, cap);
        if (n > 0 && !within_budgets)
            return n;
        if (n > 0) {
            const size_t allowed = fdt_search_allowed(s);
            if (allowed == 0)
                s->end = budget_spent(s);
            return n < allowed ? n : allowed;
        }
        if (s->nbatch > 0)
            close_batch(s);
        s->end = stop_reason(s);
        if (!s->end)
            next_batch(s);
    }
    return 0;
}

void fdt_search_charge(fdt_search *s, long evals, double seconds)
{
    s->charged_evals += evals > 0 ? evals : 0;
    s->charged_s += seconds > 0 && isfinite(seconds) ? seconds : 0;
}

/* A result of a variant given and not told yet is the search's; any other was spent all
 * the same, outside it. */
static void take(fdt_search *s, const fdt_search_result *r)
{
    const size_t k = r->index;
    if (k >= s->space->n || !s->queued[k] || !isnan(s->gbps[k])) {
        fdt_search_charge(s, 1, r->cost_s);
        return;
    }
    s->gbps[k] = r->gbps > 0 && isfinite(r->gbps) ? r->gbps : 0;
    s->spent_s += r->cost_s > 0 && isfinite(r->cost_s) ? r->cost_s : 0;
    s->nfed++;
}

size_t fdt_search_step(fdt_search *s, const fdt_search_result *results, size_t nresults,
                       size_t *next, size_t cap)
{
    for (size_t i = 0; i < nresults; i++)
        take(s, &results[i]);
    return cap ? pending(s, next, cap, 1) : 0;
}

void fdt_search_run(fdt_search *s, void (*measure)(void *ctx, fdt_search_result *r),
                    void *ctx)
{
    size_t next[FDT_SEARCH_BATCH_MAX];
    fdt_search_result done[FDT_SEARCH_BATCH_MAX];
    size_t n = fdt_search_step(s, NULL, 0, next, FDT_SEARCH_BATCH_MAX);
    while (n > 0) {
        for (size_t i = 0; i < n; i++) {
            done[i] = (fdt_search_result){.index = next[i]};
            measure(ctx, &done[i]);
        }
        n = fdt_search_step(s, done, n, next, FDT_SEARCH_BATCH_MAX);
    }
}

void fdt_search_replay(fdt_search *s, int (*lookup)(void *ctx, size_t index, double *gbps),
                       void *ctx)
{
    size_t given[FDT_SEARCH_BATCH_MAX];
    for (;;) {
        const size_t n = pending(s, given, FDT_SEARCH_BATCH_MAX, 0);
        size_t known = 0;
        for (size_t i = 0; i < n; i++) {
            fdt_search_result r = {.index = given[i]};
            if (lookup(ctx, given[i], &r.gbps)) {
                take(s, &r);
                known++;
            }
        }
        /* Taken, a charged row counts as the search's own. */
        s->charged_evals -= (long)known < s->charged_evals ? (long)known : s->charged_evals;
        if (n == 0 || known < n)
            return;
    }
}
