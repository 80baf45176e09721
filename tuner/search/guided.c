/* guided.c - a model-based search warm-started from the tuned problems nearest to this one.
 *
 * The model predicts a variant's speed on this problem as a weighted mean of its speed on
 * the warm problems (each over its own best). A warm problem's weight starts from its
 * distance to this one and falls as the results measured here disagree with its profile,
 * so the problems that behave like this one take over. Offsets learned from the residuals,
 * one per family and one per value of each parameter within a family, move whole families
 * and corners of them where this problem differs from all of its neighbours (a shape whose
 * best family wins nowhere else). Each batch holds one-parameter moves (to a value its
 * family has not shown here, else along the parameter tried least from where it starts):
 * TOP_MOVES from the fastest variant and its twin in another family, one from the fastest
 * of each of the next RIVALS families (where the model is wrong, the neighbourhood of a
 * good variant is still good, and which family wins is left to measurement); then one
 * seeded random pick, and the model's best predictions. The first batch holds each
 * family's best prediction, so that no family is judged by its neighbours' results alone.
 *
 * The constants were chosen on recorded H100 spaces with fdtune replay, leaving each
 * problem out of its own warm start, and checked on spaces of another precision and
 * radius; TOP_MOVES on the 2052-variant space, where y-bands win only on 1024-wide planes
 * (bench/results/README.md). The priors hold no vendor's facts: the warm problems are
 * those tuned on the same device (daemon/job_search.c), and a cold start ranks every
 * variant alike, so its first batch is one variant of each family, picked by the seed, on
 * AMD as on NVIDIA. What is the H100's is only the constants above: no AMD replay exists to
 * check them on. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/strategies.h"

#define TAU 0.7      /* distance at which a warm problem's weight falls by e */
#define GAMMA 60.0   /* how fast disagreement with measured results lowers a weight */
#define LAMBDA 2.0   /* results an offset needs before it counts half */
#define SWEEPS 3     /* backfitting passes over the offsets' groups */
#define BATCH 8
#define FAMILY_SLACK 0.7 /* a rival family within 30% of the best keeps a local search */
#define RIVALS 2
#define TOP_MOVES 3 /* one-parameter moves from the fastest variant per batch */
#define FLOOR 1e-3   /* the relative speed a failed variant counts as */
#define MAX_FAMILIES 16

/* The offsets learned from this problem's results: one per family, and one per value of
 * each parameter's group within a family (mz = 32 of zmarch, nt of zvec...), so that the
 * model learns which corner of a family this problem likes even where no neighbour does.
 * The parameters' groups are the table's (fdt_params(), feature), 1 on; 0 is the family's. */
enum { G_FAMILY, GROUPS = 1 + FDT_FEATURE_GROUPS };
#define SLOTS 16 /* values a parameter takes, by log2 (sizes) or as is (flags) */
#define FEATURES (MAX_FAMILIES * GROUPS * SLOTS)

typedef struct model {
    double *base_weight; /* per warm problem: from its distance alone */
    double *weight;      /* per warm problem: after this problem's results */
    double *prior;       /* per variant: log of the warm problems' weighted mean */
    double *pred;        /* per variant: predicted log speed, up to a constant */
    int *family;         /* per variant: the index of its family in fdt_families() */
    int (*feature)[GROUPS]; /* per variant: its offset in each group */
    double offset[FEATURES];
} model;

static void free_model(void *m)
{
    model *md = m;
    if (!md)
        return;
    free(md->base_weight);
    free(md->weight);
    free(md->prior);
    free(md->pred);
    free(md->family);
    free(md->feature);
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

static int slot(int value)
{
    int log2v = 0;
    while (value > 1 && log2v < SLOTS - 1) {
        value >>= 1;
        log2v++;
    }
    return log2v;
}

/* Two parameters may share a group: launch bounds and waves per EU (AMD's wpe, the second
 * argument of its launch bounds) together set a thread's registers. Where wpe is unset, as
 * everywhere in the NVIDIA space, the group's value is lb's alone. */
static void features_of(const fdt_variant *v, int family, int *out)
{
    int values[GROUPS] = {0};
    for (int p = 0; p < FDT_PARAMS; p++) {
        const fdt_param_feature f = fdt_params()[p].feature;
        const int value = fdt_param_value(v, p);
        if (f.group)
            values[f.group] |= (f.log2 ? slot(value) : value) << f.shift;
    }
    for (int g = 0; g < GROUPS; g++)
        out[g] = (family * GROUPS + g) * SLOTS + (values[g] & (SLOTS - 1));
}

static model *model_new(const fdt_search_space *space, const fdt_warm *warm,
                        const fdt_problem *problem)
{
    model *md = calloc(1, sizeof *md);
    const size_t nw = warm->n ? warm->n : 1, nv = space->n ? space->n : 1;
    if (!md || !(md->base_weight = malloc(nw * sizeof(double))) ||
        !(md->weight = malloc(nw * sizeof(double))) || !(md->pred = malloc(nv * sizeof(double))) ||
        !(md->prior = malloc(nv * sizeof(double))) || !(md->family = malloc(nv * sizeof(int))) ||
        !(md->feature = malloc(nv * sizeof *md->feature))) {
        free_model(md);
        return NULL;
    }
    for (size_t p = 0; p < warm->n; p++)
        md->base_weight[p] = exp(-fdt_warm_distance(problem, &warm->problems[p].problem) / TAU);
    for (size_t v = 0; v < space->n; v++) {
        md->family[v] = family_index(space->variants[v].family);
        features_of(&space->variants[v], md->family[v], md->feature[v]);
    }
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

/* The offsets, fitted to the residuals of the measured variants by backfitting: each group
 * in turn takes the mean residual the other groups leave, shrunk toward 0 by LAMBDA. */
static void fit_offsets(const fdt_search *s, model *md, const double *resid)
{
    double sum[FEATURES];
    int count[FEATURES];
    memset(md->offset, 0, sizeof md->offset);
    for (int sweep = 0; sweep < SWEEPS; sweep++)
        for (int g = 0; g < GROUPS; g++) {
            memset(sum, 0, sizeof sum);
            memset(count, 0, sizeof count);
            for (size_t k = 0; k < s->nmeasured; k++) {
                const size_t v = s->sequence[k];
                if (s->gbps[v] <= 0)
                    continue;
                double r = resid[k];
                for (int h = 0; h < GROUPS; h++)
                    if (h != g)
                        r -= md->offset[md->feature[v][h]];
                sum[md->feature[v][g]] += r;
                count[md->feature[v][g]]++;
            }
            for (size_t v = 0; v < s->space->n; v++) {
                const int f = md->feature[v][g];
                md->offset[f] = sum[f] / (count[f] + LAMBDA);
            }
        }
}

/* pred[v]: the log of the weighted mean, shifted by the offsets the measured results ask
 * for. */
static void predict(fdt_search *s, model *md)
{
    const fdt_warm *warm = s->warm;
    const size_t nv = s->space->n;
    for (size_t p = 0; p < warm->n; p++)
        md->weight[p] = fitted_weight(s, &warm->problems[p], md->base_weight[p]);
    weighted_means(warm, md->weight, nv, md->prior);
    for (size_t v = 0; v < nv; v++)
        md->pred[v] = md->prior[v] = log(md->prior[v]);
    double mean = 0;
    size_t m = 0;
    for (size_t k = 0; k < s->nmeasured; k++) {
        const size_t v = s->sequence[k];
        if (s->gbps[v] > 0) {
            mean += log(s->gbps[v]) - md->prior[v];
            m++;
        }
    }
    if (m == 0)
        return;
    mean /= m;
    double *resid = malloc(s->nmeasured * sizeof *resid);
    if (!resid)
        return; /* the prior alone still ranks */
    for (size_t k = 0; k < s->nmeasured; k++) {
        const size_t v = s->sequence[k];
        resid[k] = s->gbps[v] > 0 ? log(s->gbps[v]) - md->prior[v] - mean : 0;
    }
    fit_offsets(s, md, resid);
    free(resid);
    for (size_t v = 0; v < nv; v++)
        for (int g = 0; g < GROUPS; g++)
            md->pred[v] += md->offset[md->feature[v][g]];
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
    for (size_t v = 0; v < k->s->space->n; v++) {
        if (!is_open(k, v) || (accept && !accept(k, v, arg)))
            continue;
        const double rv = rank(k, v);
        if (rv > r) {
            r = rv;
            best = (long)v;
        }
    }
    return best;
}

static int in_family(const picker *k, size_t v, const void *arg)
{
    return k->md->family[v] == *(const int *)arg;
}

/* Whether the model sees parameter p, and so moves along it (not broken's bug). */
static int modelled(int p)
{
    return fdt_params()[p].feature.group != 0;
}

/* The modelled parameter in which a and b, of one family, differ, if they differ in exactly
 * one; else -1. */
static int moved_parameter(const fdt_variant *a, const fdt_variant *b)
{
    if (a->family != b->family)
        return -1;
    int moved = -1;
    for (int p = 0; p < FDT_PARAMS; p++)
        if (modelled(p) && fdt_param_value(a, p) != fdt_param_value(b, p)) {
            if (moved >= 0)
                return -1;
            moved = p;
        }
    return moved;
}

/* The i-th of the variants measured, then of those already in this batch. */
static size_t seen_variant(const picker *k, size_t i)
{
    return i < k->s->nmeasured ? k->s->sequence[i] : k->out[i - k->s->nmeasured];
}

/* Whether no variant seen of v's family has v's value of parameter p. */
static int novel(const picker *k, size_t v, int p)
{
    const fdt_variant *variants = k->s->space->variants, *a = &variants[v];
    for (size_t i = 0; i < k->s->nmeasured + k->n; i++) {
        const fdt_variant *b = &variants[seen_variant(k, i)];
        if (b->family == a->family && fdt_param_value(b, p) == fdt_param_value(a, p))
            return 0;
    }
    return 1;
}

typedef struct move {
    size_t from;
    int parameter;
} move;

/* Whether v is one move from m->from, along m->parameter. */
static int one_move(const picker *k, size_t v, const void *arg)
{
    const move *m = arg;
    return moved_parameter(&k->s->space->variants[v], &k->s->space->variants[m->from]) ==
           m->parameter;
}

static int novel_move(const picker *k, size_t v, const void *arg)
{
    const move *m = arg;
    return one_move(k, v, arg) && novel(k, v, m->parameter);
}

/* A move sweep_move may take: the variant, whether its new value is novel, and how often
 * its parameter has been tried from where it starts. */
typedef struct candidate {
    long v;
    int novel, tried;
} candidate;

/* Whether a comes before b: novel first, then the parameter tried less, then the move the
 * model ranks higher. */
static int comes_before(const picker *k, candidate a, candidate b)
{
    if (a.novel != b.novel)
        return a.novel > b.novel;
    if (a.tried != b.tried)
        return a.tried < b.tried;
    return rank(k, (size_t)a.v) > rank(k, (size_t)b.v);
}

/* The best open one-parameter move from `from`: to a value of a parameter that no variant
 * of its family seen here has, if there is one, else along the parameter least tried from
 * it (by the variants seen that are one move from it); ties go to the move the model ranks
 * higher. A parameter whose effect here differs from the warm problems' (y-bands on planes
 * larger than any of theirs) gets a look within a few batches, and each of its values, however
 * low the model ranks them. */
static long sweep_move(const picker *k, size_t from)
{
    int tried[FDT_PARAMS] = {0};
    const fdt_variant *variants = k->s->space->variants;
    for (size_t q = 0; q < k->s->nmeasured + k->n; q++) {
        const int p = moved_parameter(&variants[seen_variant(k, q)], &variants[from]);
        if (p >= 0)
            tried[p]++;
    }
    candidate best = {.v = -1};
    for (int p = 0; p < FDT_PARAMS; p++) {
        if (!modelled(p))
            continue;
        candidate c = {.v = best_open(k, novel_move, &(move){from, p}), .tried = tried[p]};
        c.novel = c.v >= 0;
        if (c.v < 0)
            c.v = best_open(k, one_move, &(move){from, p});
        if (c.v >= 0 && (best.v < 0 || comes_before(k, c, best)))
            best = c;
    }
    return best.v;
}

/* Whether v is of another family than *from with every modelled parameter alike: the
 * spec families (and the Laplacian's z-marching ones) share block shapes, chunks and
 * options, so a setting that wins in one is worth a look in its twins. */
static int twin(const picker *k, size_t v, const void *arg)
{
    const fdt_variant *a = &k->s->space->variants[v];
    const fdt_variant *b = &k->s->space->variants[*(const size_t *)arg];
    if (a->family == b->family)
        return 0;
    for (int p = 0; p < FDT_PARAMS; p++)
        if (modelled(p) && fdt_param_value(a, p) != fdt_param_value(b, p))
            return 0;
    return 1;
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

/* The fastest measured variant of family f (any family: f < 0), or -1. */
static long fastest_of(const picker *k, int f)
{
    long best = -1;
    for (size_t q = 0; q < k->s->nmeasured; q++) {
        const size_t v = k->s->sequence[q];
        if (k->s->gbps[v] > 0 && (f < 0 || k->md->family[v] == f) &&
            (best < 0 || k->s->gbps[v] > k->s->gbps[best]))
            best = (long)v;
    }
    return best;
}

/* TOP_MOVES one-parameter moves from the fastest variant, its twin (twin()), and one from
 * the fastest of each of the RIVALS families that come next (within FAMILY_SLACK of it),
 * each a sweep_move: the model ranks each neighbourhood, but which family wins is left to
 * measurement, not to the neighbours. */
static void local_moves(picker *k)
{
    const long top = fastest_of(k, -1);
    if (top < 0)
        return;
    for (int i = 0; i < TOP_MOVES; i++)
        take(k, sweep_move(k, (size_t)top));
    const size_t from = (size_t)top;
    take(k, best_open(k, twin, &from));
    int used[MAX_FAMILIES] = {0};
    used[k->md->family[top]] = 1;
    for (int r = 0; r < RIVALS; r++) {
        long rival = -1;
        for (int f = 0; f < MAX_FAMILIES; f++) {
            const long from = used[f] ? -1 : fastest_of(k, f);
            if (from >= 0 && (rival < 0 || k->s->gbps[from] > k->s->gbps[rival]))
                rival = from;
        }
        if (rival < 0 || k->s->gbps[rival] < FAMILY_SLACK * k->s->gbps[top])
            return;
        used[k->md->family[rival]] = 1;
        take(k, sweep_move(k, (size_t)rival));
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
