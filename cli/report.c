/* report.c - fdtune report's page: a section per device (its balance, and its tuned
 * problems' best figures beside kernel 1, the copy and the interior copy, as a table and as
 * bars, doubtful ones marked) and, within it, a section per problem measured there (every
 * evaluation's GB/s by block shape, m and mz, coloured by family; a heatmap of the best GB/s
 * by bx and by; each job's best so far against its evaluations, in the order they were
 * stored, and against the seconds they took to compile and measure). A variant's family and parameters come from its name through engine/variant.c's
 * parser, the one every part reads names with. Every text from the store is escaped
 * (html.h). */
#include "report.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "html.h"
#include "plot.h"
#include "version.h"

static const char style[] =
    "body{font:14px/1.45 system-ui,sans-serif;color:#222;margin:2em auto;max-width:1200px;"
    "padding:0 1em}\n"
    "h2{border-bottom:2px solid #1f77b4;margin-top:2.5em}h3{margin-top:2em}\n"
    "table{border-collapse:collapse;margin:.8em 0}th,td{padding:.25em .6em;"
    "border-bottom:1px solid #ddd;text-align:right}th{background:#f3f3f3}\n"
    "td.text,th.text{text-align:left}tr.doubt td{background:#fdecea}\n"
    "td.doubt{color:#a61b1b;text-align:left;font-weight:600}\n"
    ".plots{display:flex;flex-wrap:wrap;gap:1em}figure.plot{margin:0;overflow-x:auto;"
    "max-width:100%}figcaption{font-weight:600;margin:.3em 0}\n"
    "svg text{font-size:11px;fill:#333}.axis{fill:none;stroke:#333}.grid{stroke:#e6e6e6}\n"
    ".axis-title{font-weight:600}.point{fill-opacity:.75}.line{stroke-width:2}\n"
    "svg text.on-dark{fill:#fff}.doubt{fill:#d62728}.rule-label{fill:#d62728}\n"
    ".rule{stroke:#d62728;stroke-dasharray:5 4}\n"
    ".legend{font-size:12px;max-width:520px}.key{margin-right:1em;white-space:nowrap}\n"
    ".swatch{display:inline-block;width:.9em;height:.9em;margin-right:.3em;"
    "vertical-align:-.1em}\n.note{color:#555}.fingerprint{font-family:monospace}\n";

/* ---- rows ------------------------------------------------------------------------------- */

static int problem_cmp(const fdt_problem *a, const fdt_problem *b)
{
    const int order[] = {a->radius - b->radius, (int)a->precision - (int)b->precision,
                         a->nx - b->nx, a->ny - b->ny, a->nz - b->nz,
                         (int)a->cache - (int)b->cache,
                         fdt_problem_pitch(a) - fdt_problem_pitch(b), a->offset - b->offset};
    const int stencil = strcmp(a->stencil, b->stencil);
    if (stencil)
        return stencil;
    for (size_t i = 0; i < sizeof order / sizeof *order; i++)
        if (order[i])
            return order[i] < 0 ? -1 : 1;
    return 0;
}

/* Device, problem, then the order they were stored in. */
static int result_cmp(const void *pa, const void *pb)
{
    const fdt_report_result *a = pa, *b = pb;
    const int device = strcmp(a->fingerprint, b->fingerprint);
    if (device)
        return device;
    const int problem = problem_cmp(&a->problem, &b->problem);
    if (problem)
        return problem;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* The end of the run of rows from `from` that are one problem's (the rows sorted). */
static size_t problem_end(const fdt_report *r, size_t from)
{
    size_t end = from + 1;
    while (end < r->nresults &&
           strcmp(r->results[end].fingerprint, r->results[from].fingerprint) == 0 &&
           problem_cmp(&r->results[end].problem, &r->results[from].problem) == 0)
        end++;
    return end;
}

/* The first row of device d's problems, r->nresults where it has none. */
static size_t device_start(const fdt_report *r, const fdt_report_device *d)
{
    size_t i = 0;
    while (i < r->nresults && strcmp(r->results[i].fingerprint, d->fingerprint) != 0)
        i++;
    return i;
}

static int of_device(const fdt_report *r, size_t i, const fdt_report_device *d)
{
    return i < r->nresults && strcmp(r->results[i].fingerprint, d->fingerprint) == 0;
}

/* An evaluation whose speed is ranked: a point of the parameter plots and the heatmap. */
static int ranked(const fdt_report_result *row)
{
    return !row->leader && row->ok && row->variant.family;
}

static size_t family_index(const fdt_family *f)
{
    const fdt_family *const *all = fdt_families();
    size_t i = 0;
    while (all[i] && all[i] != f)
        i++;
    return i;
}

/* ---- text ------------------------------------------------------------------------------- */

/* A padded layout is named after the shape: "96x96x2048 pitch 100 offset 3, ...". */
static void problem_text(const fdt_problem *p, char *buf, size_t len)
{
    char layout[48] = "";
    if (!fdt_problem_dense(p))
        snprintf(layout, sizeof layout, " pitch %d offset %d", fdt_problem_pitch(p), p->offset);
    snprintf(buf, len, "%dx%dx%d%s, %s radius %d, %s, cache %s", p->nx, p->ny, p->nz, layout,
             p->stencil, p->radius, fdt_precision_name(p->precision),
             fdt_cache_mode_name(p->cache));
}

static const char *plural(size_t n)
{
    return n == 1 ? "" : "s";
}

/* A figure in GB/s, "-" where it was not timed (0). */
static void cell_gbps(FILE *out, double gbps)
{
    if (gbps > 0)
        fprintf(out, "<td>%.1f</td>", gbps);
    else
        fputs("<td>-</td>", out);
}

/* A share of a ceiling in percent, "-" where either figure is missing. */
static void cell_share(FILE *out, double part, double whole)
{
    if (part > 0 && whole > 0)
        fprintf(out, "<td>%.0f%%</td>", 100 * part / whole);
    else
        fputs("<td>-</td>", out);
}

static void cell_text(FILE *out, const char *text)
{
    fputs("<td class=\"text\">", out);
    fdt_html_text(out, text);
    fputs("</td>", out);
}

/* ---- the page's head and contents --------------------------------------------------------- */

static void write_head(FILE *out, const fdt_report *r)
{
    char when[64];
    const time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<title>fdtuned report</title>\n<style>\n%s</style>\n</head>\n<body>\n"
            "<h1>fdtuned report</h1>\n<p>%zu device%s, %zu best row%s, %zu result%s, read "
            "from the daemon at ", style, r->ndevices, plural(r->ndevices), r->nbest,
            plural(r->nbest), r->nresults, plural(r->nresults));
    fdt_html_text(out, r->source);
    fprintf(out, " by fdtune %s on %s.</p>\n<p class=\"note\">A problem's evaluations are its "
            "jobs' first measurements of each variant, in the order the store keeps them; the "
            "leaders' second, longer timings are counted apart. A point is an evaluation that "
            "ran and was right; hover over a mark for its variant.</p>\n", FDT_VERSION, when);
}

static void write_contents(FILE *out, const fdt_report *r)
{
    size_t problem = 0;
    fputs("<nav><h2>Contents</h2>\n<ul>\n", out);
    for (size_t d = 0; d < r->ndevices; d++) {
        fprintf(out, "<li><a href=\"#device-%zu\">", d);
        fdt_html_text(out, r->devices[d].info.name);
        fputs("</a><ul>\n", out);
        for (size_t i = device_start(r, &r->devices[d]); of_device(r, i, &r->devices[d]);
             i = problem_end(r, i)) {
            char text[160];
            problem_text(&r->results[i].problem, text, sizeof text);
            fprintf(out, "<li><a href=\"#problem-%zu\">", problem++);
            fdt_html_text(out, text);
            fputs("</a></li>\n", out);
        }
        fputs("</ul></li>\n", out);
    }
    fputs("</ul></nav>\n", out);
}

/* ---- a device ----------------------------------------------------------------------------- */

static void write_device_head(FILE *out, const fdt_report_device *d, size_t at)
{
    fprintf(out, "<section class=\"device\" id=\"device-%zu\" data-fingerprint=\"", at);
    fdt_html_text(out, d->fingerprint);
    fputs("\">\n<h2>", out);
    fdt_html_text(out, d->info.name);
    fputs("</h2>\n<p>fingerprint <span class=\"fingerprint\">", out);
    fdt_html_text(out, d->fingerprint);
    fputs("</span>", out);
    if (d->index < 0) {
        fputs("; not among the daemon's devices at its start-up: its balance is not known "
              "here</p>\n", out);
        return;
    }
    fprintf(out, "; the daemon's device %d, backend ", d->index);
    fdt_html_textf(out, "%s, %s, L2 %.0f MiB, driver %s, compiler %s", d->info.backend,
                   d->info.arch, (double)d->info.l2_bytes / 1048576.0, d->info.driver_version,
                   d->info.compiler_version);
    fputs("</p>\n<table class=\"balance\"><tr><th>copy GB/s</th><th>L2 GB/s</th>"
          "<th class=\"text\">balance measured</th></tr>\n<tr>", out);
    cell_gbps(out, d->balance.copy_gbps);
    cell_gbps(out, d->balance.l2_gbps);
    char when[32] = "not yet";
    const time_t t = (time_t)d->balance.measured;
    if (t > 0)
        strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime(&t));
    cell_text(out, when);
    fputs("</tr></table>\n", out);
}

/* The figures of a best row the bars show, beside each other. */
static const struct {
    const char *name;
    size_t at;
} series[] = {
    {"best variant", offsetof(fdt_report_best, gbps)},
    {"kernel 1", offsetof(fdt_report_best, kernel1_gbps)},
    {"copy", offsetof(fdt_report_best, copy_gbps)},
    {"interior copy", offsetof(fdt_report_best, interior_copy_gbps)},
};
#define NSERIES (sizeof series / sizeof *series)

static double series_value(const fdt_report_best *b, size_t s)
{
    return *(const double *)((const char *)b + series[s].at);
}

/* The device's best rows, in the export's order, in an array of their own (*n of them); NULL
 * when out of memory. */
static const fdt_report_best **device_best(const fdt_report *r, const fdt_report_device *d,
                                           size_t *n)
{
    const fdt_report_best **rows = malloc((r->nbest ? r->nbest : 1) * sizeof *rows);
    *n = 0;
    for (size_t i = 0; rows && i < r->nbest; i++)
        if (strcmp(r->best[i].fingerprint, d->fingerprint) == 0)
            rows[(*n)++] = &r->best[i];
    return rows;
}

static void best_row(FILE *out, const fdt_report_best *b, size_t number)
{
    char text[160];
    problem_text(&b->problem, text, sizeof text);
    fprintf(out, "<tr%s><td>%zu</td>", b->doubt[0] ? " class=\"doubt\"" : "", number);
    cell_text(out, text);
    if (b->problem.cache == FDT_CACHE_AUTO)
        fprintf(out, "<td class=\"text\">%s</td>", fdt_cache_mode_name(b->state));
    else
        fputs("<td class=\"text\">-</td>", out);
    cell_text(out, b->variant);
    cell_gbps(out, b->gbps);
    cell_gbps(out, b->kernel1_gbps);
    cell_share(out, b->gbps, b->kernel1_gbps);
    cell_gbps(out, b->copy_gbps);
    cell_share(out, b->gbps, b->copy_gbps);
    cell_gbps(out, b->interior_copy_gbps);
    cell_share(out, b->gbps, b->interior_copy_gbps);
    fprintf(out, "<td>%lld</td>", b->job);
    if (b->doubt[0]) {
        fputs("<td class=\"doubt\">&#9888; ", out);
        fdt_html_text(out, b->doubt);
        fputs("</td></tr>\n", out);
    } else {
        fputs("<td class=\"text\">-</td></tr>\n", out);
    }
}

static void best_table(FILE *out, const fdt_report_best *const *rows, size_t n)
{
    fputs("<table class=\"best\"><tr><th>#</th><th class=\"text\">problem</th>"
          "<th class=\"text\">chosen state</th><th class=\"text\">best variant</th><th>GB/s</th>"
          "<th>kernel 1 GB/s</th><th>of kernel 1</th><th>copy GB/s</th><th>of copy</th>"
          "<th>interior copy GB/s</th><th>of interior</th><th>job</th>"
          "<th class=\"text\">doubt</th></tr>\n", out);
    for (size_t i = 0; i < n; i++)
        best_row(out, rows[i], i + 1);
    fputs("</table>\n", out);
}

static void best_label(const void *ctx, size_t i, char *buf, size_t len)
{
    const fdt_report_best *const *rows = ctx;
    const fdt_problem *p = &rows[i]->problem;
    snprintf(buf, len, "%zu: %dx%dx%d", i + 1, p->nx, p->ny, p->nz);
}

static double best_top(const fdt_report_best *b)
{
    double top = 0;
    for (size_t s = 0; s < NSERIES; s++)
        top = series_value(b, s) > top ? series_value(b, s) : top;
    return top;
}

/* A best row's group of bars, one a series, and its doubt's mark above them. */
static void best_group(fdt_plot *p, const fdt_report_best *b, size_t i)
{
    char text[FDT_VARIANT_NAME_MAX + 64];
    for (size_t s = 0; s < NSERIES; s++) {
        const double x0 = (double)i + 0.1 + 0.2 * (double)s;
        snprintf(text, sizeof text, "#%zu %s: %.1f GB/s", i + 1, s ? series[s].name : b->variant,
                 series_value(b, s));
        fdt_plot_bar(p, x0, x0 + 0.18, series_value(b, s), fdt_plot_color(s), text);
    }
    if (b->doubt[0])
        fdt_plot_doubt(p, (double)i + 0.5, best_top(b), b->doubt);
}

/* The bars of the device's best rows. Its copy at start-up (the balance) is a rule across
 * them where it is on their scale (within twice the tallest), else named in the legend. */
static void best_bars(FILE *out, const fdt_report_device *d, size_t at,
                      const fdt_report_best *const *rows, size_t n)
{
    double top = 0;
    int doubtful = 0;
    for (size_t i = 0; i < n; i++) {
        top = best_top(rows[i]) > top ? best_top(rows[i]) : top;
        doubtful |= rows[i]->doubt[0] != '\0';
    }
    const double copy = d->balance.copy_gbps;
    const int on_scale = copy > 0 && copy <= 2 * top;
    char id[48], balance[96];
    snprintf(id, sizeof id, "device-%zu-best", at);
    snprintf(balance, sizeof balance, "device copy at start-up (balance): %.1f GB/s%s", copy,
             on_scale ? "" : ", off this scale");
    fdt_plot p = {.x = {"problem (# of the table)", (double)n, best_label, rows},
                  .y = {"GB/s", on_scale && copy > top ? copy : top, NULL, NULL},
                  .width = 80.0 + 64.0 * (double)n};
    fdt_plot_begin(&p, out, id, "best", "Best GB/s against kernel 1 and the copies");
    if (on_scale)
        fdt_plot_rule(&p, copy, balance);
    for (size_t i = 0; i < n; i++)
        best_group(&p, rows[i], i);
    fdt_plot_end(&p);
    for (size_t s = 0; s < NSERIES; s++)
        fdt_plot_key(out, fdt_plot_color(s), series[s].name);
    if (doubtful)
        fdt_plot_key(out, "#d62728", "doubtful figures (the table says why)");
    if (copy > 0 && !on_scale)
        fdt_plot_key(out, "#d62728", balance);
    fdt_plot_figure_end(&p);
}

static int write_device_best(FILE *out, const fdt_report *r, const fdt_report_device *d,
                             size_t at)
{
    size_t n;
    const fdt_report_best **rows = device_best(r, d, &n);
    if (!rows)
        return -1;
    fputs("<h3>Tuned problems</h3>\n", out);
    if (n == 0) {
        fputs("<p>No problem tuned to its end on this device.</p>\n", out);
    } else {
        best_table(out, rows, n);
        best_bars(out, d, at, rows, n);
    }
    free(rows);
    return 0;
}

/* ---- a problem's parameter plots ---------------------------------------------------------- */

/* The sorted distinct values of a key over a problem's ranked rows: an axis's categories. */
typedef struct keys {
    long long *v;
    size_t n;
} keys;

/* What a parameter plot puts on its x axis: the block shape, or one parameter. */
typedef struct view {
    const char *kind;  /* its data-plot and the end of its id */
    const char *title; /* its x axis's */
    int block;         /* the block shape, else param */
    fdt_param_id param;
} view;

static const view views[] = {
    {"block", "block (bx x by x bz)", 1, FDT_P_BX},
    {"m", "m (points per thread in y)", 0, FDT_P_M},
    {"mz", "mz (planes per thread in z)", 0, FDT_P_MZ},
};

/* A block's sides are at most 1024 (variant.c's bounds): 20 bits each keep them apart. */
static long long view_key(const view *w, const fdt_variant *v)
{
    if (w->block)
        return (long long)v->bx << 40 | (long long)v->by << 20 | v->bz;
    return fdt_param_value(v, w->param);
}

static int key_cmp(const void *a, const void *b)
{
    const long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

/* The categories of view w over rows[0..n); -1 when out of memory. */
static int keys_of(const fdt_report_result *rows, size_t n, const view *w, keys *k)
{
    k->n = 0;
    k->v = malloc((n ? n : 1) * sizeof *k->v);
    if (!k->v)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (ranked(&rows[i]))
            k->v[k->n++] = view_key(w, &rows[i].variant);
    qsort(k->v, k->n, sizeof *k->v, key_cmp);
    size_t distinct = 0;
    for (size_t i = 0; i < k->n; i++)
        if (distinct == 0 || k->v[i] != k->v[distinct - 1])
            k->v[distinct++] = k->v[i];
    k->n = distinct;
    return 0;
}

static size_t key_index(const keys *k, long long v)
{
    const long long *at = bsearch(&v, k->v, k->n, sizeof v, key_cmp);
    return (size_t)(at - k->v);
}

static void block_label(const void *ctx, size_t i, char *buf, size_t len)
{
    const long long v = ((const keys *)ctx)->v[i];
    snprintf(buf, len, "%lldx%lldx%lld", v >> 40, v >> 20 & 0xfffff, v & 0xfffff);
}

static void number_label(const void *ctx, size_t i, char *buf, size_t len)
{
    snprintf(buf, len, "%lld", ((const keys *)ctx)->v[i]);
}

static double fastest(const fdt_report_result *rows, size_t n)
{
    double top = 0;
    for (size_t i = 0; i < n; i++)
        if (ranked(&rows[i]) && rows[i].gbps > top)
            top = rows[i].gbps;
    return top;
}

/* The families of the ranked rows, as a legend: each once, in the families' order. */
static void family_keys(FILE *out, const fdt_report_result *rows, size_t n)
{
    for (const fdt_family *const *f = fdt_families(); *f; f++)
        for (size_t i = 0; i < n; i++)
            if (ranked(&rows[i]) && rows[i].variant.family == *f) {
                fdt_plot_key(out, fdt_plot_color(family_index(*f)), fdt_family_name(*f));
                break;
            }
}

static void point_title(const fdt_report_result *row, char *buf, size_t len)
{
    char name[FDT_VARIANT_NAME_MAX];
    fdt_variant_name(&row->variant, name, sizeof name);
    snprintf(buf, len, "%s: %.1f GB/s (job %lld)", name, row->gbps, row->job);
}

static int param_plot(FILE *out, const fdt_report_result *rows, size_t n, size_t problem,
                      const view *w)
{
    keys k;
    if (keys_of(rows, n, w, &k) != 0)
        return -1;
    char id[48], caption[96];
    snprintf(id, sizeof id, "problem-%zu-%s", problem, w->kind);
    snprintf(caption, sizeof caption, "GB/s by %s", w->kind);
    fdt_plot p = {.x = {w->title, (double)k.n, w->block ? block_label : number_label, &k},
                  .y = {"GB/s", fastest(rows, n), NULL, NULL}};
    fdt_plot_begin(&p, out, id, w->kind, caption);
    for (size_t i = 0; i < n; i++) {
        if (!ranked(&rows[i]))
            continue;
        /* families side by side within a category, so that one does not hide another */
        const size_t f = family_index(rows[i].variant.family);
        const double x = (double)key_index(&k, view_key(w, &rows[i].variant)) + 0.5 +
                         0.12 * ((double)(f % 5) - 2);
        char text[FDT_VARIANT_NAME_MAX + 48];
        point_title(&rows[i], text, sizeof text);
        fdt_plot_point(&p, x, rows[i].gbps, fdt_plot_color(f), text);
    }
    fdt_plot_end(&p);
    family_keys(out, rows, n);
    fdt_plot_figure_end(&p);
    free(k.v);
    return 0;
}

/* ---- a problem's heatmap ------------------------------------------------------------------ */

static const view bx_view = {"bx", "bx", 0, FDT_P_BX};
static const view by_view = {"by", "by", 0, FDT_P_BY};

/* The best GB/s of every (bx, by) cell, nx * ny of them, 0 where nothing ran right. */
static double *cell_best(const fdt_report_result *rows, size_t n, const keys *x, const keys *y)
{
    const size_t count = x->n * y->n;
    double *cells = calloc(count ? count : 1, sizeof *cells);
    for (size_t i = 0; cells && i < n; i++) {
        if (!ranked(&rows[i]))
            continue;
        const size_t c = key_index(x, view_key(&bx_view, &rows[i].variant)) * y->n +
                         key_index(y, view_key(&by_view, &rows[i].variant));
        if (rows[i].gbps > cells[c])
            cells[c] = rows[i].gbps;
    }
    return cells;
}

/* Draws the cells that ran right, shaded from the slowest cell (light) to the fastest;
 * range[] gets those two. */
static void heat_cells(fdt_plot *p, const double *cells, const keys *x, const keys *y,
                       double range[2])
{
    range[0] = range[1] = 0;
    for (size_t c = 0; c < x->n * y->n; c++)
        if (cells[c] > 0) {
            range[0] = range[0] == 0 || cells[c] < range[0] ? cells[c] : range[0];
            range[1] = cells[c] > range[1] ? cells[c] : range[1];
        }
    for (size_t c = 0; c < x->n * y->n; c++) {
        if (!(cells[c] > 0))
            continue;
        char text[96];
        const double t = range[1] > range[0] ? (cells[c] - range[0]) / (range[1] - range[0]) : 1;
        snprintf(text, sizeof text, "bx %lld, by %lld: best %.1f GB/s", x->v[c / y->n],
                 y->v[c % y->n], cells[c]);
        fdt_plot_cell(p, c / y->n, c % y->n, t, cells[c], text);
    }
}

/* The shades' legend: the slowest cell's and the fastest's. */
static void shade_keys(FILE *out, const double range[2])
{
    char color[8], text[64];
    fdt_plot_shade(0, color);
    snprintf(text, sizeof text, "%.1f GB/s", range[0]);
    fdt_plot_key(out, color, text);
    fdt_plot_shade(1, color);
    snprintf(text, sizeof text, "%.1f GB/s (a cell: its fastest variant)", range[1]);
    fdt_plot_key(out, color, text);
}

static int heatmap(FILE *out, const fdt_report_result *rows, size_t n, size_t problem)
{
    keys x, y;
    if (keys_of(rows, n, &bx_view, &x) != 0)
        return -1;
    if (keys_of(rows, n, &by_view, &y) != 0) {
        free(x.v);
        return -1;
    }
    double *cells = cell_best(rows, n, &x, &y);
    if (cells) {
        char id[48];
        snprintf(id, sizeof id, "problem-%zu-heatmap", problem);
        fdt_plot p = {.x = {"bx", (double)x.n, number_label, &x},
                      .y = {"by", (double)y.n, number_label, &y}};
        double range[2];
        fdt_plot_begin(&p, out, id, "heatmap", "Best GB/s by bx and by");
        heat_cells(&p, cells, &x, &y, range);
        fdt_plot_end(&p);
        shade_keys(out, range);
        fdt_plot_figure_end(&p);
    }
    free(cells);
    free(x.v);
    free(y.v);
    return cells ? 0 : -1;
}

/* ---- a problem's jobs --------------------------------------------------------------------- */

/* The jobs of a problem's evaluations, each once, in the order of their first. */
static long long *jobs_of(const fdt_report_result *rows, size_t n, size_t *count)
{
    long long *jobs = malloc((n ? n : 1) * sizeof *jobs);
    *count = 0;
    for (size_t i = 0; jobs && i < n; i++) {
        size_t j = 0;
        while (j < *count && jobs[j] != rows[i].job)
            j++;
        if (j == *count && !rows[i].leader)
            jobs[(*count)++] = rows[i].job;
    }
    return jobs;
}

static size_t evaluations(const fdt_report_result *rows, size_t n, long long job)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += !rows[i].leader && rows[i].job == job;
    return count;
}

/* What a job's progress is drawn against: its evaluations, or the seconds they took to
 * compile and measure (fdt_result_cost_s), summed: the time a job's budget_s counts. */
typedef struct axis {
    const char *kind, *title, *x_title;
    int seconds;
} axis;

static const axis axes[] = {
    {"progress", "Each job's best so far", "evaluations", 0},
    {"progress-time", "Each job's best so far against time", "seconds compiling and measuring",
     1},
};

/* Where evaluation row ends on the axis, the one before it ending at x. */
static double step_end(const axis *a, const fdt_report_result *row, double x)
{
    return x + (a->seconds ? row->cost_s : 1);
}

/* A job's evaluations on the axis: how far its last one ends. */
static double job_extent(const axis *a, const fdt_report_result *rows, size_t n, long long job)
{
    double x = 0;
    for (size_t i = 0; i < n; i++)
        if (!rows[i].leader && rows[i].job == job)
            x = step_end(a, &rows[i], x);
    return x;
}

/* Job's best so far as a staircase: over evaluation e (from where e - 1 ends to where e
 * ends), the fastest of the first e that ran right (0 before any did). */
static int job_line(fdt_plot *p, const axis *a, const fdt_report_result *rows, size_t n,
                    long long job, const char *color)
{
    const size_t count = evaluations(rows, n, job);
    double *xs = malloc(2 * count * sizeof *xs), *ys = malloc(2 * count * sizeof *ys);
    if (!xs || !ys) {
        free(xs);
        free(ys);
        return -1;
    }
    size_t e = 0;
    double best = 0, x = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].leader || rows[i].job != job)
            continue;
        if (rows[i].ok && rows[i].gbps > best)
            best = rows[i].gbps;
        xs[2 * e] = x;
        xs[2 * e + 1] = x = step_end(a, &rows[i], x);
        ys[2 * e] = ys[2 * e + 1] = best;
        e++;
    }
    char text[128];
    snprintf(text, sizeof text, "job %lld: best %.1f GB/s after %zu evaluations (%.1f s "
             "compiling and measuring)", job, best, count, job_extent(&axes[1], rows, n, job));
    fdt_plot_line(p, xs, ys, 2 * count, color, text);
    free(xs);
    free(ys);
    return 0;
}

static int progress(FILE *out, const axis *a, const fdt_report_result *rows, size_t n,
                    size_t problem)
{
    size_t njobs;
    double longest = 0;
    long long *jobs = jobs_of(rows, n, &njobs);
    if (!jobs)
        return -1;
    for (size_t j = 0; j < njobs; j++) {
        const double extent = job_extent(a, rows, n, jobs[j]);
        longest = extent > longest ? extent : longest;
    }
    char id[48];
    snprintf(id, sizeof id, "problem-%zu-%s", problem, a->kind);
    fdt_plot p = {.x = {a->x_title, longest, NULL, NULL},
                  .y = {"best GB/s so far", fastest(rows, n), NULL, NULL}};
    fdt_plot_begin(&p, out, id, a->kind, a->title);
    int rc = 0;
    for (size_t j = 0; rc == 0 && j < njobs; j++)
        rc = job_line(&p, a, rows, n, jobs[j], fdt_plot_color(j));
    fdt_plot_end(&p);
    for (size_t j = 0; j < njobs; j++) {
        char text[32];
        snprintf(text, sizeof text, "job %lld", jobs[j]);
        fdt_plot_key(out, fdt_plot_color(j), text);
    }
    fdt_plot_figure_end(&p);
    free(jobs);
    return rc;
}

/* ---- a problem ---------------------------------------------------------------------------- */

static void problem_head(FILE *out, const fdt_report_result *rows, size_t n, size_t problem)
{
    const fdt_problem *p = &rows[0].problem;
    size_t evaluated = 0, ok = 0, leaders = 0, unknown = 0, njobs = 0;
    for (size_t i = 0; i < n; i++) {
        leaders += rows[i].leader;
        evaluated += !rows[i].leader;
        ok += !rows[i].leader && rows[i].ok;
        unknown += !rows[i].variant.family;
    }
    free(jobs_of(rows, n, &njobs));
    char text[160];
    problem_text(p, text, sizeof text);
    fprintf(out, "<section class=\"problem\" id=\"problem-%zu\" data-shape=\"%dx%dx%d\" "
            "data-radius=\"%d\" data-precision=\"%s\" data-cache=\"%s\" data-stencil=\"",
            problem, p->nx, p->ny, p->nz, p->radius, fdt_precision_name(p->precision),
            fdt_cache_mode_name(p->cache));
    fdt_html_text(out, p->stencil);
    fputs("\">\n<h3>", out);
    fdt_html_text(out, text);
    fprintf(out, "</h3>\n<p>%zu evaluation%s in %zu job%s: %zu ran and were right, %zu did "
            "not (wrong, noisy, failed to compile or run); %zu leader timing%s", evaluated,
            plural(evaluated), njobs, plural(njobs), ok, evaluated - ok, leaders,
            plural(leaders));
    if (unknown)
        fprintf(out, "; %zu rows name variants this fdtune does not know, left out of the "
                "parameter plots", unknown);
    fputs(".</p>\n<div class=\"plots\">\n", out);
}

static int write_problem(FILE *out, const fdt_report_result *rows, size_t n, size_t problem)
{
    problem_head(out, rows, n, problem);
    int rc = 0;
    for (size_t v = 0; rc == 0 && v < sizeof views / sizeof *views; v++)
        rc = param_plot(out, rows, n, problem, &views[v]);
    if (rc == 0)
        rc = heatmap(out, rows, n, problem);
    for (size_t a = 0; rc == 0 && a < sizeof axes / sizeof *axes; a++)
        rc = progress(out, &axes[a], rows, n, problem);
    fputs("</div>\n</section>\n", out);
    return rc;
}

/* ---- the page ----------------------------------------------------------------------------- */

static int write_device(FILE *out, const fdt_report *r, size_t at, size_t *problem)
{
    const fdt_report_device *d = &r->devices[at];
    write_device_head(out, d, at);
    int rc = write_device_best(out, r, d, at);
    for (size_t i = device_start(r, d); rc == 0 && of_device(r, i, d); i = problem_end(r, i))
        rc = write_problem(out, &r->results[i], problem_end(r, i) - i, (*problem)++);
    fputs("</section>\n", out);
    return rc;
}

int fdt_report_write(fdt_report *r, FILE *out)
{
    qsort(r->results, r->nresults, sizeof *r->results, result_cmp);
    write_head(out, r);
    if (r->ndevices == 0)
        fputs("<p>The store holds no device, no tuned problem and no result yet.</p>\n", out);
    write_contents(out, r);
    size_t problem = 0;
    int rc = 0;
    for (size_t d = 0; rc == 0 && d < r->ndevices; d++)
        rc = write_device(out, r, d, &problem);
    fputs("</body>\n</html>\n", out);
    if (rc != 0)
        fprintf(stderr, "fdtune report: out of memory\n");
    return rc;
}

void fdt_report_free(fdt_report *r)
{
    free(r->devices);
    free(r->best);
    free(r->results);
    memset(r, 0, sizeof *r);
}
