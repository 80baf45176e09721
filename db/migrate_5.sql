-- migrate_5.sql - schema version 4 to 5: a device's balance (tuner/engine/balance.h), kept
-- with its fingerprint. The Makefile embeds this file as fdt_migrate_5_sql; db/store.c runs
-- it in the migration's transaction.
--
-- The copy's bandwidth (buffers well beyond L2) and the L2's (a read-mostly kernel over half
-- of it), in GB/s, are measured once per device, the first time a daemon sees it, and never
-- again: they say how the device's memory and its L2 compare, which no job's figures do,
-- since each job times its own grid. balance_measured is when (unix seconds); 0, as on every
-- device stored before this version, means not yet, and the next start measures it. The
-- figures are 0 until then, not NULL, which the store reads as NaN and JSON cannot carry;
-- l2_gbps stays 0 on a device that does not say its L2 size.

ALTER TABLE devices ADD COLUMN copy_gbps REAL NOT NULL DEFAULT 0;
ALTER TABLE devices ADD COLUMN l2_gbps REAL NOT NULL DEFAULT 0;
ALTER TABLE devices ADD COLUMN balance_measured INTEGER NOT NULL DEFAULT 0;
