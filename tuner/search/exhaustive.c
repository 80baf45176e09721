/* exhaustive.c - every variant of the space, in the space's order: the reference that the
 * other strategies are measured against, and the choice when the space is small. */
#include <math.h>

#include "search/strategies.h"

/* As many as keep a worker's compile pool ahead of its device (a batch's first compiles
 * leave the device idle, its last ones the compilers) while a cancel still takes effect
 * within seconds: 64 left a 512^3 tune on an H100 waiting for its compilers 16 s of 85. */
#define BATCH 256

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
