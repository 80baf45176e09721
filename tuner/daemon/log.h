/* log.h - the daemon's log: one line per event on stderr. Every part of the daemon logs
 * through it; none reaches into fdtuned.c for it.
 *
 * Each line has a syslog priority. Where stderr is the journal (systemd sets
 * JOURNAL_STREAM to its device and inode), a line is "<P>text": journald reads the
 * priority from it and adds the time and the program itself. Anywhere else (a terminal, a
 * file) it is "2026-11-27 23:20:01.123 fdtuned[PID] LEVEL: text", local time to the
 * millisecond. */
#ifndef FDT_LOG_H
#define FDT_LOG_H

#include <stddef.h>

typedef enum fdt_log_level {
    FDT_LOG_ERR = 3,     /* the daemon cannot do its work (the store refuses writes) */
    FDT_LOG_WARNING = 4, /* something went wrong and was dealt with (a worker killed) */
    FDT_LOG_NOTICE = 5,  /* worth a look (a refused request, a cancelled job, a stop) */
    FDT_LOG_INFO = 6     /* the course of work (a job started, done) */
} fdt_log_level;

/* A line at level. */
void fdt_log_at(fdt_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A worker's own line on device: its "log" at FDT_LOG_INFO, an "error" at FDT_LOG_WARNING,
 * a "fatal" at FDT_LOG_ERR. */
void fdt_log_worker(size_t device, const char *kind, const char *message);
/* A line at FDT_LOG_INFO. */
void fdt_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
