/* test_hip_variants.c - every kernel family, at radius 1, 2 and 4 and in both precisions,
 * compiles with hiprtc for the MI250X (gfx90a) and the MI50/MI60 and DCU class (gfx906), on a
 * host with no GPU (R = 3 is left out for time: its x halo rounds to whole vectors as R = 4's
 * does, and test_variant checks its shared memory). One variant per distinct set of the
 * family's own compile-time parameters (m, mz, order, lb, nt, map) is compiled; the block
 * shape only changes constants. The registers, scratch and LDS read from each code object go
 * to a report, hip_resources.tsv in $FDTUNE_REPORT_DIR (make sets its build folder), else
 * beside the test's binary: a generated file never lands in the source tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "backends/amdgpu_codeobj.h"
#include "engine/balance.h"
#include "engine/compile_helper.h"
#include "engine/compile_pool.h"
#include "engine/variant.h"

/* The limits of a gfx90a / gfx906 device: 64-lane wavefronts, 64 KiB of LDS per block. */
static const fdt_device_info amd = {
    .warp_size = 64, .max_threads_per_block = 1024, .max_shared_per_block = 65536,
    .max_grid = {2147483647u, 65535, 65535}, .block_barriers = 1};

/* A band changes only which block takes which tile, not the code: one banded variant per
 * family stands for all of them. */
static int same_code_shape(const fdt_variant *a, const fdt_variant *b)
{
    if (a->band || b->band)
        return a->family == b->family && a->band && b->band;
    return a->family == b->family && a->m == b->m && a->mz == b->mz && a->order == b->order &&
           a->lb == b->lb && a->nt == b->nt && a->map == b->map &&
           a->bug == b->bug;
}

/* The first variant of each distinct code shape in the space. */
static size_t representatives(const fdt_problem *p, fdt_compile_job **out)
{
    const fdt_space_filter filter = {0};
    const size_t n = fdt_space_enumerate(p, &amd, &filter, NULL, 0);
    fdt_variant *all = calloc(n, sizeof *all);
    fdt_compile_job *jobs = calloc(n, sizeof *jobs);
    fdt_space_enumerate(p, &amd, &filter, all, n);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < k && !same_code_shape(&jobs[j].variant, &all[i]))
            j++;
        if (j == k)
            jobs[k++].variant = all[i];
    }
    free(all);
    *out = jobs;
    return k;
}

static char report_dir[1024] = ".";

static FILE *open_report(void)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/hip_resources.tsv", report_dir);
    FILE *f = fopen(path, "w");
    if (!f)
        fail_msg("cannot write %s", path);
    fprintf(f, "arch\tradius\tprecision\tvariant\tvgprs\tsgprs\tscratch_bytes\tlds_bytes\n");
    return f;
}

static void check_job(FILE *report, const char *arch, const fdt_problem *p,
                      fdt_compile_job *job, size_t counts[2])
{
    char name[FDT_VARIANT_NAME_MAX];
    fdt_variant_name(&job->variant, name, sizeof name);
    if (job->status != FDT_OK)
        fail_msg("%s R=%d %s %s: %s: %s", arch, p->radius, fdt_precision_name(p->precision),
                 name, fdt_status_name(job->status), job->message);
    fdt_resources res;
    fdt_error err = {0};
    if (fdt_amdgpu_resources(job->code.data, job->code.size, "fdt_laplacian", &res, &err))
        fail_msg("%s %s: %s", arch, name, err.msg);
    assert_true(res.vgprs > 0 && res.sgprs > 0 && res.scratch_bytes >= 0);
    /* The LDS the compiler allotted is the shared memory the constraints budgeted. */
    assert_int_equal(res.shared_bytes, fdt_variant_shared_bytes(&job->variant, p));
    fprintf(report, "%s\t%d\t%s\t%s\t%d\t%d\t%d\t%d\n", arch, p->radius,
            fdt_precision_name(p->precision), name, res.vgprs, res.sgprs, res.scratch_bytes,
            res.shared_bytes);
    counts[0]++;
    counts[1] += res.scratch_bytes > 0;
}

static void test_every_family_compiles_for_amd(void **state)
{
    (void)state;
    const char *archs[] = {"gfx90a", "gfx906"};
    FILE *report = open_report();
    size_t counts[2] = {0, 0}; /* compiled, with scratch (spills or stack) */
    int families_seen[16] = {0};
    /* hiprtc, like NVRTC, compiles one at a time per process (two threads kept one core of
     * two busy, 679 s against 323 s): a helper process per core, as the worker has. */
    const int cores = (int)uv_available_parallelism();
    fdt_compile_helpers *helpers = fdt_compile_helpers_new("/proc/self/exe", "hip", cores);
    for (int radius = 1; radius <= 4; radius *= 2)
        for (int prec = 0; prec < 2; prec++) {
            const fdt_problem p = {.nx = 256, .ny = 256, .nz = 256, .radius = radius,
                                   .precision = prec ? FDT_DOUBLE : FDT_FLOAT};
            fdt_compile_job *jobs;
            const size_t n = representatives(&p, &jobs);
            for (size_t a = 0; a < 2; a++) {
                fdt_compile_all(&fdt_backend_hip, helpers, archs[a], &p, jobs, n, cores);
                for (size_t i = 0; i < n; i++) {
                    check_job(report, archs[a], &p, &jobs[i], counts);
                    for (int f = 0; fdt_families()[f]; f++)
                        families_seen[f] |= fdt_families()[f] == jobs[i].variant.family;
                    fdt_code_free(&jobs[i].code);
                }
            }
            free(jobs);
        }
    fdt_compile_helpers_free(helpers);
    fclose(report);
    for (int f = 0; fdt_families()[f]; f++)
        assert_true(families_seen[f] || fdt_family_test_only(fdt_families()[f]));
    printf("compiled %zu code objects for gfx90a and gfx906; %zu use scratch\n", counts[0],
           counts[1]);
}

/* The interior copy (the second ceiling) builds for AMD too, every shape, both precisions. */
static void test_interior_copy_compiles_for_amd(void **state)
{
    (void)state;
    const char *archs[] = {"gfx90a", "gfx906"};
    for (int prec = 0; prec < 2; prec++) {
        const fdt_problem p = {.nx = 256, .ny = 256, .nz = 256, .radius = 1,
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
        cmocka_unit_test(test_interior_copy_compiles_for_amd),
        cmocka_unit_test(test_l2_kernel_compiles_for_amd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
