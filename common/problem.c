/* problem.c - the text forms of a problem's precision and cache mode; see problem.h. */
#include "problem.h"

#include <string.h>

const char *fdt_precision_name(fdt_precision p)
{
    return p == FDT_FLOAT ? "float" : "double";
}

int fdt_precision_parse(const char *s, fdt_precision *out)
{
    if (strcmp(s, "float") == 0)
        *out = FDT_FLOAT;
    else if (strcmp(s, "double") == 0)
        *out = FDT_DOUBLE;
    else
        return -1;
    return 0;
}

static const char *const cache_modes[] = {[FDT_CACHE_HOT] = "hot", [FDT_CACHE_COLD] = "cold",
                                          [FDT_CACHE_PERSIST] = "persist",
                                          [FDT_CACHE_AUTO] = "auto", NULL};

const char *fdt_cache_mode_name(fdt_cache_mode c)
{
    return cache_modes[c];
}

const char *const *fdt_cache_mode_names(void)
{
    return cache_modes;
}

int fdt_cache_mode_parse(const char *s, fdt_cache_mode *out)
{
    for (size_t c = 0; cache_modes[c]; c++)
        if (strcmp(s, cache_modes[c]) == 0) {
            *out = (fdt_cache_mode)c;
            return 0;
        }
    return -1;
}

size_t fdt_real_size(fdt_precision p)
{
    return p == FDT_FLOAT ? sizeof(float) : sizeof(double);
}

double fdt_unit_roundoff(fdt_precision p)
{
    return p == FDT_FLOAT ? 0x1p-24 : 0x1p-53;
}

double fdt_rounding_bound(size_t terms, double magnitude)
{
    return (double)(terms + 4) * magnitude;
}

int fdt_problem_same(const fdt_problem *a, const fdt_problem *b)
{
    return strcmp(a->stencil, b->stencil) == 0 && a->nx == b->nx && a->ny == b->ny &&
           a->nz == b->nz && a->radius == b->radius && a->precision == b->precision &&
           a->cache == b->cache;
}
