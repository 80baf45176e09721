/* client.c - libfdtune: one connection to fdtuned's socket, a request line out and an
 * answer line in, and the typed query built on them.
 *
 * Each connection runs a private libuv loop that only ever runs inside a call, so the
 * caller sees plain blocking functions and two connections never share state. One timer
 * bounds every operation: when it fires the connection is closed, which also cancels a
 * write the daemon stopped reading. */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "client_json.h"
#include "config.h"
#include "fdtune.h"

/* The answer is read in pieces of at least this size; an answer longer than the limit is
 * refused rather than taking the solver's memory. */
#define READ_CHUNK 65536
#define MAX_ANSWER_BYTES (1024u * 1024u * 1024u)
/* Room for a socket path and its NUL; a longer one cannot be connected to. */
#define PATH_CAP sizeof(((struct sockaddr_un *)0)->sun_path)

enum { IN_PROGRESS = 1 };

struct fdtune_conn {
    uv_loop_t loop;
    uv_pipe_t pipe;
    uv_timer_t timer;
    uv_connect_t connect_req;
    uv_write_t write_req;
    char path[PATH_CAP];
    int timeout_ms;
    int open;        /* the pipe is connected and nothing has broken it */
    int op;          /* the operation under way: IN_PROGRESS, or how it ended */
    int writing;     /* a write request has not called back yet */
    char *err;       /* the caller's buffer for the operation's error */
    size_t errlen;
    char *buf;       /* answer bytes read; a line ends at the first newline */
    size_t len, cap;
    size_t scanned;  /* bytes already searched for the newline */
    size_t line_len; /* when op is FDTUNE_OK after a read: where the newline is */
};

__attribute__((format(printf, 3, 4)))
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static void close_pipe(fdtune_conn *c)
{
    if (!uv_is_closing((uv_handle_t *)&c->pipe))
        uv_close((uv_handle_t *)&c->pipe, NULL);
    c->open = 0;
}

/* Ends the operation under way, once: the first outcome wins over what its cancellation
 * reports later. A broken connection is closed for good. */
__attribute__((format(printf, 3, 4)))
static void finish(fdtune_conn *c, int status, const char *fmt, ...)
{
    if (c->op != IN_PROGRESS)
        return;
    c->op = status;
    if (fmt && c->err && c->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, c->errlen, fmt, ap);
        va_end(ap);
    }
    if (status != FDTUNE_OK)
        close_pipe(c);
}

static void on_timeout(uv_timer_t *t)
{
    fdtune_conn *c = t->data;
    if (c->open)
        finish(c, FDTUNE_ERR_IO, "fdtuned at %s did not answer within %.3g s", c->path,
               c->timeout_ms / 1e3);
    else
        finish(c, FDTUNE_ERR_CONNECT, "fdtuned at %s did not accept the connection within "
               "%.3g s", c->path, c->timeout_ms / 1e3);
    close_pipe(c);
}

static void begin_op(fdtune_conn *c, char *err, size_t errlen)
{
    c->op = IN_PROGRESS;
    c->err = err;
    c->errlen = errlen;
}

/* Runs the loop until the operation has ended and no write is left in flight. */
static int wait_op(fdtune_conn *c)
{
    uv_timer_start(&c->timer, on_timeout, (uint64_t)c->timeout_ms, 0);
    while (c->op == IN_PROGRESS || c->writing)
        uv_run(&c->loop, UV_RUN_ONCE);
    uv_timer_stop(&c->timer);
    c->err = NULL;
    return c->op;
}

static void on_connect(uv_connect_t *req, int status)
{
    fdtune_conn *c = req->data;
    if (status < 0) {
        finish(c, FDTUNE_ERR_CONNECT, "cannot connect to fdtuned at %s: %s", c->path,
               uv_strerror(status));
        return;
    }
    c->open = 1;
    finish(c, FDTUNE_OK, NULL);
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
    const int st = uv_loop_init(&c->loop);
    if (st < 0) {
        set_err(err, errlen, "cannot start an event loop: %s", uv_strerror(st));
        free(c);
        return NULL;
    }
    snprintf(c->path, sizeof c->path, "%s", path);
    c->timeout_ms = timeout_or_default(timeout_ms);
    uv_pipe_init(&c->loop, &c->pipe, 0);
    uv_timer_init(&c->loop, &c->timer);
    c->pipe.data = c->timer.data = c->connect_req.data = c->write_req.data = c;
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
    begin_op(c, err, errlen);
    uv_pipe_connect(&c->connect_req, &c->pipe, c->path, on_connect);
    if (wait_op(c) != FDTUNE_OK) {
        fdtune_close(c);
        return NULL;
    }
    return c;
}

void fdtune_set_timeout(fdtune_conn *c, int timeout_ms)
{
    c->timeout_ms = timeout_or_default(timeout_ms);
}

const char *fdtune_socket_path(const fdtune_conn *c)
{
    return c->path;
}

void fdtune_close(fdtune_conn *c)
{
    if (!c)
        return;
    close_pipe(c);
    uv_close((uv_handle_t *)&c->timer, NULL);
    uv_run(&c->loop, UV_RUN_DEFAULT);
    uv_loop_close(&c->loop);
    free(c->buf);
    free(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *out)
{
    (void)suggested;
    fdtune_conn *c = h->data;
    if (c->cap - c->len < READ_CHUNK) {
        const size_t cap = c->cap ? 2 * c->cap : 2 * READ_CHUNK;
        char *grown = realloc(c->buf, cap);
        if (!grown) {
            *out = uv_buf_init(NULL, 0); /* the read callback then gets UV_ENOBUFS */
            return;
        }
        c->buf = grown;
        c->cap = cap;
    }
    *out = uv_buf_init(c->buf + c->len, (unsigned)(c->cap - c->len));
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

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *b)
{
    (void)b;
    fdtune_conn *c = s->data;
    if (nread == UV_EOF) {
        finish(c, FDTUNE_ERR_IO, "fdtuned at %s closed the connection before answering",
               c->path);
        return;
    }
    if (nread < 0) {
        finish(c, FDTUNE_ERR_IO, "reading from fdtuned at %s: %s", c->path,
               uv_strerror((int)nread));
        return;
    }
    c->len += (size_t)nread;
    if (find_line(c)) {
        uv_read_stop(s);
        finish(c, FDTUNE_OK, NULL);
    } else if (c->len > MAX_ANSWER_BYTES) {
        finish(c, FDTUNE_ERR_ANSWER, "the answer of fdtuned at %s is longer than %u bytes",
               c->path, MAX_ANSWER_BYTES);
    }
}

static void on_write(uv_write_t *req, int status)
{
    fdtune_conn *c = req->data;
    c->writing = 0;
    if (status < 0)
        finish(c, FDTUNE_ERR_IO, "sending to fdtuned at %s: %s", c->path, uv_strerror(status));
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

/* A daemon that closes the connection while a request is written would raise SIGPIPE, and
 * its default action kills the solver. The signal is held back in this thread while the
 * loop runs and discarded if the write raised it; the caller's own disposition is left
 * alone. */
static void sigpipe_hold(sigset_t *saved, int *was_pending)
{
    sigset_t set, pending;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    sigpending(&pending);
    *was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, saved);
}

static void sigpipe_release(const sigset_t *saved, int was_pending)
{
    sigset_t set, pending;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    sigpending(&pending);
    if (!was_pending && sigismember(&pending, SIGPIPE)) {
        const struct timespec now = {0, 0};
        sigtimedwait(&set, NULL, &now);
    }
    pthread_sigmask(SIG_SETMASK, saved, NULL);
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
    if (!c->open) {
        set_err(err, errlen, "the connection to fdtuned at %s was closed after an earlier "
                "error; connect again", c->path);
        return FDTUNE_ERR_IO;
    }
    uv_buf_t bufs[2] = {uv_buf_init((char *)json_line, (unsigned)n), uv_buf_init("\n", 1)};
    sigset_t saved;
    int was_pending;
    sigpipe_hold(&saved, &was_pending);
    begin_op(c, err, errlen);
    int st = uv_write(&c->write_req, (uv_stream_t *)&c->pipe, bufs, 2, on_write);
    if (st == 0) {
        c->writing = 1;
        if (find_line(c))
            finish(c, FDTUNE_OK, NULL);
        else
            st = uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read);
    }
    if (st < 0)
        finish(c, FDTUNE_ERR_IO, "sending to fdtuned at %s: %s", c->path, uv_strerror(st));
    st = wait_op(c);
    sigpipe_release(&saved, was_pending);
    if (st != FDTUNE_OK)
        return st;
    *answer_line = take_line(c);
    if (!*answer_line) {
        set_err(err, errlen, "out of memory");
        return FDTUNE_ERR_IO;
    }
    return FDTUNE_OK;
}

json_t *fdtune_problem_request(const char *op, const fdtune_problem *p, int with_shape)
{
    static const char *const caches[] = {[FDTUNE_HOT] = "hot", [FDTUNE_COLD] = "cold",
                                         [FDTUNE_PERSIST] = "persist"};
    if ((unsigned)p->cache >= sizeof caches / sizeof caches[0])
        return NULL;
    json_t *req = json_pack("{s:i, s:s, s:s, s:i, s:s, s:i}", "v", 1, "op", op, "precision",
                            p->precision == FDTUNE_FLOAT ? "float" : "double", "radius",
                            p->radius ? p->radius : 1, "cache", caches[p->cache], "device",
                            p->device);
    if (!req)
        return NULL;
    int st = 0;
    if (with_shape) {
        st |= json_object_set_new(req, "nx", json_integer(p->nx));
        st |= json_object_set_new(req, "ny", json_integer(p->ny));
        st |= json_object_set_new(req, "nz", json_integer(p->nz));
    }
    if (p->tune_if_missing)
        st |= json_object_set_new(req, "tune_if_missing", json_true());
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
           get_string(p, "entry", 1, a->persist.entry, sizeof a->persist.entry, err, errlen) ||
           get_dim3(p, "block", a->persist.block, err, errlen) ||
           get_dim3(p, "grid", a->persist.grid, err, errlen) ? -1 : 0;
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
        parse_config(json_object_get(j, "config"), a, err, errlen))
        return FDTUNE_ERR_ANSWER;
    return FDTUNE_OK;
}

int fdtune_answer_parse(const char *answer_line, fdtune_answer *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    json_error_t jerr;
    json_t *j = json_loads(answer_line, 0, &jerr);
    if (!json_is_object(j)) {
        set_err(err, errlen, "the answer is not a JSON object%s%s", j ? "" : ": ",
                j ? "" : jerr.text);
        json_decref(j);
        return FDTUNE_ERR_ANSWER;
    }
    const int st = parse_answer(j, a, err, errlen);
    json_decref(j);
    return st;
}

int fdtune_query(fdtune_conn *c, const fdtune_problem *p, fdtune_answer *a, char *err,
                 size_t errlen)
{
    memset(a, 0, sizeof *a);
    json_t *req = fdtune_problem_request("query", p, 1);
    char *line = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (!line) {
        set_err(err, errlen, "out of memory");
        return FDTUNE_ERR_ARG;
    }
    char *answer;
    int st = fdtune_request(c, line, &answer, err, errlen);
    free(line);
    if (st == FDTUNE_OK) {
        st = fdtune_answer_parse(answer, a, err, errlen);
        free(answer);
    }
    return st;
}
