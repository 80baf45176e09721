/* export.h - the export operation: best configurations or every measured result, as JSON
 * rows or CSV text, for users who keep their own records or feed a spreadsheet. */
#ifndef FDT_EXPORT_H
#define FDT_EXPORT_H

#include <jansson.h>

#include "daemon/daemon.h"

/* Reads "what" and "format" from req and fills ans; 0, or -1 with an error code and message. */
int fdt_export(fdt_daemon *d, json_t *req, json_t *ans, const char **code, char *message,
               size_t len);

#endif
