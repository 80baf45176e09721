/* daemon.h - what fdtuned's parts share: the loop, the settings, the store, the devices the
 * probe found at start-up, and the server and scheduler built on them. One instance per
 * process, owned by fdtuned.c. */
#ifndef FDT_DAEMON_H
#define FDT_DAEMON_H

#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "backends/backend.h"
#include "config.h"
#include "store.h"
#include "version.h"

#define FDT_PROTOCOL_VERSION 1

typedef struct fdt_server fdt_server;
typedef struct fdt_scheduler fdt_scheduler;
typedef struct fdt_query_cache fdt_query_cache;

typedef struct fdt_device_slot {
    fdt_device_info info;
    int64_t id;               /* the device's row in the store */
    char fingerprint[20];
    fdt_balance balance;      /* as stored; measured 0 until a worker has measured it */
    double outran_gbps;       /* the copy beside a job's leaders that outran the balance and
                                 doubted it (daemon/doubt.h); 0: none since it was stored */
} fdt_device_slot;

typedef struct fdt_daemon {
    uv_loop_t *loop;
    fdt_config config;
    const char *config_path;  /* NULL: embedded defaults and flags only */
    fdt_store *store;
    char backend[8];          /* the backend the probe opened */
    char host[64];            /* gethostname at start: where this daemon's own jobs measure */
    fdt_device_slot *devices;
    size_t ndevices;
    gid_t admin_gid;          /* admin_group resolved at start-up */
    int has_admin_gid;
    uint64_t start_ns;
    int stopping;             /* no new work; the loop ends once every handle is closed */
    int stop_asked;           /* the shutdown op was answered; the stop begins right after */
    fdt_server *server;
    fdt_scheduler *scheduler;
    fdt_query_cache *query_cache; /* the best rows, answered from memory */
    struct fdt_imports *imports;  /* files being imported, page by page (import.c); NULL */
    struct fdt_site *site;        /* the site store's winners (site.c); NULL: none */
    /* Begins a clean stop once the current callback has returned, so that a request that
     * stops the daemon gets its answer first. Set by the main, which owns the stop; the
     * parts ask through this rather than reach back into it. */
    void (*stop_soon)(struct fdt_daemon *d, const char *why);
} fdt_daemon;

#endif
