/* test_query.c - how a query picks its answer when the asked shape or device was not tuned:
 * the device levels of the fallback and the L2-aware distance between shapes; and the
 * configuration it answers, as libfdtune reads it, and the version libfdtune says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/query.h"
#include "fdtune.h"
#include "version.h"

static fdt_device_info h100(void)
{
    fdt_device_info d = {.compute_units = 132, .memory_bytes = 85017493504ull,
                         .l2_bytes = 50u << 20};
    strcpy(d.backend, "cuda");
    strcpy(d.vendor, "NVIDIA");
    strcpy(d.name, "NVIDIA H100 80GB HBM3");
    strcpy(d.arch, "sm_90");
    strcpy(d.driver_version, "CUDA driver 13.0");
    strcpy(d.compiler_version, "NVRTC 13.0");
    return d;
}

static void test_device_levels(void **state)
{
    (void)state;
    const fdt_device_info asked = h100();
    fdt_device_info other = asked;
    assert_int_equal(fdt_query_level(&asked, &other), FDT_LEVEL_FINGERPRINT);
    strcpy(other.driver_version, "CUDA driver 12.4");
    assert_int_equal(fdt_query_level(&asked, &other), FDT_LEVEL_MODEL);
    other = asked;
    strcpy(other.compiler_version, "NVRTC 12.4");
    assert_int_equal(fdt_query_level(&asked, &other), FDT_LEVEL_MODEL);
    /* The same name with fewer SMs (a partitioned or cut-down part) is not the same model. */
    other = asked;
    other.compute_units = 114;
    assert_int_equal(fdt_query_level(&asked, &other), FDT_LEVEL_ARCH);
    other = asked;
    strcpy(other.name, "NVIDIA H100 PCIe");
    assert_int_equal(fdt_query_level(&asked, &other), FDT_LEVEL_ARCH);
    other = asked;
    strcpy(other.arch, "sm_80");
    assert_int_equal(fdt_query_level(&asked, &other), FDT_LEVEL_NONE);
    other = asked;
    strcpy(other.backend, "hip");
    assert_int_equal(fdt_query_level(&asked, &other), FDT_LEVEL_NONE);
}

static fdt_best tuned(int nx, int ny, int nz)
{
    fdt_best b = {.key.problem = {.stencil = "laplacian", .nx = nx, .ny = ny, .nz = nz, .radius = 1,
                                  .precision = FDT_DOUBLE}};
    return b;
}

static void test_same_shape_is_distance_zero(void **state)
{
    (void)state;
    const fdt_best b = tuned(100, 200, 300);
    assert_true(fdt_query_distance(&b.key.problem, &b.key.problem, 50u << 20) == 0.0);
}

/* Three 2048x2048 planes of doubles (96 MiB) overflow an L2 of 50 MiB; three 2048x1024
 * planes (48 MiB) fit. The half-plane shape is closer by size (and by element count, what
 * Kernel Launcher goes by), but it runs in the other regime: the wide, deep shape wins. */
static void test_l2_regime_wins_over_size(void **state)
{
    (void)state;
    const fdt_problem asked = {.stencil = "laplacian", .nx = 2048, .ny = 2048, .nz = 4, .radius = 1,
                               .precision = FDT_DOUBLE};
    const fdt_best c[] = {tuned(2048, 1024, 4), tuned(2048, 2048, 128)};
    double d = -1;
    assert_int_equal(fdt_query_nearest(&asked, c, 2, 50u << 20, &d), 1);
    assert_true(d == 1.25);
    /* With an L2 that holds both, the regimes agree and the closer size wins. */
    assert_int_equal(fdt_query_nearest(&asked, c, 2, 1ull << 40, &d), 0);
    assert_true(d == 1.0);
}

static void test_plane_then_nx_then_nz(void **state)
{
    (void)state;
    const fdt_problem asked = {.stencil = "laplacian", .nx = 256, .ny = 256, .nz = 256, .radius = 1,
                               .precision = FDT_DOUBLE};
    const uint64_t l2 = 50u << 20;
    /* Same plane, other nz beats another plane with the same nz. */
    const fdt_best a[] = {tuned(512, 256, 256), tuned(256, 256, 1024)};
    double d;
    assert_int_equal(fdt_query_nearest(&asked, a, 2, l2, &d), 1);
    /* Same plane size, nx differs: the one with the asked nx wins. */
    const fdt_best b[] = {tuned(128, 512, 256), tuned(256, 256, 128)};
    assert_int_equal(fdt_query_nearest(&asked, b, 2, l2, &d), 1);
    assert_int_equal(fdt_query_nearest(&asked, b, 0, l2, &d), -1);
}

static void test_ties_go_to_the_larger_shape(void **state)
{
    (void)state;
    const fdt_problem asked = {.stencil = "laplacian", .nx = 256, .ny = 256, .nz = 256, .radius = 1,
                               .precision = FDT_DOUBLE};
    const fdt_best c[] = {tuned(256, 256, 128), tuned(256, 256, 512)};
    double d;
    assert_int_equal(fdt_query_nearest(&asked, c, 2, 50u << 20, &d), 1);
    const fdt_best r[] = {tuned(256, 256, 512), tuned(256, 256, 128)};
    assert_int_equal(fdt_query_nearest(&asked, r, 2, 50u << 20, &d), 0);
}

static void test_config_is_for_the_asked_shape(void **state)
{
    (void)state;
    const fdt_problem asked = {.stencil = "laplacian", .nx = 100, .ny = 200, .nz = 300, .radius = 1,
                               .precision = FDT_FLOAT};
    json_t *c = fdt_query_config_json("tiled:64x2x2:m8:seed", &asked);
    assert_non_null(c);
    char *text = json_dumps(c, JSON_COMPACT);
    /* ceil(100/64), ceil(200/(2*8)), ceil(300/2) */
    assert_non_null(strstr(text, "\"block\":[64,2,2],\"grid\":[2,13,150]"));
    assert_non_null(strstr(text, "\"sources\":[\"common.h\",\"tiled.hip\"]"));
    assert_non_null(strstr(text, "\"FDT_REAL=float\""));
    assert_non_null(strstr(text, "\"shared_bytes\":0")); /* tiled's is static, if any */
    free(text);
    json_decref(c);
    assert_null(fdt_query_config_json("warp:1x1x1", &asked));
}

/* A ring's answer says the dynamic shared memory to launch with: 7 tiles of (64 + 2 x 4) x
 * (16 + 2 x 4) floats at R = 4 (docs/protocol.md, config.shared_bytes). */
static void test_config_says_the_rings_shared_bytes(void **state)
{
    (void)state;
    const fdt_problem asked = {.stencil = "laplacian", .nx = 512, .ny = 256, .nz = 128,
                               .radius = 4, .precision = FDT_FLOAT};
    json_t *c = fdt_query_config_json("ring:16x4x1:m4:mz64:lb", &asked);
    assert_non_null(c);
    assert_int_equal(json_integer_value(json_object_get(c, "shared_bytes")), 7 * 72 * 24 * 4);
    json_decref(c);
}

/* An answer measured in cache mode persist, the daemon's config with its persist object,
 * read back by libfdtune's parser. */
static char *persist_answer(const fdt_problem *asked, json_t *persist)
{
    json_t *config = fdt_query_config_json("zvec:16x16x1:mz4:lb:nt", asked);
    assert_non_null(config);
    json_object_set_new(config, "persist", persist);
    json_t *answer = json_pack("{s:b, s:s, s:o}", "ok", 1, "match", "exact", "config", config);
    char *line = json_dumps(answer, JSON_COMPACT);
    json_decref(answer);
    return line;
}

static void test_persist_step_reaches_the_solver(void **state)
{
    (void)state;
    const fdt_problem asked = {.stencil = "laplacian", .nx = 100, .ny = 300, .nz = 70, .radius = 1,
                               .precision = FDT_DOUBLE, .cache = FDT_CACHE_PERSIST};
    char *line = persist_answer(&asked, fdt_query_persist_json(&asked));
    fdtune_answer a;
    char err[256] = "";
    assert_int_equal(fdtune_answer_parse(line, &a, err, sizeof err), FDTUNE_OK);
    assert_true(a.persist.present);
    assert_string_equal(a.persist.entry, "fdt_persist_edges");
    assert_int_equal(a.persist.nsources, 2);
    assert_string_equal(a.persist.sources[1], "persist.hip");
    /* One thread per row of f: nz blocks in x, ceil(300 / 256) in y. */
    const int grid[3] = {70, 2, 1}, block[3] = {256, 1, 1};
    assert_memory_equal(a.persist.grid, grid, sizeof grid);
    assert_memory_equal(a.persist.block, block, sizeof block);
    assert_string_equal(a.variant, "zvec:16x16x1:mz4:lb:nt");
    free(line);

    line = persist_answer(&asked, json_string("fdt_persist_edges"));
    assert_int_equal(fdtune_answer_parse(line, &a, err, sizeof err), FDTUNE_ERR_ANSWER);
    assert_non_null(strstr(err, "\"persist\" is not an object"));
    free(line);

    /* Answers of the other cache modes carry no persist step. */
    json_t *hot = json_pack("{s:b, s:s, s:o}", "ok", 1, "match", "exact", "config",
                            fdt_query_config_json("naive:256x1x1", &asked));
    line = json_dumps(hot, JSON_COMPACT);
    assert_int_equal(fdtune_answer_parse(line, &a, err, sizeof err), FDTUNE_OK);
    assert_false(a.persist.present);
    free(line);
    json_decref(hot);
}

/* The public header's version is the project's (common/version.h), and so is the library's. */
static void test_the_version_is_one(void **state)
{
    (void)state;
    assert_string_equal(FDTUNE_VERSION, FDT_VERSION);
    assert_string_equal(fdtune_version(), FDT_VERSION);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_version_is_one),
        cmocka_unit_test(test_device_levels),
        cmocka_unit_test(test_same_shape_is_distance_zero),
        cmocka_unit_test(test_l2_regime_wins_over_size),
        cmocka_unit_test(test_plane_then_nx_then_nz),
        cmocka_unit_test(test_ties_go_to_the_larger_shape),
        cmocka_unit_test(test_config_is_for_the_asked_shape),
        cmocka_unit_test(test_config_says_the_rings_shared_bytes),
        cmocka_unit_test(test_persist_step_reaches_the_solver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
