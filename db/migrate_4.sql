-- migrate_4.sql - schema version 3 to 4: a second ceiling, and cache mode auto. The
-- Makefile embeds this file as fdt_migrate_4_sql; db/store.c runs it in the migration's
-- transaction, with foreign keys off and checked before the commit.
--
-- Every job's leaders round times a second ceiling beside the device copy, the interior
-- copy (kernels_src/copy.hip, docs/measurement.md): u's interior copied to f's, paying for
-- the same partly written row ends as a stencil. The best row keeps its figure, as it keeps
-- copy_gbps, so that query answers and exports carry both ceilings of the round that chose
-- the winner.
--
-- Cache mode auto: a job that times its leaders hot and persist side by side stores its
-- choice as a best row under cache 'auto', whose new column state says which state won (and
-- so whether the solver must hold f's row edges in L2). best is rebuilt for its CHECK, as
-- migrate_2.sql rebuilt it; the jobs of such a search keep their key's cache, 'hot' (what
-- their first pass measures), and say auto with choose_cache.

CREATE TABLE best_v4 (
    device_id INTEGER NOT NULL REFERENCES devices (id),
    stencil TEXT NOT NULL,
    radius INTEGER NOT NULL,
    precision TEXT NOT NULL CHECK (precision IN ('float', 'double')),
    cache TEXT NOT NULL CHECK (cache IN ('hot', 'cold', 'persist', 'auto')),
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
    -- GB/s of the fastest interior copy shape, counting the interior read and written. 0
    -- where none was timed: rows stored before this version, or a round in which no shape
    -- ran. Not NULL, which the store reads as NaN: JSON has no NaN, so an old row could not
    -- be answered or exported with the column.
    interior_copy_gbps REAL NOT NULL DEFAULT 0,
    -- The state the winner and copy_gbps were timed in: the key's cache, except under
    -- 'auto', where it is the state chosen.
    state TEXT NOT NULL CHECK (state IN ('hot', 'cold', 'persist')),
    PRIMARY KEY (device_id, stencil, radius, precision, cache, nx, ny, nz)
) WITHOUT ROWID;
INSERT INTO best_v4
    SELECT device_id, stencil, radius, precision, cache, nx, ny, nz, variant, gbps, median_ms,
           copy_gbps, kernel1_gbps, kernels, job_id, updated, 0, cache
    FROM best;
DROP TABLE best;
ALTER TABLE best_v4 RENAME TO best;

-- 1: the job's leaders are timed hot and persist side by side, and its choice is stored
-- under cache 'auto' beside its hot winner.
ALTER TABLE jobs ADD COLUMN choose_cache INTEGER NOT NULL DEFAULT 0
    CHECK (choose_cache IN (0, 1));
