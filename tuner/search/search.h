/* search.h - which variants of a space to measure next, learned from what was measured.
 *
 * A strategy never measures. Its caller (the daemon's job, fdtune replay) steps the search
 * (fdt_search_step): it hands in the results it measured, each with what measuring it
 * cost, and gets the variants to measure next. A search proposes in batches; a batch joins
 * the sequence, in the order it was proposed, only once every member of it is measured,
 * and the next batch is a function of the seed, the warm start and the measured set alone.
 * So a job killed with -9 is rebuilt from its stored rows (fdt_search_replay): it proposes
 * exactly the batches an uninterrupted run of the same seed would have.
 *
 * The budgets (evaluations, seconds, patience) are enforced here and nowhere else: a step
 * gives no more variants than they allow, and the search ends with the budget that was
 * spent. What a caller spent outside the search counts too (fdt_search_charge).
 *
 * Lifetime: fdt_search_space_init, fdt_warm_* (optional), fdt_search_init; steps until a
 * step answers 0; fdt_search_free, fdt_warm_free, fdt_search_space_free. The space and the
 * warm start must outlive every search that uses them. */
#ifndef FDT_SEARCH_H
#define FDT_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "engine/variant.h"

/* The variants a search chooses from, in the caller's order, with lookups by name. */
typedef struct fdt_search_space {
    size_t n;
    fdt_variant *variants;
    char (*names)[FDT_VARIANT_NAME_MAX];
    size_t *by_name; /* indices sorted by name */
} fdt_search_space;

/* Copies vs[0..n). 0, or -1 when out of memory. */
int fdt_search_space_init(fdt_search_space *s, const fdt_variant *vs, size_t n);
void fdt_search_space_free(fdt_search_space *s);
/* The index of the named variant, or -1. */
long fdt_search_space_find(const fdt_search_space *s, const char *name);

/* One tuned problem the warm start knows: its speed for each variant of the space, over
 * its own best (1 for its winner, 0 for a variant that failed on it, -1 not measured). */
typedef struct fdt_warm_problem {
    fdt_problem problem;
    float *score;
} fdt_warm_problem;

/* What the store (or a recording) knows of other problems on the same device. */
typedef struct fdt_warm {
    fdt_warm_problem *problems;
    size_t n;
} fdt_warm;

/* Adds problem p from its measured rows (names[i] ran at gbps[i]; 0 for a failure); names
 * outside the space are ignored. 0, or -1 when out of memory. A problem with no row that
 * ran is not added. */
int fdt_warm_add(fdt_warm *w, const fdt_search_space *space, const fdt_problem *p,
                 const char (*names)[FDT_VARIANT_NAME_MAX], const double *gbps, size_t n);
void fdt_warm_free(fdt_warm *w);

/* How far a warm problem is from the problem tuned, in the units of the guided strategy's
 * weights: the distance of the shapes' logarithms, plus a penalty for another precision,
 * another radius and another stencil (weaker hints). Callers use it to pick the nearest
 * few; a problem of another stencil lends only the variants its space shares. */
double fdt_warm_distance(const fdt_problem *target, const fdt_problem *other);

typedef struct fdt_search fdt_search;

typedef struct fdt_strategy {
    const char *name;
    /* Writes the next batch, at most cap indices of variants not measured yet. It may read
     * the search's measured set, warm start, problem and seed, and nothing else, so that
     * the same arguments give the same batch. */
    size_t (*propose)(fdt_search *s, size_t *out, size_t cap);
    void (*free_model)(void *model);
} fdt_strategy;

/* exhaustive, random, guided; NULL if unknown. */
const fdt_strategy *fdt_strategy_find(const char *name);
/* Every strategy's name, NULL-terminated. */
const char *const *fdt_strategy_names(void);

/* The quick job that a missing shape's first tune runs (tune_if_missing): the guided
 * search's first evaluations, whose winner replaces the instant answer at once. */
#define FDT_SEARCH_QUICK_EVALS 24

/* When a search stops besides running out of variants; 0 means no limit. Evaluations and
 * seconds count what the search measured and what was charged to it from outside. */
typedef struct fdt_search_limits {
    long evals;     /* evaluations in all */
    double seconds; /* seconds of measuring in all: the results' costs and the charges */
    long patience;  /* evaluations in a row without a gain of FDT_SEARCH_GAIN over the best */
} fdt_search_limits;

/* What counts as a gain for the patience rule: 0.5% faster than the best so far. */
#define FDT_SEARCH_GAIN 1.005

typedef enum fdt_search_end {
    FDT_SEARCH_GOING = 0,
    FDT_SEARCH_SPACE,    /* every variant is measured */
    FDT_SEARCH_BUDGET,   /* limits.evals reached */
    FDT_SEARCH_PATIENCE, /* limits.patience evaluations without a gain */
    FDT_SEARCH_TIME,     /* limits.seconds spent */
} fdt_search_end;

/* "space", "budget", "patience" or "time" (the names the daemon logs); NULL while going. */
const char *fdt_search_end_name(fdt_search_end end);

struct fdt_search {
    const fdt_strategy *strategy;
    const fdt_search_space *space;
    const fdt_warm *warm;
    fdt_problem problem;
    uint64_t seed;
    fdt_search_limits limits;
    double *gbps;          /* per index: NAN until measured; 0 for a failure */
    unsigned char *queued; /* per index: 1 while in the current batch */
    size_t *sequence;      /* indices of completed batches, in proposal order */
    size_t nmeasured;      /* in the sequence */
    size_t nfed;           /* results taken, the current batch's with them */
    double spent_s;        /* what the results taken cost */
    long charged_evals;    /* spent outside the search (fdt_search_charge) */
    double charged_s;
    size_t *batch, nbatch;
    double best;
    long since_gain;
    fdt_search_end end;
    void *model;           /* the strategy's derived working memory */
};

/* 0, or -1 when out of memory. */
int fdt_search_init(fdt_search *s, const fdt_strategy *strategy, const fdt_search_space *space,
                    const fdt_warm *warm, const fdt_problem *problem, uint64_t seed,
                    fdt_search_limits limits);
void fdt_search_free(fdt_search *s);

/* One measured variant: its index in the space, its speed (0 if it failed), and what
 * measuring it cost, in seconds (its compile and its timing, or the wall time it took). */
typedef struct fdt_search_result {
    size_t index;
    double gbps;
    double cost_s;
} fdt_search_result;

/* The seam every caller drives a search through, the daemon's job (a step each time a
 * result lands, and one when its worker is free) and fdt_search_run alike. Takes results
 * of the variants it gave (in any order; a result for a variant it did not give, or gave
 * and was told already, is charged as spent outside it), then writes the variants to
 * measure next into next: at most cap, at most FDT_SEARCH_BATCH_MAX, and at most what the
 * budgets allow. When the current batch is complete it joins the sequence and the next is
 * proposed. 0: the search is over (s->end says why), or cap was 0, which only takes the
 * results. */
#define FDT_SEARCH_BATCH_MAX 256
size_t fdt_search_step(fdt_search *s, const fdt_search_result *results, size_t nresults,
                       size_t *next, size_t cap);

/* Steps the search until it ends, measuring each variant it gives, in the order given,
 * with measure (which fills r->gbps and r->cost_s). */
void fdt_search_run(fdt_search *s, void (*measure)(void *ctx, fdt_search_result *r),
                    void *ctx);

/* Adds what was spent outside the search to what its budgets count: evaluations it did not
 * take (a resumed job's stored rows, until the rebuild takes them) and seconds no result
 * was fed with (the runs of a job before this one, a task's tail after its last result). */
void fdt_search_charge(fdt_search *s, long evals, double seconds);

/* How many more evaluations the budgets allow: 0 once one is spent (or the search is
 * over), SIZE_MAX with no budget of evaluations. Every step is held to it. */
size_t fdt_search_allowed(const fdt_search *s);
/* Seconds spent: the costs of the results taken and the seconds charged. */
double fdt_search_spent_s(const fdt_search *s);
/* The evaluations the search takes yet, on the mean: at most what is left of the space and
 * of the budget of evaluations (exact for a search that ends by either), and under the
 * patience rule as many as it runs before patience ends it (and its batch is done), if
 * later gains come as often as the search's own so far, falling off as i^-1.5 (search.c's
 * gain model): a search that still gains runs on, one that has settled stops soon. */
size_t fdt_search_expected_left(const fdt_search *s);

/* Rebuilds a search from results measured before (a resumed job's stored rows): takes
 * every variant it gives that lookup knows (answering 1 with *gbps, or 0), batch after
 * batch, and stops at the first batch with a variant lookup does not know (to be measured
 * now) or at the end of the search. The rows were spent before: they come at no cost, and
 * the rebuild sees a batch whole, however few evaluations the budget leaves (the budgets
 * still end the search at a batch's end); each one taken was among the evaluations
 * charged as the caller's rows, if they were charged: it moves into the search and counts
 * once. */
void fdt_search_replay(fdt_search *s, int (*lookup)(void *ctx, size_t index, double *gbps),
                       void *ctx);

/* The instant answer: the variant the guided strategy's model, from the warm start alone,
 * expects to be fastest for problem, with the speed it expects over that problem's best
 * (*expected) and how many warm problems it drew on (*used). -1 when the warm start
 * knows no variant of the space. */
long fdt_search_instant(const fdt_search_space *space, const fdt_warm *warm,
                        const fdt_problem *problem, double *expected, size_t *used);

/* A deterministic stream of 64-bit values for a strategy's random choices. */
uint64_t fdt_search_random(uint64_t seed, uint64_t a, uint64_t b);

#endif
