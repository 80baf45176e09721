/* result_row.h - one measured variant as it leaves the engine: what fdtune-worker reports
 * over its pipe (engine/wire.h), the scheduler stores (db/store.h) and export writes. Text
 * and numbers only, so that it crosses a pipe and a table row unchanged. */
#ifndef FDT_RESULT_ROW_H
#define FDT_RESULT_ROW_H

#include <stdint.h>
#include <string.h>

#include "problem.h"

typedef struct fdt_result_row {
    int64_t job_id;
    char variant[FDT_VARIANT_NAME_MAX];
    char status[16];          /* ok wrong compile_error launch_error crashed timeout unsupported
                                 noisy error */
    int leader;               /* 1: from the leaders' second, longer measurement */
    double median_ms, min_ms, q1_ms, q3_ms, gbps, compile_ms;
    int samples, reps;
    int vgprs, sgprs, scratch_bytes, shared_bytes;
    char message[256];
    /* Where the store has them (an export's page, an import): the kernel sources' version
     * it was measured with, and when (unix s). A row the worker sends has neither: the
     * store adds the daemon's version and the time it lands. */
    char kernels[20];
    int64_t measured;
} fdt_result_row;

/* What measuring a row's variant took, in seconds: its compile, then its samples of reps
 * launches each (their median for their duration). A job's budget_s counts seconds so, and
 * fdtune replay and fdtune report read them so from an export's columns. */
static inline double fdt_result_cost_s(double compile_ms, double samples, double reps,
                                       double median_ms)
{
    return (compile_ms + samples * reps * median_ms) / 1e3;
}

/* The speed a search sees in a row: its GB/s when it ran and was right, else 0 (a variant
 * measured and not worth proposing again). */
static inline double fdt_result_row_speed(const fdt_result_row *r)
{
    return strcmp(r->status, "ok") == 0 && r->gbps > 0 ? r->gbps : 0;
}

#endif
