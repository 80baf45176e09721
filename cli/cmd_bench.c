/* cmd_bench.c - `fdtune bench` and `fdtune variants`: tuning one shape on this host's
 * device with no daemon, and looking at the variant space it would search. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "progress.h"
#include "engine/bench.h"

static const char bench_help[] =
    "usage: fdtune bench NX NY NZ [options]\n"
    "       fdtune variants NX NY NZ [options] [--list]\n"
    "\n"
    "  --precision float|double  element type (default double)\n"
    "  --radius R                stencil radius 1..4; R=1 is the 7-point Laplacian (default 1)\n"
    "  --spec FILE               tune this stencil spec instead of the Laplacian\n"
    "                            (docs/stencils.md; its radius is its reach)\n"
    "  --cache hot|persist|auto  hot: the same buffers every launch (default); persist: also\n"
    "                            f's row edges held in L2 (NVIDIA sm_80+; docs/measurement.md);\n"
    "                            auto: the leaders timed in both, persist kept only where it\n"
    "                            wins by more than noise; cold is not measured yet\n"
    "  --pitch P                 the fields' row pitch in points (default nx: dense rows)\n"
    "  --offset O                points from a 256-byte aligned base to point (0,0,0)\n"
    "                            (default 0; docs/protocol.md, query, Layout)\n"
    "  --backend B               auto, hip, cuda or cpu (default auto)\n"
    "  --device N                device index (default 0)\n"
    "  --family F                only this kernel family (" FDT_FAMILIES_HELP ")\n"
    "  --space auto|nvidia|amd   whose facts choose the parameter lists (default auto: the\n"
    "                            device's vendor's); amd shows the AMD space on any backend\n"
    "  --top N                   rows of the table (default 20)\n"
    "  --subset N                measure N variants spread evenly over the space, not all\n"
    "  --variant NAME            measure only this variant, e.g. tiled:64x1x2:m4:asc\n"
    "  --samples N               samples per variant (default 15)\n"
    "  --leaders N               fastest variants timed again (default 5)\n"
    "  --leader-samples N        samples when timed again, in 5 rounds (default 50)\n"
    "  --min-sample-ms X         least duration of one sample (default 1.0)\n"
    "  --timeout-ms X            a launch running longer has hung (default 5000)\n"
    "  --threads N               compiler threads (default: one per CPU)\n"
    "  --seed N                  seed of the random input (default 12345)\n"
    "  --test-families           also offer test-only families (broken)\n"
    "  --list                    (variants) print each variant, not only the counts\n";

enum { OPT_PRECISION = 256, OPT_RADIUS, OPT_CACHE, OPT_BACKEND, OPT_DEVICE, OPT_FAMILY, OPT_TOP,
       OPT_SAMPLES, OPT_LEADERS, OPT_LEADER_SAMPLES, OPT_MIN_SAMPLE, OPT_TIMEOUT, OPT_THREADS,
       OPT_SEED, OPT_SUBSET, OPT_VARIANT, OPT_TEST_FAMILIES, OPT_LIST, OPT_SPACE, OPT_SPEC,
       OPT_PITCH, OPT_OFFSET, OPT_HELP };

static const struct option options[] = {
    {"precision", required_argument, NULL, OPT_PRECISION},
    {"radius", required_argument, NULL, OPT_RADIUS},
    {"cache", required_argument, NULL, OPT_CACHE},
    {"pitch", required_argument, NULL, OPT_PITCH},
    {"offset", required_argument, NULL, OPT_OFFSET},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"family", required_argument, NULL, OPT_FAMILY},
    {"top", required_argument, NULL, OPT_TOP},
    {"samples", required_argument, NULL, OPT_SAMPLES},
    {"leaders", required_argument, NULL, OPT_LEADERS},
    {"leader-samples", required_argument, NULL, OPT_LEADER_SAMPLES},
    {"min-sample-ms", required_argument, NULL, OPT_MIN_SAMPLE},
    {"timeout-ms", required_argument, NULL, OPT_TIMEOUT},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"seed", required_argument, NULL, OPT_SEED},
    {"subset", required_argument, NULL, OPT_SUBSET},
    {"variant", required_argument, NULL, OPT_VARIANT},
    {"test-families", no_argument, NULL, OPT_TEST_FAMILIES},
    {"list", no_argument, NULL, OPT_LIST},
    {"space", required_argument, NULL, OPT_SPACE},
    {"spec", required_argument, NULL, OPT_SPEC},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

typedef struct bench_args {
    fdt_bench_opts opts;
    fdt_variant only;
    long top;
    int list;
    const char *spec;   /* --spec's file, read once the options are all parsed */
    int radius_given;
} bench_args;

static int parse_ms(const char *text, const char *what, double *out)
{
    char *end;
    const double v = strtod(text, &end);
    if (end == text || *end != '\0' || !(v > 0 && v <= 3.6e6)) {
        fprintf(stderr, "fdtune: %s must be a positive number of milliseconds, not '%s'\n",
                what, text);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_int_option(int opt, const char *arg, bench_args *a)
{
    fdt_bench_opts *o = &a->opts;
    long v;
    switch (opt) {
    case OPT_RADIUS:
        if (fdt_parse_int(arg, 1, FDT_MAX_RADIUS, "--radius", &v)) return -1;
        o->problem.radius = (int)v;
        a->radius_given = 1;
        return 0;
    case OPT_DEVICE:
        if (fdt_parse_int(arg, 0, 1024, "--device", &v)) return -1;
        o->device = (int)v;
        return 0;
    case OPT_TOP: return fdt_parse_int(arg, 0, 1000000, "--top", &a->top);
    case OPT_SAMPLES:
        if (fdt_parse_int(arg, 1, 100000, "--samples", &v)) return -1;
        o->timing.samples = (int)v;
        return 0;
    case OPT_LEADERS:
        if (fdt_parse_int(arg, 0, 100000, "--leaders", &v)) return -1;
        o->leaders = (int)v;
        return 0;
    case OPT_LEADER_SAMPLES:
        if (fdt_parse_int(arg, 1, 100000, "--leader-samples", &v)) return -1;
        o->leader_samples = (int)v;
        return 0;
    case OPT_THREADS:
        if (fdt_parse_int(arg, 0, 256, "--threads", &v)) return -1;
        o->compile_threads = (int)v;
        return 0;
    case OPT_SUBSET:
        if (fdt_parse_int(arg, 1, 100000000, "--subset", &v)) return -1;
        o->subset = (size_t)v;
        return 0;
    case OPT_SEED:
        if (fdt_parse_int(arg, 0, 0x7fffffff, "--seed", &v)) return -1;
        o->seed = (unsigned)v;
        return 0;
    case OPT_PITCH:
        if (fdt_parse_int(arg, 1, FDT_MAX_SIDE + FDT_PITCH_PAD_MAX, "--pitch", &v)) return -1;
        o->problem.pitch = (int)v;
        return 0;
    case OPT_OFFSET:
        if (fdt_parse_int(arg, 0, FDT_OFFSET_BYTES - 1, "--offset", &v)) return -1;
        o->problem.offset = (int)v;
        return 0;
    }
    return -1;
}

static int parse_option(int opt, const char *arg, bench_args *a)
{
    fdt_bench_opts *o = &a->opts;
    switch (opt) {
    case OPT_PRECISION:
        if (fdt_precision_parse(arg, &o->problem.precision) == 0)
            return 0;
        fprintf(stderr, "fdtune: --precision must be float or double, not '%s'\n", arg);
        return -1;
    case OPT_CACHE:
        if (fdt_cache_mode_parse(arg, &o->problem.cache) == 0)
            return 0;
        fprintf(stderr, "fdtune: --cache must be hot, persist or auto, not '%s'\n", arg);
        return -1;
    case OPT_BACKEND:
        if (strcmp(arg, "auto") == 0 || fdt_backend_find(arg)) {
            o->backend = arg;
            return 0;
        }
        fprintf(stderr, "fdtune: --backend must be auto, hip, cuda or cpu, not '%s'\n", arg);
        return -1;
    case OPT_FAMILY:
        o->filter.family = arg;
        return fdt_parse_family(arg);
    case OPT_VARIANT: {
        char why[160];
        if (fdt_variant_parse(arg, &a->only, why, sizeof why) == 0) {
            o->only = &a->only;
            return 0;
        }
        fprintf(stderr, "fdtune: --variant: %s\n", why);
        return -1;
    }
    case OPT_SPACE:
        if (fdt_space_profile_parse(arg, &o->filter.space) == 0)
            return 0;
        fprintf(stderr, "fdtune: --space must be auto, nvidia or amd, not '%s'\n", arg);
        return -1;
    case OPT_MIN_SAMPLE: return parse_ms(arg, "--min-sample-ms", &o->timing.min_sample_ms);
    case OPT_TIMEOUT: return parse_ms(arg, "--timeout-ms", &o->timing.timeout_ms);
    case OPT_TEST_FAMILIES: o->filter.test_families = 1; return 0;
    case OPT_SPEC: a->spec = arg; return 0;
    case OPT_LIST: a->list = 1; return 0;
    }
    return parse_int_option(opt, arg, a);
}

static int parse_shape(char **pos, fdt_problem *p)
{
    long n[3];
    const char *names[3] = {"NX", "NY", "NZ"};
    for (int d = 0; d < 3; d++)
        if (fdt_parse_int(pos[d], 1, FDT_MAX_SIDE, names[d], &n[d]))
            return -1;
    p->nx = (int)n[0], p->ny = (int)n[1], p->nz = (int)n[2];
    fdt_problem_canonical_layout(p);
    const char *why = fdt_problem_check(p);
    if (why) {
        fprintf(stderr, "fdtune: %s\n", why);
        return -1;
    }
    return 0;
}

/* 0: parsed; 1: help printed; -1: bad usage (reported). */
static int parse_args(int argc, char **argv, bench_args *a)
{
    fdt_bench_defaults(&a->opts);
    *a = (bench_args){.opts = a->opts, .top = 20};
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        if (opt == OPT_HELP || opt == 'h') {
            fputs(bench_help, stdout);
            return 1;
        }
        if (opt == '?') {
            fprintf(stderr, "fdtune %s: unknown option or missing value: '%s'\n", argv[0],
                    argv[optind - 1]);
            return -1;
        }
        if (parse_option(opt, optarg, a))
            return -1;
    }
    if (argc - optind != 3) {
        fprintf(stderr, "fdtune %s: expected the grid shape NX NY NZ (see --help)\n", argv[0]);
        return -1;
    }
    if (a->spec && a->radius_given) {
        fprintf(stderr, "fdtune %s: --radius and --spec: a spec's radius is its reach\n",
                argv[0]);
        return -1;
    }
    if (a->spec && fdt_parse_spec_file(a->spec, &a->opts.problem, NULL) != 0)
        return -1;
    return parse_shape(argv + optind, &a->opts.problem);
}

/* a / b, or NaN (printed "nan") when b was never measured because the run stopped early. */
static double ratio(double a, double b)
{
    return b > 0 ? a / b : NAN;
}

static void print_device(const fdt_bench_report *r)
{
    const fdt_device_info *d = &r->device;
    /* Most device names already begin with the vendor's. */
    const int named = strncmp(d->name, d->vendor, strlen(d->vendor)) == 0;
    printf("device: %s%s%s (%s, %d compute units, %.1f GiB, L2 %.0f MiB), %s, %s\n",
           named ? "" : d->vendor, named ? "" : " ", d->name, d->arch, d->compute_units,
           d->memory_bytes / 1073741824.0, d->l2_bytes / 1048576.0, d->driver_version,
           d->compiler_version);
    static const char *const notes[] = {
        [FDT_CACHE_HOT] = "the same buffers every launch",
        [FDT_CACHE_COLD] = "not measured yet",
        [FDT_CACHE_PERSIST] = "f's row edges held in L2; kernel 1, the copy and every variant "
                              "timed in that state",
        [FDT_CACHE_AUTO] = "the table timed hot; the leaders and the copy timed hot and "
                           "persist side by side, persist kept where it wins by more than noise",
    };
    printf("cache: %s (%s)\n", fdt_cache_mode_name(r->problem.cache), notes[r->problem.cache]);
    printf("layout: pitch %d, offset %d%s\n", fdt_problem_pitch(&r->problem), r->problem.offset,
           fdt_problem_dense(&r->problem) ? " (dense)" : "");
}

static void print_row(const char *rank, const char *name, const fdt_stats *s, double gbps,
                      const fdt_bench_report *r, const fdt_resources *res)
{
    const double iqr = s->median_ms > 0 ? 100.0 * (s->q3_ms - s->q1_ms) / s->median_ms : 0;
    const fdt_session_baseline *b = &r->base;
    printf("%5s  %-34s %9.4f  %8.4f %5.1f%%  %7.1f  %5.1f%%  %6.3f", rank, name, s->median_ms,
           s->min_ms, iqr, gbps, 100.0 * ratio(gbps, b->copy_gbps), ratio(gbps, b->kernel1.gbps));
    if (res && res->vgprs >= 0)
        printf("  %4d %6d", res->vgprs, res->scratch_bytes);
    printf("\n");
}

static void print_table(const fdt_bench_report *r, long top)
{
    printf("\n%5s  %-34s %9s  %8s %6s  %7s  %6s  %6s  %4s %6s\n", "rank", "variant", "median ms",
           "min ms", "IQR", "GB/s", "%copy", "x k1", "regs", "spill");
    char name[FDT_VARIANT_NAME_MAX], rank[24];
    for (size_t i = 0; i < r->ok && i < (size_t)top; i++) {
        const fdt_result *res = &r->results[i];
        fdt_variant_name(&res->variant, name, sizeof name);
        snprintf(rank, sizeof rank, "%s%zu", res->leader ? "*" : "", i + 1);
        print_row(rank, name, &res->stats, res->gbps, r, &res->resources);
    }
    fdt_variant_name(&r->base.kernel1.variant, name, sizeof name);
    print_row("k1", name, &r->base.kernel1.stats, r->base.kernel1.gbps, r, NULL);
    print_row("copy", "device-to-device copy", &r->base.copy, r->base.copy_gbps, r, NULL);
    if (r->base.interior_copy.samples)
        print_row("icopy", "interior copy (fastest shape)", &r->base.interior_copy,
                  r->base.interior_copy_gbps, r, NULL);
    printf("(* timed again with kernel 1 and the copies, %d samples each)\n",
           r->base.kernel1.stats.samples);
}

/* Cache mode auto: persist's fastest leader and copy, timed beside the table's leaders. */
static void print_auto(const fdt_bench_report *r)
{
    const fdt_session_baseline *b = &r->base;
    if (r->problem.cache != FDT_CACHE_AUTO || r->stopped[0])
        return;
    if (b->persist_best.status != FDT_OK) {
        printf("cache auto chose hot: no leader was timed persist (the device cannot persist, "
               "or every leader failed in it)\n");
        return;
    }
    char name[FDT_VARIANT_NAME_MAX];
    fdt_variant_name(&b->persist_best.variant, name, sizeof name);
    print_row("p", name, &b->persist_best.stats, b->persist_best.gbps, r, NULL);
    print_row("pcopy", "device-to-device copy, persist", &b->persist_copy, b->persist_copy_gbps,
              r, NULL);
    printf("(p: the fastest leader timed persist, beside the others; cache auto chose %s)\n",
           fdt_cache_mode_name(b->cache));
}

static void print_failures(const fdt_bench_report *r, long top)
{
    char name[FDT_VARIANT_NAME_MAX];
    if (r->ok < r->count)
        printf("\nnot ok: %zu (first %ld shown)\n", r->count - r->ok, top);
    for (size_t i = r->ok; i < r->count && i - r->ok < (size_t)top; i++) {
        const fdt_result *res = &r->results[i];
        fdt_variant_name(&res->variant, name, sizeof name);
        printf("  %-34s %-13s %.160s\n", name, fdt_status_name(res->status), res->message);
    }
}

/* The winner and the copy of the state it was timed in: cache auto's choice may be
 * persist's fastest leader, beside the copy timed persist. */
static void print_summary(const fdt_bench_report *r)
{
    const fdt_problem *p = &r->problem;
    const fdt_session_baseline *b = &r->base;
    const int persisted = p->cache == FDT_CACHE_AUTO && b->cache == FDT_CACHE_PERSIST;
    const fdt_result *best = persisted ? &b->persist_best : r->ok ? &r->results[0] : NULL;
    const double copy_gbps = persisted ? b->persist_copy_gbps : b->copy_gbps;
    char name[FDT_VARIANT_NAME_MAX] = "none";
    if (best)
        fdt_variant_name(&best->variant, name, sizeof name);
    const double best_gbps = best ? best->gbps : 0;
    printf("summary shape=%dx%dx%d precision=%s radius=%d backend=%s variants=%zu ok=%zu "
           "wrong=%zu failed=%zu copy_gbps=%.1f interior_copy_gbps=%.1f kernel1_gbps=%.1f "
           "best_gbps=%.1f best_over_copy=%.4f best_over_interior_copy=%.4f "
           "best_over_kernel1=%.4f best=%s stencil=%s\n",
           p->nx, p->ny, p->nz, fdt_precision_name(p->precision), p->radius, r->backend, r->count,
           r->ok, r->wrong, r->failed, copy_gbps, b->interior_copy_gbps, b->kernel1.gbps,
           best_gbps, ratio(best_gbps, copy_gbps), ratio(best_gbps, b->interior_copy_gbps),
           ratio(best_gbps, b->kernel1.gbps), name, p->stencil);
    if (p->cache == FDT_CACHE_AUTO)
        printf("auto cache_chosen=%s hot_gbps=%.1f persist_gbps=%.1f\n",
               fdt_cache_mode_name(b->cache), r->ok ? r->results[0].gbps : 0,
               b->persist_best.status == FDT_OK ? b->persist_best.gbps : 0);
}

/* The first pass, as it goes: the leaders' round after it takes seconds more. */
static void show_progress(void *ctx, size_t done, size_t total)
{
    fdt_progress *p = ctx;
    char text[64];
    const double frac = (double)done / (double)total, elapsed = fdt_progress_elapsed(p);
    snprintf(text, sizeof text, "%zu/%zu variants", done, total);
    fdt_progress_show(p, frac, frac > 0 ? elapsed * (1 - frac) / frac : -1, text);
}

int fdt_cmd_bench(int argc, char **argv)
{
    bench_args a;
    const int parsed = parse_args(argc, argv, &a);
    if (parsed)
        return parsed > 0 ? FDT_EXIT_OK : FDT_EXIT_USAGE;
    fdt_bench_report r;
    fdt_error err = {0};
    fdt_progress progress;
    fdt_progress_start(&progress, "bench");
    a.opts.progress = show_progress;
    a.opts.helper_exe = "/proc/self/exe";
    a.opts.progress_ctx = &progress;
    const fdt_status s = fdt_bench_run(&a.opts, &r, &err);
    fdt_progress_end(&progress);
    if (r.device.name[0])
        print_device(&r);
    if (s != FDT_OK) {
        fprintf(stderr, "fdtune bench: %s\n", err.msg);
        fdt_bench_report_free(&r);
        return FDT_EXIT_FAILED;
    }
    printf("variants: %zu (ok %zu, wrong %zu, failed %zu); compile %.1f s wall (%.1f s summed "
           "over variants); GPU time %.1f s; wall %.1f s\n", r.count, r.ok, r.wrong, r.failed,
           r.compile_wall_ms / 1e3, r.compile_ms / 1e3, r.gpu_ms / 1e3, r.wall_ms / 1e3);
    if (r.stopped[0])
        printf("stopped early: %s\n", r.stopped);
    print_table(&r, a.top);
    print_auto(&r);
    print_failures(&r, a.top);
    print_summary(&r);
    fdt_bench_report_free(&r);
    return r.stopped[0] ? FDT_EXIT_FAILED : FDT_EXIT_OK;
}

static void print_variants(const fdt_problem *p, const fdt_device_info *dev,
                           const fdt_space_filter *filter, int list)
{
    size_t total = 0;
    for (const fdt_family *const *f = fdt_families(); *f; f++) {
        if (!fdt_family_selected(*f, filter))
            continue;
        fdt_space_filter one = *filter;
        one.family = fdt_family_name(*f);
        const size_t n = fdt_space_enumerate(p, dev, &one, NULL, 0);
        fdt_variant *vs = list && n ? malloc(n * sizeof *vs) : NULL;
        if (vs) {
            fdt_space_enumerate(p, dev, &one, vs, n);
            char name[FDT_VARIANT_NAME_MAX];
            for (size_t i = 0; i < n; i++) {
                fdt_variant_name(&vs[i], name, sizeof name);
                printf("%s\n", name);
            }
            free(vs);
        }
        printf("%s: %zu variants\n", one.family, n);
        total += n;
    }
    printf("total: %zu variants for %dx%dx%d %s radius %d on %s (%s), %s space\n", total, p->nx,
           p->ny, p->nz, fdt_precision_name(p->precision), p->radius, dev->name, dev->arch,
           fdt_space_profile_name(fdt_space_profile_for(filter, dev)));
}

int fdt_cmd_variants(int argc, char **argv)
{
    bench_args a;
    const int parsed = parse_args(argc, argv, &a);
    if (parsed)
        return parsed > 0 ? FDT_EXIT_OK : FDT_EXIT_USAGE;
    const fdt_backend_ops *ops;
    fdt_backend *b;
    fdt_error err = {0};
    if (fdt_backend_open(a.opts.backend, a.opts.device, &ops, &b, &err) != FDT_OK) {
        fprintf(stderr, "fdtune variants: %s\n", err.msg);
        return FDT_EXIT_FAILED;
    }
    print_variants(&a.opts.problem, ops->info(b), &a.opts.filter, a.list);
    ops->close(b);
    return FDT_EXIT_OK;
}
