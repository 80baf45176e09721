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
           a->cache == b->cache && fdt_problem_pitch(a) == fdt_problem_pitch(b) &&
           a->offset == b->offset;
}

int fdt_problem_pitch(const fdt_problem *p)
{
    return p->pitch ? p->pitch : p->nx;
}

size_t fdt_problem_storage_points(const fdt_problem *p)
{
    return (size_t)p->offset + (size_t)fdt_problem_pitch(p) * p->ny * p->nz;
}

int fdt_problem_dense(const fdt_problem *p)
{
    return fdt_problem_pitch(p) == p->nx && p->offset == 0;
}

void fdt_problem_canonical_layout(fdt_problem *p)
{
    if (p->pitch == p->nx)
        p->pitch = 0;
}

int fdt_offset_limit(fdt_precision precision)
{
    return FDT_OFFSET_BYTES / (int)fdt_real_size(precision);
}

/* A 32-byte sector: what L2 and DRAM move at least, and what a partly written one costs a
 * read of (NVIDIA; AMD's caches keep 64- and 128-byte lines, of whole sectors too). */
#define SECTOR_BYTES 32

static void add_layout(fdt_problem out[], int *n, const fdt_problem *p, int pitch, int offset)
{
    fdt_problem c = *p;
    c.pitch = pitch;
    c.offset = offset;
    fdt_problem_canonical_layout(&c);
    for (int i = 0; i < *n; i++)
        if (fdt_problem_same(&out[i], &c))
            return;
    out[(*n)++] = c;
}

int fdt_layout_candidates(const fdt_problem *p, fdt_problem out[FDT_LAYOUTS_MAX])
{
    const int q = SECTOR_BYTES / (int)fdt_real_size(p->precision); /* points a sector */
    const int padded = (p->nx + q - 1) / q * q;
    const int head = (q - p->radius % q) % q; /* point R at a sector's start */
    int n = 0;
    add_layout(out, &n, p, 0, 0);
    add_layout(out, &n, p, padded, 0);
    add_layout(out, &n, p, padded, head);
    return n;
}
