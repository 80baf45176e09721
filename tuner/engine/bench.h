/* bench.h - one tuning run with no daemon: every variant of the space for one problem is
 * compiled, verified and timed on one device; the leaders are timed again side by side
 * with the seeds' kernel 1 and a device-to-device copy, which set the baseline and the
 * ceiling. The search is exhaustive, or a sample spread evenly over the space for a quick
 * look (and for tests on slow hosts). */
#ifndef FDT_BENCH_H
#define FDT_BENCH_H

#include "engine/measure.h"
#include "engine/variant.h"

typedef struct fdt_bench_opts {
    const char *backend;      /* auto, hip, cuda, cpu */
    int device;
    fdt_problem problem;
    fdt_space_filter filter;
    size_t subset;            /* measure only this many variants, spread evenly; 0: all */
    const fdt_variant *only;  /* measure just this variant, in the space or not; NULL: all */
    fdt_timing timing;        /* first pass; samples is per variant */
    int leaders;              /* how many of the fastest are timed again */
    int leader_samples;       /* rounded up to a multiple of the rounds they are taken in */
    int compile_threads;      /* 0: one per CPU */
    /* This program, which serves FDT_COMPILE_HELPER_ARG: compiles go to helper processes
     * where the backend's compiler runs one at a time per process; NULL: threads. */
    const char *helper_exe;
    unsigned seed;
    /* Called after each variant of the first pass (done of total); NULL: nothing. */
    void (*progress)(void *ctx, size_t done, size_t total);
    void *progress_ctx;
} fdt_bench_opts;

/* Defaults: the timing and sample counts used unless the caller says otherwise. */
void fdt_bench_defaults(fdt_bench_opts *o);

typedef struct fdt_result {
    fdt_variant variant;
    size_t index;             /* the variant's position in the enumerated space */
    fdt_status status;
    fdt_stats stats;          /* the leaders': from the second, longer measurement */
    double gbps;
    fdt_resources resources;
    double compile_ms;
    int leader;               /* timed again with the baseline and the ceiling */
    char message[256];
} fdt_result;

/* The baseline and the ceilings of a leaders round (fdt_session_leaders), timed side by
 * side with the leaders; a bench report keeps it whole. */
typedef struct fdt_session_baseline {
    fdt_result kernel1;
    fdt_stats copy;
    double copy_gbps;
    fdt_stats interior_copy;   /* the fastest interior copy (samples 0: none timed) */
    double interior_copy_gbps; /* its interior points read and written, per second */
    /* The state the copy and the winner were timed in: the problem's mode, or for auto the
     * one chosen (hot where the device has no persist). */
    fdt_cache_mode cache;
    /* Mode auto: the fastest leader in the persist state (status not FDT_OK: none), and
     * the copy in that state. The leaders' results reported are the hot ones, always. */
    fdt_result persist_best;
    fdt_stats persist_copy;
    double persist_copy_gbps;
} fdt_session_baseline;

typedef struct fdt_bench_report {
    fdt_device_info device;
    char backend[8];
    fdt_problem problem;
    fdt_result *results;      /* ok first, fastest first; then the failures */
    size_t count;
    size_t ok, wrong, failed;
    fdt_session_baseline base; /* kernel 1 and the ceilings, timed with the leaders */
    double compile_ms;        /* sum of every variant's compile time */
    double compile_wall_ms;   /* the pool's wall time */
    double gpu_ms;            /* device time inside timed regions */
    double wall_ms;
    char stopped[512];        /* why measuring stopped early (device lost), or empty */
} fdt_bench_report;

/* Runs the benchmark; FDT_OK even when variants fail (the report says which), an error
 * only when nothing could be measured (no device, reference mismatch, bad problem). */
fdt_status fdt_bench_run(const fdt_bench_opts *o, fdt_bench_report *report, fdt_error *err);
void fdt_bench_report_free(fdt_bench_report *report);

#endif
