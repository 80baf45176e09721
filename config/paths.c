/* config/paths.c - where fdtuned's socket and database live when no one says otherwise.
 * Shared by the daemon and the client library (which looks for the socket the same way),
 * so it depends on libc alone. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

/* The XDG base-directory spec says a relative value is invalid and must be ignored. */
static const char *absolute_env(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] == '/' ? v : NULL;
}

/* A path that does not fit is never handed out cut short: a shortened path names some
 * other file, so out becomes empty and the caller reports it. */
static int format_path(char *out, size_t len, const char *fmt, ...)
{
    if (len == 0)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(out, len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= len) {
        out[0] = '\0';
        return -1;
    }
    return 0;
}

int fdt_default_socket(int system, char *out, size_t len)
{
    if (system)
        return format_path(out, len, "/run/fdtuned/fdtuned.sock");
    const char *runtime = absolute_env("XDG_RUNTIME_DIR");
    if (runtime)
        return format_path(out, len, "%s/fdtuned/fdtuned.sock", runtime);
    return format_path(out, len, "/tmp/fdtuned-%u/fdtuned.sock", (unsigned)getuid());
}

int fdt_default_db(int system, char *out, size_t len)
{
    if (system)
        return format_path(out, len, "/var/lib/fdtuned/fdtuned.db");
    const char *state = absolute_env("XDG_STATE_HOME");
    if (state)
        return format_path(out, len, "%s/fdtuned/fdtuned.db", state);
    const char *home = absolute_env("HOME");
    if (home)
        return format_path(out, len, "%s/.local/state/fdtuned/fdtuned.db", home);
    return format_path(out, len, "/tmp/fdtuned-%u/fdtuned.db", (unsigned)getuid());
}

int fdt_default_cache_dir(char *out, size_t len)
{
    const char *env = getenv("FDTUNE_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"),
               *home = getenv("HOME");
    if (env && *env)
        return format_path(out, len, "%s", env);
    if (xdg && *xdg)
        return format_path(out, len, "%s/fdtune", xdg);
    if (home && *home)
        return format_path(out, len, "%s/.cache/fdtune", home);
    return format_path(out, len, "%s", "");
}

int fdt_make_dirs(const char *path, mode_t mode, char *err, size_t errlen)
{
    char dir[FDT_PATH_MAX];
    if (format_path(dir, sizeof dir, "%s/", path) != 0) {
        snprintf(err, errlen, "the path is too long");
        return -1;
    }
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, mode) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
            return -1;
        }
        *p = '/';
    }
    return 0;
}

int fdt_make_parent_dirs(const char *path, char *err, size_t errlen)
{
    char dir[FDT_PATH_MAX];
    if (format_path(dir, sizeof dir, "%s", path) != 0) {
        snprintf(err, errlen, "the path is too long");
        return -1;
    }
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    return fdt_make_dirs(dir, 0755, err, errlen);
}
