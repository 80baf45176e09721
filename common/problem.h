/* problem.h - what is being tuned, as every part names it: the grid, the precision, the cache
 * state the kernels are timed in, and the text forms the store, the protocol and the
 * command line share. The engine computes problems, the store keys its rows by them, the
 * daemon and libfdtune send them. */
#ifndef FDT_PROBLEM_H
#define FDT_PROBLEM_H

#include <stddef.h>

typedef enum fdt_precision { FDT_FLOAT, FDT_DOUBLE } fdt_precision;

/* The cache state the kernels are timed in, as the solver will run them. */
typedef enum fdt_cache_mode {
    FDT_CACHE_HOT = 0,  /* the same buffers step after step (the default) */
    FDT_CACHE_COLD,     /* buffers not in cache: part of the store's key and the protocol,
                           not measured yet (the runner refuses it) */
    FDT_CACHE_PERSIST,  /* hot, and the partly written sectors at both ends of f's interior
                           rows held in L2 by kernels_src/persist.hip (NVIDIA sm_80+) */
    FDT_CACHE_AUTO      /* the tuner's choice: the leaders timed hot and persist side by side,
                           persist kept only where it wins by more than noise (hot where the
                           device has no persist) */
} fdt_cache_mode;

/* The longest stencil name, NUL included. */
#define FDT_STENCIL_NAME_MAX 24

/* What is being computed: a stencil (tuner/engine/stencil.h names each) of radius R on an
 * nx x ny x nz grid, laid out in memory as the solver lays it out. An empty stencil names
 * none: every part that needs one refuses it.
 *
 * The layout: point (i, j, k) of every field is at base + offset + i + pitch * (j + ny * k)
 * (in points), where base is where the allocator put the buffer (256-byte aligned) and pitch
 * the row pitch (>= nx). Dense rows are pitch 0 (nx) and offset 0, every part's default; the
 * padding between rows and before the first point is never read as data nor written. */
typedef struct fdt_problem {
    char stencil[FDT_STENCIL_NAME_MAX];
    int nx, ny, nz;
    int radius;
    fdt_precision precision;
    fdt_cache_mode cache;
    int pitch;  /* 0: nx; else the row pitch in points, > nx (nx itself is written 0) */
    int offset; /* points from the aligned base to point (0, 0, 0), below FDT_OFFSET_LIMIT */
} fdt_problem;

/* The most points a row pitch may add to nx, and the bytes an offset stays under: an offset
 * of 256 bytes or more is the same alignment as offset - 256 with a wasted start. */
#define FDT_PITCH_PAD_MAX 4096
/* A request's "pitch": "auto" (the solver may pad: the tuner measures the candidates of
 * fdt_layout_candidates and answers the fastest). Only in a request's problem, never in a
 * stored one nor in a kernel's. */
#define FDT_PITCH_AUTO (-1)
#define FDT_OFFSET_BYTES 256

/* Longest variant name, e.g. "zvec:128x16x1:mz32:lb:nt:band1024:w4": the room every record
 * (a result row, a job's best, an answer) keeps for one. */
#define FDT_VARIANT_NAME_MAX 64

const char *fdt_precision_name(fdt_precision p);
int fdt_precision_parse(const char *s, fdt_precision *out);
const char *fdt_cache_mode_name(fdt_cache_mode c);
/* Every mode's name, indexed by fdt_cache_mode, NULL-terminated. */
const char *const *fdt_cache_mode_names(void);
int fdt_cache_mode_parse(const char *s, fdt_cache_mode *out);
size_t fdt_real_size(fdt_precision p);
/* The unit roundoff of p (2^-24, 2^-53): the most one rounding moves a value, relatively. */
double fdt_unit_roundoff(fdt_precision p);
/* The most rounding may move a sum of `terms` terms whose magnitudes add up to magnitude,
 * in unit roundoffs, as any kernel may compute it: each term a weight and a constant, each
 * rounded to the precision, times a field and a coefficient field (three products: five
 * roundings at most), the sum's terms - 1 additions in any order (each moves it by at most
 * one unit roundoff of the magnitudes summed so far). Higham's bound for a sum, to first
 * order: (terms + 4) * magnitude. */
double fdt_rounding_bound(size_t terms, double magnitude);
/* Whether a and b are one problem: every field alike. */
int fdt_problem_same(const fdt_problem *a, const fdt_problem *b);

/* The layout (see fdt_problem). */
int fdt_problem_pitch(const fdt_problem *p);           /* the row pitch: nx where pitch is 0 */
size_t fdt_problem_storage_points(const fdt_problem *p); /* what one field's buffer holds,
                                                           offset and padding included */
int fdt_problem_dense(const fdt_problem *p);           /* pitch nx, offset 0 */
/* Writes a pitch equal to nx as 0, the one form stores and protocols keep. */
void fdt_problem_canonical_layout(fdt_problem *p);
/* The offset limit in points for p's precision: FDT_OFFSET_BYTES / the size of a point. */
int fdt_offset_limit(fdt_precision precision);
/* The layouts "pitch auto" measures for p's shape, dense first: rows padded to whole 32-byte
 * sectors, and also moved so that each row's first interior point starts a sector (only the
 * sector at the row's far end is then partly written). Up to FDT_LAYOUTS_MAX, none twice. */
#define FDT_LAYOUTS_MAX 3
int fdt_layout_candidates(const fdt_problem *p, fdt_problem out[FDT_LAYOUTS_MAX]);

#endif
