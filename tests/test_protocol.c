/* test_protocol.c - a real fdtuned (cpu backend, temporary socket and database) fed bad
 * and hostile input over raw sockets: each bad request gets a clear error, the daemon stays
 * up, and what it stored is still there. Also the socket's mode and the SO_PEERCRED rights,
 * checked from a child process that drops to another uid: that takes root, so run as
 * another user the test runs itself again as root of a user namespace (main).
 *
 * The test speaks the wire protocol with plain blocking sockets on purpose: it must be able
 * to send what no well-behaved client (libfdtune, fdtune) would. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "hashes.h"

#define NOBODY 65534
#define MAX_ANSWER (1 << 20)

typedef struct daemon_proc {
    pid_t pid;
    char dir[64], socket[128], db[128], conf[128], log[128];
    rlim_t file_limit; /* 0, or the largest file the daemon may write: a disk that fills */
} daemon_proc;

static daemon_proc main_daemon;

static const char *build_dir(void)
{
    const char *b = getenv("FDT_BUILD");
    return b ? b : "build";
}

static int try_connect(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
        struct timeval tv = {.tv_sec = 30};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        return fd;
    }
    if (fd >= 0)
        close(fd);
    return -1;
}

static int connect_or_die(const char *path)
{
    const int fd = try_connect(path);
    assert_true(fd >= 0);
    return fd;
}

static void send_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        const ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n <= 0)
            return; /* the daemon may close on us (line_too_long): the answer tells */
        data += n;
        len -= (size_t)n;
    }
}

/* One answer line, or "" when the connection closed first. */
static char *read_line(int fd)
{
    static char buf[MAX_ANSWER];
    size_t len = 0;
    while (len + 1 < sizeof buf) {
        const ssize_t n = recv(fd, buf + len, 1, 0);
        if (n <= 0 || buf[len] == '\n')
            break;
        len++;
    }
    buf[len] = '\0';
    return buf;
}

static char *ask_on(int fd, const char *request)
{
    send_all(fd, request, strlen(request));
    send_all(fd, "\n", 1);
    return read_line(fd);
}

static char *ask(const char *socket_path, const char *request)
{
    const int fd = connect_or_die(socket_path);
    char *answer = ask_on(fd, request);
    close(fd);
    return answer;
}

#define assert_contains(haystack, needle)                                                     \
    do {                                                                                      \
        if (!strstr((haystack), (needle)))                                                    \
            fail_msg("expected '%s' in '%s'", (needle), (haystack));                          \
    } while (0)
#define assert_not_contains(haystack, needle)                                                 \
    do {                                                                                      \
        if (strstr((haystack), (needle)))                                                     \
            fail_msg("did not expect '%s' in '%s'", (needle), (haystack));                    \
    } while (0)

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Every daemon the tests started: one that a failed test left running (its assertion jumped
 * past the stop) is killed when the program exits, else it would outlive the run and hold
 * its output open. */
#define MAX_DAEMONS 16
static pid_t daemons_started[MAX_DAEMONS];
static size_t daemon_count;

static void kill_daemons_left_running(void)
{
    for (size_t i = 0; i < daemon_count; i++) {
        int status;
        if (waitpid(daemons_started[i], &status, WNOHANG) == 0) /* ours, not reaped yet */
            kill(daemons_started[i], SIGKILL);
    }
}

static void start_daemon(daemon_proc *d, const char *extra_config)
{
    assert_true(daemon_count < MAX_DAEMONS);
    snprintf(d->dir, sizeof d->dir, "/tmp/fdt-proto-XXXXXX");
    assert_non_null(mkdtemp(d->dir));
    chmod(d->dir, 0755); /* so that a client of another uid can reach the socket */
    snprintf(d->socket, sizeof d->socket, "%s/fdtuned.sock", d->dir);
    snprintf(d->db, sizeof d->db, "%s/fdtuned.db", d->dir);
    snprintf(d->conf, sizeof d->conf, "%s/fdtuned.conf", d->dir);
    snprintf(d->log, sizeof d->log, "%s/fdtuned.log", d->dir);
    char conf[512];
    /* No bound on the spread: a loaded test host must not fail the jobs tests need done. */
    snprintf(conf, sizeof conf, "[tuning]\nsamples = 3\nmin_sample_ms = 0.1\nleaders = 2\n"
             "leader_samples = 5\nmax_spread = 0\n%s", extra_config);
    write_file(d->conf, conf);
    char daemon_path[256];
    snprintf(daemon_path, sizeof daemon_path, "%s/fdtuned", build_dir());
    d->pid = fork();
    assert_true(d->pid >= 0);
    if (d->pid == 0) {
        const int log = open(d->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(log, 2);
        if (d->file_limit) { /* writes past it fail with EFBIG, as on a full disk */
            const struct rlimit limit = {d->file_limit, d->file_limit};
            signal(SIGXFSZ, SIG_IGN);
            setrlimit(RLIMIT_FSIZE, &limit);
        }
        execl(daemon_path, "fdtuned", "--config", d->conf, "--socket", d->socket, "--db", d->db,
              "--backend", "cpu", (char *)NULL);
        _exit(127);
    }
    daemons_started[daemon_count++] = d->pid;
    /* A start measures the device's balance first, which takes long on a loaded host: the
     * bound is generous, and a daemon that exits fails the test at once. */
    for (int i = 0; i < 2400; i++) {
        const int fd = try_connect(d->socket);
        if (fd >= 0) {
            close(fd);
            return;
        }
        int status;
        if (waitpid(d->pid, &status, WNOHANG) == d->pid)
            fail_msg("fdtuned exited before it answered; see %s", d->log);
        usleep(50 * 1000);
    }
    fail_msg("fdtuned did not start in 120 s; see %s", d->log);
}

static int stop_daemon(daemon_proc *d)
{
    int status = 0;
    kill(d->pid, SIGTERM);
    waitpid(d->pid, &status, 0);
    return status;
}

static int alive(const daemon_proc *d)
{
    return kill(d->pid, 0) == 0 && strstr(ask(d->socket, "{\"op\":\"ping\"}"), "\"pong\":true");
}

/* Polls a job until it is no longer queued or running. */
static void wait_job(const char *socket_path, int id)
{
    char req[64];
    snprintf(req, sizeof req, "{\"op\":\"status\",\"job\":%d}", id);
    for (int i = 0; i < 1200; i++) {
        const char *a = ask(socket_path, req);
        if (!strstr(a, "\"state\":\"queued\"") && !strstr(a, "\"state\":\"running\""))
            return;
        usleep(100 * 1000);
    }
    fail_msg("job %d did not finish", id);
}

static int setup(void **state)
{
    (void)state;
    start_daemon(&main_daemon, "");
    /* Something stored before the abuse, to check it survives it. */
    const char *a = ask(main_daemon.socket,
                        "{\"op\":\"tune\",\"nx\":13,\"ny\":17,\"nz\":11,\"family\":\"naive\","
                        "\"subset\":2}");
    assert_contains(a, "\"job\":1");
    wait_job(main_daemon.socket, 1);
    assert_contains(ask(main_daemon.socket, "{\"op\":\"status\",\"job\":1}"), "\"state\":\"done\"");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    const int status = stop_daemon(&main_daemon);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return 0;
}

typedef struct bad_case {
    const char *request;
    const char *code;
    const char *words; /* part of the message */
} bad_case;

static void test_bad_requests(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        {"{\"op\":\"query\",", "bad_json", ""},
        {"[1,2,3]", "bad_json", "must be a JSON object"},
        {"\"ping\"", "bad_json", "expected"},
        {"{\"op\":\"ping\",\"op\":\"query\"}", "bad_json", "duplicate"},
        {"{\"op\":\"frobnicate\"}", "unknown_op", "frobnicate"},
        {"{\"nx\":5}", "bad_request", "'op' is required"},
        {"{\"op\":7}", "bad_request", "'op' is required and must be a string"},
        {"{\"v\":2,\"op\":\"ping\"}", "bad_version", "version 1"},
        {"{\"op\":\"query\",\"ny\":8,\"nz\":8}", "bad_request", "'nx' is required"},
        {"{\"op\":\"query\",\"nx\":\"512\",\"ny\":8,\"nz\":8}", "bad_request",
         "'nx' must be an integer"},
        {"{\"op\":\"query\",\"nx\":8.5,\"ny\":8,\"nz\":8}", "bad_request", "integer"},
        {"{\"op\":\"query\",\"nx\":0,\"ny\":8,\"nz\":8}", "bad_shape", "nx must be between"},
        {"{\"op\":\"query\",\"nx\":1099511627776,\"ny\":8,\"nz\":8}", "bad_shape", "1099511627776"},
        {"{\"op\":\"query\",\"nx\":-3,\"ny\":8,\"nz\":8}", "bad_shape", "-3"},
        {"{\"op\":\"query\",\"nx\":2,\"ny\":8,\"nz\":8}", "bad_shape", "nx = 2"},
        {"{\"op\":\"query\",\"nx\":8,\"ny\":8,\"nz\":8,\"radius\":4}", "bad_shape", "9"},
        {"{\"op\":\"query\",\"nx\":8,\"ny\":8,\"nz\":8,\"radius\":9}", "bad_request", "radius"},
        {"{\"op\":\"query\",\"nx\":8,\"ny\":8,\"nz\":8,\"precision\":\"half\"}", "bad_request",
         "precision"},
        {"{\"op\":\"query\",\"nx\":8,\"ny\":8,\"nz\":8,\"precision\":5}", "bad_request",
         "'precision' must be a string"},
        {"{\"op\":\"query\",\"nx\":8,\"ny\":8,\"nz\":8,\"device\":3}", "no_device", "device 3"},
        {"{\"op\":\"query\",\"nx\":8,\"ny\":8,\"nz\":8,\"tune_if_missing\":\"yes\"}", "bad_request",
         "tune_if_missing"},
        {"{\"op\":\"tune\",\"nx\":8,\"ny\":8,\"nz\":8,\"family\":\"warp\"}", "bad_request", "warp"},
        {"{\"op\":\"tune\",\"nx\":8,\"ny\":8,\"nz\":8,\"family\":\"fault\"}", "bad_request",
         "test-only"},
        {"{\"op\":\"tune\",\"nx\":8,\"ny\":8,\"nz\":8,\"subset\":-1}", "bad_request", "subset"},
        {"{\"op\":\"tune\",\"nx\":8,\"ny\":8,\"nz\":8,\"cache\":\"cold\"}", "bad_request",
         "cold-cache tuning is not implemented"},
        {"{\"op\":\"query\",\"nx\":8,\"ny\":8,\"nz\":8,\"cache\":\"tepid\"}", "bad_request",
         "cache"},
        {"{\"op\":\"tune\",\"nx\":8,\"ny\":8,\"nz\":8,\"cache\":\"persist\"}", "bad_request",
         "cannot hold f's row edges in L2: cache mode persist needs NVIDIA sm_80 or later"},
        {"{\"op\":\"batch\",\"shapes\":[[8,8,8],[8,0,8]]}", "bad_shape", "shapes[1][1]"},
        {"{\"op\":\"batch\",\"shapes\":[[8,8]]}", "bad_request", "shapes[0]"},
        {"{\"op\":\"batch\"}", "bad_request", "either 'shapes' or 'sweep'"},
        {"{\"op\":\"batch\",\"sweep\":{\"nx\":[8],\"ny\":[]}}", "bad_request", "sweep.ny"},
        {"{\"op\":\"status\",\"job\":\"1\"}", "bad_request", "'job' must be a positive integer"},
        {"{\"op\":\"status\",\"job\":99999}", "not_found", "no job 99999"},
        {"{\"op\":\"cancel\",\"job\":1}", "busy", "done already"},
        {"{\"op\":\"jobs\",\"state\":\"sleeping\"}", "bad_request", "'state' must be"},
        {"{\"op\":\"jobs\",\"limit\":0}", "bad_request", "limit"},
        {"{\"op\":\"export\",\"format\":\"xml\"}", "bad_request", "format"},
        {"{\"op\":\"query\",\"nx\":13,\"ny\":8,\"nz\":8,\"pitch\":\"wide\"}", "bad_request",
         "'pitch' must be a row pitch in points or \\\"auto\\\""},
        {"{\"op\":\"query\",\"nx\":13,\"ny\":8,\"nz\":8,\"pitch\":12}", "bad_shape",
         "pitch 12 is out of range: a row pitch must be nx (13) to nx + 4096"},
        {"{\"op\":\"tune\",\"nx\":13,\"ny\":8,\"nz\":8,\"offset\":32}", "bad_shape",
         "offset 32 is out of range: 0 to 31 points (255 bytes) in double"},
        {"{\"op\":\"tune\",\"nx\":13,\"ny\":8,\"nz\":8,\"pitch\":\"auto\",\"offset\":1}",
         "bad_request", "pitch \\\"auto\\\" chooses the offset too"},
        {"{\"op\":\"batch\",\"shapes\":[[13,8,8],[64,8,8]],\"pitch\":16}", "bad_shape",
         "shapes[1]"},
    };
    const int fd = connect_or_die(main_daemon.socket);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *a = ask_on(fd, cases[i].request);
        char code[64];
        snprintf(code, sizeof code, "\"code\":\"%s\"", cases[i].code);
        if (!strstr(a, "\"ok\":false") || !strstr(a, code) || !strstr(a, cases[i].words))
            fail_msg("request %s: answer %s, expected %s and '%s'", cases[i].request, a, code,
                     cases[i].words);
    }
    /* The same connection still serves. */
    assert_contains(ask_on(fd, "{\"op\":\"ping\"}"), "\"pong\":true");
    close(fd);
    /* Nothing of the bad batch was queued. */
    assert_contains(ask(main_daemon.socket, "{\"op\":\"status\"}"), "\"queued\":0");
}

static void test_ids_are_echoed_in_order(void **state)
{
    (void)state;
    const int fd = connect_or_die(main_daemon.socket);
    const char *burst = "{\"id\":\"a\",\"op\":\"ping\"}\n{\"id\":{\"n\":2},\"op\":\"nope\"}\n"
                        "\n{\"id\":3,\"op\":\"ping\"}\n";
    send_all(fd, burst, strlen(burst));
    assert_contains(read_line(fd), "\"id\":\"a\"");
    const char *second = read_line(fd);
    assert_contains(second, "\"id\":{\"n\":2}");
    assert_contains(second, "unknown_op");
    assert_contains(read_line(fd), "\"id\":3");
    close(fd);
}

static void test_query_answers(void **state)
{
    (void)state;
    const char *exact = ask(main_daemon.socket, "{\"op\":\"query\",\"nx\":13,\"ny\":17,\"nz\":11}");
    assert_contains(exact, "\"match\":\"exact\"");
    assert_contains(exact, "\"device_match\":\"fingerprint\"");
    assert_contains(exact, "\"variant\":\"naive:");
    assert_contains(exact, "\"defines\":[");
    const char *near = ask(main_daemon.socket, "{\"op\":\"query\",\"nx\":40,\"ny\":17,\"nz\":11}");
    assert_contains(near, "\"match\":\"nearest\"");
    assert_contains(near, "\"from\":{\"nx\":13,\"ny\":17,\"nz\":11");
    const char *none = ask(main_daemon.socket,
                           "{\"op\":\"query\",\"nx\":13,\"ny\":17,\"nz\":11,\"radius\":2}");
    assert_contains(none, "\"match\":\"default\"");
    assert_contains(none, "\"variant\":\"naive:256x1x1\"");
    /* The launch geometry is the asked shape's: one 256-wide block in x, one per y row and
     * z plane. */
    assert_contains(none, "\"block\":[256,1,1],\"grid\":[1,17,11]");
    /* Nothing was tuned in cache mode persist (a cpu daemon cannot): the default, with no
     * persist step to run. */
    const char *persist = ask(main_daemon.socket, "{\"op\":\"query\",\"nx\":13,\"ny\":17,"
                                                  "\"nz\":11,\"cache\":\"persist\"}");
    assert_contains(persist, "\"match\":\"default\"");
    assert_not_contains(persist, "\"persist\"");
}

/* The answer's layout, as a "pitch offset" pair, and its gbps. */
static void answer_layout(const char *answer, int *pitch, int *offset, double *gbps)
{
    json_error_t e;
    json_t *a = json_loads(answer, 0, &e);
    json_t *layout = json_object_get(a, "layout");
    if (!layout)
        fail_msg("no layout in %s", answer);
    *pitch = (int)json_integer_value(json_object_get(layout, "pitch"));
    *offset = (int)json_integer_value(json_object_get(layout, "offset"));
    *gbps = json_number_value(json_object_get(a, "gbps"));
    json_decref(a);
}

/* Pitch auto tunes the shape in each candidate layout (a job each: dense, rows padded to
 * whole sectors, and moved so that each row's first interior point starts one), and its
 * query answers the fastest of them with what it gains on the dense one. An asked layout
 * is answered exactly where it was tuned, and nearly (another layout's winner) where not. */
static void test_layouts_are_tuned_and_answered(void **state)
{
    (void)state;
    const char *socket = main_daemon.socket;
    const char *a = ask(socket, "{\"op\":\"tune\",\"nx\":13,\"ny\":17,\"nz\":11,"
                                "\"family\":\"naive\",\"subset\":2,\"pitch\":\"auto\"}");
    json_error_t e;
    json_t *answer = json_loads(a, 0, &e);
    json_t *jobs = json_object_get(answer, "jobs");
    assert_int_equal(json_array_size(jobs), 3);
    for (size_t i = 0; i < 3; i++)
        wait_job(socket, (int)json_integer_value(json_array_get(jobs, i)));
    json_decref(answer);
    /* 13 doubles: rows padded to 16 (four 32-byte sectors), then moved by 3 so that point 1
     * starts a sector. */
    static const int layouts[3][2] = {{13, 0}, {16, 0}, {16, 3}};
    double fastest = 0, dense = 0;
    int pitch, offset;
    for (int i = 0; i < 3; i++) {
        char req[160];
        snprintf(req, sizeof req, "{\"op\":\"query\",\"nx\":13,\"ny\":17,\"nz\":11,"
                 "\"pitch\":%d,\"offset\":%d}", layouts[i][0], layouts[i][1]);
        const char *q = ask(socket, req);
        assert_contains(q, "\"match\":\"exact\"");
        assert_not_contains(q, "dense_gbps");
        double gbps;
        answer_layout(q, &pitch, &offset, &gbps);
        assert_int_equal(pitch, layouts[i][0]);
        assert_int_equal(offset, layouts[i][1]);
        dense = i == 0 ? gbps : dense;
        fastest = gbps > fastest ? gbps : fastest;
    }
    const char *best = ask(socket, "{\"op\":\"query\",\"nx\":13,\"ny\":17,\"nz\":11,"
                                   "\"pitch\":\"auto\"}");
    assert_contains(best, "\"match\":\"exact\"");
    double gbps;
    answer_layout(best, &pitch, &offset, &gbps);
    assert_true(gbps == fastest);
    json_t *b = json_loads(best, 0, &e);
    json_t *layout = json_object_get(b, "layout");
    assert_true(json_number_value(json_object_get(layout, "dense_gbps")) == dense);
    assert_true(json_number_value(json_object_get(layout, "gain")) == fastest / dense);
    json_decref(b);
    /* A layout never tuned: another layout's winner of the shape, near, in the asked one. */
    const char *near = ask(socket, "{\"op\":\"query\",\"nx\":13,\"ny\":17,\"nz\":11,"
                                   "\"pitch\":20,\"offset\":1}");
    assert_contains(near, "\"match\":\"nearest\"");
    assert_contains(near, "\"layout\":{\"pitch\":20,\"offset\":1}");
    /* One candidate only (16 doubles are whole sectors, and R = 4 starts one): auto answers
     * as auto does, a list of one job, and a gain of 1. */
    a = ask(socket, "{\"op\":\"tune\",\"nx\":16,\"ny\":17,\"nz\":11,\"radius\":4,"
                    "\"family\":\"naive\",\"subset\":1,\"pitch\":\"auto\"}");
    answer = json_loads(a, 0, &e);
    jobs = json_object_get(answer, "jobs");
    assert_int_equal(json_array_size(jobs), 1);
    wait_job(socket, (int)json_integer_value(json_array_get(jobs, 0)));
    json_decref(answer);
    const char *one = ask(socket, "{\"op\":\"query\",\"nx\":16,\"ny\":17,\"nz\":11,"
                                  "\"radius\":4,\"pitch\":\"auto\"}");
    assert_contains(one, "\"match\":\"exact\"");
    assert_contains(one, "\"gain\":1.0");
    /* Pitch auto for a shape never tuned: the dense layout's default, nothing to gain known. */
    const char *none = ask(socket, "{\"op\":\"query\",\"nx\":13,\"ny\":17,\"nz\":11,"
                                   "\"radius\":2,\"pitch\":\"auto\"}");
    assert_contains(none, "\"match\":\"default\"");
    assert_contains(none, "\"layout\":{\"pitch\":13,\"offset\":0,\"dense_gbps\":null,"
                          "\"gain\":null}");
}

/* The source an answer names is served by its hash, and is the text that hash names. */
static void test_source_serves_what_the_query_named(void **state)
{
    (void)state;
    json_t *answer = json_loads(ask(main_daemon.socket,
                                    "{\"op\":\"query\",\"nx\":13,\"ny\":17,\"nz\":11}"), 0, NULL);
    const char *hash = json_string_value(json_object_get(json_object_get(answer, "config"),
                                                         "source_hash"));
    assert_non_null(hash);
    char request[128];
    snprintf(request, sizeof request, "{\"op\":\"source\",\"hash\":\"%s\"}", hash);
    json_t *source = json_loads(ask(main_daemon.socket, request), 0, NULL);
    const char *text = json_string_value(json_object_get(source, "text"));
    assert_non_null(text);
    char got[33];
    fdt_source_hash(text, got);
    assert_string_equal(got, hash);
    assert_non_null(strstr(text, "common.h"));
    json_decref(source);
    json_decref(answer);
    assert_contains(ask(main_daemon.socket, "{\"op\":\"source\",\"hash\":\"0123\"}"),
                    "\"code\":\"not_found\"");
    assert_contains(ask(main_daemon.socket, "{\"op\":\"source\",\"hash\":7}"),
                    "\"code\":\"bad_request\"");
}

static void test_long_line_is_refused(void **state)
{
    (void)state;
    const size_t size = 10u << 20;
    char *line = malloc(size + 1);
    assert_non_null(line);
    memset(line, ' ', size);
    memcpy(line, "{\"op\":\"ping\",\"pad\":\"", 20);
    line[size - 2] = '"';
    line[size - 1] = '}';
    line[size] = '\n';
    const int fd = connect_or_die(main_daemon.socket);
    send_all(fd, line, size + 1);
    free(line);
    const char *a = read_line(fd);
    assert_contains(a, "line_too_long");
    close(fd);
    assert_true(alive(&main_daemon));
}

static void test_disconnect_mid_line(void **state)
{
    (void)state;
    for (int i = 0; i < 20; i++) {
        const int fd = connect_or_die(main_daemon.socket);
        send_all(fd, "{\"op\":\"tune\",\"nx\":1", 19);
        close(fd);
    }
    /* A client that sends half a line and waits is not answered and does not block others. */
    const int stuck = connect_or_die(main_daemon.socket);
    send_all(stuck, "{\"op\":\"ping\"", 12);
    assert_true(alive(&main_daemon));
    close(stuck);
    assert_contains(ask(main_daemon.socket, "{\"op\":\"status\"}"), "\"queued\":0");
}

#define CLIENTS 200

static void test_many_clients_at_once(void **state)
{
    (void)state;
    int fds[CLIENTS];
    for (int i = 0; i < CLIENTS; i++)
        fds[i] = connect_or_die(main_daemon.socket);
    for (int i = 0; i < CLIENTS; i++) {
        char req[128];
        snprintf(req, sizeof req, "{\"id\":%d,\"op\":\"query\",\"nx\":13,\"ny\":17,\"nz\":%d}\n", i,
                 11 + i % 5);
        send_all(fds[i], req, strlen(req));
    }
    for (int i = 0; i < CLIENTS; i++) {
        char id[32];
        snprintf(id, sizeof id, "\"id\":%d,", i);
        const char *a = read_line(fds[i]);
        assert_contains(a, id);
        assert_contains(a, "\"ok\":true");
        close(fds[i]);
    }
    assert_true(alive(&main_daemon));
}

static void test_stored_results_survive(void **state)
{
    (void)state;
    assert_contains(ask(main_daemon.socket, "{\"op\":\"query\",\"nx\":13,\"ny\":17,\"nz\":11}"),
                    "\"match\":\"exact\"");
    const char *csv = ask(main_daemon.socket, "{\"op\":\"export\",\"what\":\"results\","
                                              "\"format\":\"csv\"}");
    assert_contains(csv, "\"data\":\"format,fingerprint,device,backend");
}

static void test_socket_mode(void **state)
{
    (void)state;
    struct stat st;
    assert_int_equal(stat(main_daemon.socket, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0660);
}

/* Runs request as uid nobody with primary group gid; the child's exit code says what
 * happened: 0 the answer contained expect, 1 it did not, 2 connect was refused. */
static int ask_as_nobody(const char *socket_path, gid_t gid, const char *request,
                         const char *expect)
{
    const pid_t pid = fork();
    if (pid == 0) {
        if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(NOBODY) != 0)
            _exit(3);
        const int fd = try_connect(socket_path);
        if (fd < 0)
            _exit(errno == EACCES ? 2 : 4);
        _exit(strstr(ask_on(fd, request), expect) ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_other_uid_cannot_connect_to_0660(void **state)
{
    (void)state;
    assert_int_equal(ask_as_nobody(main_daemon.socket, NOBODY, "{\"op\":\"ping\"}", "pong"), 2);
}

static void test_rights_by_uid_and_group(void **state)
{
    (void)state;
    struct group *g = getgrnam("nogroup");
    assert_non_null(g);
    daemon_proc open_daemon = {0}; /* file_limit 0: no limit */
    char extra[128];
    snprintf(extra, sizeof extra, "[daemon]\nsocket_mode = 0666\nadmin_group = nogroup\n");
    start_daemon(&open_daemon, extra);
    struct stat st;
    assert_int_equal(stat(open_daemon.socket, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0666);
    const char *tune = "{\"op\":\"tune\",\"nx\":9,\"ny\":9,\"nz\":9,\"subset\":1}";
    const gid_t other = 1; /* "daemon" on Debian: a group that is not the admin group */
    assert_int_equal(ask_as_nobody(open_daemon.socket, other, "{\"op\":\"query\",\"nx\":9,"
                                   "\"ny\":9,\"nz\":9}", "\"ok\":true"), 0);
    assert_int_equal(ask_as_nobody(open_daemon.socket, other, tune, "\"code\":\"forbidden\""), 0);
    assert_int_equal(ask_as_nobody(open_daemon.socket, other, "{\"op\":\"shutdown\"}",
                                   "\"code\":\"forbidden\""), 0);
    assert_int_equal(ask_as_nobody(open_daemon.socket, other, "{\"op\":\"cancel\",\"job\":1}",
                                   "\"code\":\"forbidden\""), 0);
    assert_int_equal(ask_as_nobody(open_daemon.socket, other, "{\"op\":\"batch\",\"shapes\":"
                                   "[[9,9,9]]}", "\"code\":\"forbidden\""), 0);
    assert_int_equal(ask_as_nobody(open_daemon.socket, other, "{\"op\":\"query\",\"nx\":9,"
                                   "\"ny\":9,\"nz\":9,\"tune_if_missing\":true}",
                                   "\"code\":\"forbidden\""), 0);
    /* A member of the admin group may tune. */
    assert_int_equal(ask_as_nobody(open_daemon.socket, g->gr_gid, tune, "\"job\":"), 0);
    assert_true(alive(&open_daemon));
    const int status = stop_daemon(&open_daemon);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Past max_clients a connection gets one "busy" answer and is closed; those within keep
 * being served. */
static void test_too_many_clients(void **state)
{
    (void)state;
    daemon_proc small = {0}; /* file_limit 0: no limit */
    start_daemon(&small, "[daemon]\nmax_clients = 1\n");
    /* start_daemon's own probe may still count until the daemon sees it close. */
    int first = -1;
    for (int i = 0; i < 100 && first < 0; i++) {
        first = connect_or_die(small.socket);
        if (!strstr(ask_on(first, "{\"op\":\"ping\"}"), "\"pong\":true")) {
            close(first);
            first = -1;
            usleep(50 * 1000);
        }
    }
    assert_true(first >= 0);
    const int second = connect_or_die(small.socket);
    assert_contains(read_line(second), "\"code\":\"busy\"");
    assert_string_equal(read_line(second), ""); /* closed after the answer */
    close(second);
    assert_contains(ask_on(first, "{\"op\":\"ping\"}"), "\"pong\":true");
    close(first);
    const int status = stop_daemon(&small);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A batch request of n shapes, [8+i%100, 9+i/100, 10], none of them tuned yet. */
static char *batch_request(size_t n, const char *options)
{
    char *req = malloc(64 + 24 * n + strlen(options));
    size_t len = (size_t)sprintf(req, "{\"op\":\"batch\",%s\"shapes\":[", options);
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(req + len, "%s[%zu,%zu,10]", i ? "," : "", 8 + i % 100,
                               9 + i / 100);
    strcpy(req + len, "]}");
    return req;
}

static int queued_jobs(const char *socket_path)
{
    const char *a = ask(socket_path, "{\"op\":\"status\"}");
    const char *q = strstr(a, "\"queued\":");
    assert_non_null(q);
    return atoi(q + strlen("\"queued\":"));
}

/* A batch is one transaction: when the store cannot take it all (the daemon's files may
 * not grow past 1 MiB, where 10,000 jobs need about 3), none of it is queued and the answer
 * says so, with no job ids; the store then still takes a batch that fits, and answers its
 * ids. Before, the jobs written until the failure stayed queued, their ids never told. */
static void test_batch_is_all_or_nothing_on_a_full_disk(void **state)
{
    (void)state;
    daemon_proc full = {.file_limit = 1 << 20};
    start_daemon(&full, "");
    char *big = batch_request(10000, "\"family\":\"naive\",\"subset\":1,");
    const char *a = ask(full.socket, big);
    assert_contains(a, "\"ok\":false");
    assert_contains(a, "\"code\":\"internal\"");
    assert_not_contains(a, "\"jobs\"");
    free(big);
    assert_int_equal(queued_jobs(full.socket), 0);
    assert_contains(ask(full.socket, "{\"op\":\"jobs\"}"), "\"jobs\":[]");
    char *small = batch_request(3, "\"family\":\"naive\",\"subset\":1,");
    a = ask(full.socket, small);
    assert_contains(a, "\"ok\":true");
    assert_contains(a, "\"count\":3");
    free(small);
    const int status = stop_daemon(&full);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The CPU time, in ns, that the daemon's main thread, its loop, where every request is
 * handled, has run (the kernel's count: it does not grow while the thread waits). */
static long long loop_cpu_ns(const daemon_proc *d)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/schedstat", (long)d->pid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    long long ns = -1;
    const int fields = fscanf(f, "%lld", &ns);
    fclose(f);
    assert_int_equal(fields, 1);
    return ns;
}

/* The jobs the store holds, read by a connection of the test's own beside the daemon's. */
static int jobs_in_store(sqlite3 *db)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM jobs", -1, &st, NULL),
                     SQLITE_OK);
    if (sqlite3_step(st) != SQLITE_ROW)
        fail_msg("cannot count the store's jobs: %s", sqlite3_errmsg(db));
    const int n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* Reads the store every millisecond until the batch's answer is there (ten minutes at most):
 * it holds the jobs it held before or every job of the batch, never part of it. */
static void watch_batch_land(sqlite3 *db, int batcher, int before, int after)
{
    struct pollfd answer = {.fd = batcher, .events = POLLIN};
    for (int i = 0; i < 600 * 1000; i++) {
        const int n = jobs_in_store(db);
        if (n != before && n != after)
            fail_msg("a reader of the store saw %d jobs while a batch queued: neither the %d "
                     "before it nor the %d after: the batch is not one commit", n, before, after);
        if (poll(&answer, 1, 1) != 0)
            return;
    }
    fail_msg("a 10,000-shape batch was not answered in ten minutes");
}

/* 10,000 shapes queue in one commit with an indexed duplicate check, so that a query sent
 * right behind them waits milliseconds (it waited 8 s, and 21 s behind a second such batch,
 * when each job was its own commit and each shape's duplicate check scanned every queued
 * job; bench/query_bench.sh measures the latency). Judged by what is seen, never by a clock
 * that a loaded host would slow: a reader of the store beside the daemon never sees part of
 * a batch; the second round, every shape a duplicate of a queued job, answers the first
 * round's ids, queues nothing, and costs the daemon's loop less CPU than the first round,
 * which queued them (a lookup a shape, where a scan of the queued jobs cost 2.6 times the
 * first round); the query sent behind each batch is answered. */
static void test_queries_answered_behind_a_big_batch(void **state)
{
    (void)state;
    daemon_proc d = {0}; /* file_limit 0: no limit */
    start_daemon(&d, "");
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(d.db, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_busy_timeout(db, 60 * 1000);
    const int batcher = connect_or_die(d.socket), asker = connect_or_die(d.socket);
    char *big = batch_request(10000, "\"family\":\"naive\",\"subset\":1,");
    char *ids[2];
    long long cpu_ns[2];
    for (int round = 0; round < 2; round++) {
        const long long start = loop_cpu_ns(&d);
        send_all(batcher, big, strlen(big));
        send_all(batcher, "\n", 1);
        const char *query = "{\"op\":\"query\",\"nx\":64,\"ny\":64,\"nz\":64}\n";
        send_all(asker, query, strlen(query));
        watch_batch_land(db, batcher, round ? 10000 : 0, 10000);
        const char *batch = read_line(batcher);
        assert_contains(batch, "\"count\":10000");
        ids[round] = strdup(strstr(batch, "\"jobs\":"));
        assert_contains(read_line(asker), "\"ok\":true");
        cpu_ns[round] = loop_cpu_ns(&d) - start;
    }
    assert_string_equal(ids[1], ids[0]);
    assert_int_equal(jobs_in_store(db), 10000);
    if (cpu_ns[1] >= cpu_ns[0])
        fail_msg("10,000 duplicates cost the daemon %.3f s of CPU, more than queueing them "
                 "(%.3f s): does the duplicate check scan the queued jobs?", cpu_ns[1] / 1e9,
                 cpu_ns[0] / 1e9);
    free(ids[0]);
    free(ids[1]);
    free(big);
    sqlite3_close(db);
    close(batcher);
    close(asker);
    const int status = stop_daemon(&d);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static off_t file_size(const char *dir, const char *name)
{
    char path[256];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0 ? st.st_size : 0;
}

/* The largest file the running daemon may write, soft limit only (so that it can be raised
 * again from here without privileges): a disk that fills, then has room again. */
static void set_file_limit(const daemon_proc *d, rlim_t limit)
{
    const struct rlimit r = {limit, RLIM_INFINITY};
    assert_int_equal(prlimit(d->pid, RLIMIT_FSIZE, &r, NULL), 0);
}

/* Polls the daemon's status for "writable":WANT, for at most 30 s. */
static void wait_store_writable(const daemon_proc *d, const char *want)
{
    for (int i = 0; i < 300; i++) {
        if (strstr(ask(d->socket, "{\"op\":\"status\"}"), want))
            return;
        usleep(100 * 1000);
    }
    fail_msg("status never said %s", want);
}

/* The disk fills under a running job: the job pauses where the store last kept it, status
 * says why, new jobs are refused, and once there is room again the job resumes and ends
 * done, answered to `status`, with every variant measured. Before, it stayed "running" in
 * the store for good, tune --wait never returned, and its results were lost. */
static void test_a_full_disk_pauses_jobs_until_there_is_room(void **state)
{
    (void)state;
    daemon_proc d = {.file_limit = RLIM_INFINITY};
    start_daemon(&d, "");
    const off_t db = file_size(d.dir, "fdtuned.db"), wal = file_size(d.dir, "fdtuned.db-wal");
    set_file_limit(&d, (rlim_t)(db > wal ? db : wal) + 24 * 1024);
    assert_contains(ask(d.socket, "{\"op\":\"tune\",\"nx\":33,\"ny\":17,\"nz\":11,"
                                  "\"family\":\"naive\",\"subset\":40}"),
                    "\"job\":1");
    wait_store_writable(&d, "\"writable\":false");
    assert_contains(ask(d.socket, "{\"op\":\"status\"}"), "cannot store job 1's");
    assert_contains(ask(d.socket, "{\"op\":\"tune\",\"nx\":20,\"ny\":20,\"nz\":20}"),
                    "\"code\":\"store_unwritable\"");
    set_file_limit(&d, RLIM_INFINITY);
    wait_store_writable(&d, "\"writable\":true");
    wait_job(d.socket, 1);
    const char *a = ask(d.socket, "{\"op\":\"status\",\"job\":1}");
    assert_contains(a, "\"state\":\"done\"");
    assert_contains(a, "\"total\":40,\"done\":40");
    const int status = stop_daemon(&d);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* What follows shutdown on its connection, even in the same write, is refused: the daemon
 * is stopping, and a job queued then would be answered ok and never run. */
static void test_requests_after_shutdown_are_refused(void **state)
{
    (void)state;
    daemon_proc d = {0}; /* file_limit 0: no limit */
    start_daemon(&d, "");
    const int fd = connect_or_die(d.socket);
    const char *both = "{\"op\":\"shutdown\"}\n"
                       "{\"op\":\"tune\",\"nx\":13,\"ny\":17,\"nz\":11}\n";
    send_all(fd, both, strlen(both));
    assert_contains(read_line(fd), "\"ok\":true");
    assert_contains(read_line(fd), "\"code\":\"shutting_down\"");
    close(fd);
    int status = 0;
    waitpid(d.pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int log_contains(const daemon_proc *d, const char *words)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "grep -q '%s' %s", words, d->log);
    return system(cmd) == 0;
}

/* A daemon paused past the heartbeat timeout (SIGSTOP, a paused VM) does not take its own
 * pause for its workers' silence: after SIGCONT it reads what they sent meanwhile before it
 * judges them, so no healthy worker is killed and no variant is stored as a timeout. */
static void test_a_paused_daemon_keeps_its_workers(void **state)
{
    (void)state;
    daemon_proc d = {0}; /* file_limit 0: no limit */
    start_daemon(&d, "[worker]\nheartbeat_ms = 250\nheartbeat_timeout_ms = 2000\n");
    assert_contains(ask(d.socket, "{\"op\":\"tune\",\"nx\":13,\"ny\":17,\"nz\":11,"
                                  "\"family\":\"naive\",\"subset\":6}"), "\"job\":1");
    for (int i = 0; i < 100 && !strstr(ask(d.socket, "{\"op\":\"status\",\"job\":1}"),
                                        "\"state\":\"running\""); i++)
        usleep(20 * 1000);
    kill(d.pid, SIGSTOP);
    usleep(4000 * 1000);
    kill(d.pid, SIGCONT);
    wait_job(d.socket, 1);
    assert_contains(ask(d.socket, "{\"op\":\"status\",\"job\":1}"), "\"state\":\"done\"");
    const char *results = ask(d.socket, "{\"op\":\"export\",\"what\":\"results\"}");
    assert_not_contains(results, "timeout");
    assert_not_contains(results, "crashed");
    if (log_contains(&d, "sent nothing for") || log_contains(&d, "killing it"))
        fail_msg("a worker was killed; see %s", d.log);
    assert_true(log_contains(&d, "fired .* ms late"));
    const int status = stop_daemon(&d);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_second_daemon_refuses_live_socket(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s/fdtuned --socket %s --db %s/other.db --backend cpu 2>&1",
             build_dir(), main_daemon.socket, main_daemon.dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char out[1024] = "";
    const size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    const int status = pclose(p);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    assert_contains(out, "another fdtuned is serving");
    assert_true(alive(&main_daemon));
}

/* A line reader with a buffer, for connections that carry thousands of answers (read_line
 * reads a byte a call). */
typedef struct line_reader {
    int fd;
    size_t start, end;
    char buf[MAX_ANSWER];
} line_reader;

/* The next answer line, NUL-terminated in place; NULL when the connection closed first. */
static char *next_line(line_reader *r)
{
    for (;;) {
        char *nl = memchr(r->buf + r->start, '\n', r->end - r->start);
        if (nl) {
            char *line = r->buf + r->start;
            *nl = '\0';
            r->start = (size_t)(nl + 1 - r->buf);
            return line;
        }
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
        if (r->end == sizeof r->buf)
            return NULL;
        const ssize_t n = recv(r->fd, r->buf + r->end, sizeof r->buf - r->end, 0);
        if (n <= 0)
            return NULL;
        r->end += (size_t)n;
    }
}

/* Each flood connection sends FLOOD_BEFORE requests for a kernel's source (answers of about
 * 8.6 KB), then a tune (the mark: the job it queues shows whether the daemon has reached
 * it), then FLOOD_AFTER more, in one stream; 8,000 answers pass the 64 MiB the daemon once
 * queued for a client before it dropped it. */
#define FLOOD_CONNECTIONS 2
#define FLOOD_BEFORE 1000
#define FLOOD_AFTER 7000
#define FLOOD_MARK "{\"op\":\"tune\",\"nx\":23,\"ny\":19,\"nz\":11,\"family\":\"naive\",\"subset\":1}\n"

static char *flood_text(const char *socket_path)
{
    json_t *answer = json_loads(ask(socket_path, "{\"op\":\"query\",\"nx\":13,\"ny\":17,"
                                                 "\"nz\":11}"), 0, NULL);
    const char *hash = json_string_value(json_object_get(json_object_get(answer, "config"),
                                                         "source_hash"));
    assert_non_null(hash);
    char one[96];
    const int len = snprintf(one, sizeof one, "{\"op\":\"source\",\"hash\":\"%s\"}\n", hash);
    json_decref(answer);
    char *text = malloc((size_t)len * (FLOOD_BEFORE + FLOOD_AFTER) + sizeof FLOOD_MARK);
    assert_non_null(text);
    char *at = text;
    for (int i = 0; i < FLOOD_BEFORE + FLOOD_AFTER; i++) {
        if (i == FLOOD_BEFORE)
            at = stpcpy(at, FLOOD_MARK);
        at = stpcpy(at, one);
    }
    return text;
}

/* The flood is written by a child: a daemon that reads a client's requests only as fast as
 * the client reads its answers blocks a writer that does not read. */
static pid_t send_in_child(int fd, const char *text)
{
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        send_all(fd, text, strlen(text));
        _exit(0);
    }
    return pid;
}

/* Every answer of a flood connection after the first, in order: the sources, the mark's job
 * among them. */
static void read_flood_answers(int fd, int connection)
{
    line_reader *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->fd = fd;
    for (int i = 1; i < FLOOD_BEFORE + FLOOD_AFTER + 1; i++) {
        const char *a = next_line(r);
        if (!a)
            fail_msg("flood connection %d: closed after %d of %d answers", connection, i,
                     FLOOD_BEFORE + FLOOD_AFTER + 1);
        const char *want = i == FLOOD_BEFORE ? "\"job\":" : "\"text\":";
        if (!strstr(a, "\"ok\":true") || !strstr(a, want))
            fail_msg("flood connection %d, answer %d: %.200s", connection, i, a);
    }
    free(r);
}

/* Pipelined requests wait their turn: a client that writes thousands of requests at once is
 * answered one request a loop turn, and read from only as fast as it reads its answers, so
 * that another client is answered while the flood's requests are still unread (judged by
 * order: the mark, 1,000 requests in, has queued no job yet), and a flood client that reads
 * late gets every answer, none dropped. Before, every request of a read was answered inside
 * the read's callback (the others waited), and a client with 64 MiB of answers unread was
 * dropped. */
static void test_a_flood_of_requests_waits_its_turn(void **state)
{
    (void)state;
    daemon_proc d = {0}; /* file_limit 0: no limit */
    start_daemon(&d, "");
    char *flood = flood_text(d.socket);
    int fds[FLOOD_CONNECTIONS];
    pid_t writers[FLOOD_CONNECTIONS];
    for (int i = 0; i < FLOOD_CONNECTIONS; i++) {
        fds[i] = connect_or_die(d.socket);
        writers[i] = send_in_child(fds[i], flood);
    }
    free(flood);
    /* The daemon has read from every flood connection once its first answer is here. */
    for (int i = 0; i < FLOOD_CONNECTIONS; i++)
        assert_contains(read_line(fds[i]), "\"text\":");
    const int asker = connect_or_die(d.socket);
    assert_contains(ask_on(asker, "{\"op\":\"ping\"}"), "\"pong\":true");
    assert_contains(ask_on(asker, "{\"op\":\"jobs\"}"), "\"jobs\":[]");
    close(asker);
    for (int i = 0; i < FLOOD_CONNECTIONS; i++) {
        read_flood_answers(fds[i], i);
        close(fds[i]);
        int status = 0;
        waitpid(writers[i], &status, 0);
    }
    const int status = stop_daemon(&d);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A second fdtuned on the store through another name for the same file, a symbolic link
 * or a hard link in another directory, exits 1 naming the running daemon's pid: the lock
 * is the file's, not its path's. Before, each name had a lock file of its own, and two
 * daemons ran jobs against one store. */
static void test_second_daemon_refused_through_a_link(void **state)
{
    (void)state;
    char other[64];
    snprintf(other, sizeof other, "/tmp/fdt-link-XXXXXX");
    assert_non_null(mkdtemp(other));
    char symbolic[128], hard[128];
    snprintf(symbolic, sizeof symbolic, "%s/symbolic.db", other);
    snprintf(hard, sizeof hard, "%s/hard.db", other);
    assert_int_equal(symlink(main_daemon.db, symbolic), 0);
    assert_int_equal(link(main_daemon.db, hard), 0);
    const char *names[] = {symbolic, hard};
    char want[64];
    snprintf(want, sizeof want, "pid %ld holds", (long)main_daemon.pid);
    for (size_t i = 0; i < 2; i++) {
        char cmd[768];
        snprintf(cmd, sizeof cmd, "timeout 60 %s/fdtuned --socket %s/second.sock --db %s "
                 "--backend cpu 2>&1", build_dir(), other, names[i]);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        char out[4096] = "";
        const size_t n = fread(out, 1, sizeof out - 1, p);
        out[n] = '\0';
        const int status = pclose(p);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 || !strstr(out, want))
            fail_msg("fdtuned on %s: exit %d, expected 1 and '%s' in: %s", names[i],
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1, want, out);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", other);
    assert_int_equal(system(cmd), 0);
    assert_true(alive(&main_daemon));
}

/* The rights tests connect as other uids, which takes root: run as another user, the test
 * runs itself again as root of a user namespace holding 65536 uids (unshare, the uidmap
 * package and /etc/subuid), and fails, never skips, where it cannot. */
static void become_root(char **argv)
{
    if (getuid() == 0)
        return;
    if (getenv("FDT_TEST_IN_NAMESPACE")) {
        fprintf(stderr, "test_protocol: still not root inside the user namespace\n");
        exit(1);
    }
    setenv("FDT_TEST_IN_NAMESPACE", "1", 1);
    char *args[] = {"unshare", "--map-auto", "--map-root-user", "--", argv[0], NULL};
    execvp("unshare", args);
    fprintf(stderr, "test_protocol: the rights tests need root, or unshare --map-auto "
            "--map-root-user (uidmap, /etc/subuid) to be root of a user namespace: %s\n",
            strerror(errno));
    exit(1);
}

int main(int argc, char **argv)
{
    (void)argc;
    become_root(argv);
    atexit(kill_daemons_left_running);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_requests),
        cmocka_unit_test(test_ids_are_echoed_in_order),
        cmocka_unit_test(test_query_answers),
        cmocka_unit_test(test_layouts_are_tuned_and_answered),
        cmocka_unit_test(test_source_serves_what_the_query_named),
        cmocka_unit_test(test_long_line_is_refused),
        cmocka_unit_test(test_disconnect_mid_line),
        cmocka_unit_test(test_many_clients_at_once),
        cmocka_unit_test(test_socket_mode),
        cmocka_unit_test(test_other_uid_cannot_connect_to_0660),
        cmocka_unit_test(test_rights_by_uid_and_group),
        cmocka_unit_test(test_too_many_clients),
        cmocka_unit_test(test_requests_after_shutdown_are_refused),
        cmocka_unit_test(test_batch_is_all_or_nothing_on_a_full_disk),
        cmocka_unit_test(test_queries_answered_behind_a_big_batch),
        cmocka_unit_test(test_a_full_disk_pauses_jobs_until_there_is_room),
        cmocka_unit_test(test_a_paused_daemon_keeps_its_workers),
        cmocka_unit_test(test_second_daemon_refuses_live_socket),
        cmocka_unit_test(test_second_daemon_refused_through_a_link),
        cmocka_unit_test(test_a_flood_of_requests_waits_its_turn),
        cmocka_unit_test(test_stored_results_survive),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
