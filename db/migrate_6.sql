-- migrate_6.sql - schema version 5 to 6: an index for "is this job already queued or
-- running?", which every tune and every shape of a batch asks before queueing (the
-- statement ST_JOB_FIND_ACTIVE in db/store.c). Without it each question scanned every
-- active job of the device, so a batch of n shapes cost n^2/2 row reads: 10,000 shapes
-- blocked the daemon for seconds. Partial: only active jobs are ever looked up this way,
-- and they are few beside the finished ones kept for the record. The Makefile embeds this
-- file as fdt_migrate_6_sql; db/store.c runs it in the migration's transaction.

CREATE INDEX jobs_active_by_shape ON jobs (device_index, nx, ny, nz, radius, precision)
    WHERE state IN ('queued', 'running');
