/* test_cpu_backend.c - the kernel families run for real on the cpu backend (compiled by the
 * host C++ compiler) on odd shapes, with the same verification the GPUs get: every variant
 * tried must match the host reference at every interior point and leave the boundary alone,
 * and each deliberately broken test variant must be caught as wrong. A handle attached as
 * libfdtune attaches runs a solver's own kernel. The L2 kernel reads every element it is
 * given, and a device's balance is measured for real. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/balance.h"
#include "engine/bench.h"
#include "engine/compile_pool.h"
#include "hashes.h"
#include "engine/runner.h"
#include "engine/session.h"
#include "engine/stencil.h"
#include "example_spec.h"

/* Variants tried per family and configuration: spread over the space so that every
 * option (m, order, mz, lb, nt, map, block shape) is exercised across the configurations. */
#define PER_FAMILY 6

static const fdt_timing quick = {.min_sample_ms = 0.01, .samples = 1, .timeout_ms = 60000};

typedef struct fixture {
    fdt_backend *backend;
    const fdt_backend_ops *ops;
} fixture;

static int setup(void **state)
{
    static fixture f;
    fdt_error err = {0};
    f.ops = &fdt_backend_cpu;
    if (f.ops->open(0, &f.backend, &err) != FDT_OK) {
        fprintf(stderr, "cpu backend: %s\n", err.msg);
        return -1;
    }
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    f->ops->close(f->backend);
    return 0;
}

/* Picks PER_FAMILY variants spread over the family's space, with a stride coprime to the
 * odometer's periods so that fast- and slow-moving parameters both vary. */
static size_t pick(const fdt_problem *p, const fdt_device_info *dev, const char *family,
                   size_t salt, fdt_compile_job *jobs)
{
    const fdt_space_filter filter = {.family = family, .test_families = 1};
    const size_t n = fdt_space_enumerate(p, dev, &filter, NULL, 0);
    fdt_variant *all = calloc(n, sizeof *all);
    fdt_space_enumerate(p, dev, &filter, all, n);
    const size_t k = n < PER_FAMILY ? n : PER_FAMILY;
    for (size_t i = 0; i < k; i++)
        jobs[i] = (fdt_compile_job){.variant = all[(salt + i * 7919) % n]};
    free(all);
    return k;
}

static void expect_status(fixture *f, fdt_runner *r, fdt_compile_job *job, fdt_status want,
                          fdt_verdict *verdict)
{
    char name[FDT_VARIANT_NAME_MAX];
    fdt_variant_name(&job->variant, name, sizeof name);
    if (job->status != FDT_OK)
        fail_msg("%s: %s: %s", name, fdt_status_name(job->status), job->message);
    fdt_kernel *k = NULL;
    fdt_error err = {0};
    assert_int_equal(f->ops->load(f->backend, &job->code, r->stencil->entry, &k, &err), FDT_OK);
    const fdt_status got = fdt_runner_verify(r, k, &job->variant, verdict, &err);
    f->ops->unload(f->backend, k);
    if (got != want)
        fail_msg("%s on %dx%dx%d R=%d %s: %s, expected %s (%s)", name, r->problem.nx,
                 r->problem.ny, r->problem.nz, r->problem.radius,
                 fdt_precision_name(r->problem.precision), fdt_status_name(got),
                 fdt_status_name(want), err.msg);
}

static void run_family(fixture *f, const fdt_problem *p, const char *family, size_t salt)
{
    fdt_runner r;
    fdt_error err = {0};
    if (fdt_runner_open(&r, f->ops, f->backend, p, &quick, 7, &err) != FDT_OK)
        fail_msg("runner: %s", err.msg);
    fdt_compile_job jobs[PER_FAMILY];
    const size_t n = pick(p, f->ops->info(f->backend), family, salt, jobs);
    assert_true(n > 0);
    fdt_compile_all(f->ops, NULL, f->ops->info(f->backend)->arch, p, jobs, n, 0);
    for (size_t i = 0; i < n; i++) {
        fdt_verdict v;
        expect_status(f, &r, &jobs[i], FDT_OK, &v);
        assert_true(v.error <= 1);
        fdt_code_free(&jobs[i].code);
    }
    fdt_runner_close(&r);
}

/* Every family of the list on each shape, at radius 1, 2 and 4, in both precisions. */
static void verify_on(fixture *f, const int (*shapes)[3], size_t nshapes,
                      const char *const *families, size_t count)
{
    size_t salt = 0;
    for (size_t s = 0; s < nshapes; s++)
        for (int radius = 1; radius <= 4; radius *= 2)
            for (int prec = 0; prec < 2; prec++) {
                const fdt_problem p = {.stencil = "laplacian", .nx = shapes[s][0],
                                       .ny = shapes[s][1], .nz = shapes[s][2], .radius = radius,
                                       .precision = prec ? FDT_DOUBLE : FDT_FLOAT};
                for (size_t fam = 0; fam < count; fam++)
                    run_family(f, &p, families[fam], salt++);
            }
}

static const int odd_shapes[][3] = {{13, 17, 11}, {33, 9, 21}};

static void verify_on_odd_shapes(fixture *f, const char *const *families, size_t count)
{
    verify_on(f, odd_shapes, 2, families, count);
}

static void test_families_verify_on_odd_shapes(void **state)
{
    const char *const families[] = {"naive", "tiled", "zmarch", "zvec", "zroll"};
    verify_on_odd_shapes(*state, families, sizeof families / sizeof *families);
}

/* The families whose blocks share tiles in shared memory behind __syncthreads: each block
 * runs as a team whose barrier lets no thread pass before all have reached it, so a tile
 * read before every thread has put its part (or a halo point left out) is caught here. */
static void test_barrier_families_verify_on_odd_shapes(void **state)
{
    fixture *f = *state;
    if (!f->ops->info(f->backend)->block_barriers)
        fail_msg("the cpu backend reports no block barriers on this host (%s): smem and "
                 "xytile cannot be verified here", f->ops->info(f->backend)->arch);
    const char *const families[] = {"smem", "xytile"};
    verify_on_odd_shapes(f, families, sizeof families / sizeof *families);
}

/* The ring copies whole 16-byte vectors, so it runs only where rows start on 16 bytes: nx a
 * multiple of 4 (float) or 2 (double), y and z still odd, rows of several tiles with a short
 * last one, and (nz 75) several chunks in z with a short last one. Each block is a team, so
 * a slot written while other threads still read it, a lower window shifted wrong, a halo
 * vector left out or a chunk's planes misplaced shows as a wrong point. Each copy is a plain
 * load and store here, done when issued: the count of copy groups a thread waits for is
 * NVIDIA's alone, checked on a GPU (compute-sanitizer racecheck, bench/ring_gpu.sh). */
static void test_ring_verifies_on_rows_of_whole_vectors(void **state)
{
    fixture *f = *state;
    const int shapes[][3] = {{20, 17, 11}, {36, 9, 21}, {20, 9, 75}};
    const char *const families[] = {"ring"};
    verify_on(f, shapes, 3, families, 1);
}

/* The six example specs, kernels generated from them, on odd shapes: the first in float
 * and the second in double (each compile is a host C++ compile: both precisions on both
 * shapes doubled the test's time for no path the pairs do not take), where svec takes its
 * scalar path (nx not a multiple of its lanes), and svec's rows of whole vectors on two
 * more (nx a multiple of 4 in float, of 2 in double): every spec family's variants agree with
 * the host reference evaluated from the spec. A wrong tap, weight, constant or coefficient
 * field in the generated code, or a vector row's wrong element, fails here. */
static void test_spec_families_verify_on_odd_shapes(void **state)
{
    fixture *f = *state;
    const char *const specs[] = {"laplacian_r1", "anisotropic", "div_k_grad", "acoustic8",
                                 "gradient4", "box27"};
    static const char *const all[] = {"snaive", "smarch", "szwin", "svec", "stile", NULL};
    static const char *const vectors[] = {"svec", NULL};
    const struct {
        int n[3];
        fdt_precision precision;
        const char *const *families;
    } shapes[] = {{{13, 17, 11}, FDT_FLOAT, all}, {{33, 9, 21}, FDT_DOUBLE, all},
                  {{20, 11, 13}, FDT_FLOAT, vectors}, {{34, 9, 21}, FDT_DOUBLE, vectors}};
    size_t salt = 0;
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        const fdt_stencil *st = example_spec(specs[k]);
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            fdt_problem p = {.nx = shapes[s].n[0], .ny = shapes[s].n[1], .nz = shapes[s].n[2],
                             .radius = st->min_radius, .precision = shapes[s].precision};
            fdt_copy_text(p.stencil, sizeof p.stencil, st->name);
            for (const char *const *fam = shapes[s].families; *fam; fam++)
                run_family(f, &p, *fam, salt++);
        }
    }
}

/* ---- layouts: rows padded to a pitch, the first point moved by an offset ---- */

/* The layouts every family is verified at on p's shape: those "pitch auto" measures
 * (fdt_layout_candidates: dense, rows padded to whole sectors, and moved so that each row's
 * first interior point starts one); rows padded to whole vectors (16 at nx 13) with offset
 * 3, a first point off 16 bytes in both precisions (the vector families' scalar path); and
 * 4 points more with a 16-byte offset (whole vectors from an aligned first point away from
 * the base). */
#define LAYOUTS (FDT_LAYOUTS_MAX + 2)

static size_t layouts_of(const fdt_problem *p, fdt_problem out[LAYOUTS])
{
    size_t n = (size_t)fdt_layout_candidates(p, out);
    const int vectors = (p->nx + 3) / 4 * 4; /* whole vectors in float and double */
    out[n] = *p;
    out[n].pitch = vectors;
    out[n++].offset = 3;
    out[n] = *p;
    out[n].pitch = vectors + 4;
    out[n++].offset = 16 / (int)fdt_real_size(p->precision);
    for (size_t l = 0; l < n; l++)
        assert_null(fdt_problem_check(&out[l]));
    return n;
}

/* Variants per family at each layout. */
#define PER_LAYOUT_FAMILY 1

/* A layout's code differs from another's by two defines only (engine/variant.c): rows
 * padded (FDT_PADDED_ROWS) and fields off 16 bytes (FDT_UNALIGNED_FIELDS), so the jobs are
 * compiled once for each pair that a layout takes, the first time one does. */
#define LAYOUT_CODES 4

typedef struct layout_codes {
    fdt_compile_job jobs[LAYOUT_CODES][16 * PER_LAYOUT_FAMILY];
    int compiled[LAYOUT_CODES];
    size_t n;
} layout_codes;

static int layout_code(const fdt_problem *p)
{
    const int padded = fdt_problem_pitch(p) != p->nx;
    const int off16 = p->offset * (int)fdt_real_size(p->precision) % 16 != 0;
    return 2 * padded + off16;
}

/* Each family's variants, enumerated at the layout whose rows start on whole vectors (so
 * that the ring is offered), into every code slot; none compiled yet. */
static void pick_families(fixture *f, const fdt_problem *aligned, const char *const *families,
                          size_t count, layout_codes *c)
{
    c->n = 0;
    for (size_t fam = 0; fam < count; fam++) {
        fdt_compile_job some[PER_FAMILY];
        const size_t k = pick(aligned, f->ops->info(f->backend), families[fam], fam, some);
        if (k == 0)
            fail_msg("%s offers no variant at pitch %d offset %d", families[fam],
                     aligned->pitch, aligned->offset);
        for (size_t i = 0; i < k && i < PER_LAYOUT_FAMILY; i++, c->n++)
            for (int l = 0; l < LAYOUT_CODES; l++)
                c->jobs[l][c->n] = some[i];
    }
    memset(c->compiled, 0, sizeof c->compiled);
}

/* The jobs compiled for layout p (and every layout of its code). */
static fdt_compile_job *codes_for(fixture *f, layout_codes *c, const fdt_problem *p)
{
    const int l = layout_code(p);
    if (!c->compiled[l])
        fdt_compile_all(f->ops, NULL, f->ops->info(f->backend)->arch, p, c->jobs[l], c->n, 0);
    c->compiled[l] = 1;
    return c->jobs[l];
}

static void codes_free(layout_codes *c)
{
    for (int l = 0; l < LAYOUT_CODES; l++)
        for (size_t i = 0; c->compiled[l] && i < c->n; i++)
            fdt_code_free(&c->jobs[l][i].code);
}

/* Every job verified at each of p's layouts where its variant runs (the ring only where rows
 * start on whole vectors); how many of them ran at a layout whose first point is off 16
 * bytes, and how many jobs of family `pruned` were left out, where it is pruned. */
static void verify_layouts(fixture *f, const fdt_problem *p, layout_codes *c,
                           int *unaligned_runs, int *ring_pruned)
{
    fdt_problem layouts[LAYOUTS];
    const size_t nl = layouts_of(p, layouts);
    const fdt_device_info *dev = f->ops->info(f->backend);
    for (size_t l = 0; l < nl; l++) {
        fdt_compile_job *jobs = codes_for(f, c, &layouts[l]);
        fdt_runner r;
        fdt_error err = {0};
        if (fdt_runner_open(&r, f->ops, f->backend, &layouts[l], &quick, 5, &err) != FDT_OK)
            fail_msg("runner at pitch %d offset %d: %s", fdt_problem_pitch(&layouts[l]),
                     layouts[l].offset, err.msg);
        const int off = layout_code(&layouts[l]) % 2;
        for (size_t i = 0; i < c->n; i++) {
            if (fdt_variant_check(&jobs[i].variant, &layouts[l], dev)) {
                *ring_pruned += strcmp(fdt_family_name(jobs[i].variant.family), "ring") == 0;
                continue;
            }
            fdt_verdict v;
            expect_status(f, &r, &jobs[i], FDT_OK, &v);
            *unaligned_runs += off;
        }
        fdt_runner_close(&r);
    }
}

/* A stencil and its radius (a spec's: its reach). */
typedef struct stencil_case {
    const fdt_stencil *stencil;
    int radius;
} stencil_case;

/* The families at every layout of two odd shapes, for each case (radius 1 and 4), in float
 * and double. */
static void verify_families_at_layouts(fixture *f, const stencil_case *cases,
                                       const char *const *families, size_t count)
{
    int unaligned_runs = 0, ring_pruned = 0;
    for (int c = 0; c < 2; c++)
        for (int prec = 0; prec < 2; prec++) {
            fdt_problem p = {.nx = 13, .ny = 17, .nz = 11, .radius = cases[c].radius,
                             .precision = prec ? FDT_DOUBLE : FDT_FLOAT};
            fdt_copy_text(p.stencil, sizeof p.stencil, cases[c].stencil->name);
            fdt_problem aligned = p;
            aligned.pitch = 16; /* whole vectors */
            static layout_codes codes; /* 4 x 16 jobs: too large for the stack */
            assert_true(count <= 16);
            pick_families(f, &aligned, families, count, &codes);
            verify_layouts(f, &p, &codes, &unaligned_runs, &ring_pruned);
            fdt_problem odd = p; /* a second odd shape: the same codes */
            odd.nx = 33, odd.ny = 9, odd.nz = 21;
            verify_layouts(f, &odd, &codes, &unaligned_runs, &ring_pruned);
            codes_free(&codes);
        }
    assert_true(unaligned_runs > 0);
    for (size_t i = 0; i < count; i++)
        if (strcmp(families[i], "ring") == 0)
            assert_true(ring_pruned > 0);
}

/* Every Laplacian family at padded and offset layouts, which no other test reaches: a family
 * that strides rows by nx instead of the pitch reads the padding's random values and writes
 * over its poison; one that takes whole vectors where the first point is off 16 bytes reads
 * and writes NaNs on the host (common.h's misaligned_on_host), a fault on a GPU; a host
 * reference or verdict that walks nx disagrees with kernel 1 at every padded layout. */
static void test_families_verify_at_every_layout(void **state)
{
    const fdt_stencil *laplacian = fdt_stencil_find("laplacian");
    const stencil_case cases[] = {{laplacian, 1}, {laplacian, 4}};
    const char *const families[] = {"naive", "tiled", "zmarch", "zvec", "zroll",
                                    "smem",  "xytile", "ring"};
    verify_families_at_layouts(*state, cases, families, sizeof families / sizeof *families);
}

/* The spec families likewise, at the reach of laplacian_r1 (1) and of acoustic8 (4). */
static void test_spec_families_verify_at_every_layout(void **state)
{
    const fdt_stencil *r1 = example_spec("laplacian_r1"), *r4 = example_spec("acoustic8");
    const stencil_case cases[] = {{r1, r1->min_radius}, {r4, r4->min_radius}};
    assert_int_equal(cases[1].radius, 4);
    const char *const families[] = {"snaive", "smarch", "szwin", "svec", "stile"};
    verify_families_at_layouts(*state, cases, families, sizeof families / sizeof *families);
}

/* y-subdomains renumber the blocks: every tile must still be computed once, with a short
 * last band (150 rows in 4-row blocks: bands of 16, 16 and 6 block rows). */
static void test_banded_variants_verify(void **state)
{
    fixture *f = *state;
    const char *names[] = {"zvec:16x4x1:mz2:band64", "zvec:32x2x1:mz1:lb:band64"};
    for (int radius = 1; radius <= 4; radius *= 4)
        for (int prec = 0; prec < 2; prec++) {
            const fdt_problem p = {.stencil = "laplacian", .nx = 40, .ny = 150, .nz = 13,
                                   .radius = radius, .precision = prec ? FDT_DOUBLE : FDT_FLOAT};
            fdt_runner r;
            fdt_error err = {0};
            if (fdt_runner_open(&r, f->ops, f->backend, &p, &quick, 11, &err) != FDT_OK)
                fail_msg("runner: %s", err.msg);
            fdt_compile_job jobs[2];
            char why[128];
            for (int i = 0; i < 2; i++) {
                jobs[i] = (fdt_compile_job){0};
                assert_int_equal(fdt_variant_parse(names[i], &jobs[i].variant, why, sizeof why), 0);
                assert_null(fdt_variant_check(&jobs[i].variant, &p, f->ops->info(f->backend)));
            }
            fdt_compile_all(f->ops, NULL, f->ops->info(f->backend)->arch, &p, jobs, 2, 0);
            for (int i = 0; i < 2; i++) {
                fdt_verdict v;
                expect_status(f, &r, &jobs[i], FDT_OK, &v);
                fdt_code_free(&jobs[i].code);
            }
            fdt_runner_close(&r);
        }
}

/* Each bug touches one point only; finding it proves every point is checked. The fourth
 * does not compile, and must come back as a compile error with the compiler's message. */
static void test_broken_variants_are_caught(void **state)
{
    fixture *f = *state;
    for (int prec = 0; prec < 2; prec++)
        for (int radius = 1; radius <= 2; radius++) {
            const fdt_problem p = {.stencil = "laplacian", .nx = 13, .ny = 17, .nz = 11,
                                   .radius = radius, .precision = prec ? FDT_DOUBLE : FDT_FLOAT};
            fdt_runner r;
            fdt_error err = {0};
            assert_int_equal(fdt_runner_open(&r, f->ops, f->backend, &p, &quick, 3, &err), FDT_OK);
            fdt_compile_job jobs[4];
            assert_int_equal(pick(&p, f->ops->info(f->backend), "broken", 0, jobs), 4);
            fdt_compile_all(f->ops, NULL, f->ops->info(f->backend)->arch, &p, jobs, 4, 0);
            for (int i = 0; i < 4; i++) {
                const int bug = jobs[i].variant.bug;
                if (bug == 4) {
                    assert_int_equal(jobs[i].status, FDT_COMPILE_ERROR);
                    assert_non_null(strstr(jobs[i].message, "planted compile error"));
                    continue;
                }
                fdt_verdict v;
                expect_status(f, &r, &jobs[i], FDT_WRONG, &v);
                if (bug == 2)
                    assert_true(v.boundary_bad == 1 && v.error <= 1);
                else if (bug == 3)
                    assert_true(isinf(v.error));
                else
                    assert_true(v.error > 1 && v.boundary_bad == 0);
                fdt_code_free(&jobs[i].code);
            }
            fdt_runner_close(&r);
        }
}

/* Kernel 1 (the family source it is appended to), then every interior point it stored
 * moved by a relative %.17g: an output off the reference by exactly that much. */
static const char perturbed_kernel[] =
    "\nextern \"C\" __global__ void fdt_perturbed(FDT_KERNEL_ARGS)\n"
    "{\n"
    "    fdt_laplacian(f, u, nx, ny, nz, pitch, cx, cy, cz);\n"
    "    const int i = threadIdx.x + BLOCK_X * blockDim.x, j = threadIdx.y + BLOCK_Y * "
    "blockDim.y, k = threadIdx.z + BLOCK_Z * blockDim.z;\n"
    "    if (interior(i, nx) && interior(j, ny) && interior(k, nz))\n"
    "        f[i + (size_t)pitch * j + (size_t)pitch * ny * k] *= (real)(1 + %.17g);\n"
    "}\n";

/* The runner's own verification of source's entry, compiled as kernel 1 is: what it says,
 * and the error it measured. */
static fdt_status verify_source(fixture *f, fdt_runner *r, const char *source,
                                const char *entry, fdt_verdict *v)
{
    const fdt_variant k1 = fdt_variant_kernel1(&r->problem);
    fdt_defines d;
    fdt_variant_defines(&k1, &r->problem, &d);
    fdt_code code = {0};
    fdt_kernel *k = NULL;
    fdt_error err = {0};
    if (f->ops->compile("host", source, entry, d.list, d.count, &code, &err) != FDT_OK)
        fail_msg("compile: %s", err.msg);
    assert_int_equal(f->ops->load(f->backend, &code, entry, &k, &err), FDT_OK);
    fdt_code_free(&code);
    const fdt_status s = fdt_runner_verify(r, k, &k1, v, &err);
    f->ops->unload(f->backend, k);
    return s;
}

/* Kernel 1 perturbed by a relative eps at every interior point, verified. */
static fdt_status verify_perturbed(fixture *f, fdt_runner *r, double eps, fdt_verdict *v)
{
    const fdt_variant k1 = fdt_variant_kernel1(&r->problem);
    const char *family = fdt_variant_source(&k1, &r->problem);
    const size_t len = strlen(family) + sizeof perturbed_kernel + 64;
    char *source = malloc(len);
    assert_non_null(source);
    const int at = snprintf(source, len, "%s", family);
    snprintf(source + at, len - (size_t)at, perturbed_kernel, eps);
    const fdt_status s = verify_source(f, r, source, "fdt_perturbed", v);
    free(source);
    return s;
}

/* The tolerance, pinned from both sides: an output off by a relative 1e-13 in double
 * (1e-4 in float) is wrong, one off by 1e-15 (1e-7), what a right kernel's rounding may
 * leave, is right. Loosening the tolerance past the first (the most a point of the radius 2
 * Laplacian's 13 terms may round, twice: 17 * 2 eps * sum |c u|, about 4e-15 of it in
 * double), or tightening it past the second, fails here. */
static void test_tolerances_are_pinned(void **state)
{
    fixture *f = *state;
    const struct {
        fdt_precision precision;
        double wrong, right;
    } cases[] = {{FDT_DOUBLE, 1e-13, 1e-15}, {FDT_FLOAT, 1e-4, 1e-7}};
    for (size_t c = 0; c < 2; c++) {
        const fdt_problem p = {.stencil = "laplacian", .nx = 13, .ny = 17, .nz = 11, .radius = 2,
                               .precision = cases[c].precision};
        fdt_runner r;
        fdt_error err = {0};
        if (fdt_runner_open(&r, f->ops, f->backend, &p, &quick, 5, &err) != FDT_OK)
            fail_msg("runner: %s", err.msg);
        fdt_verdict v;
        const fdt_status wrong = verify_perturbed(f, &r, cases[c].wrong, &v);
        if (wrong != FDT_WRONG)
            fail_msg("%s off by %g: %s, %.3g tolerances off", fdt_precision_name(p.precision),
                     cases[c].wrong, fdt_status_name(wrong), v.error);
        const fdt_status right = verify_perturbed(f, &r, cases[c].right, &v);
        if (right != FDT_OK || v.error == 0)
            fail_msg("%s off by %g: %s, %.3g tolerances off", fdt_precision_name(p.precision),
                     cases[c].right, fdt_status_name(right), v.error);
        fdt_runner_close(&r);
    }
}

/* The tolerance is each point's own, from its terms: a tap read one point off is wrong even
 * where its weight is the spec's smallest. acoustic8's kernel 1 with the outermost tap of
 * u_xx (weight -1/560, against 2 for u itself) read at x + 3 instead of x + 4 fails in
 * both precisions, by ten tolerances or more (98 in float on this shape). */
static void test_a_wrong_tap_is_caught(void **state)
{
    fixture *f = *state;
    const fdt_stencil *st = example_spec("acoustic8");
    const char *const right_tap = "spec_i0[(pos) + (4)]";
    for (int prec = 0; prec < 2; prec++) {
        fdt_problem p = {.nx = 13, .ny = 17, .nz = 11, .radius = st->min_radius,
                         .precision = prec ? FDT_DOUBLE : FDT_FLOAT};
        fdt_copy_text(p.stencil, sizeof p.stencil, st->name);
        fdt_runner r;
        fdt_error err = {0};
        if (fdt_runner_open(&r, f->ops, f->backend, &p, &quick, 5, &err) != FDT_OK)
            fail_msg("runner: %s", err.msg);
        const fdt_variant k1 = fdt_variant_kernel1(&p);
        char *source = strdup(fdt_variant_source(&k1, &p));
        assert_non_null(source);
        /* Kernel 1 (snaive) computes with FDT_SPEC_POINT: the tap in that macro alone. */
        char *point = strstr(source, "#define FDT_SPEC_POINT(");
        assert_non_null(point);
        char *tap = strstr(point, right_tap);
        const char *end = strstr(point + 1, "#define");
        const char *again = tap ? strstr(tap + 1, right_tap) : NULL;
        assert_true(tap && end && tap < end && (!again || again > end)); /* once in the macro */
        tap[strlen("spec_i0[(pos) + (")] = '3';
        fdt_verdict v;
        const fdt_status s = verify_source(f, &r, source, st->entry, &v);
        if (s != FDT_WRONG || v.error < 10)
            fail_msg("%s, a tap off: %s, %.3g tolerances off", fdt_precision_name(p.precision),
                     fdt_status_name(s), v.error);
        free(source);
        fdt_runner_close(&r);
    }
}

static void test_compile_error_is_reported(void **state)
{
    fixture *f = *state;
    fdt_code code = {0};
    fdt_error err = {0};
    const char *src = "extern \"C\" __global__ void fdt_laplacian(int *x) { x[0] = ; }";
    assert_int_equal(f->ops->compile("host", src, "fdt_laplacian", NULL, 0, &code, &err),
                     FDT_COMPILE_ERROR);
    assert_non_null(strstr(err.msg, "error"));
    assert_null(code.data);
}

/* libfdtune's way in: a handle attached to the device the calling thread uses, which on cpu
 * is the host, runs a kernel of its own (a solver's, not a family) with the stream ignored. */
static void test_attach_runs_a_kernel(void **state)
{
    fixture *f = *state;
    const char *src = "extern \"C\" __global__ void fdt_axpy(float *x, float a, unsigned n)\n"
                      "{\n"
                      "    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                      "    if (i < n)\n"
                      "        x[i] = a * x[i] + (float)i;\n"
                      "}\n";
    fdt_backend *b = NULL;
    fdt_error err = {0};
    if (f->ops->attach(-1, NULL, &b, &err) != FDT_OK)
        fail_msg("attach: %s", err.msg);
    const fdt_device_info *in = f->ops->info(b), *host = f->ops->info(f->backend);
    assert_string_equal(in->backend, "cpu");
    assert_string_equal(in->arch, host->arch);
    assert_string_equal(in->name, host->name);
    assert_string_equal(in->compiler_version, host->compiler_version);

    fdt_code code = {0};
    fdt_kernel *k = NULL;
    if (f->ops->compile(in->arch, src, "fdt_axpy", NULL, 0, &code, &err) != FDT_OK)
        fail_msg("compile: %s", err.msg);
    assert_int_equal(f->ops->load(b, &code, "fdt_axpy", &k, &err), FDT_OK);
    fdt_code_free(&code);

    enum { N = 1000 }; /* not a multiple of the block: the guard must hold */
    float x[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)i;
    fdt_devptr d = 0;
    float a = 2.0f;
    unsigned n = N;
    void *args[] = {&d, &a, &n};
    assert_int_equal(f->ops->alloc(b, sizeof x, &d, &err), FDT_OK);
    assert_int_equal(f->ops->upload(b, d, x, sizeof x, &err), FDT_OK);
    assert_int_equal(f->ops->launch(b, k, (fdt_dim3){(N + 127) / 128, 1, 1},
                                    (fdt_dim3){128, 1, 1}, args, &err), FDT_OK);
    assert_int_equal(f->ops->sync(b, &err), FDT_OK);
    assert_int_equal(f->ops->download(b, x, d, sizeof x, &err), FDT_OK);
    for (int i = 0; i < N; i++)
        if (x[i] != 3.0f * (float)i)
            fail_msg("x[%d] = %g, expected %d", i, (double)x[i], 3 * i);
    f->ops->free(b, d);
    f->ops->unload(b, k);
    f->ops->close(b);
}

/* The host is the cpu backend's only device unless it is told to present more, all of one
 * kind: naming another must fail, and say why. */
static void test_attach_refuses_other_devices(void **state)
{
    fixture *f = *state;
    fdt_backend *b = NULL, *second = NULL;
    fdt_error err = {0};
    assert_int_not_equal(f->ops->attach(3, NULL, &b, &err), FDT_OK);
    assert_null(b);
    assert_non_null(strstr(err.msg, "has 1 device (0 to 0), not 3"));
    fdt_cpu_set_devices(2);
    assert_int_equal(f->ops->open(1, &second, &err), FDT_OK);
    char fp0[20], fp1[20];
    fdt_device_fingerprint(f->ops->info(f->backend), fp0);
    fdt_device_fingerprint(f->ops->info(second), fp1);
    assert_string_equal(fp0, fp1);
    f->ops->close(second);
    assert_int_not_equal(f->ops->open(2, &second, &err), FDT_OK);
    assert_non_null(strstr(err.msg, "has 2 devices (0 to 1), not 2"));
    fdt_cpu_set_devices(1);
}

/* Every shape of the interior copy (the second ceiling) copies u's interior to f and leaves
 * the R outermost layers alone, on an odd shape and a radius that leaves a partial chunk. */
static void test_interior_copy_copies_the_interior(void **state)
{
    fixture *f = *state;
    const fdt_problem p = {.stencil = "laplacian", .nx = 13, .ny = 9, .nz = 21, .radius = 2,
                           .precision = FDT_DOUBLE};
    enum { N = 13 * 9 * 21 };
    double u[N], out[N];
    for (int i = 0; i < N; i++)
        u[i] = i + 0.5;
    fdt_error err = {0};
    for (int w = 0; w < FDT_INTERIOR_COPIES; w++) {
        fdt_defines d;
        fdt_dim3 grid, block;
        fdt_interior_copy_kernel(w, &p, &d, &grid, &block);
        fdt_code code = {0};
        fdt_kernel *k = NULL;
        if (f->ops->compile(f->ops->info(f->backend)->arch, fdt_interior_copy_source(),
                            "fdt_interior_copy", d.list, d.count, &code, &err) != FDT_OK)
            fail_msg("compile: %s", err.msg);
        assert_int_equal(f->ops->load(f->backend, &code, "fdt_interior_copy", &k, &err), FDT_OK);
        fdt_code_free(&code);
        for (int i = 0; i < N; i++)
            out[i] = -1;
        fdt_devptr fp = (fdt_devptr)(uintptr_t)out, up = (fdt_devptr)(uintptr_t)u;
        int nx = p.nx, ny = p.ny, nz = p.nz, pitch = nx;
        void *args[] = {&fp, &up, &nx, &ny, &nz, &pitch};
        assert_int_equal(f->ops->launch(f->backend, k, grid, block, args, &err), FDT_OK);
        f->ops->unload(f->backend, k);
        for (int z = 0, i = 0; z < nz; z++)
            for (int y = 0; y < ny; y++)
                for (int x = 0; x < nx; x++, i++) {
                    const int inside = x >= 2 && y >= 2 && z >= 2 && x < nx - 2 && y < ny - 2 &&
                                       z < nz - 2;
                    if (out[i] != (inside ? u[i] : -1))
                        fail_msg("shape %d: f(%d,%d,%d) = %g", w, x, y, z, out[i]);
                }
    }
}

/* The L2 kernel's launch: half the L2 in chunks of whole groups of four loads per thread,
 * a block of 256 threads on a GPU, of one where threads run one after another; none where
 * the L2 size is unknown. */
static void test_l2_launch(void **state)
{
    (void)state;
    const fdt_device_info h100 = {.backend = "cuda", .compute_units = 132,
                                  .l2_bytes = 50u << 20, .block_barriers = 1};
    fdt_l2_launch l;
    const size_t n = fdt_l2_read_launch(&h100, &l);
    assert_int_equal(l.block.x, 256);
    assert_int_equal(l.grid.x, 132 * 4);
    assert_int_equal(l.chunk % (4 * 256), 0);
    assert_int_equal(n, (size_t)l.chunk * l.grid.x);
    assert_true(n * sizeof(double) <= (25u << 20) && n * sizeof(double) > (20u << 20));
    assert_true(l.passes > 1);

    const fdt_device_info cpu = {.backend = "cpu", .compute_units = 2, .l2_bytes = 32u << 20};
    assert_int_equal(fdt_l2_read_launch(&cpu, &l), 16u << 20 >> 3);
    assert_int_equal(l.block.x, 1);
    assert_int_equal(l.grid.x, 8);

    const fdt_device_info unknown = {.backend = "cuda", .compute_units = 132,
                                     .block_barriers = 1};
    assert_int_equal(fdt_l2_read_launch(&unknown, &l), 0);
    const fdt_device_info tiny = {.backend = "cuda", .compute_units = 132, .l2_bytes = 4096,
                                  .block_barriers = 1};
    assert_int_equal(fdt_l2_read_launch(&tiny, &l), 0);
}

/* This host as the cpu backend describes it: a block's threads run one after another here,
 * barriers or not (a kernel without them never becomes a team), so the L2 kernel's block is
 * one thread reading its chunk in order. 256 threads each striding over the chunk measured
 * 0.5 to 0.6 GB/s on a 2-core host where one thread measured 5 to 17. */
static void test_l2_launch_on_this_host(void **state)
{
    fixture *f = *state;
    fdt_l2_launch l;
    fdt_l2_read_launch(f->ops->info(f->backend), &l);
    if (l.block.x != 1)
        fail_msg("the L2 kernel's block on the cpu backend: %u threads, not 1 (balance.c "
                 "takes block_barriers %d for threads side by side)", l.block.x,
                 f->ops->info(f->backend)->block_barriers);
}

/* The L2 kernel: in pass p block b reads chunk (b + p) mod blocks, its threads side by side;
 * every thread's sum is that of its own elements, in both block shapes. */
static void test_l2_kernel_reads_every_element(void **state)
{
    fixture *f = *state;
    const char *const *defines;
    size_t count;
    const char *source = fdt_l2_read_kernel(&defines, &count);
    fdt_code code = {0};
    fdt_kernel *k = NULL;
    fdt_error err = {0};
    if (f->ops->compile("host", source, "fdt_l2_read", defines, count, &code, &err) != FDT_OK)
        fail_msg("compile: %s", err.msg);
    assert_int_equal(f->ops->load(f->backend, &code, "fdt_l2_read", &k, &err), FDT_OK);
    fdt_code_free(&code);
    enum { L2 = 64 << 10, N = L2 / 2 / sizeof(double) };
    static double in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = i;
    /* A cpu's block shape, then a GPU's. */
    const fdt_device_info devs[] = {{.backend = "cpu", .compute_units = 2, .l2_bytes = L2},
                                    {.backend = "cuda", .compute_units = 2, .l2_bytes = L2,
                                     .block_barriers = 1}};
    for (size_t d = 0; d < 2; d++) {
        const fdt_device_info dev = devs[d];
        fdt_l2_launch l;
        assert_int_equal(fdt_l2_read_launch(&dev, &l), N);
        fdt_devptr op = (fdt_devptr)(uintptr_t)out, ip = (fdt_devptr)(uintptr_t)in;
        void *args[] = {&op, &ip, &l.chunk, &l.passes};
        assert_int_equal(f->ops->launch(f->backend, k, l.grid, l.block, args, &err), FDT_OK);
        for (unsigned b = 0; b < l.grid.x; b++)
            for (unsigned t = 0; t < l.block.x; t++) {
                double want = 0;
                for (int p = 0; p < l.passes; p++)
                    for (int i = (int)t; i < l.chunk; i += (int)l.block.x)
                        want += (b + p) % l.grid.x * l.chunk + i;
                if (out[b * l.block.x + t] != want)
                    fail_msg("block %u thread %u: %g, not %g", b, t, out[b * l.block.x + t],
                             want);
            }
    }
    f->ops->unload(f->backend, k);
}

/* The balance, measured for real on the host: positive figures, stamped now. */
static void test_balance_on_the_cpu(void **state)
{
    fixture *f = *state;
    fdt_balance b;
    fdt_error err = {0};
    const fdt_timing timing = {.min_sample_ms = 0.1, .samples = 3, .timeout_ms = 60000};
    const int64_t before = (int64_t)time(NULL);
    if (fdt_balance_measure(f->ops, f->backend, &timing, &b, &err) != FDT_OK)
        fail_msg("balance: %s", err.msg);
    assert_true(f->ops->info(f->backend)->l2_bytes > 0);
    assert_true(b.copy_gbps > 0 && b.l2_gbps > 0);
    assert_true(b.measured >= before && b.measured <= (int64_t)time(NULL));
}

/* The whole engine, as `fdtune bench` drives it, on a sample of the space. */
static void test_bench_end_to_end(void **state)
{
    (void)state;
    fdt_bench_opts o;
    fdt_bench_defaults(&o);
    o.backend = "cpu";
    o.problem = (fdt_problem){.stencil = "laplacian", .nx = 19, .ny = 14, .nz = 12, .radius = 1,
                              .precision = FDT_DOUBLE};
    o.filter.family = "tiled";
    o.subset = 5;
    o.timing = quick;
    o.timing.samples = 3;
    o.leaders = 2;
    o.leader_samples = 3;
    fdt_bench_report rep;
    fdt_error err = {0};
    if (fdt_bench_run(&o, &rep, &err) != FDT_OK)
        fail_msg("bench: %s", err.msg);
    assert_int_equal(rep.count, 5);
    assert_int_equal(rep.ok, 5);
    assert_true(rep.results[0].leader && rep.results[1].leader && !rep.results[2].leader);
    for (size_t i = 1; i < rep.ok; i++)
        assert_true(rep.results[i].stats.median_ms >= rep.results[i - 1].stats.median_ms ||
                    rep.results[i].leader != rep.results[i - 1].leader);
    assert_true(rep.base.copy_gbps > 0 && rep.base.kernel1.gbps > 0 && rep.gpu_ms > 0);
    assert_true(rep.base.kernel1.stats.samples >= o.leader_samples);
    assert_int_equal(rep.base.kernel1.stats.samples, rep.results[0].stats.samples);
    assert_int_equal(rep.base.copy.samples, rep.base.kernel1.stats.samples);
    fdt_bench_report_free(&rep);
}

/* A bound no real timing meets: every variant is timed three times and stored noisy with
 * its figures kept, none is a leader, and the report counts them as failed. With no bound
 * the same variants are ok (test_bench_end_to_end). */
static void test_noisy_is_timed_again_then_refused(void **state)
{
    (void)state;
    fdt_bench_opts o;
    fdt_bench_defaults(&o);
    o.backend = "cpu";
    o.problem = (fdt_problem){.stencil = "laplacian", .nx = 19, .ny = 14, .nz = 12, .radius = 1,
                              .precision = FDT_DOUBLE};
    o.filter.family = "tiled";
    o.subset = 3;
    o.timing = quick;
    o.timing.samples = 5;
    o.timing.max_spread = 1e-12;
    o.leaders = 2;
    o.leader_samples = 3;
    fdt_bench_report rep;
    fdt_error err = {0};
    if (fdt_bench_run(&o, &rep, &err) != FDT_OK)
        fail_msg("bench: %s", err.msg);
    assert_int_equal(rep.count, 3);
    assert_int_equal(rep.ok, 0);
    assert_int_equal(rep.failed, 3);
    for (size_t i = 0; i < rep.count; i++) {
        const fdt_result *r = &rep.results[i];
        /* Refused in the first pass after every try, or, where a first pass's samples
         * happened to tie with the fastest to the nanosecond (seen once under the
         * sanitizers), refused as a leader in the second round. */
        assert_int_equal(r->status, FDT_NOISY);
        assert_true(r->gbps > 0 && fdt_stats_spread(&r->stats) > o.timing.max_spread);
        assert_non_null(strstr(r->message, r->leader ? "was busy" : "over every try"));
    }
    fdt_bench_report_free(&rep);
}

/* What the session's hooks saw of one measure call, and the code objects they were offered
 * (the daemon's cache stands behind these hooks; here a table, since the session is tested). */
#define PIPELINE_N 6
typedef struct pipeline_seen {
    char keys[PIPELINE_N][33];
    fdt_code codes[PIPELINE_N]; /* offered, in order of offer */
    size_t puts, results, compiled, cached;
    size_t order[PIPELINE_N];   /* indices in the order reported */
    int reported[PIPELINE_N];
    const struct pipeline_seen *cache; /* answers every other code it was offered; NULL */
} pipeline_seen;

static int seen_get(void *ctx, const char *key, fdt_code *code)
{
    const pipeline_seen *c = ((pipeline_seen *)ctx)->cache;
    for (size_t i = 0; c && i < c->puts; i += 2)
        if (strcmp(c->keys[i], key) == 0) {
            code->data = malloc(c->codes[i].size);
            memcpy(code->data, c->codes[i].data, c->codes[i].size);
            code->size = c->codes[i].size;
            return 1;
        }
    return 0;
}

static void seen_put(void *ctx, const char *key, const fdt_code *code)
{
    pipeline_seen *p = ctx;
    assert_true(p->puts < PIPELINE_N);
    strcpy(p->keys[p->puts], key);
    p->codes[p->puts].data = malloc(code->size);
    memcpy(p->codes[p->puts].data, code->data, code->size);
    p->codes[p->puts++].size = code->size;
}

static void seen_compiled(void *ctx, size_t count, size_t cached, double wall_ms)
{
    pipeline_seen *p = ctx;
    assert_int_equal(count, PIPELINE_N);
    assert_true(wall_ms >= 0);
    p->compiled++;
    p->cached = cached;
}

static void seen_result(void *ctx, const fdt_result *r)
{
    pipeline_seen *p = ctx;
    assert_true(r->index < PIPELINE_N && !p->reported[r->index]);
    assert_int_equal(r->status, FDT_OK);
    p->reported[r->index] = 1;
    p->order[p->results++] = r->index;
}

static void measure_seen(fdt_session *s, const fdt_variant *vs, pipeline_seen *seen)
{
    fdt_error err = {0};
    const fdt_session_hooks h = {.ctx = seen, .code_get = seen_get, .code_put = seen_put,
                                 .compiled = seen_compiled, .result = seen_result};
    if (fdt_session_measure(s, vs, PIPELINE_N, &h, &err) != FDT_OK)
        fail_msg("measure: %s", err.msg);
    assert_int_equal(seen->results, PIPELINE_N);
    assert_int_equal(seen->compiled, 1);
}

/* A session on the cpu backend (compile threads, pipeline, interior_copy as given) prepared
 * for p, and n tiled variants spread over the family's space (salt) in vs; jobs hold them. */
static void tiled_session(fdt_session *s, int threads, int pipeline, int interior_copy,
                          const fdt_problem *p, const fdt_timing *timing, unsigned seed,
                          size_t salt, fdt_compile_job *jobs, fdt_variant *vs, size_t n)
{
    fdt_error err = {0};
    if (fdt_session_open(s, "cpu", 0, threads, &err) != FDT_OK)
        fail_msg("open: %s", err.msg);
    s->pipeline = pipeline;
    s->interior_copy = interior_copy;
    if (fdt_session_prepare(s, p, timing, seed, &err) != FDT_OK)
        fail_msg("prepare: %s", err.msg);
    assert_true(pick(p, s->device, "tiled", salt, jobs) >= n);
    for (size_t i = 0; i < n; i++)
        vs[i] = jobs[i].variant;
}

/* The pipeline (what a GPU runs; forced here on the cpu backend): every variant is timed as
 * its compile ends and reported once, each compiled one offered to the cache, the compiled
 * hook called once at the end; a second call finds half of them in the cache and times
 * those first, compiling and offering only the others. */
static void test_pipeline_times_each_variant_once(void **state)
{
    (void)state;
    fdt_session s;
    const fdt_problem p = {.stencil = "laplacian", .nx = 21, .ny = 13, .nz = 11, .radius = 1,
                           .precision = FDT_DOUBLE};
    fdt_compile_job jobs[PER_FAMILY];
    fdt_variant vs[PIPELINE_N];
    tiled_session(&s, 2, 1, 0, &p, &quick, 7, 3, jobs, vs, PIPELINE_N);

    pipeline_seen first = {0};
    measure_seen(&s, vs, &first);
    assert_int_equal(first.puts, PIPELINE_N);
    assert_int_equal(first.cached, 0);

    pipeline_seen second = {.cache = &first};
    measure_seen(&s, vs, &second);
    assert_int_equal(second.cached, PIPELINE_N / 2);
    assert_int_equal(second.puts, PIPELINE_N / 2);
    for (size_t k = 0; k < PIPELINE_N / 2; k++) { /* the hits, first */
        char key[33];
        fdt_defines d;
        fdt_variant_defines(&vs[second.order[k]], &p, &d);
        fdt_code_key(fdt_family_source(vs[second.order[k]].family), d.list, d.count,
                     s.device->arch, s.device->compiler_version, key);
        int hit = 0;
        for (size_t i = 0; i < PIPELINE_N; i += 2)
            hit |= strcmp(first.keys[i], key) == 0;
        assert_true(hit);
    }
    for (size_t i = 0; i < PIPELINE_N; i++) {
        fdt_code_free(&first.codes[i]);
        fdt_code_free(&second.codes[i]);
    }
    for (size_t i = 0; i < PER_FAMILY; i++)
        fdt_code_free(&jobs[i].code);
    fdt_session_close(&s);
}

/* One measure call's results, by the variants' indices, and the order they came in. */
#define RACE_N 4
typedef struct race_seen {
    fdt_result results[RACE_N];
    size_t order[RACE_N], n;
} race_seen;

static void race_result(void *ctx, const fdt_result *r)
{
    race_seen *seen = ctx;
    assert_true(r->index < RACE_N && seen->n < RACE_N);
    seen->results[r->index] = *r;
    seen->order[seen->n++] = r->index;
}

/* Racing is what spares the first pass most of its samples, so it must be seen on a real
 * device. zmarch comes first (one compile thread hands variants over in the order given),
 * with no fastest known: it must take all 15 samples. zvec with one z per block and naive
 * run 6 to 26 times slower here: a race that never ends would give them 15 too. One OpenMP
 * thread, because two on a busy 2-core host wait at every launch's barrier for a scheduler
 * slice (8 or 16 ms), which makes every variant the same speed. */
static void test_slow_variants_are_raced_out(void **state)
{
    (void)state;
    const char *names[RACE_N] = {"zmarch:32x2x1:mz16", "zvec:128x8x1:mz1",
                                 "zvec:64x2x1:mz1:lb:nt", "naive:512x1x2:lb:map"};
    fdt_variant vs[RACE_N];
    char why[128];
    for (size_t i = 0; i < RACE_N; i++)
        assert_int_equal(fdt_variant_parse(names[i], &vs[i], why, sizeof why), 0);
    fdt_session s;
    fdt_error err = {0};
    fdt_timing timing = quick;
    timing.samples = 15;
    const fdt_problem p = {.stencil = "laplacian", .nx = 33, .ny = 17, .nz = 21, .radius = 1,
                           .precision = FDT_DOUBLE};
    if (fdt_session_open(&s, "cpu", 0, 1, &err) != FDT_OK ||
        fdt_session_prepare(&s, &p, &timing, 5, &err) != FDT_OK)
        fail_msg("session: %s", err.msg);
    race_seen seen = {0};
    const fdt_session_hooks h = {.ctx = &seen, .result = race_result};
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    const fdt_status st = fdt_session_measure(&s, vs, RACE_N, &h, &err);
    omp_set_num_threads(threads);
    fdt_session_close(&s);
    if (st != FDT_OK)
        fail_msg("measure: %s", err.msg);
    assert_int_equal(seen.n, RACE_N);
    assert_int_equal(seen.order[0], 0);
    assert_int_equal(seen.results[0].status, FDT_OK);
    assert_int_equal(seen.results[0].stats.samples, 15);
    int raced = 0;
    for (size_t i = 1; i < RACE_N; i++) {
        const fdt_result *r = &seen.results[i];
        assert_int_equal(r->status, FDT_OK);
        raced += r->stats.samples == 5;
    }
    if (!raced)
        fail_msg("none raced out: %s took %d samples, median %.4f ms beside zmarch's %.4f ms",
                 names[1], seen.results[1].stats.samples, seen.results[1].stats.median_ms,
                 seen.results[0].stats.median_ms);
}

/* A job times its first pass hot and its leaders in mode auto, back and forth: the runner
 * changes mode in place, keeping its reference (seconds of host work at 1024^3 each time it
 * is built), and a mode the device lacks is refused with the runner left as it was. A new
 * grid does build a new one. */
static void test_cache_mode_switch_keeps_the_reference(void **state)
{
    (void)state;
    fdt_session s;
    fdt_error err = {0};
    fdt_problem p = {.stencil = "laplacian", .nx = 19, .ny = 14, .nz = 12, .radius = 1,
                     .precision = FDT_DOUBLE};
    if (fdt_session_open(&s, "cpu", 0, 1, &err) != FDT_OK ||
        fdt_session_prepare(&s, &p, &quick, 3, &err) != FDT_OK)
        fail_msg("session: %s", err.msg);
    p.cache = FDT_CACHE_AUTO;
    assert_int_equal(fdt_session_prepare(&s, &p, &quick, 3, &err), FDT_OK);
    assert_int_equal(s.runner.problem.cache, FDT_CACHE_AUTO);
    p.cache = FDT_CACHE_PERSIST; /* the cpu backend has no L2 eviction priorities */
    assert_int_equal(fdt_session_prepare(&s, &p, &quick, 3, &err), FDT_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "persist"));
    assert_int_equal(s.runner.problem.cache, FDT_CACHE_AUTO);
    p.cache = FDT_CACHE_HOT;
    assert_int_equal(fdt_session_prepare(&s, &p, &quick, 3, &err), FDT_OK);
    assert_int_equal(s.references, 1);

    race_seen seen = {0};
    fdt_variant v = fdt_variant_kernel1(&p);
    const fdt_session_hooks h = {.ctx = &seen, .result = race_result};
    assert_int_equal(fdt_session_measure(&s, &v, 1, &h, &err), FDT_OK);
    assert_int_equal(seen.n, 1);
    assert_int_equal(seen.results[0].status, FDT_OK);

    p.nz++;
    assert_int_equal(fdt_session_prepare(&s, &p, &quick, 3, &err), FDT_OK);
    assert_int_equal(s.references, 2);
    fdt_session_close(&s);
}

/* An argument runs only the tests whose names match it (cmocka's pattern: * and ?). */
/* The guess at a first leaders' round (what a job's ETA counts before its device timed one)
 * counts what the round does, on the cpu backend as the daemon runs it (the leaders from
 * the code cache, the interior copies timed beside the copy): with a sample's cost set to
 * 1 and the rest to 0 it is the round's samples, every candidate's; with a launch's set to
 * 1/2 its turns (a warm-up and a timing launch each), which the begin hook counts. Its
 * time beside the round's is printed, not judged: both move with what else the host runs. */
#define GUESS_N 4
typedef struct guess_cache {
    race_seen seen;
    char keys[GUESS_N][33];
    fdt_code codes[GUESS_N];
    size_t n;
    int turns;                /* begin hooks: a candidate's turn each */
} guess_cache;

static int guess_get(void *ctx, const char *key, fdt_code *code)
{
    const guess_cache *c = ctx;
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->keys[i], key) == 0) {
            code->data = malloc(c->codes[i].size);
            memcpy(code->data, c->codes[i].data, c->codes[i].size);
            code->size = c->codes[i].size;
            return 1;
        }
    return 0;
}

static void guess_put(void *ctx, const char *key, const fdt_code *code)
{
    guess_cache *c = ctx;
    if (c->n == GUESS_N)
        return; /* kernel 1's, in the round: the daemon's cache would take it */
    strcpy(c->keys[c->n], key);
    c->codes[c->n].data = malloc(code->size);
    memcpy(c->codes[c->n].data, code->data, code->size);
    c->codes[c->n++].size = code->size;
}

static void guess_result(void *ctx, const fdt_result *r)
{
    race_result(&((guess_cache *)ctx)->seen, r);
}

static void guess_begin(void *ctx, const fdt_variant *v)
{
    (void)v;
    ((guess_cache *)ctx)->turns++;
}

static void test_leaders_guess_counts_the_round(void **state)
{
    (void)state;
    fdt_session s;
    fdt_error err = {0};
    const fdt_timing timing = {.min_sample_ms = 0.5, .samples = 6, .timeout_ms = 60000};
    const fdt_problem p = {.stencil = "laplacian", .nx = 40, .ny = 36, .nz = 32, .radius = 1,
                           .precision = FDT_DOUBLE};
    fdt_compile_job jobs[PER_FAMILY];
    fdt_variant vs[GUESS_N];
    tiled_session(&s, 1, 0, 1, &p, &timing, 9, 5, jobs, vs, GUESS_N);
    guess_cache cache = {0};
    const fdt_session_hooks h = {.ctx = &cache, .code_get = guess_get, .code_put = guess_put,
                                 .begin = guess_begin, .result = guess_result};
    assert_int_equal(fdt_session_measure(&s, vs, GUESS_N, &h, &err), FDT_OK);
    double sample_ms = 0, launch_ms = 0, compile_ms = 0;
    for (size_t i = 0; i < GUESS_N; i++) {
        const fdt_result *r = &cache.seen.results[i];
        assert_int_equal(r->status, FDT_OK);
        sample_ms += r->stats.reps * r->stats.median_ms / GUESS_N;
        launch_ms += r->stats.median_ms / GUESS_N;
        compile_ms += r->compile_ms / GUESS_N;
    }
    const int samples = 50;
    cache.seen.n = 0;
    cache.turns = 0;
    fdt_session_baseline base;
    const uint64_t t0 = fdt_monotonic_ns();
    assert_int_equal(fdt_session_leaders(&s, vs, GUESS_N, samples, &h, &base, &err), FDT_OK);
    const double round = (double)(fdt_monotonic_ns() - t0) / 1e6;
    /* every candidate's samples: the leaders', kernel 1's, the copy's, and the interior
     * copies', each as many as the fastest of them took */
    int taken = base.kernel1.stats.samples + base.copy.samples +
                FDT_INTERIOR_COPIES * base.interior_copy.samples;
    for (size_t i = 0; i < GUESS_N; i++)
        taken += cache.seen.results[i].stats.samples;
    assert_int_equal(fdt_session_leaders_guess_ms(GUESS_N, 0, samples, 1, 0, 0), taken);
    assert_int_equal(fdt_session_leaders_guess_ms(GUESS_N, 0, samples, 0, 0.5, 0), cache.turns);
    print_message("leaders' round %.0f ms, guessed %.0f ms (a sample %.2f ms, a launch %.2f, "
                  "a compile %.0f)\n", round,
                  fdt_session_leaders_guess_ms(GUESS_N, 0, samples, sample_ms, launch_ms,
                                               compile_ms),
                  sample_ms, launch_ms, compile_ms);
    for (size_t i = 0; i < cache.n; i++)
        fdt_code_free(&cache.codes[i]);
    for (size_t i = 0; i < PER_FAMILY; i++)
        fdt_code_free(&jobs[i].code);
    fdt_session_close(&s);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_families_verify_on_odd_shapes),
        cmocka_unit_test(test_barrier_families_verify_on_odd_shapes),
        cmocka_unit_test(test_ring_verifies_on_rows_of_whole_vectors),
        cmocka_unit_test(test_spec_families_verify_on_odd_shapes),
        cmocka_unit_test(test_families_verify_at_every_layout),
        cmocka_unit_test(test_spec_families_verify_at_every_layout),
        cmocka_unit_test(test_banded_variants_verify),
        cmocka_unit_test(test_broken_variants_are_caught),
        cmocka_unit_test(test_tolerances_are_pinned),
        cmocka_unit_test(test_a_wrong_tap_is_caught),
        cmocka_unit_test(test_compile_error_is_reported),
        cmocka_unit_test(test_attach_runs_a_kernel),
        cmocka_unit_test(test_attach_refuses_other_devices),
        cmocka_unit_test(test_interior_copy_copies_the_interior),
        cmocka_unit_test(test_l2_launch),
        cmocka_unit_test(test_l2_launch_on_this_host),
        cmocka_unit_test(test_l2_kernel_reads_every_element),
        cmocka_unit_test(test_balance_on_the_cpu),
        cmocka_unit_test(test_bench_end_to_end),
        cmocka_unit_test(test_noisy_is_timed_again_then_refused),
        cmocka_unit_test(test_pipeline_times_each_variant_once),
        cmocka_unit_test(test_slow_variants_are_raced_out),
        cmocka_unit_test(test_cache_mode_switch_keeps_the_reference),
        cmocka_unit_test(test_leaders_guess_counts_the_round),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
