/* doubt.h - whether a job's figures, and a device's balance, can be trusted. On a busy host
 * (another process on the GPU, or on the cores the cpu backend runs on) every variant runs
 * slower and spreads; the engine measures a spread too wide again and then stores the
 * variant as noisy, never to be chosen (engine/session.c). What it cannot see alone is
 * judged here, and a doubtful figure is still kept (the best the daemon could measure) with
 * its reason, which every answer from it, `status`, `devices` and the log carry.
 *
 * Two kinds of reason. Those of a disturbed host (the copy ceiling collapsed, too many
 * noisy variants or leaders, a balance whose samples spread or that a later copy outran)
 * are measured again once the device is idle, remeasure_doubtful_s after (config.h): a
 * winner once, by a job like its own (scheduler.c), a balance until it is trusted. A winner
 * within noise of kernel 1 is what the device does on a quiet host too, so it is said and
 * never measured again for itself. */
#ifndef FDT_DOUBT_H
#define FDT_DOUBT_H

#include <stddef.h>

#include "daemon/daemon.h"

/* The reasons, "; "-separated, to doubt the winner *win of a job of problem p on device whose
 * results are rows[0..n), whose leaders task timed kernel 1 at kernel1_gbps and the copy at
 * ceiling_gbps (0: not timed); "" when there is none. 1 when a reason is the host's (worth
 * measuring again on a quiet host), else 0:
 *   - the ceiling below the device's balance copy by more than the max_spread setting (host);
 *   - a tenth or more of the variants that ran too noisy to rank, or a leader too noisy to
 *     time whose fastest sample beat the winner's median (host);
 *   - the winner, if it is not kernel 1 itself, no faster than kernel 1 beyond its own
 *     samples' spread (not the host's). */
int fdt_doubt_judge(const fdt_daemon *d, size_t device, const fdt_problem *p,
                    const fdt_result_row *rows, size_t n, const fdt_result_row *win,
                    double kernel1_gbps, double ceiling_gbps, char *out, size_t len);

/* A balance b just measured on slot's device: its doubt is set when its copy's samples
 * spread beyond the max_spread setting, or when it is still slower, by more than that, than
 * the copy that outran the slot's balance; else cleared. */
void fdt_doubt_balance_measured(const fdt_daemon *d, const fdt_device_slot *slot,
                                fdt_balance *b);

/* A copy timed at ceiling_gbps beside a job's leaders outran the slot's balance by more than
 * max_spread: the balance was measured on a busy host. Sets its doubt and the slot's
 * outran_gbps, and returns 1 (0: no new doubt). */
int fdt_doubt_balance_outrun(const fdt_daemon *d, fdt_device_slot *slot, double ceiling_gbps,
                             int64_t job_id);

#endif
