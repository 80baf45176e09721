-- schema.sql - the store's complete schema, version 1. The Makefile embeds this file as
-- fdt_schema_sql; db/store.c runs it, in one transaction, to take an empty file to version 1.
-- Later versions are migration steps, db/migrate_N.sql (N the version it makes); this file
-- stays what version 1 was.
--
-- Enumerations are stored as their names (readable with the sqlite3 shell, stable when an
-- enum is reordered) and checked here, so no writer can store a value readers cannot parse.
-- Times are unix seconds; 0 means "not yet".

-- Every device a worker has opened. The fingerprint covers the identifying fields (see
-- fdt_device_fingerprint); the rest are kept for fallback matching and for the record.
CREATE TABLE devices (
    id INTEGER PRIMARY KEY,
    fingerprint TEXT NOT NULL UNIQUE,
    backend TEXT NOT NULL,
    vendor TEXT NOT NULL,
    name TEXT NOT NULL,
    arch TEXT NOT NULL,
    compute_units INTEGER NOT NULL,
    memory_bytes INTEGER NOT NULL,
    l2_bytes INTEGER NOT NULL,
    driver_version TEXT NOT NULL,
    compiler_version TEXT NOT NULL,
    warp_size INTEGER NOT NULL,
    max_threads_per_block INTEGER NOT NULL,
    max_shared_per_block INTEGER NOT NULL,
    max_grid_x INTEGER NOT NULL,
    max_grid_y INTEGER NOT NULL,
    max_grid_z INTEGER NOT NULL,
    block_barriers INTEGER NOT NULL,
    first_seen INTEGER NOT NULL,
    last_seen INTEGER NOT NULL
);

-- The durable queue. AUTOINCREMENT: a job id that clients were given is never reused.
CREATE TABLE jobs (
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
    cache TEXT NOT NULL CHECK (cache IN ('hot', 'cold')),
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
-- The next queued job of a device, active jobs, and the list filtered by state.
CREATE INDEX jobs_by_state_device ON jobs (state, device_index);

-- Every measured variant, stored as it lands so that a killed job resumes without measuring
-- it again. The device and key are copied from the job so that rows stand alone in exports.
-- The unique index doubles as "results of a job" (its first column).
CREATE TABLE results (
    id INTEGER PRIMARY KEY,
    job_id INTEGER NOT NULL REFERENCES jobs (id),
    device_id INTEGER NOT NULL REFERENCES devices (id),
    stencil TEXT NOT NULL,
    radius INTEGER NOT NULL,
    precision TEXT NOT NULL CHECK (precision IN ('float', 'double')),
    nx INTEGER NOT NULL,
    ny INTEGER NOT NULL,
    nz INTEGER NOT NULL,
    cache TEXT NOT NULL CHECK (cache IN ('hot', 'cold')),
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

-- The winner per problem. The key's shape comes last so that the primary key serves a
-- query's candidates (every shape of one device, stencil, radius, precision and cache).
CREATE TABLE best (
    device_id INTEGER NOT NULL REFERENCES devices (id),
    stencil TEXT NOT NULL,
    radius INTEGER NOT NULL,
    precision TEXT NOT NULL CHECK (precision IN ('float', 'double')),
    cache TEXT NOT NULL CHECK (cache IN ('hot', 'cold')),
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

-- Compiled code objects by fdt_code_key (source, defines, arch, compiler version).
CREATE TABLE code_cache (
    key TEXT PRIMARY KEY,
    code BLOB NOT NULL,
    created INTEGER NOT NULL
);
