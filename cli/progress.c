/* progress.c - work in progress on stderr; see progress.h. */
#include "progress.h"

#include <stdio.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* Not on a terminal, a line at least this often. */
#define LINE_EVERY_NS 10000000000ull

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int terminal_width(void)
{
    struct winsize ws;
    return ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
}

void fdt_progress_start(fdt_progress *p, const char *cmd)
{
    *p = (fdt_progress){.cmd = cmd, .tty = isatty(STDERR_FILENO), .last_decile = -1,
                        .start_ns = now_ns()};
    p->last_line_ns = p->start_ns;
    if (p->tty)
        p->width = terminal_width();
}

double fdt_progress_elapsed(const fdt_progress *p)
{
    return (double)(now_ns() - p->start_ns) / 1e9;
}

void fdt_progress_format_seconds(double s, char *out, size_t len)
{
    const long t = s > 0 ? (long)(s + 0.5) : 0;
    if (t < 60)
        snprintf(out, len, "%lds", t);
    else if (t < 3600)
        snprintf(out, len, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(out, len, "%ldh%02ldm", t / 3600, t / 60 % 60);
}

void fdt_progress_show(fdt_progress *p, double frac, double eta_s, const char *text)
{
    char bar[21], spent[48], left[48] = "?";
    const uint64_t now = now_ns();
    fdt_progress_format_seconds((double)(now - p->start_ns) / 1e9, spent, sizeof spent);
    if (eta_s >= 0)
        fdt_progress_format_seconds(eta_s, left, sizeof left);
    frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
    for (int i = 0; i < 20; i++)
        bar[i] = i < (int)(frac * 20) ? '#' : '.';
    bar[20] = '\0';
    if (p->tty) {
        /* Cut to the terminal's width: a wrapped line cannot be redrawn in place. */
        fprintf(stderr, "\r\033[K[%s] %3d%% %s, ETA %s  %.*s", bar, (int)(frac * 100), spent,
                left, p->width > 48 ? p->width - 48 : 0, text);
        fflush(stderr);
        return;
    }
    const int decile = (int)(frac * 10);
    if (decile > p->last_decile || now - p->last_line_ns >= LINE_EVERY_NS) {
        fprintf(stderr, "fdtune %s: %3d%% %s  (%s elapsed, ETA %s)\n", p->cmd,
                (int)(frac * 100), text, spent, left);
        p->last_decile = decile;
        p->last_line_ns = now;
    }
}

void fdt_progress_end(const fdt_progress *p)
{
    if (p->tty)
        fprintf(stderr, "\n");
}
