/* import_file.h - an export file read back as rows: what `fdtune export --what results`
 * writes, JSON (an array, a row a line) or CSV (its header the columns of
 * common/export_format.h), gzip-compressed or not. Each row becomes the JSON object the
 * daemon's import takes, with "line": its line in the file, for the daemon's messages. */
#ifndef FDT_IMPORT_FILE_H
#define FDT_IMPORT_FILE_H

#include <stddef.h>

#include <jansson.h>

/* Takes one row (the callee keeps a reference if it needs one); 0 goes on, -1 stops the
 * read (the callee has said why). */
typedef int (*fdt_row_fn)(void *ctx, json_t *row);

/* Reads path row by row into fn. 0 at its end; -1 when the file cannot be read or is not
 * JSON or CSV of rows (why in err: the path, the line and what is wrong) or fn stopped. */
int fdt_import_file_read(const char *path, fdt_row_fn fn, void *ctx, char *err, size_t errlen);

#endif
