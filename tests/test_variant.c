/* test_variant.c - the variant space, names, geometry, problem checks, statistics and the
 * figure of merit: everything about variants that needs no compiler. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/amdgpu_archs.h"
#include "engine/sources.h"
#include "hashes.h"
#include "engine/measure.h"
#include "engine/stencil.h"
#include "example_spec.h"
#include "engine/variant.h"

#include "commands.h"

/* cmocka 1.1's float assertion compares in single precision; these figures need double. */
#define assert_near(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (tol))

/* Limits of an H100 and of an MI250X GCD: the space must differ where they differ. */
static const fdt_device_info nvidia = {
    .warp_size = 32, .max_threads_per_block = 1024, .max_shared_per_block = 49152,
    .max_grid = {2147483647u, 65535, 65535}, .block_barriers = 1};
static const fdt_device_info amd = {
    .warp_size = 64, .max_threads_per_block = 1024, .max_shared_per_block = 65536,
    .max_grid = {2147483647u, 65535, 65535}, .block_barriers = 1};
static const fdt_device_info host = {
    .warp_size = 32, .max_threads_per_block = 1024, .max_shared_per_block = 49152,
    .max_grid = {2147483647u, 65535, 65535}, .block_barriers = 0};

static const fdt_problem cube = {.stencil = "laplacian", .nx = 512, .ny = 512, .nz = 512,
                                 .radius = 1, .precision = FDT_DOUBLE};

static fdt_variant *space(const fdt_problem *p, const fdt_device_info *d, const char *family,
                          size_t *n)
{
    const fdt_space_filter filter = {.family = family};
    *n = fdt_space_enumerate(p, d, &filter, NULL, 0);
    fdt_variant *vs = calloc(*n ? *n : 1, sizeof *vs);
    assert_int_equal(fdt_space_enumerate(p, d, &filter, vs, *n), *n);
    return vs;
}

static void test_every_family_has_variants_and_all_pass_their_constraints(void **state)
{
    (void)state;
    size_t total = 0;
    for (size_t f = 0; fdt_families()[f]; f++) {
        const fdt_family *family = fdt_families()[f];
        if (fdt_family_test_only(family) || fdt_family_serves_specs(family))
            continue; /* offered only when test_families is on; a spec's (test_spec) */
        const char *name = fdt_family_name(family);
        size_t n;
        fdt_variant *vs = space(&cube, &nvidia, name, &n);
        assert_true(n > 0);
        for (size_t i = 0; i < n; i++) {
            assert_string_equal(fdt_family_name(vs[i].family), name);
            assert_null(fdt_variant_check(&vs[i], &cube, &nvidia));
        }
        total += n;
        free(vs);
    }
    const fdt_space_filter all = {0};
    assert_int_equal(fdt_space_enumerate(&cube, &nvidia, &all, NULL, 0), total);
}

static void test_constraints_prune_by_device(void **state)
{
    (void)state;
    size_t n_nv, n_amd, n_host;
    free(space(&cube, &nvidia, "zmarch", &n_nv));
    free(space(&cube, &amd, "zmarch", &n_amd));
    /* 32-thread blocks are a whole warp on NVIDIA and half a wavefront on AMD. */
    assert_true(n_amd < n_nv);
    free(space(&cube, &host, "smem", &n_host));
    assert_int_equal(n_host, 0);

    fdt_variant v;
    char err[128];
    assert_int_equal(fdt_variant_parse("zmarch:32x1x1:mz16", &v, err, sizeof err), 0);
    assert_non_null(fdt_variant_check(&v, &cube, &amd));
    assert_null(fdt_variant_check(&v, &cube, &nvidia));
    assert_int_equal(fdt_variant_parse("naive:1024x2x1", &v, err, sizeof err), 0);
    assert_non_null(fdt_variant_check(&v, &cube, &nvidia));
}

static void test_shared_memory_limits_smem(void **state)
{
    (void)state;
    fdt_variant v;
    char err[128];
    fdt_problem r4 = cube;
    r4.radius = 4;
    /* 9 planes of (128+8) x (8+8) doubles: 156672 bytes, over any device's block limit. */
    assert_int_equal(fdt_variant_parse("smem:128x8x1:mz16", &v, err, sizeof err), 0);
    assert_int_equal(fdt_variant_shared_bytes(&v, &r4), 9 * 136 * 16 * 8);
    assert_non_null(fdt_variant_check(&v, &r4, &amd));
    assert_int_equal(fdt_variant_parse("smem:32x4x1:mz16", &v, err, sizeof err), 0);
    assert_null(fdt_variant_check(&v, &r4, &nvidia));
}

/* xytile's two tiles keep an x halo of whole vectors: at R = 3 in double, 4 points a side
 * (two vectors of 2), in float 4 (one vector of 4). The hip test checks R = 1, 2 and 4
 * against the compiler's own count. */
static void test_shared_memory_of_xytile_rounds_the_halo(void **state)
{
    (void)state;
    fdt_variant v;
    char err[128];
    fdt_problem r3 = cube;
    r3.radius = 3;
    assert_int_equal(fdt_variant_parse("xytile:32x4x1:m2:mz8:lb", &v, err, sizeof err), 0);
    assert_int_equal(fdt_variant_shared_bytes(&v, &r3), 2 * (64 + 2 * 4) * (8 + 6) * 8);
    r3.precision = FDT_FLOAT;
    assert_int_equal(fdt_variant_shared_bytes(&v, &r3), 2 * (128 + 2 * 4) * (8 + 6) * 4);
}

/* stile's tiles are its spec's: box27 reads u off its column at three planes, one point
 * away in x and y, so a ring of 3 tiles of (32 + 2) x (4 + 2) doubles; a spec whose taps
 * leave their columns nowhere (the wave update's u_prev and v2) would add none. */
static void test_shared_memory_of_stile_is_the_specs(void **state)
{
    (void)state;
    char err[256];
    const fdt_stencil *st = example_spec("box27");
    fdt_problem p = cube;
    fdt_copy_text(p.stencil, sizeof p.stencil, st->name);
    fdt_variant v;
    assert_int_equal(fdt_variant_parse("stile:32x4x1:mz8", &v, err, sizeof err), 0);
    assert_int_equal(fdt_variant_shared_bytes(&v, &p), 3 * 34 * 6 * 8);
    assert_int_equal(fdt_variant_parse("stile:1024x1x1:mz8", &v, err, sizeof err), 0);
    assert_int_equal(fdt_variant_shared_bytes(&v, &p), 3 * 1026 * 3 * 8);
}

/* Registers are known only once compiled: a block the kernel cannot launch is refused with
 * the figures, and a backend that cannot tell (-1) refuses nothing. */
static void test_compiled_kernel_must_fit_the_block(void **state)
{
    (void)state;
    fdt_variant v;
    char err[128];
    assert_int_equal(fdt_variant_parse("zvec:64x16x1:mz8", &v, err, sizeof err), 0);
    fdt_resources r = {.vgprs = 72, .sgprs = -1, .max_threads = 896};
    const char *why = fdt_variant_check_compiled(&v, &r);
    assert_non_null(why);
    assert_string_equal(why, "72 registers a thread leave room for 896 threads a block, not 1024");
    r.max_threads = 1024;
    assert_null(fdt_variant_check_compiled(&v, &r));
    r.max_threads = -1;
    assert_null(fdt_variant_check_compiled(&v, &r));
}

/* A band is whole block rows, fewer than the grid's, over more than one chunk in z. */
static void test_bands_are_pruned_where_they_change_nothing(void **state)
{
    (void)state;
    fdt_variant v;
    char err[128];
    assert_int_equal(fdt_variant_parse("zvec:32x8x1:mz2:band64", &v, err, sizeof err), 0);
    assert_int_equal(v.band, 64);
    assert_null(fdt_variant_check(&v, &cube, &nvidia));
    const fdt_problem narrow = {.stencil = "laplacian", .nx = 512, .ny = 64, .nz = 512, .radius = 1,
                                .precision = FDT_DOUBLE};
    assert_non_null(fdt_variant_check(&v, &narrow, &nvidia));
    const fdt_problem flat = {.stencil = "laplacian", .nx = 512, .ny = 512, .nz = 4, .radius = 1,
                              .precision = FDT_DOUBLE};
    assert_non_null(fdt_variant_check(&v, &flat, &nvidia));
    assert_int_equal(fdt_variant_parse("zvec:32x16x1:mz2:band40", &v, err, sizeof err), 0);
    assert_non_null(fdt_variant_check(&v, &cube, &nvidia));
    fdt_defines d;
    assert_int_equal(fdt_variant_parse("zvec:32x16x1:mz2:band256", &v, err, sizeof err), 0);
    fdt_variant_defines(&v, &cube, &d);
    int found = 0;
    for (size_t i = 0; i < d.count; i++)
        found |= strcmp(d.list[i], "FDT_BAND=16") == 0;
    assert_true(found);
}

/* The ring (issue 31): its dynamic shared memory is R + 3 tiles with their halos, which a
 * launch must give and the defines' FDT_AHEAD sizes; on a cuda device of sm_90 it may opt in
 * to 227 KB, so no variant of its list is pruned for its ring, where a static array's 48 KB
 * prunes three; rows that do not start on 16 bytes, and the hip backend, get none: dense rows
 * of an odd nx, a pitch not whole vectors or an offset off 16 bytes (the ring has no scalar
 * path), while rows padded to whole vectors from an offset of 16 bytes get them all. */
static void test_ring_shared_memory_and_where_it_runs(void **state)
{
    (void)state;
    fdt_variant v;
    char err[128];
    const fdt_problem r4 = {.stencil = "laplacian", .nx = 512, .ny = 512, .nz = 512,
                            .radius = 4, .precision = FDT_DOUBLE};
    assert_int_equal(fdt_variant_parse("ring:16x8x1:m2:mz64:lb", &v, err, sizeof err), 0);
    /* 7 tiles of (32 + 2 x 4) x (16 + 2 x 4) doubles: r4_ring.cu's smem=53760 */
    assert_int_equal(fdt_variant_shared_bytes(&v, &r4), 7 * 40 * 24 * 8);
    assert_int_equal(fdt_variant_dynamic_shared_bytes(&v, &r4), 7 * 40 * 24 * 8);
    fdt_defines d;
    fdt_variant_defines(&v, &r4, &d);
    assert_string_equal(d.list[d.count - 2], "FDT_AHEAD=2");
    assert_string_equal(d.list[d.count - 1], "FDT_SHARED_BYTES=53760");
    assert_int_equal(fdt_variant_parse("xytile:16x8x1:m2:mz64:lb", &v, err, sizeof err), 0);
    assert_int_equal(fdt_variant_dynamic_shared_bytes(&v, &r4), 0);

    fdt_device_info h100 = nvidia;
    strcpy(h100.backend, "cuda");
    strcpy(h100.arch, "sm_90");
    size_t n;
    free(space(&cube, &h100, "ring", &n));
    assert_int_equal(n, 36);
    fdt_problem odd = cube;
    odd.nx = 511;
    free(space(&odd, &h100, "ring", &n));
    assert_int_equal(n, 0);
    const struct {
        int pitch, offset;
        size_t rings;
    } layouts[] = {{512, 0, 36}, {512, 2, 36}, {512, 1, 0}, {513, 0, 0}, {514, 3, 0}};
    for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++) {
        odd.pitch = layouts[l].pitch;
        odd.offset = layouts[l].offset; /* in doubles */
        free(space(&odd, &h100, "ring", &n));
        assert_int_equal(n, layouts[l].rings);
    }
    assert_int_equal(fdt_variant_parse("ring:16x8x1:m2:mz64:lb", &v, err, sizeof err), 0);
    assert_string_equal(fdt_variant_check(&v, &odd, &h100),
                        "copies whole 16-byte vectors: rows must start on 16 bytes");
    strcpy(h100.backend, "hip");
    free(space(&cube, &h100, "ring", &n));
    assert_int_equal(n, 0);
}

/* The H100's space as it was before the AMD profile (fdtune variants 512 512 512 on the cpu
 * backend, whose limits are these, gave 2108): the NVIDIA lists must not move. */
static void test_nvidia_space_is_as_it_was(void **state)
{
    (void)state;
    fdt_device_info h100 = nvidia;
    strcpy(h100.vendor, "NVIDIA");
    h100.l2_bytes = 50u << 20;
    const char *names[] = {"naive", "tiled", "zmarch", "zvec", "zroll", "smem", "xytile"};
    const size_t counts[] = {128, 640, 240, 864, 72, 108, 56};
    size_t total = 0;
    for (size_t f = 0; f < 7; f++) {
        size_t n;
        free(space(&cube, &h100, names[f], &n));
        assert_int_equal(n, counts[f]);
        total += n;
    }
    assert_int_equal(total, 2108);
    /* and the ring beside them, since issue 31: its 33 variants within a static array's
     * 48 KB, as this device (no backend named) allows */
    size_t rings;
    free(space(&cube, &h100, "ring", &rings));
    assert_int_equal(rings, 33);
    const fdt_space_filter all = {0}, named = {.space = FDT_SPACE_NVIDIA};
    assert_int_equal(fdt_space_enumerate(&cube, &h100, &all, NULL, 0), 2108 + 33);
    fdt_device_info gfx90a, amd_limits = amd; /* run by the hip backend, as gfx90a is */
    strcpy(amd_limits.backend, "hip");
    assert_int_equal(fdt_amdgpu_arch_device("gfx90a", &gfx90a), 0);
    assert_int_equal(fdt_space_enumerate(&cube, &gfx90a, &named, NULL, 0),
                     fdt_space_enumerate(&cube, &amd_limits, &all, NULL, 0));
}

/* The table's facts for the two archs CI enumerates, a target with features, and refusals. */
static void test_amdgpu_arch_devices(void **state)
{
    (void)state;
    fdt_device_info d;
    assert_int_equal(fdt_amdgpu_arch_device("gfx90a:sramecc+:xnack-", &d), 0);
    assert_string_equal(d.backend, "hip");
    assert_string_equal(d.vendor, "AMD");
    assert_string_equal(d.arch, "gfx90a");
    assert_int_equal(d.warp_size, 64);
    assert_int_equal(d.compute_units, 110);
    assert_int_equal(d.l2_bytes, 8u << 20);
    assert_int_equal(d.max_shared_per_block, 65536);
    assert_int_equal(d.max_threads_per_block, 1024);
    assert_int_equal(d.max_grid[1], 65535);
    assert_int_equal(d.block_barriers, 1);
    assert_int_equal(d.l2_persist, 0);
    assert_int_equal(fdt_amdgpu_arch_find("gfx90a")->max_waves_per_eu, 8);
    assert_int_equal(fdt_amdgpu_arch_device("gfx906", &d), 0);
    assert_int_equal(d.compute_units, 60);
    assert_int_equal(d.l2_bytes, 4u << 20);
    assert_int_equal(fdt_amdgpu_arch_find("gfx906")->vgprs_per_lane, 256);
    assert_int_equal(fdt_amdgpu_arch_find("gfx906")->max_waves_per_eu, 10);
    assert_int_equal(fdt_amdgpu_arch_find("gfx1100")->wavefront, 32);
    const char *unknown[] = {"gfx9", "gfx90", "gfx90ab", "sm_90", ""};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        assert_int_equal(fdt_amdgpu_arch_device(unknown[i], &d), -1);
        assert_null(fdt_amdgpu_arch_find(unknown[i]));
    }
}

/* Only a device whose vendor is AMD gets the AMD profile on its own: the cpu backend on an
 * AMD host says "AuthenticAMD", and keeps the NVIDIA lists unless --space amd asks. */
static void test_space_profile_follows_the_vendor(void **state)
{
    (void)state;
    const fdt_space_filter automatic = {0}, asked = {.space = FDT_SPACE_AMD};
    fdt_device_info d = host;
    strcpy(d.vendor, "AuthenticAMD");
    assert_int_equal(fdt_space_profile_for(&automatic, &d), FDT_SPACE_NVIDIA);
    assert_int_equal(fdt_space_profile_for(&asked, &d), FDT_SPACE_AMD);
    assert_int_equal(fdt_amdgpu_arch_device("gfx906", &d), 0);
    assert_int_equal(fdt_space_profile_for(&automatic, &d), FDT_SPACE_AMD);
    fdt_space_profile s;
    assert_int_equal(fdt_space_profile_parse("amd", &s), 0);
    assert_int_equal(s, FDT_SPACE_AMD);
    assert_int_equal(fdt_space_profile_parse("nvidia", &s), 0);
    assert_int_equal(s, FDT_SPACE_NVIDIA);
    assert_string_equal(fdt_space_profile_name(FDT_SPACE_AUTO), "auto");
    assert_int_equal(fdt_space_profile_parse("AMD", &s), -1);
    assert_int_equal(fdt_space_profile_parse("", &s), -1);
}

/* What the AMD profile offers on one device and shape, family by family. */
static size_t check_amd_profile(const fdt_problem *p, const fdt_device_info *dev)
{
    size_t n, nt_off = 0, banded = 0;
    fdt_variant *vs = space(p, dev, NULL, &n);
    for (size_t i = 0; i < n; i++) {
        const fdt_variant *v = &vs[i];
        const char *family = fdt_family_name(v->family);
        const int naive = strcmp(family, "naive") == 0;
        assert_int_equal(v->lb, 1);
        assert_int_equal((v->bx * v->by * v->bz) % 64, 0);
        assert_true(v->wpe == 0 || v->wpe == 2 || v->wpe == 4);
        nt_off += !v->nt;
        assert_true(v->nt || naive);
        if (fdt_family_z_chunks(v->family))
            assert_true(strcmp(family, "zvec") == 0 ? v->mz >= 8 && v->mz <= 32
                                                    : v->mz >= 32 && v->mz <= 256);
        if (strcmp(family, "xytile") == 0)
            assert_true(v->m * (2 * p->radius + 1) <= 20);
        if (v->band) {
            banded++;
            assert_true(strcmp(family, "zvec") == 0 || strcmp(family, "tiled") == 0);
            assert_true(v->band >= 8 && v->band < p->ny && v->band % (v->by * v->m) == 0);
        }
        assert_null(fdt_variant_check(v, p, dev));
    }
    assert_true(nt_off > 0);
    if (p->nx >= 1024)
        assert_true(banded > 0);
    free(vs);
    return n;
}

/* The AMD profile on gfx90a and gfx906 at 256^3, 512^3 and 1024^3 R=1 double: its rules
 * hold, and its size is of the NVIDIA space's order (2108 at 512^3). */
static void test_amd_profile_on_gfx90a_and_gfx906(void **state)
{
    (void)state;
    const char *archs[] = {"gfx90a", "gfx906"};
    for (int a = 0; a < 2; a++) {
        fdt_device_info dev;
        assert_int_equal(fdt_amdgpu_arch_device(archs[a], &dev), 0);
        for (int side = 256; side <= 1024; side *= 2) {
            const fdt_problem p = {.stencil = "laplacian", .nx = side, .ny = side, .nz = side,
                                   .radius = 1, .precision = FDT_DOUBLE};
            const size_t n = check_amd_profile(&p, &dev);
            print_message("amd space on %s at %d^3 R=1 double: %zu variants\n", archs[a], side,
                          n);
            assert_true(n >= 800 && n <= 2500);
        }
        const fdt_problem r4 = {.stencil = "laplacian", .nx = 512, .ny = 512, .nz = 512,
                                .radius = 4, .precision = FDT_FLOAT};
        check_amd_profile(&r4, &dev);
    }
}

/* The largest band of zvec:64x1x1:mz32 (wpe unset) on dev: whole block rows of one row. */
static int largest_band(const fdt_problem *p, const fdt_device_info *dev)
{
    size_t n;
    int largest = 0;
    fdt_variant *vs = space(p, dev, "zvec", &n);
    for (size_t i = 0; i < n; i++)
        if (vs[i].bx == 64 && vs[i].by == 1 && vs[i].mz == 32 && !vs[i].wpe &&
            vs[i].band > largest)
            largest = vs[i].band;
    free(vs);
    return largest;
}

/* Bands are sized in bytes against the L2: the rows whose planes in flight, mz + 2R planes
 * of nx points, fill it (1024 * 8 * 34 bytes a row: 30 rows in 8 MiB), twice as many with
 * twice the L2, none without one said. */
static void test_bands_follow_the_l2(void **state)
{
    (void)state;
    const fdt_problem wide = {.stencil = "laplacian", .nx = 1024, .ny = 1024, .nz = 1024,
                              .radius = 1, .precision = FDT_DOUBLE};
    fdt_device_info dev;
    assert_int_equal(fdt_amdgpu_arch_device("gfx90a", &dev), 0);
    assert_int_equal(largest_band(&wide, &dev), 30);
    dev.l2_bytes *= 2;
    assert_int_equal(largest_band(&wide, &dev), 60);
    assert_int_equal(fdt_amdgpu_arch_device("gfx906", &dev), 0);
    assert_int_equal(largest_band(&wide, &dev), 15);
    dev.l2_bytes = 0;
    assert_int_equal(largest_band(&wide, &dev), 0);
}

/* wpe reaches the kernel as FDT_WPE, which common.h turns into AMD's attribute; a variant
 * without it has the defines it always had. */
static void test_waves_per_eu_is_a_define(void **state)
{
    (void)state;
    fdt_variant v;
    fdt_defines d;
    char err[128], name[FDT_VARIANT_NAME_MAX];
    assert_int_equal(fdt_variant_parse("zmarch:64x1x1:mz32:lb:nt:w2", &v, err, sizeof err), 0);
    assert_int_equal(v.wpe, 2);
    fdt_variant_name(&v, name, sizeof name);
    assert_string_equal(name, "zmarch:64x1x1:mz32:lb:nt:w2");
    fdt_variant_defines(&v, &cube, &d);
    assert_string_equal(d.list[d.count - 1], "FDT_WPE=2");
    v.wpe = 0;
    fdt_variant_defines(&v, &cube, &d);
    for (size_t i = 0; i < d.count; i++)
        assert_null(strstr(d.list[i], "FDT_WPE"));
    assert_non_null(strstr(fdt_family_source(v.family), "amdgpu_waves_per_eu(FDT_WPE)"));
}

/* A chunk longer than the grid needs still runs: the check lets it pass, and only the
 * enumeration leaves it out, the shortest chunk that covers the grid standing for it. */
static void test_longer_chunks_run_but_are_not_offered(void **state)
{
    (void)state;
    const fdt_problem small = {.stencil = "laplacian", .nx = 64, .ny = 64, .nz = 20, .radius = 1,
                               .precision = FDT_DOUBLE};
    fdt_variant v;
    char err[128];
    assert_int_equal(fdt_variant_parse("zmarch:64x1x1:mz64:lb", &v, err, sizeof err), 0);
    assert_null(fdt_variant_check(&v, &small, &nvidia));
    size_t n;
    fdt_variant *vs = space(&small, &nvidia, "zmarch", &n);
    for (size_t i = 0; i < n; i++)
        assert_true(vs[i].mz <= 32);
    free(vs);
}

/* The CLI's help names every family a user may pick, in the table's order: a family added
 * or taken out without the help changing fails here. */
static void test_help_names_every_family(void **state)
{
    (void)state;
    char names[256] = "";
    for (int spec = 0; spec <= 1; spec++)
        for (const fdt_family *const *f = fdt_families(); *f; f++) {
            if (fdt_family_test_only(*f) || fdt_family_serves_specs(*f) != spec)
                continue;
            const int first_of_specs = spec && !strstr(names, ";");
            if (names[0])
                strcat(names, first_of_specs ? "; for a spec: " : ", ");
            strcat(names, fdt_family_name(*f));
        }
    assert_string_equal(names, FDT_FAMILIES_HELP);
}

/* Every built-in source has its hash, which finds it again: the answers' source_hash and
 * the "source" operation (the table that holds them is bounded). */
static void test_built_in_sources_have_hashes(void **state)
{
    (void)state;
    for (const fdt_family *const *f = fdt_families(); *f; f++) {
        const char *hash = fdt_built_in_hash(fdt_family_source(*f));
        char direct[33];
        assert_non_null(hash);
        fdt_source_hash(fdt_family_source(*f), direct);
        assert_string_equal(hash, direct);
        assert_ptr_equal(fdt_built_in_source(hash), fdt_family_source(*f));
    }
    assert_non_null(fdt_built_in_hash(fdt_persist_source()));
    assert_null(fdt_built_in_source("0123456789abcdef0123456789abcdef"));
}

static void check_names_round_trip(const fdt_problem *p, const fdt_device_info *dev,
                                   fdt_space_profile profile)
{
    const fdt_space_filter all = {.test_families = 1, .space = profile};
    const size_t n = fdt_space_enumerate(p, dev, &all, NULL, 0);
    assert_true(n > 0);
    fdt_variant *vs = calloc(n, sizeof *vs);
    fdt_space_enumerate(p, dev, &all, vs, n);
    char name[FDT_VARIANT_NAME_MAX], again[FDT_VARIANT_NAME_MAX], err[128];
    for (size_t i = 0; i < n; i++) {
        fdt_variant back;
        fdt_variant_name(&vs[i], name, sizeof name);
        assert_true(strlen(name) < FDT_VARIANT_NAME_MAX - 1);
        assert_int_equal(fdt_variant_parse(name, &back, err, sizeof err), 0);
        fdt_variant_name(&back, again, sizeof again);
        assert_string_equal(name, again);
        /* Field by field (every field of fdt_variant is the family or a parameter, as
         * test_every_field_is_a_parameter checks): the struct's tail padding holds whatever
         * the stack held. */
        assert_ptr_equal(back.family, vs[i].family);
        for (int q = 0; q < FDT_PARAMS; q++)
            assert_int_equal(fdt_param_value(&back, q), fdt_param_value(&vs[i], q));
    }
    free(vs);
}

/* Every field of fdt_variant after its family is one row of the parameters table, its own,
 * and every row says how a name spells it: a field added without a row, which no name,
 * define or answer would carry, fails here. */
static void test_every_field_is_a_parameter(void **state)
{
    (void)state;
    const fdt_param *params = fdt_params();
    const size_t first = offsetof(fdt_variant, family) + sizeof(const fdt_family *);
    unsigned taken = 0;
    for (int p = 0; p < FDT_PARAMS; p++) {
        const size_t field = (params[p].at - first) / sizeof(int);
        assert_true(params[p].at >= first && (params[p].at - first) % sizeof(int) == 0);
        assert_true(field < FDT_PARAMS && !(taken & 1u << field));
        taken |= 1u << field;
        assert_non_null(params[p].name);
        assert_non_null(params[p].define);
        const int worded = params[p].words[0] || params[p].words[1];
        assert_true(params[p].shows == FDT_SHOWS_BLOCK ? !params[p].prefix && !worded
                                                       : !params[p].prefix != !worded);
        assert_true(params[p].feature.group >= 0 &&
                    params[p].feature.group <= FDT_FEATURE_GROUPS);
    }
    const size_t align = _Alignof(fdt_variant), end = first + FDT_PARAMS * sizeof(int);
    assert_int_equal(sizeof(fdt_variant), (end + align - 1) / align * align);
}

/* The "Names" section of docs/kernels.md (tests run in the source tree), NUL-terminated. */
static char *names_section(void)
{
    FILE *f = fopen("docs/kernels.md", "r");
    assert_non_null(f);
    static char doc[1 << 16];
    const size_t n = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[n] = 0;
    char *section = strstr(doc, "\n## Names\n");
    assert_non_null(section);
    char *end = strstr(section + 1, "\n## ");
    if (end)
        *end = 0;
    return section;
}

/* The grammar the table makes: the block's sides, then each option a name may show, in the
 * order it shows them (chosen ones, then those set), as "[:prefix]" or "[:word|word]". */
static void table_grammar(char *out, size_t len)
{
    const fdt_param *params = fdt_params();
    size_t n = (size_t)snprintf(out, len, "family:");
    for (int p = 0; p < FDT_PARAMS; p++)
        if (params[p].shows == FDT_SHOWS_BLOCK)
            for (const char *c = params[p].name; *c && n + 2 < len; c++)
                out[n++] = (char)toupper((unsigned char)*c), out[n] = 0;
    for (fdt_param_shows shows = FDT_SHOWS_CHOSEN; shows <= FDT_SHOWS_SET; shows++)
        for (int p = 0; p < FDT_PARAMS; p++) {
            const fdt_param *q = &params[p];
            if (q->shows != shows)
                continue;
            n += (size_t)snprintf(out + n, len - n, "[:%s%s%s%s]", q->prefix ? q->prefix : "",
                                  q->words[0] ? q->words[0] : "",
                                  q->words[0] && q->words[1] ? "|" : "",
                                  q->words[1] ? q->words[1] : "");
        }
}

/* The docs' grammar (the section's first code span), its placeholders (<M>) left out and
 * the block's sides joined without their x. */
static void docs_grammar(const char *section, char *out, size_t len)
{
    const char *from = strstr(section, "`family:");
    assert_non_null(from);
    size_t n = 0;
    int placeholder = 0;
    for (const char *c = from + 1; *c && *c != '`' && n + 1 < len; c++) {
        placeholder = *c == '<' ? 1 : *c == '>' ? 0 : placeholder;
        if (!placeholder && *c != '>' && !(*c == 'x' && isupper((unsigned char)c[1])))
            out[n++] = *c;
    }
    out[n] = 0;
}

/* docs/kernels.md's "Names" says what the table does: its grammar has the table's options,
 * spelled and ordered as names have them, and every parameter has its row there, with its
 * define. */
static void test_docs_names_follow_the_table(void **state)
{
    (void)state;
    const char *section = names_section();
    char want[256], got[256], row[64];
    table_grammar(want, sizeof want);
    docs_grammar(section, got, sizeof got);
    assert_string_equal(got, want);
    for (int p = 0; p < FDT_PARAMS; p++) {
        snprintf(row, sizeof row, "`%s`", fdt_params()[p].name);
        assert_non_null(strstr(section, row));
        snprintf(row, sizeof row, "`%s`", fdt_params()[p].define);
        assert_non_null(strstr(section, row));
    }
}

/* Both profiles' names, the AMD one's with L2 bands and wpe, on a grid where bands exist. */
static void test_names_round_trip(void **state)
{
    (void)state;
    fdt_device_info gfx90a;
    assert_int_equal(fdt_amdgpu_arch_device("gfx90a", &gfx90a), 0);
    const fdt_problem wide = {.stencil = "laplacian", .nx = 1024, .ny = 1024, .nz = 1024,
                              .radius = 1, .precision = FDT_DOUBLE};
    check_names_round_trip(&cube, &nvidia, FDT_SPACE_AUTO);
    check_names_round_trip(&wide, &gfx90a, FDT_SPACE_AUTO);
    check_names_round_trip(&cube, &nvidia, FDT_SPACE_AMD);
}

/* The longest name the parser accepts fits FDT_VARIANT_NAME_MAX; a shorter buffer gets a
 * cut name and nothing past its end. */
static void test_names_fit_their_buffers(void **state)
{
    (void)state;
    fdt_variant v;
    char err[128], name[FDT_VARIANT_NAME_MAX], small[20 + 4];
    assert_int_equal(fdt_variant_parse("tiled:1024x1024x1024:m1024:asc:lb:nt:map:band65536:w16",
                                       &v, err, sizeof err), 0);
    fdt_variant_name(&v, name, sizeof name);
    assert_string_equal(name, "tiled:1024x1024x1024:m1024:asc:lb:nt:map:band65536:w16");
    memset(small, '#', sizeof small);
    fdt_variant_name(&v, small, 20);
    assert_int_equal(strlen(small), 19);
    assert_memory_equal(small + 20, "####", 4);
}

static void test_bad_names_are_rejected(void **state)
{
    (void)state;
    const char *bad[] = {"", "warp:256x1x1", "naive", "naive:256x1", "naive:0x1x1",
                         "naive:256x1x1:lbx", "tiled:64x1x1:m", "tiled:64x1x1:m-2",
                         "naive:256x1x1x", "zmarch:32x8x1:mz0", "zvec:32x8x1:mz2:band0",
                         "naive:2048x1x1", "zvec:1x1024x1:mz2:m4194304",
                         "zvec:32x8x1:mz2:band2147483647", "broken:256x1x1:bug10",
                         "zvec:64x1x1:mz8:w0", "zvec:64x1x1:mz8:w17", "zvec:64x1x1:mz8:w2x",
                         "naive:256x1x1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fdt_variant v;
        char err[128] = "";
        assert_int_equal(fdt_variant_parse(bad[i], &v, err, sizeof err), -1);
        assert_true(strlen(err) > 0);
    }
}

/* The launch covers every interior point of every shape: no divisibility assumptions. Both
 * precisions, since a zvec thread's x extent is a 16-byte vector: 2 doubles or 4 floats. */
static void check_geometry_covers(const fdt_problem *p)
{
    size_t n;
    fdt_variant *vs = space(p, &nvidia, NULL, &n);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        fdt_dim3 g, b;
        fdt_variant_geometry(&vs[i], p, &g, &b);
        const fdt_dim3 cover = vs[i].map ? (fdt_dim3){g.z, g.x, g.y} : g;
        assert_true((long)cover.x * b.x * fdt_variant_points_x(&vs[i], p) >= p->nx);
        assert_true((long)cover.y * b.y * vs[i].m >= p->ny);
        if (fdt_family_z_chunks(vs[i].family))
            assert_true((long)cover.z * vs[i].mz >= p->nz - 2 * p->radius);
        else
            assert_true((long)cover.z * b.z >= p->nz);
    }
    free(vs);
}

static void test_geometry_covers_odd_shapes(void **state)
{
    (void)state;
    const int shapes[][3] = {{13, 17, 11}, {33, 9, 21}, {100, 200, 300}, {9, 9, 9}};
    for (size_t s = 0; s < 4; s++)
        for (int radius = 1; radius <= 4; radius *= 2)
            for (int precision = FDT_FLOAT; precision <= FDT_DOUBLE; precision++) {
                fdt_problem p = {.stencil = "laplacian", .nx = shapes[s][0], .ny = shapes[s][1],
                                 .nz = shapes[s][2], .radius = radius, .precision = precision};
                if (!fdt_problem_check(&p))
                    check_geometry_covers(&p);
            }
}

static void test_problem_check(void **state)
{
    (void)state;
    fdt_problem p = cube;
    assert_null(fdt_problem_check(&p));
    p.nx = 2;
    assert_non_null(fdt_problem_check(&p));
    p = cube;
    p.radius = 4;
    p.nz = 8;
    assert_non_null(fdt_problem_check(&p));
    p.nz = 9;
    assert_null(fdt_problem_check(&p));
    p.radius = 5;
    assert_non_null(fdt_problem_check(&p));
    p = cube;
    p.ny = FDT_MAX_SIDE + 1;
    assert_non_null(fdt_problem_check(&p));
}

static void test_defines_pick_wide_indices_only_when_needed(void **state)
{
    (void)state;
    fdt_variant v = fdt_variant_kernel1(&cube);
    fdt_defines d;
    fdt_variant_defines(&v, &cube, &d);
    assert_string_equal(d.list[0], "FDT_REAL=double");
    assert_string_equal(d.list[1], "FDT_IDX=int");
    fdt_problem big = {.stencil = "laplacian", .nx = 2048, .ny = 1024, .nz = 1024, .radius = 1,
                       .precision = FDT_FLOAT};
    fdt_variant_defines(&v, &big, &d);
    assert_string_equal(d.list[0], "FDT_REAL=float");
    assert_string_equal(d.list[1], "FDT_IDX=long long");
    /* the storage counts, padding included: 2000 x 1024 x 1024 points fit an int, rows of
     * 2048 do not (the compare kernel walks them all) */
    big.nx = 2000;
    fdt_variant_defines(&v, &big, &d);
    assert_string_equal(d.list[1], "FDT_IDX=int");
    big.pitch = 2048;
    fdt_variant_defines(&v, &big, &d);
    assert_string_equal(d.list[1], "FDT_IDX=long long");
}

/* The Laplacian's ideal bytes: the seeds' formula for R = 1, in elements. */
static void test_effective_bytes_match_the_seed_formula(void **state)
{
    (void)state;
    const fdt_stencil *laplacian = fdt_stencil_find("laplacian");
    assert_non_null(laplacian);
    const int shapes[][3] = {{512, 512, 512}, {100, 200, 300}, {13, 17, 11}};
    for (size_t s = 0; s < 3; s++) {
        const double nx = shapes[s][0], ny = shapes[s][1], nz = shapes[s][2];
        fdt_problem p = {.stencil = "laplacian", .nx = shapes[s][0], .ny = shapes[s][1],
                         .nz = shapes[s][2], .radius = 1, .precision = FDT_DOUBLE};
        const double seed = (nx * ny * nz - 8 - 4 * (nx - 2) - 4 * (ny - 2) - 4 * (nz - 2)) +
                            (nx - 2) * (ny - 2) * (nz - 2);
        assert_near(fdt_stencil_ideal_bytes(laplacian, &p), seed * 8, 1e-6);
        p.precision = FDT_FLOAT;
        assert_near(fdt_stencil_ideal_bytes(laplacian, &p), seed * 4, 1e-6);
    }
    /* Radius 2 on 5^3: one interior point, its 12 arm points, written once: 14 elements. */
    fdt_problem tiny = {.stencil = "laplacian", .nx = 5, .ny = 5, .nz = 5, .radius = 2,
                        .precision = FDT_DOUBLE};
    assert_near(fdt_stencil_ideal_bytes(laplacian, &tiny), 14 * 8, 1e-9);
}

/* Cache mode auto's rule: faster by more than either spread and by the least gain. */
static void test_faster_by_more_than_noise(void **state)
{
    (void)state;
    const fdt_stats hot = {.median_ms = 1.00, .q1_ms = 0.995, .q3_ms = 1.005};
    fdt_stats other = {.median_ms = 0.98, .q1_ms = 0.978, .q3_ms = 0.982};
    assert_true(fdt_stats_faster(&hot, &other, 0.005));
    assert_false(fdt_stats_faster(&other, &hot, 0.005));
    other.median_ms = 0.996; /* inside 0.5% */
    assert_false(fdt_stats_faster(&hot, &other, 0.005));
    other = (fdt_stats){.median_ms = 0.98, .q1_ms = 0.95, .q3_ms = 1.01}; /* noisy */
    assert_false(fdt_stats_faster(&hot, &other, 0.005));
    assert_false(fdt_stats_faster(&hot, &other, 0.0));
    other = (fdt_stats){.median_ms = 0.90, .q1_ms = 0.85, .q3_ms = 0.91};
    assert_true(fdt_stats_faster(&hot, &other, 0.005));
}

static void test_stats(void **state)
{
    (void)state;
    double samples[] = {5, 1, 4, 2, 3};
    fdt_stats s;
    fdt_stats_compute(samples, 5, 7, &s);
    assert_near(s.median_ms, 3, 1e-12);
    assert_near(s.min_ms, 1, 1e-12);
    assert_near(s.q1_ms, 2, 1e-12);
    assert_near(s.q3_ms, 4, 1e-12);
    assert_int_equal(s.reps, 7);
    double even[] = {4, 1, 3, 2};
    fdt_stats_compute(even, 4, 1, &s);
    assert_near(s.median_ms, 2.5, 1e-12);
    assert_near(fdt_gbps(2e9, 1000), 2, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_family_has_variants_and_all_pass_their_constraints),
        cmocka_unit_test(test_constraints_prune_by_device),
        cmocka_unit_test(test_shared_memory_limits_smem),
        cmocka_unit_test(test_shared_memory_of_xytile_rounds_the_halo),
        cmocka_unit_test(test_shared_memory_of_stile_is_the_specs),
        cmocka_unit_test(test_compiled_kernel_must_fit_the_block),
        cmocka_unit_test(test_bands_are_pruned_where_they_change_nothing),
        cmocka_unit_test(test_nvidia_space_is_as_it_was),
        cmocka_unit_test(test_ring_shared_memory_and_where_it_runs),
        cmocka_unit_test(test_amdgpu_arch_devices),
        cmocka_unit_test(test_space_profile_follows_the_vendor),
        cmocka_unit_test(test_amd_profile_on_gfx90a_and_gfx906),
        cmocka_unit_test(test_bands_follow_the_l2),
        cmocka_unit_test(test_waves_per_eu_is_a_define),
        cmocka_unit_test(test_longer_chunks_run_but_are_not_offered),
        cmocka_unit_test(test_built_in_sources_have_hashes),
        cmocka_unit_test(test_help_names_every_family),
        cmocka_unit_test(test_names_round_trip),
        cmocka_unit_test(test_every_field_is_a_parameter),
        cmocka_unit_test(test_docs_names_follow_the_table),
        cmocka_unit_test(test_bad_names_are_rejected),
        cmocka_unit_test(test_names_fit_their_buffers),
        cmocka_unit_test(test_geometry_covers_odd_shapes),
        cmocka_unit_test(test_problem_check),
        cmocka_unit_test(test_defines_pick_wide_indices_only_when_needed),
        cmocka_unit_test(test_effective_bytes_match_the_seed_formula),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_faster_by_more_than_noise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
