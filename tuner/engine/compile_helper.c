/* compile_helper.c - compile helper processes: the parent's slots and the helper's loop;
 * see compile_helper.h. One JSON object a line each way on a socket pair (not pipes: a
 * write to a helper that died must fail, not raise SIGPIPE in the worker):
 *   request  {"arch":"sm_90","source":S,"entry":E,"defines":["FDT_BX=32",..]}
 *   answer   {"status":0,"bytes":N} and the code object's N bytes as a msgpack bin
 *            (common/frame.h), or {"status":N,"message":"..."}
 * where S is the variant's whole source (engine/variant.h: fdt_variant_source, a spec's
 * macros included) and E the entry point of the problem's stencil (engine/stencil.h).
 * status is an fdt_status, which both sides read alike: they are the same program. */
#include "engine/compile_helper.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "frame.h"
#include "engine/wire.h"

extern char **environ;

typedef struct helper {
    pid_t pid;       /* 0: not running; else also its process group's id */
    int fd;          /* the parent's end of the socket pair */
    int in_process;  /* could not be started: this slot compiles in the caller's process */
} helper;

struct fdt_compile_helpers {
    const fdt_backend_ops *ops;
    char *exe, *backend;
    int deadline_ms; /* a compile's longest wait for its answer */
    int slots;
    helper h[];
};

int fdt_compile_mode_parse(const char *text, fdt_compile_mode *mode)
{
    static const char *const names[] = {"auto", "processes", "threads"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(text, names[i]) == 0) {
            if (mode)
                *mode = (fdt_compile_mode)i;
            return 1;
        }
    }
    return 0;
}

int fdt_compile_in_processes(fdt_compile_mode mode, const fdt_backend_ops *ops)
{
    return mode == FDT_COMPILE_PROCESSES ||
           (mode == FDT_COMPILE_AUTO && ops->compiles_one_at_a_time);
}

fdt_compile_helpers *fdt_compile_helpers_new(const char *exe, const char *backend, int slots)
{
    const fdt_backend_ops *ops = fdt_backend_find(backend);
    fdt_compile_helpers *set = ops && slots > 0 ? calloc(1, sizeof *set + (size_t)slots *
                                                                             sizeof(helper))
                                                : NULL;
    if (!set)
        return NULL;
    set->ops = ops;
    set->deadline_ms = FDT_COMPILE_DEADLINE_MS;
    set->slots = slots;
    set->exe = strdup(exe);
    set->backend = strdup(backend);
    if (!set->exe || !set->backend) {
        fdt_compile_helpers_free(set);
        return NULL;
    }
    return set;
}

void fdt_compile_helpers_set_deadline(fdt_compile_helpers *set, int ms)
{
    set->deadline_ms = ms;
}

/* The helper leads a process group of its own, which the compilers it starts join: a
 * compile past its deadline is ended by killing the group, the compiler with its helper. */
static int spawn_in_group(pid_t *pid, const char *exe, const posix_spawn_file_actions_t *fa,
                          char *const argv[])
{
    posix_spawnattr_t attr;
    int rc = posix_spawnattr_init(&attr);
    if (rc != 0)
        return rc;
    if ((rc = posix_spawnattr_setpgroup(&attr, 0)) == 0 &&
        (rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP)) == 0)
        rc = posix_spawn(pid, exe, fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    return rc;
}

/* Starts the slot's helper; 0, or -1 with errno's reason in why. */
static int start(const fdt_compile_helpers *set, helper *h, char *why, size_t len)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(why, len, "socketpair: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    char *argv[] = {set->exe, FDT_COMPILE_HELPER_ARG, set->backend, NULL};
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc == 0) {
        /* dup2 clears close-on-exec on the copies: the helper keeps its end as stdin and
         * stdout, and no helper inherits another's. */
        if ((rc = posix_spawn_file_actions_adddup2(&fa, sv[1], STDIN_FILENO)) == 0 &&
            (rc = posix_spawn_file_actions_adddup2(&fa, sv[1], STDOUT_FILENO)) == 0)
            rc = spawn_in_group(&h->pid, set->exe, &fa, argv);
        posix_spawn_file_actions_destroy(&fa);
    }
    close(sv[1]);
    if (rc != 0) {
        snprintf(why, len, "%s %s: %s", set->exe, FDT_COMPILE_HELPER_ARG, strerror(rc));
        close(sv[0]);
        h->pid = 0;
        return -1;
    }
    h->fd = sv[0];
    return 0;
}

static int send_all(int fd, const char *text, size_t len)
{
    while (len > 0) {
        const ssize_t n = send(fd, text, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        text += n;
        len -= (size_t)n;
    }
    return 0;
}

static json_t *request_json(const char *arch, const char *source, const char *entry,
                            const char *const *defines, size_t ndefines)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < ndefines; i++)
        json_array_append_new(list, json_string(defines[i]));
    return json_pack("{s:s, s:s, s:s, s:o*}", "arch", arch, "source", source, "entry", entry,
                     "defines", list);
}

/* How a request ended: answered (the answer may still be nonsense), the helper gone, no
 * answer by the deadline, or an answer refused: one that is not what the channel carries
 * (a line too long, a frame that is not what its line said, bytes after it), after which
 * the channel cannot be read on. */
typedef enum { ASK_ANSWERED, ASK_GONE, ASK_OVERDUE, ASK_REFUSED } ask_end;

/* The room an answer is read in: its whole line (a status and a compiler's message, cut
 * to an fdt_error's and escaped, fits many times over), then a frame's bytes a piece at a
 * time. */
#define ANSWER_ROOM (64u << 10)

/* Milliseconds left until due (uv_hrtime's clock, which is monotonic), rounded up; 0 once
 * it has passed. */
static int ms_until(uint64_t due)
{
    const uint64_t now = uv_hrtime();
    return now >= due ? 0 : (int)((due - now + 999999) / 1000000);
}

/* Reads what the helper sends next, at most cap bytes, by due: ASK_ANSWERED with *n bytes
 * in buf, or how the wait ended. */
static ask_end read_some(int fd, uint64_t due, char *buf, size_t cap, size_t *n)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        const int ready = poll(&p, 1, ms_until(due));
        if (ready == 0)
            return ASK_OVERDUE;
        const ssize_t got = ready > 0 ? read(fd, buf, cap) : -1;
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return ASK_GONE;
        *n = (size_t)got;
        return ASK_ANSWERED;
    }
}

static ask_end refused(char *why, size_t len, const char *what)
{
    snprintf(why, len, "%s", what);
    return ASK_REFUSED;
}

/* Reads the code frame the answer's line announced with "bytes" (common/frame.h) into
 * code, from the n bytes at rest that came with the line and then from fd, reading into
 * room (ANSWER_ROOM bytes). An answer that announces none is whole with its line. */
static ask_end read_frame(int fd, uint64_t due, const json_t *answer, const char *rest,
                          size_t n, char *room, fdt_code *code, char *why, size_t len)
{
    const json_t *bytes = json_object_get(answer, "bytes");
    if (!bytes)
        return n ? refused(why, len, "bytes after an answer that announces no code frame")
                 : ASK_ANSWERED;
    if (!json_is_integer(bytes) || json_integer_value(bytes) < 0)
        return refused(why, len, "'bytes' must be the size of the code frame that follows");
    fdt_frame f;
    if (fdt_frame_begin(&f, (size_t)json_integer_value(bytes), why, len) != 0)
        return ASK_REFUSED;
    ask_end end = ASK_ANSWERED;
    fdt_frame_state st;
    size_t used;
    while ((st = fdt_frame_feed(&f, rest, n, &used, why, len)) == FDT_FRAME_MORE &&
           (end = read_some(fd, due, room, ANSWER_ROOM, &n)) == ASK_ANSWERED)
        rest = room;
    if (end == ASK_GONE)
        snprintf(why, len, "partway through its code frame (%zu of its bytes read, for a "
                 "code object of %zu)", f.have, f.size);
    else if (st == FDT_FRAME_BAD)
        end = ASK_REFUSED;
    else if (st == FDT_FRAME_DONE && used < n)
        end = refused(why, len, "bytes after its code frame");
    else if (st == FDT_FRAME_DONE)
        code->data = fdt_frame_take(&f, &code->size);
    fdt_frame_free(&f);
    return end;
}

/* Reads the answer by due: its line into *answer (NULL: not JSON), then the code frame
 * the line announces into code. The helper writes one answer a request, so nothing
 * follows it. Out of memory reads as the helper gone, as an answer that cannot be read. */
static ask_end read_answer(int fd, uint64_t due, json_t **answer, fdt_code *code, char *why,
                           size_t len)
{
    char *room = malloc(ANSWER_ROOM);
    const char *nl = NULL;
    size_t have = 0, n;
    ask_end end = room ? ASK_ANSWERED : ASK_GONE;
    while (end == ASK_ANSWERED && !nl) {
        if (have == ANSWER_ROOM)
            end = refused(why, len, "an answer line longer than any answer may be");
        else if ((end = read_some(fd, due, room + have, ANSWER_ROOM - have, &n)) ==
                 ASK_ANSWERED) {
            nl = memchr(room + have, '\n', n);
            have += n;
        }
    }
    if (end == ASK_ANSWERED) {
        *answer = json_loadb(room, (size_t)(nl - room), 0, NULL);
        /* The frame takes what came after the line before the room is read into again. */
        end = read_frame(fd, due, *answer, nl + 1, have - (size_t)(nl + 1 - room), room, code,
                         why, len);
    }
    free(room);
    return end;
}

/* Sends the request and reads the answer into *answer (NULL: nonsense) and code within
 * deadline_ms; why says what was refused, or where the helper went. */
static ask_end ask(helper *h, json_t *request, int deadline_ms, json_t **answer,
                   fdt_code *code, char *why, size_t len)
{
    const uint64_t due = uv_hrtime() + (uint64_t)deadline_ms * 1000000u;
    char *text = json_dumps(request, JSON_COMPACT);
    json_decref(request);
    *answer = NULL;
    why[0] = '\0';
    if (!text)
        return ASK_GONE;
    const size_t n = strlen(text);
    text[n] = '\n'; /* over the NUL: send_all takes the length */
    const int sent = send_all(h->fd, text, n + 1);
    free(text);
    return sent == 0 ? read_answer(h->fd, due, answer, code, why, len) : ASK_GONE;
}

/* Ends the helper and every compiler it started (its process group: one stopped with
 * SIGSTOP ends too), then reaps it; *status: how it ended. */
static void end_helper(helper *h, int *status)
{
    kill(-h->pid, SIGKILL);
    close(h->fd);
    while (waitpid(h->pid, status, 0) < 0 && errno == EINTR)
        continue;
    h->pid = 0;
}

/* The helper died or spoke nonsense during a compile: it is ended, so that the next
 * compile starts another; how it ended goes to why, after where (when the reader said). */
static void helper_lost(helper *h, char *why, size_t len)
{
    int status = 0;
    char where[200];
    snprintf(where, sizeof where, "%s%s", why[0] ? ", " : "", why);
    end_helper(h, &status); /* one that spoke nonsense may still be running */
    if (WIFSIGNALED(status))
        snprintf(why, len, "signal %d%s", WTERMSIG(status), where);
    else
        snprintf(why, len, "exit status %d%s", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                 where);
}

/* The answer's failure, or its code's (read from its frame, into out) absence. */
static fdt_status take_answer(const json_t *answer, fdt_code *out, fdt_error *err)
{
    const json_t *status = json_object_get(answer, "status");
    if (!json_is_integer(status)) {
        fdt_code_free(out);
        return fdt_fail(err, FDT_ERROR, "a compile helper answered without a status");
    }
    if (json_integer_value(status) != FDT_OK) {
        const char *msg = json_string_value(json_object_get(answer, "message"));
        fdt_code_free(out); /* a frame a failure announced */
        return fdt_fail(err, (fdt_status)json_integer_value(status), "%s", msg ? msg : "");
    }
    if (!out->data)
        return fdt_fail(err, FDT_ERROR, "a compile helper answered with no code frame");
    return FDT_OK;
}

/* Starts the slot's helper if it is not running; 0, or -1 once the slot compiles in this
 * process instead. */
static int ensure_started(const fdt_compile_helpers *set, helper *h)
{
    char why[256];
    if (!h->pid && !h->in_process && start(set, h, why, sizeof why) != 0) {
        h->in_process = 1;
        fprintf(stderr, "fdtune: cannot start a compile helper (%s); compiling in this process, "
                "one compile at a time where the compiler is a library\n", why);
    }
    return h->in_process ? -1 : 0;
}

/* The compile ran past the deadline: its compiler is stopped or hung (SIGSTOP, an include
 * on a hung NFS mount), and waiting longer would hold the job for good. The helper is ended
 * with the compiler, the next compile starts another, and the variant is a timeout: not
 * tried again, which would cost the deadline twice. */
static fdt_status overdue(const fdt_compile_helpers *set, helper *h, const char *name,
                          const char *const *defines, size_t ndefines, fdt_error *err)
{
    char named[512] = "";
    for (size_t i = 0, at = 0; i < ndefines && at < sizeof named; i++)
        at += (size_t)snprintf(named + at, sizeof named - at, " %s", defines[i]);
    const pid_t pid = h->pid;
    int status;
    end_helper(h, &status);
    fprintf(stderr, "fdtune: a compile of %s (%s) ran past the compile deadline of %d ms: "
            "its helper process %d was killed with the compiler, and the next compile starts "
            "another\n", name, named + 1, set->deadline_ms, (int)pid);
    return fdt_fail(err, FDT_TIMEOUT, "the compile ran past the compile deadline of %d ms "
                    "(the compiler stopped or hung); it was killed", set->deadline_ms);
}

/* An answer that is not what the channel carries comes from a helper that is wrong, not
 * one killed from outside: it is ended (its channel cannot be read on), and the compile
 * fails without a second try, which would fail alike. */
static fdt_status refuse_answer(helper *h, json_t *answer, fdt_code *out, const char *why,
                                fdt_error *err)
{
    int status;
    end_helper(h, &status);
    json_decref(answer);
    fdt_code_free(out);
    return fdt_fail(err, FDT_ERROR, "a compile helper's answer was refused: %s", why);
}

/* A helper that dies during a compile may have been killed from outside (the OOM killer, a
 * user): the compile is tried once more in a new one before it counts as the compiler's
 * crash, which would be stored against the variant for good. */
#define HELPER_TRIES 2

fdt_status fdt_compile_helpers_compile(fdt_compile_helpers *set, int slot, const char *arch,
                                       const char *name, const char *source, const char *entry,
                                       const char *const *defines, size_t ndefines,
                                       fdt_code *out, fdt_error *err)
{
    helper *h = &set->h[slot];
    char why[256] = "";
    for (int t = 0; t < HELPER_TRIES; t++) {
        if (ensure_started(set, h) != 0)
            return set->ops->compile(arch, source, entry, defines, ndefines, out, err);
        json_t *answer;
        const ask_end end = ask(h, request_json(arch, source, entry, defines, ndefines),
                                set->deadline_ms, &answer, out, why, sizeof why);
        if (end == ASK_REFUSED)
            return refuse_answer(h, answer, out, why, err);
        if (end == ASK_ANSWERED && answer) {
            const fdt_status st = take_answer(answer, out, err);
            json_decref(answer);
            return st;
        }
        json_decref(answer); /* a line whose frame never came whole */
        if (end == ASK_OVERDUE)
            return overdue(set, h, name, defines, ndefines, err);
        helper_lost(h, why, sizeof why);
    }
    return fdt_fail(err, FDT_COMPILE_ERROR, "the compiler's helper process ended during the "
                    "compile, %d times in a row (the last: %s)", HELPER_TRIES, why);
}

void fdt_compile_helpers_free(fdt_compile_helpers *set)
{
    if (!set)
        return;
    for (int i = 0; i < set->slots; i++) {
        int status;
        if (set->h[i].pid)
            end_helper(&set->h[i], &status);
    }
    free(set->exe);
    free(set->backend);
    free(set);
}

/* ---- the helper's side ---- */

/* One request's answer, and the code it announces in code; NULL when out of memory. */
static json_t *serve(const fdt_backend_ops *ops, const char *line, fdt_code *code)
{
    json_t *req = json_loads(line, 0, NULL);
    const json_t *list = json_object_get(req, "defines");
    const char *arch = json_string_value(json_object_get(req, "arch"));
    const char *entry = json_string_value(json_object_get(req, "entry"));
    const char *source = json_string_value(json_object_get(req, "source"));
    const size_t n = json_array_size(list);
    const char **defines = calloc(n ? n : 1, sizeof *defines);
    fdt_error err = {0};
    fdt_status st = FDT_ERROR;
    int readable = arch && entry && source && json_is_array(list) && defines;
    for (size_t i = 0; readable && i < n; i++)
        readable = (defines[i] = json_string_value(json_array_get(list, i))) != NULL;
    if (readable)
        st = ops->compile(arch, source, entry, defines, n, code, &err);
    else
        fdt_fail(&err, FDT_ERROR, "a compile request the helper cannot read");
    if (st == FDT_OK && code->size > FDT_FRAME_MAX) {
        st = fdt_fail(&err, FDT_ERROR, "the code object of %zu bytes is over the %zu a frame "
                      "carries", code->size, FDT_FRAME_MAX);
        fdt_code_free(code);
    }
    json_t *answer = st == FDT_OK ? json_pack("{s:i, s:I}", "status", FDT_OK, "bytes",
                                              (json_int_t)code->size)
                                  : json_pack("{s:i, s:o*}", "status", st, "message",
                                              fdt_wire_text(err.msg));
    free(defines);
    json_decref(req);
    return answer;
}

static pid_t parent;

/* Ends the helper once its parent is gone, whatever killed it and whatever the helper is
 * doing: a compile is worth nothing to anyone else. Not PR_SET_PDEATHSIG, which fires when
 * the thread that started the helper ends, and pool threads end after every call. */
static void watch_parent(void *arg)
{
    (void)arg;
    for (;;) {
        if (getppid() != parent) {
            /* The compiler it started is in its process group, which it leads: both go. */
            if (getpgrp() == getpid())
                kill(0, SIGKILL);
            _exit(1);
        }
        sleep(1);
    }
}

/* The channel, moved off stdin and stdout: whatever the compiler library or a compiler it
 * starts prints lands on stderr (the worker's log), never inside an answer, and nothing it
 * starts reads a request. NULL where a descriptor could not be had. */
static FILE *take_channel(FILE **in)
{
    const int fd_in = dup(STDIN_FILENO), fd_out = dup(STDOUT_FILENO);
    const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd_in < 0 || fd_out < 0 || null < 0 || dup2(null, STDIN_FILENO) < 0 ||
        dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
        return NULL;
    close(null);
    fcntl(fd_in, F_SETFD, FD_CLOEXEC);
    fcntl(fd_out, F_SETFD, FD_CLOEXEC);
    *in = fdopen(fd_in, "r");
    return *in ? fdopen(fd_out, "w") : NULL;
}

int fdt_compile_helper_main(const char *backend)
{
    uv_thread_t watcher;
    parent = getppid();
    if (parent == 1 || uv_thread_create(&watcher, watch_parent, NULL) != 0)
        return 1;
    /* Nothing but stdin, stdout and stderr: a worker's protocol fds held open here would
     * keep its daemon from seeing it end. */
    (void)close_range(3, ~0u, 0);
    const fdt_backend_ops *ops = backend ? fdt_backend_find(backend) : NULL;
    if (!ops) {
        fprintf(stderr, "fdtune: %s needs a backend's name\n", FDT_COMPILE_HELPER_ARG);
        return 2;
    }
    FILE *in = NULL, *out = take_channel(&in);
    if (!out) {
        fprintf(stderr, "fdtune: a compile helper cannot move its channel: %s\n",
                strerror(errno));
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    int code = 0;
    while (code == 0 && getline(&line, &cap, in) > 0) {
        fdt_code compiled = {0};
        json_t *answer = serve(ops, line, &compiled);
        if (!answer || json_dumpf(answer, out, JSON_COMPACT) != 0 || fputc('\n', out) == EOF ||
            (json_object_get(answer, "bytes") &&
             fdt_frame_write(out, compiled.data, compiled.size) != 0) ||
            fflush(out) != 0)
            code = 1;
        json_decref(answer);
        fdt_code_free(&compiled);
    }
    free(line);
    return code;
}
