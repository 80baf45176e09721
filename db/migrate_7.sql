-- migrate_7.sql - schema version 6 to 7: noisy results, and doubtful best configurations.
-- The Makefile embeds this file as fdt_migrate_7_sql; db/store.c runs it in the
-- migration's transaction, with foreign keys off and checked before the commit.
--
-- A variant whose timings spread beyond the bound each time it was timed is stored with
-- status 'noisy' (its figures kept for the record) and never chosen. SQLite cannot change
-- a CHECK constraint in place, so results is rebuilt as migrate_2.sql rebuilt it: only the
-- status clause changes, every row is copied as it is, and its index is made again.

CREATE TABLE results_v7 (
    id INTEGER PRIMARY KEY,
    job_id INTEGER NOT NULL REFERENCES jobs (id),
    device_id INTEGER NOT NULL REFERENCES devices (id),
    stencil TEXT NOT NULL,
    radius INTEGER NOT NULL,
    precision TEXT NOT NULL CHECK (precision IN ('float', 'double')),
    nx INTEGER NOT NULL,
    ny INTEGER NOT NULL,
    nz INTEGER NOT NULL,
    cache TEXT NOT NULL CHECK (cache IN ('hot', 'cold', 'persist')),
    kernels TEXT NOT NULL,
    variant TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'wrong', 'compile_error', 'launch_error',
                                           'timeout', 'unsupported', 'noisy', 'error',
                                           'crashed')),
    leader INTEGER NOT NULL CHECK (leader IN (0, 1)),
    median_ms REAL,
    min_ms REAL,
    q1_ms REAL,
    q3_ms REAL,
    gbps REAL,
    compile_ms REAL,
    samples INTEGER NOT NULL,
    reps INTEGER NOT NULL,
    vgprs INTEGER NOT NULL,
    sgprs INTEGER NOT NULL,
    scratch_bytes INTEGER NOT NULL,
    shared_bytes INTEGER NOT NULL,
    message TEXT NOT NULL,
    measured INTEGER NOT NULL,
    UNIQUE (job_id, leader, variant)
);
INSERT INTO results_v7 SELECT * FROM results;
DROP TABLE results;
ALTER TABLE results_v7 RENAME TO results;
CREATE INDEX results_by_problem
    ON results (device_id, stencil, radius, precision, cache, nx, ny, nz, leader, job_id);

-- Why a best configuration's figures may not be trusted. A job on a busy host can time its
-- copy ceiling far below what the device copied when its balance was measured, or find
-- many variants too noisy to rank; its winner is still stored, the best it could find, with
-- the reason here, and every answer from the row says so (docs/protocol.md, "doubt").
-- Empty: nothing doubtful, as on every row stored before this version.
ALTER TABLE best ADD COLUMN doubt TEXT NOT NULL DEFAULT '';
