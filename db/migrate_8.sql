-- migrate_8.sql - schema version 7 to 8: what a job costs, and which device may run it. The
-- Makefile embeds this file as fdt_migrate_8_sql; db/store.c runs it in the migration's
-- transaction.

-- Seconds, summed over every run of the job: the wall time a device spent on it, the
-- compilers' wall time inside it (code-cache hits cost none), and the device time inside
-- timed regions (the GPU busy share is gpu_s / wall_s).
ALTER TABLE jobs ADD COLUMN wall_s REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN compile_s REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN gpu_s REAL NOT NULL DEFAULT 0;
-- 1: an interactive tune, taken before any queued batch job (0).
ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0 CHECK (priority IN (0, 1));
-- The batch the job was queued with (the id of its first job), 0: none.
ALTER TABLE jobs ADD COLUMN batch INTEGER NOT NULL DEFAULT 0;
-- device_index -1: any idle device whose fingerprint is this one ('' : any device at all),
-- so that a batch spreads over every GPU of one kind; results are stored under the device
-- that ran each job, and devices of one fingerprint share them.
ALTER TABLE jobs ADD COLUMN fingerprint TEXT NOT NULL DEFAULT '';

-- The next job of a device: the oldest of the highest priority among its own and those any
-- device of its kind may take.
CREATE INDEX jobs_queued ON jobs (priority DESC, id) WHERE state = 'queued';
-- A batch's jobs, for its progress in status.
CREATE INDEX jobs_by_batch ON jobs (batch) WHERE batch > 0;
