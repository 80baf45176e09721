/* log.c - the daemon's log lines (log.h). */
#include "daemon/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* Whether stderr is the stream journald gave this process: JOURNAL_STREAM names its
 * device and inode (a child that inherited the variable but not the stream does not
 * match). */
static int stderr_is_journal(void)
{
    const char *stream = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;
    return stream && sscanf(stream, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &st) == 0 &&
           (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

static const char *level_name(fdt_log_level level)
{
    switch (level) {
    case FDT_LOG_ERR: return "error";
    case FDT_LOG_WARNING: return "warning";
    case FDT_LOG_NOTICE: return "notice";
    default: return "info";
    }
}

/* The line's head, as log.h says, into out. */
static int head(fdt_log_level level, char *out, size_t len)
{
    static int journal = -1;
    if (journal < 0)
        journal = stderr_is_journal();
    if (journal)
        return snprintf(out, len, "<%d>", (int)level);
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    localtime_r(&tv.tv_sec, &tm);
    char when[32];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    return snprintf(out, len, "%s.%03ld fdtuned[%ld] %s: ", when, (long)tv.tv_usec / 1000,
                    (long)getpid(), level_name(level));
}

/* One write a line, so that lines of other processes on the same stream never cut it.
 * The text may quote a client's request: a control character in it (a line break that
 * would start a line of the client's making, with a priority of its choosing, in the
 * journal) is written as '?'. */
static void emit(fdt_log_level level, const char *fmt, va_list ap)
{
    char line[2048];
    const int start = head(level, line, sizeof line);
    int n = start + vsnprintf(line + start, sizeof line - (size_t)start - 1, fmt, ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    for (int i = start; i < n; i++)
        if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
            line[i] = '?';
    line[n++] = '\n';
    fwrite(line, 1, (size_t)n, stderr);
}

void fdt_log_at(fdt_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(level, fmt, ap);
    va_end(ap);
}

void fdt_log_worker(size_t device, const char *kind, const char *message)
{
    const fdt_log_level level = strcmp(kind, "fatal") == 0   ? FDT_LOG_ERR
                                : strcmp(kind, "error") == 0 ? FDT_LOG_WARNING
                                                             : FDT_LOG_INFO;
    fdt_log_at(level, "worker %zu: %s: %s", device, kind, message ? message : "?");
}

void fdt_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(FDT_LOG_INFO, fmt, ap);
    va_end(ap);
}
