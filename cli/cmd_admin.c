/* cmd_admin.c - the fdtune commands that look after the daemon: status, jobs, cancel,
 * devices, export and shutdown. Each is one request and the human form of its answer. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "cmd_daemon.h"
#include "commands.h"

static const struct option plain_options[] = {
    FDT_DAEMON_OPTIONS,
    {NULL, 0, NULL, 0},
};

#define ADMIN_HELP(usage, what) "usage: fdtune " usage "\n\n" what "\n\n" FDT_DAEMON_HELP

static const char status_help[] =
    ADMIN_HELP("status [JOB]", "The daemon's state (its jobs and workers), or one job's.");
static const char cancel_help[] =
    ADMIN_HELP("cancel JOB", "Cancels a queued or running job; what it measured stays stored.");
static const char devices_help[] =
    ADMIN_HELP("devices", "The devices the daemon found at start-up, their balance (copy and "
               "L2 bandwidth, measured once per device) and their workers.");
static const char shutdown_help[] =
    ADMIN_HELP("shutdown", "Stops the daemon as SIGTERM would: running jobs go back to the "
               "queue.");
static const char jobs_help[] =
    "usage: fdtune jobs [options]\n\nThe jobs, newest first.\n\n"
    "  --state S                 only jobs in state S: queued, running, done, failed,\n"
    "                            cancelled\n"
    "  --limit N                 at most N jobs (default 100, at most 10000)\n"
    FDT_DAEMON_HELP;
static const char export_help[] =
    "usage: fdtune export [options]\n\nThe store's contents, for a spreadsheet or another "
    "host.\n\n"
    "  --what best|results       the best variant of every tuned problem (default), or\n"
    "                            every measured variant\n"
    "  --format csv|json         (default json)\n"
    "  -o, --output FILE         write to FILE, not standard output\n"
    FDT_DAEMON_HELP;

/* Parses a command that takes no option of its own and at most max_pos arguments: -1 when
 * the command goes on, else the exit code to end it with (help printed, bad usage). */
static int parse_plain(int argc, char **argv, const char *help, int max_pos,
                       fdt_daemon_args *a)
{
    const int parsed = fdt_daemon_parse(argc, argv, "h", plain_options, help, NULL, NULL, a);
    if (parsed)
        return parsed > 0 ? FDT_EXIT_OK : FDT_EXIT_USAGE;
    if (a->npos > max_pos)
        return fdt_usage_error(argv[0], "unexpected argument '%s'", a->pos[max_pos]);
    return -1;
}

static int parse_job_id(const char *text, long long *id)
{
    long v;
    if (fdt_parse_int(text, 1, INT32_MAX, "JOB", &v))
        return -1;
    *id = v;
    return 0;
}

static json_t *job_request(const char *op, long long id)
{
    json_t *req = fdt_request(op);
    json_object_set_new(req, "job", json_integer(id));
    return req;
}

static void print_uptime(long long s)
{
    if (s >= 86400)
        printf("%lldd ", s / 86400);
    printf("%lldh %02lldm %02llds", s % 86400 / 3600, s % 3600 / 60, s % 60);
}

static void print_workers(const json_t *workers)
{
    size_t i;
    const json_t *w;
    json_array_foreach(workers, i, w) {
        printf("worker    device %lld: %s", fdt_jint(w, "device"), fdt_jstr(w, "state"));
        if (fdt_jint(w, "pid"))
            printf(", pid %lld", fdt_jint(w, "pid"));
        if (fdt_jint(w, "job"))
            printf(", job %lld", fdt_jint(w, "job"));
        printf(", %lld restarts\n", fdt_jint(w, "restarts"));
    }
}

static int show_status(const json_t *answer, void *ctx)
{
    (void)ctx;
    const json_t *job = json_object_get(answer, "job");
    if (json_is_object(job)) {
        fdt_print_job(job);
        return FDT_EXIT_OK;
    }
    printf("fdtuned %s, pid %lld, backend %s, up ", fdt_jstr(answer, "version"),
           fdt_jint(answer, "pid"), fdt_jstr(answer, "backend"));
    print_uptime(fdt_jint(answer, "uptime_s"));
    printf("\nsocket    %s\ndb        %s\n", fdt_jstr(answer, "socket"), fdt_jstr(answer, "db"));
    const json_t *jobs = json_object_get(answer, "jobs");
    printf("jobs      %lld queued, %lld running, %lld done, %lld failed, %lld cancelled\n",
           fdt_jint(jobs, "queued"), fdt_jint(jobs, "running"), fdt_jint(jobs, "done"),
           fdt_jint(jobs, "failed"), fdt_jint(jobs, "cancelled"));
    print_workers(json_object_get(answer, "workers"));
    return FDT_EXIT_OK;
}

int fdt_cmd_status(int argc, char **argv)
{
    fdt_daemon_args a;
    const int rc = parse_plain(argc, argv, status_help, 1, &a);
    if (rc >= 0)
        return rc;
    long long id = 0;
    if (a.npos == 1 && parse_job_id(a.pos[0], &id))
        return FDT_EXIT_USAGE;
    json_t *req = id ? job_request("status", id) : fdt_request("status");
    return fdt_client_run("status", &a, req, show_status, NULL);
}

static int show_cancel(const json_t *answer, void *ctx)
{
    (void)ctx;
    printf("job %lld %s\n", fdt_jint(answer, "job"), fdt_jstr(answer, "state"));
    return FDT_EXIT_OK;
}

int fdt_cmd_cancel(int argc, char **argv)
{
    fdt_daemon_args a;
    const int rc = parse_plain(argc, argv, cancel_help, 1, &a);
    if (rc >= 0)
        return rc;
    long long id;
    if (a.npos != 1)
        return fdt_usage_error("cancel", "expected the JOB to cancel");
    if (parse_job_id(a.pos[0], &id))
        return FDT_EXIT_USAGE;
    return fdt_client_run("cancel", &a, job_request("cancel", id), show_cancel, NULL);
}

/* A figure of a device's balance, or "-" where none was measured (0). */
static const char *balance_text(const json_t *d, const char *key, char *buf, size_t len)
{
    const double gbps = fdt_jnum(json_object_get(d, "balance"), key);
    if (gbps > 0)
        snprintf(buf, len, "%.1f", gbps);
    else
        snprintf(buf, len, "-");
    return buf;
}

static int show_devices(const json_t *answer, void *ctx)
{
    (void)ctx;
    const json_t *devices = json_object_get(answer, "devices");
    if (json_array_size(devices) == 0) {
        printf("no devices\n");
        return FDT_EXIT_OK;
    }
    printf("%3s  %-7s  %-26s %-8s %4s %10s %8s %9s %9s  %-8s %-14s %s\n", "DEV", "BACKEND",
           "NAME", "ARCH", "CUs", "MEMORY", "L2", "COPY GB/s", "L2 GB/s", "DRIVER", "COMPILER",
           "WORKER");
    size_t i;
    const json_t *d;
    char copy[32], l2[32];
    json_array_foreach(devices, i, d)
        printf("%3lld  %-7s  %-26s %-8s %4lld %6.1f GiB %4.0f MiB %9s %9s  %-8s %-14s %s\n",
               fdt_jint(d, "index"), fdt_jstr(d, "backend"), fdt_jstr(d, "name"),
               fdt_jstr(d, "arch"), fdt_jint(d, "compute_units"),
               fdt_jnum(d, "memory_bytes") / 1073741824.0, fdt_jnum(d, "l2_bytes") / 1048576.0,
               balance_text(d, "copy_gbps", copy, sizeof copy),
               balance_text(d, "l2_gbps", l2, sizeof l2), fdt_jstr(d, "driver"),
               fdt_jstr(d, "compiler"), fdt_jstr(d, "worker"));
    return FDT_EXIT_OK;
}

int fdt_cmd_devices(int argc, char **argv)
{
    fdt_daemon_args a;
    const int rc = parse_plain(argc, argv, devices_help, 0, &a);
    if (rc >= 0)
        return rc;
    return fdt_client_run("devices", &a, fdt_request("devices"), show_devices, NULL);
}

static int show_shutdown(const json_t *answer, void *ctx)
{
    (void)answer, (void)ctx;
    printf("fdtuned is stopping\n");
    return FDT_EXIT_OK;
}

int fdt_cmd_shutdown(int argc, char **argv)
{
    fdt_daemon_args a;
    const int rc = parse_plain(argc, argv, shutdown_help, 0, &a);
    if (rc >= 0)
        return rc;
    return fdt_client_run("shutdown", &a, fdt_request("shutdown"), show_shutdown, NULL);
}

static const char *const job_states[] = {"queued", "running", "done", "failed", "cancelled"};

enum { OPT_STATE = FDT_OPT_OWN, OPT_LIMIT, OPT_WHAT, OPT_FORMAT };

static const struct option jobs_options[] = {
    FDT_DAEMON_OPTIONS,
    {"state", required_argument, NULL, OPT_STATE},
    {"limit", required_argument, NULL, OPT_LIMIT},
    {NULL, 0, NULL, 0},
};

typedef struct jobs_args {
    const char *state;
    long limit;
} jobs_args;

static int jobs_option(int opt, const char *arg, void *ctx)
{
    jobs_args *j = ctx;
    if (opt == OPT_LIMIT)
        return fdt_parse_int(arg, 1, 10000, "--limit", &j->limit);
    for (size_t i = 0; i < sizeof job_states / sizeof *job_states; i++)
        if (strcmp(arg, job_states[i]) == 0) {
            j->state = arg;
            return 0;
        }
    fprintf(stderr, "fdtune: --state must be queued, running, done, failed or cancelled, "
            "not '%s'\n", arg);
    return -1;
}

static int show_jobs(const json_t *answer, void *ctx)
{
    (void)ctx;
    const json_t *jobs = json_object_get(answer, "jobs");
    if (json_array_size(jobs) == 0) {
        printf("no jobs\n");
        return FDT_EXIT_OK;
    }
    fdt_print_job_header();
    size_t i;
    const json_t *job;
    json_array_foreach(jobs, i, job)
        fdt_print_job_row(job);
    return FDT_EXIT_OK;
}

int fdt_cmd_jobs(int argc, char **argv)
{
    fdt_daemon_args a;
    jobs_args j = {NULL, 0};
    const int parsed = fdt_daemon_parse(argc, argv, "h", jobs_options, jobs_help, jobs_option,
                                        &j, &a);
    if (parsed)
        return parsed > 0 ? FDT_EXIT_OK : FDT_EXIT_USAGE;
    if (a.npos)
        return fdt_usage_error("jobs", "unexpected argument '%s'", a.pos[0]);
    json_t *req = fdt_request("jobs");
    if (j.state)
        json_object_set_new(req, "state", json_string(j.state));
    if (j.limit)
        json_object_set_new(req, "limit", json_integer(j.limit));
    return fdt_client_run("jobs", &a, req, show_jobs, NULL);
}

static const struct option export_options[] = {
    FDT_DAEMON_OPTIONS,
    {"what", required_argument, NULL, OPT_WHAT},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"output", required_argument, NULL, 'o'},
    {NULL, 0, NULL, 0},
};

typedef struct export_args {
    const char *what, *format, *output;
} export_args;

static int export_option(int opt, const char *arg, void *ctx)
{
    export_args *e = ctx;
    switch (opt) {
    case 'o': e->output = arg; return 0;
    case OPT_WHAT:
        if (strcmp(arg, "best") == 0 || strcmp(arg, "results") == 0) {
            e->what = arg;
            return 0;
        }
        fprintf(stderr, "fdtune: --what must be best or results, not '%s'\n", arg);
        return -1;
    }
    if (strcmp(arg, "csv") == 0 || strcmp(arg, "json") == 0) {
        e->format = arg;
        return 0;
    }
    fprintf(stderr, "fdtune: --format must be csv or json, not '%s'\n", arg);
    return -1;
}

/* The exported rows as a JSON array, one row per line. */
static void write_rows(const json_t *rows, FILE *out)
{
    fputs("[", out);
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row) {
        fputs(i ? ",\n" : "\n", out);
        json_dumpf(row, out, JSON_COMPACT);
    }
    fputs("\n]\n", out);
}

static int show_export(const json_t *answer, void *ctx)
{
    const export_args *e = ctx;
    FILE *out = e->output ? fopen(e->output, "w") : stdout;
    if (!out) {
        fprintf(stderr, "fdtune export: cannot write %s: %s\n", e->output, strerror(errno));
        return FDT_EXIT_FAILED;
    }
    if (strcmp(fdt_jstr(answer, "format"), "csv") == 0)
        fputs(fdt_jstr(answer, "data"), out);
    else
        write_rows(json_object_get(answer, "rows"), out);
    const int failed = out == stdout ? fflush(out) != 0 || ferror(out) : fclose(out) != 0;
    if (failed) {
        fprintf(stderr, "fdtune export: writing %s: %s\n", e->output ? e->output : "the output",
                strerror(errno));
        return FDT_EXIT_FAILED;
    }
    return FDT_EXIT_OK;
}

int fdt_cmd_export(int argc, char **argv)
{
    fdt_daemon_args a;
    export_args e = {"best", "json", NULL};
    const int parsed = fdt_daemon_parse(argc, argv, "ho:", export_options, export_help,
                                        export_option, &e, &a);
    if (parsed)
        return parsed > 0 ? FDT_EXIT_OK : FDT_EXIT_USAGE;
    if (a.npos)
        return fdt_usage_error("export", "unexpected argument '%s'", a.pos[0]);
    if (a.json && e.output)
        return fdt_usage_error("export", "--json prints the answer line itself; it does not "
                               "go with -o");
    json_t *req = fdt_request("export");
    json_object_set_new(req, "what", json_string(e.what));
    json_object_set_new(req, "format", json_string(e.format));
    return fdt_client_run("export", &a, req, show_export, &e);
}
