/* cmd_daemon.c - what the fdtune commands that talk to fdtuned share: parsing their
 * options, sending a request through libfdtune and turning every outcome into one message
 * and one exit code, and printing jobs. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client_json.h"
#include "cmd_daemon.h"
#include "commands.h"
#include "config.h"
#include "engine/stencil.h"
#include "engine/variant.h"
#include "store.h"

int fdt_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fdtune %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see fdtune %s --help)\n", cmd);
    va_end(ap);
    return FDT_EXIT_USAGE;
}

static int parse_problem_option(int opt, const char *arg, fdt_daemon_args *a)
{
    fdtune_problem *p = &a->problem;
    long v;
    fdt_cache_mode mode;
    switch (opt) {
    case FDT_OPT_PRECISION:
        if (strcmp(arg, "double") == 0 || strcmp(arg, "float") == 0) {
            p->precision = arg[0] == 'f' ? FDTUNE_FLOAT : FDTUNE_DOUBLE;
            return 0;
        }
        fprintf(stderr, "fdtune: --precision must be float or double, not '%s'\n", arg);
        return -1;
    case FDT_OPT_CACHE:
        if (fdt_cache_mode_parse(arg, &mode) == 0) {
            p->cache = mode == FDT_CACHE_PERSIST ? FDTUNE_PERSIST
                     : mode == FDT_CACHE_COLD    ? FDTUNE_COLD
                     : mode == FDT_CACHE_AUTO    ? FDTUNE_AUTO
                                                 : FDTUNE_HOT;
            return 0;
        }
        fprintf(stderr, "fdtune: --cache must be hot, cold, persist or auto, not '%s'\n", arg);
        return -1;
    case FDT_OPT_RADIUS:
        if (fdt_parse_int(arg, 1, FDT_MAX_RADIUS, "--radius", &v))
            return -1;
        p->radius = (int)v;
        return 0;
    case FDT_OPT_SPEC: {
        fdt_problem e = {0};
        if (fdt_parse_spec_file(arg, &e, &a->spec))
            return -1;
        p->radius = e.radius; /* its reach: the shape is checked against it */
        return 0;
    }
    case FDT_OPT_PITCH:
        if (strcmp(arg, "auto") == 0) {
            p->pitch = FDTUNE_PITCH_AUTO;
            return 0;
        }
        if (fdt_parse_int(arg, 1, FDT_MAX_SIDE + FDT_PITCH_PAD_MAX, "--pitch", &v))
            return -1;
        p->pitch = (int)v;
        return 0;
    case FDT_OPT_OFFSET:
        if (fdt_parse_int(arg, 0, FDT_OFFSET_BYTES - 1, "--offset", &v))
            return -1;
        p->offset = (int)v;
        return 0;
    case FDT_OPT_DEVICE:
        if (strcmp(arg, "any") == 0) {
            p->device = FDTUNE_DEVICE_ANY;
            return 0;
        }
        if (fdt_parse_int(arg, 0, 1024, "--device", &v))
            return -1;
        p->device = (int)v;
        return 0;
    }
    return 1; /* not a problem option */
}

static int parse_common_option(int opt, const char *arg, fdt_daemon_args *a)
{
    long v;
    switch (opt) {
    case FDT_OPT_SOCKET: a->socket = arg; return 0;
    case FDT_OPT_JSON: a->json = 1; return 0;
    case FDT_OPT_TIMEOUT:
        if (fdt_parse_int(arg, 1, 86400, "--timeout", &v))
            return -1;
        a->timeout_ms = (int)(v * 1000);
        return 0;
    }
    a->radius_given |= opt == FDT_OPT_RADIUS;
    return parse_problem_option(opt, arg, a);
}

int fdt_daemon_parse(int argc, char **argv, const char *shortopts,
                     const struct option *options, const char *help, fdt_own_option_fn own,
                     void *ctx, fdt_daemon_args *a)
{
    memset(a, 0, sizeof *a);
    a->problem.radius = 1;
    a->problem.cache = FDTUNE_AUTO; /* the daemon's default too; libfdtune's is hot */
    a->problem.device = FDTUNE_DEVICE_KIND; /* a query: device 0; a job: any of its kind */
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, shortopts, options, NULL)) != -1) {
        if (opt == FDT_OPT_HELP || opt == 'h') {
            fputs(help, stdout);
            return 1;
        }
        if (opt == '?' || opt == ':') {
            fprintf(stderr, "fdtune %s: unknown option or missing value: '%s'\n", argv[0],
                    argv[optind - 1]);
            return -1;
        }
        int st = parse_common_option(opt, optarg, a);
        if (st > 0)
            st = own(opt, optarg, ctx);
        if (st)
            return -1;
    }
    if (a->problem.pitch == FDTUNE_PITCH_AUTO && a->problem.offset) {
        fprintf(stderr, "fdtune %s: --pitch auto chooses the offset too: no --offset with it\n",
                argv[0]);
        return -1;
    }
    if (a->spec && a->radius_given) {
        fprintf(stderr, "fdtune %s: --radius and --spec: a spec's radius is its reach\n",
                argv[0]);
        return -1;
    }
    a->pos = argv + optind;
    a->npos = argc - optind;
    return 0;
}

json_t *fdt_problem_request(const fdt_daemon_args *a, const char *op, int with_shape)
{
    return fdtune_problem_request(op, &a->problem, a->spec, with_shape);
}

/* fdtune_problem names no stencil yet: the command's problems are the default stencil's. */
static fdt_problem engine_problem(const fdtune_problem *p)
{
    fdt_problem e = {.nx = p->nx, .ny = p->ny, .nz = p->nz, .radius = p->radius ? p->radius : 1,
                     .precision = p->precision == FDTUNE_FLOAT ? FDT_FLOAT : FDT_DOUBLE,
                     .pitch = p->pitch == FDTUNE_PITCH_AUTO ? 0 : p->pitch,
                     .offset = p->offset};
    fdt_copy_text(e.stencil, sizeof e.stencil, fdt_stencil_default()->name);
    return e;
}

const char *fdt_check_problem(const fdtune_problem *p)
{
    const fdt_problem e = engine_problem(p);
    return fdt_problem_check(&e);
}

int fdt_parse_shape(char *const *text, fdtune_problem *p)
{
    static const char *const names[3] = {"NX", "NY", "NZ"};
    long n[3];
    for (int d = 0; d < 3; d++)
        if (fdt_parse_int(text[d], 1, FDT_MAX_SIDE, names[d], &n[d]))
            return -1;
    p->nx = (int)n[0], p->ny = (int)n[1], p->nz = (int)n[2];
    const char *why = fdt_check_problem(p);
    if (why) {
        fprintf(stderr, "fdtune: %s\n", why);
        return -1;
    }
    return 0;
}

int fdt_client_open(fdt_client *c, const char *cmd, const fdt_daemon_args *a)
{
    char err[FDT_PATH_MAX + 256];
    memset(c, 0, sizeof *c);
    c->cmd = cmd;
    c->json = a->json;
    if (a->socket)
        snprintf(c->socket, sizeof c->socket, "%s", a->socket);
    else
        fdtune_default_socket(c->socket, sizeof c->socket);
    c->conn = fdtune_connect(c->socket, a->timeout_ms, err, sizeof err);
    if (c->conn)
        return FDT_EXIT_OK;
    if (euidaccess(c->socket, W_OK) != 0 && errno == EACCES) {
        /* A daemon is there, but its socket (or a folder above it) does not admit this
         * user: not a reason to start another one. */
        fprintf(stderr, "fdtune %s: %s\n"
                "fdtune %s: uid %u may not use this socket: fdtuned admits its own user, root "
                "and its socket_group ([daemon] socket_group and socket_mode in fdtuned.conf). "
                "Ask its administrator to add you to that group, or run a daemon of your own "
                "(fdtuned with no flags, then fdtune with no --socket)\n",
                cmd, err, cmd, (unsigned)geteuid());
        return FDT_EXIT_FORBIDDEN;
    }
    fprintf(stderr, "fdtune %s: %s\n"
            "fdtune %s: is fdtuned running? Start it (fdtuned --socket %s, or systemctl start "
            "fdtuned), or name its socket with --socket or FDTUNE_SOCKET\n",
            cmd, err, cmd, c->socket);
    return FDT_EXIT_UNREACHABLE;
}

void fdt_client_close(fdt_client *c)
{
    fdtune_close(c->conn);
    free(c->line);
    c->conn = NULL;
    c->line = NULL;
}

/* The exit code of an answer with "ok": false, reported. */
static int refused(fdt_client *c, const json_t *answer, int echo)
{
    const json_t *e = json_object_get(answer, "error");
    const char *code = fdt_jstr(e, "code");
    if (!echo)
        fprintf(stderr, "fdtune %s: %s (%s)\n", c->cmd,
                *fdt_jstr(e, "message") ? fdt_jstr(e, "message") : "the daemon gave no reason",
                *code ? code : "no error code");
    return strcmp(code, "forbidden") == 0 ? FDT_EXIT_FORBIDDEN : FDT_EXIT_FAILED;
}

static int call(fdt_client *c, json_t *req, json_t **answer, int echo)
{
    char err[512];
    *answer = NULL;
    char *line = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (!line) {
        fprintf(stderr, "fdtune %s: out of memory\n", c->cmd);
        return FDT_EXIT_FAILED;
    }
    free(c->line);
    c->line = NULL;
    const int st = fdtune_request(c->conn, line, &c->line, err, sizeof err);
    free(line);
    if (st != FDTUNE_OK) {
        fprintf(stderr, "fdtune %s: %s\n", c->cmd, err);
        return st == FDTUNE_ERR_IO ? FDT_EXIT_UNREACHABLE : FDT_EXIT_FAILED;
    }
    echo = echo && c->json;
    if (echo)
        printf("%s\n", c->line);
    json_error_t jerr;
    json_t *j = json_loads(c->line, 0, &jerr);
    if (!json_is_object(j)) {
        fprintf(stderr, "fdtune %s: the daemon's answer is not a JSON object: %.200s\n",
                c->cmd, c->line);
        json_decref(j);
        return FDT_EXIT_FAILED;
    }
    if (!json_is_true(json_object_get(j, "ok"))) {
        const int rc = refused(c, j, echo);
        json_decref(j);
        return rc;
    }
    *answer = j;
    return FDT_EXIT_OK;
}

int fdt_client_call(fdt_client *c, json_t *req, json_t **answer)
{
    return call(c, req, answer, 1);
}

int fdt_client_poll(fdt_client *c, json_t *req, json_t **answer)
{
    return call(c, req, answer, 0);
}

static json_t *export_request(const char *what, const char *format, const json_t *after)
{
    json_t *req = fdt_request("export");
    json_object_set_new(req, "what", json_string(what));
    json_object_set_new(req, "format", json_string(format));
    if (after)
        json_object_set_new(req, "after", json_deep_copy(after));
    return req;
}

int fdt_client_export(fdt_client *c, const char *what, const char *format, fdt_page_fn page,
                      void *ctx)
{
    json_t *answer = NULL, *next = NULL;
    int rc;
    do {
        rc = fdt_client_call(c, export_request(what, format, next), &answer);
        json_decref(next);
        next = NULL;
        if (rc == FDT_EXIT_OK && page && page(answer, ctx) != 0)
            rc = FDT_EXIT_FAILED;
        if (rc == FDT_EXIT_OK)
            next = json_incref(json_object_get(answer, "next"));
        json_decref(answer);
    } while (rc == FDT_EXIT_OK && next);
    return rc;
}

int fdt_client_run(const char *cmd, const fdt_daemon_args *a, json_t *req, fdt_show_fn show,
                   void *ctx)
{
    fdt_client c;
    int rc = fdt_client_open(&c, cmd, a);
    if (rc) {
        json_decref(req);
        return rc;
    }
    json_t *answer;
    rc = fdt_client_call(&c, req, &answer);
    if (rc == FDT_EXIT_OK && !c.json)
        rc = show(answer, ctx);
    json_decref(answer);
    fdt_client_close(&c);
    return rc;
}

json_t *fdt_request(const char *op)
{
    return json_pack("{s:i, s:s}", "v", 1, "op", op);
}

const char *fdt_jstr(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

double fdt_jnum(const json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

long long fdt_jint(const json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

int fdt_job_finished(const json_t *job)
{
    const fdt_job_state s = fdt_job_state_parse(fdt_jstr(job, "state"));
    return s == FDT_JOB_DONE || s == FDT_JOB_FAILED || s == FDT_JOB_CANCELLED;
}

static void format_time(const json_t *job, const char *key, char *out, size_t len)
{
    const time_t t = (time_t)fdt_jint(job, key);
    struct tm tm;
    if (t <= 0 || !localtime_r(&t, &tm) || !strftime(out, len, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf(out, len, "-");
}

/* A padded layout follows the shape as /PITCH+OFFSET: 96x96x2048/100+3. */
static void format_shape(const json_t *job, char *out, size_t len)
{
    const long long nx = fdt_jint(job, "nx"), pitch = fdt_jint(job, "pitch");
    const long long offset = fdt_jint(job, "offset");
    const int padded = (pitch && pitch != nx) || offset;
    snprintf(out, len, padded ? "%lldx%lldx%lld/%lld+%lld" : "%lldx%lldx%lld", nx,
             fdt_jint(job, "ny"), fdt_jint(job, "nz"), pitch, offset);
}

/* The job's device: its index, or "any" (of its kind, when a fingerprint is named). */
static const char *device_text(const json_t *job, char *out, size_t len)
{
    const json_t *d = json_object_get(job, "device");
    if (json_is_integer(d))
        snprintf(out, len, "%lld", (long long)json_integer_value(d));
    else
        snprintf(out, len, "%s", *fdt_jstr(job, "fingerprint") ? "kind" : "any");
    return out;
}

/* How the job searches: its strategy over which variants, and what stops it before its
 * space is measured ("guided over every family (1532 variants), patience 48"): a guided
 * job measures tens of a space of thousands, which "every variant" would deny. */
static void print_search(const json_t *job)
{
    const char *family = *fdt_jstr(job, "family") ? fdt_jstr(job, "family") : "every family";
    printf("  search    %s over %s", fdt_jstr(job, "strategy"), family);
    if (fdt_jint(job, "subset"))
        printf(", %lld variants spread over the space", fdt_jint(job, "subset"));
    else
        printf(" (%lld variants)", fdt_jint(job, "total"));
    if (fdt_jint(job, "budget"))
        printf(", budget %lld", fdt_jint(job, "budget"));
    if (fdt_jnum(job, "budget_s") > 0)
        printf(", budget %.0f s", fdt_jnum(job, "budget_s"));
    if (fdt_jint(job, "patience"))
        printf(", patience %lld", fdt_jint(job, "patience"));
    printf("\n");
}

void fdt_print_job(const json_t *job)
{
    char device[24];
    char shape[64], created[32], started[32], finished[32];
    format_shape(job, shape, sizeof shape);
    format_time(job, "created", created, sizeof created);
    format_time(job, "started", started, sizeof started);
    format_time(job, "finished", finished, sizeof finished);
    const int running = fdt_job_state_parse(fdt_jstr(job, "state")) == FDT_JOB_RUNNING;
    const char *phase = running ? fdt_jstr(job, "phase") : "";
    printf("job %lld: %s%s%s%s\n", fdt_jint(job, "id"), fdt_jstr(job, "state"),
           *phase ? " (" : "", phase, *phase ? ")" : "");
    printf("  problem   %s %s, radius %lld, %s cache, device %s\n", shape,
           fdt_jstr(job, "precision"), fdt_jint(job, "radius"), fdt_jstr(job, "cache"),
           device_text(job, device, sizeof device));
    print_search(job);
    printf("  progress  %lld/%lld variants: %lld ok, %lld failed (%lld too noisy to rank)\n",
           fdt_jint(job, "done"), fdt_jint(job, "total"), fdt_jint(job, "ok"),
           fdt_jint(job, "failed"), fdt_jint(job, "noisy"));
    if (fdt_jint(job, "remeasures"))
        printf("  measures  job %lld's doubtful winner again (queued by the daemon)\n",
               fdt_jint(job, "remeasures"));
    if (*fdt_jstr(job, "ended_by"))
        printf("  ended     by %s, after %lld of %lld variants\n", fdt_jstr(job, "ended_by"),
               fdt_jint(job, "done"), fdt_jint(job, "total"));
    const json_t *ran_on = json_object_get(job, "ran_on");
    if (json_is_integer(ran_on))
        printf("  ran on    device %lld\n", (long long)json_integer_value(ran_on));
    const json_t *origin = json_object_get(job, "origin");
    if (origin)
        printf("  imported  from %s, its job %lld there (store %.12s...), measured by fdtuned "
               "%s\n", fdt_jstr(origin, "host"), fdt_jint(origin, "job"),
               fdt_jstr(origin, "store"), fdt_jstr(origin, "fdtuned"));
    if (*fdt_jstr(job, "best"))
        printf("  best      %s  %.1f GB/s\n", fdt_jstr(job, "best"), fdt_jnum(job, "best_gbps"));
    if (*fdt_jstr(job, "doubt"))
        printf("  doubtful  %s\n", fdt_jstr(job, "doubt"));
    printf("  created   %s\n  started   %s\n  finished  %s\n", created, started, finished);
    if (fdt_jint(job, "started") && fdt_jint(job, "finished"))
        printf("  elapsed   %lld s\n", fdt_jint(job, "finished") - fdt_jint(job, "started"));
    if (*fdt_jstr(job, "error"))
        printf("  error     %s\n", fdt_jstr(job, "error"));
}

fdt_table *fdt_jobs_table(void)
{
    static const char *const columns[] = {">JOB", "STATE", "SHAPE", "PREC", ">R", "CACHE",
                                          ">DEV", ">VARIANTS", "BEST", ">GB/s", NULL};
    return fdt_table_new(columns);
}

void fdt_jobs_table_row(fdt_table *t, const json_t *job)
{
    char id[24], shape[64], radius[16], device[24], progress[48], gbps[32];
    snprintf(id, sizeof id, "%lld", fdt_jint(job, "id"));
    format_shape(job, shape, sizeof shape);
    snprintf(radius, sizeof radius, "%lld", fdt_jint(job, "radius"));
    snprintf(progress, sizeof progress, "%lld/%lld", fdt_jint(job, "done"),
             fdt_jint(job, "total"));
    const char *best = fdt_jstr(job, "best");
    snprintf(gbps, sizeof gbps, *best ? "%.1f" : "-", fdt_jnum(job, "best_gbps"));
    const char *const row[] = {id, fdt_jstr(job, "state"), shape, fdt_jstr(job, "precision"),
                               radius, fdt_jstr(job, "cache"),
                               device_text(job, device, sizeof device), progress,
                               *best ? best : "-", gbps};
    fdt_table_row(t, row);
}

void fdt_print_job_outcome(const json_t *job)
{
    char shape[64];
    format_shape(job, shape, sizeof shape);
    const char *state = fdt_jstr(job, "state");
    printf("job %lld (%s %s): %s", fdt_jint(job, "id"), shape, fdt_jstr(job, "precision"),
           state);
    if (fdt_job_state_parse(state) == FDT_JOB_DONE)
        printf(", %lld of %lld variants measured (%lld ok, %lld failed), best %s %.1f GB/s",
               fdt_jint(job, "done"), fdt_jint(job, "total"), fdt_jint(job, "ok"),
               fdt_jint(job, "failed"),
               *fdt_jstr(job, "best") ? fdt_jstr(job, "best") : "none",
               fdt_jnum(job, "best_gbps"));
    if (*fdt_jstr(job, "error"))
        printf(": %s", fdt_jstr(job, "error"));
    printf("\n");
}
