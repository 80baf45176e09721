-- migrate_2.sql - schema version 1 to 2: cache mode 'persist' (f's row edges held in L2;
-- docs/measurement.md) becomes a value the cache columns accept. The Makefile embeds this
-- file as fdt_migrate_2_sql; db/store.c runs it in the migration's transaction, with
-- foreign keys off and checked before the commit.
--
-- SQLite cannot change a CHECK constraint in place, so each table that names the cache
-- modes is rebuilt as its ALTER TABLE page says ("Making Other Kinds Of Table Schema
-- Changes"): create the new table, copy every row as it is, drop the old one, rename the
-- new one, recreate its indexes. Only the three CHECK (cache IN ...) clauses change.

CREATE TABLE jobs_v2 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    state TEXT NOT NULL
        CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    device_index INTEGER NOT NULL,
    stencil TEXT NOT NULL,
    radius INTEGER NOT NULL,
    precision TEXT NOT NULL CHECK (precision IN ('float', 'double')),
    nx INTEGER NOT NULL,
    ny INTEGER NOT NULL,
    nz INTEGER NOT NULL,
    cache TEXT NOT NULL CHECK (cache IN ('hot', 'cold', 'persist')),
    family TEXT NOT NULL,
    subset INTEGER NOT NULL,
    total INTEGER NOT NULL,
    done INTEGER NOT NULL,
    ok INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    phase TEXT NOT NULL,
    best_variant TEXT NOT NULL,
    best_gbps REAL,
    error TEXT NOT NULL,
    created INTEGER NOT NULL,
    started INTEGER NOT NULL,
    finished INTEGER NOT NULL
);
INSERT INTO jobs_v2 SELECT * FROM jobs;
-- AUTOINCREMENT's high-water mark, so that no job id given out before is given again (the
-- rename below carries it over to the new name).
DELETE FROM sqlite_sequence WHERE name = 'jobs_v2';
INSERT INTO sqlite_sequence (name, seq) SELECT 'jobs_v2', seq FROM sqlite_sequence
    WHERE name = 'jobs';
DROP TABLE jobs;
ALTER TABLE jobs_v2 RENAME TO jobs;
CREATE INDEX jobs_by_state_device ON jobs (state, device_index);

CREATE TABLE results_v2 (
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
                                           'timeout', 'unsupported', 'error', 'crashed')),
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
INSERT INTO results_v2 SELECT * FROM results;
DROP TABLE results;
ALTER TABLE results_v2 RENAME TO results;

CREATE TABLE best_v2 (
    device_id INTEGER NOT NULL REFERENCES devices (id),
    stencil TEXT NOT NULL,
    radius INTEGER NOT NULL,
    precision TEXT NOT NULL CHECK (precision IN ('float', 'double')),
    cache TEXT NOT NULL CHECK (cache IN ('hot', 'cold', 'persist')),
    nx INTEGER NOT NULL,
    ny INTEGER NOT NULL,
    nz INTEGER NOT NULL,
    variant TEXT NOT NULL,
    gbps REAL,
    median_ms REAL,
    copy_gbps REAL,
    kernel1_gbps REAL,
    kernels TEXT NOT NULL,
    job_id INTEGER REFERENCES jobs (id),
    updated INTEGER NOT NULL,
    PRIMARY KEY (device_id, stencil, radius, precision, cache, nx, ny, nz)
) WITHOUT ROWID;
INSERT INTO best_v2 SELECT * FROM best;
DROP TABLE best;
ALTER TABLE best_v2 RENAME TO best;
