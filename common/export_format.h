/* export_format.h - the rows an export writes and an import reads back: their columns in
 * order, with the type of each, and the format every row names. tuner/daemon/export.c
 * writes them (JSON objects, or CSV whose header is these names); fdtune import
 * (cli/cmd_import.c) reads either back, a CSV field's text made the JSON value it stands
 * for, and the daemon's import (tuner/daemon/import.c) checks each row against them. */
#ifndef FDT_EXPORT_FORMAT_H
#define FDT_EXPORT_FORMAT_H

/* The first column of every row: "fdtuned-results/2", "fdtuned-best/2". A reader refuses a
 * row of another name (another program's file, or the other kind) or of a version above
 * the one it reads (a newer fdtuned's). Version 2 added the layout (pitch, offset): a
 * version 1 row has none, and is read as the dense layout it was measured in; an fdtuned
 * that reads only version 1 refuses version 2, whose padded rows it would take for dense. */
#define FDT_FORMAT_RESULTS "fdtuned-results"
#define FDT_FORMAT_BEST "fdtuned-best"
#define FDT_FORMAT_VERSION 2

typedef enum fdt_column_type {
    FDT_COLUMN_TEXT,
    FDT_COLUMN_INT,
    FDT_COLUMN_REAL,
    FDT_COLUMN_BOOL
} fdt_column_type;

typedef struct fdt_column {
    const char *name;
    fdt_column_type type;
} fdt_column;

/* Each list ends with a column whose name is NULL. */
extern const fdt_column fdt_result_columns[];
extern const fdt_column fdt_best_columns[];

/* The column of a list named name, or NULL. */
const fdt_column *fdt_column_find(const fdt_column *list, const char *name);

#endif
