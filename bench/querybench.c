/* querybench.c - load generator for fdtuned's query path: C connections to the socket, each
 * sending `query` requests back to back with one outstanding at a time, for a warm-up and
 * then a measured period; prints one line of throughput and latency (uv_hrtime, from the
 * write to the answer's last byte).
 *
 *   querybench --socket PATH [--clients C] [--seconds D] [--warmup W] [--shape NXxNYxNZ]...
 *
 * Any answer with "ok": false, an answer that is not one JSON line per request, or a broken
 * connection counts as an error (warm-up included); the first of each kind is printed on
 * stderr. Exit status: 0 when no error occurred and at least one query was measured. */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <uv.h>

#define MAX_SHAPES 64
#define READ_CHUNK 65536

/* Without --shape: the one query_bench.sh tunes, neighbours of it (nearest answers), and
 * shapes far from anything tuned; the daemon's cost differs between exact and nearest. */
static const int default_shapes[][3] = {
    {13, 17, 11}, {64, 64, 64}, {16, 16, 16}, {128, 128, 128}, {512, 512, 512}, {100, 37, 250},
};

typedef enum phase { WARMING, MEASURING, DONE } phase;

typedef struct bench {
    uv_loop_t *loop;
    uv_timer_t timer;
    phase phase;
    uint64_t measure_start, measure_end;
    char *requests[MAX_SHAPES];
    size_t nrequests;
    uint64_t *latencies; /* ns, of the queries answered within the measured period */
    size_t nlat, caplat;
    unsigned long long errors;
    int told_refused, told_broken, told_garbled;
} bench;

typedef struct conn {
    uv_pipe_t pipe;
    uv_connect_t connect;
    uv_write_t write;
    bench *b;
    size_t next;         /* the request to send next, cycling through b->requests */
    uint64_t sent_at;
    int waiting;         /* a request is outstanding */
    char *buf;
    size_t len, cap;
} conn;

static void report_once(int *told, const char *what, const char *detail)
{
    if (*told)
        return;
    *told = 1;
    fprintf(stderr, "querybench: %s: %.300s\n", what, detail);
}

static void record(bench *b, uint64_t ns)
{
    if (b->nlat == b->caplat) {
        const size_t cap = b->caplat ? 2 * b->caplat : 1 << 16;
        uint64_t *grown = realloc(b->latencies, cap * sizeof *grown);
        if (!grown) {
            fprintf(stderr, "querybench: out of memory for latencies\n");
            exit(2);
        }
        b->latencies = grown, b->caplat = cap;
    }
    b->latencies[b->nlat++] = ns;
}

static void on_closed(uv_handle_t *h)
{
    conn *c = h->data;
    free(c->buf);
    free(c);
}

/* The connection is given up: no reconnect, so that a daemon that drops clients shows as
 * errors rather than as reconnect churn. */
static void drop(conn *c, const char *why)
{
    bench *b = c->b;
    if (uv_is_closing((uv_handle_t *)&c->pipe))
        return;
    if (b->phase != DONE) {
        b->errors++;
        report_once(&b->told_broken, "connection lost", why);
    }
    uv_close((uv_handle_t *)&c->pipe, on_closed);
}

static void on_written(uv_write_t *req, int status)
{
    conn *c = req->data;
    if (status < 0 && status != UV_ECANCELED)
        drop(c, uv_strerror(status));
}

static void send_next(conn *c)
{
    bench *b = c->b;
    const char *line = b->requests[c->next];
    c->next = (c->next + 1) % b->nrequests;
    uv_buf_t buf = uv_buf_init((char *)line, (unsigned)strlen(line));
    c->sent_at = uv_hrtime();
    c->waiting = 1;
    const int n = uv_try_write((uv_stream_t *)&c->pipe, &buf, 1);
    if (n == (int)buf.len)
        return;
    if (n > 0)
        buf.base += n, buf.len -= (size_t)n;
    else if (n != UV_EAGAIN) {
        drop(c, uv_strerror(n));
        return;
    }
    c->write.data = c;
    const int rc = uv_write(&c->write, (uv_stream_t *)&c->pipe, &buf, 1, on_written);
    if (rc != 0)
        drop(c, uv_strerror(rc));
}

/* "ok" as the object's member, whatever the spacing; the daemon writes "ok":true. */
static int answer_ok(const char *line)
{
    const char *p = strstr(line, "\"ok\"");
    if (!p)
        return 0;
    p += 4;
    p += strspn(p, " \t");
    if (*p++ != ':')
        return 0;
    p += strspn(p, " \t");
    return strncmp(p, "true", 4) == 0;
}

static void on_answer(conn *c, char *line, uint64_t now)
{
    bench *b = c->b;
    if (!c->waiting) {
        b->errors++;
        report_once(&b->told_garbled, "an answer no request asked for", line);
        return;
    }
    c->waiting = 0;
    if (!answer_ok(line)) {
        if (b->phase != DONE)
            b->errors++;
        report_once(&b->told_refused, "query refused", line);
    } else if (b->phase == MEASURING && c->sent_at >= b->measure_start) {
        record(b, now - c->sent_at);
    }
    if (b->phase != DONE)
        send_next(c);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *out)
{
    (void)hint;
    conn *c = h->data;
    if (c->cap - c->len < READ_CHUNK / 4) {
        char *grown = realloc(c->buf, c->cap + READ_CHUNK);
        if (!grown) {
            *out = uv_buf_init(NULL, 0); /* libuv reports UV_ENOBUFS to on_read */
            return;
        }
        c->buf = grown, c->cap += READ_CHUNK;
    }
    *out = uv_buf_init(c->buf + c->len, (unsigned)(c->cap - c->len));
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    (void)buf;
    conn *c = s->data;
    if (n < 0) {
        drop(c, n == UV_EOF ? "the daemon closed the connection" : uv_strerror((int)n));
        return;
    }
    const uint64_t now = uv_hrtime();
    c->len += (size_t)n;
    size_t start = 0;
    char *nl;
    while ((nl = memchr(c->buf + start, '\n', c->len - start)) != NULL) {
        *nl = '\0';
        on_answer(c, c->buf + start, now);
        start = (size_t)(nl - c->buf) + 1;
        if (uv_is_closing((uv_handle_t *)&c->pipe))
            return;
    }
    memmove(c->buf, c->buf + start, c->len - start);
    c->len -= start;
}

static void on_connected(uv_connect_t *req, int status)
{
    conn *c = req->data;
    if (status < 0) {
        drop(c, uv_strerror(status));
        return;
    }
    uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read);
    send_next(c);
}

static void close_all(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, h->type == UV_NAMED_PIPE ? on_closed : NULL);
}

static void on_timer(uv_timer_t *t)
{
    bench *b = t->data;
    if (b->phase == WARMING) {
        b->phase = MEASURING;
        b->measure_start = uv_hrtime();
        return;
    }
    b->phase = DONE;
    b->measure_end = uv_hrtime();
    uv_walk(b->loop, close_all, NULL);
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest latency that at least p of the queries did not exceed. */
static double percentile_us(const uint64_t *sorted, size_t n, double p)
{
    if (n == 0)
        return 0.0;
    const double exact = p * (double)n;
    size_t rank = (size_t)exact;
    if ((double)rank < exact)
        rank++;
    if (rank < 1)
        rank = 1;
    return (double)sorted[(rank > n ? n : rank) - 1] / 1e3;
}

static int parse_shape(const char *text, int shape[3])
{
    char tail;
    if (sscanf(text, "%dx%dx%d%c", &shape[0], &shape[1], &shape[2], &tail) != 3)
        return -1;
    for (int d = 0; d < 3; d++)
        if (shape[d] < 1 || shape[d] > 65536)
            return -1;
    return 0;
}

static void add_request(bench *b, const int shape[3])
{
    char line[160];
    snprintf(line, sizeof line, "{\"v\":1,\"op\":\"query\",\"nx\":%d,\"ny\":%d,\"nz\":%d}\n",
             shape[0], shape[1], shape[2]);
    b->requests[b->nrequests++] = strdup(line);
}

static int parse_count(const char *text, const char *what, int lo, int hi, int *out)
{
    char *end;
    const long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "querybench: %s must be a whole number from %d to %d, not '%s'\n", what,
                lo, hi, text);
        return -1;
    }
    *out = (int)v;
    return 0;
}

typedef struct args {
    const char *socket;
    int clients, seconds, warmup;
} args;

static int parse_args(int argc, char **argv, args *a, bench *b)
{
    static const struct option options[] = {
        {"socket", required_argument, NULL, 's'}, {"clients", required_argument, NULL, 'c'},
        {"seconds", required_argument, NULL, 'd'}, {"warmup", required_argument, NULL, 'w'},
        {"shape", required_argument, NULL, 'S'},  {NULL, 0, NULL, 0},
    };
    int opt, shape[3];
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (opt) {
        case 's': a->socket = optarg; break;
        case 'c': if (parse_count(optarg, "--clients", 1, 10000, &a->clients)) return -1; break;
        case 'd': if (parse_count(optarg, "--seconds", 1, 3600, &a->seconds)) return -1; break;
        case 'w': if (parse_count(optarg, "--warmup", 0, 3600, &a->warmup)) return -1; break;
        case 'S':
            if (parse_shape(optarg, shape) != 0 || b->nrequests == MAX_SHAPES) {
                fprintf(stderr, "querybench: --shape wants NXxNYxNZ (at most %d shapes), not '%s'\n",
                        MAX_SHAPES, optarg);
                return -1;
            }
            add_request(b, shape);
            break;
        default:
            fprintf(stderr, "usage: querybench --socket PATH [--clients C] [--seconds D] "
                            "[--warmup W] [--shape NXxNYxNZ]...\n");
            return -1;
        }
    }
    if (!a->socket || optind < argc) {
        fprintf(stderr, "querybench: --socket PATH is required, and nothing else\n");
        return -1;
    }
    /* uv_pipe_connect would cut a longer path short and connect somewhere else. */
    if (strlen(a->socket) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        fprintf(stderr, "querybench: socket path too long: %s\n", a->socket);
        return -1;
    }
    for (size_t i = 0; b->nrequests == 0 && i < sizeof default_shapes / sizeof *default_shapes; i++)
        add_request(b, default_shapes[i]);
    return 0;
}

static void start_clients(bench *b, const args *a)
{
    for (int i = 0; i < a->clients; i++) {
        conn *c = calloc(1, sizeof *c);
        if (!c) {
            fprintf(stderr, "querybench: out of memory\n");
            exit(2);
        }
        c->b = b;
        c->next = (size_t)i % b->nrequests; /* the clients ask different shapes at once */
        uv_pipe_init(b->loop, &c->pipe, 0);
        c->pipe.data = c;
        c->connect.data = c;
        uv_pipe_connect(&c->connect, &c->pipe, a->socket, on_connected);
    }
}

int main(int argc, char **argv)
{
    static bench b;
    args a = {.clients = 1, .seconds = 10, .warmup = 1};
    if (parse_args(argc, argv, &a, &b) != 0)
        return 2;
    b.loop = uv_default_loop();
    uv_timer_init(b.loop, &b.timer);
    b.timer.data = &b;
    b.phase = a.warmup ? WARMING : MEASURING;
    b.measure_start = uv_hrtime();
    if (a.warmup)
        uv_timer_start(&b.timer, on_timer, (uint64_t)a.warmup * 1000, (uint64_t)a.seconds * 1000);
    else
        uv_timer_start(&b.timer, on_timer, (uint64_t)a.seconds * 1000, 0);
    start_clients(&b, &a);
    uv_run(b.loop, UV_RUN_DEFAULT);
    uv_loop_close(b.loop);

    qsort(b.latencies, b.nlat, sizeof *b.latencies, cmp_u64);
    const double seconds = (double)(b.measure_end - b.measure_start) / 1e9;
    printf("clients=%d queries=%zu seconds=%.2f qps=%.0f p50_us=%.1f p99_us=%.1f max_us=%.1f "
           "errors=%llu\n",
           a.clients, b.nlat, seconds, seconds > 0 ? (double)b.nlat / seconds : 0.0,
           percentile_us(b.latencies, b.nlat, 0.50), percentile_us(b.latencies, b.nlat, 0.99),
           b.nlat ? (double)b.latencies[b.nlat - 1] / 1e3 : 0.0, b.errors);
    for (size_t i = 0; i < b.nrequests; i++)
        free(b.requests[i]);
    free(b.latencies);
    return b.errors == 0 && b.nlat > 0 ? 0 : 1;
}
