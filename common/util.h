/* util.h - what every part shares: the outcome of a step (fdt_status, fdt_error), bounded
 * text copies, whole reads and writes, and the monotonic clock. The backends, the engine,
 * the store, the daemon and libfdtune all use these; they live here so that none of those
 * parts reaches into another for them. */
#ifndef FDT_UTIL_H
#define FDT_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Outcome of one step for one variant; the names are the statuses stored and printed. */
typedef enum fdt_status {
    FDT_OK = 0,
    FDT_WRONG,          /* ran, but verification failed */
    FDT_COMPILE_ERROR,
    FDT_LAUNCH_ERROR,
    FDT_TIMEOUT,
    FDT_UNSUPPORTED,    /* the backend cannot run this family (e.g. barriers on cpu) */
    FDT_NOISY,          /* ran and was right, but its timings spread beyond the bound
                           (fdt_timing.max_spread) each time it was timed: never ranked */
    FDT_ERROR           /* anything else: library missing, out of memory, bad input */
} fdt_status;

const char *fdt_status_name(fdt_status s);

/* A message long enough for a compiler diagnostic's first lines. */
typedef struct fdt_error {
    fdt_status status;
    char msg[2048];
} fdt_error;

/* Records status and a printf-style message in err (which may be NULL); returns status. */
fdt_status fdt_fail(fdt_error *err, fdt_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Copies src into dst of size bytes, cutting it short if it does not fit. */
void fdt_copy_text(char *dst, size_t size, const char *src);

/* CLOCK_MONOTONIC in nanoseconds: the clock the backends' bounded waits run on. */
uint64_t fdt_monotonic_ns(void);

/* Writes all n bytes to fd, through short writes and interrupted ones; 0, or -1 (errno). */
int fdt_write_all(int fd, const void *data, size_t n);
/* Reads exactly n bytes from fd the same way; -1 also at an early end of file. */
int fdt_read_all(int fd, void *data, size_t n);

#endif
