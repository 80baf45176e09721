/* compile_helper.c - compile helper processes: the parent's slots and the helper's loop;
 * see compile_helper.h. One JSON object a line each way on a socket pair (not pipes: a
 * write to a helper that died must fail, not raise SIGPIPE in the worker):
 *   request  {"arch":"sm_90","family":"zvec","entry":"fdt_laplacian","defines":["FDT_BX=32",..]}
 *   answer   {"status":0,"code":"<base64>"}, or {"status":N,"message":"..."}
 * status is an fdt_status, which both sides read alike: they are the same program. */
#include "engine/compile_helper.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "engine/base64.h"
#include "engine/wire.h"

extern char **environ;

typedef struct helper {
    pid_t pid;       /* 0: not running */
    int fd;          /* the parent's end of the socket pair */
    FILE *from;      /* answers, read from fd */
    int in_process;  /* could not be started: this slot compiles in the caller's process */
} helper;

struct fdt_compile_helpers {
    const fdt_backend_ops *ops;
    char *exe, *backend;
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
    set->slots = slots;
    set->exe = strdup(exe);
    set->backend = strdup(backend);
    if (!set->exe || !set->backend) {
        fdt_compile_helpers_free(set);
        return NULL;
    }
    return set;
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
            rc = posix_spawn(&h->pid, set->exe, &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
    }
    close(sv[1]);
    if (rc == 0 && !(h->from = fdopen(dup(sv[0]), "r")))
        rc = errno;
    if (rc != 0) {
        snprintf(why, len, "%s %s: %s", set->exe, FDT_COMPILE_HELPER_ARG, strerror(rc));
        if (h->pid > 0) {
            kill(h->pid, SIGKILL);
            waitpid(h->pid, NULL, 0);
        }
        close(sv[0]);
        h->pid = 0;
        return -1;
    }
    h->fd = sv[0];
    return 0;
}

/* Closes the helper's socket and waits for it; *status: how it ended. */
static void stop(helper *h, int *status)
{
    if (h->from)
        fclose(h->from);
    close(h->fd);
    while (waitpid(h->pid, status, 0) < 0 && errno == EINTR)
        continue;
    h->pid = 0;
    h->from = NULL;
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

static json_t *request_json(const char *arch, const fdt_family *family, const char *entry,
                            const char *const *defines, size_t ndefines)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < ndefines; i++)
        json_array_append_new(list, json_string(defines[i]));
    return json_pack("{s:s, s:s, s:s, s:o*}", "arch", arch, "family", fdt_family_name(family),
                     "entry", entry, "defines", list);
}

/* Sends the request and reads the answer line; NULL when the helper is gone. */
static json_t *ask(helper *h, json_t *request)
{
    char *text = json_dumps(request, JSON_COMPACT);
    json_decref(request);
    if (!text)
        return NULL;
    const size_t len = strlen(text);
    text[len] = '\n'; /* over the NUL: send_all takes the length */
    const int sent = send_all(h->fd, text, len + 1);
    free(text);
    char *line = NULL;
    size_t cap = 0;
    json_t *answer = sent == 0 && getline(&line, &cap, h->from) > 0
                         ? json_loads(line, 0, NULL) : NULL;
    free(line);
    return answer;
}

/* The helper died or spoke nonsense during a compile: it is stopped, so that the next
 * compile starts another; how it ended goes to why. */
static void helper_lost(helper *h, char *why, size_t len)
{
    int status = 0;
    kill(h->pid, SIGKILL); /* one that spoke nonsense may still be running */
    stop(h, &status);
    if (WIFSIGNALED(status))
        snprintf(why, len, "signal %d", WTERMSIG(status));
    else
        snprintf(why, len, "exit status %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* The code or the failure an answer carries. */
static fdt_status take_answer(const json_t *answer, fdt_code *out, fdt_error *err)
{
    const json_t *status = json_object_get(answer, "status");
    const char *code = json_string_value(json_object_get(answer, "code"));
    if (!json_is_integer(status))
        return fdt_fail(err, FDT_ERROR, "a compile helper answered without a status");
    if (json_integer_value(status) != FDT_OK) {
        const char *msg = json_string_value(json_object_get(answer, "message"));
        return fdt_fail(err, (fdt_status)json_integer_value(status), "%s", msg ? msg : "");
    }
    const int rc = code ? fdt_base64_decode(code, strlen(code), &out->data, &out->size) : -1;
    if (rc != 0)
        return fdt_fail(err, FDT_ERROR, "a compile helper answered %s",
                        rc == -2 ? "more code than memory holds" : "with no valid code");
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

/* A helper that dies during a compile may have been killed from outside (the OOM killer, a
 * user): the compile is tried once more in a new one before it counts as the compiler's
 * crash, which would be stored against the variant for good. */
#define HELPER_TRIES 2

fdt_status fdt_compile_helpers_compile(fdt_compile_helpers *set, int slot, const char *arch,
                                       const fdt_family *family, const char *entry,
                                       const char *const *defines, size_t ndefines,
                                       fdt_code *out, fdt_error *err)
{
    helper *h = &set->h[slot];
    char why[64] = "";
    for (int t = 0; t < HELPER_TRIES; t++) {
        if (ensure_started(set, h) != 0)
            return set->ops->compile(arch, fdt_family_source(family), entry, defines,
                                     ndefines, out, err);
        json_t *answer = ask(h, request_json(arch, family, entry, defines, ndefines));
        if (answer) {
            const fdt_status st = take_answer(answer, out, err);
            json_decref(answer);
            return st;
        }
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
            stop(&set->h[i], &status);
    }
    free(set->exe);
    free(set->backend);
    free(set);
}

/* ---- the helper's side ---- */

/* One request's answer; NULL when out of memory. */
static json_t *serve(const fdt_backend_ops *ops, const char *line)
{
    json_t *req = json_loads(line, 0, NULL);
    const json_t *list = json_object_get(req, "defines");
    const char *arch = json_string_value(json_object_get(req, "arch"));
    const char *entry = json_string_value(json_object_get(req, "entry"));
    const char *name = json_string_value(json_object_get(req, "family"));
    const fdt_family *family = name ? fdt_family_find(name) : NULL;
    const size_t n = json_array_size(list);
    const char **defines = calloc(n ? n : 1, sizeof *defines);
    fdt_error err = {0};
    fdt_code code = {0};
    fdt_status st = FDT_ERROR;
    int readable = arch && entry && family && json_is_array(list) && defines;
    for (size_t i = 0; readable && i < n; i++)
        readable = (defines[i] = json_string_value(json_array_get(list, i))) != NULL;
    if (readable)
        st = ops->compile(arch, fdt_family_source(family), entry, defines, n, &code, &err);
    else
        fdt_fail(&err, FDT_ERROR, "a compile request the helper cannot read");
    char *text = st == FDT_OK ? fdt_base64_encode(code.data, code.size) : NULL;
    json_t *answer = st == FDT_OK ? json_pack("{s:i, s:s*}", "status", FDT_OK, "code", text)
                                  : json_pack("{s:i, s:o*}", "status", st, "message",
                                              fdt_wire_text(err.msg));
    free(text);
    fdt_code_free(&code);
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
        if (getppid() != parent)
            _exit(1);
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
        json_t *answer = serve(ops, line);
        if (!answer || json_dumpf(answer, out, JSON_COMPACT) != 0 || fputc('\n', out) == EOF ||
            fflush(out) != 0)
            code = 1;
        json_decref(answer);
    }
    free(line);
    return code;
}
