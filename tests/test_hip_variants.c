/* test_hip_variants.c - the hip space of the MI250X (gfx90a) and the MI50/MI60 and DCU class
 * (gfx906), enumerated from each arch's facts (backends/amdgpu_archs.c) on a host with no
 * GPU, compiles with hiprtc: every family, at R = 1 in both precisions and at R = 4 in
 * double, the most registers (R = 2 and 3, and R = 4 in float, fall between; left out for
 * time, as test_variant checks their shared memory). One variant per distinct set of the
 * family's own compile-time parameters (m, mz, order, lb, nt, map, wpe) is compiled; the
 * block shape changes constants and, under launch bounds, the registers the compiler may
 * use: the first block of the space stands for the others.
 *
 * The registers, scratch and LDS read from each code object go to a report,
 * hip_resources.tsv, and the space's size and its share of code objects without scratch to
 * hip_space.tsv, in $FDTUNE_REPORT_DIR (make sets its build folder), else beside the test's
 * binary: a generated file never lands in the source tree. The spill guard then holds the
 * report against the checked-in one, bench/results/hip_resources_gfx90a_gfx906.tsv
 * ($FDTUNE_RESOURCE_BASELINE): a code object with scratch (spills or stack) where the
 * checked-in report has none fails, and so does any row either report lacks, so that a
 * change to a family or to the space lands with its report, and a regression for AMD
 * cannot land unseen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "backends/amdgpu_archs.h"
#include "backends/amdgpu_codeobj.h"
#include "engine/balance.h"
#include "engine/compile_helper.h"
#include "engine/compile_pool.h"
#include "engine/stencil.h"
#include "engine/variant.h"
#include "example_spec.h"

/* A band changes only which block takes which tile, not the code: one banded variant per
 * family stands for all of them. */
static int same_code(const fdt_variant *a, const fdt_variant *b)
{
    if (a->band || b->band)
        return a->family == b->family && a->band && b->band;
    return a->family == b->family && a->m == b->m && a->mz == b->mz && a->order == b->order &&
           a->lb == b->lb && a->nt == b->nt && a->map == b->map && a->wpe == b->wpe &&
           a->bug == b->bug;
}

static int block_threads(const fdt_variant *v)
{
    return v->bx * v->by * v->bz;
}

/* One variant of each distinct code in dev's space, the one of the largest block: under
 * launch bounds the compiler caps a thread's registers by its block's size, so that block
 * spills first. The space's size in *space. */
static size_t representatives(const fdt_problem *p, const fdt_device_info *dev,
                              fdt_compile_job **out, size_t *space)
{
    const fdt_space_filter filter = {0};
    const size_t n = fdt_space_enumerate(p, dev, &filter, NULL, 0);
    fdt_variant *all = calloc(n, sizeof *all);
    fdt_compile_job *jobs = calloc(n, sizeof *jobs);
    fdt_space_enumerate(p, dev, &filter, all, n);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < k && !same_code(&jobs[j].variant, &all[i]))
            j++;
        if (j == k)
            jobs[k++].variant = all[i];
        else if (block_threads(&all[i]) > block_threads(&jobs[j].variant))
            jobs[j].variant = all[i];
    }
    free(all);
    *out = jobs;
    *space = n;
    return k;
}

/* One variant a family of p's space on dev: the longest chunk, then the largest block,
 * with no waves-per-EU bound; at most cap. */
static size_t heaviest_of_each_family(const fdt_problem *p, const fdt_device_info *dev,
                                      fdt_compile_job *jobs, size_t cap)
{
    const fdt_space_filter filter = {0};
    const size_t n = fdt_space_enumerate(p, dev, &filter, NULL, 0);
    fdt_variant *all = calloc(n, sizeof *all);
    assert_non_null(all);
    fdt_space_enumerate(p, dev, &filter, all, n);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (all[i].wpe)
            continue;
        size_t j = 0;
        while (j < k && jobs[j].variant.family != all[i].family)
            j++;
        if (j == k) {
            if (k < cap)
                jobs[k++] = (fdt_compile_job){.variant = all[i]};
            continue;
        }
        const fdt_variant *held = &jobs[j].variant;
        if (all[i].mz > held->mz ||
            (all[i].mz == held->mz && block_threads(&all[i]) > block_threads(held)))
            jobs[j].variant = all[i];
    }
    free(all);
    return k;
}

static char report_dir[1024] = ".";

static FILE *open_in_report_dir(const char *name, const char *header)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/%s", report_dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        fail_msg("cannot write %s", path);
    fprintf(f, "%s\n", header);
    return f;
}

static const char resources_header[] =
    "arch\tradius\tprecision\tvariant\tvgprs\tsgprs\tscratch_bytes\tlds_bytes";

/* Writes job's row of the report; 1 when its code object uses scratch. */
static int check_job(FILE *report, const char *arch, const fdt_problem *p,
                     fdt_compile_job *job)
{
    char name[FDT_VARIANT_NAME_MAX];
    fdt_variant_name(&job->variant, name, sizeof name);
    if (job->status != FDT_OK)
        fail_msg("%s R=%d %s %s: %s: %s", arch, p->radius, fdt_precision_name(p->precision),
                 name, fdt_status_name(job->status), job->message);
    fdt_resources res;
    fdt_error err = {0};
    if (fdt_amdgpu_resources(job->code.data, job->code.size, fdt_stencil_of(p)->entry, &res,
                             &err))
        fail_msg("%s %s: %s", arch, name, err.msg);
    assert_true(res.vgprs > 0 && res.sgprs > 0 && res.scratch_bytes >= 0);
    /* The LDS the compiler allotted is the shared memory the constraints budgeted. */
    assert_int_equal(res.shared_bytes, fdt_variant_shared_bytes(&job->variant, p));
    fprintf(report, "%s\t%d\t%s\t%s\t%d\t%d\t%d\t%d\n", arch, p->radius,
            fdt_precision_name(p->precision), name, res.vgprs, res.sgprs, res.scratch_bytes,
            res.shared_bytes);
    return res.scratch_bytes > 0;
}

/* --- the spill guard --- */

typedef struct resource_row {
    char key[128]; /* arch, radius, precision and variant, tab-separated */
    int scratch;
} resource_row;

static int by_key(const void *a, const void *b)
{
    return strcmp(((const resource_row *)a)->key, ((const resource_row *)b)->key);
}

/* The rows of a report, sorted by key; the file must exist and every row parse. */
static resource_row *read_report(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot read %s", path);
    char line[512], arch[16], precision[16], variant[FDT_VARIANT_NAME_MAX];
    int radius, vgprs, sgprs, scratch, lds;
    size_t cap = 4096, count = 0;
    resource_row *rows = malloc(cap * sizeof *rows);
    if (!fgets(line, sizeof line, f) || strncmp(line, resources_header, strlen(resources_header)))
        fail_msg("%s: not a resource report (its header differs)", path);
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%15[^\t]\t%d\t%15[^\t]\t%63[^\t]\t%d\t%d\t%d\t%d", arch, &radius,
                   precision, variant, &vgprs, &sgprs, &scratch, &lds) != 8)
            fail_msg("%s: a row that does not parse: %s", path, line);
        if (count == cap)
            rows = realloc(rows, (cap *= 2) * sizeof *rows);
        snprintf(rows[count].key, sizeof rows[count].key, "%s\t%d\t%s\t%s", arch, radius,
                 precision, variant);
        rows[count++].scratch = scratch;
    }
    fclose(f);
    qsort(rows, count, sizeof *rows, by_key);
    for (size_t i = 1; i < count; i++)
        if (by_key(&rows[i - 1], &rows[i]) == 0)
            fail_msg("%s: two rows for %s", path, rows[i].key);
    *n = count;
    return rows;
}

static const resource_row *find_row(const resource_row *rows, size_t n, const char *key)
{
    resource_row probe;
    snprintf(probe.key, sizeof probe.key, "%s", key);
    return bsearch(&probe, rows, n, sizeof *rows, by_key);
}

/* Counts, and prints the first few of, the rows of a that b lacks or (scratch_only) that
 * use scratch where b's have none. */
static size_t differences(const resource_row *a, size_t na, const resource_row *b, size_t nb,
                          int scratch_only, const char *what)
{
    size_t count = 0;
    for (size_t i = 0; i < na; i++) {
        const resource_row *other = find_row(b, nb, a[i].key);
        if (scratch_only ? other && a[i].scratch > 0 && other->scratch == 0 : !other) {
            if (count++ < 10)
                printf("# %s: %s\n", a[i].key, what);
        }
    }
    return count;
}

static void guard_spills(const char *generated, const char *baseline)
{
    size_t nnew, nold;
    resource_row *now = read_report(generated, &nnew), *then = read_report(baseline, &nold);
    const size_t spills = differences(now, nnew, then, nold, 1, "scratch where there was none");
    const size_t added = differences(now, nnew, then, nold, 0, "not in the checked-in report");
    const size_t gone = differences(then, nold, now, nnew, 0, "no longer compiled");
    free(now);
    free(then);
    if (spills || added || gone)
        fail_msg("spill guard: %zu code objects now use scratch, %zu rows are new, %zu are "
                 "gone (listed above). A change that means this lands with its report: copy "
                 "%s over %s in the same change.", spills, added, gone, generated, baseline);
}

/* The problems compiled for each arch, at 256^3. */
static const struct {
    int radius;
    fdt_precision precision;
} problems[] = {{1, FDT_FLOAT}, {1, FDT_DOUBLE}, {4, FDT_DOUBLE}};

/* The arch's hip space for each of problems: its size, and each distinct code compiled,
 * written to the report and the summary. */
static void compile_arch(const char *arch, fdt_compile_helpers *helpers, int cores,
                         FILE *report, FILE *summary, int *families_seen)
{
    fdt_device_info dev;
    assert_int_equal(fdt_amdgpu_arch_device(arch, &dev), 0);
    for (size_t k = 0; k < sizeof problems / sizeof problems[0]; k++) {
        const fdt_problem p = {.stencil = "laplacian", .nx = 256, .ny = 256, .nz = 256,
                               .radius = problems[k].radius, .precision = problems[k].precision};
        fdt_compile_job *jobs;
        size_t space, spilled = 0;
        const size_t n = representatives(&p, &dev, &jobs, &space);
        fdt_compile_all(&fdt_backend_hip, helpers, arch, &p, jobs, n, cores);
        for (size_t i = 0; i < n; i++) {
            spilled += check_job(report, arch, &p, &jobs[i]);
            for (int f = 0; fdt_families()[f]; f++)
                families_seen[f] |= fdt_families()[f] == jobs[i].variant.family;
            fdt_code_free(&jobs[i].code);
        }
        fprintf(summary, "%s\t%d\t%s\t%zu\t%zu\t%zu\t%.3f\n", arch, p.radius,
                fdt_precision_name(p.precision), space, n, n - spilled,
                (double)(n - spilled) / (double)n);
        free(jobs);
    }
}

static void test_every_family_compiles_for_amd(void **state)
{
    (void)state;
    const char *archs[] = {"gfx90a", "gfx906"};
    const char *baseline = getenv("FDTUNE_RESOURCE_BASELINE");
    char generated[1100];
    FILE *report = open_in_report_dir("hip_resources.tsv", resources_header);
    FILE *summary = open_in_report_dir(
        "hip_space.tsv", "arch\tradius\tprecision\tspace_variants\tcode_objects\t"
                         "without_scratch\tshare_without_scratch");
    int families_seen[32] = {0};
    /* hiprtc, like NVRTC, compiles one at a time per process (two threads kept one core of
     * two busy, 679 s against 323 s): a helper process per core, as the worker has. */
    const int cores = (int)uv_available_parallelism();
    fdt_compile_helpers *helpers = fdt_compile_helpers_new("/proc/self/exe", "hip", cores);
    for (size_t a = 0; a < 2; a++)
        compile_arch(archs[a], helpers, cores, report, summary, families_seen);
    fdt_compile_helpers_free(helpers);
    fclose(report);
    fclose(summary);
    /* Every family of the Laplacian's (the spec families serve specs) but those that use
     * NVIDIA's own mechanisms, which never come into the hip space. */
    for (int f = 0; fdt_families()[f]; f++) {
        const fdt_family *family = fdt_families()[f];
        assert_int_equal(families_seen[f], !fdt_family_test_only(family) &&
                                               !fdt_family_serves_specs(family) &&
                                               !fdt_family_nvidia_only(family));
    }
    snprintf(generated, sizeof generated, "%s/hip_resources.tsv", report_dir);
    guard_spills(generated, baseline ? baseline : "bench/results/hip_resources_gfx90a_gfx906.tsv");
}

/* The spec families build for AMD from every example spec, in double (the more registers):
 * of each family's codes in the arch's space, the one with the longest chunk (the most
 * z-window registers) and the largest block, without a waves-per-EU bound. Their registers
 * and scratch go to hip_spec_resources.tsv in the report folder. */
static void test_spec_families_compile_for_amd(void **state)
{
    (void)state;
    const char *archs[] = {"gfx90a", "gfx906"};
    const char *specs[] = {"laplacian_r1", "anisotropic", "div_k_grad", "acoustic8",
                           "gradient4", "box27"};
    FILE *report = open_in_report_dir("hip_spec_resources.tsv", resources_header);
    const int cores = (int)uv_available_parallelism();
    fdt_compile_helpers *helpers = fdt_compile_helpers_new("/proc/self/exe", "hip", cores);
    for (size_t a = 0; a < 2; a++) {
        fdt_device_info dev;
        assert_int_equal(fdt_amdgpu_arch_device(archs[a], &dev), 0);
        for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
            fdt_problem p = {.nx = 256, .ny = 256, .nz = 256, .precision = FDT_DOUBLE};
            const fdt_stencil *st = example_spec(specs[k]);
            fdt_copy_text(p.stencil, sizeof p.stencil, st->name);
            p.radius = st->min_radius;
            fdt_compile_job jobs[16];
            const size_t n = heaviest_of_each_family(&p, &dev, jobs, 16);
            assert_true(n >= 5);
            fdt_compile_all(&fdt_backend_hip, helpers, archs[a], &p, jobs, n, cores);
            for (size_t i = 0; i < n; i++) {
                check_job(report, archs[a], &p, &jobs[i]);
                fdt_code_free(&jobs[i].code);
            }
        }
    }
    fdt_compile_helpers_free(helpers);
    fclose(report);
}

/* The interior copy (the second ceiling) builds for AMD too, every shape, both precisions. */
static void test_interior_copy_compiles_for_amd(void **state)
{
    (void)state;
    const char *archs[] = {"gfx90a", "gfx906"};
    for (int prec = 0; prec < 2; prec++) {
        const fdt_problem p = {.stencil = "laplacian", .nx = 256, .ny = 256, .nz = 256, .radius = 1,
                               .precision = prec ? FDT_DOUBLE : FDT_FLOAT};
        for (int w = 0; w < FDT_INTERIOR_COPIES; w++)
            for (size_t a = 0; a < 2; a++) {
                fdt_defines d;
                fdt_dim3 grid, block;
                fdt_interior_copy_kernel(w, &p, &d, &grid, &block);
                fdt_code code = {0};
                fdt_resources res;
                fdt_error err = {0};
                if (fdt_backend_hip.compile(archs[a], fdt_interior_copy_source(),
                                            "fdt_interior_copy", d.list, d.count, &code,
                                            &err) != FDT_OK ||
                    fdt_amdgpu_resources(code.data, code.size, "fdt_interior_copy", &res, &err))
                    fail_msg("%s shape %d: %s", archs[a], w, err.msg);
                assert_true(res.vgprs > 0 && res.scratch_bytes == 0);
                fdt_code_free(&code);
            }
    }
}

/* The balance's L2 kernel builds for AMD too, with no scratch. */
static void test_l2_kernel_compiles_for_amd(void **state)
{
    (void)state;
    const char *archs[] = {"gfx90a", "gfx906"};
    const char *const *defines;
    size_t count;
    const char *source = fdt_l2_read_kernel(&defines, &count);
    for (size_t a = 0; a < 2; a++) {
        fdt_code code = {0};
        fdt_resources res;
        fdt_error err = {0};
        if (fdt_backend_hip.compile(archs[a], source, "fdt_l2_read", defines, count, &code,
                                    &err) != FDT_OK ||
            fdt_amdgpu_resources(code.data, code.size, "fdt_l2_read", &res, &err))
            fail_msg("%s: %s", archs[a], err.msg);
        assert_true(res.vgprs > 0 && res.scratch_bytes == 0);
        fdt_code_free(&code);
    }
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], FDT_COMPILE_HELPER_ARG) == 0)
        return fdt_compile_helper_main(argv[2]); /* this test's compile helpers */
    const char *dir = getenv("FDTUNE_REPORT_DIR");
    const char *slash = argc > 0 ? strrchr(argv[0], '/') : NULL;
    if (dir)
        snprintf(report_dir, sizeof report_dir, "%s", dir);
    else if (slash)
        snprintf(report_dir, sizeof report_dir, "%.*s", (int)(slash - argv[0]), argv[0]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_family_compiles_for_amd),
        cmocka_unit_test(test_spec_families_compile_for_amd),
        cmocka_unit_test(test_interior_copy_compiles_for_amd),
        cmocka_unit_test(test_l2_kernel_compiles_for_amd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
