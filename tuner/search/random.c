/* random.c - the space in a seeded random order: the baseline a model-based strategy must
 * beat, at equal budgets, for it to be worth its model. */
#include <math.h>
#include <stdlib.h>

#include "search/strategies.h"

#define BATCH 16

/* The seed's permutation of the space (Fisher-Yates), derived on first use. */
static size_t *permutation(fdt_search *s)
{
    if (s->model)
        return s->model;
    size_t *p = malloc((s->space->n ? s->space->n : 1) * sizeof *p);
    if (!p)
        return NULL;
    for (size_t i = 0; i < s->space->n; i++)
        p[i] = i;
    for (size_t i = s->space->n; i > 1; i--) {
        const size_t j = (size_t)(fdt_search_random(s->seed, i, 0) % i);
        const size_t t = p[i - 1];
        p[i - 1] = p[j];
        p[j] = t;
    }
    s->model = p;
    return p;
}

static size_t propose(fdt_search *s, size_t *out, size_t cap)
{
    const size_t *p = permutation(s);
    size_t n = 0;
    for (size_t i = 0; p && i < s->space->n && n < cap && n < BATCH; i++)
        if (isnan(s->gbps[p[i]]))
            out[n++] = p[i];
    return n;
}

const fdt_strategy fdt_strategy_random = {
    .name = "random",
    .propose = propose,
    .free_model = free,
};
