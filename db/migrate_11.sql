-- migrate_11.sql - schema version 10 to 11: doubt kept and acted on (daemon/doubt.h). The
-- Makefile embeds this file as fdt_migrate_11_sql; db/store.c runs it in the migration's
-- transaction.

-- Why the device's balance is doubted (measured on a busy host), or ''; a doubted balance
-- is measured again when the device is idle.
ALTER TABLE devices ADD COLUMN balance_doubt TEXT NOT NULL DEFAULT '';
-- How far the balance's copy samples spread (fdt_stats_spread); 0 before this version.
ALTER TABLE devices ADD COLUMN balance_copy_spread REAL NOT NULL DEFAULT 0;
-- When (unix seconds) the daemon, idle on the row's device, tunes a doubtful winner again:
-- one doubted because the host disturbed its figures. 0: never (not doubted, doubted for a
-- reason a quiet host would not change, or stored before this version).
ALTER TABLE best ADD COLUMN remeasure_after INTEGER NOT NULL DEFAULT 0;
-- Why its winner's figures are doubted (the best row's doubt when it was stored), or ''.
ALTER TABLE jobs ADD COLUMN doubt TEXT NOT NULL DEFAULT '';
-- Its results stored noisy: too spread to rank, even measured again.
ALTER TABLE jobs ADD COLUMN noisy INTEGER NOT NULL DEFAULT 0;
-- The job whose doubtful winner this one measures again, queued by the daemon; 0: asked for.
ALTER TABLE jobs ADD COLUMN remeasures INTEGER NOT NULL DEFAULT 0;
