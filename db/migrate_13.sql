-- migrate_13.sql - schema version 12 to 13: a problem's memory layout, its row pitch and
-- the offset of its first point (common/problem.h), joins the key of every job, result and
-- winner: the same shape laid out another way is another measurement. The Makefile embeds
-- this file as fdt_migrate_13_sql; db/store.c runs it in the migration's transaction, with
-- foreign keys off and checked before the commit.
--
-- row_pitch 0 is nx (dense rows), the one form the store keeps for it; base_offset is in
-- points from a 256-byte aligned base. Every row stored before this version is dense.
-- ("offset" itself is an SQL keyword, and a pitch of 0 meaning nx is not a pitch: hence
-- the columns' names.)

ALTER TABLE jobs ADD COLUMN row_pitch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN base_offset INTEGER NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN row_pitch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN base_offset INTEGER NOT NULL DEFAULT 0;

DROP INDEX results_by_problem;
CREATE INDEX results_by_problem ON results (device_id, stencil, radius, precision, cache, nx,
                                            ny, nz, row_pitch, base_offset, leader, job_id);

-- best is rebuilt for its primary key, as migrate_4.sql rebuilt it.
CREATE TABLE best_v13 (
    device_id INTEGER NOT NULL REFERENCES devices (id),
    stencil TEXT NOT NULL,
    radius INTEGER NOT NULL,
    precision TEXT NOT NULL CHECK (precision IN ('float', 'double')),
    cache TEXT NOT NULL CHECK (cache IN ('hot', 'cold', 'persist', 'auto')),
    nx INTEGER NOT NULL,
    ny INTEGER NOT NULL,
    nz INTEGER NOT NULL,
    row_pitch INTEGER NOT NULL,
    base_offset INTEGER NOT NULL,
    variant TEXT NOT NULL,
    gbps REAL,
    median_ms REAL,
    copy_gbps REAL,
    kernel1_gbps REAL,
    kernels TEXT NOT NULL,
    job_id INTEGER REFERENCES jobs (id),
    updated INTEGER NOT NULL,
    interior_copy_gbps REAL NOT NULL DEFAULT 0,
    state TEXT NOT NULL CHECK (state IN ('hot', 'cold', 'persist')),
    doubt TEXT NOT NULL DEFAULT '',
    remeasure_after INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (device_id, stencil, radius, precision, cache, nx, ny, nz, row_pitch,
                 base_offset)
) WITHOUT ROWID;
INSERT INTO best_v13
    SELECT device_id, stencil, radius, precision, cache, nx, ny, nz, 0, 0, variant, gbps,
           median_ms, copy_gbps, kernel1_gbps, kernels, job_id, updated, interior_copy_gbps,
           state, doubt, remeasure_after
    FROM best;
DROP TABLE best;
ALTER TABLE best_v13 RENAME TO best;
