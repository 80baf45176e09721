/* util.c - outcomes, bounded text copies, whole reads and writes, the clock; see util.h. */
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *fdt_status_name(fdt_status s)
{
    switch (s) {
    case FDT_OK: return "ok";
    case FDT_WRONG: return "wrong";
    case FDT_COMPILE_ERROR: return "compile_error";
    case FDT_LAUNCH_ERROR: return "launch_error";
    case FDT_TIMEOUT: return "timeout";
    case FDT_UNSUPPORTED: return "unsupported";
    case FDT_NOISY: return "noisy";
    case FDT_ERROR: return "error";
    }
    return "error";
}

fdt_status fdt_fail(fdt_error *err, fdt_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->status = status;
    }
    return status;
}

void fdt_copy_text(char *dst, size_t size, const char *src)
{
    const size_t n = strnlen(src, size - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

uint64_t fdt_monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t); /* cannot fail: the clock exists and t is valid */
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int fdt_write_all(int fd, const void *data, size_t n)
{
    for (size_t done = 0; done < n;) {
        const ssize_t w = write(fd, (const char *)data + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        done += (size_t)w;
    }
    return 0;
}

int fdt_read_all(int fd, void *data, size_t n)
{
    for (size_t done = 0; done < n;) {
        const ssize_t r = read(fd, (char *)data + done, n - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        done += (size_t)r;
    }
    return 0;
}
