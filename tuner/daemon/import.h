/* import.h - results measured by another fdtuned merged into the store: the protocol's
 * "import" (docs/protocol.md), what `fdtune import FILE...` sends. */
#ifndef FDT_IMPORT_H
#define FDT_IMPORT_H

#include <jansson.h>

#include "daemon/daemon.h"

/* Rows a file may hold, and a page of them (one request). */
#define FDT_IMPORT_ROWS_MAX 1000000 /* 464 MB staged; a night of 1800 shapes is 126,000 */
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

/* Of two winners measured elsewhere for one device and problem, whether a stands over b
 * (rules 2 and 3 at the top of import.c): measured with this build's kernel sources, then
 * measured later; a tie keeps b. */
int fdt_import_stands_over(const fdt_best *a, const fdt_best *b);

/* A job's winner as a file holds it, with where it was measured (site.c keeps them). */
typedef struct fdt_file_winner {
    fdt_device_info device;
    fdt_best best;            /* device_id and job_id 0 */
    char host[64], store[40], fdtuned[16];
    int64_t job;              /* its id in that store */
} fdt_file_winner;

/* Reads path, an export of results, every row checked as an import's, and hands back each
 * job's winner, and its cache auto row where its job chose the cache: *out malloc'd. 0, or
 * -1 with why (the path, the line and what is wrong). */
int fdt_import_winners(const char *path, fdt_file_winner **out, size_t *n, char *why,
                       size_t len);

#endif
