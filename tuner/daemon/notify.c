/* notify.c - the service manager's messages; see notify.h. */
#include "daemon/notify.h"

#include <stdarg.h>
#include <stdio.h>

#include <systemd/sd-daemon.h>

static uv_timer_t watchdog;
static int watchdog_on;

static void notify(const char *text)
{
    sd_notify(0, text);
}

static void on_watchdog(uv_timer_t *t)
{
    (void)t;
    notify("WATCHDOG=1");
}

/* The manager's interval (WATCHDOG_USEC, for this pid), in ms; 0 when it wants none. */
static uint64_t watchdog_ms(void)
{
    uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) <= 0)
        usec = 0;
    return usec / 1000;
}

void fdt_notify_ready(uv_loop_t *loop, const char *status)
{
    char text[256];
    snprintf(text, sizeof text, "READY=1\nSTATUS=%s", status);
    notify(text);
    const uint64_t ms = watchdog_ms();
    if (ms == 0)
        return;
    uv_timer_init(loop, &watchdog);
    uv_timer_start(&watchdog, on_watchdog, ms / 2, ms / 2 ? ms / 2 : 1);
    uv_unref((uv_handle_t *)&watchdog); /* pings never hold the loop open */
    watchdog_on = 1;
}

void fdt_notify_status(const char *fmt, ...)
{
    char text[256] = "STATUS=";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + 7, sizeof text - 7, fmt, ap);
    va_end(ap);
    notify(text);
}

void fdt_notify_stopping(void)
{
    notify("STOPPING=1");
    if (watchdog_on) {
        uv_close((uv_handle_t *)&watchdog, NULL);
        watchdog_on = 0;
    }
}
