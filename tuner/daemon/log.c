/* log.c - the daemon's log lines (log.h). */
#include "daemon/log.h"

#include <stdarg.h>
#include <stdio.h>

void fdt_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fdtuned: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
