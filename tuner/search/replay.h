/* replay.h - the replay backend: a variant's speed answered from result rows measured
 * before, so that search strategies are compared on the CPU, in seconds, with many seeds.
 *
 * It answers at the level of a worker's results (a variant ran at so many GB/s, or did not
 * run), not of launches: there is nothing to compile, verify or time. That is why it lives
 * beside the strategies rather than in backends/, which knows nothing of problems. Its
 * input is what `fdtune export --what results --format csv` writes, one or several files,
 * each plain or gzip-compressed. The first-pass rows are kept (leader rows are timed again
 * under other conditions); a variant's repeated rows are one variant, at the fastest it ran
 * correctly; where a problem was measured by several jobs, the job with the most variants
 * is its recording. A field over 4 KiB or a line over 64 KiB is refused (replay.c). */
#ifndef FDT_REPLAY_H
#define FDT_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "engine/variant.h"

typedef struct fdt_recorded_problem {
    char fingerprint[20];
    fdt_problem problem;
    int64_t job;
    size_t n;
    char (*names)[FDT_VARIANT_NAME_MAX];
    double *gbps; /* names[i] ran at gbps[i]; 0 when it did not run correctly */
    double *cost_s; /* what measuring names[i] took, in seconds (its compile and its
                       timing); NAN when its file has no cost columns */
} fdt_recorded_problem;

typedef struct fdt_recording {
    fdt_recorded_problem *problems;
    size_t n;
} fdt_recording;

/* Adds the rows of one file, in time linear in its rows. 0, or -1 with "FILE:LINE: why" in
 * err (LINE the file's line, from 1); the recording keeps what earlier files added. */
int fdt_recording_load(fdt_recording *r, const char *path, char *err, size_t errlen);
void fdt_recording_free(fdt_recording *r);

/* The fastest recorded speed of the problem. */
double fdt_recorded_best(const fdt_recorded_problem *p);

#endif
