/* bench.c - the exhaustive benchmark of one problem over a session: enumerate, measure
 * every variant, rank them, then time the leaders again beside kernel 1 and a copy. */
#include "engine/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "engine/session.h"
#include "engine/stencil.h"

void fdt_bench_defaults(fdt_bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->backend = "auto";
    o->problem = (fdt_problem){.nx = 256, .ny = 256, .nz = 256, .radius = 1,
                               .precision = FDT_DOUBLE};
    fdt_copy_text(o->problem.stencil, sizeof o->problem.stencil, fdt_stencil_default()->name);
    /* One millisecond per sample amortizes the cost of the events; fifteen samples give a
     * stable median for ranking, and the leaders get fifty, as the anchors were measured. */
    o->timing = (fdt_timing){.min_sample_ms = 1.0, .samples = 15, .timeout_ms = 5000.0,
                             .max_spread = FDT_DEFAULT_MAX_SPREAD};
    o->leaders = 5;
    o->leader_samples = 50;
    o->seed = 12345;
}

/* The first pass's code objects, kept so that the leaders are not compiled twice. */
typedef struct kept_code {
    char key[33];
    fdt_code code;
} kept_code;

typedef struct bench {
    const fdt_bench_opts *opts;
    fdt_session session;
    fdt_variant *variants;    /* the enumerated space (or its subset), in order */
    kept_code *kept;
    size_t nkept;
    size_t measured;          /* first-pass results so far */
    fdt_bench_report *report;
} bench;

static double elapsed_ms(uint64_t since)
{
    return (double)(uv_hrtime() - since) / 1e6;
}

static void keep_code(void *ctx, const char *key, const fdt_code *code)
{
    bench *bn = ctx;
    kept_code *k = &bn->kept[bn->nkept];
    k->code.data = malloc(code->size ? code->size : 1);
    if (!k->code.data)
        return; /* the leaders will compile it again */
    memcpy(k->code.data, code->data, code->size);
    k->code.size = code->size;
    fdt_copy_text(k->key, sizeof k->key, key);
    bn->nkept++;
}

static int kept_code_get(void *ctx, const char *key, fdt_code *code)
{
    bench *bn = ctx;
    for (size_t i = 0; i < bn->nkept; i++)
        if (strcmp(bn->kept[i].key, key) == 0) {
            *code = bn->kept[i].code;
            bn->kept[i].code = (fdt_code){0}; /* the session frees it */
            bn->kept[i].key[0] = '\0';
            return 1;
        }
    return 0;
}

static void on_compiled(void *ctx, size_t count, size_t cached, double wall_ms)
{
    (void)count, (void)cached;
    bench *bn = ctx;
    bn->report->compile_wall_ms = wall_ms;
}

static void on_first_result(void *ctx, const fdt_result *r)
{
    bench *bn = ctx;
    bn->report->results[r->index] = *r;
    if (bn->opts->progress)
        bn->opts->progress(bn->opts->progress_ctx, ++bn->measured, bn->report->count);
}

/* The leaders are results[0..leaders) once ranked; the second measurement replaces their
 * statistics and, where a leader failed this time, their status. */
static void on_leader_result(void *ctx, const fdt_result *r)
{
    bench *bn = ctx;
    fdt_result *res = &bn->report->results[r->index];
    res->leader = 1;
    res->status = r->status;
    res->stats = r->stats;
    res->gbps = r->gbps;
    if (r->status != FDT_OK)
        fdt_copy_text(res->message, sizeof res->message, r->message);
}

/* Ok results first, fastest first, the leaders (timed twice) ahead of the rest; then the
 * failures in the order they were enumerated. */
static int rank_group(const fdt_result *r)
{
    return r->status != FDT_OK ? 2 : r->leader ? 0 : 1;
}

static int by_speed(const void *a, const void *b)
{
    const fdt_result *x = a, *y = b;
    const int gx = rank_group(x), gy = rank_group(y);
    if (gx != gy)
        return gx - gy;
    if (gx == 2)
        return (x->index > y->index) - (x->index < y->index);
    return (x->stats.median_ms > y->stats.median_ms) - (x->stats.median_ms < y->stats.median_ms);
}

static void count_statuses(fdt_bench_report *rep)
{
    rep->ok = rep->wrong = rep->failed = 0;
    for (size_t i = 0; i < rep->count; i++) {
        const fdt_status s = rep->results[i].status;
        rep->ok += s == FDT_OK;
        rep->wrong += s == FDT_WRONG;
        rep->failed += s != FDT_OK && s != FDT_WRONG;
    }
}

static fdt_status remeasure(bench *bn, fdt_error *err)
{
    fdt_bench_report *rep = bn->report;
    const size_t leaders = rep->ok < (size_t)bn->opts->leaders ? rep->ok
                                                                : (size_t)bn->opts->leaders;
    fdt_variant *vs = malloc((leaders ? leaders : 1) * sizeof *vs);
    if (!vs)
        return fdt_fail(err, FDT_ERROR, "out of memory");
    for (size_t i = 0; i < leaders; i++)
        vs[i] = rep->results[i].variant;
    const fdt_session_hooks hooks = {.ctx = bn, .code_get = kept_code_get,
                                     .result = on_leader_result};
    const fdt_status s = fdt_session_leaders(&bn->session, vs, leaders,
                                             bn->opts->leader_samples, &hooks, &rep->base, err);
    free(vs);
    /* The winner is decided by the second, longer measurement. */
    qsort(rep->results, rep->count, sizeof *rep->results, by_speed);
    count_statuses(rep);
    return s;
}

/* A result starts as what it stays if the device is lost before the variant's turn. */
static void assign(bench *bn, size_t i, const fdt_variant *v)
{
    bn->variants[i] = *v;
    bn->report->results[i] = (fdt_result){.variant = *v, .index = i, .status = FDT_ERROR};
    snprintf(bn->report->results[i].message, sizeof bn->report->results[i].message,
             "not measured: device lost");
}

static fdt_status allocate(bench *bn, size_t count, fdt_error *err)
{
    fdt_bench_report *rep = bn->report;
    rep->count = count;
    rep->results = calloc(count, sizeof *rep->results);
    bn->variants = calloc(count, sizeof *bn->variants);
    bn->kept = calloc(count, sizeof *bn->kept);
    if (!rep->results || !bn->variants || !bn->kept)
        return fdt_fail(err, FDT_ERROR, "out of memory for %zu variants", count);
    return FDT_OK;
}

static fdt_status enumerate_one(bench *bn, const fdt_variant *v, fdt_error *err)
{
    const char *why = fdt_variant_check(v, &bn->opts->problem, &bn->report->device);
    if (why) {
        char name[FDT_VARIANT_NAME_MAX];
        fdt_variant_name(v, name, sizeof name);
        return fdt_fail(err, FDT_ERROR, "%s cannot run here: %s", name, why);
    }
    fdt_status s = allocate(bn, 1, err);
    if (s == FDT_OK)
        assign(bn, 0, v);
    return s;
}

static fdt_status enumerate(bench *bn, fdt_error *err)
{
    fdt_bench_report *rep = bn->report;
    const fdt_bench_opts *o = bn->opts;
    if (o->only)
        return enumerate_one(bn, o->only, err);
    fdt_variant *vs = NULL;
    const long n = fdt_space_sample(&o->problem, &rep->device, &o->filter, o->subset, &vs);
    if (n < 0)
        return fdt_fail(err, FDT_ERROR, "out of memory for the variant space");
    if (n == 0)
        return fdt_fail(err, FDT_ERROR, "no variant of %s fits this device and shape",
                        o->filter.family ? o->filter.family : "any family");
    const fdt_status st = allocate(bn, (size_t)n, err);
    for (size_t i = 0; st == FDT_OK && i < (size_t)n; i++)
        assign(bn, i, &vs[i]);
    free(vs);
    return st;
}

/* Measures everything; a lost device ends the run early but is not an error of the run:
 * the report says what was measured and why the rest was not. */
static fdt_status measure_all(bench *bn, fdt_error *err)
{
    fdt_bench_report *rep = bn->report;
    const fdt_session_hooks hooks = {.ctx = bn, .code_put = keep_code, .compiled = on_compiled,
                                     .result = on_first_result};
    fdt_error lost = {0};
    const fdt_status s = fdt_session_measure(&bn->session, bn->variants, rep->count, &hooks,
                                             &lost);
    if (s != FDT_OK && !bn->session.lost_after[0]) {
        *err = lost;
        return s;
    }
    if (s != FDT_OK)
        snprintf(rep->stopped, sizeof rep->stopped, "%.400s; later variants were not measured",
                 lost.msg);
    for (size_t i = 0; i < rep->count; i++)
        rep->compile_ms += rep->results[i].compile_ms;
    qsort(rep->results, rep->count, sizeof *rep->results, by_speed);
    count_statuses(rep);
    return FDT_OK;
}

static fdt_status run(bench *bn, fdt_error *err)
{
    const fdt_bench_opts *o = bn->opts;
    fdt_status s = enumerate(bn, err);
    if (s == FDT_OK)
        s = fdt_session_prepare(&bn->session, &o->problem, &o->timing, o->seed, err);
    if (s == FDT_OK)
        s = measure_all(bn, err);
    if (s == FDT_OK && !bn->report->stopped[0])
        s = remeasure(bn, err);
    bn->report->gpu_ms = bn->session.runner.gpu_ms;
    return s;
}

fdt_status fdt_bench_run(const fdt_bench_opts *o, fdt_bench_report *report, fdt_error *err)
{
    memset(report, 0, sizeof *report);
    report->base.persist_best.status = FDT_ERROR; /* none unless the leaders are timed */
    const uint64_t start = uv_hrtime();
    const char *why = fdt_problem_check(&o->problem);
    if (why)
        return fdt_fail(err, FDT_ERROR, "%s", why);
    if (o->filter.family && !fdt_family_find(o->filter.family))
        return fdt_fail(err, FDT_ERROR, "unknown kernel family '%s'", o->filter.family);
    bench bn = {.opts = o, .report = report};
    report->problem = o->problem;
    fdt_status s = fdt_session_open(&bn.session, o->backend, o->device, o->compile_threads, err);
    bn.session.interior_copy = 1;
    if (s != FDT_OK)
        return s;
    if (o->helper_exe && fdt_compile_in_processes(FDT_COMPILE_AUTO, bn.session.ops))
        fdt_session_compile_in_helpers(&bn.session, o->helper_exe);
    report->device = *bn.session.device;
    fdt_copy_text(report->backend, sizeof report->backend, bn.session.ops->name);
    s = run(&bn, err);
    for (size_t i = 0; i < bn.nkept; i++)
        fdt_code_free(&bn.kept[i].code);
    free(bn.kept);
    free(bn.variants);
    fdt_session_close(&bn.session);
    report->wall_ms = elapsed_ms(start);
    return s;
}

void fdt_bench_report_free(fdt_bench_report *report)
{
    free(report->results);
    report->results = NULL;
}
