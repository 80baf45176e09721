/* server.c - the Unix socket: listening, one record per client connection, peer
 * credentials and the connection slots they admit to, line framing, and answers written
 * back in order.
 *
 * Every client is served in turn, one request at a time: a connection's requests are read
 * into its queue and answered one by one, the next only once the answer before it has been
 * handed to the kernel whole (its write's callback, the next loop turn at the soonest), and
 * the connection is read from again only once its queue is empty. So a loop turn answers
 * at most one request per connection (an export, one page), whatever a client pipelines in
 * one write, and every other client is answered between; a client that does not read its
 * answers is no longer read from, and holds at most one answer and one read's requests
 * (64 KiB, and a line begun) in the daemon's memory, its writes blocked by the socket's
 * buffers: it is never dropped for being slow, and a client that reads gets every answer.
 *
 * Handle lifetimes: the listener lives from fdt_server_start to fdt_server_close. Each
 * client's pipe is closed exactly once (close_client), after a shutdown that lets its
 * queued requests be answered and its answers drain when the daemon stops; the client
 * record is freed in the close callback, the last moment libuv refers to it. */
#include "daemon/server.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/log.h"
#include "daemon/ops.h"
#include "jsonl.h"
#include "paths.h"

/* A request read and not answered yet. */
typedef struct request {
    struct request *next;
    size_t len;
    char line[];
} request;

typedef struct client {
    uv_pipe_t pipe;
    uv_shutdown_t shutdown;
    fdt_server *server;
    fdt_peer peer;
    fdt_jsonl framer;
    request *first, *last; /* the queue, answered in order */
    int reading;
    int writing;  /* an answer is being written: the next waits for its callback */
    int too_long; /* a line passed the limit: answered line_too_long once the queue is */
    int ending;   /* nothing more is read; shut down once the queue is answered */
    int closing;  /* the shutdown or the close has begun */
    int admitted; /* holds a slot: served, not refused */
    int trusted;  /* the daemon's uid, root or admin_group (fdt_peer_is_admin) */
    struct client *prev, *next;
} client;

struct fdt_server {
    fdt_daemon *d;
    uv_pipe_t listener;
    client *clients;
    size_t served[2]; /* admitted clients: [0] other peers, [1] trusted ones */
    int listening;
};

static void drop_queue(client *c)
{
    while (c->first) {
        request *r = c->first;
        c->first = r->next;
        free(r);
    }
    c->last = NULL;
}

static void on_client_closed(uv_handle_t *handle)
{
    client *c = handle->data;
    fdt_server *s = c->server;
    if (c->prev)
        c->prev->next = c->next;
    else
        s->clients = c->next;
    if (c->next)
        c->next->prev = c->prev;
    if (c->admitted)
        s->served[c->trusted]--;
    drop_queue(c);
    fdt_jsonl_free(&c->framer);
    free(c);
}

static void close_client(client *c)
{
    if (c->closing)
        return;
    c->closing = 1;
    uv_close((uv_handle_t *)&c->pipe, on_client_closed);
}

static void on_drained(uv_shutdown_t *req, int status)
{
    (void)status;
    client *c = req->data;
    c->closing = 0; /* the shutdown only began the close; close_client ends it */
    close_client(c);
}

/* Lets the answers already written reach the client, then closes. */
static void shut_down(client *c)
{
    c->closing = 1;
    c->reading = 0;
    uv_read_stop((uv_stream_t *)&c->pipe);
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->pipe, on_drained) != 0) {
        c->closing = 0;
        close_client(c);
    }
}

typedef struct answer {
    uv_write_t req;
    char *text;
} answer;

static void serve(client *c);

static void on_written(uv_write_t *req, int status)
{
    answer *a = (answer *)req;
    client *c = req->handle->data;
    free(a->text);
    free(a);
    c->writing = 0;
    if (status != 0)
        close_client(c); /* gone mid-answer: its read side may be stopped, so it is noticed here */
    else
        serve(c);
}

/* Sends one answer line; text is taken over. */
static void send_line(client *c, char *text)
{
    answer *a = text ? malloc(sizeof *a) : NULL;
    if (!a) {
        free(text);
        close_client(c); /* out of memory: dropping the client is the honest answer */
        return;
    }
    const size_t len = strlen(text);
    text[len] = '\n'; /* the NUL's place; the length below excludes it again */
    a->text = text;
    uv_buf_t buf = uv_buf_init(text, (unsigned)len + 1);
    if (uv_write(&a->req, (uv_stream_t *)&c->pipe, &buf, 1, on_written) != 0) {
        free(text);
        free(a);
        close_client(c);
        return;
    }
    c->writing = 1;
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);
static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf);

/* Reading goes on exactly while the queue is empty and the client is not ending. */
static void read_while_idle(client *c)
{
    const int want = !c->first && !c->ending;
    if (want && !c->reading && uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read) != 0) {
        close_client(c);
        return;
    }
    if (!want && c->reading)
        uv_read_stop((uv_stream_t *)&c->pipe);
    c->reading = want;
}

/* The next answer: the first request's; with the queue empty, the line_too_long answer or
 * the shutdown that were waiting for it. */
static void answer_next(client *c)
{
    request *r = c->first;
    if (r) {
        c->first = r->next;
        if (!c->first)
            c->last = NULL;
        send_line(c, fdt_ops_answer(c->server->d, &c->peer, r->line, r->len));
        free(r);
    } else if (c->too_long) {
        char msg[96];
        snprintf(msg, sizeof msg, "a request line is longer than %zu bytes; closing",
                 c->framer.max);
        c->too_long = 0;
        send_line(c, fdt_ops_error_line("line_too_long", msg));
    } else if (c->ending) {
        shut_down(c);
    }
}

/* Answers the next request unless an answer is still being written (its callback comes
 * back here), and reads again only once nothing is queued. */
static void serve(client *c)
{
    if (c->closing)
        return;
    if (!c->writing)
        answer_next(c);
    if (!c->closing)
        read_while_idle(c);
}

/* No more requests are read; those queued are answered, then the client is shut down. */
static void close_after_answers(client *c)
{
    if (c->closing)
        return;
    c->ending = 1;
    serve(c);
}

static int on_line(void *ctx, char *line, size_t len)
{
    client *c = ctx;
    if (len == 0)
        return 0; /* a blank line is not a request */
    request *r = malloc(sizeof *r + len + 1);
    if (!r) {
        close_client(c); /* out of memory: dropping the client is the honest answer */
        return 1;
    }
    r->next = NULL;
    r->len = len;
    memcpy(r->line, line, len + 1);
    if (c->last)
        c->last->next = r;
    else
        c->first = r;
    c->last = r;
    return 0;
}

/* One read buffer serves every client: the loop is single-threaded and on_read hands the
 * bytes to the client's framer, which copies what it keeps, before the next read. */
static char read_buffer[64 * 1024];

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    (void)handle, (void)suggested;
    *buf = uv_buf_init(read_buffer, sizeof read_buffer);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    client *c = stream->data;
    if (nread == UV_EOF) {
        /* The client is done sending: what it asked is answered, then it is closed; a
         * line begun and never ended is dropped unanswered. */
        close_after_answers(c);
        return;
    }
    if (nread < 0) {
        close_client(c);
        return;
    }
    const int rc = fdt_jsonl_feed(&c->framer, buf->base, (size_t)nread, on_line, c);
    if (c->closing)
        return;
    if (rc == -2) {
        close_client(c);
        return;
    }
    if (rc == -1) /* answered after the lines before it, then the connection is closed */
        c->too_long = c->ending = 1;
    serve(c);
}

static void read_peer(client *c)
{
    uv_os_fd_t fd;
    struct ucred cred;
    socklen_t len = sizeof cred;
    c->peer.uid = (uid_t)-1; /* nobody, unless the kernel says otherwise */
    c->peer.gid = (gid_t)-1;
    if (uv_fileno((uv_handle_t *)&c->pipe, &fd) != 0 ||
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return;
    c->peer.uid = cred.uid;
    c->peer.gid = cred.gid;
    c->peer.pid = cred.pid;
#ifdef SO_PEERGROUPS
    socklen_t glen = sizeof c->peer.groups;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, c->peer.groups, &glen) == 0)
        c->peer.ngroups = (int)(glen / sizeof(gid_t));
#endif
}

/* The connections uid holds among the peers that are not trusted. A walk of every client
 * (at most twice max_clients, and the refused ones still closing), made only for those
 * peers' connections: simpler than a table of uids, and cheap at these sizes. */
static size_t connections_of(const fdt_server *s, uid_t uid)
{
    size_t n = 0;
    for (const client *c = s->clients; c; c = c->next)
        n += c->admitted && !c->trusted && c->peer.uid == uid;
    return n;
}

/* Gives c a slot, or says in why that there is none. Trusted peers have max_clients slots
 * of their own, which no other user can take: another uid holding every other slot cannot
 * lock root out of status or shutdown. The others share max_clients, each uid at most
 * max_clients_per_uid of them, so that one user cannot take them all. */
static int admit(fdt_server *s, client *c, char *why, size_t len)
{
    const fdt_config *cfg = &s->d->config;
    c->trusted = fdt_peer_is_admin(s->d, &c->peer);
    if (s->served[c->trusted] >= (size_t)cfg->max_clients) {
        snprintf(why, len, "too many clients; try again");
        return -1;
    }
    if (!c->trusted && connections_of(s, c->peer.uid) >= (size_t)cfg->max_clients_per_uid) {
        snprintf(why, len, "uid %u holds %d connections, the most one uid may "
                 "(max_clients_per_uid); try again", (unsigned)c->peer.uid,
                 cfg->max_clients_per_uid);
        return -1;
    }
    c->admitted = 1;
    s->served[c->trusted]++;
    return 0;
}

static void on_connection(uv_stream_t *listener, int status)
{
    fdt_server *s = listener->data;
    if (status != 0)
        return;
    client *c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->server = s;
    uv_pipe_init(s->d->loop, &c->pipe, 0);
    c->pipe.data = c;
    c->next = s->clients;
    if (s->clients)
        s->clients->prev = c;
    s->clients = c;
    fdt_jsonl_init(&c->framer, s->d->config.max_line_bytes);
    if (uv_accept(listener, (uv_stream_t *)&c->pipe) != 0) {
        close_client(c);
        return;
    }
    read_peer(c);
    char why[160];
    if (admit(s, c, why, sizeof why) != 0) {
        send_line(c, fdt_ops_error_line("busy", why));
        close_after_answers(c);
        return;
    }
    read_while_idle(c);
}

/* --- the socket file --------------------------------------------------------------- */

static const int probe_types[] = {SOCK_STREAM, SOCK_SEQPACKET, SOCK_DGRAM};
static const char *const probe_names[] = {"stream", "seqpacket", "datagram"};

/* Whether any socket is bound at path. A connect is refused (ECONNREFUSED) only where no
 * socket is bound; a socket of another type answers EPROTOTYPE, a stream socket bound but
 * not listening yet refuses a stream connect alone, and a live listener may accept or be
 * full (EAGAIN). So each type is tried, and anything but a refusal counts as bound: the
 * errno of that connect (0: it was accepted) and its type's index in *type; ECONNREFUSED
 * when every type was refused. Nonblocking: nothing here waits on another process. */
static int probe_bound(const char *path, size_t *type)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
    for (*type = 0; *type < sizeof probe_types / sizeof probe_types[0]; (*type)++) {
        const int fd = socket(AF_UNIX, probe_types[*type] | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        int e = errno;
        if (fd >= 0) {
            e = connect(fd, (const struct sockaddr *)&addr, sizeof addr) == 0 ? 0 : errno;
            close(fd);
        }
        if (e != ECONNREFUSED)
            return e;
    }
    return ECONNREFUSED;
}

/* A socket file that no one is bound to, left by a daemon that died, is removed; a live
 * socket of any type, a daemon's or another program's, is not, nor is any other file. */
static int clear_stale(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "%s exists and is not a socket; not touching it", path);
        return -1;
    }
    size_t type;
    const int e = probe_bound(path, &type);
    if (e != ECONNREFUSED) {
        snprintf(err, errlen, "another fdtuned is serving %s, or another program is bound to "
                 "it (a %s connect: %s); not touching it", path, probe_names[type],
                 e == 0 ? "accepted" : strerror(e));
        return -1;
    }
    unlink(path);
    return 0;
}

/* The group that socket_group names; (gid_t)-1 when none is set. */
static int socket_gid(const fdt_config *c, gid_t *gid, char *err, size_t errlen)
{
    *gid = (gid_t)-1;
    if (!c->socket_group[0])
        return 0;
    const struct group *g = getgrnam(c->socket_group);
    if (!g) {
        snprintf(err, errlen, "socket_group '%s' does not exist", c->socket_group);
        return -1;
    }
    *gid = g->gr_gid;
    return 0;
}

/* Who may pass through a directory fdtuned makes for its socket: its owner, socket_group's
 * members when one is set (the directory is given that group), and everyone, to search
 * only, when socket_mode lets others connect. */
static mode_t socket_dir_mode(const fdt_config *c)
{
    mode_t mode = 0700;
    if (c->socket_group[0])
        mode |= 0050;
    if (c->socket_mode & S_IWOTH)
        mode |= 0001;
    return mode;
}

/* A directory fdtuned made for the socket goes to socket_group, else its members could
 * not reach the socket; one that existed is the administrator's, left as it is. */
static int give_dir_group(int dirfd, int created, gid_t gid, const char *path, char *err,
                          size_t errlen)
{
    if (!created || gid == (gid_t)-1 || fchown(dirfd, (uid_t)-1, gid) == 0)
        return 0;
    snprintf(err, errlen, "cannot give the directory of %s to socket_group: %s", path,
             strerror(errno));
    return -1;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* By name in the directory found private, not following a symbolic link: nothing between
 * bind and here can make this change another file. */
static int set_socket_group(const fdt_config *c, int dirfd, gid_t gid, char *err,
                            size_t errlen)
{
    if (gid == (gid_t)-1 ||
        fchownat(dirfd, base_name(c->socket), (uid_t)-1, gid, AT_SYMLINK_NOFOLLOW) == 0)
        return 0;
    snprintf(err, errlen, "cannot give %s to group %s: %s", c->socket, c->socket_group,
             strerror(errno));
    return -1;
}

/* A default ACL on the directory overrides the umask; the socket is never left more (or
 * less) open than socket_mode says. */
static int check_socket_mode(const fdt_config *c, int dirfd, char *err, size_t errlen)
{
    struct stat st;
    if (fstatat(dirfd, base_name(c->socket), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        snprintf(err, errlen, "cannot stat %s: %s", c->socket, strerror(errno));
        return -1;
    }
    if (!S_ISSOCK(st.st_mode) || (st.st_mode & 0777) != c->socket_mode) {
        snprintf(err, errlen, "%s came out with mode %04o, not socket_mode %04o; does its "
                 "directory carry a default ACL?", c->socket, (unsigned)(st.st_mode & 07777),
                 (unsigned)c->socket_mode);
        return -1;
    }
    return 0;
}

static int bind_socket(fdt_server *s, int dirfd, gid_t gid, char *err, size_t errlen)
{
    const fdt_config *c = &s->d->config;
    /* Born with socket_mode: never chmod-ed through a path that could be swapped for a
     * symbolic link. */
    const mode_t old = umask(~c->socket_mode & 0777);
    const int rc = uv_pipe_bind(&s->listener, c->socket);
    umask(old);
    if (rc != 0) {
        snprintf(err, errlen, "cannot bind %s: %s", c->socket, uv_strerror(rc));
        return -1;
    }
    if (set_socket_group(c, dirfd, gid, err, errlen) != 0 ||
        check_socket_mode(c, dirfd, err, errlen) != 0)
        return -1;
    const int lrc = uv_listen((uv_stream_t *)&s->listener, 511, on_connection);
    if (lrc != 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", c->socket, uv_strerror(lrc));
        return -1;
    }
    return 0;
}

/* The socket's directory is made private or found private first (paths.h): no one else
 * can then swap the socket, or a file it is mistaken for, between the steps below. */
static int listen_in(fdt_server *s, int dirfd, int created, gid_t gid, char *err,
                     size_t errlen)
{
    fdt_daemon *d = s->d;
    if (give_dir_group(dirfd, created, gid, d->config.socket, err, errlen) != 0 ||
        clear_stale(d->config.socket, err, errlen) != 0)
        return -1;
    uv_pipe_init(d->loop, &s->listener, 0);
    s->listener.data = s;
    s->listening = 1;
    if (bind_socket(s, dirfd, gid, err, errlen) != 0) {
        fdt_server_close(d);
        return -1;
    }
    return 0;
}

int fdt_server_start(fdt_daemon *d, char *err, size_t errlen)
{
    fdt_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->d = d;
    d->server = s;
    gid_t gid;
    int created;
    if (socket_gid(&d->config, &gid, err, errlen) != 0)
        return -1;
    const int dirfd = fdt_open_private_parent(d->config.socket, socket_dir_mode(&d->config),
                                              &created, err, errlen);
    if (dirfd < 0)
        return -1;
    const int rc = listen_in(s, dirfd, created, gid, err, errlen);
    close(dirfd);
    return rc;
}

void fdt_server_close(fdt_daemon *d)
{
    fdt_server *s = d->server;
    if (!s || !s->listening)
        return;
    s->listening = 0;
    uv_close((uv_handle_t *)&s->listener, NULL);
    unlink(d->config.socket);
    for (client *c = s->clients; c; c = c->next)
        close_after_answers(c);
}

void fdt_server_free(fdt_daemon *d)
{
    free(d->server);
    d->server = NULL;
}
