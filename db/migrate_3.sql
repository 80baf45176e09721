-- migrate_3.sql - schema version 2 to 3: jobs say how they search (tuner/search/) and
-- remember what their warm start was, so that a resumed job rebuilds the same search; and
-- result rows are found by problem, which the warm start asks for. Jobs that were queued
-- before this version keep measuring every variant: their strategy is exhaustive.

-- exhaustive | random | guided.
ALTER TABLE jobs ADD COLUMN strategy TEXT NOT NULL DEFAULT 'exhaustive'
    CHECK (strategy IN ('exhaustive', 'random', 'guided'));
-- Stop after this many evaluations (0: none), after this many seconds spent measuring
-- (0: none), after this many evaluations in a row without a 0.5% gain (0: never).
ALTER TABLE jobs ADD COLUMN budget INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN budget_s REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN patience INTEGER NOT NULL DEFAULT 0;
-- 1: time the leaders once the quick job's evaluations are measured and store the winner
-- at once (tune_if_missing), then go on searching.
ALTER TABLE jobs ADD COLUMN quick INTEGER NOT NULL DEFAULT 0 CHECK (quick IN (0, 1));
-- The jobs whose results are the warm start, as "id,id,..." (empty: none); NULL until the
-- job first runs and chooses them.
ALTER TABLE jobs ADD COLUMN warm TEXT;
-- Seconds spent measuring so far, summed over every run of the job (the budget_s rule).
ALTER TABLE jobs ADD COLUMN spent_s REAL NOT NULL DEFAULT 0;

-- The fullest job of a problem on a device (the warm start's question).
CREATE INDEX results_by_problem
    ON results (device_id, stencil, radius, precision, cache, nx, ny, nz, leader, job_id);
