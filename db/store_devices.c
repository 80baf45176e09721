/* store_devices.c - the devices table: each device the daemon has probed, keyed by its
 * fingerprint (common/hashes.h), with its balance (measured by engine/balance.c), and read back for
 * fallback matching. */
#include "store_int.h"

#include <stdint.h>
#include <string.h>

#include "hashes.h"

int fdt_store_device_upsert(fdt_store *s, const fdt_device_info *d, int64_t *id,
                            fdt_balance *balance)
{
    binder b;
    char fingerprint[20];
    const int64_t seen = store_now();
    if (stmt_start(s, ST_DEVICE_UPSERT, &b) != 0)
        return -1;
    fdt_device_fingerprint(d, fingerprint);
    bind_text(&b, fingerprint, sizeof fingerprint);
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
