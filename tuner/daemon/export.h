/* export.h - the export operation: best configurations or every measured result, as JSON
 * rows or CSV text, for users who keep their own records or feed a spreadsheet. A store of
 * any size is exported in pages of at most FDT_EXPORT_PAGE_MAX rows, one request each
 * (docs/protocol.md, "export"). */
#ifndef FDT_EXPORT_H
#define FDT_EXPORT_H

#include <jansson.h>

#include "daemon/daemon.h"

/* A page's rows: about 0.4 MB of answer and a few milliseconds of the loop. */
#define FDT_EXPORT_PAGE_MAX 1000

/* Reads "what", "format", "after" and "limit" from req and fills ans with one page; 0, or
 * -1 with an error code and message. */
int fdt_export(fdt_daemon *d, json_t *req, json_t *ans, const char **code, char *message,
               size_t len);

#endif
