/* cmd_report.c - fdtune report: the store read through the daemon, its devices (their
 * balance), then every best row and every result, page by page as export answers them, and
 * written as one self-contained HTML page (report.c). The page is written beside its target
 * under a temporary name and renamed over it once whole and on disk, so that a report that
 * fails, whatever the reason, leaves the target as it was and no part of a page behind. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_daemon.h"
#include "commands.h"
#include "report.h"
#include "result_row.h"

static const char report_help[] =
    "usage: fdtune report -o FILE [options]\n\n"
    "An HTML page of the store: each device's balance and its tuned problems' best GB/s\n"
    "against kernel 1, the copy and the interior copy (doubtful figures marked); and each\n"
    "problem's evaluations by block shape, m and mz, a heatmap of the best GB/s by bx and by,\n"
    "and each job's best so far against its evaluations. One file, its plots inline SVG: it\n"
    "fetches nothing and opens in any browser.\n\n"
    "  -o, --output FILE         write the page to FILE (- for standard output); required.\n"
    "                            FILE is replaced only once the page is whole\n"
    "  --device N|FINGERPRINT    only this device: the daemon's index, or a fingerprint\n"
    "                            (16 hex digits: fdtune devices --format json, or the\n"
    "                            report's own) for a device the daemon no longer has\n"
    FDT_DAEMON_HELP;

enum { OPT_DEVICE_FILTER = FDT_OPT_OWN };

static const struct option report_options[] = {
    FDT_DAEMON_OPTIONS,
    {"output", required_argument, NULL, 'o'},
    {"device", required_argument, NULL, OPT_DEVICE_FILTER},
    {NULL, 0, NULL, 0},
};

typedef struct report_args {
    const char *output;
    const char *device; /* --device as given, NULL: every device */
    long index;         /* --device N, or -1 */
} report_args;

static int is_fingerprint(const char *s)
{
    size_t n = 0;
    while (isxdigit((unsigned char)s[n]))
        n++;
    return n == 16 && s[n] == '\0';
}

static int report_option(int opt, const char *arg, void *ctx)
{
    report_args *r = ctx;
    if (opt == 'o') {
        r->output = arg;
        return 0;
    }
    r->device = arg;
    if (is_fingerprint(arg))
        return 0;
    if (arg[0] && arg[strspn(arg, "0123456789")] == '\0')
        return fdt_parse_int(arg, 0, 1024, "--device", &r->index);
    fprintf(stderr, "fdtune report: --device must be the daemon's device index or a device's "
            "fingerprint (16 hex digits), not '%s'\n", arg);
    return -1;
}

/* ---- the store's rows, gathered --------------------------------------------------------- */

typedef struct gather {
    fdt_report *r;
    const report_args *args;
    char fingerprint[20]; /* the device --device names, once known; "" for every device */
    size_t cap_devices, cap_best, cap_results;
} gather;

/* Room for one more element of size in *array, holding n of *cap. */
static int grow(void **array, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    const size_t more = *cap ? 2 * *cap : 64;
    void *bigger = realloc(*array, more * size);
    if (!bigger) {
        fprintf(stderr, "fdtune report: out of memory\n");
        return -1;
    }
    *array = bigger;
    *cap = more;
    return 0;
}

static int wanted(const gather *g, const char *fingerprint)
{
    return !g->fingerprint[0] || strcmp(g->fingerprint, fingerprint) == 0;
}

static fdt_report_device *find_device(const gather *g, const char *fingerprint)
{
    for (size_t i = 0; i < g->r->ndevices; i++)
        if (strcmp(g->r->devices[i].fingerprint, fingerprint) == 0)
            return &g->r->devices[i];
    return NULL;
}

static fdt_report_device *add_device(gather *g, const char *fingerprint)
{
    if (grow((void **)&g->r->devices, &g->cap_devices, g->r->ndevices, sizeof *g->r->devices))
        return NULL;
    fdt_report_device *d = &g->r->devices[g->r->ndevices++];
    memset(d, 0, sizeof *d);
    d->index = -1;
    fdt_copy_text(d->fingerprint, sizeof d->fingerprint, fingerprint);
    return d;
}

/* A device of the daemon's answer (docs/protocol.md, "devices"). */
static int daemon_device(gather *g, const json_t *j)
{
    fdt_report_device *d = add_device(g, fdt_jstr(j, "fingerprint"));
    if (!d)
        return -1;
    const json_t *balance = json_object_get(j, "balance");
    d->index = (int)fdt_jint(j, "index");
    fdt_copy_text(d->info.name, sizeof d->info.name, fdt_jstr(j, "name"));
    fdt_copy_text(d->info.backend, sizeof d->info.backend, fdt_jstr(j, "backend"));
    fdt_copy_text(d->info.arch, sizeof d->info.arch, fdt_jstr(j, "arch"));
    fdt_copy_text(d->info.driver_version, sizeof d->info.driver_version, fdt_jstr(j, "driver"));
    fdt_copy_text(d->info.compiler_version, sizeof d->info.compiler_version,
                  fdt_jstr(j, "compiler"));
    d->info.l2_bytes = (uint64_t)fdt_jnum(j, "l2_bytes");
    d->balance.copy_gbps = fdt_jnum(balance, "copy_gbps");
    d->balance.l2_gbps = fdt_jnum(balance, "l2_gbps");
    d->balance.measured = fdt_jint(balance, "measured");
    return 0;
}

/* The daemon's devices; --device N becomes that device's fingerprint. */
static int gather_devices(fdt_client *c, gather *g)
{
    json_t *answer;
    int rc = fdt_client_call(c, fdt_request("devices"), &answer);
    size_t i;
    const json_t *d;
    json_array_foreach(json_object_get(answer, "devices"), i, d) {
        const int chosen = g->args->index >= 0 ? fdt_jint(d, "index") == g->args->index
                                               : wanted(g, fdt_jstr(d, "fingerprint"));
        if (rc == FDT_EXIT_OK && chosen && daemon_device(g, d) != 0)
            rc = FDT_EXIT_FAILED;
    }
    json_decref(answer);
    if (rc == FDT_EXIT_OK && g->args->index >= 0) {
        if (g->r->ndevices == 0) {
            fprintf(stderr, "fdtune report: the daemon has no device %ld (fdtune devices "
                    "lists them)\n", g->args->index);
            return FDT_EXIT_FAILED;
        }
        fdt_copy_text(g->fingerprint, sizeof g->fingerprint, g->r->devices[0].fingerprint);
    }
    return rc;
}

/* The device a row names: the daemon's, or one only the store still knows (its name from
 * the row). */
static int row_device(gather *g, const json_t *row)
{
    const char *fingerprint = fdt_jstr(row, "fingerprint");
    if (find_device(g, fingerprint))
        return 0;
    fdt_report_device *d = add_device(g, fingerprint);
    if (!d)
        return -1;
    fdt_copy_text(d->info.name, sizeof d->info.name, fdt_jstr(row, "device"));
    return 0;
}

/* Says that an exported row holds a value of field this fdtune cannot read (a daemon of
 * another version's); returns -1. */
static int unreadable(const json_t *row, const char *field)
{
    char *text = json_dumps(row, JSON_COMPACT);
    fprintf(stderr, "fdtune report: an exported row whose %s this fdtune cannot read: %.300s\n",
            field, text ? text : "");
    free(text);
    return -1;
}

/* A row's problem, from the columns every export row begins with. */
static int row_problem(const json_t *row, fdt_problem *p)
{
    memset(p, 0, sizeof *p);
    fdt_copy_text(p->stencil, sizeof p->stencil, fdt_jstr(row, "stencil"));
    p->radius = (int)fdt_jint(row, "radius");
    p->nx = (int)fdt_jint(row, "nx"), p->ny = (int)fdt_jint(row, "ny");
    p->nz = (int)fdt_jint(row, "nz");
    p->pitch = (int)fdt_jint(row, "pitch"); /* 0 in a format 1 row: dense */
    p->offset = (int)fdt_jint(row, "offset");
    fdt_problem_canonical_layout(p);
    if (fdt_precision_parse(fdt_jstr(row, "precision"), &p->precision) != 0)
        return unreadable(row, "precision");
    if (fdt_cache_mode_parse(fdt_jstr(row, "cache"), &p->cache) != 0)
        return unreadable(row, "cache");
    return 0;
}

static int best_row(gather *g, const json_t *row)
{
    fdt_report *r = g->r;
    if (row_device(g, row) != 0 || grow((void **)&r->best, &g->cap_best, r->nbest, sizeof *r->best))
        return -1;
    fdt_report_best *b = &r->best[r->nbest];
    memset(b, 0, sizeof *b);
    if (row_problem(row, &b->problem) != 0)
        return -1;
    if (fdt_cache_mode_parse(fdt_jstr(row, "state"), &b->state) != 0)
        return unreadable(row, "state");
    fdt_copy_text(b->fingerprint, sizeof b->fingerprint, fdt_jstr(row, "fingerprint"));
    fdt_copy_text(b->variant, sizeof b->variant, fdt_jstr(row, "variant"));
    fdt_copy_text(b->doubt, sizeof b->doubt, fdt_jstr(row, "doubt"));
    b->gbps = fdt_jnum(row, "gbps");
    b->kernel1_gbps = fdt_jnum(row, "kernel1_gbps");
    b->copy_gbps = fdt_jnum(row, "copy_gbps");
    b->interior_copy_gbps = fdt_jnum(row, "interior_copy_gbps");
    b->job = fdt_jint(row, "job");
    r->nbest++;
    return 0;
}

static int result_row(gather *g, const json_t *row)
{
    fdt_report *r = g->r;
    if (row_device(g, row) != 0 ||
        grow((void **)&r->results, &g->cap_results, r->nresults, sizeof *r->results))
        return -1;
    fdt_report_result *x = &r->results[r->nresults];
    memset(x, 0, sizeof *x);
    if (row_problem(row, &x->problem) != 0)
        return -1;
    char err[160];
    if (fdt_variant_parse(fdt_jstr(row, "variant"), &x->variant, err, sizeof err) != 0)
        x->variant.family = NULL; /* another version's family: counted, not placed */
    fdt_copy_text(x->fingerprint, sizeof x->fingerprint, fdt_jstr(row, "fingerprint"));
    x->order = r->nresults;
    x->job = fdt_jint(row, "job");
    x->gbps = fdt_jnum(row, "gbps");
    x->ok = strcmp(fdt_jstr(row, "status"), "ok") == 0 && x->gbps > 0;
    x->leader = json_is_true(json_object_get(row, "leader"));
    x->cost_s = fdt_result_cost_s(fdt_jnum(row, "compile_ms"), fdt_jnum(row, "samples"),
                                  fdt_jnum(row, "reps"), fdt_jnum(row, "median_ms"));
    r->nresults++;
    return 0;
}

/* A page of best rows or of results: each row of a wanted device, kept. */
static int keep_page(const json_t *answer, gather *g, int (*keep)(gather *, const json_t *))
{
    size_t i;
    const json_t *row;
    json_array_foreach(json_object_get(answer, "rows"), i, row)
        if (wanted(g, fdt_jstr(row, "fingerprint")) && keep(g, row) != 0)
            return -1;
    return 0;
}

static int best_page(const json_t *answer, void *ctx)
{
    return keep_page(answer, ctx, best_row);
}

static int results_page(const json_t *answer, void *ctx)
{
    return keep_page(answer, ctx, result_row);
}

static int gather_store(fdt_client *c, gather *g)
{
    if (g->args->device && g->args->index < 0)
        fdt_copy_text(g->fingerprint, sizeof g->fingerprint, g->args->device);
    int rc = gather_devices(c, g);
    if (rc == FDT_EXIT_OK)
        rc = fdt_client_export(c, "best", "json", best_page, g);
    if (rc == FDT_EXIT_OK)
        rc = fdt_client_export(c, "results", "json", results_page, g);
    if (rc == FDT_EXIT_OK && g->args->device && g->r->ndevices == 0) {
        fprintf(stderr, "fdtune report: no device of fingerprint %s, among the daemon's or "
                "in the store\n", g->fingerprint);
        rc = FDT_EXIT_FAILED;
    }
    return rc;
}

/* ---- the file ----------------------------------------------------------------------------- */

/* The page is made in memory and written out whole at the end, so that a write that fails
 * says why: a stream flushed part way, as stdio does, drops the reason of a write that
 * failed before the last (a full disk then read "a write failed", tests/test_report.sh). */
typedef struct output {
    const char *path;         /* NULL: standard output */
    char tmp[FDT_PATH_MAX];   /* the page until it is whole: path.XXXXXX, beside it */
    int fd;                   /* tmp's, or the standard output's */
    FILE *out;                /* the page being made (open_memstream) */
    char *page;
    size_t size;
} output;

/* Opens the temporary file beside the target (so that the rename cannot cross file
 * systems), with the mode a new file of this user's gets, and the page in memory. */
static int output_open(output *o)
{
    o->fd = STDOUT_FILENO;
    if (o->path &&
        snprintf(o->tmp, sizeof o->tmp, "%s.XXXXXX", o->path) >= (int)sizeof o->tmp) {
        fprintf(stderr, "fdtune report: cannot write %s: the name is too long\n", o->path);
        return -1;
    }
    if (o->path && (o->fd = mkstemp(o->tmp)) < 0) {
        fprintf(stderr, "fdtune report: cannot write %s: cannot create %s beside it: %s\n",
                o->path, o->tmp, strerror(errno));
        return -1;
    }
    const mode_t mask = umask(0);
    umask(mask);
    if ((o->path && fchmod(o->fd, 0666 & ~mask) != 0) ||
        !(o->out = open_memstream(&o->page, &o->size))) {
        fprintf(stderr, "fdtune report: cannot write %s: %s\n", o->path ? o->tmp : "the page",
                strerror(errno));
        if (o->path) {
            close(o->fd);
            unlink(o->tmp);
        }
        return -1;
    }
    return 0;
}

static void output_discard(output *o)
{
    fclose(o->out);
    free(o->page);
    if (o->path) {
        close(o->fd);
        unlink(o->tmp);
    }
}

/* Makes the page the target's: written whole, on disk, renamed over it; or says why not
 * and removes the temporary file. */
static int output_commit(output *o)
{
    const char *name = o->path ? o->path : "the standard output";
    int why = fclose(o->out) != 0 ? (errno ? errno : ENOMEM) : 0;
    if (!why && fdt_write_all(o->fd, o->page, o->size) != 0)
        why = errno;
    free(o->page);
    if (!why && o->path && fsync(o->fd) != 0)
        why = errno;
    if (o->path && close(o->fd) != 0 && !why)
        why = errno;
    if (!why && o->path && rename(o->tmp, o->path) != 0)
        why = errno;
    if (!why)
        return 0;
    fprintf(stderr, "fdtune report: writing %s: %s\n", name, strerror(why));
    if (o->path)
        unlink(o->tmp);
    return -1;
}

/* ---- the command -------------------------------------------------------------------------- */

static int report(const fdt_daemon_args *a, const report_args *args)
{
    output o = {.path = strcmp(args->output, "-") == 0 ? NULL : args->output};
    if (output_open(&o) != 0)
        return FDT_EXIT_FAILED;
    fdt_report r = {0};
    gather g = {.r = &r, .args = args};
    fdt_client c;
    int rc = fdt_client_open(&c, "report", a);
    if (rc == FDT_EXIT_OK)
        rc = gather_store(&c, &g);
    r.source = c.socket;
    if (rc == FDT_EXIT_OK && fdt_report_write(&r, o.out) != 0)
        rc = FDT_EXIT_FAILED;
    if (rc == FDT_EXIT_OK)
        rc = output_commit(&o) == 0 ? FDT_EXIT_OK : FDT_EXIT_FAILED;
    else
        output_discard(&o);
    fdt_client_close(&c);
    fdt_report_free(&r);
    return rc;
}

int fdt_cmd_report(int argc, char **argv)
{
    fdt_daemon_args a;
    report_args args = {NULL, NULL, -1};
    const int parsed = fdt_daemon_parse(argc, argv, "ho:", report_options, report_help,
                                        report_option, &args, &a);
    if (parsed)
        return parsed > 0 ? FDT_EXIT_OK : FDT_EXIT_USAGE;
    if (a.npos)
        return fdt_usage_error("report", "unexpected argument '%s'", a.pos[0]);
    if (!args.output)
        return fdt_usage_error("report", "expected -o FILE, where the page goes (- for "
                               "standard output)");
    if (a.json)
        return fdt_usage_error("report", "the report is an HTML page; --json does not go "
                               "with it (fdtune export --format json gives the rows)");
    return report(&a, &args);
}
