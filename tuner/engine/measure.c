/* measure.c - timing with device events, robust statistics, and the figure of merit. */
#include "engine/measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation between order statistics, as numpy's default percentile. */
static double quantile(const double *sorted, int n, double q)
{
    const double at = q * (n - 1);
    const int lo = (int)floor(at);
    const int hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (at - lo) * (sorted[hi] - sorted[lo]);
}

void fdt_stats_compute(double *samples, int n, int reps, fdt_stats *out)
{
    qsort(samples, (size_t)n, sizeof *samples, compare_doubles);
    out->median_ms = quantile(samples, n, 0.5);
    out->q1_ms = quantile(samples, n, 0.25);
    out->q3_ms = quantile(samples, n, 0.75);
    out->min_ms = samples[0];
    out->samples = n;
    out->reps = reps;
}

double fdt_stats_spread(const fdt_stats *s)
{
    return s->samples > 0 && s->min_ms > 0 ? (s->median_ms - s->min_ms) / s->min_ms : 0;
}

int fdt_stats_faster(const fdt_stats *a, const fdt_stats *b, double min_gain)
{
    double margin = min_gain * a->median_ms;
    if (a->q3_ms - a->q1_ms > margin)
        margin = a->q3_ms - a->q1_ms;
    if (b->q3_ms - b->q1_ms > margin)
        margin = b->q3_ms - b->q1_ms;
    return b->median_ms < a->median_ms - margin;
}

double fdt_interior_points(const fdt_problem *p)
{
    const double r2 = 2.0 * p->radius;
    return (p->nx - r2) * (p->ny - r2) * (p->nz - r2);
}

double fdt_gbps(double bytes, double ms)
{
    return bytes / (ms * 1e-3) / 1e9;
}

double fdt_copy_gbps(double bytes, double ms)
{
    return fdt_gbps(2.0 * bytes, ms);
}

fdt_status fdt_copy_enqueue(void *ctx, fdt_error *err)
{
    const fdt_device_copy *c = ctx;
    return c->ops->copy(c->backend, c->dst, c->src, c->bytes, err);
}

/* One timed sample of reps launches; the deadline scales with the work in it. An untimed
 * launch goes first so that the device is busy when the start is recorded: otherwise the
 * host's latency in issuing the first timed launch would be counted as device time. */
static fdt_status timed_sample(const fdt_backend_ops *ops, fdt_backend *b, fdt_enqueue_fn enqueue,
                               void *ctx, int reps, double timeout_ms, double *ms, fdt_error *err)
{
    fdt_status s = enqueue(ctx, err);
    if (s == FDT_OK)
        s = ops->timer_start(b, err);
    for (int r = 0; r < reps && s == FDT_OK; r++)
        s = enqueue(ctx, err);
    if (s != FDT_OK)
        return s;
    return ops->timer_stop(b, timeout_ms, ms, err);
}

static fdt_status reserve(fdt_samples *acc, int more, fdt_error *err)
{
    if (acc->count + more <= acc->cap)
        return FDT_OK;
    const int cap = acc->count + more > 2 * acc->cap ? acc->count + more : 2 * acc->cap;
    double *ms = realloc(acc->ms, sizeof *ms * (size_t)cap);
    if (!ms)
        return fdt_fail(err, FDT_ERROR, "out of memory for %d samples", cap);
    acc->ms = ms;
    acc->cap = cap;
    return FDT_OK;
}

/* Up to FDT_TIMER_LAPS + 1 samples of reps launches, queued back to back after one untimed
 * launch (see timed_sample) with a lap between each two, then read at once: the device runs
 * them without a gap, and the host waits once. Appends each sample's per-launch time. */
static fdt_status chained_samples(const fdt_backend_ops *ops, fdt_backend *b,
                                  fdt_enqueue_fn enqueue, void *ctx, int n, int reps,
                                  double deadline_ms, fdt_samples *acc, fdt_error *err)
{
    double total;
    fdt_status s = enqueue(ctx, err);
    if (s == FDT_OK)
        s = ops->timer_start(b, err);
    for (int i = 0; i < n && s == FDT_OK; i++) {
        for (int r = 0; r < reps && s == FDT_OK; r++)
            s = enqueue(ctx, err);
        if (s == FDT_OK && i + 1 < n)
            s = ops->timer_lap(b, err);
    }
    if (s == FDT_OK)
        s = ops->timer_stop(b, deadline_ms * n, &total, err);
    for (int i = 0; i < n && s == FDT_OK; i++) {
        double ms;
        s = ops->timer_split(b, i, &ms, err);
        if (s == FDT_OK)
            acc->ms[acc->count++] = ms / reps;
    }
    if (s == FDT_OK)
        acc->busy_ms += total;
    return s;
}

fdt_status fdt_time(const fdt_backend_ops *ops, fdt_backend *b, fdt_enqueue_fn enqueue,
                    void *ctx, const fdt_timing *timing, fdt_samples *acc, fdt_error *err)
{
    /* Unless the caller knows it, one launch is timed to say how many launches make a sample
     * long enough; its untimed first launch is the warm-up, which absorbs first-launch costs
     * (module upload, cold caches), as each chain's first launch does otherwise. */
    fdt_status s = reserve(acc, timing->samples, err);
    if (s == FDT_OK && acc->launch_ms <= 0) {
        s = timed_sample(ops, b, enqueue, ctx, 1, timing->timeout_ms, &acc->launch_ms, err);
        acc->busy_ms += acc->launch_ms;
    }
    if (s != FDT_OK)
        return s;
    const double estimate = acc->launch_ms;
    int reps = estimate > 0 ? (int)ceil(timing->min_sample_ms / estimate) : 1000;
    reps = reps < 1 ? 1 : reps > 100000 ? 100000 : reps;
    const double deadline = timing->timeout_ms + 100.0 * reps * estimate;
    acc->reps = reps;
    for (int done = 0; done < timing->samples && s == FDT_OK;) {
        const int left = timing->samples - done;
        const int n = left < FDT_TIMER_LAPS + 1 ? left : FDT_TIMER_LAPS + 1;
        s = chained_samples(ops, b, enqueue, ctx, n, reps, deadline, acc, err);
        done += n;
    }
    return s;
}

void fdt_samples_stats(const fdt_samples *s, fdt_stats *out)
{
    double *sorted = malloc(sizeof *sorted * (size_t)(s->count ? s->count : 1));
    memset(out, 0, sizeof *out);
    if (!sorted || s->count == 0) {
        free(sorted);
        return;
    }
    memcpy(sorted, s->ms, sizeof *sorted * (size_t)s->count);
    fdt_stats_compute(sorted, s->count, s->reps, out);
    free(sorted);
}

void fdt_samples_free(fdt_samples *s)
{
    free(s->ms);
    memset(s, 0, sizeof *s);
}
