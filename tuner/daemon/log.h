/* log.h - the daemon's log: one line per event on stderr, which is the journal under
 * systemd. Every part of the daemon logs through it; none reaches into fdtuned.c for it. */
#ifndef FDT_LOG_H
#define FDT_LOG_H

/* "fdtuned: " and the formatted text, as one line. */
void fdt_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
