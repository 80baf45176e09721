/* search.h - which variants of a space to measure next, learned from what was measured.
 *
 * A strategy never measures. Its caller (the daemon's scheduler, fdtune replay) asks for
 * the pending variants, measures them in any order, feeds each result back, and asks again.
 * A search proposes in batches; a batch joins the sequence, in the order it was proposed,
 * only once every member of it is measured, and the next batch is a function of the seed,
 * the warm start and the measured set alone. So a job killed with -9 is rebuilt from its
 * stored rows by asking and feeding again (fdt_search_replay): it proposes exactly the
 * batches an uninterrupted run of the same seed would have.
 *
 * Lifetime: fdt_search_space_init, fdt_warm_* (optional), fdt_search_init; pending/feed
 * until pending answers 0; fdt_search_free, fdt_warm_free, fdt_search_space_free. The
 * space and the warm start must outlive every search that uses them. */
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
 * weights: the distance of the shapes' logarithms, plus a penalty for another precision
 * and another radius (weaker hints). Callers use it to pick the nearest few. */
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

/* When a search stops besides running out of variants; 0 means no limit. */
typedef struct fdt_search_limits {
    long evals;    /* evaluations in all */
    long patience; /* evaluations in a row without a gain of FDT_SEARCH_GAIN over the best */
} fdt_search_limits;

/* What counts as a gain for the patience rule: 0.5% faster than the best so far. */
#define FDT_SEARCH_GAIN 1.005

typedef enum fdt_search_end {
    FDT_SEARCH_GOING = 0,
    FDT_SEARCH_SPACE,    /* every variant is measured */
    FDT_SEARCH_BUDGET,   /* limits.evals reached */
    FDT_SEARCH_PATIENCE, /* limits.patience evaluations without a gain */
} fdt_search_end;

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
    size_t nmeasured;
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

/* The variants of the current batch not measured yet, at most cap of them (a batch holds
 * at most FDT_SEARCH_BATCH_MAX). When the batch is complete it joins the sequence and the
 * next is proposed. 0: the search is over (s->end says why), or cap was 0, which changes
 * nothing. */
#define FDT_SEARCH_BATCH_MAX 256
size_t fdt_search_pending(fdt_search *s, size_t *out, size_t cap);
/* The measured speed of a pending variant (0 if it failed). -1 if index is not pending. */
int fdt_search_feed(fdt_search *s, size_t index, double gbps);

/* Rebuilds a search from results measured before (a resumed job's stored rows): feeds
 * every pending variant that lookup knows, batch after batch, and stops at the first batch
 * with a variant it does not know (to be measured now) or at the end of the search.
 * lookup answers 1 with *gbps, or 0. */
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
