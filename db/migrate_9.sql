-- migrate_9.sql - schema version 8 to 9: users' stencil specs. The Makefile embeds this file
-- as fdt_migrate_9_sql; db/store.c runs it in the migration's transaction.

-- The spec of every stencil a job was queued for that is not built in, by the name problems
-- carry ("spec-" and the hash of its pattern, tuner/engine/stencil.c), so that the daemon
-- knows it again after a restart: a resumed job's worker is sent it, and queries of its
-- stored answers find it. The text is the spec as the daemon read it (JSON, docs/stencils.md).
CREATE TABLE stencils (
    name TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    created INTEGER NOT NULL
);
