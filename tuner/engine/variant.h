/* variant.h - kernel families, their parameters, and the space of variants to tune.
 *
 * A variant is a family (one kernel template in kernels_src/) plus parameter values; it
 * becomes the family's source compiled with -D defines, launched with a geometry that
 * depends on the grid shape. The space is the product of per-family parameter lists,
 * pruned by constraints of the device and the shape, enumerable and countable. */
#ifndef FDT_VARIANT_H
#define FDT_VARIANT_H

#include <stddef.h>

#include "backends/backend.h"
#include "problem.h"

typedef struct fdt_family fdt_family;

typedef struct fdt_variant {
    const fdt_family *family;
    int bx, by, bz;
    int m;     /* tiled, zroll, xytile: points (rows) per thread in y */
    int mz;    /* zmarch, zvec, zroll, smem, xytile: planes per thread (block) in z */
    int order; /* tiled: 0 = the seed's load order, 1 = ascending addresses */
    int lb, nt, map;
    int band;  /* zvec, tiled: 0, or rows of the grid per y-subdomain (FDT_BAND in common.h) */
    int wpe;   /* 0, or the least waves per EU the AMD compiler must leave room for (FDT_WPE) */
    int bug;   /* broken (test only): which bug */
} fdt_variant;

/* The parameters of a variant besides its family, in the order of its defines and of the
 * enumerator's odometer (the last turns fastest). One table in variant.c, fdt_params(), says
 * of each how it is stored, listed, named and parsed, defined, answered and modelled; the
 * enumerator, the name's printer and parser, the defines, the query's answer, the guided
 * model and docs/kernels.md ("Names", checked by test_variant) all read it. */
typedef enum fdt_param_id {
    FDT_P_BX, FDT_P_BY, FDT_P_BZ, FDT_P_M, FDT_P_MZ, FDT_P_ORDER, FDT_P_LB, FDT_P_NT,
    FDT_P_MAP, FDT_P_BAND, FDT_P_BUG, FDT_P_WPE, FDT_PARAMS
} fdt_param_id;

/* Where a parameter shows in a variant's name. */
typedef enum fdt_param_shows {
    FDT_SHOWS_BLOCK,  /* in the block, BXxBYxBZ, always */
    FDT_SHOWS_CHOSEN, /* wherever its family offers a choice of it, whatever its value */
    FDT_SHOWS_SET     /* wherever it is not 0 */
} fdt_param_shows;

/* How the query's answer gives a parameter in its "params" object. */
typedef enum fdt_param_answer {
    FDT_ANSWER_NONE, /* not at all */
    FDT_ANSWER_INT,
    FDT_ANSWER_BOOL,
    FDT_ANSWER_WORD  /* as the name spells it (order: "seed", "asc") */
} fdt_param_answer;

/* The guided model's view of a parameter: the group of offsets its value joins (1 to
 * FDT_FEATURE_GROUPS; 0: the model ignores the parameter and never moves along it), taken
 * as log2 of the value (sizes) or as it is (flags), shifted left by shift bits (two
 * parameters in one group). */
typedef struct fdt_param_feature {
    int group, log2, shift;
} fdt_param_feature;
#define FDT_FEATURE_GROUPS 10

typedef struct fdt_param {
    const char *name;      /* as the answer's "params" and docs/kernels.md call it */
    size_t at;             /* where fdt_variant keeps it: offsetof(fdt_variant, ...) */
    size_t list;           /* where a family's space lists its values (variant.c's own) */
    const char *define;    /* the -D name the kernels read */
    int define_where_set;  /* 1: defined only where not 0, so other variants' defines stay */
    int (*defined_as)(const fdt_variant *v); /* the define's value, NULL: the parameter's */
    fdt_param_shows shows;
    const char *prefix;    /* in a name, a number's prefix: "mz" of mz32 */
    const char *words[2];  /* or the words of values 0 and 1 (NULL: not spelled), as
                              order's seed and asc, lb's lb */
    int lo, hi;            /* the values a name may give: products of them cannot overflow */
    fdt_param_answer answer;
    fdt_param_feature feature;
} fdt_param;

/* The table, FDT_PARAMS rows indexed by fdt_param_id. */
const fdt_param *fdt_params(void);
int fdt_param_value(const fdt_variant *v, fdt_param_id p);

/* Room for every -D define of a variant. */
#define FDT_DEFINES_MAX 24
#define FDT_DEFINE_LEN 40

typedef struct fdt_defines {
    char text[FDT_DEFINES_MAX][FDT_DEFINE_LEN];
    const char *list[FDT_DEFINES_MAX];
    size_t count;
} fdt_defines;

/* Whose facts choose the value lists: the H100's (NVIDIA: the space as it has always been)
 * or AMD's (docs/kernels.md, "The hip space (AMD)"); auto: the device's vendor's. */
typedef enum fdt_space_profile { FDT_SPACE_AUTO = 0, FDT_SPACE_NVIDIA, FDT_SPACE_AMD }
    fdt_space_profile;

typedef struct fdt_space_filter {
    const char *family;  /* only this family, or NULL for all */
    int test_families;   /* offer test-only families (broken) */
    fdt_space_profile space;
} fdt_space_filter;

/* The largest side and radius the tuner accepts; beyond them sizes overflow int. */
#define FDT_MAX_SIDE 65536
#define FDT_MAX_RADIUS 4
/* The most waves per EU a name may ask for (wpe): GFX10.3 and GFX11 keep 16 (amdgpu_archs.c). */
#define FDT_MAX_WAVES_PER_EU 16

/* NULL when the problem is valid, else why not (radius 1..4, each side >= 2R+1 ...). */
const char *fdt_problem_check(const fdt_problem *p);

const fdt_family *fdt_family_find(const char *name);
const char *fdt_family_name(const fdt_family *f);
/* Whether the family needs block barriers (cannot run on the cpu backend). */
int fdt_family_needs_barriers(const fdt_family *f);
int fdt_family_test_only(const fdt_family *f);
/* Whether it uses NVIDIA's own mechanisms (ring: cp.async), so the hip backend never runs it. */
int fdt_family_nvidia_only(const fdt_family *f);
/* Whether the family walks chunks of mz planes in z (grid z counts chunks, not blocks). */
int fdt_family_z_chunks(const fdt_family *f);
/* NULL-terminated list of every family, test-only ones included. */
const fdt_family *const *fdt_families(void);

/* The profile the filter's space resolves to on dev: AMD where dev->vendor is "AMD". */
fdt_space_profile fdt_space_profile_for(const fdt_space_filter *filter,
                                        const fdt_device_info *dev);
const char *fdt_space_profile_name(fdt_space_profile s);
/* "auto", "nvidia" or "amd"; 0, or -1 for anything else. */
int fdt_space_profile_parse(const char *s, fdt_space_profile *out);

/* Whether the filter selects family f (its name, or every family but test-only ones). */
int fdt_family_selected(const fdt_family *f, const fdt_space_filter *filter);

/* Writes the variants of the space for this problem and device into out (at most cap)
 * and returns how many there are in all; out may be NULL to count. */
size_t fdt_space_enumerate(const fdt_problem *p, const fdt_device_info *dev,
                           const fdt_space_filter *filter, fdt_variant *out, size_t cap);

/* The variants to tune: the whole space, or with 0 < subset < its size, that many spread
 * evenly over it (a quick look). *out is malloc'd (NULL when nothing fits); returns the
 * count, or -1 when out of memory. */
long fdt_space_sample(const fdt_problem *p, const fdt_device_info *dev,
                      const fdt_space_filter *filter, size_t subset, fdt_variant **out);

/* Why the variant cannot run on this device and shape, or NULL if it can. What only
 * narrows the space (a chunk longer than the grid needs, a profile's own prunes) is left to
 * fdt_space_enumerate: such a variant still runs. */
const char *fdt_variant_check(const fdt_variant *v, const fdt_problem *p,
                              const fdt_device_info *dev);

/* Why the variant's block cannot launch its compiled kernel (the registers a thread takes
 * leave room for fewer threads), or NULL if it can or the backend cannot tell. */
const char *fdt_variant_check_compiled(const fdt_variant *v, const fdt_resources *r);

/* The plain kernel of p's stencil (the seeds' kernel 1 for the Laplacian; snaive for a
 * spec) with block 256x1x1: the baseline of every speedup, and what every variant is
 * checked against. p's stencil must exist (fdt_problem_check). */
fdt_variant fdt_variant_kernel1(const fdt_problem *p);

void fdt_variant_name(const fdt_variant *v, char *buf, size_t len);
/* Parses a name written by fdt_variant_name; returns 0 or -1 with a message in err. */
int fdt_variant_parse(const char *name, fdt_variant *v, char *err, size_t errlen);

void fdt_variant_defines(const fdt_variant *v, const fdt_problem *p, fdt_defines *out);
/* Points in x one thread computes: 1, or a 16-byte vector's worth. */
int fdt_variant_points_x(const fdt_variant *v, const fdt_problem *p);
void fdt_variant_geometry(const fdt_variant *v, const fdt_problem *p, fdt_dim3 *grid,
                          fdt_dim3 *block);
/* Shared memory a block of the variant's kernel uses, in bytes. */
size_t fdt_variant_shared_bytes(const fdt_variant *v, const fdt_problem *p);
/* What of it is dynamic, which a launch must give: the ring's (whose module says so too, in
 * fdt_dynamic_shared, which the cuda backend launches with); 0 where it is static. */
size_t fdt_variant_dynamic_shared_bytes(const fdt_variant *v, const fdt_problem *p);

/* The family's complete source: common.h followed by the family's template. Owned by the
 * family; valid for the life of the program. */
const char *fdt_family_source(const fdt_family *f);
/* Whether the family is generated from a user's spec (its source needs the spec's macros
 * before it): it serves spec stencils alone, the others the built-ins alone. */
int fdt_family_serves_specs(const fdt_family *f);
/* What v compiles for p: its family's source, after the macros of p's stencil when it is a
 * spec's (fdt_stencil_source). Valid for the life of the program. */
const char *fdt_variant_source(const fdt_variant *v, const fdt_problem *p);
/* The verification kernel's source (kernels_src/compare.hip after common.h). */
const char *fdt_compare_source(void);
/* Cache mode persist's kernel (kernels_src/persist.hip after common.h); NVIDIA only. */
const char *fdt_persist_source(void);
/* Its launch for problem p: one thread per row of f. */
void fdt_persist_geometry(const fdt_problem *p, fdt_dim3 *grid, fdt_dim3 *block);

/* The interior copy (kernels_src/copy.hip after common.h): the second ceiling, timed
 * beside the device copy in fdtune bench. FDT_INTERIOR_COPIES shapes of it are timed; */
#define FDT_INTERIOR_COPIES 4
const char *fdt_interior_copy_source(void);
/* shape which's defines and launch for problem p (entry fdt_interior_copy). */
void fdt_interior_copy_kernel(int which, const fdt_problem *p, fdt_defines *d, fdt_dim3 *grid,
                              fdt_dim3 *block);

#endif
