/* module_cache.c - compiled modules on disk (module_cache.h).
 *
 * One file per key, <key>.mod: a header (magic, key, payload size, payload checksum) and
 * the code object. It is written to a temporary file in the same directory and renamed
 * into place, so a reader sees a whole file or none; the checksum catches what rename
 * cannot (a disk that lost blocks, a hand-edited file), and such a file is compiled again.
 * Compiles of one key are serialized across processes by flock on <key>.lock: the first
 * compiles, the others wait and then read its file. A waiter that still finds none (the
 * compile failed, or the disk is full) compiles without the lock, so a failure costs every
 * rank one compile at the same time, not one after another. Where the file system has no
 * flock (some network mounts), each process compiles on its own: slower, never wrong.
 * A module is code this process will run, so only a regular file of this user that no one
 * else may write is read, opened without following a link or waiting on a FIFO; anything
 * else in its place is removed, noted, and the module compiled into a file of its own. */
#include "module_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "hashes.h"

static const char MAGIC[8] = "FDTMOD1\n";
enum { KEY_LEN = 32, HEADER_LEN = 8 + KEY_LEN + 8 + 8 };
/* A compile that holds the lock longer than this is presumed stuck (its process stopped
 * but did not die); the waiter then compiles itself. */
#define LOCK_WAIT_NS (300 * 1000000000ull)
#define LOCK_POLL_NS 20000000L

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* A directory we may trust with code: ours, and writable by nobody else. */
static int trusted_dir(const char *dir, char *why, size_t len)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        snprintf(why, len, "module cache %s: %s", dir, strerror(errno));
        return 0;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
        snprintf(why, len, "module cache %s is not a directory of this user that only it may "
                 "write; not used", dir);
        return 0;
    }
    return 1;
}

void fdt_module_cache_open(fdt_module_cache *c, const char *explicit_dir)
{
    c->note[0] = '\0';
    if (explicit_dir)
        snprintf(c->dir, sizeof c->dir, "%s", explicit_dir);
    else
        fdt_default_cache_dir(c->dir, sizeof c->dir);
    if (!c->dir[0])
        return;
    char why[512];
    if (fdt_make_dirs(c->dir, 0700, why, sizeof why) != 0)
        snprintf(c->note, sizeof c->note, "module cache: %s", why);
    else
        trusted_dir(c->dir, c->note, sizeof c->note);
    if (c->note[0])
        c->dir[0] = '\0';
}

static void file_path(const fdt_module_cache *c, const char *key, const char *ext, char *out,
                      size_t len)
{
    snprintf(out, len, "%s/%s.%s", c->dir, key, ext);
}

/* What kind of file st is, for a message. */
static const char *file_kind(const struct stat *st)
{
    if (S_ISFIFO(st->st_mode))
        return "a FIFO";
    if (S_ISDIR(st->st_mode))
        return "a directory";
    if (S_ISSOCK(st->st_mode))
        return "a socket";
    return S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ? "a device" : "a special file";
}

/* Why the file st may not be read as a module, in why; 0 when it may. A FIFO or a device
 * is no module (and reading a FIFO blocks); another user's file, or one others may write,
 * is not code this process wrote. */
static int unfit_entry(const struct stat *st, char *why, size_t len)
{
    if (!S_ISREG(st->st_mode))
        snprintf(why, len, "is %s, not a regular file", file_kind(st));
    else if (st->st_uid != geteuid())
        snprintf(why, len, "belongs to uid %u, not to uid %u", (unsigned)st->st_uid,
                 (unsigned)geteuid());
    else if (st->st_mode & (S_IWGRP | S_IWOTH))
        snprintf(why, len, "can be written by its group or others (mode %04o)",
                 (unsigned)(st->st_mode & 07777));
    else
        return 0;
    return -1;
}

/* Notes why the file at path was refused and removes it, so that the module compiled now
 * takes its place; -1, read_module's answer for it. */
static int refuse_entry(fdt_module_cache *c, const char *path, const char *why)
{
    snprintf(c->note, sizeof c->note, "module cache: %s %s; not read, compiled again", path,
             why);
    unlink(path);
    return -1;
}

/* The payload of the module file open on fd (st: its fstat) when its header names key and
 * its checksum holds; NULL otherwise. */
static void *read_payload(int fd, const struct stat *st, const char *key, size_t *size)
{
    unsigned char head[HEADER_LEN];
    if (st->st_size < HEADER_LEN || fdt_read_all(fd, head, sizeof head) != 0 ||
        memcmp(head, MAGIC, 8) != 0 || memcmp(head + 8, key, KEY_LEN) != 0 ||
        get_u64(head + 8 + KEY_LEN) != (uint64_t)st->st_size - HEADER_LEN)
        return NULL;
    *size = (size_t)(st->st_size - HEADER_LEN);
    void *data = malloc(*size ? *size : 1);
    if (data && (fdt_read_all(fd, data, *size) != 0 ||
                 fdt_hash_bytes(data, *size) != get_u64(head + 16 + KEY_LEN))) {
        free(data);
        data = NULL;
    }
    return data;
}

/* 1 and the code when the file for key is whole and its checksum holds; 0 when absent;
 * -1 when refused (not a module file this user wrote, or damaged): then it is removed and
 * noted, so the next reader compiles afresh. */
static int read_module(fdt_module_cache *c, const char *key, fdt_code *out)
{
    char path[sizeof c->dir + 64], why[128];
    file_path(c, key, "mod", path, sizeof path);
    /* O_NONBLOCK: opening a FIFO no one writes to would wait for a writer for ever. */
    const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0 && errno == ELOOP)
        return refuse_entry(c, path, "is a symbolic link");
    if (fd < 0 && (errno == EACCES || errno == ENXIO)) { /* ENXIO: a socket */
        snprintf(why, sizeof why, "cannot be read (%s)", strerror(errno));
        return refuse_entry(c, path, why);
    }
    if (fd < 0)
        return 0;
    struct stat st;
    void *data = NULL;
    size_t size = 0;
    if (fstat(fd, &st) != 0)
        snprintf(why, sizeof why, "cannot be examined: %s", strerror(errno));
    else if (unfit_entry(&st, why, sizeof why) == 0 &&
             !(data = read_payload(fd, &st, key, &size)))
        snprintf(why, sizeof why, "is damaged (its header or checksum does not hold)");
    close(fd);
    if (!data)
        return refuse_entry(c, path, why);
    out->data = data;
    out->size = size;
    return 1;
}

/* Best effort: a cache that cannot be written costs time, not correctness. */
static void write_module(const fdt_module_cache *c, const char *key, const fdt_code *code)
{
    char tmp[sizeof c->dir + 64], path[sizeof c->dir + 64];
    snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", c->dir, key);
    file_path(c, key, "mod", path, sizeof path);
    const int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return;
    unsigned char head[HEADER_LEN];
    memcpy(head, MAGIC, 8);
    memcpy(head + 8, key, KEY_LEN);
    put_u64(head + 8 + KEY_LEN, code->size);
    put_u64(head + 16 + KEY_LEN, fdt_hash_bytes(code->data, code->size));
    const int ok = fdt_write_all(fd, head, sizeof head) == 0 &&
                   fdt_write_all(fd, code->data, code->size) == 0;
    if (close(fd) != 0 || !ok || rename(tmp, path) != 0)
        unlink(tmp);
}

/* The lock of key, held, or -1 where locks are not to be had (then nobody waits); *waited
 * says whether another process held it first. */
static int lock_key(const fdt_module_cache *c, const char *key, int *waited)
{
    char path[sizeof c->dir + 64];
    file_path(c, key, "lock", path, sizeof path);
    *waited = 0;
    const int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    const struct timespec pause = {0, LOCK_POLL_NS};
    const uint64_t deadline = fdt_monotonic_ns() + LOCK_WAIT_NS;
    while (fdt_monotonic_ns() < deadline) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return fd;
        if (errno != EWOULDBLOCK && errno != EINTR)
            break;
        *waited = 1;
        nanosleep(&pause, NULL);
    }
    close(fd);
    return -1;
}

static void unlock_key(int fd)
{
    if (fd >= 0)
        close(fd); /* closing the last descriptor releases the flock */
}

fdt_status fdt_module_cache_get(fdt_module_cache *c, const fdt_module_recipe *r,
                                fdt_code *out, int *hit, fdt_error *err)
{
    *hit = 0;
    if (!c->dir[0])
        return r->compile(r->ctx, out, err);
    if (read_module(c, r->key, out) == 1) {
        *hit = 1;
        return FDT_OK;
    }
    int waited;
    int lock = lock_key(c, r->key, &waited);
    /* Whoever held the lock may have just stored it; if it did not, it failed. */
    if (lock >= 0 && read_module(c, r->key, out) == 1) {
        unlock_key(lock);
        *hit = 1;
        return FDT_OK;
    }
    if (waited) {
        unlock_key(lock);
        lock = -1;
    }
    const fdt_status st = r->compile(r->ctx, out, err);
    if (st == FDT_OK)
        write_module(c, r->key, out);
    unlock_key(lock);
    return st;
}

void fdt_module_cache_drop(const fdt_module_cache *c, const char *key)
{
    char path[sizeof c->dir + 64];
    if (!c->dir[0])
        return;
    file_path(c, key, "mod", path, sizeof path);
    unlink(path);
}
