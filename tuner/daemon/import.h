/* import.h - results measured by another fdtuned merged into the store: the protocol's
 * "import" (docs/protocol.md), what `fdtune import FILE...` sends. */
#ifndef FDT_IMPORT_H
#define FDT_IMPORT_H

#include <jansson.h>

#include "daemon/daemon.h"

/* Rows a file may hold, and a page of them (one request). */
#define FDT_IMPORT_ROWS_MAX 5000000
#define FDT_IMPORT_PAGE_MAX 2000
/* A set no request touched for this long is dropped: its client went away. */
#define FDT_IMPORT_IDLE_S 120

/* One request of an import: {"set": N (after the first page), "rows": [...], "last": bool}.
 * Fills ans (the set's id and rows staged; after the last page what was merged). On a
 * refusal returns -1 with *code and message set, and the set is dropped. */
int fdt_import(fdt_daemon *d, json_t *req, json_t *ans, const char **code, char *message,
               size_t len);
/* Drops every staged set (the daemon stops). */
void fdt_imports_free(fdt_daemon *d);

#endif
