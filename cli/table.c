/* table.c - fdtune's tables; see table.h. */
#include "table.h"

#include <libsmartcols/libsmartcols.h>
#include <stdlib.h>

#include "csvout.h"

struct fdt_table {
    struct libscols_table *scols;
    size_t ncolumns;
};

fdt_table *fdt_table_new(const char *const *columns)
{
    fdt_table *t = calloc(1, sizeof *t);
    if (!t || !(t->scols = scols_new_table())) {
        free(t);
        return NULL;
    }
    for (; columns[t->ncolumns]; t->ncolumns++) {
        const char *name = columns[t->ncolumns];
        const int right = name[0] == '>';
        scols_table_new_column(t->scols, name + right, 0, right ? SCOLS_FL_RIGHT : 0);
    }
    return t;
}

void fdt_table_row(fdt_table *t, const char *const *cells)
{
    struct libscols_line *line = scols_table_new_line(t->scols, NULL);
    for (size_t c = 0; line && c < t->ncolumns; c++)
        scols_line_set_data(line, c, cells[c] ? cells[c] : "");
}

static void print_csv(const fdt_table *t, int noheader, FILE *out)
{
    for (size_t c = 0; !noheader && c < t->ncolumns; c++) {
        struct libscols_column *col = scols_table_get_column(t->scols, c);
        fputs(c ? "," : "", out);
        fdt_csv_field(out, scols_cell_get_data(scols_column_get_header(col)));
    }
    if (!noheader)
        fputc('\n', out);
    struct libscols_iter *it = scols_new_iter(SCOLS_ITER_FORWARD);
    struct libscols_line *line;
    while (it && scols_table_next_line(t->scols, it, &line) == 0) {
        for (size_t c = 0; c < t->ncolumns; c++) {
            const char *data = scols_cell_get_data(scols_line_get_cell(line, c));
            fputs(c ? "," : "", out);
            fdt_csv_field(out, data ? data : "");
        }
        fputc('\n', out);
    }
    scols_free_iter(it);
}

void fdt_table_print(fdt_table *t, fdt_table_format format, int noheader, FILE *out)
{
    if (format == FDT_TABLE_CSV) {
        print_csv(t, noheader, out);
    } else {
        scols_table_enable_noheadings(t->scols, noheader);
        scols_table_set_stream(t->scols, out);
        scols_print_table(t->scols);
    }
    fdt_table_free(t);
}

void fdt_table_free(fdt_table *t)
{
    scols_unref_table(t->scols);
    free(t);
}
