/* site.h - the site store (site_store in fdtuned.conf, docs/cluster.md): a site's merged
 * results, read at start and on SIGHUP, answering queries the node's own store does not
 * answer as well, never written. */
#ifndef FDT_SITE_H
#define FDT_SITE_H

#include "daemon/daemon.h"
#include "store.h"

/* Where a site row's winner was measured. */
typedef struct fdt_site_origin {
    char host[64], store[40], fdtuned[16];
    int64_t job;
} fdt_site_origin;

/* The site's rows: its devices (ids -1, -2, ...: never a store's) and each problem's winner
 * on them (device_id one of those; job_id its index in origins). */
typedef struct fdt_site {
    fdt_device_row *devices;
    size_t ndevices;
    fdt_best *best;
    size_t nbest;
    fdt_site_origin *origins;
    char path[FDT_PATH_MAX];
} fdt_site;

/* Reads d->config.site_store (nothing when empty) into d->site, replacing what it held;
 * on failure keeps what it held and returns -1 with why. */
int fdt_site_load(fdt_daemon *d, char *why, size_t len);
void fdt_site_free(fdt_daemon *d);

/* Whether a best row is the site's, and where it was measured (NULL: not the site's). */
const fdt_site_origin *fdt_site_origin_of(const fdt_daemon *d, const fdt_best *b);

#endif
