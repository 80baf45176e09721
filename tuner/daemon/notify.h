/* notify.h - what fdtuned tells the service manager that started it (systemd's
 * Type=notify, through libsystemd's sd_notify): READY=1 once the socket serves, STATUS=
 * with what the daemon is doing, STOPPING=1 when a stop begins, and WATCHDOG=1 from the
 * loop at half the interval the manager asks for (WatchdogSec=), so that a daemon whose
 * loop hangs is restarted. Outside a service ($NOTIFY_SOCKET unset) every call does
 * nothing. */
#ifndef FDT_NOTIFY_H
#define FDT_NOTIFY_H

#include <uv.h>

/* READY=1 and a STATUS line; then the watchdog's pings on loop, if the manager wants them. */
void fdt_notify_ready(uv_loop_t *loop, const char *status);
/* A STATUS line: what the daemon is doing now. */
void fdt_notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* STOPPING=1, and the watchdog's pings end (the stop's own deadline is the manager's). */
void fdt_notify_stopping(void);

#endif
