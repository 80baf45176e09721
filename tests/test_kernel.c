/* test_kernel.c - libfdtune's kernel API on the cpu backend (a real host compiler, real
 * modules, a real disk cache): the Laplacian it loads computes the stencil in both
 * precisions and leaves the boundary alone; every way the tuned path can fail ends in
 * kernel 1 with the reason; the disk cache serves a second open, rebuilds a damaged module
 * and refuses a directory others may write, a module file of another uid or one others may
 * write, and a FIFO in a module's place without blocking on it; an answer cannot get its own
 * defines, entry or launch compiled; bad arguments are errors, never crashes; a kernel
 * launches in its layout (asked, or the answer's with pitch auto), on fields
 * fdtune_field_alloc aligns as that layout says, and fdtune_kernel_check_field tells a
 * misaligned field; the layout goes on the wire and comes back from it. The tuned path
 * against a real daemon, from an installed tree, is tests/test_install.sh's; a daemon of
 * another uid, tests/test_client_trust.sh's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client_json.h"
#include "hashes.h"
#include "engine/variant.h"
#include "fdtune_kernel.h"

static char cache_root[] = "/tmp/fdt-test-kernel-XXXXXX";
static int case_number;

typedef struct fixture {
    fdtune_device *dev;
    fdtune_kernel_options o; /* a fresh cache dir per test, no daemon */
    char cache[sizeof cache_root + 32];
    char err[4096];
    char note[sizeof ((fdtune_kernel_info *)0)->note]; /* open_tally's last kernel's */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->cache, sizeof f->cache, "%s/%d", cache_root, case_number++);
    f->o = (fdtune_kernel_options){.socket = "/nonexistent/fdtuned.sock", .cache_dir = f->cache};
    if (fdtune_device_open("cpu", -1, NULL, &f->dev, f->err, sizeof f->err) != FDTUNE_OK) {
        fprintf(stderr, "cpu device: %s\n", f->err);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    fdtune_device_close(f->dev);
    free(f);
    return 0;
}

/* The radius-1 Laplacian at interior point p of a double grid of row pitch `pitch`. */
static double reference(const double *u, int pitch, int ny, size_t p, const double c[3])
{
    const size_t line = (size_t)pitch, slice = (size_t)pitch * ny;
    return c[0] * (u[p - 1] - 2 * u[p] + u[p + 1]) +
           c[1] * (u[p - line] - 2 * u[p] + u[p + line]) +
           c[2] * (u[p - slice] - 2 * u[p] + u[p + slice]);
}

/* Launches k on random u, in fields of k's layout (host memory: the cpu backend's device),
 * and checks every point: f's interior is the Laplacian, its boundary and the rows' padding
 * as they were (-7). u's padding is NaN, so a kernel that reads it spoils a point of f. */
static void check_laplacian(fdtune_kernel *k, const fdtune_problem *p, char *err, size_t len)
{
    const int pitch = fdtune_kernel_get_info(k)->layout.pitch;
    const size_t n = (size_t)pitch * p->ny * p->nz;
    const int single = p->precision == FDTUNE_FLOAT;
    double *u = malloc(n * sizeof *u);
    void *ud, *fd;
    assert_int_equal(fdtune_field_alloc(k, &ud, err, len), FDTUNE_OK);
    assert_int_equal(fdtune_field_alloc(k, &fd, err, len), FDTUNE_OK);
    const double c[3] = {1.5, 0.75, 2.25};
    for (size_t i = 0; i < n; i++) {
        u[i] = (int)(i % pitch) < p->nx ? (double)rand() / RAND_MAX - 0.5 : NAN;
        if (single)
            ((float *)ud)[i] = (float)u[i], u[i] = ((float *)ud)[i], ((float *)fd)[i] = -7;
        else
            ((double *)ud)[i] = u[i], ((double *)fd)[i] = -7;
    }
    assert_int_equal(fdtune_kernel_launch(k, fd, ud, c[0], c[1], c[2], err, len), FDTUNE_OK);
    size_t at = 0;
    for (int z = 0; z < p->nz; z++)
        for (int y = 0; y < p->ny; y++)
            for (int x = 0; x < pitch; x++, at++) {
                const int inside = x > 0 && y > 0 && z > 0 && x < p->nx - 1 &&
                                   y < p->ny - 1 && z < p->nz - 1;
                const double got = single ? ((float *)fd)[at] : ((double *)fd)[at];
                const double want = inside ? reference(u, pitch, p->ny, at, c) : -7;
                if (!(fabs(got - want) <= (single ? 1e-5 : 1e-12) * 16))
                    fail_msg("f at (%d,%d,%d) of pitch %d is %g, not %g", x, y, z, pitch, got,
                             want);
            }
    fdtune_field_free(k, ud);
    fdtune_field_free(k, fd);
    free(u);
}

static void test_kernel1_computes_the_laplacian(void **state)
{
    fixture *f = *state;
    f->o.kernel1 = 1;
    for (int single = 0; single < 2; single++) {
        const fdtune_problem p = {.nx = 13, .ny = 11, .nz = 9,
                                  .precision = single ? FDTUNE_FLOAT : FDTUNE_DOUBLE};
        fdtune_kernel *k;
        assert_int_equal(fdtune_kernel_open(f->dev, &p, &f->o, &k, f->err, sizeof f->err),
                         FDTUNE_OK);
        const fdtune_kernel_info *info = fdtune_kernel_get_info(k);
        assert_int_equal(info->tuned, 0);
        assert_string_equal(info->variant, "naive:256x1x1");
        assert_non_null(strstr(info->reason, "kernel 1 was asked for"));
        check_laplacian(k, &p, f->err, sizeof f->err);
        fdtune_kernel_close(k);
    }
}

static void test_no_daemon_falls_back_with_the_reason(void **state)
{
    fixture *f = *state;
    const fdtune_problem p = {.nx = 16, .ny = 16, .nz = 16};
    fdtune_kernel *k;
    assert_int_equal(fdtune_kernel_open(f->dev, &p, &f->o, &k, f->err, sizeof f->err),
                     FDTUNE_OK);
    assert_int_equal(fdtune_kernel_get_info(k)->tuned, 0);
    assert_non_null(strstr(fdtune_kernel_get_info(k)->reason,
                           "cannot connect to fdtuned at /nonexistent/fdtuned.sock"));
    check_laplacian(k, &p, f->err, sizeof f->err);
    fdtune_kernel_close(k);
}

/* The answer fdtuned writes for variant on problem p, with a source hash nobody has. */
static fdtune_answer answer_for(const char *variant, const fdtune_problem *p)
{
    const fdt_problem q = {.stencil = "laplacian", .nx = p->nx, .ny = p->ny, .nz = p->nz,
                           .radius = 1,
                           .precision = p->precision == FDTUNE_FLOAT ? FDT_FLOAT : FDT_DOUBLE,
                           .pitch = p->pitch == FDTUNE_PITCH_AUTO ? 0 : p->pitch,
                           .offset = p->offset};
    fdt_variant v;
    assert_int_equal(fdt_variant_parse(variant, &v, NULL, 0), 0);
    fdt_defines d;
    fdt_variant_defines(&v, &q, &d);
    fdt_dim3 grid, block;
    fdt_variant_geometry(&v, &q, &grid, &block);
    fdtune_answer a = {.match = "exact", .ndefines = (int)d.count,
                       .block = {(int)block.x, (int)block.y, (int)block.z},
                       .grid = {(int)grid.x, (int)grid.y, (int)grid.z},
                       .source_hash = "0123456789abcdef0123456789abcdef",
                       .entry = "fdt_laplacian"};
    snprintf(a.variant, sizeof a.variant, "%s", variant);
    for (size_t i = 0; i < d.count; i++)
        snprintf(a.defines[i], sizeof a.defines[i], "%s", d.list[i]);
    return a;
}

/* Loads a, which must fall back to kernel 1 with a reason holding why. */
static void expect_fallback(fixture *f, const fdtune_problem *p, const fdtune_answer *a,
                            const char *why)
{
    fdtune_kernel *k;
    assert_int_equal(fdtune_kernel_load(f->dev, NULL, p, a, &f->o, &k, f->err, sizeof f->err),
                     FDTUNE_OK);
    const fdtune_kernel_info *info = fdtune_kernel_get_info(k);
    if (info->tuned || !strstr(info->reason, why))
        fail_msg("expected a fallback because \"%s\"; tuned %d, reason \"%s\"", why,
                 info->tuned, info->reason);
    assert_string_equal(info->variant, "naive:256x1x1");
    check_laplacian(k, p, f->err, sizeof f->err);
    fdtune_kernel_close(k);
}

static void test_unusable_answers_fall_back(void **state)
{
    fixture *f = *state;
    const fdtune_problem p = {.nx = 16, .ny = 16, .nz = 16};
    expect_fallback(f, &p, NULL, "no answer was given");
    fdtune_answer a = answer_for("zmarch:32x4x1:mz8", &p);
    expect_fallback(f, &p, &a, "no daemon can send its source");
    snprintf(a.match, sizeof a.match, "default");
    expect_fallback(f, &p, &a, "tuned nothing near this problem");
    a = answer_for("zmarch:32x4x1:mz8", &p);
    a.source_hash[0] = '\0';
    expect_fallback(f, &p, &a, "names no source hash");
    const fdtune_problem single = {.nx = 16, .ny = 16, .nz = 16, .precision = FDTUNE_FLOAT};
    expect_fallback(f, &single, &a, "names no source hash");
    a = answer_for("zmarch:32x4x1:mz8", &p);
    expect_fallback(f, &single, &a, "defines for zmarch:32x4x1:mz8 are not this library's");
    a.ndefines = 99;
    expect_fallback(f, &p, &a, "the answer has 99 defines");
}

/* What an answer names is rebuilt by the library: a define, an entry or a launch of its
 * own, a variant it does not know or one this device cannot run are refused. */
static void test_answers_cannot_inject(void **state)
{
    fixture *f = *state;
    const fdtune_problem p = {.nx = 16, .ny = 16, .nz = 16};
    fdtune_answer a = answer_for("zmarch:32x4x1:mz8", &p);
    snprintf(a.defines[1], sizeof a.defines[1], "FDT_IDX=int idx_t; int x = puts(\"hi\")");
    expect_fallback(f, &p, &a, "defines for zmarch:32x4x1:mz8 are not this library's");
    a = answer_for("zmarch:32x4x1:mz8", &p);
    a.grid[0] = a.grid[1] = a.grid[2] = 1;
    expect_fallback(f, &p, &a, "entry or launch geometry");
    a = answer_for("zmarch:32x4x1:mz8", &p);
    snprintf(a.entry, sizeof a.entry, "fdt_compare");
    expect_fallback(f, &p, &a, "entry or launch geometry");
    a = answer_for("zmarch:32x4x1:mz8", &p);
    snprintf(a.variant, sizeof a.variant, "warp:32x4x1");
    expect_fallback(f, &p, &a, "not one this library knows");
    a = answer_for("zmarch:64x32x1:mz8", &p); /* 2048 threads a block */
    expect_fallback(f, &p, &a, "cannot run on this cpu device");
}

/* An answer whose source this library carries needs no daemon: it is tuned. */
static void test_carried_source_needs_no_daemon(void **state)
{
    fixture *f = *state;
    const fdtune_problem p = {.nx = 16, .ny = 12, .nz = 10};
    fdtune_answer a = answer_for("tiled:32x2x1:m4:asc", &p);
    fdt_source_hash(fdt_family_source(fdt_family_find("tiled")), a.source_hash);
    snprintf(a.from.device, sizeof a.from.device, "another device");
    fdtune_kernel *k;
    assert_int_equal(fdtune_kernel_load(f->dev, NULL, &p, &a, &f->o, &k, f->err, sizeof f->err),
                     FDTUNE_OK);
    const fdtune_kernel_info *info = fdtune_kernel_get_info(k);
    assert_int_equal(info->tuned, 1);
    assert_string_equal(info->variant, "tiled:32x2x1:m4:asc");
    assert_non_null(strstr(info->note, "measured on another device"));
    check_laplacian(k, &p, f->err, sizeof f->err);
    fdtune_kernel_close(k);
}

/* A kernel 1 of p, asked for: no daemon, no answer. */
static fdtune_kernel *kernel1(fixture *f, const fdtune_problem *p)
{
    fdtune_kernel *k;
    f->o.kernel1 = 1;
    assert_int_equal(fdtune_kernel_open(f->dev, p, &f->o, &k, f->err, sizeof f->err),
                     FDTUNE_OK);
    return k;
}

/* An asked layout is the kernel's: rows padded, the start moved, in both precisions, and
 * each launch computes the Laplacian there (rows read at the pitch, padding never touched). */
static void test_launches_in_a_padded_layout(void **state)
{
    fixture *f = *state;
    for (int single = 0; single < 2; single++) {
        const fdtune_problem p = {.nx = 13, .ny = 11, .nz = 9, .pitch = 21, .offset = 5,
                                  .precision = single ? FDTUNE_FLOAT : FDTUNE_DOUBLE};
        fdtune_kernel *k = kernel1(f, &p);
        const fdtune_layout *l = &fdtune_kernel_get_info(k)->layout;
        assert_int_equal(l->pitch, 21);
        assert_int_equal(l->offset, 5);
        check_laplacian(k, &p, f->err, sizeof f->err);
        fdtune_kernel_close(k);
    }
    /* Dense, asked as pitch nx, is dense. */
    const fdtune_problem dense = {.nx = 13, .ny = 11, .nz = 9, .pitch = 13};
    fdtune_kernel *k = kernel1(f, &dense);
    assert_int_equal(fdtune_kernel_get_info(k)->layout.pitch, 13);
    check_laplacian(k, &dense, f->err, sizeof f->err);
    fdtune_kernel_close(k);
}

/* fdtune_field_alloc's point (0, 0, 0) lies offset points past a 256-byte-aligned base,
 * for every offset; the check takes such a field and tells one a point off, by how much. */
static void test_fields_are_aligned_as_the_layout(void **state)
{
    fixture *f = *state;
    for (int single = 0; single < 2; single++) {
        const size_t size = single ? sizeof(float) : sizeof(double);
        for (int offset = 0; offset < (int)(256 / size); offset += single ? 7 : 3) {
            const fdtune_problem p = {.nx = 10, .ny = 9, .nz = 8, .pitch = 16,
                                      .offset = offset,
                                      .precision = single ? FDTUNE_FLOAT : FDTUNE_DOUBLE};
            fdtune_kernel *k = kernel1(f, &p);
            char *field;
            assert_int_equal(fdtune_field_alloc(k, (void **)&field, f->err, sizeof f->err),
                             FDTUNE_OK);
            assert_int_equal((uintptr_t)field % 256, offset * size);
            assert_int_equal(fdtune_kernel_check_field(k, field, f->err, sizeof f->err),
                             FDTUNE_OK);
            assert_int_equal(fdtune_kernel_check_field(k, field + size, f->err, sizeof f->err),
                             FDTUNE_ERR_LAYOUT);
            /* a point off: off 16 bytes too where the layout is on them, so refused */
            const int on16 = offset * size % 16 == 0;
            assert_non_null(strstr(f->err, on16 ? "launches on it are refused"
                                                : "right results but slower"));
            fdtune_field_free(k, field);
            fdtune_kernel_close(k);
        }
    }
    const fdtune_problem p = {.nx = 10, .ny = 9, .nz = 8, .offset = 3};
    fdtune_kernel *k = kernel1(f, &p);
    double *mine = aligned_alloc(256, 4096);
    assert_int_equal(fdtune_kernel_check_field(k, mine, f->err, sizeof f->err),
                     FDTUNE_ERR_LAYOUT);
    assert_non_null(strstr(f->err, "starts 0 bytes past a 32-byte boundary"));
    assert_non_null(strstr(f->err, "(pitch 10, offset 3) 24"));
    assert_int_equal(fdtune_kernel_check_field(k, mine + 3, f->err, sizeof f->err), FDTUNE_OK);
    assert_int_equal(fdtune_kernel_check_field(k, mine + 7, f->err, sizeof f->err), FDTUNE_OK);
    assert_int_equal(fdtune_kernel_check_field(k, NULL, f->err, sizeof f->err), FDTUNE_ERR_ARG);
    assert_int_equal(fdtune_field_alloc(NULL, (void **)&mine, f->err, sizeof f->err),
                     FDTUNE_ERR_ARG);
    fdtune_field_free(k, NULL);
    free(mine);
    fdtune_kernel_close(k);
}

/* A layout whose fields start on 16 bytes lets its kernels load whole vectors: a launch on
 * a field off 16 bytes is refused before anything runs (on a GPU it would fault), and one
 * off the layout's sector by whole 16 bytes runs. */
static void test_launch_refuses_a_field_off_16_bytes(void **state)
{
    fixture *f = *state;
    const fdtune_problem p = {.nx = 10, .ny = 9, .nz = 8, .pitch = 16};
    fdtune_kernel *k = kernel1(f, &p);
    double *u, *out;
    assert_int_equal(fdtune_field_alloc(k, (void **)&u, f->err, sizeof f->err), FDTUNE_OK);
    assert_int_equal(fdtune_field_alloc(k, (void **)&out, f->err, sizeof f->err), FDTUNE_OK);
    const size_t n = 16 * 9 * 8;
    for (size_t i = 0; i < n; i++)
        u[i] = (double)i, out[i] = -1;
    assert_int_equal(fdtune_kernel_launch(k, out + 1, u, 1, 1, 1, f->err, sizeof f->err),
                     FDTUNE_ERR_LAYOUT);
    assert_non_null(strstr(f->err, "field 0 at"));
    assert_non_null(strstr(f->err, "is not on 16 bytes, as the kernel's layout (pitch 16, "
                                   "offset 0) puts it"));
    assert_int_equal(fdtune_kernel_launch(k, out, u + 1, 1, 1, 1, f->err, sizeof f->err),
                     FDTUNE_ERR_LAYOUT);
    assert_non_null(strstr(f->err, "field 1 at"));
    assert_int_equal(fdtune_synchronize(f->dev, f->err, sizeof f->err), FDTUNE_OK);
    for (size_t i = 0; i < n; i++)
        assert_true(out[i] == -1); /* nothing ran */
    assert_int_equal(fdtune_kernel_launch(k, out, u + 2, 1, 1, 1, f->err, sizeof f->err),
                     FDTUNE_OK);
    fdtune_field_free(k, u);
    fdtune_field_free(k, out);
    fdtune_kernel_close(k);
}

/* A tuned answer of the naive family (carried, needs no daemon) measured in layout l. */
static fdtune_answer naive_answer(const fdtune_problem *p, int pitch, int offset)
{
    fdtune_problem measured = *p; /* the daemon's defines are the answer's layout's */
    measured.pitch = pitch;
    measured.offset = offset;
    fdtune_answer a = answer_for("naive:128x1x1", &measured);
    fdt_source_hash(fdt_family_source(fdt_family_find("naive")), a.source_hash);
    a.layout = (fdtune_layout){.pitch = pitch, .offset = offset, .dense_gbps = 80, .gain = 1.25};
    return a;
}

/* With pitch auto the kernel takes the answer's layout, its gain too; an asked layout stays
 * the kernel's, the answer's other one noted; an answer's layout out of range, or no answer,
 * leaves pitch auto dense; an offset needs a pitch. */
static void test_pitch_auto_takes_the_answers_layout(void **state)
{
    fixture *f = *state;
    fdtune_problem p = {.nx = 13, .ny = 11, .nz = 9, .pitch = FDTUNE_PITCH_AUTO};
    fdtune_answer a = naive_answer(&p, 16, 3);
    fdtune_kernel *k;
    assert_int_equal(fdtune_kernel_load(f->dev, NULL, &p, &a, &f->o, &k, f->err, sizeof f->err),
                     FDTUNE_OK);
    const fdtune_kernel_info *info = fdtune_kernel_get_info(k);
    assert_int_equal(info->tuned, 1);
    assert_int_equal(info->layout.pitch, 16);
    assert_int_equal(info->layout.offset, 3);
    assert_true(info->layout.gain == 1.25 && info->layout.dense_gbps == 80);
    check_laplacian(k, &p, f->err, sizeof f->err);
    fdtune_kernel_close(k);

    const fdtune_problem asked = {.nx = 13, .ny = 11, .nz = 9, .pitch = 20, .offset = 1};
    assert_int_equal(fdtune_kernel_load(f->dev, NULL, &asked, &a, &f->o, &k, f->err,
                                        sizeof f->err), FDTUNE_OK);
    info = fdtune_kernel_get_info(k);
    assert_int_equal(info->layout.pitch, 20);
    assert_int_equal(info->layout.offset, 1);
    assert_true(info->layout.gain == 0);
    assert_non_null(strstr(info->note, "measured at pitch 16 offset 3, not at the asked"));
    check_laplacian(k, &asked, f->err, sizeof f->err);
    fdtune_kernel_close(k);

    a = naive_answer(&p, 12, 0); /* under nx */
    assert_int_equal(fdtune_kernel_load(f->dev, NULL, &p, &a, &f->o, &k, f->err, sizeof f->err),
                     FDTUNE_OK);
    info = fdtune_kernel_get_info(k);
    assert_int_equal(info->tuned, 0);
    assert_non_null(strstr(info->reason, "the answer's layout: pitch 12 is out of range"));
    assert_int_equal(info->layout.pitch, 13);
    assert_int_equal(info->layout.offset, 0);
    check_laplacian(k, &p, f->err, sizeof f->err);
    fdtune_kernel_close(k);

    k = kernel1(f, &p);
    assert_int_equal(fdtune_kernel_get_info(k)->layout.pitch, 13);
    fdtune_kernel_close(k);
    p.offset = 2;
    assert_int_equal(fdtune_kernel_open(f->dev, &p, &f->o, &k, f->err, sizeof f->err),
                     FDTUNE_ERR_ARG);
    assert_non_null(strstr(f->err, "an offset needs a pitch"));
    const fdtune_problem far = {.nx = 13, .ny = 11, .nz = 9, .pitch = 13 + 4097};
    assert_int_equal(fdtune_kernel_open(f->dev, &far, &f->o, &k, f->err, sizeof f->err),
                     FDTUNE_ERR_ARG);
    assert_non_null(strstr(f->err, "pitch 4110 is out of range"));
}

/* The layout on the wire: a request says a pitch ("auto" or a number) and an offset only
 * when asked (a daemon older than layouts sees the request it knew), an answer's layout is
 * read, and one without any is dense. */
static void test_layout_on_the_wire(void **state)
{
    (void)state;
    fdtune_problem p = {.nx = 40, .ny = 8, .nz = 8};
    json_t *req = fdtune_problem_request("query", &p, NULL, 1);
    assert_null(json_object_get(req, "pitch"));
    assert_null(json_object_get(req, "offset"));
    json_decref(req);
    p.pitch = FDTUNE_PITCH_AUTO;
    req = fdtune_problem_request("query", &p, NULL, 1);
    assert_string_equal(json_string_value(json_object_get(req, "pitch")), "auto");
    json_decref(req);
    p.pitch = 48, p.offset = 3;
    req = fdtune_problem_request("query", &p, NULL, 1);
    assert_int_equal(json_integer_value(json_object_get(req, "pitch")), 48);
    assert_int_equal(json_integer_value(json_object_get(req, "offset")), 3);
    json_decref(req);

    static const char answer[] =
        "{\"ok\":true,\"match\":\"exact\",%s\"config\":{\"variant\":\"naive:256x1x1\","
        "\"source\":\"naive.hip\",\"entry\":\"fdt_laplacian\",\"block\":[256,1,1],"
        "\"grid\":[1,8,8],\"defines\":[]}}";
    char line[1024], err[256];
    fdtune_answer a;
    snprintf(line, sizeof line, answer, "\"layout\":{\"pitch\":48,\"offset\":3,"
             "\"dense_gbps\":100.5,\"gain\":1.2},");
    assert_int_equal(fdtune_answer_parse(line, &a, err, sizeof err), FDTUNE_OK);
    assert_int_equal(a.layout.pitch, 48);
    assert_int_equal(a.layout.offset, 3);
    assert_true(a.layout.dense_gbps == 100.5 && a.layout.gain == 1.2);
    snprintf(line, sizeof line, answer, "\"layout\":{\"pitch\":40,\"offset\":0,"
             "\"dense_gbps\":null,\"gain\":null},");
    assert_int_equal(fdtune_answer_parse(line, &a, err, sizeof err), FDTUNE_OK);
    assert_int_equal(a.layout.pitch, 40);
    assert_true(a.layout.dense_gbps == 0 && a.layout.gain == 0);
    snprintf(line, sizeof line, answer, "");
    assert_int_equal(fdtune_answer_parse(line, &a, err, sizeof err), FDTUNE_OK);
    assert_int_equal(a.layout.pitch, 0);
    snprintf(line, sizeof line, answer, "\"layout\":48,");
    assert_int_equal(fdtune_answer_parse(line, &a, err, sizeof err), FDTUNE_ERR_ANSWER);
    assert_non_null(strstr(err, "\"layout\" is not an object"));
    snprintf(line, sizeof line, answer, "\"layout\":{\"pitch\":-4},");
    assert_int_equal(fdtune_answer_parse(line, &a, err, sizeof err), FDTUNE_ERR_ANSWER);
    assert_non_null(strstr(err, "\"pitch\" is not a whole number"));
}

/* The names of the module files in dir. */
static int module_files(const char *dir, char names[][600], int cap)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strstr(e->d_name, ".mod") && n < cap)
            snprintf(names[n++], sizeof names[0], "%s/%s", dir, e->d_name);
    if (d)
        closedir(d);
    return n;
}

/* Opens kernel 1 for p and returns its info's (cache hits, compiles) as hits * 10 + compiles;
 * its note is left in f->note. */
static int open_tally(fixture *f, const fdtune_problem *p)
{
    fdtune_kernel *k;
    assert_int_equal(fdtune_kernel_open(f->dev, p, &f->o, &k, f->err, sizeof f->err), FDTUNE_OK);
    const int tally = fdtune_kernel_get_info(k)->cache_hits * 10 +
                      fdtune_kernel_get_info(k)->compiles;
    snprintf(f->note, sizeof f->note, "%s", fdtune_kernel_get_info(k)->note);
    check_laplacian(k, p, f->err, sizeof f->err);
    fdtune_kernel_close(k);
    return tally;
}

static void test_disk_cache(void **state)
{
    fixture *f = *state;
    const fdtune_problem p = {.nx = 12, .ny = 10, .nz = 8};
    assert_int_equal(open_tally(f, &p), 1);  /* compiled */
    assert_int_equal(open_tally(f, &p), 10); /* from the cache */
    char names[4][600];
    assert_int_equal(module_files(f->cache, names, 4), 1);
    const int fd = open(names[0], O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, "damage", 6, 200), 6);
    close(fd);
    assert_int_equal(open_tally(f, &p), 1);  /* the damage is seen, the module rebuilt */
    assert_int_equal(open_tally(f, &p), 10);
    assert_int_equal(chmod(f->cache, 0777), 0);
    assert_int_equal(open_tally(f, &p), 1);  /* others may write there: not trusted */
    assert_int_equal(open_tally(f, &p), 1);
}

/* The one module file of f's cache, after a first open of p compiled it. */
static void first_module(fixture *f, const fdtune_problem *p, char path[600])
{
    char names[4][600];
    assert_int_equal(open_tally(f, p), 1);
    assert_int_equal(module_files(f->cache, names, 4), 1);
    snprintf(path, 600, "%s", names[0]);
}

/* Hands path to uid: with chown as root; as anyone else, inside a user namespace where
 * this user is root and uid maps to one of its subordinate uids (on the host, 100000 + uid
 * - 1 or the like: another uid all the same). Fails the test when neither can be done. */
static void give_away(const char *path, unsigned uid)
{
    if (geteuid() == 0) {
        assert_int_equal(chown(path, uid, (gid_t)-1), 0);
        return;
    }
    char owner[16];
    snprintf(owner, sizeof owner, "%u", uid);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execlp("unshare", "unshare", "--map-auto", "--map-root-user", "chown", owner, path,
               (char *)NULL);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    struct stat st;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || stat(path, &st) != 0 ||
        st.st_uid == geteuid())
        fail_msg("cannot give %s to another uid: not root, and `unshare --map-auto "
                 "--map-root-user chown %s` failed (status %d); this test needs one of them",
                 path, owner, status);
}

/* Another user's module in our cache is not code this process wrote: it is compiled again
 * and replaced, and the note says why; so is one that others may write. */
static void test_cache_refuses_modules_of_others(void **state)
{
    fixture *f = *state;
    const fdtune_problem p = {.nx = 12, .ny = 10, .nz = 8};
    char path[600];
    first_module(f, &p, path);
    assert_int_equal(chmod(path, 0644), 0); /* readable, so that only its owner bars it */
    give_away(path, 4321);
    assert_int_equal(open_tally(f, &p), 1);
    if (!strstr(f->note, path) || !strstr(f->note, "belongs to uid"))
        fail_msg("the note does not say why %s was refused: \"%s\"", path, f->note);
    assert_int_equal(open_tally(f, &p), 10); /* the replacement is ours */
    assert_int_equal(chmod(path, 0622), 0);
    assert_int_equal(open_tally(f, &p), 1);
    if (!strstr(f->note, "can be written by its group or others"))
        fail_msg("the note does not say why %s was refused: \"%s\"", path, f->note);
    assert_int_equal(open_tally(f, &p), 10);
}

/* A FIFO where a module belongs, which nobody writes to, must not block the open for ever:
 * it is refused at once and the module compiled in its place. The alarm turns a regression
 * into a failure rather than a hang; its bound only guards against one. */
static void test_fifo_in_cache_does_not_block(void **state)
{
    fixture *f = *state;
    const fdtune_problem p = {.nx = 12, .ny = 10, .nz = 8};
    char path[600];
    first_module(f, &p, path);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkfifo(path, 0600), 0);
    alarm(300);
    assert_int_equal(open_tally(f, &p), 1);
    alarm(0);
    if (!strstr(f->note, path) || !strstr(f->note, "not a regular file"))
        fail_msg("the note does not say why %s was refused: \"%s\"", path, f->note);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(open_tally(f, &p), 10);
}

static void test_own_functions_and_compile_errors(void **state)
{
    fixture *f = *state;
    static const char source[] =
        "extern \"C\" __global__ void twice(REAL *x, int n)\n"
        "{ const int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2; }\n";
    const char *define = "REAL=float";
    fdtune_function *fn;
    assert_int_equal(fdtune_function_compile(f->dev, source, "twice", &define, 1, &f->o, &fn,
                                             f->err, sizeof f->err), FDTUNE_OK);
    float x[100];
    for (int i = 0; i < 100; i++)
        x[i] = (float)i;
    void *ptr = x;
    int n = 100;
    void *args[] = {&ptr, &n};
    const int grid[3] = {4, 1, 1}, block[3] = {32, 1, 1}, zero[3] = {0, 1, 1};
    assert_int_equal(fdtune_function_launch(fn, grid, block, args, f->err, sizeof f->err),
                     FDTUNE_OK);
    assert_int_equal(fdtune_synchronize(f->dev, f->err, sizeof f->err), FDTUNE_OK);
    for (int i = 0; i < 100; i++)
        assert_true(x[i] == 2.0f * i);
    assert_int_equal(fdtune_function_launch(fn, zero, block, args, f->err, sizeof f->err),
                     FDTUNE_ERR_ARG);
    fdtune_function_free(fn);
    assert_int_equal(fdtune_function_compile(f->dev, "this is not C++", "twice", NULL, 0,
                                             &f->o, &fn, f->err, sizeof f->err),
                     FDTUNE_ERR_COMPILE);
    assert_null(fn);
    assert_non_null(strstr(f->err, "error"));
}

static void test_bad_arguments(void **state)
{
    fixture *f = *state;
    fdtune_device *d = (fdtune_device *)1;
    assert_int_equal(fdtune_device_open("opencl", -1, NULL, &d, f->err, sizeof f->err),
                     FDTUNE_ERR_ARG);
    assert_null(d);
    assert_non_null(strstr(f->err, "unknown backend 'opencl'"));
    assert_int_equal(fdtune_device_open("cpu", 3, NULL, &d, f->err, sizeof f->err),
                     FDTUNE_ERR_DEVICE);
    assert_non_null(strstr(f->err, "cpu"));
    fdtune_kernel *k = (fdtune_kernel *)1;
    const fdtune_problem tiny = {.nx = 2, .ny = 16, .nz = 16};
    assert_int_equal(fdtune_kernel_open(f->dev, &tiny, &f->o, &k, f->err, sizeof f->err),
                     FDTUNE_ERR_ARG);
    assert_null(k);
    assert_int_equal(fdtune_kernel_open(f->dev, NULL, &f->o, &k, f->err, sizeof f->err),
                     FDTUNE_ERR_ARG);
    assert_int_equal(fdtune_kernel_launch(NULL, NULL, NULL, 1, 1, 1, f->err, sizeof f->err),
                     FDTUNE_ERR_ARG);
    fdtune_kernel_close(NULL);
    fdtune_function_free(NULL);
    fdtune_device_close(NULL);
}

static void test_laplacian_bytes_as_fdtuned_counts_them(void **state)
{
    (void)state;
    /* 8^3 interior read and written, and its 6 faces of 8x8 read once more: 1408 reals. */
    const fdtune_problem p = {.nx = 10, .ny = 10, .nz = 10};
    assert_true(fdtune_laplacian_bytes(&p) == 1408.0 * 8);
    const fdtune_problem bad = {.nx = 1, .ny = 10, .nz = 10};
    assert_true(fdtune_laplacian_bytes(&bad) == 0);
}

static void remove_tree(const char *dir)
{
    char cmd[sizeof cache_root + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
    if (!mkdtemp(cache_root))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_kernel1_computes_the_laplacian, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_daemon_falls_back_with_the_reason, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_unusable_answers_fall_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_answers_cannot_inject, setup, teardown),
        cmocka_unit_test_setup_teardown(test_carried_source_needs_no_daemon, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launches_in_a_padded_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launch_refuses_a_field_off_16_bytes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_fields_are_aligned_as_the_layout, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_pitch_auto_takes_the_answers_layout, setup,
                                        teardown),
        cmocka_unit_test(test_layout_on_the_wire),
        cmocka_unit_test_setup_teardown(test_disk_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_refuses_modules_of_others, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_in_cache_does_not_block, setup, teardown),
        cmocka_unit_test_setup_teardown(test_own_functions_and_compile_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
        cmocka_unit_test(test_laplacian_bytes_as_fdtuned_counts_them),
    };
    const int failed = cmocka_run_group_tests(tests, NULL, NULL);
    remove_tree(cache_root);
    return failed;
}
