/* exhaustive.c - every variant of the space, in the space's order: the reference that the
 * other strategies are measured against, and the choice when the space is small. */
#include <math.h>

#include "search/strategies.h"

/* As many as keep a worker's compile pool busy while a cancel still takes effect soon. */
#define BATCH 64

static size_t propose(fdt_search *s, size_t *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < s->space->n && n < cap && n < BATCH; i++)
        if (isnan(s->gbps[i]))
            out[n++] = i;
    return n;
}

const fdt_strategy fdt_strategy_exhaustive = {
    .name = "exhaustive",
    .propose = propose,
};
