/* replay.c - reading recorded spaces (export CSV, plain or gzip) into problems; see
 * replay.h. libcsv parses the text (quoted fields, embedded line breaks), zlib's gzread
 * reads plain and compressed files alike.
 *
 * Repeated rows: rows of one variant for one problem and job (the same device fingerprint,
 * stencil, shape, precision, radius, cache mode and job, and the same variant name) are one
 * variant of the space, at the fastest speed one of them ran correctly at, 0 if none did.
 * The fastest rather than the median: each row is already a whole measurement (the median
 * of its own samples), a search looks for the fastest a variant can run, and a row that did
 * not run beside one that did is an attempt that failed, as a crashed worker's; and one
 * number a variant, whatever the order of its rows, keeps memory to the variants, not the
 * rows. Its cost is that row's (the first row's if none ran): what one measurement of it
 * takes. Where several jobs measured one problem, the job with the most variants is kept.
 *
 * Linear time: a row finds its problem and its variant in a hash table, a jansson object
 * (jansson, linked already for the JSON of the socket and the worker's pipes, keeps its
 * objects as hash tables), so that a file of n rows loads in O(n) whatever their order.
 *
 * Bounds: a field over 4 KiB or a line over 64 KiB is refused, naming the file and line.
 * An export's widest field is a result's message (at most 255 bytes, result_row.h) and its
 * longest line about 1.2 KiB (26 columns, the device's name at most 127 bytes, the message
 * quoted); the bounds leave room for columns to come and stop /dev/zero, a gzip bomb or a
 * binary file within a few KiB: libcsv's buffer for the field being read never grows past
 * the field's bound (bounded_realloc), and no more than a line is fed to it at a time. */
#include "search/replay.h"

#include <csv.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "result_row.h"

/* The columns the replay reads, by their names in the export's header: those it needs,
 * then those of a variant's cost, without which a file replays with no costs, then the
 * layout, without which (an export of format 1) every problem is dense. */
enum { COL_FINGERPRINT, COL_DEVICE, COL_STENCIL, COL_RADIUS, COL_PRECISION, COL_NX, COL_NY,
       COL_NZ, COL_CACHE, COL_JOB, COL_VARIANT, COL_STATUS, COL_LEADER, COL_GBPS,
       COL_COMPILE_MS, COL_SAMPLES, COL_REPS, COL_MEDIAN_MS, COL_PITCH, COL_OFFSET, NCOLS };
#define NNEEDED COL_COMPILE_MS
#define NCOST COL_PITCH
static const char *const column_names[NCOLS] = {
    "fingerprint", "device", "stencil", "radius", "precision", "nx", "ny", "nz",
    "cache", "job", "variant", "status", "leader", "gbps",
    "compile_ms", "samples", "reps", "median_ms", "pitch", "offset"};

#define MAX_FIELDS 64
#define FIELD_MAX 256 /* what is kept of a field: every value the replay reads is shorter */

/* The bounds of a field and of a line, in bytes (see the top of the file). */
#define FIELD_BOUND 4096
#define LINE_BOUND 65536
#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)
/* libcsv's buffer for a field: the field, one byte past the bound (the byte that tells a
 * field over it) and libcsv's terminating NUL. */
#define FIELD_BUFFER (FIELD_BOUND + 2)
/* A problem's identity as a key: two strings with their lengths, nine numbers. */
#define PROBLEM_KEY_MAX 192

typedef struct reader {
    fdt_recording *rec;
    const char *path;
    long line;               /* the file's line being read, from 1 */
    size_t line_bytes;       /* the bytes of that line read so far */
    int col[NCOLS];          /* field index of each column; -1 before the header or absent */
    int has_cost;            /* the header has every cost column */
    char field[MAX_FIELDS][FIELD_MAX];
    size_t nfields;
    json_t *problems;        /* problem_key (with the job) -> its index in rec->problems */
    json_t *variants;        /* "PROBLEM-INDEX VARIANT" -> its index in the problem */
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

/* libcsv's allocator: it cannot grow a field's buffer past FIELD_BUFFER, so libcsv stops
 * with CSV_ENOMEM at a field over the bound, whatever follows in the file. */
static void *bounded_realloc(void *p, size_t size)
{
    return size > FIELD_BUFFER ? NULL : realloc(p, size);
}

static void on_field(void *text, size_t len, void *ctx)
{
    reader *r = ctx;
    if (len > FIELD_BOUND) /* the last field of a file, which no byte follows */
        fail(r, "a field longer than " TEXT(FIELD_BOUND) " bytes", NULL);
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
        if (r->col[c] < 0 && c < NNEEDED)
            fail(r, "not an export of results (`fdtune export --what results --format csv`): "
                    "no column", column_names[c]);
    }
    r->has_cost = 1;
    for (int c = NNEEDED; c < NCOST; c++)
        r->has_cost &= r->col[c] >= 0;
}

static const char *get(const reader *r, int c)
{
    return (size_t)r->col[c] < r->nfields ? r->field[r->col[c]] : "";
}

/* A number of column c from 0 up; -1 (reported) when it is not one. */
static int get_amount(reader *r, int c, double *out)
{
    char *end;
    const double v = strtod(get(r, c), &end);
    if (end == get(r, c) || *end || !isfinite(v) || v < 0) {
        fail(r, "bad value in column", column_names[c]);
        return -1;
    }
    *out = v;
    return 0;
}

/* What measuring the row's variant took, in seconds: its compile, then its samples of
 * reps launches each (their median for their duration); NAN when the file has no costs. */
static int row_cost(reader *r, double *cost_s)
{
    double compile_ms, samples, reps, median_ms;
    *cost_s = NAN;
    if (!r->has_cost)
        return 0;
    if (get_amount(r, COL_COMPILE_MS, &compile_ms) || get_amount(r, COL_SAMPLES, &samples) ||
        get_amount(r, COL_REPS, &reps) || get_amount(r, COL_MEDIAN_MS, &median_ms))
        return -1;
    *cost_s = fdt_result_cost_s(compile_ms, samples, reps, median_ms);
    return 0;
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

/* Copies the text of column c into dst; -1 (reported) when it does not fit. */
static int get_text(reader *r, int c, char *dst, size_t size)
{
    const char *v = get(r, c);
    const size_t len = strlen(v);
    if (len >= size) {
        fail(r, "bad value in column", column_names[c]);
        return -1;
    }
    memcpy(dst, v, len + 1);
    return 0;
}

/* The row's layout where the file has one (format 2); -1 (reported) when a value is off. */
static int row_layout(reader *r, fdt_problem *p)
{
    long pitch = 0, offset = 0;
    if ((r->col[COL_PITCH] >= 0 &&
         get_long(r, COL_PITCH, 1, FDT_MAX_SIDE + FDT_PITCH_PAD_MAX, &pitch)) ||
        (r->col[COL_OFFSET] >= 0 && get_long(r, COL_OFFSET, 0, FDT_OFFSET_BYTES, &offset)))
        return -1;
    p->pitch = (int)pitch;
    p->offset = (int)offset;
    fdt_problem_canonical_layout(p);
    return 0;
}

/* The row's problem and job, from its key columns, into id (no variants yet); -1
 * (reported) when a value is off. */
static int row_identity(reader *r, fdt_recorded_problem *id)
{
    long radius, nx, ny, nz, job;
    *id = (fdt_recorded_problem){0};
    if (get_long(r, COL_RADIUS, 1, FDT_MAX_RADIUS, &radius) ||
        get_long(r, COL_NX, 1, FDT_MAX_SIDE, &nx) || get_long(r, COL_NY, 1, FDT_MAX_SIDE, &ny) ||
        get_long(r, COL_NZ, 1, FDT_MAX_SIDE, &nz) || get_long(r, COL_JOB, 0, INT64_MAX, &job) ||
        get_text(r, COL_FINGERPRINT, id->fingerprint, sizeof id->fingerprint) ||
        get_text(r, COL_STENCIL, id->problem.stencil, sizeof id->problem.stencil))
        return -1;
    fdt_problem *p = &id->problem;
    p->nx = (int)nx, p->ny = (int)ny, p->nz = (int)nz, p->radius = (int)radius;
    if (row_layout(r, p))
        return -1;
    if (fdt_precision_parse(get(r, COL_PRECISION), &p->precision) != 0 ||
        fdt_cache_mode_parse(get(r, COL_CACHE), &p->cache) != 0) {
        fail(r, "bad precision or cache mode", NULL);
        return -1;
    }
    id->job = job;
    return 0;
}

/* The key of p's device, stencil and problem, and of its job when with_job: the strings
 * go with their lengths, so that no two identities make one key. */
static void problem_key(const fdt_recorded_problem *p, int with_job, char *key, size_t size)
{
    const fdt_problem *q = &p->problem;
    snprintf(key, size, "%zu:%s%zu:%s%d %d %d %d %d %d %d %d %" PRId64, strlen(p->fingerprint),
             p->fingerprint, strlen(q->stencil), q->stencil, q->nx, q->ny, q->nz, q->radius,
             (int)q->precision, (int)q->cache, q->pitch, q->offset, with_job ? p->job : -1);
}

/* The index held under key, -1 when there is none. */
static long index_get(const json_t *index, const char *key)
{
    const json_t *at = json_object_get(index, key);
    return at ? (long)json_integer_value(at) : -1;
}

static int index_set(json_t *index, const char *key, size_t at)
{
    return json_object_set_new_nocheck(index, key, json_integer((json_int_t)at));
}

/* Arrays grow at powers of two, so that appending costs O(1) amortized: element n needs a
 * larger array when n is one (an array keep_fullest_jobs shortened still has room). */
static int must_grow(size_t n)
{
    return (n & (n - 1)) == 0;
}

static size_t grown(size_t n)
{
    return n ? 2 * n : 1;
}

/* The index of the recorded problem of id (its device, stencil, problem and job) among
 * this file's, added if new; -1 when out of memory. */
static long problem_of(reader *r, const fdt_recorded_problem *id)
{
    fdt_recording *rec = r->rec;
    char key[PROBLEM_KEY_MAX];
    problem_key(id, 1, key, sizeof key);
    const long at = index_get(r->problems, key);
    if (at >= 0)
        return at;
    if (must_grow(rec->n)) {
        fdt_recorded_problem *more = realloc(rec->problems, grown(rec->n) * sizeof *more);
        if (!more)
            return -1;
        rec->problems = more;
    }
    if (index_set(r->problems, key, rec->n) != 0)
        return -1;
    rec->problems[rec->n] = *id;
    return (long)rec->n++;
}

static int append(fdt_recorded_problem *p, const char *name, double gbps, double cost_s)
{
    if (must_grow(p->n)) {
        void *names = realloc(p->names, grown(p->n) * sizeof *p->names);
        if (names)
            p->names = names;
        void *speeds = realloc(p->gbps, grown(p->n) * sizeof *p->gbps);
        if (speeds)
            p->gbps = speeds;
        void *costs = realloc(p->cost_s, grown(p->n) * sizeof *p->cost_s);
        if (costs)
            p->cost_s = costs;
        if (!names || !speeds || !costs)
            return -1;
    }
    snprintf(p->names[p->n], sizeof p->names[p->n], "%s", name);
    p->gbps[p->n] = gbps;
    p->cost_s[p->n++] = cost_s;
    return 0;
}

/* A measurement of variant name for problem `which`: a new variant, or a repeated one
 * merged into the fastest, whose cost it keeps (see the top of the file). -1 when out of
 * memory. */
static int add_measurement(reader *r, size_t which, const char *name, double gbps,
                           double cost_s)
{
    fdt_recorded_problem *p = &r->rec->problems[which];
    char key[FDT_VARIANT_NAME_MAX + 24];
    snprintf(key, sizeof key, "%zu %s", which, name);
    const long at = index_get(r->variants, key);
    if (at >= 0) {
        if (gbps > p->gbps[at]) {
            p->gbps[at] = gbps;
            p->cost_s[at] = cost_s;
        }
        return 0;
    }
    return append(p, name, gbps, cost_s) != 0 || index_set(r->variants, key, p->n - 1) != 0
               ? -1
               : 0;
}

static void read_row(reader *r)
{
    fdt_recorded_problem id;
    long leader;
    if (get_long(r, COL_LEADER, 0, 1, &leader) || leader || row_identity(r, &id))
        return;
    const char *name = get(r, COL_VARIANT);
    if (strlen(name) >= FDT_VARIANT_NAME_MAX) {
        fail(r, "variant name too long:", name);
        return;
    }
    double gbps = 0, cost_s;
    if (row_cost(r, &cost_s) != 0)
        return;
    if (strcmp(get(r, COL_STATUS), "ok") == 0) {
        char *end;
        gbps = strtod(get(r, COL_GBPS), &end);
        if (end == get(r, COL_GBPS) || *end || !isfinite(gbps) || gbps < 0) {
            fail(r, "bad value in column", column_names[COL_GBPS]);
            return;
        }
    }
    const long which = problem_of(r, &id);
    if (which < 0 || add_measurement(r, (size_t)which, name, gbps > 0 ? gbps : 0, cost_s) != 0)
        fail(r, "out of memory", NULL);
}

static void on_row(int terminator, void *ctx)
{
    (void)terminator;
    reader *r = ctx;
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

/* Why libcsv stopped: at a field over the bound when bounded_realloc refused it. */
static void parse_failed(reader *r, struct csv_parser *parser)
{
    if (csv_error(parser) == CSV_ENOMEM && parser->entry_size >= FIELD_BUFFER)
        fail(r, "a field longer than " TEXT(FIELD_BOUND) " bytes", NULL);
    else
        fail(r, "not CSV:", csv_strerror(csv_error(parser)));
}

/* Feeds text to libcsv a line at a time, so that an error names the line it is on and no
 * line longer than the bound is read. */
static void parse(reader *r, struct csv_parser *parser, const char *text, size_t len)
{
    while (len > 0 && !r->failed) {
        const char *newline = memchr(text, '\n', len);
        const size_t piece = newline ? (size_t)(newline - text) + 1 : len;
        r->line_bytes += newline ? piece - 1 : piece;
        if (r->line_bytes > LINE_BOUND) {
            fail(r, "a line longer than " TEXT(LINE_BOUND) " bytes", NULL);
            return;
        }
        if (csv_parse(parser, text, piece, on_field, on_row, r) != piece)
            parse_failed(r, parser);
        if (newline) {
            r->line++;
            r->line_bytes = 0;
        }
        text += piece;
        len -= piece;
    }
}

static void free_problem(fdt_recorded_problem *p)
{
    free(p->names);
    free(p->gbps);
    free(p->cost_s);
}

/* Where jobs measured one problem more than once, only the job with the most variants
 * stays (the first of those with as many), where its own rows were. -1 when out of
 * memory, the recording untouched. */
static int keep_fullest_jobs(fdt_recording *rec)
{
    json_t *fullest = json_object(); /* problem_key without the job -> its fullest job */
    char key[PROBLEM_KEY_MAX];
    for (size_t i = 0; fullest && i < rec->n; i++) {
        problem_key(&rec->problems[i], 0, key, sizeof key);
        const long j = index_get(fullest, key);
        if ((j < 0 || rec->problems[i].n > rec->problems[j].n) && index_set(fullest, key, i)) {
            json_decref(fullest);
            fullest = NULL;
        }
    }
    if (!fullest)
        return -1;
    size_t keep = 0;
    for (size_t i = 0; i < rec->n; i++) {
        problem_key(&rec->problems[i], 0, key, sizeof key);
        if (index_get(fullest, key) == (long)i)
            rec->problems[keep++] = rec->problems[i];
        else
            free_problem(&rec->problems[i]);
    }
    rec->n = keep;
    json_decref(fullest);
    return 0;
}

static void read_file(reader *r, gzFile f)
{
    struct csv_parser parser;
    csv_init(&parser, CSV_APPEND_NULL);
    csv_set_realloc_func(&parser, bounded_realloc);
    char buf[1 << 16];
    int n = 0;
    while (!r->failed && (n = gzread(f, buf, sizeof buf)) > 0)
        parse(r, &parser, buf, (size_t)n);
    /* gzread ends a truncated stream as if it were the end: gzerror tells them apart. */
    int zerr = Z_OK;
    const char *why = gzerror(f, &zerr);
    if (!r->failed && (n < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)))
        fail(r, "cannot read (truncated or corrupt?):", why);
    if (!r->failed)
        csv_fini(&parser, on_field, on_row, r);
    csv_free(&parser);
    if (!r->failed && r->col[0] < 0)
        fail(r, "empty file", NULL);
}

int fdt_recording_load(fdt_recording *rec, const char *path, char *err, size_t errlen)
{
    gzFile f = gzopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : ENOMEM));
        return -1;
    }
    const size_t before = rec->n;
    reader r = {.rec = rec, .path = path, .line = 1, .col = {-1}, .problems = json_object(),
                .variants = json_object(), .err = err, .errlen = errlen};
    if (!r.problems || !r.variants)
        fail(&r, "out of memory", NULL);
    else
        read_file(&r, f);
    gzclose(f);
    json_decref(r.problems);
    json_decref(r.variants);
    if (!r.failed && keep_fullest_jobs(rec) != 0)
        fail(&r, "out of memory", NULL);
    if (r.failed) {
        for (size_t i = before; i < rec->n; i++)
            free_problem(&rec->problems[i]);
        rec->n = before;
        return -1;
    }
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
