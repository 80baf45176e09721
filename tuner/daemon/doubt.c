/* doubt.c - whether a job's figures can be trusted; see doubt.h. */
#include "daemon/doubt.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* Noisy variants above this share of those that ran make the whole job doubtful: one slow
 * moment is the engine's to absorb, a tenth of the space is a busy host. */
#define NOISY_SHARE 0.1

static void add_reason(char *out, size_t len, const char *reason)
{
    const size_t used = strlen(out);
    snprintf(out + used, len - used, "%s%s", used ? "; " : "", reason);
}

static void judge_ceiling(const fdt_daemon *d, const fdt_device_slot *slot, double ceiling,
                          char *out, size_t len)
{
    const double history = slot->balance.copy_gbps;
    if (ceiling <= 0 || !slot->balance.measured ||
        history <= ceiling * (1 + d->config.max_spread))
        return;
    char when[32], reason[200];
    const time_t t = (time_t)slot->balance.measured;
    strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime(&t));
    snprintf(reason, sizeof reason, "the copy ran at %.1f GB/s beside the leaders, against "
             "%.1f GB/s when the device's balance was measured (%s)", ceiling, history, when);
    add_reason(out, len, reason);
}

static void judge_noise(const fdt_result_row *rows, size_t n, char *out, size_t len)
{
    int ran = 0, noisy = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].leader)
            continue;
        noisy += strcmp(rows[i].status, "noisy") == 0;
        ran += strcmp(rows[i].status, "ok") == 0 || strcmp(rows[i].status, "noisy") == 0;
    }
    if (noisy == 0 || noisy < NOISY_SHARE * ran)
        return;
    char reason[96];
    snprintf(reason, sizeof reason, "%d of the %d variants that ran were too noisy to rank",
             noisy, ran);
    add_reason(out, len, reason);
}

void fdt_doubt_judge(const fdt_daemon *d, size_t device, const fdt_result_row *rows, size_t n,
                     double ceiling_gbps, char *out, size_t len)
{
    out[0] = '\0';
    if (d->config.max_spread > 0)
        judge_ceiling(d, &d->devices[device], ceiling_gbps, out, len);
    judge_noise(rows, n, out, len);
}
