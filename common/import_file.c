/* import_file.c - an export file read back as rows (import_file.h).
 *
 * zlib's gzread reads both compressed and plain files. The first byte that is not white
 * space tells the format: '[' is JSON, as export writes it (a row a line between "[" and
 * "]"), anything else CSV, parsed by libcsv a line at a time so that an error names its
 * line. A CSV field becomes the JSON value its column's type says (common/export_format.h);
 * a column the format does not name stays text, and the daemon's checks judge the row. */
#include "import_file.h"

#include <csv.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export_format.h"

#define LINE_BOUND (1 << 20)  /* a row's line: an export's are under 2 KiB */
#define COLUMNS_MAX 128

typedef struct reader {
    const char *path;
    fdt_row_fn fn;
    void *ctx;
    char *err;
    size_t errlen;
    int failed;
    long line;                /* of the text being read */
    long row_line;            /* where the CSV row being read began */
    char *text;               /* the current line */
    size_t len, cap;
    /* CSV */
    char *columns[COLUMNS_MAX];
    size_t ncolumns;
    json_t *row;
    size_t field;
    int json;                 /* the file is JSON; -1 not known yet */
} reader;

static void fail(reader *r, long line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void fail(reader *r, long line, const char *fmt, ...)
{
    if (r->failed)
        return;
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(r->err, r->errlen, "%s:%ld: %s", r->path, line, what);
    r->failed = 1;
}

static void hand_over(reader *r, json_t *row, long line)
{
    json_object_set_new(row, "line", json_integer(line));
    if (!r->failed && r->fn(r->ctx, row) != 0) {
        r->failed = 1;
        snprintf(r->err, r->errlen, "%s", ""); /* the callee said why */
    }
    json_decref(row);
}

/* ---- JSON: a row a line ------------------------------------------------------------- */

static void json_line(reader *r)
{
    char *s = r->text;
    size_t n = r->len;
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == ','))
        n--;
    while (n && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    if (n == 0 || (n == 1 && (*s == '[' || *s == ']')))
        return;
    json_error_t e;
    json_t *row = json_loadb(s, n, 0, &e);
    if (!row)
        fail(r, r->line, "not a JSON row (%s)", e.text);
    else if (!json_is_object(row))
        fail(r, r->line, "not a JSON object");
    if (!r->failed)
        hand_over(r, row, r->line);
    else
        json_decref(row);
}

/* ---- CSV: the header, then rows ------------------------------------------------------ */

/* A field's text as its column's JSON value; NULL when it is not one. */
static json_t *value(const char *column, const char *text)
{
    const fdt_column *c = fdt_column_find(fdt_result_columns, column);
    char *end = NULL;
    errno = 0;
    switch (c ? c->type : FDT_COLUMN_TEXT) {
    case FDT_COLUMN_INT: {
        const long long v = strtoll(text, &end, 10);
        return *text && !*end && !errno ? json_integer(v) : NULL;
    }
    case FDT_COLUMN_REAL: {
        const double v = strtod(text, &end);
        return *text && !*end && !errno ? json_real(v) : NULL;
    }
    case FDT_COLUMN_BOOL:
        return strcmp(text, "1") == 0 || strcmp(text, "true") == 0    ? json_true()
               : strcmp(text, "0") == 0 || strcmp(text, "false") == 0 ? json_false()
                                                                    : NULL;
    default:
        return json_string(text);
    }
}

static void on_field(void *text, size_t len, void *ctx)
{
    reader *r = ctx;
    if (r->failed)
        return;
    if (memchr(text, '\0', len)) {
        fail(r, r->row_line, "a field holds a NUL byte");
        return;
    }
    char *s = strndup(text, len);
    if (!s) {
        fail(r, r->row_line, "out of memory");
        return;
    }
    if (!r->row) { /* the header */
        if (r->ncolumns == COLUMNS_MAX)
            fail(r, r->row_line, "more than %d columns", COLUMNS_MAX);
        else
            r->columns[r->ncolumns++] = s, s = NULL;
    } else if (r->field >= r->ncolumns) {
        fail(r, r->row_line, "more fields than the header's %zu columns", r->ncolumns);
    } else {
        json_t *v = value(r->columns[r->field], s);
        if (!v)
            fail(r, r->row_line, "column '%s': '%.40s' is not a %s", r->columns[r->field], s,
                 fdt_column_find(fdt_result_columns, r->columns[r->field])->type ==
                         FDT_COLUMN_BOOL
                     ? "0 or 1"
                     : "number");
        else
            json_object_set_new(r->row, r->columns[r->field], v);
    }
    r->field++;
    free(s);
}

static void on_row(int terminator, void *ctx)
{
    reader *r = ctx;
    (void)terminator;
    if (r->failed)
        return;
    if (r->row && r->field != r->ncolumns)
        fail(r, r->row_line, "%zu fields where the header has %zu columns", r->field,
             r->ncolumns);
    else if (r->row)
        hand_over(r, r->row, r->row_line);
    r->row = r->failed ? r->row : json_object();
    r->field = 0;
    r->row_line = r->line + 1;
    if (!r->row)
        fail(r, r->line, "out of memory");
}

/* ---- reading ----------------------------------------------------------------------- */

/* One whole line of text into r->text (the last may lack its newline); 0 at the end. */
static int next_line(reader *r, gzFile f)
{
    r->len = 0;
    for (;;) {
        if (r->cap - r->len < 4096) {
            char *grown = r->cap > LINE_BOUND ? NULL : realloc(r->text, r->cap + 65536);
            if (!grown) {
                fail(r, r->line + 1, "a line longer than %d bytes", LINE_BOUND);
                return 0;
            }
            r->text = grown;
            r->cap += 65536;
        }
        if (!gzgets(f, r->text + r->len, (int)(r->cap - r->len))) {
            r->line += r->len > 0;
            return r->len > 0;
        }
        r->len += strlen(r->text + r->len);
        if (r->len && r->text[r->len - 1] == '\n') {
            r->line++;
            return 1;
        }
    }
}

static void first_line(reader *r)
{
    const char *s = r->text;
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    if (*s)
        r->json = *s == '[';
}

static void read_lines(reader *r, gzFile f, struct csv_parser *csv)
{
    r->row_line = 1;
    while (!r->failed && next_line(r, f)) {
        if (r->json < 0)
            first_line(r);
        if (r->json == 1)
            json_line(r);
        else if (r->json == 0 && csv_parse(csv, r->text, r->len, on_field, on_row, r) != r->len)
            fail(r, r->line, "not CSV: %s", csv_strerror(csv_error(csv)));
    }
    int zerr = Z_OK;
    const char *why = gzerror(f, &zerr);
    if (!r->failed && zerr != Z_OK && zerr != Z_STREAM_END)
        fail(r, r->line, "cannot read (truncated or corrupt?): %s", why);
    if (!r->failed && r->json == 0)
        csv_fini(csv, on_field, on_row, r);
    if (!r->failed && r->json < 0)
        fail(r, r->line, "the file is empty");
}

int fdt_import_file_read(const char *path, fdt_row_fn fn, void *ctx, char *err, size_t errlen)
{
    gzFile f = gzopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : ENOMEM));
        return -1;
    }
    reader r = {.path = path, .fn = fn, .ctx = ctx, .err = err, .errlen = errlen, .json = -1};
    struct csv_parser csv;
    csv_init(&csv, CSV_APPEND_NULL);
    read_lines(&r, f, &csv);
    csv_free(&csv);
    gzclose(f);
    json_decref(r.row);
    free(r.text);
    for (size_t i = 0; i < r.ncolumns; i++)
        free(r.columns[i]);
    return r.failed ? -1 : 0;
}
