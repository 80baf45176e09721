/* table.h - fdtune's tables (jobs, devices, a batch's jobs): named columns and rows of
 * text, printed as a table whose columns libsmartcols sizes to their contents, or as CSV
 * (fields as common/csvout.h writes them), with or without the header line.
 * `--format json` is the daemon's answer itself (--json), not a table. */
#ifndef FDT_TABLE_H
#define FDT_TABLE_H

#include <stdio.h>

typedef enum fdt_table_format { FDT_TABLE_TEXT, FDT_TABLE_CSV } fdt_table_format;

typedef struct fdt_table fdt_table;

/* A table of the columns named in columns (NULL-terminated); a name that starts with '>'
 * is right-aligned (numbers), the '>' not shown. NULL when out of memory. */
fdt_table *fdt_table_new(const char *const *columns);
/* A row: one cell a column, in order (a NULL cell is empty). */
void fdt_table_row(fdt_table *t, const char *const *cells);
/* Prints the rows as format says, under the header unless noheader; then frees t. */
void fdt_table_print(fdt_table *t, fdt_table_format format, int noheader, FILE *out);
/* Frees t unprinted. */
void fdt_table_free(fdt_table *t);

#endif
