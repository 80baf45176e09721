/* cmd_admin.c - the fdtune commands that look after the daemon: status, jobs, cancel,
 * devices, export and shutdown. Each is one request and the human form of its answer. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "cmd_daemon.h"
#include "commands.h"
#include "progress.h"
#include "store.h"

static const struct option plain_options[] = {
    FDT_DAEMON_OPTIONS,
    {NULL, 0, NULL, 0},
};

#define ADMIN_HELP(usage, what) "usage: fdtune " usage "\n\n" what "\n\n" FDT_DAEMON_HELP

static const char status_help[] =
    "usage: fdtune status [options] [JOB]\n\nThe daemon's state (its jobs and workers), or one "
    "job's.\n\n"
    "  --format text|table|csv|json\n"
    "                            as words (default), a table of one row (the daemon's\n"
    "                            counts, or the job as `jobs` lists it), CSV of that row,\n"
    "                            or the daemon's answer as JSON (as --json)\n"
    "  --noheader                no header line (table, csv)\n" FDT_DAEMON_HELP;
static const char cancel_help[] =
    ADMIN_HELP("cancel JOB", "Cancels a queued or running job; what it measured stays stored.");
/* The options of a command that prints a table (table.h). */
#define LISTING_HELP                                                                        \
    "  --format table|csv|json   a table sized to its contents (default), CSV, or the\n"   \
    "                            daemon's answer as JSON (as --json)\n"                     \
    "  --noheader                no header line (table, csv)\n"
static const char devices_help[] =
    "usage: fdtune devices [options]\n\nThe devices the daemon found at start-up, their "
    "balance (copy and L2 bandwidth, measured once per device) and their workers.\n\n"
    LISTING_HELP FDT_DAEMON_HELP;
static const char shutdown_help[] =
    ADMIN_HELP("shutdown", "Stops the daemon as SIGTERM would: running jobs go back to the "
               "queue.");
static const char jobs_help[] =
    "usage: fdtune jobs [options]\n\nThe jobs, newest first.\n\n"
    "  --state S                 only jobs in state S: queued, running, done, failed,\n"
    "                            cancelled\n"
    "  --limit N                 at most N jobs (default 100, at most 10000)\n"
    LISTING_HELP FDT_DAEMON_HELP;
static const char export_help[] =
    "usage: fdtune export [options]\n\nThe store's contents, for a spreadsheet or another "
    "host.\n\n"
    "  --what best|results       the best variant of every tuned problem (default), or\n"
    "                            every measured variant\n"
    "  --format csv|json         (default json)\n"
    "  -o, --output FILE         write to FILE, not standard output\n"
    FDT_DAEMON_HELP;

enum { OPT_STATE = FDT_OPT_OWN, OPT_LIMIT, OPT_WHAT, OPT_FORMAT, OPT_NOHEADER };

/* How a command that prints a table prints it: --format and --noheader. table: status
 * prints a table (its default is words). */
typedef struct listing {
    fdt_table_format format;
    int json, noheader, table;
} listing;

#define LISTING_OPTIONS                                       \
    {"format", required_argument, NULL, OPT_FORMAT},          \
    {"noheader", no_argument, NULL, OPT_NOHEADER}

/* 1 when opt is a listing option, taken; 0 when it is none; -1 when its value is bad. */
static int listing_option(listing *l, int opt, const char *arg)
{
    if (opt == OPT_NOHEADER)
        return l->noheader = 1;
    if (opt != OPT_FORMAT)
        return 0;
    if (strcmp(arg, "table") == 0 || strcmp(arg, "csv") == 0) {
        l->format = arg[0] == 'c' ? FDT_TABLE_CSV : FDT_TABLE_TEXT;
        return 1;
    }
    if (strcmp(arg, "json") == 0)
        return l->json = 1;
    fprintf(stderr, "fdtune: --format must be table, csv or json, not '%s'\n", arg);
    return -1;
}

/* Prints t as l says; "no NAME" instead of an empty table. */
static int print_listing(fdt_table *t, const listing *l, size_t rows, const char *name)
{
    if (!t)
        return FDT_EXIT_FAILED;
    if (rows == 0 && l->format == FDT_TABLE_TEXT) {
        fdt_table_free(t);
        printf("no %s\n", name);
    } else {
        fdt_table_print(t, l->format, l->noheader, stdout);
    }
    return FDT_EXIT_OK;
}

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

/* ", ETA 1m05s" when the object says eta_s. */
static void print_eta(const json_t *o)
{
    const json_t *eta = json_object_get(o, "eta_s");
    char text[48];
    if (!json_is_number(eta))
        return;
    fdt_progress_format_seconds(json_number_value(eta), text, sizeof text);
    printf(", ETA %s", text);
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
        printf(", %lld restarts", fdt_jint(w, "restarts"));
        const json_t *p = json_object_get(w, "progress");
        if (p) {
            printf("; %lld/%lld variants, %.1f/s", fdt_jint(p, "done"), fdt_jint(p, "total"),
                   fdt_jnum(p, "evals_per_s"));
            print_eta(p);
        }
        printf("\n");
    }
}

static void print_batches(const json_t *batches)
{
    size_t i;
    const json_t *b;
    json_array_foreach(batches, i, b) {
        printf("batch     %lld: %lld/%lld jobs ended, %lld running, %.0f%% done",
               fdt_jint(b, "batch"), fdt_jint(b, "ended"), fdt_jint(b, "jobs"),
               fdt_jint(b, "running"), 100 * fdt_jnum(b, "done_share"));
        print_eta(b);
        printf("\n");
    }
}

/* The daemon's state as one row: what it is and how many jobs are in each state. */
static fdt_table *status_table(const json_t *answer)
{
    static const char *const columns[] = {"VERSION", ">PID", "BACKEND", ">UPTIME S", ">QUEUED",
                                          ">RUNNING", ">DONE", ">FAILED", ">CANCELLED", NULL};
    fdt_table *t = fdt_table_new(columns);
    const json_t *jobs = json_object_get(answer, "jobs");
    _Static_assert(sizeof columns / sizeof columns[0] == 4 + FDT_JOB_STATES + 1,
                   "a column for each job state");
    char figures[2 + FDT_JOB_STATES][24];
    const char *row[4 + FDT_JOB_STATES] = {fdt_jstr(answer, "version"), figures[0],
                                           fdt_jstr(answer, "backend")};
    snprintf(figures[0], sizeof figures[0], "%lld", fdt_jint(answer, "pid"));
    snprintf(figures[1], sizeof figures[1], "%lld", fdt_jint(answer, "uptime_s"));
    row[3] = figures[1];
    for (int s = 0; s < FDT_JOB_STATES; s++) {
        snprintf(figures[2 + s], sizeof figures[2 + s], "%lld",
                 fdt_jint(jobs, fdt_job_state_name((fdt_job_state)s)));
        row[4 + s] = figures[2 + s];
    }
    if (t)
        fdt_table_row(t, row);
    return t;
}

/* status --format table|csv: the daemon's row, or the job's row of `jobs`. */
static int show_status_row(const json_t *answer, const listing *l)
{
    const json_t *job = json_object_get(answer, "job");
    fdt_table *t = json_is_object(job) ? fdt_jobs_table() : status_table(answer);
    if (t && json_is_object(job))
        fdt_jobs_table_row(t, job);
    return print_listing(t, l, 1, "status");
}

static int show_status(const json_t *answer, void *ctx)
{
    const listing *l = ctx;
    if (l->table)
        return show_status_row(answer, l);
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
    printf("jobs     ");
    for (int s = 0; s < FDT_JOB_STATES; s++)
        printf("%s %lld %s", s ? "," : "", fdt_jint(jobs, fdt_job_state_name((fdt_job_state)s)),
               fdt_job_state_name((fdt_job_state)s));
    printf("\n");
    print_batches(json_object_get(answer, "batches"));
    print_workers(json_object_get(answer, "workers"));
    return FDT_EXIT_OK;
}

static const struct option status_options[] = {
    FDT_DAEMON_OPTIONS,
    LISTING_OPTIONS,
    {NULL, 0, NULL, 0},
};

static int status_option(int opt, const char *arg, void *ctx)
{
    listing *l = ctx;
    if (opt != OPT_FORMAT)
        return listing_option(l, opt, arg) < 0 ? -1 : 0;
    if (strcmp(arg, "text") == 0) {
        *l = (listing){.format = FDT_TABLE_TEXT, .noheader = l->noheader};
        return 0;
    }
    if (strcmp(arg, "table") && strcmp(arg, "csv") && strcmp(arg, "json")) {
        fprintf(stderr, "fdtune: --format must be text, table, csv or json, not '%s'\n", arg);
        return -1;
    }
    l->json = 0;
    listing_option(l, opt, arg);
    l->table = !l->json;
    return 0;
}

int fdt_cmd_status(int argc, char **argv)
{
    fdt_daemon_args a;
    listing l = {FDT_TABLE_TEXT, 0, 0, 0};
    const int parsed = fdt_daemon_parse(argc, argv, "h", status_options, status_help,
                                        status_option, &l, &a);
    if (parsed)
        return parsed > 0 ? FDT_EXIT_OK : FDT_EXIT_USAGE;
    if (a.npos > 1)
        return fdt_usage_error("status", "unexpected argument '%s'", a.pos[1]);
    long long id = 0;
    if (a.npos == 1 && parse_job_id(a.pos[0], &id))
        return FDT_EXIT_USAGE;
    a.json |= l.json;
    json_t *req = id ? job_request("status", id) : fdt_request("status");
    return fdt_client_run("status", &a, req, show_status, &l);
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
    static const char *const columns[] = {">DEV", "BACKEND", "NAME", "ARCH", ">CUs",
                                          ">MEMORY", ">L2", ">COPY GB/s", ">L2 GB/s", "DRIVER",
                                          "COMPILER", "WORKER", "BALANCE DOUBT", NULL};
    const json_t *devices = json_object_get(answer, "devices");
    fdt_table *t = fdt_table_new(columns);
    size_t i;
    const json_t *d;
    json_array_foreach(devices, i, d) {
        char index[16], units[16], memory[32], l2[32], copy[32], l2_gbps[32];
        snprintf(index, sizeof index, "%lld", fdt_jint(d, "index"));
        snprintf(units, sizeof units, "%lld", fdt_jint(d, "compute_units"));
        snprintf(memory, sizeof memory, "%.1f GiB", fdt_jnum(d, "memory_bytes") / 1073741824.0);
        snprintf(l2, sizeof l2, "%.0f MiB", fdt_jnum(d, "l2_bytes") / 1048576.0);
        const char *const row[] = {index, fdt_jstr(d, "backend"), fdt_jstr(d, "name"),
                                   fdt_jstr(d, "arch"), units, memory, l2,
                                   balance_text(d, "copy_gbps", copy, sizeof copy),
                                   balance_text(d, "l2_gbps", l2_gbps, sizeof l2_gbps),
                                   fdt_jstr(d, "driver"), fdt_jstr(d, "compiler"),
                                   fdt_jstr(d, "worker"),
                                   fdt_jstr(json_object_get(d, "balance"), "doubt")};
        if (t)
            fdt_table_row(t, row);
    }
    return print_listing(t, ctx, json_array_size(devices), "devices");
}

static const struct option devices_options[] = {
    FDT_DAEMON_OPTIONS,
    LISTING_OPTIONS,
    {NULL, 0, NULL, 0},
};

static int devices_option(int opt, const char *arg, void *ctx)
{
    return listing_option(ctx, opt, arg) < 0 ? -1 : 0;
}

int fdt_cmd_devices(int argc, char **argv)
{
    fdt_daemon_args a;
    listing l = {FDT_TABLE_TEXT, 0, 0, 0};
    const int parsed = fdt_daemon_parse(argc, argv, "h", devices_options, devices_help,
                                        devices_option, &l, &a);
    if (parsed)
        return parsed > 0 ? FDT_EXIT_OK : FDT_EXIT_USAGE;
    if (a.npos)
        return fdt_usage_error("devices", "unexpected argument '%s'", a.pos[0]);
    a.json |= l.json;
    return fdt_client_run("devices", &a, fdt_request("devices"), show_devices, &l);
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


static const struct option jobs_options[] = {
    FDT_DAEMON_OPTIONS,
    {"state", required_argument, NULL, OPT_STATE},
    {"limit", required_argument, NULL, OPT_LIMIT},
    LISTING_OPTIONS,
    {NULL, 0, NULL, 0},
};

typedef struct jobs_args {
    const char *state;
    long limit;
    listing list;
} jobs_args;

static int jobs_option(int opt, const char *arg, void *ctx)
{
    jobs_args *j = ctx;
    const int taken = listing_option(&j->list, opt, arg);
    if (taken)
        return taken < 0 ? -1 : 0;
    if (opt == OPT_LIMIT)
        return fdt_parse_int(arg, 1, 10000, "--limit", &j->limit);
    if (fdt_job_state_parse(arg) != FDT_JOB_STATES) {
        j->state = arg;
        return 0;
    }
    char states[64];
    fdt_job_states_text(states, sizeof states);
    fprintf(stderr, "fdtune: --state must be %s, not '%s'\n", states, arg);
    return -1;
}

static int show_jobs(const json_t *answer, void *ctx)
{
    const json_t *jobs = json_object_get(answer, "jobs");
    fdt_table *t = fdt_jobs_table();
    size_t i;
    const json_t *job;
    json_array_foreach(jobs, i, job)
        if (t)
            fdt_jobs_table_row(t, job);
    return print_listing(t, ctx, json_array_size(jobs), "jobs");
}

int fdt_cmd_jobs(int argc, char **argv)
{
    fdt_daemon_args a;
    jobs_args j = {NULL, 0, {FDT_TABLE_TEXT, 0, 0, 0}};
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
    a.json |= j.list.json;
    return fdt_client_run("jobs", &a, req, show_jobs, &j.list);
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

/* Where the pages go: the output is opened at the first page, so that an export the
 * daemon refuses leaves no file behind. */
typedef struct export_out {
    const export_args *args;
    FILE *out;
    long long rows;   /* JSON rows written so far: each after the first needs a comma */
} export_out;

static int is_json(const export_out *o)
{
    return strcmp(o->args->format, "json") == 0;
}

static int open_output(export_out *o)
{
    if (o->out)
        return 0;
    o->out = o->args->output ? fopen(o->args->output, "w") : stdout;
    if (!o->out) {
        fprintf(stderr, "fdtune export: cannot write %s: %s\n", o->args->output,
                strerror(errno));
        return -1;
    }
    if (is_json(o))
        fputs("[", o->out);
    return 0;
}

/* One page, written as it came: CSV text as the daemon made it (the first page begins with
 * the header), JSON rows one per line inside one array. */
static int write_page(const json_t *answer, void *ctx)
{
    export_out *o = ctx;
    if (open_output(o) != 0)
        return -1;
    if (!is_json(o)) {
        fputs(fdt_jstr(answer, "data"), o->out);
        return 0;
    }
    size_t i;
    const json_t *row;
    json_array_foreach(json_object_get(answer, "rows"), i, row) {
        fputs(o->rows++ ? ",\n" : "\n", o->out);
        json_dumpf(row, o->out, JSON_COMPACT);
    }
    return 0;
}

/* Ends the output. A file of an export that failed part way is removed: a truncated export
 * must never pass for a whole one. */
static int close_output(export_out *o, int ok)
{
    if (!o->out)
        return 0;
    if (ok && is_json(o))
        fputs("\n]\n", o->out);
    const int failed = o->out == stdout ? fflush(o->out) != 0 || ferror(o->out)
                                        : fclose(o->out) != 0;
    if (ok && failed)
        fprintf(stderr, "fdtune export: writing %s: %s\n",
                o->args->output ? o->args->output : "the output", strerror(errno));
    if ((!ok || failed) && o->args->output)
        unlink(o->args->output);
    return failed ? -1 : 0;
}

/* Writes each page as it arrives (--json: the daemon's answers are printed as they came). */
static int export_pages(fdt_client *c, const export_args *e)
{
    export_out o = {.args = e};
    int rc = fdt_client_export(c, e->what, e->format, c->json ? NULL : write_page, &o);
    if (rc == FDT_EXIT_OK && !c->json && open_output(&o) != 0) /* no page wrote: empty */
        rc = FDT_EXIT_FAILED;
    if (close_output(&o, rc == FDT_EXIT_OK) != 0 && rc == FDT_EXIT_OK)
        rc = FDT_EXIT_FAILED;
    return rc;
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
    fdt_client c;
    int rc = fdt_client_open(&c, "export", &a);
    if (rc == FDT_EXIT_OK)
        rc = export_pages(&c, &e);
    fdt_client_close(&c);
    return rc;
}
