-- migrate_12.sql - schema version 11 to 12: where a job's results were measured, so that
-- results merged from another fdtuned (fdtune import, tuner/daemon/import.c) keep their
-- provenance. The Makefile embeds this file as fdt_migrate_12_sql; db/store.c runs it in
-- the migration's transaction.

-- This store's identity, made once: what an export names as the store its rows were
-- measured into, so that an import knows one job there from another, whatever the hosts
-- are called (two daemons of one host have job ids of their own).
CREATE TABLE store_id (id TEXT NOT NULL);
INSERT INTO store_id VALUES (lower(hex(randomblob(16))));

-- The store that measured the job's results, its host and the job's id there; '', '' and
-- 0 for a job of this store's own daemon. An imported file's rows of one job there become
-- one job here, state done, found again by store and job when the file comes again.
ALTER TABLE jobs ADD COLUMN origin_store TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN origin_host TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN origin_job INTEGER NOT NULL DEFAULT 0;
-- The fdtuned version that measured them; '' for jobs stored before this version.
ALTER TABLE jobs ADD COLUMN fdtuned TEXT NOT NULL DEFAULT '';
-- When (unix seconds) the job's rows were imported; 0 for a job measured here. An imported
-- job keeps the strategy that searched there, and ended_by 'import'.
ALTER TABLE jobs ADD COLUMN imported INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_by_origin ON jobs (origin_store, origin_job) WHERE origin_store != '';
