/* progress.h - how fdtune shows work in progress on stderr: on a terminal one bar redrawn in
 * place, with the share done, the time spent and the time left; into a pipe or a log a line
 * at each tenth done and at least every 10 s, so that the log shows the work is alive. Used
 * by tune --wait, batch --wait and bench. */
#ifndef FDT_PROGRESS_H
#define FDT_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

typedef struct fdt_progress {
    const char *cmd;      /* "tune", "batch", "bench": each line's prefix */
    int tty, width;       /* stderr is a terminal, of this many columns */
    int last_decile;      /* not a terminal: the last tenth a line was printed for */
    uint64_t start_ns, last_line_ns;
} fdt_progress;

void fdt_progress_start(fdt_progress *p, const char *cmd);
/* Seconds since the start. */
double fdt_progress_elapsed(const fdt_progress *p);
/* frac: the share done (0 to 1); eta_s: seconds left, or -1 when unknown; text: what is
 * being done, e.g. "512/2052 variants  best NAME 2930.0 GB/s". */
void fdt_progress_show(fdt_progress *p, double frac, double eta_s, const char *text);
/* Seconds as "42s", "3m07s" or "2h05m". */
void fdt_progress_format_seconds(double s, char *out, size_t len);
/* Ends the bar's line on a terminal. */
void fdt_progress_end(const fdt_progress *p);

#endif
