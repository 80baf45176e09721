/* variant.c - the parameters table, the families table, the parameter lists that span the
 * space, the constraints that prune it, and how a variant becomes defines, a name and a
 * launch geometry. */
#include "engine/variant.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/stencil.h"

/* Kernel sources, common.h prepended, embedded at build time (see Makefile). */
extern const char fdt_kernel_source_naive[], fdt_kernel_source_tiled[],
    fdt_kernel_source_zmarch[], fdt_kernel_source_zvec[], fdt_kernel_source_zroll[],
    fdt_kernel_source_xytile[], fdt_kernel_source_smem[], fdt_kernel_source_broken[],
    fdt_kernel_source_snaive[], fdt_kernel_source_smarch[], fdt_kernel_source_szwin[],
    fdt_kernel_source_svec[], fdt_kernel_source_stile[],
    fdt_kernel_source_hazard[], fdt_kernel_source_compare[], fdt_kernel_source_persist[],
    fdt_kernel_source_copy[], fdt_kernel_source_ring[];

/* Parameter lists; -1 terminates each. */
typedef struct value_list {
    int v[8];
} value_list;

/* What a family keeps in shared memory: nothing, a queue of 2R+1 plane tiles (smem), or two
 * plane tiles that alternate (xytile); a tile is the block's xy tile with its R-wide halo,
 * in x rounded up to whole vectors where a thread owns a vector. */
/* SHARED_SPEC: a user's spec's rings of tiles, sized by its taps (engine/spec.h's hold).
 * SHARED_RING: R + 1 + RING_AHEAD tiles in dynamic shared memory (ring), filled by
 * asynchronous copies RING_AHEAD planes ahead: over the 48 KB a static array may take on
 * NVIDIA, so only the cuda backend (which opts in to more) and the cpu backend launch it. */
typedef enum shared_tiles {
    SHARED_NONE, SHARED_QUEUE, SHARED_PAIR, SHARED_SPEC, SHARED_RING
} shared_tiles;
#define RING_AHEAD 2 /* one plane ahead and three were slower (bench/r4_ring.cu) */

/* The points a thread owns in a row: one, or one 16-byte vector, 2 doubles or 4 floats
 * (zvec, zroll, xytile). */
typedef enum x_share { X_POINT, X_VECTOR } x_share;

/* The value lists one profile offers for a family, and the prunes of that profile alone. */
typedef struct family_space {
    value_list bx, by, bz, m, mz, order, lb, nt, map, band, wpe, bug;
    int whole_waves; /* blocks of whole wavefronts (warps) only */
    int max_windows; /* 0, or the most z-window values, m x (2R+1), a thread may hold */
} family_space;

/* A band's define counts block rows, the kernels' unit; the name counts grid rows. */
static int band_in_block_rows(const fdt_variant *v)
{
    return v->band / (v->by * v->m);
}

/* Where a parameter is kept in fdt_variant and listed in family_space. */
#define STORED(field) offsetof(fdt_variant, field), offsetof(family_space, field)
#define NO_WORDS {NULL, NULL}

/* Every parameter of a variant, in the order of the defines and the odometer; a name shows
 * first the chosen ones, then those set, each group in this order (docs/kernels.md, "Names").
 * Columns: the name the answer and docs use; where it is stored and listed; its define,
 * whether only where set, and its value when not the parameter's; where the name shows it;
 * its prefix in a name, or its words; the values a name may give; how the query's answer
 * gives it; the guided model's group, log2 or as is, and shift (fdt_param_feature). */
static const fdt_param params[FDT_PARAMS] = {
    [FDT_P_BX] = {"bx", STORED(bx), "FDT_BX", 0, NULL, FDT_SHOWS_BLOCK, NULL, NO_WORDS,
                  1, 1024, FDT_ANSWER_INT, {1, 1, 0}},
    [FDT_P_BY] = {"by", STORED(by), "FDT_BY", 0, NULL, FDT_SHOWS_BLOCK, NULL, NO_WORDS,
                  1, 1024, FDT_ANSWER_INT, {2, 1, 0}},
    [FDT_P_BZ] = {"bz", STORED(bz), "FDT_BZ", 0, NULL, FDT_SHOWS_BLOCK, NULL, NO_WORDS,
                  1, 1024, FDT_ANSWER_INT, {3, 1, 0}},
    [FDT_P_M] = {"m", STORED(m), "FDT_M", 0, NULL, FDT_SHOWS_CHOSEN, "m", NO_WORDS,
                 1, 1024, FDT_ANSWER_INT, {4, 1, 0}},
    [FDT_P_MZ] = {"mz", STORED(mz), "FDT_MZ", 0, NULL, FDT_SHOWS_CHOSEN, "mz", NO_WORDS,
                  1, 1024, FDT_ANSWER_INT, {5, 1, 0}},
    [FDT_P_ORDER] = {"order", STORED(order), "FDT_ORDER", 0, NULL, FDT_SHOWS_CHOSEN, NULL,
                     {"seed", "asc"}, 0, 1, FDT_ANSWER_WORD, {6, 0, 0}},
    [FDT_P_LB] = {"lb", STORED(lb), "FDT_LB", 0, NULL, FDT_SHOWS_SET, NULL, {NULL, "lb"},
                  0, 1, FDT_ANSWER_BOOL, {7, 0, 0}},
    [FDT_P_NT] = {"nt", STORED(nt), "FDT_NT", 0, NULL, FDT_SHOWS_SET, NULL, {NULL, "nt"},
                  0, 1, FDT_ANSWER_BOOL, {8, 0, 0}},
    [FDT_P_MAP] = {"map", STORED(map), "FDT_MAP", 0, NULL, FDT_SHOWS_SET, NULL, {NULL, "map"},
                   0, 1, FDT_ANSWER_BOOL, {9, 0, 0}},
    [FDT_P_BAND] = {"band", STORED(band), "FDT_BAND", 0, band_in_block_rows, FDT_SHOWS_SET,
                    "band", NO_WORDS, 1, FDT_MAX_SIDE, FDT_ANSWER_INT, {10, 1, 0}},
    [FDT_P_BUG] = {"bug", STORED(bug), "FDT_BUG", 0, NULL, FDT_SHOWS_CHOSEN, "bug", NO_WORDS,
                   0, 9, FDT_ANSWER_NONE, {0, 0, 0}},
    /* waves per EU join launch bounds' group: together they set a thread's registers */
    [FDT_P_WPE] = {"wpe", STORED(wpe), "FDT_WPE", 1, NULL, FDT_SHOWS_SET, "w", NO_WORDS,
                   1, FDT_MAX_WAVES_PER_EU, FDT_ANSWER_NONE, {7, 1, 1}},
};

const fdt_param *fdt_params(void)
{
    return params;
}

int fdt_param_value(const fdt_variant *v, fdt_param_id p)
{
    return *(const int *)((const char *)v + params[p].at);
}

static void set_param(fdt_variant *v, fdt_param_id p, int value)
{
    *(int *)((char *)v + params[p].at) = value;
}

/* The values family space sp lists for parameter p. */
static const value_list *param_list(const family_space *sp, fdt_param_id p)
{
    return (const value_list *)((const char *)sp + params[p].list);
}

struct fdt_family {
    const char *name;
    const char *source;
    shared_tiles shared; /* anything but none needs block barriers */
    int z_chunks;    /* walks chunks of mz planes in z instead of taking blocks in z */
    x_share x;
    int test_only;
    int spec;        /* generated from a user's spec: serves spec stencils alone */
    int hazard;      /* test only: FDT_HAZARD, what its variant with 64-wide blocks does */
    int nvidia_only; /* uses NVIDIA's own mechanisms: never in the hip backend's space */
    family_space nvidia; /* chosen on the H100 and H200 (bench/results/) */
    family_space amd;    /* from AMD's published facts (docs/kernels.md); a family without
                            AMD lists (the test-only ones) offers its NVIDIA lists there,
                            unless it is NVIDIA only */
    int max_threads; /* a cap of the family's own, under the device limit */
};

/* Macros, not const objects: C wants constant expressions in a static table's initializer
 * (gcc lets objects pass, clang does not). */
#define OFF {{0, -1}}
#define BOTH {{0, 1, -1}}
#define ONE {{1, -1}}
/* A band value that stands for the rows whose planes in flight fill 1/d of the device's L2,
 * resolved per variant by band_rows(); a list's shares go from the smallest up. */
#define L2_SHARE(d) (-100 - (d))
#define L2_BANDS {{0, L2_SHARE(4), L2_SHARE(2), L2_SHARE(1), -1}}
/* The waves-per-EU values the AMD profile offers: unset (the compiler's default, 1) and the
 * two that cap a thread at a half and a quarter of the VGPRs (docs/kernels.md). */
#define WAVES {{0, 2, 4, -1}}

/* NVIDIA: the lists are chosen so that an exhaustive search of one shape stays near two
 * thousand variants: block shapes known to matter, m and mz in powers of two up to where
 * registers or planes run out.
 *
 * AMD (docs/kernels.md, "The hip space (AMD)", has each choice's source): launch bounds
 * always, since without them the compiler assumes 1024-thread blocks and spills (90 of the
 * 97 gfx906 code objects with scratch in bench/results/hip_resources_gfx90a_gfx906.tsv have
 * no lb); nontemporal stores in every family (AMD measured +19% from them alone, Laplacian
 * part 3), and both ways in naive, the baseline they were measured on; blocks of whole
 * 64-wide wavefronts; z-walks of 32 to 256 planes, since a z-window's halo planes do not
 * survive in a 4 or 8 MiB L2 between short chunks; y-bands sized in bytes against the L2
 * (Laplacian part 4's subdomains, 555 -> 1176 GB/s at 1024^3 on an MI250X GCD), in tiled,
 * the blog's own kernel, and zvec; the remapped grid in tiled (the blog's kernel 6); a
 * waves-per-EU knob where registers bound occupancy. */
static const fdt_family families[] = {
    {.name = "naive", .source = fdt_kernel_source_naive,
     .nvidia = {.bx = {{64, 128, 256, 512, 1024, -1}}, .by = {{1, 2, -1}}, .bz = {{1, 2, -1}},
                .m = ONE, .mz = ONE, .order = OFF, .lb = BOTH, .nt = BOTH, .map = BOTH,
                .band = OFF, .wpe = OFF, .bug = OFF},
     /* Blocks deep in z too: 128x1x8 took the blog's 1024^3 from 555 to 934 GB/s. */
     .amd = {.bx = {{64, 128, 256, 512, 1024, -1}}, .by = {{1, 2, -1}}, .bz = {{1, 2, 8, -1}},
             .m = ONE, .mz = ONE, .order = OFF, .lb = ONE, .nt = BOTH, .map = BOTH,
             .band = OFF, .wpe = OFF, .bug = OFF, .whole_waves = 1},
     .max_threads = 1024},
    /* AMD: the blog's kernel 5 (m rows a thread, ascending loads, lb, nt); its best m was 4
     * to 16 by GPU, 16 without spills once bounded. */
    {.name = "tiled", .source = fdt_kernel_source_tiled,
     .nvidia = {.bx = {{32, 64, 128, 256, -1}}, .by = {{1, 2, 4, -1}}, .bz = {{1, 2, -1}},
                .m = {{1, 2, 4, 8, -1}}, .mz = ONE, .order = BOTH, .lb = BOTH, .nt = BOTH,
                .map = OFF, .band = OFF, .wpe = OFF, .bug = OFF},
     .amd = {.bx = {{64, 128, 256, -1}}, .by = {{1, 2, 4, -1}}, .bz = ONE,
             .m = {{2, 4, 8, 16, -1}}, .mz = ONE, .order = ONE, .lb = ONE, .nt = ONE,
             .map = BOTH, .band = L2_BANDS, .wpe = WAVES, .bug = OFF, .whole_waves = 1},
     .max_threads = 512},
    {.name = "zmarch", .source = fdt_kernel_source_zmarch, .z_chunks = 1,
     .nvidia = {.bx = {{32, 64, 128, 256, -1}}, .by = {{1, 2, 4, 8, -1}}, .bz = ONE, .m = ONE,
                .mz = {{8, 16, 32, 64, -1}}, .order = OFF, .lb = BOTH, .nt = BOTH,
                .map = OFF, .band = OFF, .wpe = OFF, .bug = OFF},
     .amd = {.bx = {{64, 128, 256, -1}}, .by = {{1, 2, 4, -1}}, .bz = ONE, .m = ONE,
             .mz = {{32, 64, 128, 256, -1}}, .order = OFF, .lb = ONE, .nt = ONE, .map = OFF,
             .band = OFF, .wpe = WAVES, .bug = OFF, .whole_waves = 1},
     .max_threads = 1024},
    /* Bands (rows of the grid) for planes too wide to stay in L2 over a chunk's z-window.
     * AMD: zvec holds its whole z-window, mz + 2R vectors of 4 VGPRs in double, so its chunks
     * stay short: 32 planes take 136 VGPRs at R=1, over half of gfx906's 256. */
    {.name = "zvec", .source = fdt_kernel_source_zvec, .z_chunks = 1, .x = X_VECTOR,
     .nvidia = {.bx = {{16, 32, 64, 128, -1}}, .by = {{1, 2, 4, 8, 16, -1}}, .bz = ONE,
                .m = ONE, .mz = {{1, 2, 4, 8, -1}}, .order = OFF, .lb = BOTH, .nt = BOTH,
                .map = OFF, .band = {{0, 64, 256, -1}}, .wpe = OFF, .bug = OFF},
     .amd = {.bx = {{16, 32, 64, 128, -1}}, .by = {{1, 2, 4, 8, 16, -1}}, .bz = ONE, .m = ONE,
             .mz = {{8, 16, 32, -1}}, .order = OFF, .lb = ONE, .nt = ONE, .map = OFF,
             .band = L2_BANDS, .wpe = WAVES, .bug = OFF, .whole_waves = 1},
     .max_threads = 1024},
    /* Long chunks and m rows per thread: L2 reads little more than the grid once (issue 16). */
    {.name = "zroll", .source = fdt_kernel_source_zroll, .z_chunks = 1, .x = X_VECTOR,
     .nvidia = {.bx = {{32, 64, -1}}, .by = {{2, 4, 8, -1}}, .bz = ONE, .m = {{1, 2, -1}},
                .mz = {{8, 16, 32, -1}}, .order = OFF, .lb = BOTH, .nt = OFF, .map = OFF,
                .band = OFF, .wpe = OFF, .bug = OFF},
     .amd = {.bx = {{32, 64, -1}}, .by = {{2, 4, 8, -1}}, .bz = ONE, .m = {{1, 2, -1}},
             .mz = {{32, 64, 128, -1}}, .order = OFF, .lb = ONE, .nt = ONE, .map = OFF,
             .band = OFF, .wpe = WAVES, .bug = OFF, .whole_waves = 1},
     .max_threads = 1024},
    /* AMD: single-wavefront blocks (16x4, 32x2, 64x1) first among them, where a block's
     * barrier costs next to nothing. */
    {.name = "smem", .source = fdt_kernel_source_smem, .shared = SHARED_QUEUE, .z_chunks = 1,
     .nvidia = {.bx = {{32, 64, 128, -1}}, .by = {{2, 4, 8, -1}}, .bz = ONE, .m = ONE,
                .mz = {{16, 32, 64, -1}}, .order = OFF, .lb = BOTH, .nt = BOTH, .map = OFF,
                .band = OFF, .wpe = OFF, .bug = OFF},
     .amd = {.bx = {{16, 32, 64, -1}}, .by = {{1, 2, 4, 8, -1}}, .bz = ONE, .m = ONE,
             .mz = {{32, 64, 128, 256, -1}}, .order = OFF, .lb = ONE, .nt = ONE, .map = OFF,
             .band = OFF, .wpe = WAVES, .bug = OFF, .whole_waves = 1},
     .max_threads = 1024},
    /* High orders and wide planes: tiles tall enough (m rows a thread) for an R-wide halo
     * to cost little; launch bounds always, for the registers of m z-windows. The chunk
     * that wins depends on the grid: on the H200 mz 8 at 768x512x512 (2.5% over mz 32),
     * mz 32 or 64 at 1024x1024x64 (7% over mz 8). AMD: m z-windows of at most 20 values
     * (m 4 to R=2, m 2 beyond): m 4 at R=4 took 278 VGPRs on gfx90a, one wave per SIMD,
     * and spilled on gfx906 (hip_resources_gfx90a_gfx906.tsv). */
    {.name = "xytile", .source = fdt_kernel_source_xytile, .shared = SHARED_PAIR,
     .z_chunks = 1, .x = X_VECTOR,
     .nvidia = {.bx = {{16, 32, 64, -1}}, .by = {{4, 8, 16, -1}}, .bz = ONE, .m = {{2, 4, -1}},
                .mz = {{8, 16, 32, 64, -1}}, .order = OFF, .lb = ONE, .nt = OFF, .map = OFF,
                .band = OFF, .wpe = OFF, .bug = OFF},
     .amd = {.bx = {{16, 32, 64, -1}}, .by = {{2, 4, 8, 16, -1}}, .bz = ONE, .m = {{2, 4, -1}},
             .mz = {{32, 64, 128, 256, -1}}, .order = OFF, .lb = ONE, .nt = ONE, .map = OFF,
             .band = OFF, .wpe = WAVES, .bug = OFF, .whole_waves = 1,
             .max_windows = 20},
     .max_threads = 1024},
    /* xytile's tiles in a ring of dynamic shared memory, filled by asynchronous copies two
     * planes ahead, the upper half of each z-window read from the ring (issue 31). At R = 4
     * on the H200, over the device copy: 512^3 0.77 in double (xytile 0.70) and 0.69 in
     * float (xytile 0.58), 0.77 and 0.65 to 0.70 on two other shapes
     * (bench/results/h200/issue31/ring/). Rows that start on 16 bytes only; NVIDIA only
     * (cp.async), its AMD counterpart unbuilt (ring.hip). */
    {.name = "ring", .source = fdt_kernel_source_ring, .shared = SHARED_RING, .z_chunks = 1,
     .x = X_VECTOR, .nvidia_only = 1,
     .nvidia = {.bx = {{8, 16, 32, -1}}, .by = {{4, 8, -1}}, .bz = ONE, .m = {{2, 4, -1}},
                .mz = {{32, 64, 128, -1}}, .order = OFF, .lb = ONE, .nt = OFF, .map = OFF,
                .band = OFF, .wpe = OFF, .bug = OFF},
     .max_threads = 1024},
    /* A user's spec (docs/stencils.md): its kernel 1, one thread a point with blocks deep in
     * y and z too, and a z-march of mz planes a column; every tap read through the caches. */
    {.name = "snaive", .source = fdt_kernel_source_snaive, .spec = 1,
     .nvidia = {.bx = {{32, 64, 128, 256, 512, -1}}, .by = {{1, 2, 4, -1}}, .bz = {{1, 2, -1}},
                .m = ONE, .mz = ONE, .order = OFF, .lb = BOTH, .nt = BOTH, .map = OFF,
                .band = OFF, .wpe = OFF, .bug = OFF},
     .amd = {.bx = {{64, 128, 256, 512, -1}}, .by = {{1, 2, 4, -1}}, .bz = {{1, 2, 8, -1}},
             .m = ONE, .mz = ONE, .order = OFF, .lb = ONE, .nt = BOTH, .map = OFF,
             .band = OFF, .wpe = OFF, .bug = OFF, .whole_waves = 1},
     .max_threads = 1024},
    {.name = "smarch", .source = fdt_kernel_source_smarch, .spec = 1, .z_chunks = 1,
     .nvidia = {.bx = {{32, 64, 128, 256, -1}}, .by = {{1, 2, 4, 8, -1}}, .bz = ONE, .m = ONE,
                .mz = {{4, 8, 16, 32, 64, -1}}, .order = OFF, .lb = BOTH, .nt = BOTH,
                .map = OFF, .band = OFF, .wpe = OFF, .bug = OFF},
     .amd = {.bx = {{64, 128, 256, -1}}, .by = {{1, 2, 4, -1}}, .bz = ONE, .m = ONE,
             .mz = {{16, 32, 64, 128, -1}}, .order = OFF, .lb = ONE, .nt = ONE, .map = OFF,
             .band = OFF, .wpe = WAVES, .bug = OFF, .whole_waves = 1},
     .max_threads = 1024},
    /* smarch with each field's column in registers (z-windows sized by the taps' reach in
     * z): the chunk's loop unrolled, so its chunks stay shorter. */
    {.name = "szwin", .source = fdt_kernel_source_szwin, .spec = 1, .z_chunks = 1,
     .nvidia = {.bx = {{32, 64, 128, 256, -1}}, .by = {{1, 2, 4, 8, -1}}, .bz = ONE, .m = ONE,
                .mz = {{4, 8, 16, 32, -1}}, .order = OFF, .lb = BOTH, .nt = BOTH,
                .map = OFF, .band = OFF, .wpe = OFF, .bug = OFF},
     .amd = {.bx = {{64, 128, 256, -1}}, .by = {{1, 2, 4, -1}}, .bz = ONE, .m = ONE,
             .mz = {{16, 32, 64, -1}}, .order = OFF, .lb = ONE, .nt = ONE, .map = OFF,
             .band = OFF, .wpe = WAVES, .bug = OFF, .whole_waves = 1},
     .max_threads = 1024},
    /* szwin with a vector of points in x a thread (grid x counts vectors): each row a tap
     * reads comes in the few wide loads that cover it; the vectors' z-windows take twice
     * (float: four times) szwin's registers, so its chunks stay shorter still. */
    {.name = "svec", .source = fdt_kernel_source_svec, .spec = 1, .z_chunks = 1,
     .x = X_VECTOR,
     .nvidia = {.bx = {{16, 32, 64, 128, -1}}, .by = {{1, 2, 4, 8, -1}}, .bz = ONE, .m = ONE,
                .mz = {{2, 4, 8, 16, -1}}, .order = OFF, .lb = BOTH, .nt = BOTH,
                .map = OFF, .band = OFF, .wpe = OFF, .bug = OFF},
     .amd = {.bx = {{16, 32, 64, -1}}, .by = {{1, 2, 4, 8, -1}}, .bz = ONE, .m = ONE,
             .mz = {{8, 16, 32, -1}}, .order = OFF, .lb = ONE, .nt = ONE, .map = OFF,
             .band = OFF, .wpe = WAVES, .bug = OFF, .whole_waves = 1},
     .max_threads = 1024},
    /* szwin with shared-memory tiles of the planes read off each field's column (a ring as
     * deep as those planes, the taps' reach in x and y its halo): a box's or a high order's
     * xy neighbours from shared memory rather than the caches. */
    {.name = "stile", .source = fdt_kernel_source_stile, .spec = 1, .shared = SHARED_SPEC,
     .z_chunks = 1,
     .nvidia = {.bx = {{32, 64, 128, -1}}, .by = {{2, 4, 8, -1}}, .bz = ONE, .m = ONE,
                .mz = {{8, 16, 32, -1}}, .order = OFF, .lb = BOTH, .nt = BOTH,
                .map = OFF, .band = OFF, .wpe = OFF, .bug = OFF},
     .amd = {.bx = {{16, 32, 64, -1}}, .by = {{1, 2, 4, 8, -1}}, .bz = ONE, .m = ONE,
             .mz = {{16, 32, 64, -1}}, .order = OFF, .lb = ONE, .nt = ONE, .map = OFF,
             .band = OFF, .wpe = WAVES, .bug = OFF, .whole_waves = 1},
     .max_threads = 1024},
    {.name = "broken", .source = fdt_kernel_source_broken, .test_only = 1,
     .nvidia = {.bx = {{256, -1}}, .by = ONE, .bz = ONE, .m = ONE, .mz = ONE, .order = OFF,
                .lb = OFF, .nt = OFF, .map = OFF, .band = OFF, .wpe = OFF,
                .bug = {{1, 2, 3, 4, -1}}},
     .max_threads = 1024},
    {.name = "fault", .source = fdt_kernel_source_hazard, .test_only = 1, .hazard = 1,
     .nvidia = {.bx = {{32, 64, 128, 256, -1}}, .by = ONE, .bz = ONE, .m = ONE, .mz = ONE,
                .order = OFF, .lb = OFF, .nt = OFF, .map = OFF, .band = OFF, .wpe = OFF,
                .bug = OFF},
     .max_threads = 1024},
    {.name = "spin", .source = fdt_kernel_source_hazard, .test_only = 1, .hazard = 2,
     .nvidia = {.bx = {{32, 64, 128, 256, -1}}, .by = ONE, .bz = ONE, .m = ONE, .mz = ONE,
                .order = OFF, .lb = OFF, .nt = OFF, .map = OFF, .band = OFF, .wpe = OFF,
                .bug = OFF},
     .max_threads = 1024},
};
#define NFAMILIES (sizeof families / sizeof families[0])

/* The layout's own limits (common/problem.h): a pitch from nx to nx + FDT_PITCH_PAD_MAX, an
 * offset under FDT_OFFSET_BYTES. */
static const char *layout_check(const fdt_problem *p, char *why, size_t len)
{
    if (p->pitch && (p->pitch < p->nx || p->pitch > p->nx + FDT_PITCH_PAD_MAX)) {
        snprintf(why, len, "pitch %d is out of range: a row pitch must be nx (%d) to nx + %d",
                 p->pitch, p->nx, FDT_PITCH_PAD_MAX);
        return why;
    }
    const int limit = fdt_offset_limit(p->precision);
    if (p->offset < 0 || p->offset >= limit) {
        snprintf(why, len, "offset %d is out of range: 0 to %d points (%d bytes) in %s",
                 p->offset, limit - 1, FDT_OFFSET_BYTES - 1, fdt_precision_name(p->precision));
        return why;
    }
    return NULL;
}

const char *fdt_problem_check(const fdt_problem *p)
{
    static _Thread_local char why[160];
    const fdt_stencil *st = fdt_stencil_of(p);
    if (!st) {
        snprintf(why, sizeof why, "stencil '%.*s' is not known", FDT_STENCIL_NAME_MAX, p->stencil);
        return why;
    }
    if (p->radius < st->min_radius || p->radius > st->max_radius) {
        snprintf(why, sizeof why, "radius %d is not supported by %s (%d to %d)", p->radius,
                 st->name, st->min_radius, st->max_radius);
        return why;
    }
    const int sides[3] = {p->nx, p->ny, p->nz};
    for (int d = 0; d < 3; d++)
        if (sides[d] < 2 * p->radius + 1 || sides[d] > FDT_MAX_SIDE) {
            snprintf(why, sizeof why, "n%c = %d is out of range: each side must be %d to %d "
                     "for radius %d", "xyz"[d], sides[d], 2 * p->radius + 1, FDT_MAX_SIDE,
                     p->radius);
            return why;
        }
    return layout_check(p, why, sizeof why);
}

const fdt_family *fdt_family_find(const char *name)
{
    for (size_t i = 0; i < NFAMILIES; i++)
        if (strcmp(families[i].name, name) == 0)
            return &families[i];
    return NULL;
}

const char *fdt_family_name(const fdt_family *f) { return f->name; }
int fdt_family_needs_barriers(const fdt_family *f) { return f->shared != SHARED_NONE; }
int fdt_family_test_only(const fdt_family *f) { return f->test_only; }
int fdt_family_nvidia_only(const fdt_family *f) { return f->nvidia_only; }
int fdt_family_z_chunks(const fdt_family *f) { return f->z_chunks; }
const char *fdt_family_source(const fdt_family *f) { return f->source; }
int fdt_family_serves_specs(const fdt_family *f) { return f->spec; }
const char *fdt_compare_source(void) { return fdt_kernel_source_compare; }
const char *fdt_persist_source(void) { return fdt_kernel_source_persist; }

void fdt_persist_geometry(const fdt_problem *p, fdt_dim3 *grid, fdt_dim3 *block)
{
    enum { threads = 256 };
    *block = (fdt_dim3){threads, 1, 1};
    *grid = (fdt_dim3){(unsigned)p->nz, (unsigned)((p->ny + threads - 1) / threads), 1};
}

const char *fdt_interior_copy_source(void) { return fdt_kernel_source_copy; }

const fdt_family *const *fdt_families(void)
{
    static const fdt_family *list[NFAMILIES + 1];
    for (size_t i = 0; i < NFAMILIES; i++)
        list[i] = &families[i];
    return list;
}

fdt_variant fdt_variant_kernel1(const fdt_problem *p)
{
    return (fdt_variant){.family = fdt_family_find(fdt_stencil_of(p)->kernel1), .bx = 256,
                         .by = 1, .bz = 1, .m = 1, .mz = 1};
}

const char *fdt_variant_source(const fdt_variant *v, const fdt_problem *p)
{
    const fdt_stencil *st = fdt_stencil_of(p);
    return st ? fdt_stencil_source(st, v->family) : v->family->source;
}

static int ceil_div(long long a, long long b)
{
    return (int)((a + b - 1) / b);
}

/* The interior copy's shapes (bx, by, mz): one point per thread and 8 planes marched in z,
 * each with a wide and a narrow block; the fastest is the ceiling. */
static const int interior_copy_shapes[FDT_INTERIOR_COPIES][3] = {
    {256, 1, 1}, {64, 4, 1}, {256, 1, 8}, {64, 4, 8}};

void fdt_interior_copy_kernel(int which, const fdt_problem *p, fdt_defines *d, fdt_dim3 *grid,
                              fdt_dim3 *block)
{
    const int *s = interior_copy_shapes[which];
    const fdt_variant v = {.bx = s[0], .by = s[1], .bz = 1, .m = 1, .mz = s[2]};
    fdt_variant_defines(&v, p, d);
    *block = (fdt_dim3){(unsigned)s[0], (unsigned)s[1], 1};
    *grid = (fdt_dim3){(unsigned)ceil_div(p->nx, s[0]), (unsigned)ceil_div(p->ny, s[1]),
                       (unsigned)ceil_div(p->nz - 2 * p->radius, s[2])};
}

/* A spec's rings of tiles (stile.hip): each field's, its planes times its halo'd tile. */
static size_t spec_tiles_bytes(const fdt_variant *v, const fdt_problem *p)
{
    const fdt_stencil *st = fdt_stencil_of(p);
    if (!st || !st->spec)
        return 0;
    size_t points = 0;
    for (size_t f = 0; f < st->spec->ninputs + st->spec->ncoefficients; f++) {
        const fdt_spec_hold *h = &st->spec->hold[f];
        if (fdt_spec_holds_tiles(h))
            points += (size_t)(h->zhi - h->zlo + 1) * (size_t)(v->bx + 2 * h->rx) *
                      (size_t)(v->by + 2 * h->ry);
    }
    return points * fdt_real_size(p->precision);
}

size_t fdt_variant_shared_bytes(const fdt_variant *v, const fdt_problem *p)
{
    if (v->family->shared == SHARED_SPEC)
        return spec_tiles_bytes(v, p);
    const int r = p->radius, lanes = fdt_variant_points_x(v, p);
    const int halo_x = lanes * ((r + lanes - 1) / lanes);
    const size_t tile = (size_t)(v->bx * lanes + 2 * halo_x) * (v->by * v->m + 2 * r) *
                        fdt_real_size(p->precision);
    switch (v->family->shared) {
    case SHARED_QUEUE: return (size_t)(2 * r + 1) * tile;
    case SHARED_PAIR: return 2 * tile;
    case SHARED_RING: return (size_t)(r + 1 + RING_AHEAD) * tile;
    default: return 0;
    }
}

size_t fdt_variant_dynamic_shared_bytes(const fdt_variant *v, const fdt_problem *p)
{
    return v->family->shared == SHARED_RING ? fdt_variant_shared_bytes(v, p) : 0;
}

int fdt_variant_points_x(const fdt_variant *v, const fdt_problem *p)
{
    switch (v->family->x) {
    case X_VECTOR: return 16 / (int)fdt_real_size(p->precision);
    default: return 1;
    }
}

void fdt_variant_geometry(const fdt_variant *v, const fdt_problem *p, fdt_dim3 *grid,
                          fdt_dim3 *block)
{
    unsigned g[3] = {
        ceil_div(p->nx, (long long)v->bx * fdt_variant_points_x(v, p)),
        ceil_div(p->ny, (long long)v->by * v->m),
        v->family->z_chunks ? ceil_div(p->nz - 2 * p->radius, v->mz) : ceil_div(p->nz, v->bz),
    };
    *block = (fdt_dim3){v->bx, v->by, v->bz};
    /* The remapped kernel reads blockIdx.z as x, .x as y and .y as z. */
    *grid = v->map ? (fdt_dim3){g[1], g[2], g[0]} : (fdt_dim3){g[0], g[1], g[2]};
}

/* Whether a value of list under value, times scale, already reaches need. */
static int smaller_covers(const value_list *list, int value, long long need, int scale)
{
    for (int i = 0; list->v[i] != -1; i++)
        if (list->v[i] < value && (long long)list->v[i] * scale >= need)
            return 1;
    return 0;
}

long fdt_space_sample(const fdt_problem *p, const fdt_device_info *dev,
                      const fdt_space_filter *filter, size_t subset, fdt_variant **out)
{
    *out = NULL;
    const size_t space = fdt_space_enumerate(p, dev, filter, NULL, 0);
    if (space == 0)
        return 0;
    fdt_variant *vs = malloc(space * sizeof *vs);
    if (!vs)
        return -1;
    fdt_space_enumerate(p, dev, filter, vs, space);
    const size_t n = subset && subset < space ? subset : space;
    for (size_t i = 0; i < n; i++) /* i * space / n >= i: compacting in place is safe */
        vs[i] = vs[i * space / n];
    *out = vs;
    return (long)n;
}

/* The shared memory a block of v may have on dev: what a static array may take, or, for a
 * ring in dynamic shared memory on NVIDIA, what a kernel may opt in to, by compute
 * capability (CUDA C++ Programming Guide, "Technical Specifications per Compute
 * Capability"); an architecture not listed keeps the static limit. */
static size_t shared_limit(const fdt_variant *v, const fdt_device_info *dev)
{
    static const struct {
        const char *arch;
        size_t bytes;
    } opt_in[] = {{"sm_70", 98304},  {"sm_72", 98304},  {"sm_75", 65536},  {"sm_80", 166912},
                  {"sm_86", 101376}, {"sm_87", 166912}, {"sm_89", 101376}, {"sm_90", 232448},
                  {"sm_100", 232448}, {"sm_120", 101376}};
    if (v->family->shared == SHARED_RING && strcmp(dev->backend, "cuda") == 0)
        for (size_t i = 0; i < sizeof opt_in / sizeof opt_in[0]; i++)
            if (strcmp(dev->arch, opt_in[i].arch) == 0)
                return opt_in[i].bytes;
    return (size_t)dev->max_shared_per_block;
}

static int block_threads(const fdt_variant *v)
{
    return v->bx * v->by * v->bz;
}

/* Whether every row of p's layout starts on a whole vector of v: the pitch a whole number
 * of vectors, and the offset's bytes a multiple of 16 from the 256-byte-aligned base. The
 * ring needs it because it has no scalar path (cp.async copies 16 aligned bytes, and its
 * fallback elsewhere loads whole vectors); the other vector families test the same at run
 * time (common.h's rows_aligned) and take their scalar path where it fails. */
static int rows_on_vectors(const fdt_variant *v, const fdt_problem *p)
{
    return fdt_problem_pitch(p) % fdt_variant_points_x(v, p) == 0 &&
           (size_t)p->offset * fdt_real_size(p->precision) % 16 == 0;
}

const char *fdt_variant_check(const fdt_variant *v, const fdt_problem *p,
                              const fdt_device_info *dev)
{
    const int threads = block_threads(v);
    if (threads < dev->warp_size)
        return "fewer threads per block than a warp";
    if (threads > dev->max_threads_per_block || threads > v->family->max_threads)
        return "too many threads per block";
    if (fdt_family_needs_barriers(v->family) && !dev->block_barriers)
        return "needs block barriers, which this backend cannot run";
    if (v->family->nvidia_only && strcmp(dev->backend, "hip") == 0)
        return "uses NVIDIA's own mechanisms, which the hip backend does not run";
    if (v->family->shared == SHARED_RING && !rows_on_vectors(v, p))
        return "copies whole 16-byte vectors: rows must start on 16 bytes";
    if (fdt_variant_shared_bytes(v, p) > shared_limit(v, dev))
        return "needs more shared memory than a block may have";
    fdt_dim3 grid, block;
    fdt_variant_geometry(v, p, &grid, &block);
    if (v->band && (v->band % (v->by * v->m) || v->map))
        return "a band must be whole block rows, and excludes map";
    if (v->band && (v->band >= p->ny || grid.z == 1))
        return "one band or one chunk in z: a band changes nothing";
    if (grid.x > dev->max_grid[0] || grid.y > dev->max_grid[1] || grid.z > dev->max_grid[2])
        return "grid exceeds the device's limits";
    return NULL;
}

const char *fdt_variant_check_compiled(const fdt_variant *v, const fdt_resources *r)
{
    static _Thread_local char why[128];
    const int threads = block_threads(v);
    if (r->max_threads < 0 || threads <= r->max_threads)
        return NULL;
    snprintf(why, sizeof why, "%d registers a thread leave room for %d threads a block, not %d",
             r->vgprs, r->max_threads, threads);
    return why;
}

/* The lists profile s offers for family f. */
static const family_space *lists_of(const fdt_family *f, fdt_space_profile s)
{
    return s == FDT_SPACE_AMD && f->amd.bx.v[0] > 0 ? &f->amd : &f->nvidia;
}

fdt_space_profile fdt_space_profile_for(const fdt_space_filter *filter,
                                        const fdt_device_info *dev)
{
    if (filter->space != FDT_SPACE_AUTO)
        return filter->space;
    return strcmp(dev->vendor, "AMD") == 0 ? FDT_SPACE_AMD : FDT_SPACE_NVIDIA;
}

static const char *const profiles[] = {[FDT_SPACE_AUTO] = "auto",
                                       [FDT_SPACE_NVIDIA] = "nvidia", [FDT_SPACE_AMD] = "amd"};

const char *fdt_space_profile_name(fdt_space_profile s)
{
    return profiles[s];
}

int fdt_space_profile_parse(const char *s, fdt_space_profile *out)
{
    for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++)
        if (strcmp(s, profiles[i]) == 0) {
            *out = (fdt_space_profile)i;
            return 0;
        }
    return -1;
}

/* Bands are never shorter than this many rows (and one block row): below it the halo rows
 * a band reads twice, 2R of every band, cost more than the band saves. */
#define MIN_BAND_ROWS 8

/* The rows of a band whose planes in flight fill 1/d of the L2 (code L2_SHARE(d)), in whole
 * block rows, at least MIN_BAND_ROWS. Blocks are taken x first, then the band's rows, then
 * z: while a band's rows of one z-step are read, the planes that step needs are in flight,
 * the planes a thread walks (mz, or the block's bz) and R on each side, each plane the band's
 * rows of pitch points (the padding shares their cache lines). Part 4 of AMD's Laplacian
 * blog: three 2.5 MB planes fit an 8 MB L2, larger ones do not, and splitting y until they
 * do took 1024^3 to 1176 GB/s. */
static int band_rows(int code, const fdt_variant *v, const fdt_problem *p,
                     const fdt_device_info *dev)
{
    const int share = -100 - code, block_rows = v->by * v->m;
    const int planes = (v->family->z_chunks ? v->mz : v->bz) + 2 * p->radius;
    const unsigned long long row_bytes =
        (unsigned long long)fdt_problem_pitch(p) * fdt_real_size(p->precision) * (unsigned)planes;
    unsigned long long rows = dev->l2_bytes / (unsigned)share / row_bytes;
    rows -= rows % (unsigned)block_rows;
    const int least = block_rows * ceil_div(MIN_BAND_ROWS, block_rows);
    return rows < (unsigned)least ? least : rows > FDT_MAX_SIDE ? FDT_MAX_SIDE : (int)rows;
}

/* Sets v->band from entry at of the band list; 0 where it adds nothing: an L2 share on a
 * device that does not say its L2, or one that comes to the rows of the share before it. */
static int resolve_band(const value_list *bands, int at, fdt_variant *v, const fdt_problem *p,
                        const fdt_device_info *dev)
{
    const int code = bands->v[at];
    if (code >= 0) {
        v->band = code;
        return 1;
    }
    if (!dev->l2_bytes)
        return 0;
    v->band = band_rows(code, v, p, dev);
    return !(at > 0 && bands->v[at - 1] < -1 && band_rows(bands->v[at - 1], v, p, dev) == v->band);
}

/* Whether the profile leaves v out although it could run: past what the grid needs, a
 * larger chunk (or m) behaves exactly like the smallest that covers it, so only that one is
 * kept; and the profile's own bounds on blocks and registers. */
static int pruned(const fdt_variant *v, const family_space *sp, const fdt_problem *p,
                  const fdt_device_info *dev)
{
    if (v->family->z_chunks && smaller_covers(&sp->mz, v->mz, p->nz - 2 * p->radius, 1))
        return 1;
    if (smaller_covers(&sp->m, v->m, p->ny, v->by))
        return 1;
    if (sp->whole_waves && block_threads(v) % dev->warp_size)
        return 1;
    return sp->max_windows && v->m * (2 * p->radius + 1) > sp->max_windows;
}

/* The odometer over every parameter list of a family, in the table's order. */
static size_t enumerate_family(const fdt_family *f, const family_space *sp,
                               const fdt_problem *p, const fdt_device_info *dev,
                               fdt_variant *out, size_t cap, size_t n)
{
    int at[FDT_PARAMS] = {0};
    for (;;) {
        fdt_variant v = {.family = f};
        for (int q = 0; q < FDT_PARAMS; q++)
            set_param(&v, q, param_list(sp, q)->v[at[q]]);
        if (resolve_band(&sp->band, at[FDT_P_BAND], &v, p, dev) &&
            !fdt_variant_check(&v, p, dev) && !pruned(&v, sp, p, dev)) {
            if (out && n < cap)
                out[n] = v;
            n++;
        }
        int d = FDT_PARAMS - 1;
        while (d >= 0 && param_list(sp, d)->v[++at[d]] == -1)
            at[d--] = 0;
        if (d < 0)
            return n;
    }
}

int fdt_family_selected(const fdt_family *f, const fdt_space_filter *filter)
{
    return filter->family ? strcmp(filter->family, f->name) == 0
                          : !f->test_only || filter->test_families;
}

/* Whether family f serves p's stencil: spec families serve specs, the others built-ins. */
static int serves(const fdt_family *f, const fdt_problem *p)
{
    const fdt_stencil *st = fdt_stencil_of(p);
    return st && f->spec == (st->spec != NULL);
}

size_t fdt_space_enumerate(const fdt_problem *p, const fdt_device_info *dev,
                           const fdt_space_filter *filter, fdt_variant *out, size_t cap)
{
    const fdt_space_profile s = fdt_space_profile_for(filter, dev);
    size_t n = 0;
    for (size_t i = 0; i < NFAMILIES; i++) {
        if (s == FDT_SPACE_AMD && families[i].nvidia_only)
            continue; /* not even the NVIDIA lists a family without AMD lists offers */
        if (fdt_family_selected(&families[i], filter) && serves(&families[i], p))
            n = enumerate_family(&families[i], lists_of(&families[i], s), p, dev, out, cap, n);
    }
    return n;
}

/* Appends at *n, never past len: a name too long for buf is cut, not overrun. */
static void append(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
    if (*n >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    const int wrote = vsnprintf(buf + *n, len - *n, fmt, ap);
    va_end(ap);
    *n = wrote < 0 ? len : *n + (size_t)wrote;
}

/* Whether either profile gives family f a choice of parameter p's value (a family without
 * AMD lists has zeros there). */
static int family_chooses(const fdt_family *f, fdt_param_id p)
{
    return param_list(&f->nvidia, p)->v[1] != -1 || param_list(&f->amd, p)->v[1] > 0;
}

/* Whether v's name shows parameter p: a block side always, a chosen parameter (tiled's m
 * and order) wherever its family has a choice of it, whatever its value, the others only
 * where they are set. */
static int name_shows(const fdt_variant *v, fdt_param_id p, fdt_param_shows shows)
{
    if (params[p].shows != shows)
        return 0;
    return shows == FDT_SHOWS_CHOSEN ? family_chooses(v->family, p)
                                     : fdt_param_value(v, p) != 0;
}

static void append_param(char *buf, size_t len, size_t *n, const fdt_variant *v,
                          fdt_param_id p)
{
    const int value = fdt_param_value(v, p);
    if (params[p].prefix)
        append(buf, len, n, ":%s%d", params[p].prefix, value);
    else
        append(buf, len, n, ":%s", params[p].words[value != 0]);
}

void fdt_variant_name(const fdt_variant *v, char *buf, size_t len)
{
    size_t n = 0;
    const char *separator = ":";
    append(buf, len, &n, "%s", v->family->name);
    for (int p = 0; p < FDT_PARAMS; p++)
        if (params[p].shows == FDT_SHOWS_BLOCK) {
            append(buf, len, &n, "%s%d", separator, fdt_param_value(v, p));
            separator = "x";
        }
    for (int p = 0; p < FDT_PARAMS; p++)
        if (name_shows(v, p, FDT_SHOWS_CHOSEN))
            append_param(buf, len, &n, v, p);
    for (int p = 0; p < FDT_PARAMS; p++)
        if (name_shows(v, p, FDT_SHOWS_SET))
            append_param(buf, len, &n, v, p);
}

/* Whether x is from lo to hi: a name's numbers are bounded so that products of them (threads
 * per block, rows per band) cannot overflow an int. */
static int within(int x, int lo, int hi)
{
    return x >= lo && x <= hi;
}

/* Whether tok spells a value of parameter p (its word, or its prefix and a number);
 * *value is then that value, maybe out of range. */
static int spells(const char *tok, fdt_param_id p, int *value)
{
    const fdt_param *q = &params[p];
    if (!q->prefix) {
        for (*value = 0; *value < 2; (*value)++)
            if (q->words[*value] && strcmp(tok, q->words[*value]) == 0)
                return 1;
        return 0;
    }
    char format[16], extra;
    snprintf(format, sizeof format, "%s%%d%%c", q->prefix);
    return sscanf(tok, format, value, &extra) == 1;
}

static int parse_option(const char *tok, fdt_variant *v)
{
    for (int p = 0; p < FDT_PARAMS; p++) {
        int value;
        if (params[p].shows == FDT_SHOWS_BLOCK || !spells(tok, p, &value))
            continue;
        if (!within(value, params[p].lo, params[p].hi))
            return -1;
        set_param(v, p, value);
        return 0;
    }
    return -1;
}

/* The block's sides, BXxBYxBZ, each within its bounds. */
static int parse_block(const char *tok, fdt_variant *v)
{
    int side[3], at = 0;
    char extra;
    if (!tok || sscanf(tok, "%dx%dx%d%c", &side[0], &side[1], &side[2], &extra) != 3)
        return -1;
    for (int p = 0; p < FDT_PARAMS; p++)
        if (params[p].shows == FDT_SHOWS_BLOCK) {
            if (!within(side[at], params[p].lo, params[p].hi))
                return -1;
            set_param(v, p, side[at++]);
        }
    return 0;
}

int fdt_variant_parse(const char *name, fdt_variant *v, char *err, size_t errlen)
{
    char copy[FDT_VARIANT_NAME_MAX * 2];
    if (strlen(name) >= sizeof copy) {
        snprintf(err, errlen, "variant name too long");
        return -1;
    }
    strcpy(copy, name);
    char *save = NULL, *tok = strtok_r(copy, ":", &save);
    const fdt_family *f = tok ? fdt_family_find(tok) : NULL;
    if (!f) {
        snprintf(err, errlen, "unknown kernel family in '%s'", name);
        return -1;
    }
    *v = (fdt_variant){.family = f, .m = 1, .mz = 1};
    if (parse_block(strtok_r(NULL, ":", &save), v) != 0) {
        snprintf(err, errlen, "'%s': expected family:BXxBYxBZ[:options], each side 1 to 1024",
                 name);
        return -1;
    }
    while ((tok = strtok_r(NULL, ":", &save)))
        if (parse_option(tok, v) != 0) {
            snprintf(err, errlen, "'%s': unknown option '%s', or its value out of range", name,
                     tok);
            return -1;
        }
    return 0;
}

/* The most defines a variant gets (fdt_variant_defines): the type, index type and radius,
 * one a parameter, the layout's two, the hazard's, and the ring's two. The ring at a padded
 * layout once wrote past a table of 16, and a worker died of it. */
_Static_assert(3 + FDT_PARAMS + 2 + 1 + 2 <= FDT_DEFINES_MAX, "fdt_defines is too short");

static void add_define(fdt_defines *d, const char *name, const char *value)
{
    snprintf(d->text[d->count], FDT_DEFINE_LEN, "%s=%s", name, value);
    d->list[d->count] = d->text[d->count];
    d->count++;
}

static void add_int_define(fdt_defines *d, const char *name, int value)
{
    char text[16];
    snprintf(text, sizeof text, "%d", value);
    add_define(d, name, text);
}

void fdt_variant_defines(const fdt_variant *v, const fdt_problem *p, fdt_defines *out)
{
    out->count = 0;
    /* 32-bit offsets are cheaper; they suffice while every point's index fits an int: every
     * point of the storage, padding and offset included (the compare kernel walks them). */
    const int wide = fdt_problem_storage_points(p) >= 0x7fffffffULL;
    add_define(out, "FDT_REAL", fdt_precision_name(p->precision));
    add_define(out, "FDT_IDX", wide ? "long long" : "int");
    add_int_define(out, "FDT_RADIUS", p->radius);
    for (int q = 0; q < FDT_PARAMS; q++) {
        const int value = fdt_param_value(v, q);
        if (!params[q].define_where_set || value)
            add_int_define(out, params[q].define,
                           params[q].defined_as ? params[q].defined_as(v) : value);
    }
    /* Padded rows only: a kernel built without it strides by nx and never reads its pitch
     * argument (kernels_src/common.h, row_pitch), which saves a register. */
    if (fdt_problem_pitch(p) != p->nx)
        add_int_define(out, "FDT_PADDED_ROWS", 1);
    /* Fields whose first point is off 16 bytes: the vector families' scalar path only. */
    if (p->offset * fdt_real_size(p->precision) % 16)
        add_int_define(out, "FDT_UNALIGNED_FIELDS", 1);
    if (v->family && v->family->hazard)
        add_int_define(out, "FDT_HAZARD", v->family->hazard);
    if (v->family && v->family->shared == SHARED_RING) {
        add_int_define(out, "FDT_AHEAD", RING_AHEAD);
        add_int_define(out, "FDT_SHARED_BYTES", (int)fdt_variant_dynamic_shared_bytes(v, p));
    }
}
