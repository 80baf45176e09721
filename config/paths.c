/* config/paths.c - where fdtuned's socket and database live when no one says otherwise, and
 * the private-directory rule their directories are held to. Shared by the daemon and the
 * client library (which looks for the socket the same way, and holds the socket's
 * directory to the same rule), so it depends on libc alone. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "paths.h"

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

/* The directory part of path: "." for a bare name, "/" for a name at the root. Repeated
 * slashes before the name go too, since O_NOFOLLOW does not guard a trailing slash. */
static int parent_of(const char *path, char *out, size_t len)
{
    if (format_path(out, len, "%s", path) != 0)
        return -1;
    char *slash = strrchr(out, '/');
    if (!slash)
        return format_path(out, len, ".");
    while (slash > out && slash[-1] == '/')
        slash--;
    slash[slash == out] = '\0';
    return 0;
}

/* how: O_RDONLY for a directory to work in, O_PATH for one only to examine. */
static int open_dir_nofollow(const char *dir, int how, char *err, size_t errlen)
{
    const int fd = open(dir, how | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0)
        return fd;
    /* Linux answers ENOTDIR for a symbolic link, O_DIRECTORY being checked first. */
    const int why = errno;
    struct stat st;
    if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
        snprintf(err, errlen, "%s is a symbolic link; it must be a real directory, one that "
                 "no one else can point elsewhere", dir);
    else
        snprintf(err, errlen, "cannot open the directory %s: %s", dir, strerror(why));
    return -1;
}

/* "uid 1234" or "uid 1234, uid 4321": the owners a directory may have besides root. */
static void owners_text(uid_t also, char *out, size_t len)
{
    if (also == geteuid())
        snprintf(out, len, "uid %u", (unsigned)geteuid());
    else
        snprintf(out, len, "uid %u, uid %u", (unsigned)geteuid(), (unsigned)also);
}

/* Root owns the directories above every user's; anyone else's could be swapped out. also:
 * one more owner the caller trusts (geteuid() when none). */
static int check_private(int fd, const char *dir, uid_t also, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot stat the directory %s: %s", dir, strerror(errno));
        return -1;
    }
    const unsigned owner = (unsigned)st.st_uid, mode = (unsigned)(st.st_mode & 07777);
    if (st.st_uid != geteuid() && st.st_uid != 0 && st.st_uid != also) {
        char owners[64];
        owners_text(also, owners, sizeof owners);
        snprintf(err, errlen, "%s belongs to uid %u (mode %04o), not to %s or root, "
                 "and its owner could replace what is in it; remove it or choose another "
                 "directory", dir, owner, mode, owners);
        return -1;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(err, errlen, "%s (owner uid %u, mode %04o) can be written by its group or "
                 "others, who could replace what is in it; chmod go-w %s or choose another "
                 "directory", dir, owner, mode, dir);
        return -1;
    }
    return 0;
}

/* dir opened as open_dir_nofollow does and found private by check_private; -1 if not. */
static int open_private(const char *dir, int how, uid_t also, char *err, size_t errlen)
{
    const int fd = open_dir_nofollow(dir, how, err, errlen);
    if (fd >= 0 && check_private(fd, dir, also, err, errlen) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int fdt_open_private_parent(const char *path, mode_t mode, int *created, char *err,
                            size_t errlen)
{
    char dir[FDT_PATH_MAX];
    if (parent_of(path, dir, sizeof dir) != 0) {
        snprintf(err, errlen, "the path is too long");
        return -1;
    }
    struct stat st;
    *created = lstat(dir, &st) != 0 && errno == ENOENT;
    if (*created && fdt_make_dirs(dir, mode, err, errlen) != 0)
        return -1;
    return open_private(dir, O_RDONLY, geteuid(), err, errlen);
}

int fdt_check_private_parent(const char *path, uid_t also, char *err, size_t errlen)
{
    char dir[FDT_PATH_MAX];
    if (parent_of(path, dir, sizeof dir) != 0) {
        snprintf(err, errlen, "the path is too long");
        return -1;
    }
    /* O_PATH: a client may only search the directory (0711, a socket_mode open to all). */
    const int fd = open_private(dir, O_PATH, also, err, errlen);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}
