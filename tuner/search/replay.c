/* replay.c - reading recorded spaces (export CSV, plain or gzip) into problems; see
 * replay.h. libcsv parses the text (quoted fields, embedded line breaks), zlib's gzread
 * reads plain and compressed files alike. */
#include "search/replay.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* The columns the replay needs, by their names in the export's header. */
enum { COL_FINGERPRINT, COL_DEVICE, COL_STENCIL, COL_RADIUS, COL_PRECISION, COL_NX, COL_NY,
       COL_NZ, COL_CACHE, COL_JOB, COL_VARIANT, COL_STATUS, COL_LEADER, COL_GBPS, NCOLS };
static const char *const column_names[NCOLS] = {
    "fingerprint", "device", "stencil", "radius", "precision", "nx", "ny", "nz",
    "cache", "job", "variant", "status", "leader", "gbps"};

#define MAX_FIELDS 64
#define FIELD_MAX 256

typedef struct reader {
    fdt_recording *rec;
    const char *path;
    long line;
    int col[NCOLS];          /* field index of each needed column; -1 before the header */
    char field[MAX_FIELDS][FIELD_MAX];
    size_t nfields;
    size_t first;            /* the first problem this file added */
    size_t current;          /* the problem the last row went to (rows of a job are together) */
    int failed;
    char *err;
    size_t errlen;
} reader;

static void fail(reader *r, const char *why, const char *what)
{
    if (!r->failed)
        snprintf(r->err, r->errlen, "%s:%ld: %s%s%s", r->path, r->line, why, what ? " " : "",
                 what ? what : "");
    r->failed = 1;
}

static void on_field(void *text, size_t len, void *ctx)
{
    reader *r = ctx;
    if (memchr(text, '\0', len))
        fail(r, "a field holds a NUL byte", NULL);
    if (r->nfields < MAX_FIELDS) {
        const size_t n = len < FIELD_MAX - 1 ? len : FIELD_MAX - 1;
        memcpy(r->field[r->nfields], text, n);
        r->field[r->nfields][n] = '\0';
    }
    r->nfields++;
}

static void read_header(reader *r)
{
    for (int c = 0; c < NCOLS; c++) {
        r->col[c] = -1;
        for (size_t f = 0; f < r->nfields && f < MAX_FIELDS; f++)
            if (strcmp(r->field[f], column_names[c]) == 0)
                r->col[c] = (int)f;
        if (r->col[c] < 0)
            fail(r, "not an export of results (`fdtune export --what results --format csv`): "
                    "no column", column_names[c]);
    }
}

static const char *get(const reader *r, int c)
{
    return (size_t)r->col[c] < r->nfields ? r->field[r->col[c]] : "";
}

static int get_long(reader *r, int c, long min, long max, long *out)
{
    char *end;
    errno = 0;
    const long v = strtol(get(r, c), &end, 10);
    if (errno || end == get(r, c) || *end || v < min || v > max) {
        fail(r, "bad value in column", column_names[c]);
        return -1;
    }
    *out = v;
    return 0;
}

/* The row's problem, from its key columns; -1 (reported) when a value is off. */
static int row_problem(reader *r, fdt_problem *p, int64_t *job)
{
    long radius, nx, ny, nz, jobid;
    if (get_long(r, COL_RADIUS, 1, FDT_MAX_RADIUS, &radius) ||
        get_long(r, COL_NX, 1, FDT_MAX_SIDE, &nx) || get_long(r, COL_NY, 1, FDT_MAX_SIDE, &ny) ||
        get_long(r, COL_NZ, 1, FDT_MAX_SIDE, &nz) || get_long(r, COL_JOB, 0, INT64_MAX, &jobid))
        return -1;
    *p = (fdt_problem){.nx = (int)nx, .ny = (int)ny, .nz = (int)nz, .radius = (int)radius};
    if (fdt_precision_parse(get(r, COL_PRECISION), &p->precision) != 0 ||
        fdt_cache_mode_parse(get(r, COL_CACHE), &p->cache) != 0) {
        fail(r, "bad precision or cache mode", NULL);
        return -1;
    }
    *job = jobid;
    return 0;
}

static int same_problem(const fdt_recorded_problem *a, const reader *r, const fdt_problem *p,
                        int64_t job)
{
    return a->job == job && memcmp(&a->problem, p, sizeof *p) == 0 &&
           strcmp(a->fingerprint, get(r, COL_FINGERPRINT)) == 0 &&
           strcmp(a->stencil, get(r, COL_STENCIL)) == 0;
}

/* The recorded problem of (device, stencil, problem, job) among this file's, added if new;
 * NULL when out of memory. Looks at the last one first: an export lists a job's rows
 * together. */
static fdt_recorded_problem *problem_of(reader *r, const fdt_problem *p, int64_t job)
{
    fdt_recording *rec = r->rec;
    if (r->current < rec->n && same_problem(&rec->problems[r->current], r, p, job))
        return &rec->problems[r->current];
    for (size_t i = r->first; i < rec->n; i++)
        if (same_problem(&rec->problems[i], r, p, job)) {
            r->current = i;
            return &rec->problems[i];
        }
    fdt_recorded_problem *grown = realloc(rec->problems, (rec->n + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    rec->problems = grown;
    fdt_recorded_problem *np = &rec->problems[rec->n];
    *np = (fdt_recorded_problem){.problem = *p, .job = job};
    snprintf(np->fingerprint, sizeof np->fingerprint, "%s", get(r, COL_FINGERPRINT));
    snprintf(np->stencil, sizeof np->stencil, "%s", get(r, COL_STENCIL));
    r->current = rec->n++;
    return np;
}

static int append(fdt_recorded_problem *p, const char *name, double gbps)
{
    if ((p->n & (p->n - 1)) == 0) { /* grow at powers of two */
        const size_t cap = p->n ? 2 * p->n : 1;
        void *names = realloc(p->names, cap * sizeof *p->names);
        if (names)
            p->names = names;
        void *speeds = realloc(p->gbps, cap * sizeof *p->gbps);
        if (speeds)
            p->gbps = speeds;
        if (!names || !speeds)
            return -1;
    }
    snprintf(p->names[p->n], sizeof p->names[p->n], "%s", name);
    p->gbps[p->n++] = gbps;
    return 0;
}

static void read_row(reader *r)
{
    fdt_problem p;
    int64_t job;
    long leader;
    if (get_long(r, COL_LEADER, 0, 1, &leader) || leader || row_problem(r, &p, &job))
        return;
    const char *name = get(r, COL_VARIANT);
    if (strlen(name) >= FDT_VARIANT_NAME_MAX) {
        fail(r, "variant name too long:", name);
        return;
    }
    double gbps = 0;
    if (strcmp(get(r, COL_STATUS), "ok") == 0) {
        char *end;
        gbps = strtod(get(r, COL_GBPS), &end);
        if (end == get(r, COL_GBPS) || *end || !isfinite(gbps) || gbps < 0) {
            fail(r, "bad value in column", column_names[COL_GBPS]);
            return;
        }
    }
    fdt_recorded_problem *rp = problem_of(r, &p, job);
    if (!rp || append(rp, name, gbps > 0 ? gbps : 0) != 0)
        fail(r, "out of memory", NULL);
}

static void on_row(int terminator, void *ctx)
{
    (void)terminator;
    reader *r = ctx;
    r->line++;
    if (r->failed)
        return;
    if (r->nfields > MAX_FIELDS)
        fail(r, "too many columns", NULL);
    else if (r->col[0] < 0)
        read_header(r);
    else
        read_row(r);
    r->nfields = 0;
}

static void free_problem(fdt_recorded_problem *p)
{
    free(p->names);
    free(p->gbps);
}

static int same_key(const fdt_recorded_problem *a, const fdt_recorded_problem *b)
{
    return memcmp(&a->problem, &b->problem, sizeof a->problem) == 0 &&
           strcmp(a->fingerprint, b->fingerprint) == 0 && strcmp(a->stencil, b->stencil) == 0;
}

/* Where jobs measured one problem more than once, only the job with the most rows stays. */
static void keep_fullest_jobs(fdt_recording *rec)
{
    size_t keep = 0;
    for (size_t i = 0; i < rec->n; i++) {
        fdt_recorded_problem *p = &rec->problems[i];
        size_t j = 0;
        while (j < keep && !same_key(&rec->problems[j], p))
            j++;
        if (j == keep) {
            rec->problems[keep++] = *p;
        } else if (p->n > rec->problems[j].n) {
            free_problem(&rec->problems[j]);
            rec->problems[j] = *p;
        } else {
            free_problem(p);
        }
    }
    rec->n = keep;
}

int fdt_recording_load(fdt_recording *rec, const char *path, char *err, size_t errlen)
{
    gzFile f = gzopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : ENOMEM));
        return -1;
    }
    const size_t before = rec->n;
    reader r = {.rec = rec, .path = path, .col = {-1}, .first = before, .current = SIZE_MAX,
                .err = err, .errlen = errlen};
    struct csv_parser parser;
    csv_init(&parser, CSV_APPEND_NULL);
    char buf[1 << 16];
    int n = 0;
    while (!r.failed && (n = gzread(f, buf, sizeof buf)) > 0)
        if (csv_parse(&parser, buf, (size_t)n, on_field, on_row, &r) != (size_t)n)
            fail(&r, "not CSV:", csv_strerror(csv_error(&parser)));
    /* gzread ends a truncated stream as if it were the end: gzerror tells them apart. */
    int zerr = Z_OK;
    const char *why = gzerror(f, &zerr);
    if (!r.failed && (n < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)))
        fail(&r, "cannot read (truncated or corrupt?):", why);
    if (!r.failed)
        csv_fini(&parser, on_field, on_row, &r);
    csv_free(&parser);
    gzclose(f);
    if (!r.failed && r.col[0] < 0)
        fail(&r, "empty file", NULL);
    if (r.failed) {
        for (size_t i = before; i < rec->n; i++)
            free_problem(&rec->problems[i]);
        rec->n = before;
        return -1;
    }
    keep_fullest_jobs(rec);
    return 0;
}

void fdt_recording_free(fdt_recording *rec)
{
    for (size_t i = 0; i < rec->n; i++)
        free_problem(&rec->problems[i]);
    free(rec->problems);
    memset(rec, 0, sizeof *rec);
}

double fdt_recorded_best(const fdt_recorded_problem *p)
{
    double best = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->gbps[i] > best)
            best = p->gbps[i];
    return best;
}
