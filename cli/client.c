/* client.c - libfdtune: one connection to fdtuned's socket, a request line out and an
 * answer line in, and the typed query built on them.
 *
 * libfdtune is linked into solvers, which have no use for an event loop of ours, so the
 * transport is plain POSIX: a non-blocking Unix stream socket, touched only inside a call,
 * that poll waits on. The caller sees plain blocking functions and two connections never
 * share state. Each operation runs against one deadline on CLOCK_MONOTONIC: the connect,
 * or a request's write and read of its answer together, must end within the timeout, and
 * every wait (a poll interrupted by a signal included) gets only the time left. A request
 * that fails leaves the stream somewhere unknown, so the connection is then closed for
 * good. Writes pass MSG_NOSIGNAL: a daemon that closes mid-request is an error to report,
 * not a SIGPIPE that kills the solver, and the caller's signal handling is left alone.
 *
 * An answer names code the solver compiles and runs, so a connection is kept only to a
 * daemon this user trusts: its SO_PEERCRED uid must be this user's, root's, the system
 * service's account (the user "fdtuned" that its sysusers.d entry creates: only root makes
 * accounts) at a socket whose directory lies in one only root may write (as /run), or the
 * one a site names in FDTUNE_TRUST_UID, whatever the path (a
 * default, --socket or FDTUNE_SOCKET: any of them may lie in a directory another user made
 * first, as /tmp/fdtuned-UID/). The socket's directory is then held to the daemon's own
 * rule (paths.h), that uid allowed to own it too. Both are checked after the connect and
 * before a byte is sent. */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "backends/backend.h"
#include "client_json.h"
#include "config.h"
#include "fdtune.h"
#include "paths.h"
#include "version.h"

/* The answer is read in pieces of at least this size; an answer longer than the limit is
 * refused rather than taking the solver's memory. */
#define READ_CHUNK 65536
#define MAX_ANSWER_BYTES (1024u * 1024u * 1024u)
/* Room for a socket path and its NUL; a longer one cannot be connected to. */
#define PATH_CAP sizeof(((struct sockaddr_un *)0)->sun_path)
/* A connect refused for a full backlog (EAGAIN) is tried again after this long. */
#define CONNECT_RETRY_MS 10
/* What a wait returns when the deadline passed; any other failure is an errno (> 0). */
#define DEADLINE_PASSED (-1)

struct fdtune_conn {
    int fd;          /* the connected socket, or -1 once an error has closed it */
    char path[PATH_CAP];
    int timeout_ms;
    char *buf;       /* answer bytes read; a line ends at the first newline */
    size_t len, cap;
    size_t scanned;  /* bytes already searched for the newline */
    size_t line_len; /* after find_line found one: where the newline is */
};

static void vset_err(char *err, size_t errlen, const char *fmt, va_list ap)
{
    if (err && errlen > 0)
        vsnprintf(err, errlen, fmt, ap);
}

__attribute__((format(printf, 3, 4)))
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset_err(err, errlen, fmt, ap);
    va_end(ap);
}

/* errno e as the library's messages word it: "connection refused". */
static void errno_text(int e, char *out, size_t len)
{
    char tmp[128];
    snprintf(out, len, "%s", strerror_r(e, tmp, sizeof tmp));
    if (len > 1 && isupper((unsigned char)out[0]) && islower((unsigned char)out[1]))
        out[0] = (char)tolower((unsigned char)out[0]);
}

/* Closes the socket and drops what was read from it (up to an oversize answer). */
static void drop_socket(fdtune_conn *c)
{
    if (c->fd >= 0)
        close(c->fd); /* on Linux the descriptor is released even when close fails */
    c->fd = -1;
    free(c->buf);
    c->buf = NULL;
    c->len = c->cap = c->scanned = 0;
}

/* Ends a request that failed, closing the connection for good; returns status. */
__attribute__((format(printf, 5, 6)))
static int fail(fdtune_conn *c, int status, char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset_err(err, errlen, fmt, ap);
    va_end(ap);
    drop_socket(c);
    return status;
}

/* A request's call or wait that failed with e (an errno, or DEADLINE_PASSED) while
 * doing "sending to" or "reading from". */
static int io_failed(fdtune_conn *c, int e, const char *doing, char *err, size_t errlen)
{
    if (e == DEADLINE_PASSED)
        return fail(c, FDTUNE_ERR_IO, err, errlen, "fdtuned at %s did not answer within %.3g s",
                    c->path, c->timeout_ms / 1e3);
    char why[128];
    errno_text(e, why, sizeof why);
    return fail(c, FDTUNE_ERR_IO, err, errlen, "%s fdtuned at %s: %s", doing, c->path, why);
}

static int64_t now_ns(void)
{
    return (int64_t)fdt_monotonic_ns();
}

static int64_t deadline_after(int ms)
{
    return now_ns() + (int64_t)ms * 1000000;
}

/* Milliseconds left before the deadline, rounded up so that poll does not wake just
 * before it and spin; 0 once it has passed. */
static int ms_left(int64_t deadline)
{
    const int64_t left = deadline - now_ns();
    return left > 0 ? (int)((left + 999999) / 1000000) : 0;
}

/* Waits until fd is ready for events: 0 (an error or hang-up counts too, and the call that
 * follows reports it), DEADLINE_PASSED, or poll's errno. A signal only shortens a wait. */
static int wait_ready(int fd, short events, int64_t deadline)
{
    struct pollfd p = {.fd = fd, .events = events};
    for (;;) {
        const int ms = ms_left(deadline);
        if (ms == 0)
            return DEADLINE_PASSED;
        const int n = poll(&p, 1, ms);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return errno;
    }
}

/* The outcome of a connect in progress: 0, DEADLINE_PASSED or the errno it failed with. */
static int connect_result(int fd, int64_t deadline)
{
    const int st = wait_ready(fd, POLLOUT, deadline);
    if (st)
        return st;
    int e = 0;
    socklen_t len = sizeof e;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0)
        return errno;
    return e;
}

/* Connects fd to sa: 0, DEADLINE_PASSED or an errno. A Unix socket whose listener's backlog
 * is full answers EAGAIN rather than EINPROGRESS; that is tried again, a moment later,
 * until the deadline. */
static int connect_within(int fd, const struct sockaddr_un *sa, int64_t deadline)
{
    for (;;) {
        if (connect(fd, (const struct sockaddr *)sa, sizeof *sa) == 0 || errno == EISCONN)
            return 0;
        const int e = errno;
        if (e == EINPROGRESS || e == EALREADY)
            return connect_result(fd, deadline);
        if (e != EAGAIN && e != EINTR) /* EINTR: the next try says how the first went */
            return e;
        const int ms = ms_left(deadline);
        if (ms == 0)
            return DEADLINE_PASSED;
        if (e == EAGAIN)
            poll(NULL, 0, ms < CONNECT_RETRY_MS ? ms : CONNECT_RETRY_MS);
    }
}

/* Opens the connection's socket and connects it within the timeout. */
static int open_socket(fdtune_conn *c, char *err, size_t errlen)
{
    const int64_t deadline = deadline_after(c->timeout_ms);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, c->path, strlen(c->path) + 1);
    c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    const int st = c->fd < 0 ? errno : connect_within(c->fd, &sa, deadline);
    if (st == 0)
        return FDTUNE_OK;
    if (st == DEADLINE_PASSED) {
        set_err(err, errlen, "fdtuned at %s did not accept the connection within %.3g s",
                c->path, c->timeout_ms / 1e3);
    } else {
        char why[128];
        errno_text(st, why, sizeof why);
        set_err(err, errlen, "cannot connect to fdtuned at %s: %s", c->path, why);
    }
    return FDTUNE_ERR_CONNECT;
}

/* The uid besides this user and root a daemon may run as, from FDTUNE_TRUST_UID: geteuid()
 * when it is unset or empty; -1 with the reason in err when it is not a uid. */
static int trusted_uid(uid_t *out, char *err, size_t errlen)
{
    const char *v = getenv("FDTUNE_TRUST_UID");
    *out = geteuid();
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    const unsigned long n = strtoul(v, &end, 10);
    if (!isdigit((unsigned char)v[0]) || *end || errno || n >= (unsigned long)(uid_t)-1) {
        set_err(err, errlen, "FDTUNE_TRUST_UID must be a uid, a whole number, not '%s'", v);
        return -1;
    }
    *out = (uid_t)n;
    return 0;
}

/* Whether uid is the system service's account, the user named FDT_SERVICE_USER. */
static int service_account(uid_t uid)
{
    struct passwd pw, *found = NULL;
    char buf[1024];
    return getpwnam_r(FDT_SERVICE_USER, &pw, buf, sizeof buf, &found) == 0 && found &&
           found->pw_uid == uid;
}

/* Whether the socket at path lies where only the service's unit can have made its
 * directory: that directory's parent is root's, and no one else may write it (/run for
 * /run/fdtuned/). Elsewhere, as in /tmp, any process of the account could have made it
 * first. */
static int service_place(const char *path)
{
    char dir[FDT_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash)
            return 0;
        slash[slash == dir] = '\0'; /* "/run/x" to "/run", "/x" to "/" */
    }
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 &&
           !(st.st_mode & (S_IWGRP | S_IWOTH));
}

/* The service account running the daemon at c, where it is trusted to. */
static int trusted_service(const fdtune_conn *c, uid_t uid)
{
    return service_account(uid) && service_place(c->path);
}

/* The daemon's uid, refused unless it is this user's, root's, the service's or also
 * (trusted_uid). *owner: the uid besides this user and root that may own the socket's
 * directory, the service account's own (its unit's RuntimeDirectory) where it runs the
 * daemon, else also. */
static int check_peer(const fdtune_conn *c, uid_t also, uid_t *owner, char *err,
                      size_t errlen)
{
    struct ucred peer;
    socklen_t len = sizeof peer;
    if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
        char why[128];
        errno_text(errno, why, sizeof why);
        set_err(err, errlen, "cannot tell who runs fdtuned at %s (%s): refused", c->path, why);
        return FDTUNE_ERR_CONNECT;
    }
    const uid_t me = geteuid();
    *owner = also;
    if (peer.uid == me || peer.uid == 0 || peer.uid == also)
        return FDTUNE_OK;
    if (trusted_service(c, peer.uid)) {
        *owner = peer.uid;
        return FDTUNE_OK;
    }
    if (service_account(peer.uid))
        set_err(err, errlen, "fdtuned at %s is run by the service account " FDT_SERVICE_USER
                ", which is trusted only at a socket whose directory lies in one only root "
                "may write (as /run/fdtuned/): refused", c->path);
    else if (also == me)
        set_err(err, errlen, "fdtuned at %s is run by uid %u, not by you (uid %u), root or "
                "the service account " FDT_SERVICE_USER ": refused (a site's service of another "
                "uid is trusted where FDTUNE_TRUST_UID names it)", c->path, (unsigned)peer.uid,
                (unsigned)me);
    else
        set_err(err, errlen, "fdtuned at %s is run by uid %u, not by you (uid %u), root, the "
                "service account " FDT_SERVICE_USER " or FDTUNE_TRUST_UID's uid %u: refused",
                c->path, (unsigned)peer.uid, (unsigned)me, (unsigned)also);
    return FDTUNE_ERR_CONNECT;
}

/* The connected daemon is one this user trusts (see the top of this file). */
static int check_daemon(const fdtune_conn *c, char *err, size_t errlen)
{
    uid_t also, owner;
    if (trusted_uid(&also, err, errlen) != 0)
        return FDTUNE_ERR_ARG;
    const int st = check_peer(c, also, &owner, err, errlen);
    if (st != FDTUNE_OK)
        return st;
    char why[FDT_PATH_MAX + 256];
    if (fdt_check_private_parent(c->path, owner, why, sizeof why) != 0) {
        set_err(err, errlen, "fdtuned at %s: refused, its directory is not private: %s",
                c->path, why);
        return FDTUNE_ERR_CONNECT;
    }
    return FDTUNE_OK;
}

void fdtune_default_socket(char *out, size_t len)
{
    const char *env = getenv("FDTUNE_SOCKET");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return;
    }
    fdt_default_socket(0, out, len);
    if (access(out, F_OK) != 0)
        fdt_default_socket(1, out, len);
}

static int timeout_or_default(int timeout_ms)
{
    return timeout_ms > 0 ? timeout_ms : FDTUNE_DEFAULT_TIMEOUT_MS;
}

static fdtune_conn *conn_new(const char *path, int timeout_ms, char *err, size_t errlen)
{
    if (strlen(path) >= PATH_CAP) {
        set_err(err, errlen, "socket path is longer than %zu bytes: %s", PATH_CAP - 1, path);
        return NULL;
    }
    fdtune_conn *c = calloc(1, sizeof *c);
    if (!c) {
        set_err(err, errlen, "out of memory");
        return NULL;
    }
    c->fd = -1;
    snprintf(c->path, sizeof c->path, "%s", path);
    c->timeout_ms = timeout_or_default(timeout_ms);
    return c;
}

fdtune_conn *fdtune_connect(const char *socket_path, int timeout_ms, char *err, size_t errlen)
{
    char path[FDT_PATH_MAX];
    if (!socket_path || !*socket_path) {
        fdtune_default_socket(path, sizeof path);
        socket_path = path;
    }
    fdtune_conn *c = conn_new(socket_path, timeout_ms, err, errlen);
    if (!c)
        return NULL;
    if (open_socket(c, err, errlen) != FDTUNE_OK || check_daemon(c, err, errlen) != FDTUNE_OK) {
        fdtune_close(c);
        return NULL;
    }
    return c;
}

void fdtune_set_timeout(fdtune_conn *c, int timeout_ms)
{
    c->timeout_ms = timeout_or_default(timeout_ms);
}

const char *fdtune_version(void)
{
    return FDT_VERSION;
}

const char *fdtune_socket_path(const fdtune_conn *c)
{
    return c->path;
}

void fdtune_close(fdtune_conn *c)
{
    if (!c)
        return;
    drop_socket(c);
    free(c);
}

/* Drops the n bytes sendmsg took from the front of msg's pieces. */
static void skip_sent(struct msghdr *msg, size_t n)
{
    while (msg->msg_iovlen > 0 && n >= msg->msg_iov[0].iov_len) {
        n -= msg->msg_iov[0].iov_len;
        msg->msg_iov++;
        msg->msg_iovlen--;
    }
    if (msg->msg_iovlen > 0) {
        msg->msg_iov[0].iov_base = (char *)msg->msg_iov[0].iov_base + n;
        msg->msg_iov[0].iov_len -= n;
    }
}

/* Sends the request's n bytes and its newline, waiting for room until the deadline. */
static int send_line(fdtune_conn *c, const char *line, size_t n, int64_t deadline, char *err,
                     size_t errlen)
{
    struct iovec iov[2] = {{.iov_base = (char *)line, .iov_len = n},
                           {.iov_base = "\n", .iov_len = 1}};
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2};
    while (msg.msg_iovlen > 0) {
        const ssize_t k = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
        int e = k < 0 ? errno : 0;
        if (k >= 0)
            skip_sent(&msg, (size_t)k);
        else if (e == EAGAIN || e == EWOULDBLOCK)
            e = wait_ready(c->fd, POLLOUT, deadline);
        if (e != 0 && e != EINTR)
            return io_failed(c, e, "sending to", err, errlen);
    }
    return FDTUNE_OK;
}

/* Keeps at least READ_CHUNK bytes free after what was read; -1 when out of memory. */
static int make_room(fdtune_conn *c)
{
    if (c->cap - c->len >= READ_CHUNK)
        return 0;
    const size_t cap = c->cap ? 2 * c->cap : 2 * READ_CHUNK;
    char *grown = realloc(c->buf, cap);
    if (!grown)
        return -1;
    c->buf = grown;
    c->cap = cap;
    return 0;
}

/* Whether the bytes read hold a whole line; sets line_len to where it ends. */
static int find_line(fdtune_conn *c)
{
    const char *nl = c->len > c->scanned ? memchr(c->buf + c->scanned, '\n', c->len - c->scanned)
                                         : NULL;
    c->scanned = c->len;
    if (!nl)
        return 0;
    c->line_len = (size_t)(nl - c->buf);
    return 1;
}

/* Reads until the buffer holds a whole answer line (it may already), within the deadline. */
static int read_line(fdtune_conn *c, int64_t deadline, char *err, size_t errlen)
{
    while (!find_line(c)) {
        if (c->len > MAX_ANSWER_BYTES)
            return fail(c, FDTUNE_ERR_ANSWER, err, errlen, "the answer of fdtuned at %s is "
                        "longer than %u bytes", c->path, MAX_ANSWER_BYTES);
        if (make_room(c))
            return fail(c, FDTUNE_ERR_IO, err, errlen, "reading from fdtuned at %s: out of "
                        "memory", c->path);
        const int st = wait_ready(c->fd, POLLIN, deadline);
        if (st)
            return io_failed(c, st, "reading from", err, errlen);
        const ssize_t k = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
        if (k == 0)
            return fail(c, FDTUNE_ERR_IO, err, errlen, "fdtuned at %s closed the connection "
                        "before answering", c->path);
        if (k > 0)
            c->len += (size_t)k;
        else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
            return io_failed(c, errno, "reading from", err, errlen);
    }
    return FDTUNE_OK;
}

/* Hands the line out of the read buffer; what followed it (the daemon answers in order)
 * begins the next answer. */
static char *take_line(fdtune_conn *c)
{
    const size_t rest = c->len - c->line_len - 1;
    char *line;
    if (rest == 0) {
        line = c->buf;
        c->buf = NULL;
        c->cap = 0;
    } else {
        line = malloc(c->line_len + 1);
        if (!line)
            return NULL;
        memcpy(line, c->buf, c->line_len);
        memmove(c->buf, c->buf + c->line_len + 1, rest);
    }
    line[c->line_len] = '\0';
    c->len = rest;
    c->scanned = 0;
    return line;
}

static int check_line(const char *json_line, size_t *len, char *err, size_t errlen)
{
    size_t n = json_line ? strlen(json_line) : 0;
    if (n && json_line[n - 1] == '\n')
        n--;
    if (n == 0) {
        set_err(err, errlen, "the request is empty");
        return -1;
    }
    if (memchr(json_line, '\n', n)) {
        set_err(err, errlen, "the request spans more than one line");
        return -1;
    }
    *len = n;
    return 0;
}

int fdtune_request(fdtune_conn *c, const char *json_line, char **answer_line, char *err,
                   size_t errlen)
{
    size_t n;
    if (!c || !answer_line) {
        set_err(err, errlen, "no %s given", c ? "place for the answer" : "connection");
        return FDTUNE_ERR_ARG;
    }
    *answer_line = NULL;
    if (check_line(json_line, &n, err, errlen))
        return FDTUNE_ERR_ARG;
    if (c->fd < 0) {
        set_err(err, errlen, "the connection to fdtuned at %s was closed after an earlier "
                "error; connect again", c->path);
        return FDTUNE_ERR_IO;
    }
    const int64_t deadline = deadline_after(c->timeout_ms);
    int st = send_line(c, json_line, n, deadline, err, errlen);
    if (st == FDTUNE_OK)
        st = read_line(c, deadline, err, errlen);
    if (st != FDTUNE_OK)
        return st;
    *answer_line = take_line(c);
    if (!*answer_line)
        return fail(c, FDTUNE_ERR_IO, err, errlen, "out of memory");
    return FDTUNE_OK;
}

json_t *fdtune_problem_request(const char *op, const fdtune_problem *p, const char *spec,
                               int with_shape)
{
    static const char *const caches[] = {[FDTUNE_HOT] = "hot", [FDTUNE_COLD] = "cold",
                                         [FDTUNE_PERSIST] = "persist", [FDTUNE_AUTO] = "auto"};
    if ((unsigned)p->cache >= sizeof caches / sizeof caches[0])
        return NULL;
    json_t *req = json_pack("{s:i, s:s, s:s, s:i, s:s}", "v", 1, "op", op, "precision",
                            p->precision == FDTUNE_FLOAT ? "float" : "double", "radius",
                            p->radius ? p->radius : 1, "cache", caches[p->cache]);
    if (!req)
        return NULL;
    int st = 0;
    if (p->device >= 0 || p->device == FDTUNE_DEVICE_ANY) /* KIND: the daemon's default */
        st |= json_object_set_new(req, "device", p->device >= 0 ? json_integer(p->device)
                                                               : json_string("any"));
    if (with_shape) {
        st |= json_object_set_new(req, "nx", json_integer(p->nx));
        st |= json_object_set_new(req, "ny", json_integer(p->ny));
        st |= json_object_set_new(req, "nz", json_integer(p->nz));
    }
    if (p->tune_if_missing)
        st |= json_object_set_new(req, "tune_if_missing", json_true());
    if (p->pitch) /* absent: dense, what a daemon older than layouts measures */
        st |= json_object_set_new(req, "pitch", p->pitch == FDTUNE_PITCH_AUTO
                                                    ? json_string("auto")
                                                    : json_integer(p->pitch));
    if (p->offset)
        st |= json_object_set_new(req, "offset", json_integer(p->offset));
    if (spec) { /* it names the stencil and its radius */
        json_object_del(req, "radius");
        st |= json_object_set_new(req, "spec", json_loads(spec, JSON_REJECT_DUPLICATES, NULL));
    }
    if (st) {
        json_decref(req);
        return NULL;
    }
    return req;
}

/* Reading an answer: each helper reports the field it could not read. */
static int get_string(const json_t *obj, const char *key, int required, char *out, size_t len,
                      char *err, size_t errlen)
{
    const json_t *v = json_object_get(obj, key);
    out[0] = '\0';
    if (!v || json_is_null(v)) {
        if (!required)
            return 0;
        set_err(err, errlen, "the answer has no \"%s\"", key);
        return -1;
    }
    if (!json_is_string(v) || json_string_length(v) >= len) {
        set_err(err, errlen, "the answer's \"%s\" is not a string of at most %zu bytes", key,
                len - 1);
        return -1;
    }
    memcpy(out, json_string_value(v), json_string_length(v) + 1);
    return 0;
}

static double get_number(const json_t *obj, const char *key)
{
    return json_number_value(json_object_get(obj, key)); /* 0 when absent or null */
}

static int get_int(const json_t *obj, const char *key, int *out, char *err, size_t errlen)
{
    const json_t *v = json_object_get(obj, key);
    *out = 0;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 0x7fffffff) {
        set_err(err, errlen, "the answer's \"%s\" is not a whole number", key);
        return -1;
    }
    *out = (int)json_integer_value(v);
    return 0;
}

static int get_dim3(const json_t *obj, const char *key, int out[3], char *err, size_t errlen)
{
    const json_t *v = json_object_get(obj, key);
    if (json_array_size(v) != 3) {
        set_err(err, errlen, "the answer's \"%s\" is not an array of 3 numbers", key);
        return -1;
    }
    for (size_t i = 0; i < 3; i++) {
        const json_t *x = json_array_get(v, i);
        if (!json_is_integer(x) || json_integer_value(x) < 1 ||
            json_integer_value(x) > 0x7fffffff) {
            set_err(err, errlen, "the answer's \"%s\" is not an array of 3 positive numbers",
                    key);
            return -1;
        }
        out[i] = (int)json_integer_value(x);
    }
    return 0;
}

static int get_defines(const json_t *config, fdtune_answer *a, char *err, size_t errlen)
{
    const json_t *v = json_object_get(config, "defines");
    if (!json_is_array(v) || json_array_size(v) > FDTUNE_DEFINES_MAX) {
        set_err(err, errlen, "the answer's \"defines\" is not an array of at most %d strings",
                FDTUNE_DEFINES_MAX);
        return -1;
    }
    size_t i;
    const json_t *d;
    json_array_foreach(v, i, d) {
        if (!json_is_string(d) || json_string_length(d) >= FDTUNE_DEFINE_MAX) {
            set_err(err, errlen, "define %zu of the answer is not a string of at most %d bytes",
                    i, FDTUNE_DEFINE_MAX - 1);
            return -1;
        }
        memcpy(a->defines[i], json_string_value(d), json_string_length(d) + 1);
    }
    a->ndefines = (int)json_array_size(v);
    return 0;
}

static int parse_from(const json_t *from, fdtune_answer *a, char *err, size_t errlen)
{
    if (!from || json_is_null(from))
        return 0;
    if (!json_is_object(from)) {
        set_err(err, errlen, "the answer's \"from\" is not an object");
        return -1;
    }
    return get_int(from, "nx", &a->from.nx, err, errlen) ||
           get_int(from, "ny", &a->from.ny, err, errlen) ||
           get_int(from, "nz", &a->from.nz, err, errlen) ||
           get_string(from, "device", 0, a->from.device, sizeof a->from.device, err, errlen) ||
           get_string(from, "driver", 0, a->from.driver, sizeof a->from.driver, err, errlen) ||
           get_string(from, "fingerprint", 0, a->from.fingerprint, sizeof a->from.fingerprint,
                      err, errlen) ? -1 : 0;
}

/* A "sources" array into names[FDTUNE_SOURCES_MAX]; its length in *count. */
static int get_source_list(const json_t *list, char names[][FDTUNE_NAME_MAX], int *count,
                           char *err, size_t errlen)
{
    const size_t n = json_array_size(list);
    if (n == 0 || n > FDTUNE_SOURCES_MAX) {
        set_err(err, errlen, "the answer's \"sources\" is not an array of 1 to %d names",
                FDTUNE_SOURCES_MAX);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(list, i);
        if (!json_is_string(s) || json_string_length(s) >= FDTUNE_NAME_MAX) {
            set_err(err, errlen, "source %zu of the answer is not a name of at most %d bytes",
                    i, FDTUNE_NAME_MAX - 1);
            return -1;
        }
        memcpy(names[i], json_string_value(s), json_string_length(s) + 1);
    }
    *count = (int)n;
    return 0;
}

/* "sources": the files to concatenate, or, as docs/protocol.md first had it, "source": the
 * family's template alone. */
static int get_sources(const json_t *config, fdtune_answer *a, char *err, size_t errlen)
{
    const json_t *list = json_object_get(config, "sources");
    if (!list) {
        if (get_string(config, "source", 1, a->source, sizeof a->source, err, errlen))
            return -1;
        memcpy(a->sources[0], a->source, sizeof a->source);
        a->nsources = 1;
        return 0;
    }
    if (get_source_list(list, a->sources, &a->nsources, err, errlen))
        return -1;
    memcpy(a->source, a->sources[a->nsources - 1], sizeof a->source);
    return 0;
}

/* The set-up kernel of cache mode persist, present only in answers measured in it. */
static int get_persist(const json_t *config, fdtune_answer *a, char *err, size_t errlen)
{
    const json_t *p = json_object_get(config, "persist");
    if (!p)
        return 0;
    if (!json_is_object(p)) {
        set_err(err, errlen, "the answer's \"persist\" is not an object");
        return -1;
    }
    a->persist.present = 1;
    return get_source_list(json_object_get(p, "sources"), a->persist.sources,
                           &a->persist.nsources, err, errlen) ||
           get_string(p, "source_hash", 0, a->persist.source_hash,
                      sizeof a->persist.source_hash, err, errlen) ||
           get_string(p, "entry", 1, a->persist.entry, sizeof a->persist.entry, err, errlen) ||
           get_dim3(p, "block", a->persist.block, err, errlen) ||
           get_dim3(p, "grid", a->persist.grid, err, errlen) ? -1 : 0;
}

/* The layout the answer was measured at; absent (an fdtuned older than layouts): dense,
 * pitch 0 until fdtune_query, which knows nx, says it. Nulls (nothing measured) read 0. */
static int get_layout(const json_t *j, fdtune_answer *a, char *err, size_t errlen)
{
    const json_t *l = json_object_get(j, "layout");
    if (!l)
        return 0;
    if (!json_is_object(l)) {
        set_err(err, errlen, "the answer's \"layout\" is not an object");
        return -1;
    }
    a->layout.dense_gbps = get_number(l, "dense_gbps");
    a->layout.gain = get_number(l, "gain");
    return get_int(l, "pitch", &a->layout.pitch, err, errlen) ||
           get_int(l, "offset", &a->layout.offset, err, errlen) ? -1 : 0;
}

static int parse_config(const json_t *config, fdtune_answer *a, char *err, size_t errlen)
{
    if (!json_is_object(config)) {
        set_err(err, errlen, "the answer has no \"config\" object");
        return -1;
    }
    return get_string(config, "variant", 1, a->variant, sizeof a->variant, err, errlen) ||
           get_string(config, "family", 0, a->family, sizeof a->family, err, errlen) ||
           get_sources(config, a, err, errlen) ||
           get_string(config, "source_hash", 0, a->source_hash, sizeof a->source_hash, err,
                      errlen) ||
           get_string(config, "entry", 1, a->entry, sizeof a->entry, err, errlen) ||
           get_dim3(config, "block", a->block, err, errlen) ||
           get_dim3(config, "grid", a->grid, err, errlen) ||
           get_defines(config, a, err, errlen) || get_persist(config, a, err, errlen) ? -1 : 0;
}

/* An answer with "ok": false, as "code: message". */
static void refusal(const json_t *answer, char *err, size_t errlen)
{
    const json_t *e = json_object_get(answer, "error");
    const char *code = json_string_value(json_object_get(e, "code"));
    const char *message = json_string_value(json_object_get(e, "message"));
    set_err(err, errlen, "%s: %s", code ? code : "error",
            message ? message : "the daemon gave no reason");
}

static int parse_answer(const json_t *j, fdtune_answer *a, char *err, size_t errlen)
{
    if (!json_is_true(json_object_get(j, "ok"))) {
        refusal(j, err, errlen);
        return FDTUNE_ERR_REFUSED;
    }
    const json_t *kc = json_object_get(j, "kernels_current");
    a->kernels_current = !json_is_false(kc);
    a->distance = get_number(j, "distance");
    a->gbps = get_number(j, "gbps");
    a->copy_gbps = get_number(j, "copy_gbps");
    a->kernel1_gbps = get_number(j, "kernel1_gbps");
    const json_t *job = json_object_get(j, "job");
    a->job = json_is_integer(job) ? (long long)json_integer_value(job) : 0;
    if (get_string(j, "match", 1, a->match, sizeof a->match, err, errlen) ||
        get_string(j, "device_match", 0, a->device_match, sizeof a->device_match, err,
                   errlen) ||
        parse_from(json_object_get(j, "from"), a, err, errlen) ||
        get_layout(j, a, err, errlen) || parse_config(json_object_get(j, "config"), a, err, errlen))
        return FDTUNE_ERR_ANSWER;
    return FDTUNE_OK;
}

/* An answer line as a JSON object, or NULL with why in err. */
static json_t *load_answer(const char *answer_line, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *j = json_loads(answer_line, 0, &jerr);
    if (!json_is_object(j)) {
        set_err(err, errlen, "the answer is not a JSON object%s%s", j ? "" : ": ",
                j ? "" : jerr.text);
        json_decref(j);
        return NULL;
    }
    return j;
}

int fdtune_answer_parse(const char *answer_line, fdtune_answer *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    json_t *j = load_answer(answer_line, err, errlen);
    if (!j)
        return FDTUNE_ERR_ANSWER;
    const int st = parse_answer(j, a, err, errlen);
    json_decref(j);
    return st;
}

int fdtune_request_json(fdtune_conn *c, json_t *req, json_t **answer, char *err, size_t errlen)
{
    *answer = NULL;
    char *line = req ? json_dumps(req, JSON_COMPACT) : NULL;
    if (!line) {
        set_err(err, errlen, "out of memory");
        return FDTUNE_ERR_ARG;
    }
    char *text;
    int st = fdtune_request(c, line, &text, err, errlen);
    free(line);
    if (st != FDTUNE_OK)
        return st;
    *answer = load_answer(text, err, errlen);
    free(text);
    return *answer ? FDTUNE_OK : FDTUNE_ERR_ANSWER;
}

int fdtune_query(fdtune_conn *c, const fdtune_problem *p, fdtune_answer *a, char *err,
                 size_t errlen)
{
    return fdtune_query_spec(c, p, NULL, a, err, errlen);
}

int fdtune_query_spec(fdtune_conn *c, const fdtune_problem *p, const char *spec,
                      fdtune_answer *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    json_t *req = fdtune_problem_request("query", p, spec, 1), *answer;
    if (spec && !req) { /* the connection is fine: nothing was sent */
        snprintf(err, errlen, "the stencil spec is not JSON (docs/stencils.md)");
        return FDTUNE_ERR_ARG;
    }
    int st = fdtune_request_json(c, req, &answer, err, errlen);
    json_decref(req);
    if (st == FDTUNE_OK) {
        st = parse_answer(answer, a, err, errlen);
        json_decref(answer);
    }
    if (st == FDTUNE_OK && !a->layout.pitch) /* an older fdtuned measured dense rows */
        a->layout.pitch = p->nx;
    return st;
}
