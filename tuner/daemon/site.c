/* site.c - the site store (site.h).
 *
 * A site tunes its nodes and merges their results into one file (docs/cluster.md), which
 * every node reads: from a shared file system or a copy. The file is an export of results,
 * read with every row checked as an import's (import.c); fdtuned keeps each job's winner in
 * memory and never writes the file or copies it into its own store, which stays the only
 * one it writes. Where the file names a problem twice on one device, the winner kept is the
 * one import would keep: measured with this build's kernel sources, then the later one.
 *
 * The rows join the queries' own (query.c) under devices of their own, with negative ids;
 * an answer from them says "site". A load that fails (the file missing, a bad row) keeps
 * the rows already held, so a SIGHUP with a half-copied file changes nothing. */
#include "daemon/site.h"

#include <stdlib.h>
#include <string.h>

#include "daemon/import.h"
#include "hashes.h"
#include "util.h"

/* The site device row of info, added if new; its id, or 0 when out of memory. */
static int64_t device_id(fdt_site *s, const fdt_device_info *info)
{
    for (size_t i = 0; i < s->ndevices; i++)
        if (memcmp(&s->devices[i].info, info, sizeof *info) == 0)
            return s->devices[i].id;
    fdt_device_row *grown = realloc(s->devices, (s->ndevices + 1) * sizeof *grown);
    if (!grown)
        return 0;
    s->devices = grown;
    fdt_device_row *row = &s->devices[s->ndevices++];
    memset(row, 0, sizeof *row);
    row->id = -(int64_t)s->ndevices;
    row->info = *info;
    fdt_device_fingerprint(info, row->fingerprint);
    return row->id;
}

/* Keeps w, unless a winner of its device and problem stands over it. */
static int keep(fdt_site *s, const fdt_file_winner *w)
{
    const int64_t id = device_id(s, &w->device);
    if (!id)
        return -1;
    fdt_best b = w->best;
    b.device_id = id;
    size_t at = s->nbest;
    for (size_t i = 0; i < s->nbest; i++)
        if (s->best[i].device_id == id && memcmp(&s->best[i].key, &b.key, sizeof b.key) == 0)
            at = i;
    if (at < s->nbest && !fdt_import_stands_over(&b, &s->best[at]))
        return 0;
    s->nbest += at == s->nbest;
    b.job_id = (int64_t)at;
    s->best[at] = b;
    fdt_site_origin *o = &s->origins[at];
    o->job = w->job;
    fdt_copy_text(o->host, sizeof o->host, w->host);
    fdt_copy_text(o->store, sizeof o->store, w->store);
    fdt_copy_text(o->fdtuned, sizeof o->fdtuned, w->fdtuned);
    return 0;
}

static void site_release(fdt_site *s)
{
    if (!s)
        return;
    free(s->devices);
    free(s->best);
    free(s->origins);
    free(s);
}

int fdt_site_load(fdt_daemon *d, char *why, size_t len)
{
    fdt_file_winner *w = NULL;
    size_t n = 0;
    if (!d->config.site_store[0]) {
        fdt_site_free(d);
        return 0;
    }
    if (fdt_import_winners(d->config.site_store, &w, &n, why, len) != 0)
        return -1;
    fdt_site *s = calloc(1, sizeof *s);
    if (s) {
        s->best = calloc(n + 1, sizeof *s->best);
        s->origins = calloc(n + 1, sizeof *s->origins);
    }
    int rc = s && s->best && s->origins ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = keep(s, &w[i]);
    free(w);
    if (rc != 0) {
        snprintf(why, len, "%s: out of memory", d->config.site_store);
        site_release(s);
        return -1;
    }
    fdt_copy_text(s->path, sizeof s->path, d->config.site_store);
    fdt_site_free(d);
    d->site = s;
    return 0;
}

void fdt_site_free(fdt_daemon *d)
{
    site_release(d->site);
    d->site = NULL;
}

const fdt_site_origin *fdt_site_origin_of(const fdt_daemon *d, const fdt_best *b)
{
    if (!d->site || b->device_id >= 0 || b->job_id < 0 || (size_t)b->job_id >= d->site->nbest)
        return NULL;
    return &d->site->origins[b->job_id];
}
