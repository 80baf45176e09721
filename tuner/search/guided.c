/* guided.c - a model-based search warm-started from the tuned problems nearest to this one.
 *
 * The model predicts a variant's speed on this problem as a weighted mean of its speed on
 * the warm problems (each over its own best). A warm problem's weight starts from its
 * distance to this one and falls as the results measured here disagree with its profile,
 * so the problems that behave like this one take over. A per-family offset, learned from
 * the residuals, moves whole families up or down where this problem differs from all of
 * them (a shape whose best family wins nowhere else). Each batch holds the model's best
 * predictions, one-parameter moves from the fastest variants measured so far (where the
 * model is wrong, the neighbourhood of a good variant is still good), and one seeded
 * random pick; the first batch holds each family's best prediction, so that no family is
 * judged by its neighbours' results alone.
 *
 * The constants were chosen on recorded H100 spaces with fdtune replay, leaving each
 * problem out of its own warm start (bench/results/README.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/strategies.h"

#define TAU 0.7      /* distance at which a warm problem's weight falls by e */
#define GAMMA 60.0   /* how fast disagreement with measured results lowers a weight */
#define LAMBDA 2.0   /* results a family offset needs before it counts half */
#define BATCH 8
#define LOCAL 3      /* one-parameter moves per batch, from the fastest measured */
#define FLOOR 1e-3   /* the relative speed a failed variant counts as */
#define MAX_FAMILIES 16

typedef struct model {
    double *base_weight; /* per warm problem: from its distance alone */
    double *weight;      /* per warm problem: after this problem's results */
    double *pred;        /* per variant: predicted log speed, up to a constant */
    int *family;         /* per variant: the index of its family in fdt_families() */
} model;

static void free_model(void *m)
{
    model *md = m;
    if (!md)
        return;
    free(md->base_weight);
    free(md->weight);
    free(md->pred);
    free(md->family);
    free(md);
}

static int family_index(const fdt_family *f)
{
    const fdt_family *const *all = fdt_families();
    for (int i = 0; all[i] && i < MAX_FAMILIES; i++)
        if (all[i] == f)
            return i;
    return MAX_FAMILIES - 1;
}

static model *model_new(const fdt_search_space *space, const fdt_warm *warm,
                        const fdt_problem *problem)
{
    model *md = calloc(1, sizeof *md);
    const size_t nw = warm->n ? warm->n : 1, nv = space->n ? space->n : 1;
    if (!md || !(md->base_weight = malloc(nw * sizeof(double))) ||
        !(md->weight = malloc(nw * sizeof(double))) || !(md->pred = malloc(nv * sizeof(double))) ||
        !(md->family = malloc(nv * sizeof(int)))) {
        free_model(md);
        return NULL;
    }
    for (size_t p = 0; p < warm->n; p++)
        md->base_weight[p] = exp(-fdt_warm_distance(problem, &warm->problems[p].problem) / TAU);
    for (size_t v = 0; v < space->n; v++)
        md->family[v] = family_index(space->variants[v].family);
    return md;
}

static double relative(float score)
{
    return score > FLOOR ? score : FLOOR;
}

/* A warm problem's weight after the results measured here: how well its profile, shifted
 * by the best constant (units differ), explains them. */
static double fitted_weight(const fdt_search *s, const fdt_warm_problem *wp, double w)
{
    double sum = 0, sum2 = 0;
    size_t m = 0;
    for (size_t k = 0; k < s->nmeasured; k++) {
        const size_t v = s->sequence[k];
        if (s->gbps[v] > 0 && wp->score[v] >= 0) {
            const double r = log(s->gbps[v]) - log(relative(wp->score[v]));
            sum += r;
            sum2 += r * r;
            m++;
        }
    }
    if (m == 0)
        return w;
    const double mean = sum / m, mse = sum2 / m - mean * mean;
    return w * exp(-GAMMA * (mse > 0 ? mse : 0) * m / (m + 2.0));
}

/* The weighted mean relative speed of each variant; *known: whether any warm problem
 * measured it. Variants no warm problem knows get the mean of those it does. */
static void weighted_means(const fdt_warm *warm, const double *weight, size_t nv, double *out)
{
    double total = 0;
    size_t nknown = 0;
    for (size_t v = 0; v < nv; v++) {
        double sw = 0, sx = 0;
        for (size_t p = 0; p < warm->n; p++)
            if (warm->problems[p].score[v] >= 0) {
                sw += weight[p];
                sx += weight[p] * relative(warm->problems[p].score[v]);
            }
        out[v] = sw > 0 ? sx / sw : NAN;
        if (sw > 0) {
            total += out[v];
            nknown++;
        }
    }
    for (size_t v = 0; v < nv; v++)
        if (isnan(out[v]))
            out[v] = nknown ? total / nknown : 1;
}

/* pred[v]: the log of the weighted mean, shifted by the family offsets that the measured
 * results ask for. */
static void predict(fdt_search *s, model *md)
{
    const fdt_warm *warm = s->warm;
    for (size_t p = 0; p < warm->n; p++)
        md->weight[p] = fitted_weight(s, &warm->problems[p], md->base_weight[p]);
    weighted_means(warm, md->weight, s->space->n, md->pred);
    for (size_t v = 0; v < s->space->n; v++)
        md->pred[v] = log(md->pred[v]);
    double resid[MAX_FAMILIES] = {0}, mean = 0;
    int count[MAX_FAMILIES] = {0};
    size_t m = 0;
    for (size_t k = 0; k < s->nmeasured; k++) {
        const size_t v = s->sequence[k];
        if (s->gbps[v] > 0) {
            mean += log(s->gbps[v]) - md->pred[v];
            m++;
        }
    }
    if (m == 0)
        return;
    mean /= m;
    for (size_t k = 0; k < s->nmeasured; k++) {
        const size_t v = s->sequence[k];
        if (s->gbps[v] > 0) {
            resid[md->family[v]] += log(s->gbps[v]) - md->pred[v] - mean;
            count[md->family[v]]++;
        }
    }
    for (size_t v = 0; v < s->space->n; v++)
        md->pred[v] += resid[md->family[v]] / (count[md->family[v]] + LAMBDA);
}

/* --- choosing a batch ------------------------------------------------------------------ */

typedef struct picker {
    fdt_search *s;
    const model *md;
    size_t *out;
    size_t n, cap;
} picker;

/* Ties (a cold start predicts the same for all) are broken by the seed, not the order. */
static double rank(const picker *k, size_t v)
{
    return k->md->pred[v] + (double)(fdt_search_random(k->s->seed, v, 1) >> 11) * 0x1p-53 * 1e-9;
}

static int is_open(const picker *k, size_t v)
{
    if (!isnan(k->s->gbps[v]))
        return 0;
    for (size_t i = 0; i < k->n; i++)
        if (k->out[i] == v)
            return 0;
    return 1;
}

static void take(picker *k, long v)
{
    if (v >= 0 && k->n < k->cap)
        k->out[k->n++] = (size_t)v;
}

/* The open variant of highest rank among those accept admits, or -1. */
static long best_open(const picker *k, int (*accept)(const picker *, size_t, const void *),
                      const void *arg)
{
    long best = -1;
    double r = -INFINITY;
    for (size_t v = 0; v < k->s->space->n; v++)
        if (is_open(k, v) && (!accept || accept(k, v, arg)) && rank(k, v) > r) {
            r = rank(k, v);
            best = (long)v;
        }
    return best;
}

static int in_family(const picker *k, size_t v, const void *arg)
{
    return k->md->family[v] == *(const int *)arg;
}

/* Whether v differs from the variant *arg in exactly one parameter. */
static int one_move(const picker *k, size_t v, const void *arg)
{
    const fdt_variant *a = &k->s->space->variants[v];
    const fdt_variant *b = &k->s->space->variants[*(const size_t *)arg];
    if (a->family != b->family)
        return 0;
    const int differ = (a->bx != b->bx) + (a->by != b->by) + (a->bz != b->bz) + (a->m != b->m) +
                       (a->mz != b->mz) + (a->order != b->order) + (a->lb != b->lb) +
                       (a->nt != b->nt) + (a->map != b->map);
    return differ == 1;
}

static void each_family_best(picker *k)
{
    int seen[MAX_FAMILIES] = {0};
    for (size_t v = 0; v < k->s->space->n; v++) {
        const int f = k->md->family[v];
        if (!seen[f]) {
            seen[f] = 1;
            take(k, best_open(k, in_family, &f));
        }
    }
}

/* The i-th fastest measured variant, or -1. */
static long fastest_measured(const fdt_search *s, size_t i)
{
    long chosen[LOCAL];
    for (size_t j = 0; j <= i; j++) {
        chosen[j] = -1;
        for (size_t q = 0; q < s->nmeasured; q++) {
            const size_t v = s->sequence[q];
            int taken = 0;
            for (size_t t = 0; t < j; t++)
                taken |= chosen[t] == (long)v;
            if (!taken && s->gbps[v] > 0 &&
                (chosen[j] < 0 || s->gbps[v] > s->gbps[chosen[j]]))
                chosen[j] = (long)v;
        }
    }
    return chosen[i];
}

static void local_moves(picker *k)
{
    for (size_t i = 0; i < LOCAL; i++) {
        const long from = fastest_measured(k->s, i);
        if (from < 0)
            return;
        const size_t f = (size_t)from;
        take(k, best_open(k, one_move, &f));
    }
}

/* One open variant chosen by the seed: the model's blind spots get a look now and then. */
static void random_pick(picker *k)
{
    size_t nopen = 0;
    for (size_t v = 0; v < k->s->space->n; v++)
        nopen += is_open(k, v);
    if (nopen == 0)
        return;
    size_t target = (size_t)(fdt_search_random(k->s->seed, k->s->nmeasured, 2) % nopen);
    for (size_t v = 0; v < k->s->space->n; v++)
        if (is_open(k, v) && target-- == 0) {
            take(k, (long)v);
            return;
        }
}

static size_t propose(fdt_search *s, size_t *out, size_t cap)
{
    if (!s->model && !(s->model = model_new(s->space, s->warm, &s->problem)))
        return 0;
    model *md = s->model;
    predict(s, md);
    picker k = {.s = s, .md = md, .out = out, .cap = cap < BATCH ? cap : BATCH};
    if (s->nmeasured == 0) {
        each_family_best(&k);
    } else {
        local_moves(&k);
        random_pick(&k);
    }
    long v;
    while (k.n < k.cap && (v = best_open(&k, NULL, NULL)) >= 0)
        take(&k, v);
    return k.n;
}

const fdt_strategy fdt_strategy_guided = {
    .name = "guided",
    .summary = "a model of the nearest tuned problems, refitted to each result, with local "
               "moves around the fastest",
    .propose = propose,
    .free_model = free_model,
};

long fdt_search_instant(const fdt_search_space *space, const fdt_warm *warm,
                        const fdt_problem *problem, double *expected, size_t *used)
{
    *expected = 0;
    *used = warm->n;
    model *md = model_new(space, warm, problem);
    if (!md || warm->n == 0) {
        free_model(md);
        return -1;
    }
    weighted_means(warm, md->base_weight, space->n, md->pred);
    long best = -1;
    for (size_t v = 0; v < space->n; v++) {
        int known = 0;
        for (size_t p = 0; p < warm->n; p++)
            known |= warm->problems[p].score[v] > 0;
        if (known && (best < 0 || md->pred[v] > md->pred[best]))
            best = (long)v;
    }
    if (best >= 0)
        *expected = md->pred[best];
    free_model(md);
    return best;
}
