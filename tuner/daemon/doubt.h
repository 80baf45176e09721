/* doubt.h - whether a job's figures can be trusted. On a busy host (another process on the
 * GPU, or on the cores the cpu backend runs on) every variant runs slower and spreads; the
 * engine measures a spread too wide again and then stores the variant as noisy, never to be
 * chosen (engine/session.c). What it cannot see alone, a device that is slow throughout, is
 * judged here: the copy ceiling the job timed again beside its leaders against the copy its
 * device's balance measured when the daemon first saw it. A doubtful winner is still stored
 * (the best the job could find) with the reason, which every answer from it carries. */
#ifndef FDT_DOUBT_H
#define FDT_DOUBT_H

#include <stddef.h>

#include "daemon/daemon.h"

/* The reasons, "; "-separated, to doubt a job on device whose results are rows[0..n) and
 * whose leaders task timed the copy at ceiling_gbps (0: not timed); "" when there is none:
 *   - the ceiling below the device's balance copy by more than the max_spread setting;
 *   - a tenth or more of the variants that ran too noisy to rank. */
void fdt_doubt_judge(const fdt_daemon *d, size_t device, const fdt_result_row *rows, size_t n,
                     double ceiling_gbps, char *out, size_t len);

#endif
