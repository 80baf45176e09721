-- migrate_10.sql - schema version 9 to 10: what a job's record says of how it ended. The
-- Makefile embeds this file as fdt_migrate_10_sql; db/store.c runs it in the migration's
-- transaction.

-- Why its search ended: 'space' (every variant measured), 'budget', 'patience' or 'time'
-- (tuner/search/search.h); '' while it runs, or where it ended otherwise (failed, cancelled:
-- its error says why) or before this version.
ALTER TABLE jobs ADD COLUMN ended_by TEXT NOT NULL DEFAULT '';
-- The device index that ran it last; -1 before it first ran, or before this version.
ALTER TABLE jobs ADD COLUMN ran_on INTEGER NOT NULL DEFAULT -1;
