/* measure.h - the numbers: timing statistics and the effective-bandwidth figure of merit. */
#ifndef FDT_MEASURE_H
#define FDT_MEASURE_H

#include "engine/variant.h"

/* Per-launch times of one measurement, in milliseconds. */
typedef struct fdt_stats {
    double median_ms, min_ms, q1_ms, q3_ms;
    int samples;  /* how many samples the statistics are over */
    int reps;     /* launches inside each sample, so that a sample lasts long enough */
} fdt_stats;

/* Sorts samples in place and fills the statistics; n > 0. */
void fdt_stats_compute(double *samples, int n, int reps, fdt_stats *out);

/* How far a measurement's typical sample lies above its fastest: (median - min) / min. A
 * quiet GPU stays within a few percent, the cpu backend on an idle host within about 40%;
 * another process on the device, or on the cores the cpu backend runs on, spreads samples
 * by hundreds to thousands of percent (a median of 34 ms beside a minimum of 0.41 ms). */
double fdt_stats_spread(const fdt_stats *s);

/* Whether b is faster than a by more than noise: by more than either one's spread of
 * samples (IQR), and by at least min_gain of a's median (cache mode auto keeps persist only
 * so, since persist costs the solver a set-up step). */
int fdt_stats_faster(const fdt_stats *a, const fdt_stats *b, double min_gain);

/* Interior points: those the kernels write. */
double fdt_interior_points(const fdt_problem *p);

/* Gigabytes (1e9) per second. */
double fdt_gbps(double bytes, double ms);

/* What may be enqueued and timed: a kernel launch, a copy. */
typedef fdt_status (*fdt_enqueue_fn)(void *ctx, fdt_error *err);

/* A device-to-device copy, the bandwidth ceiling: timed by the runner on one problem's grid
 * and once per device (engine/balance.c) on buffers well beyond L2. */
typedef struct fdt_device_copy {
    const fdt_backend_ops *ops;
    fdt_backend *backend;
    fdt_devptr dst, src;
    size_t bytes;
} fdt_device_copy;

/* An fdt_enqueue_fn: enqueues the copy ctx, an fdt_device_copy, describes. */
fdt_status fdt_copy_enqueue(void *ctx, fdt_error *err);

/* GB/s of a copy of bytes in ms: each byte is read once and written once. */
double fdt_copy_gbps(double bytes, double ms);

typedef struct fdt_timing {
    double min_sample_ms; /* each sample lasts at least this long */
    int samples;
    double timeout_ms;    /* a sample running longer than this, times its estimate, hung */
    double max_spread;    /* a measurement spread wider (fdt_stats_spread) is taken again,
                             and is noisy if it stays so; 0: no bound */
} fdt_timing;

/* The bound fdtuned and fdtune bench apply unless told otherwise: a median above twice
 * the fastest sample. Wide enough for the cpu backend on a quiet host, far below what a
 * busy one does. */
#define FDT_DEFAULT_MAX_SPREAD 1.0

/* Samples gathered by one or more calls of fdt_time: candidates timed in turns (rounds)
 * get their statistics over all their samples. Zero-initialize; free with fdt_samples_free. */
typedef struct fdt_samples {
    double *ms;     /* per-launch time of each sample */
    int count, cap;
    int reps;       /* launches per sample, in the latest call */
    double launch_ms; /* one launch's duration, the estimate reps come from: 0 until the
                         first call times it; a caller that knows it (a verified launch,
                         an earlier turn) sets it and saves the device that launch */
    double busy_ms; /* device time inside every timed region, warm-ups included */
} fdt_samples;

void fdt_samples_stats(const fdt_samples *s, fdt_stats *out);
void fdt_samples_free(fdt_samples *s);

/* Warm-up, then timing.samples samples of enough launches each, timed with device events,
 * appended to acc. */
fdt_status fdt_time(const fdt_backend_ops *ops, fdt_backend *b, fdt_enqueue_fn enqueue,
                    void *ctx, const fdt_timing *timing, fdt_samples *acc, fdt_error *err);

#endif
