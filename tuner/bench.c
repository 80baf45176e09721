/* bench.c - the exhaustive benchmark of one problem: enumerate, compile in parallel,
 * verify and time each variant, then time the leaders again beside kernel 1 and a copy. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "compile_pool.h"
#include "runner.h"

void fdt_bench_defaults(fdt_bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->backend = "auto";
    o->problem = (fdt_problem){.nx = 256, .ny = 256, .nz = 256, .radius = 1,
                               .precision = FDT_DOUBLE};
    /* One millisecond per sample amortizes the cost of the events; fifteen samples give a
     * stable median for ranking, and the leaders get fifty, as the anchors were measured. */
    o->timing = (fdt_timing){.min_sample_ms = 1.0, .samples = 15, .timeout_ms = 5000.0};
    o->leaders = 5;
    o->leader_samples = 50;
    o->seed = 12345;
}

typedef struct bench {
    const fdt_bench_opts *opts;
    const fdt_backend_ops *ops;
    fdt_backend *backend;
    fdt_runner runner;
    fdt_compile_job *jobs;
    fdt_bench_report *report;
    double bytes; /* the figure of merit's bytes */
} bench;

static double elapsed_ms(uint64_t since)
{
    return (double)(uv_hrtime() - since) / 1e6;
}

/* After a launch failure the context may be gone for good (an illegal address poisons it);
 * a trivial copy tells whether anything more can run. */
static int device_alive(bench *bn)
{
    fdt_samples s = {0};
    fdt_error err;
    const int alive = fdt_runner_time_copy(&bn->runner, 1, &s, &err) == FDT_OK;
    fdt_samples_free(&s);
    return alive;
}

static void measure_variant(bench *bn, fdt_result *res, const fdt_code *code)
{
    fdt_runner *r = &bn->runner;
    fdt_error err = {0};
    fdt_kernel *k = NULL;
    fdt_verdict verdict;
    fdt_status s = bn->ops->load(bn->backend, code, "fdt_laplacian", &k, &err);
    if (s == FDT_OK) {
        bn->ops->resources(k, &res->resources);
        s = fdt_runner_verify(r, k, &res->variant, &verdict, &err);
    }
    fdt_samples samples = {0};
    if (s == FDT_OK)
        s = fdt_runner_time(r, k, &res->variant, bn->opts->timing.samples, &samples, &err);
    if (k)
        bn->ops->unload(bn->backend, k);
    fdt_samples_stats(&samples, &res->stats);
    fdt_samples_free(&samples);
    res->status = s;
    if (s == FDT_OK)
        res->gbps = fdt_gbps(bn->bytes, res->stats.median_ms);
    else
        fdt_copy_text(res->message, sizeof res->message, err.msg);
}

static int by_speed(const void *a, const void *b)
{
    const fdt_result *x = a, *y = b;
    if ((x->status == FDT_OK) != (y->status == FDT_OK))
        return x->status == FDT_OK ? -1 : 1;
    if (x->status != FDT_OK)
        return 0;
    return (x->stats.median_ms > y->stats.median_ms) - (x->stats.median_ms < y->stats.median_ms);
}

/* The leaders, kernel 1 and the copy are timed again in turns: each takes part of its
 * samples in every round, in an order that rotates, so that clock or thermal drift over the
 * phase touches all of them alike and the ratios compare numbers taken side by side. */
#define ROUNDS 5

typedef struct candidate {
    const fdt_code *code; /* NULL: the copy */
    fdt_result *result;   /* NULL: the copy */
    fdt_samples samples;
} candidate;

static fdt_status time_turn(bench *bn, candidate *c, int samples, fdt_error *err)
{
    if (!c->code)
        return fdt_runner_time_copy(&bn->runner, samples, &c->samples, err);
    fdt_kernel *k = NULL;
    fdt_status s = bn->ops->load(bn->backend, c->code, "fdt_laplacian", &k, err);
    if (s == FDT_OK)
        s = fdt_runner_time(&bn->runner, k, &c->result->variant, samples, &c->samples, err);
    if (k)
        bn->ops->unload(bn->backend, k);
    return s;
}

static fdt_status time_in_rounds(bench *bn, candidate *cs, size_t n, fdt_error *err)
{
    const int per_turn = (bn->opts->leader_samples + ROUNDS - 1) / ROUNDS;
    fdt_status s = FDT_OK;
    for (size_t round = 0; round < ROUNDS && s == FDT_OK; round++)
        for (size_t i = 0; i < n && s == FDT_OK; i++)
            s = time_turn(bn, &cs[(i + round) % n], per_turn, err);
    for (size_t i = 0; i < n; i++) {
        fdt_stats *st = cs[i].result ? &cs[i].result->stats : &bn->report->copy;
        fdt_samples_stats(&cs[i].samples, st);
        if (cs[i].result)
            cs[i].result->gbps = fdt_gbps(bn->bytes, st->median_ms);
        fdt_samples_free(&cs[i].samples);
    }
    return s;
}

static const fdt_code *code_of(bench *bn, const fdt_result *res)
{
    return &bn->jobs[res->index].code;
}

static fdt_status remeasure(bench *bn, fdt_error *err)
{
    fdt_bench_report *rep = bn->report;
    fdt_compile_job k1 = {.variant = fdt_variant_kernel1()};
    fdt_compile_all(bn->ops, rep->device.arch, &rep->problem, &k1, 1, 1);
    if (k1.status != FDT_OK)
        return fdt_fail(err, k1.status, "kernel 1 does not compile: %s", k1.message);
    rep->kernel1 = (fdt_result){.variant = k1.variant, .status = FDT_OK, .leader = 1};
    const size_t leaders = rep->ok < (size_t)bn->opts->leaders ? rep->ok : (size_t)bn->opts->leaders;
    candidate *cs = calloc(leaders + 2, sizeof *cs);
    fdt_status s = cs ? FDT_OK : fdt_fail(err, FDT_ERROR, "out of memory");
    if (s == FDT_OK) {
        cs[0] = (candidate){.code = &k1.code, .result = &rep->kernel1};
        for (size_t i = 0; i < leaders; i++) {
            rep->results[i].leader = 1;
            cs[i + 1] = (candidate){.code = code_of(bn, &rep->results[i]),
                                    .result = &rep->results[i]};
        }
        s = time_in_rounds(bn, cs, leaders + 2, err);
    }
    free(cs);
    fdt_code_free(&k1.code);
    /* The winner is decided by the second, longer measurement. */
    qsort(rep->results, leaders, sizeof *rep->results, by_speed);
    rep->copy_gbps = fdt_gbps(2.0 * bn->runner.bytes, rep->copy.median_ms);
    return s;
}

static void count_statuses(fdt_bench_report *rep)
{
    for (size_t i = 0; i < rep->count; i++) {
        const fdt_status s = rep->results[i].status;
        rep->ok += s == FDT_OK;
        rep->wrong += s == FDT_WRONG;
        rep->failed += s != FDT_OK && s != FDT_WRONG;
    }
}

static void measure_all(bench *bn)
{
    fdt_bench_report *rep = bn->report;
    for (size_t i = 0; i < rep->count; i++) {
        fdt_result *res = &rep->results[i];
        fdt_compile_job *job = &bn->jobs[res->index];
        res->compile_ms = job->ms;
        if (rep->stopped[0]) {
            res->status = FDT_ERROR;
            snprintf(res->message, sizeof res->message, "not measured: device lost");
        } else if (job->status != FDT_OK) {
            res->status = job->status;
            fdt_copy_text(res->message, sizeof res->message, job->message);
        } else {
            measure_variant(bn, res, &job->code);
            if ((res->status == FDT_LAUNCH_ERROR || res->status == FDT_TIMEOUT) &&
                !device_alive(bn)) {
                char name[FDT_VARIANT_NAME_MAX];
                fdt_variant_name(&res->variant, name, sizeof name);
                snprintf(rep->stopped, sizeof rep->stopped, "the device stopped working after "
                         "%s (%s); later variants were not measured", name,
                         fdt_status_name(res->status));
            }
        }
    }
}

static fdt_status allocate(bench *bn, size_t count, fdt_error *err)
{
    fdt_bench_report *rep = bn->report;
    rep->count = count;
    rep->results = calloc(count, sizeof *rep->results);
    bn->jobs = calloc(count, sizeof *bn->jobs);
    if (!rep->results || !bn->jobs)
        return fdt_fail(err, FDT_ERROR, "out of memory for %zu variants", count);
    return FDT_OK;
}

static void assign(bench *bn, size_t i, const fdt_variant *v)
{
    bn->report->results[i].variant = *v;
    bn->report->results[i].index = i;
    bn->jobs[i].variant = *v;
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
    const size_t space = fdt_space_enumerate(&o->problem, &rep->device, &o->filter, NULL, 0);
    if (space == 0)
        return fdt_fail(err, FDT_ERROR, "no variant of %s fits this device and shape",
                        o->filter.family ? o->filter.family : "any family");
    fdt_variant *vs = malloc(space * sizeof *vs);
    fdt_status st = vs ? allocate(bn, o->subset && o->subset < space ? o->subset : space, err)
                       : fdt_fail(err, FDT_ERROR, "out of memory for %zu variants", space);
    if (st == FDT_OK) {
        fdt_space_enumerate(&o->problem, &rep->device, &o->filter, vs, space);
        for (size_t i = 0; i < rep->count; i++)
            assign(bn, i, &vs[i * space / rep->count]);
    }
    free(vs);
    return st;
}

static fdt_status run(bench *bn, fdt_error *err)
{
    fdt_bench_report *rep = bn->report;
    fdt_status s = enumerate(bn, err);
    if (s == FDT_OK)
        s = fdt_runner_open(&bn->runner, bn->ops, bn->backend, &rep->problem,
                            &bn->opts->timing, bn->opts->seed, err);
    if (s != FDT_OK)
        return s;
    const uint64_t compile_start = uv_hrtime();
    fdt_compile_all(bn->ops, rep->device.arch, &rep->problem, bn->jobs, rep->count,
                    bn->opts->compile_threads);
    rep->compile_wall_ms = elapsed_ms(compile_start);
    measure_all(bn);
    qsort(rep->results, rep->count, sizeof *rep->results, by_speed);
    count_statuses(rep);
    for (size_t i = 0; i < rep->count; i++)
        rep->compile_ms += rep->results[i].compile_ms;
    if (!rep->stopped[0])
        s = remeasure(bn, err);
    rep->gpu_ms = bn->runner.gpu_ms;
    fdt_runner_close(&bn->runner);
    return s;
}

fdt_status fdt_bench_run(const fdt_bench_opts *o, fdt_bench_report *report, fdt_error *err)
{
    memset(report, 0, sizeof *report);
    const uint64_t start = uv_hrtime();
    const char *why = fdt_problem_check(&o->problem);
    if (why)
        return fdt_fail(err, FDT_ERROR, "%s", why);
    if (o->filter.family && !fdt_family_find(o->filter.family))
        return fdt_fail(err, FDT_ERROR, "unknown kernel family '%s'", o->filter.family);
    bench bn = {.opts = o, .report = report, .bytes = fdt_effective_bytes(&o->problem)};
    report->problem = o->problem;
    fdt_status s = fdt_backend_open(o->backend, o->device, &bn.ops, &bn.backend, err);
    if (s != FDT_OK)
        return s;
    report->device = *bn.ops->info(bn.backend);
    fdt_copy_text(report->backend, sizeof report->backend, bn.ops->name);
    s = run(&bn, err);
    if (bn.jobs)
        for (size_t i = 0; i < report->count; i++)
            fdt_code_free(&bn.jobs[i].code);
    free(bn.jobs);
    bn.ops->close(bn.backend);
    report->wall_ms = elapsed_ms(start);
    return s;
}

void fdt_bench_report_free(fdt_bench_report *report)
{
    free(report->results);
    report->results = NULL;
}
