/* doubt.c - whether a job's figures and a device's balance can be trusted; see doubt.h. */
#include "daemon/doubt.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine/variant.h"

/* Noisy variants of this share or more of those that ran make the whole job doubtful: one
 * slow moment is the engine's to absorb, a tenth of the space is a busy host. */
#define NOISY_SHARE 0.1

static void add_reason(char *out, size_t len, const char *reason)
{
    const size_t used = strlen(out);
    snprintf(out + used, len - used, "%s%s", used ? "; " : "", reason);
}

static void local_time(int64_t when, char *out, size_t len)
{
    const time_t t = (time_t)when;
    struct tm tm;
    strftime(out, len, "%Y-%m-%d %H:%M", localtime_r(&t, &tm));
}

static int judge_ceiling(const fdt_daemon *d, const fdt_device_slot *slot, double ceiling,
                         char *out, size_t len)
{
    const double history = slot->balance.copy_gbps;
    if (d->config.max_spread <= 0 || ceiling <= 0 || !slot->balance.measured ||
        history <= ceiling * (1 + d->config.max_spread))
        return 0;
    char when[32], reason[200];
    local_time(slot->balance.measured, when, sizeof when);
    snprintf(reason, sizeof reason, "the copy ran at %.1f GB/s beside the leaders, against "
             "%.1f GB/s when the device's balance was measured (%s)", ceiling, history, when);
    add_reason(out, len, reason);
    return 1;
}

/* Too many noisy variants, or a noisy leader that could have won: its fastest sample beat
 * the winner's median, so which of the two is faster the samples cannot tell. */
static int judge_noise(const fdt_result_row *rows, size_t n, const fdt_result_row *win,
                       char *out, size_t len)
{
    int ran = 0, noisy = 0, leaders = 0, noisy_leaders = 0;
    for (size_t i = 0; i < n; i++) {
        const int is_noisy = strcmp(rows[i].status, "noisy") == 0;
        const int timed = is_noisy || strcmp(rows[i].status, "ok") == 0;
        if (rows[i].leader) {
            leaders += timed;
            noisy_leaders += is_noisy && rows[i].min_ms < win->median_ms;
        } else {
            ran += timed;
            noisy += is_noisy;
        }
    }
    char reason[120];
    int host = 0;
    if (noisy > 0 && noisy >= NOISY_SHARE * ran) {
        snprintf(reason, sizeof reason, "%d of the %d variants that ran were too noisy to rank",
                 noisy, ran);
        add_reason(out, len, reason);
        host = 1;
    }
    if (noisy_leaders > 0) {
        snprintf(reason, sizeof reason, "%d of the %d leaders were too noisy to time again, "
                 "and their fastest samples beat the winner's median", noisy_leaders, leaders);
        add_reason(out, len, reason);
        host = 1;
    }
    return host;
}

/* The winner's gain over kernel 1 within the spread of its own samples (how far their median
 * lies above their fastest, as the engine judges noise): the search found nothing the device
 * runs surely faster. */
static void judge_kernel1(const fdt_problem *p, const fdt_result_row *win, double kernel1_gbps,
                          char *out, size_t len)
{
    char kernel1[FDT_VARIANT_NAME_MAX];
    const fdt_variant k1 = fdt_variant_kernel1(p);
    fdt_variant_name(&k1, kernel1, sizeof kernel1);
    if (kernel1_gbps <= 0 || win->min_ms <= 0 || strcmp(win->variant, kernel1) == 0)
        return;
    const double noise = win->median_ms / win->min_ms - 1;
    const double gain = win->gbps / kernel1_gbps - 1;
    if (gain > noise)
        return;
    char reason[200];
    snprintf(reason, sizeof reason, "the winner's %.1f GB/s %s kernel 1's %.1f GB/s (its "
             "samples spread %.1f%%)", win->gbps,
             gain < 0 ? "is slower than" : "is within noise of", kernel1_gbps, 100 * noise);
    add_reason(out, len, reason);
}

int fdt_doubt_judge(const fdt_daemon *d, size_t device, const fdt_problem *p,
                    const fdt_result_row *rows, size_t n, const fdt_result_row *win,
                    double kernel1_gbps, double ceiling_gbps, char *out, size_t len)
{
    out[0] = '\0';
    const int host = judge_ceiling(d, &d->devices[device], ceiling_gbps, out, len) |
                     judge_noise(rows, n, win, out, len);
    judge_kernel1(p, win, kernel1_gbps, out, len);
    return host;
}

void fdt_doubt_balance_measured(const fdt_daemon *d, const fdt_device_slot *slot,
                                fdt_balance *b)
{
    const double bound = d->config.max_spread;
    b->doubt[0] = '\0';
    if (bound <= 0)
        return;
    if (b->copy_spread > bound)
        snprintf(b->doubt, sizeof b->doubt, "the copy's samples spread %.0f%% (the bound is "
                 "%.0f%%): the host was busy", 100 * b->copy_spread, 100 * bound);
    else if (b->copy_gbps * (1 + bound) < slot->outran_gbps)
        snprintf(b->doubt, sizeof b->doubt, "measured again at %.1f GB/s, still below the "
                 "%.1f GB/s a job's copy ran at: the host is busy still", b->copy_gbps,
                 slot->outran_gbps);
}

int fdt_doubt_balance_outrun(const fdt_daemon *d, fdt_device_slot *slot, double ceiling_gbps,
                             int64_t job_id)
{
    fdt_balance *b = &slot->balance;
    if (d->config.max_spread <= 0 || !b->measured || b->doubt[0] ||
        ceiling_gbps <= b->copy_gbps * (1 + d->config.max_spread))
        return 0;
    slot->outran_gbps = ceiling_gbps;
    char when[32];
    local_time(b->measured, when, sizeof when);
    snprintf(b->doubt, sizeof b->doubt, "job %lld's copy ran at %.1f GB/s, against %.1f GB/s "
             "when the balance was measured (%s): the host was busy then", (long long)job_id,
             ceiling_gbps, b->copy_gbps, when);
    return 1;
}
