/* store_devices.c - the devices table: each device the daemon has probed, keyed by its
 * fingerprint (common/hashes.h), with its balance (measured by engine/balance.c), and read back
 * for fallback matching; a device stored under an older build's fingerprint is adopted. */
#include "store_int.h"

#include <stdint.h>
#include <string.h>

#include "hashes.h"

/* A row a device may be adopted from: its id and the fingerprint it was stored under. */
typedef struct older_row {
    int64_t id;
    char fingerprint[20];
} older_row;

static int read_older_row(fdt_store *s, sqlite3_stmt *st, void *out)
{
    older_row *row = out;
    reader r = {st, 0};
    (void)s;
    row->id = col_int(&r);
    col_text(&r, row->fingerprint, sizeof row->fingerprint);
    return 0;
}

/* The row of device d under another fingerprint than its own, if any: 1, 0 or -1. */
static int find_older_row(fdt_store *s, const fdt_device_info *d, const char *fingerprint,
                          older_row *row)
{
    binder b;
    if (stmt_start(s, ST_DEVICE_ADOPTABLE, &b) != 0)
        return -1;
    bind_text(&b, fingerprint, SIZE_MAX);
    bind_text(&b, d->backend, sizeof d->backend);
    bind_text(&b, d->vendor, sizeof d->vendor);
    bind_text(&b, d->name, sizeof d->name);
    bind_text(&b, d->arch, sizeof d->arch);
    bind_int(&b, d->compute_units);
    bind_int(&b, (int64_t)d->memory_bytes);
    bind_text(&b, d->driver_version, sizeof d->driver_version);
    bind_text(&b, d->compiler_version, sizeof d->compiler_version);
    return stmt_fetch_one(s, &b, read_older_row, row);
}

static int set_device_fingerprint(fdt_store *s, int64_t id, const char *fingerprint)
{
    binder b;
    if (stmt_start(s, ST_DEVICE_ADOPT, &b) != 0)
        return -1;
    bind_text(&b, fingerprint, SIZE_MAX);
    bind_int(&b, id);
    return stmt_run(s, &b);
}

static int set_jobs_fingerprint(fdt_store *s, const char *from, const char *to)
{
    binder b;
    if (stmt_start(s, ST_JOBS_ADOPT, &b) != 0)
        return -1;
    bind_text(&b, from, SIZE_MAX);
    bind_text(&b, to, SIZE_MAX);
    return stmt_run(s, &b);
}

/* The row and the jobs that name its fingerprint (those any device of its kind may run)
 * take the new one together. */
static int adopt_row(fdt_store *s, const older_row *row, const char *fingerprint)
{
    if (fdt_store_begin(s) != 0)
        return -1;
    if (set_device_fingerprint(s, row->id, fingerprint) != 0 ||
        set_jobs_fingerprint(s, row->fingerprint, fingerprint) != 0) {
        fdt_store_rollback(s);
        return -1;
    }
    return fdt_store_commit(s);
}

/* The device's row, inserted or its last-seen time refreshed; *id and *balance from it. */
static int upsert_row(fdt_store *s, const fdt_device_info *d, const char *fingerprint,
                      int64_t *id, fdt_balance *balance)
{
    binder b;
    const int64_t seen = store_now();
    if (stmt_start(s, ST_DEVICE_UPSERT, &b) != 0)
        return -1;
    bind_text(&b, fingerprint, SIZE_MAX);
    bind_text(&b, d->backend, sizeof d->backend);
    bind_text(&b, d->vendor, sizeof d->vendor);
    bind_text(&b, d->name, sizeof d->name);
    bind_text(&b, d->arch, sizeof d->arch);
    bind_int(&b, d->compute_units);
    bind_int(&b, (int64_t)d->memory_bytes);
    bind_int(&b, (int64_t)d->l2_bytes);
    bind_text(&b, d->driver_version, sizeof d->driver_version);
    bind_text(&b, d->compiler_version, sizeof d->compiler_version);
    bind_int(&b, d->warp_size);
    bind_int(&b, d->max_threads_per_block);
    bind_int(&b, d->max_shared_per_block);
    for (int i = 0; i < 3; i++)
        bind_int(&b, d->max_grid[i]);
    bind_int(&b, d->block_barriers);
    bind_int(&b, seen);
    bind_int(&b, seen);
    int rc = stmt_step(&b);
    if (rc == SQLITE_ROW) {
        reader r = {b.st, 0};
        *id = col_int(&r);
        balance->copy_gbps = col_real(&r);
        balance->l2_gbps = col_real(&r);
        balance->measured = col_int(&r);
        col_text(&r, balance->doubt, sizeof balance->doubt);
        balance->copy_spread = col_real(&r);
        rc = sqlite3_step(b.st);
    }
    return stmt_finish(s, b.st, rc);
}

/* A device stored by an older build is adopted, not stored again. Its fingerprint is a hash
 * of its identity, and a build whose hash differs (FNV-1a became XXH3) gives the same device
 * another one: inserted as a new device, it would start without its balance, and its
 * results, best rows and queued jobs would stay with the old row, answered to no one. So
 * where no row has the device's fingerprint but one has every field the fingerprint hashes
 * alike, that row takes the new fingerprint, keeping its id and all that refers to it. */
int fdt_store_device_upsert(fdt_store *s, const fdt_device_info *d, int64_t *id,
                            fdt_balance *balance)
{
    char fingerprint[20];
    older_row older;
    fdt_device_fingerprint(d, fingerprint);
    const int found = find_older_row(s, d, fingerprint, &older);
    if (found < 0 || (found && adopt_row(s, &older, fingerprint) != 0))
        return -1;
    return upsert_row(s, d, fingerprint, id, balance);
}

/* No adoption here: a file names its device by this build's fingerprint (import.c checks
 * it against the fields), and the import's transaction holds the write. */
int fdt_store_device_import(fdt_store *s, const fdt_device_info *d, int64_t *id)
{
    char fingerprint[20];
    fdt_balance balance;
    fdt_device_fingerprint(d, fingerprint);
    return upsert_row(s, d, fingerprint, id, &balance);
}

int fdt_store_device_balance_put(fdt_store *s, int64_t id, const fdt_balance *balance)
{
    binder b;
    if (stmt_start(s, ST_DEVICE_BALANCE_PUT, &b) != 0)
        return -1;
    bind_real(&b, balance->copy_gbps);
    bind_real(&b, balance->l2_gbps);
    bind_int(&b, balance->measured);
    bind_text(&b, balance->doubt, sizeof balance->doubt);
    bind_real(&b, balance->copy_spread);
    bind_int(&b, id);
    if (stmt_run(s, &b) != 0)
        return -1;
    return sqlite3_changes(s->db) == 1 ? 0 : store_fail(s, "no device %lld in the store",
                                                        (long long)id);
}

static int read_device(fdt_store *s, sqlite3_stmt *st, void *out)
{
    fdt_device_row *row = out;
    fdt_device_info *d = &row->info;
    reader r = {st, 0};
    (void)s;
    memset(row, 0, sizeof *row);
    row->id = col_int(&r);
    col_text(&r, row->fingerprint, sizeof row->fingerprint);
    col_text(&r, d->backend, sizeof d->backend);
    col_text(&r, d->vendor, sizeof d->vendor);
    col_text(&r, d->name, sizeof d->name);
    col_text(&r, d->arch, sizeof d->arch);
    d->compute_units = col_int(&r);
    d->memory_bytes = (uint64_t)col_int(&r);
    d->l2_bytes = (uint64_t)col_int(&r);
    col_text(&r, d->driver_version, sizeof d->driver_version);
    col_text(&r, d->compiler_version, sizeof d->compiler_version);
    d->warp_size = col_int(&r);
    d->max_threads_per_block = col_int(&r);
    d->max_shared_per_block = col_int(&r);
    for (int i = 0; i < 3; i++)
        d->max_grid[i] = (unsigned)col_int(&r);
    d->block_barriers = col_int(&r);
    return 0;
}

int fdt_store_devices(fdt_store *s, fdt_device_row **out, size_t *count)
{
    binder b;
    void *rows;
    if (stmt_start(s, ST_DEVICES, &b) != 0 ||
        stmt_fetch_all(s, &b, sizeof **out, read_device, NULL, &rows, count) != 0)
        return -1;
    *out = rows;
    return 0;
}
