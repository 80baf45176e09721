/* store.c - the SQLite store behind store.h: opening, checking and migrating the file, the
 * statements (all prepared once, at open), and the rows of devices, jobs, results, best and
 * the code cache. */
#include "store.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "engine/hashes.h"

/* Generated from db/schema.sql and db/migrate_N.sql by the Makefile. */
extern const char fdt_schema_sql[], fdt_migrate_2_sql[];

/* Written into every store's header, so that another program's SQLite file is refused
 * rather than migrated. "FDTu". */
#define FDT_APPLICATION_ID 0x46445475

/* Step i takes a file from schema version i to version i + 1, inside one transaction. */
static const char *const migrations[] = {fdt_schema_sql, fdt_migrate_2_sql};
_Static_assert(sizeof migrations / sizeof migrations[0] == FDT_SCHEMA_VERSION,
               "one migration step per schema version");

/* ---- statements ---- */

/* Column lists shared by the statements that write a row and those that read it back; the
 * binders and readers below walk them in this order. */
#define KEY_COLUMNS "stencil, radius, precision, nx, ny, nz, cache"
#define DEVICE_COLUMNS                                                                     \
    "backend, vendor, name, arch, compute_units, memory_bytes, l2_bytes, driver_version, " \
    "compiler_version, warp_size, max_threads_per_block, max_shared_per_block, "           \
    "max_grid_x, max_grid_y, max_grid_z, block_barriers"
#define JOB_COLUMNS                                                                        \
    "state, device_index, " KEY_COLUMNS ", family, subset, total, done, ok, failed, "      \
    "phase, best_variant, best_gbps, error, created, started, finished"
#define RESULT_COLUMNS                                                                     \
    "job_id, variant, status, leader, median_ms, min_ms, q1_ms, q3_ms, gbps, compile_ms, " \
    "samples, reps, vgprs, sgprs, scratch_bytes, shared_bytes, message"
#define BEST_COLUMNS                                                                       \
    "device_id, " KEY_COLUMNS ", variant, gbps, median_ms, copy_gbps, kernel1_gbps, "     \
    "kernels, job_id, updated"
#define SELECT_JOB "SELECT id, " JOB_COLUMNS " FROM jobs "

/* Reads come first: a read-only store prepares only those. */
enum {
    ST_DEVICES,
    ST_JOB_GET,
    ST_JOB_FIND_ACTIVE,
    ST_JOB_NEXT,
    ST_JOBS,
    ST_JOB_COUNTS,
    ST_JOB_MEASURED,
    ST_JOB_LEADERS,
    ST_JOB_RESULTS,
    ST_RESULTS_ALL,
    ST_BEST_ALL,
    ST_CODE_GET,
    ST_FIRST_WRITE,
    ST_DEVICE_UPSERT = ST_FIRST_WRITE,
    ST_JOB_CREATE,
    ST_JOB_UPDATE,
    ST_JOBS_REQUEUE,
    ST_RESULT_ADD,
    ST_BEST_PUT,
    ST_CODE_PUT,
    ST_COUNT
};

static const char *const statements[ST_COUNT] = {
    [ST_DEVICES] = "SELECT id, fingerprint, " DEVICE_COLUMNS " FROM devices ORDER BY id",
    [ST_JOB_GET] = SELECT_JOB "WHERE id = ?",
    [ST_JOB_FIND_ACTIVE] =
        SELECT_JOB "WHERE state IN ('queued', 'running') AND device_index = ? "
        "AND stencil = ? AND radius = ? AND precision = ? AND nx = ? AND ny = ? AND nz = ? "
        "AND cache = ? AND family = ? AND subset = ? ORDER BY id LIMIT 1",
    [ST_JOB_NEXT] =
        SELECT_JOB "WHERE state = 'queued' AND device_index = ? ORDER BY id LIMIT 1",
    [ST_JOBS] = SELECT_JOB "WHERE ?1 IS NULL OR state = ?1 ORDER BY id DESC LIMIT ?2",
    [ST_JOB_COUNTS] = "SELECT state, count(*) FROM jobs GROUP BY state",
    [ST_JOB_MEASURED] = "SELECT variant FROM results WHERE job_id = ? AND leader = 0 ORDER BY id",
    [ST_JOB_LEADERS] =
        "SELECT variant FROM results WHERE job_id = ? AND leader = 0 AND status = 'ok' "
        "AND median_ms IS NOT NULL ORDER BY median_ms, id LIMIT ?",
    [ST_JOB_RESULTS] = "SELECT " RESULT_COLUMNS " FROM results WHERE job_id = ? ORDER BY id",
    [ST_RESULTS_ALL] =
        "SELECT " RESULT_COLUMNS ", device_id, " KEY_COLUMNS " FROM results ORDER BY id",
    [ST_BEST_ALL] =
        "SELECT " BEST_COLUMNS " FROM best "
        "ORDER BY device_id, stencil, radius, precision, cache, nx, ny, nz",
    [ST_CODE_GET] = "SELECT code FROM code_cache WHERE key = ?",

    [ST_DEVICE_UPSERT] =
        "INSERT INTO devices (fingerprint, " DEVICE_COLUMNS ", first_seen, last_seen) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (fingerprint) DO UPDATE SET l2_bytes = excluded.l2_bytes, "
        "warp_size = excluded.warp_size, "
        "max_threads_per_block = excluded.max_threads_per_block, "
        "max_shared_per_block = excluded.max_shared_per_block, "
        "max_grid_x = excluded.max_grid_x, max_grid_y = excluded.max_grid_y, "
        "max_grid_z = excluded.max_grid_z, block_barriers = excluded.block_barriers, "
        "last_seen = excluded.last_seen "
        "RETURNING id",
    [ST_JOB_CREATE] =
        "INSERT INTO jobs (" JOB_COLUMNS ") "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    [ST_JOB_UPDATE] =
        "UPDATE jobs SET state = ?, total = ?, done = ?, ok = ?, failed = ?, phase = ?, "
        "best_variant = ?, best_gbps = ?, error = ?, started = ?, finished = ? WHERE id = ?",
    [ST_JOBS_REQUEUE] = "UPDATE jobs SET state = 'queued', phase = '' WHERE state = 'running'",
    /* A first-pass row that exists already is left alone (no change: the caller reports
     * it); a leader row replaces the earlier one. */
    [ST_RESULT_ADD] =
        "INSERT INTO results (" RESULT_COLUMNS ", device_id, " KEY_COLUMNS ", kernels, measured) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (job_id, leader, variant) DO UPDATE SET status = excluded.status, "
        "median_ms = excluded.median_ms, min_ms = excluded.min_ms, q1_ms = excluded.q1_ms, "
        "q3_ms = excluded.q3_ms, gbps = excluded.gbps, compile_ms = excluded.compile_ms, "
        "samples = excluded.samples, reps = excluded.reps, vgprs = excluded.vgprs, "
        "sgprs = excluded.sgprs, scratch_bytes = excluded.scratch_bytes, "
        "shared_bytes = excluded.shared_bytes, message = excluded.message, "
        "device_id = excluded.device_id, kernels = excluded.kernels, "
        "measured = excluded.measured "
        "WHERE excluded.leader = 1",
    [ST_BEST_PUT] =
        "INSERT INTO best (" BEST_COLUMNS ") "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (device_id, stencil, radius, precision, cache, nx, ny, nz) DO UPDATE SET "
        "variant = excluded.variant, gbps = excluded.gbps, median_ms = excluded.median_ms, "
        "copy_gbps = excluded.copy_gbps, kernel1_gbps = excluded.kernel1_gbps, "
        "kernels = excluded.kernels, job_id = excluded.job_id, updated = excluded.updated",
    [ST_CODE_PUT] =
        "INSERT INTO code_cache (key, code, created) VALUES (?, ?, ?) "
        "ON CONFLICT (key) DO UPDATE SET code = excluded.code, created = excluded.created",
};

struct fdt_store {
    sqlite3 *db;
    int readonly;
    sqlite3_stmt *st[ST_COUNT]; /* NULL for the writes of a read-only store */
    char err[512];
};

/* A step result meaning "failed, and s->err says why already"; SQLite's codes are >= 0. */
#define REPORTED (-1)

static const char *const job_states[] = {"queued", "running", "done", "failed", "cancelled"};

const char *fdt_job_state_name(fdt_job_state s)
{
    return (unsigned)s < sizeof job_states / sizeof job_states[0] ? job_states[s] : "unknown";
}

int fdt_job_state_parse(const char *name, fdt_job_state *out)
{
    for (size_t i = 0; i < sizeof job_states / sizeof job_states[0]; i++)
        if (strcmp(name, job_states[i]) == 0) {
            *out = (fdt_job_state)i;
            return 0;
        }
    return -1;
}

static int64_t now(void)
{
    return (int64_t)time(NULL);
}

/* ---- errors ---- */

__attribute__((format(printf, 2, 3))) static int store_fail(fdt_store *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return -1;
}

static int sql_fail(fdt_store *s)
{
    return store_fail(s, "%s", sqlite3_errmsg(s->db));
}

const char *fdt_store_error(fdt_store *s)
{
    return s ? s->err : "no store";
}

/* ---- binding parameters and reading columns, in the order of the column lists ---- */

typedef struct binder {
    sqlite3_stmt *st;
    int next; /* the last parameter bound */
    int rc;   /* the first failure */
} binder;

static void bound(binder *b, int rc)
{
    if (b->rc == SQLITE_OK)
        b->rc = rc;
}

static void bind_int(binder *b, int64_t v)
{
    bound(b, sqlite3_bind_int64(b->st, ++b->next, v));
}

/* NaN is stored as NULL (SQLite has no NaN) and read back as NaN. */
static void bind_real(binder *b, double v)
{
    bound(b, sqlite3_bind_double(b->st, ++b->next, v));
}

static void bind_null(binder *b)
{
    bound(b, sqlite3_bind_null(b->st, ++b->next));
}

/* Text of at most cap bytes (the size of a struct's field, which may lack its NUL); NULL
 * binds NULL. The text must live until the statement is reset. */
static void bind_text(binder *b, const char *text, size_t cap)
{
    if (!text) {
        bind_null(b);
        return;
    }
    ++b->next;
    bound(b, sqlite3_bind_text64(b->st, b->next, text, strnlen(text, cap), SQLITE_STATIC,
                                 SQLITE_UTF8));
}

static void bind_blob(binder *b, const void *data, size_t size)
{
    ++b->next;
    bound(b, size ? sqlite3_bind_blob64(b->st, b->next, data, size, SQLITE_STATIC)
                  : sqlite3_bind_zeroblob(b->st, b->next, 0));
}

/* A count for LIMIT, which SQLite takes as a signed 64-bit value. */
static void bind_limit(binder *b, size_t n)
{
    bind_int(b, n > (size_t)INT64_MAX ? INT64_MAX : (int64_t)n);
}

static void bind_key(binder *b, const fdt_key *k)
{
    bind_text(b, k->stencil, sizeof k->stencil);
    bind_int(b, k->problem.radius);
    bind_text(b, fdt_precision_name(k->problem.precision), SIZE_MAX);
    bind_int(b, k->problem.nx);
    bind_int(b, k->problem.ny);
    bind_int(b, k->problem.nz);
    bind_text(b, fdt_cache_mode_name(k->problem.cache), SIZE_MAX);
}

typedef struct reader {
    sqlite3_stmt *st;
    int next;
} reader;

static int64_t col_int(reader *r)
{
    return sqlite3_column_int64(r->st, r->next++);
}

static double col_real(reader *r)
{
    const int i = r->next++;
    return sqlite3_column_type(r->st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(r->st, i);
}

static void col_text(reader *r, char *dst, size_t cap)
{
    const unsigned char *text = sqlite3_column_text(r->st, r->next++);
    fdt_copy_text(dst, cap, text ? (const char *)text : "");
}

static int col_key(fdt_store *s, reader *r, fdt_key *k)
{
    char precision[16], cache[16];
    col_text(r, k->stencil, sizeof k->stencil);
    k->problem.radius = col_int(r);
    col_text(r, precision, sizeof precision);
    k->problem.nx = col_int(r);
    k->problem.ny = col_int(r);
    k->problem.nz = col_int(r);
    col_text(r, cache, sizeof cache);
    if (fdt_precision_parse(precision, &k->problem.precision) != 0)
        return store_fail(s, "the store holds an unknown precision '%s'", precision);
    if (fdt_cache_mode_parse(cache, &k->problem.cache) != 0)
        return store_fail(s, "the store holds an unknown cache mode '%s'", cache);
    return 0;
}

/* ---- running statements ---- */

/* Begins a use of a prepared statement; a write on a read-only store fails here. */
static int start(fdt_store *s, int which, binder *b)
{
    *b = (binder){.st = s->st[which]};
    return b->st ? 0 : store_fail(s, "the store is open read-only");
}

static int step(binder *b)
{
    return b->rc == SQLITE_OK ? sqlite3_step(b->st) : b->rc;
}

/* Ends a use: 0 when the last step was SQLITE_DONE, else -1 with the reason in s->err.
 * Bindings are cleared so that no pointer into the caller's memory outlives the call. */
static int finish(fdt_store *s, sqlite3_stmt *st, int rc)
{
    const int result = rc == SQLITE_DONE ? 0 : rc == REPORTED ? -1 : sql_fail(s);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return result;
}

static int run(fdt_store *s, binder *b)
{
    return finish(s, b->st, step(b));
}

typedef int (*row_reader)(fdt_store *s, sqlite3_stmt *st, void *out);

/* The first row, if any, into out: 1, 0 or -1. */
static int fetch_one(fdt_store *s, binder *b, row_reader read, void *out)
{
    int rc = step(b);
    const int found = rc == SQLITE_ROW;
    if (found)
        rc = read(s, b->st, out) == 0 ? SQLITE_DONE : REPORTED;
    return finish(s, b->st, rc) == 0 ? found : -1;
}

/* Every row into a malloc'd array of items of size bytes. On failure release (when given)
 * frees what the rows read so far own, and the array. */
static int fetch_all(fdt_store *s, binder *b, size_t size, row_reader read,
                     void (*release)(void *items, size_t n), void **out, size_t *count)
{
    char *items = NULL;
    size_t n = 0, cap = 0;
    int rc;
    for (rc = step(b); rc == SQLITE_ROW; rc = sqlite3_step(b->st)) {
        if (n == cap) {
            const size_t more = cap ? 2 * cap : 16;
            char *grown = reallocarray(items, more, size);
            if (!grown) {
                rc = store_fail(s, "out of memory");
                break;
            }
            items = grown;
            cap = more;
        }
        if (read(s, b->st, items + n * size) != 0) {
            rc = REPORTED;
            break;
        }
        n++;
    }
    if (finish(s, b->st, rc) != 0) {
        if (release)
            release(items, n);
        else
            free(items);
        return -1;
    }
    *out = items;
    *count = n;
    return 0;
}

/* For statements run once at open (pragmas, checks): one integer or text answer. */
static int query_one(fdt_store *s, const char *sql, int64_t *number, char *text, size_t cap)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return sql_fail(s);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        reader r = {st, 0};
        if (number)
            *number = col_int(&r);
        else
            col_text(&r, text, cap);
        rc = SQLITE_DONE;
    }
    if (rc != SQLITE_DONE)
        sql_fail(s);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int exec(fdt_store *s, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    store_fail(s, "%s", msg ? msg : sqlite3_errmsg(s->db));
    sqlite3_free(msg);
    return -1;
}

/* ---- opening ---- */

/* Whether the file is a store this build may use, before anything writes to it: its
 * version into *version. */
static int check_file(fdt_store *s, int64_t *version)
{
    int64_t app_id = 0, objects = 0;
    if (query_one(s, "PRAGMA application_id", &app_id, NULL, 0) != 0) {
        if (sqlite3_errcode(s->db) == SQLITE_NOTADB)
            return store_fail(s, "not a SQLite database (%s); left untouched",
                              sqlite3_errmsg(s->db));
        return -1;
    }
    if (query_one(s, "PRAGMA user_version", version, NULL, 0) != 0 ||
        query_one(s, "SELECT count(*) FROM sqlite_master", &objects, NULL, 0) != 0)
        return -1;
    if ((*version > 0 && app_id != FDT_APPLICATION_ID) || (*version == 0 && objects > 0))
        return store_fail(s, "a SQLite database of another program, not an fdtuned store; "
                             "left untouched");
    if (*version > FDT_SCHEMA_VERSION)
        return store_fail(s, "schema version %" PRId64 " is newer than this fdtuned's (%d); "
                             "refusing to open it so that a newer fdtuned's data stays intact",
                          *version, FDT_SCHEMA_VERSION);
    return 0;
}

/* WAL: readers (queries, workers) never wait for the writer. synchronous=NORMAL in WAL mode
 * loses no committed transaction when the process is killed, only on power loss. */
static int configure(fdt_store *s)
{
    char mode[16] = "";
    int64_t foreign_keys = 0;
    if (query_one(s, "PRAGMA journal_mode = WAL", NULL, mode, sizeof mode) != 0)
        return -1;
    if (strcmp(mode, "wal") != 0)
        return store_fail(s, "cannot use write-ahead logging (journal mode stays '%s'); "
                             "is the file on a network file system?", mode);
    if (exec(s, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON") != 0 ||
        query_one(s, "PRAGMA foreign_keys", &foreign_keys, NULL, 0) != 0)
        return -1;
    if (foreign_keys != 1)
        return store_fail(s, "this SQLite does not enforce foreign keys");
    return 0;
}

static int migrate_step(fdt_store *s, int64_t from)
{
    char stamp[96];
    snprintf(stamp, sizeof stamp, "PRAGMA user_version = %" PRId64 "; PRAGMA application_id = %d",
             from + 1, FDT_APPLICATION_ID);
    if (exec(s, migrations[from]) == 0 && exec(s, stamp) == 0)
        return 0;
    char why[sizeof s->err];
    memcpy(why, s->err, sizeof why);
    return store_fail(s, "migration to schema version %" PRId64 " failed: %s", from + 1, why);
}

/* A migration that rebuilds a table drops the old one while other tables still refer to
 * it, so foreign keys are off while it runs (the pragma is a no-op inside a transaction)
 * and every reference is checked before the commit instead. */
static int foreign_keys_intact(fdt_store *s)
{
    int64_t rows = 0;
    if (query_one(s, "SELECT count(*) FROM pragma_foreign_key_check", &rows, NULL, 0) != 0)
        return -1;
    return rows == 0 ? 0 : store_fail(s, "migration refused: the file holds %" PRId64
                                         " reference(s) to rows that do not exist", rows);
}

/* The version is read again inside the transaction: another process may have migrated the
 * file since check_file looked. */
static int migrate(fdt_store *s, int64_t version)
{
    if (version == FDT_SCHEMA_VERSION)
        return 0;
    if (exec(s, "PRAGMA foreign_keys = OFF; BEGIN IMMEDIATE") != 0)
        return -1;
    int rc = query_one(s, "PRAGMA user_version", &version, NULL, 0);
    for (; rc == 0 && version < FDT_SCHEMA_VERSION; version++)
        rc = migrate_step(s, version);
    if (rc == 0)
        rc = foreign_keys_intact(s);
    if (rc == 0)
        rc = exec(s, "COMMIT");
    else
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return exec(s, "PRAGMA foreign_keys = ON") == 0 ? rc : -1;
}

static int prepare(fdt_store *s)
{
    const int count = s->readonly ? ST_FIRST_WRITE : ST_COUNT;
    for (int i = 0; i < count; i++)
        if (sqlite3_prepare_v3(s->db, statements[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i],
                               NULL) != SQLITE_OK)
            return store_fail(s, "the tables do not match schema version %d: %s",
                              FDT_SCHEMA_VERSION, sqlite3_errmsg(s->db));
    return 0;
}

static int open_file(fdt_store *s, const char *path)
{
    const int flags = s->readonly ? SQLITE_OPEN_READONLY
                                  : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    int64_t version = 0;
    if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK)
        return s->db ? sql_fail(s) : store_fail(s, "out of memory");
    sqlite3_busy_timeout(s->db, 5000);
    if (check_file(s, &version) != 0)
        return -1;
    if (s->readonly && version < FDT_SCHEMA_VERSION)
        return store_fail(s, "schema version %" PRId64 " is older than %d; start fdtuned once to "
                             "migrate it", version, FDT_SCHEMA_VERSION);
    if (!s->readonly && (configure(s) != 0 || migrate(s, version) != 0))
        return -1;
    return prepare(s);
}

static fdt_store *store_open(const char *path, int readonly, char *err, size_t errlen)
{
    fdt_store *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    s->readonly = readonly;
    if (open_file(s, path) != 0) {
        snprintf(err, errlen, "%s: %s", path, s->err);
        fdt_store_close(s);
        return NULL;
    }
    return s;
}

fdt_store *fdt_store_open(const char *path, char *err, size_t errlen)
{
    return store_open(path, 0, err, errlen);
}

fdt_store *fdt_store_open_readonly(const char *path, char *err, size_t errlen)
{
    return store_open(path, 1, err, errlen);
}

void fdt_store_close(fdt_store *s)
{
    if (!s)
        return;
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(s->st[i]);
    sqlite3_close_v2(s->db);
    free(s);
}

/* ---- devices ---- */

int fdt_store_device_upsert(fdt_store *s, const fdt_device_info *d, int64_t *id)
{
    binder b;
    char fingerprint[20];
    const int64_t seen = now();
    if (start(s, ST_DEVICE_UPSERT, &b) != 0)
        return -1;
    fdt_device_fingerprint(d, fingerprint);
    bind_text(&b, fingerprint, sizeof fingerprint);
    bind_text(&b, d->backend, sizeof d->backend);
    bind_text(&b, d->vendor, sizeof d->vendor);
    bind_text(&b, d->name, sizeof d->name);
    bind_text(&b, d->arch, sizeof d->arch);
    bind_int(&b, d->compute_units);
    bind_int(&b, (int64_t)d->memory_bytes);
    bind_int(&b, (int64_t)d->l2_bytes);
    bind_text(&b, d->driver_version, sizeof d->driver_version);
    bind_text(&b, d->compiler_version, sizeof d->compiler_version);
    bind_int(&b, d->warp_size);
    bind_int(&b, d->max_threads_per_block);
    bind_int(&b, d->max_shared_per_block);
    for (int i = 0; i < 3; i++)
        bind_int(&b, d->max_grid[i]);
    bind_int(&b, d->block_barriers);
    bind_int(&b, seen);
    bind_int(&b, seen);
    int rc = step(&b);
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(b.st, 0);
        rc = sqlite3_step(b.st);
    }
    return finish(s, b.st, rc);
}

static int read_device(fdt_store *s, sqlite3_stmt *st, void *out)
{
    fdt_device_row *row = out;
    fdt_device_info *d = &row->info;
    reader r = {st, 0};
    (void)s;
    memset(row, 0, sizeof *row);
    row->id = col_int(&r);
    col_text(&r, row->fingerprint, sizeof row->fingerprint);
    col_text(&r, d->backend, sizeof d->backend);
    col_text(&r, d->vendor, sizeof d->vendor);
    col_text(&r, d->name, sizeof d->name);
    col_text(&r, d->arch, sizeof d->arch);
    d->compute_units = col_int(&r);
    d->memory_bytes = (uint64_t)col_int(&r);
    d->l2_bytes = (uint64_t)col_int(&r);
    col_text(&r, d->driver_version, sizeof d->driver_version);
    col_text(&r, d->compiler_version, sizeof d->compiler_version);
    d->warp_size = col_int(&r);
    d->max_threads_per_block = col_int(&r);
    d->max_shared_per_block = col_int(&r);
    for (int i = 0; i < 3; i++)
        d->max_grid[i] = (unsigned)col_int(&r);
    d->block_barriers = col_int(&r);
    return 0;
}

int fdt_store_devices(fdt_store *s, fdt_device_row **out, size_t *count)
{
    binder b;
    void *rows;
    if (start(s, ST_DEVICES, &b) != 0 ||
        fetch_all(s, &b, sizeof **out, read_device, NULL, &rows, count) != 0)
        return -1;
    *out = rows;
    return 0;
}

/* ---- jobs ---- */

static int read_job(fdt_store *s, sqlite3_stmt *st, void *out)
{
    fdt_job *j = out;
    reader r = {st, 0};
    char state[16];
    memset(j, 0, sizeof *j);
    j->id = col_int(&r);
    col_text(&r, state, sizeof state);
    j->device_index = col_int(&r);
    if (col_key(s, &r, &j->key) != 0)
        return -1;
    col_text(&r, j->family, sizeof j->family);
    j->subset = col_int(&r);
    j->total = col_int(&r);
    j->done = col_int(&r);
    j->ok = col_int(&r);
    j->failed = col_int(&r);
    col_text(&r, j->phase, sizeof j->phase);
    col_text(&r, j->best_variant, sizeof j->best_variant);
    j->best_gbps = col_real(&r);
    col_text(&r, j->error, sizeof j->error);
    j->created = col_int(&r);
    j->started = col_int(&r);
    j->finished = col_int(&r);
    if (fdt_job_state_parse(state, &j->state) != 0)
        return store_fail(s, "job %" PRId64 " has an unknown state '%s'", j->id, state);
    return 0;
}

/* The columns a job's progress changes, in the order JOB_COLUMNS and ST_JOB_UPDATE name
 * them: total .. error. */
static void bind_job_progress(binder *b, const fdt_job *job)
{
    bind_int(b, job->total);
    bind_int(b, job->done);
    bind_int(b, job->ok);
    bind_int(b, job->failed);
    bind_text(b, job->phase, sizeof job->phase);
    bind_text(b, job->best_variant, sizeof job->best_variant);
    bind_real(b, job->best_gbps);
    bind_text(b, job->error, sizeof job->error);
}

int fdt_store_job_create(fdt_store *s, fdt_job *job)
{
    binder b;
    if (start(s, ST_JOB_CREATE, &b) != 0)
        return -1;
    const int64_t created = now();
    bind_text(&b, fdt_job_state_name(FDT_JOB_QUEUED), SIZE_MAX);
    bind_int(&b, job->device_index);
    bind_key(&b, &job->key);
    bind_text(&b, job->family, sizeof job->family);
    bind_int(&b, job->subset);
    bind_job_progress(&b, job);
    bind_int(&b, created);
    bind_int(&b, job->started);
    bind_int(&b, job->finished);
    if (run(s, &b) != 0)
        return -1;
    job->id = sqlite3_last_insert_rowid(s->db);
    job->state = FDT_JOB_QUEUED;
    job->created = created;
    return 0;
}

int fdt_store_job_get(fdt_store *s, int64_t id, fdt_job *out)
{
    binder b;
    if (start(s, ST_JOB_GET, &b) != 0)
        return -1;
    bind_int(&b, id);
    return fetch_one(s, &b, read_job, out);
}

int fdt_store_job_find_active(fdt_store *s, const fdt_job *like, fdt_job *out)
{
    binder b;
    if (start(s, ST_JOB_FIND_ACTIVE, &b) != 0)
        return -1;
    bind_int(&b, like->device_index);
    bind_key(&b, &like->key);
    bind_text(&b, like->family, sizeof like->family);
    bind_int(&b, like->subset);
    return fetch_one(s, &b, read_job, out);
}

int fdt_store_job_update(fdt_store *s, const fdt_job *job)
{
    binder b;
    if (start(s, ST_JOB_UPDATE, &b) != 0)
        return -1;
    bind_text(&b, fdt_job_state_name(job->state), SIZE_MAX);
    bind_job_progress(&b, job);
    bind_int(&b, job->started);
    bind_int(&b, job->finished);
    bind_int(&b, job->id);
    if (run(s, &b) != 0)
        return -1;
    if (sqlite3_changes(s->db) == 0)
        return store_fail(s, "no job %" PRId64, job->id);
    return 0;
}

int fdt_store_job_next(fdt_store *s, int device_index, fdt_job *out)
{
    binder b;
    if (start(s, ST_JOB_NEXT, &b) != 0)
        return -1;
    bind_int(&b, device_index);
    return fetch_one(s, &b, read_job, out);
}

int fdt_store_jobs(fdt_store *s, int state, size_t limit, fdt_job **out, size_t *count)
{
    binder b;
    void *rows;
    if (state > FDT_JOB_CANCELLED)
        return store_fail(s, "no job state %d", state);
    if (start(s, ST_JOBS, &b) != 0)
        return -1;
    bind_text(&b, state < 0 ? NULL : fdt_job_state_name((fdt_job_state)state), SIZE_MAX);
    bind_limit(&b, limit);
    if (fetch_all(s, &b, sizeof **out, read_job, NULL, &rows, count) != 0)
        return -1;
    *out = rows;
    return 0;
}

int fdt_store_job_counts(fdt_store *s, int counts[5])
{
    binder b;
    int rc;
    if (start(s, ST_JOB_COUNTS, &b) != 0)
        return -1;
    memset(counts, 0, 5 * sizeof counts[0]);
    while ((rc = step(&b)) == SQLITE_ROW) {
        fdt_job_state state;
        const char *name = (const char *)sqlite3_column_text(b.st, 0);
        if (!name || fdt_job_state_parse(name, &state) != 0) {
            rc = store_fail(s, "the store holds a job in an unknown state '%s'",
                            name ? name : "");
            break;
        }
        counts[state] = sqlite3_column_int(b.st, 1);
    }
    return finish(s, b.st, rc);
}

int fdt_store_jobs_requeue_running(fdt_store *s)
{
    binder b;
    if (start(s, ST_JOBS_REQUEUE, &b) != 0 || run(s, &b) != 0)
        return -1;
    return sqlite3_changes(s->db);
}

/* ---- results ---- */

static void bind_result(binder *b, const fdt_result_row *r)
{
    bind_int(b, r->job_id);
    bind_text(b, r->variant, sizeof r->variant);
    bind_text(b, r->status, sizeof r->status);
    bind_int(b, r->leader != 0);
    bind_real(b, r->median_ms);
    bind_real(b, r->min_ms);
    bind_real(b, r->q1_ms);
    bind_real(b, r->q3_ms);
    bind_real(b, r->gbps);
    bind_real(b, r->compile_ms);
    bind_int(b, r->samples);
    bind_int(b, r->reps);
    bind_int(b, r->vgprs);
    bind_int(b, r->sgprs);
    bind_int(b, r->scratch_bytes);
    bind_int(b, r->shared_bytes);
    bind_text(b, r->message, sizeof r->message);
}

static void col_result(reader *c, fdt_result_row *r)
{
    memset(r, 0, sizeof *r);
    r->job_id = col_int(c);
    col_text(c, r->variant, sizeof r->variant);
    col_text(c, r->status, sizeof r->status);
    r->leader = col_int(c);
    r->median_ms = col_real(c);
    r->min_ms = col_real(c);
    r->q1_ms = col_real(c);
    r->q3_ms = col_real(c);
    r->gbps = col_real(c);
    r->compile_ms = col_real(c);
    r->samples = col_int(c);
    r->reps = col_int(c);
    r->vgprs = col_int(c);
    r->sgprs = col_int(c);
    r->scratch_bytes = col_int(c);
    r->shared_bytes = col_int(c);
    col_text(c, r->message, sizeof r->message);
}

static int read_result(fdt_store *s, sqlite3_stmt *st, void *out)
{
    reader r = {st, 0};
    (void)s;
    col_result(&r, out);
    return 0;
}

int fdt_store_result_add(fdt_store *s, int64_t device_id, const fdt_key *key,
                         const char *kernels, const fdt_result_row *r)
{
    binder b;
    if (start(s, ST_RESULT_ADD, &b) != 0)
        return -1;
    bind_result(&b, r);
    bind_int(&b, device_id);
    bind_key(&b, key);
    bind_text(&b, kernels, SIZE_MAX);
    bind_int(&b, now());
    if (run(s, &b) != 0)
        return -1;
    if (sqlite3_changes(s->db) == 0)
        return store_fail(s, "job %" PRId64 " already has a first-pass result for %.*s; "
                             "kept the first", r->job_id, (int)sizeof r->variant, r->variant);
    return 0;
}

static int read_name(fdt_store *s, sqlite3_stmt *st, void *out)
{
    const unsigned char *text = sqlite3_column_text(st, 0);
    char **name = out;
    *name = strdup(text ? (const char *)text : "");
    return *name ? 0 : store_fail(s, "out of memory");
}

void fdt_store_names_free(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

static void release_names(void *names, size_t count)
{
    fdt_store_names_free(names, count);
}

static int fetch_names(fdt_store *s, binder *b, char ***names, size_t *count)
{
    void *rows;
    if (fetch_all(s, b, sizeof **names, read_name, release_names, &rows, count) != 0)
        return -1;
    *names = rows;
    return 0;
}

int fdt_store_job_measured(fdt_store *s, int64_t job_id, char ***names, size_t *count)
{
    binder b;
    if (start(s, ST_JOB_MEASURED, &b) != 0)
        return -1;
    bind_int(&b, job_id);
    return fetch_names(s, &b, names, count);
}

int fdt_store_job_leaders(fdt_store *s, int64_t job_id, size_t n, char ***names,
                          size_t *count)
{
    binder b;
    if (start(s, ST_JOB_LEADERS, &b) != 0)
        return -1;
    bind_int(&b, job_id);
    bind_limit(&b, n);
    return fetch_names(s, &b, names, count);
}

int fdt_store_job_results(fdt_store *s, int64_t job_id, fdt_result_row **out, size_t *count)
{
    binder b;
    void *rows;
    if (start(s, ST_JOB_RESULTS, &b) != 0)
        return -1;
    bind_int(&b, job_id);
    if (fetch_all(s, &b, sizeof **out, read_result, NULL, &rows, count) != 0)
        return -1;
    *out = rows;
    return 0;
}

int fdt_store_results_each(fdt_store *s,
                           int (*row)(void *ctx, int64_t device_id, const fdt_key *key,
                                      const fdt_result_row *r),
                           void *ctx)
{
    binder b;
    int rc;
    if (start(s, ST_RESULTS_ALL, &b) != 0)
        return -1;
    while ((rc = step(&b)) == SQLITE_ROW) {
        reader c = {b.st, 0};
        fdt_result_row r;
        fdt_key key;
        col_result(&c, &r);
        const int64_t device_id = col_int(&c);
        if (col_key(s, &c, &key) != 0) {
            rc = REPORTED;
            break;
        }
        if (row(ctx, device_id, &key, &r) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    }
    return finish(s, b.st, rc);
}

/* ---- best ---- */

static int read_best(fdt_store *s, sqlite3_stmt *st, void *out)
{
    fdt_best *best = out;
    reader r = {st, 0};
    memset(best, 0, sizeof *best);
    best->device_id = col_int(&r);
    if (col_key(s, &r, &best->key) != 0)
        return -1;
    col_text(&r, best->variant, sizeof best->variant);
    best->gbps = col_real(&r);
    best->median_ms = col_real(&r);
    best->copy_gbps = col_real(&r);
    best->kernel1_gbps = col_real(&r);
    col_text(&r, best->kernels, sizeof best->kernels);
    best->job_id = col_int(&r);
    best->updated = col_int(&r);
    return 0;
}

/* A row not tied to a job (job_id 0) stores NULL, which the foreign key allows. */
int fdt_store_best_put(fdt_store *s, const fdt_best *best)
{
    binder b;
    if (start(s, ST_BEST_PUT, &b) != 0)
        return -1;
    bind_int(&b, best->device_id);
    bind_key(&b, &best->key);
    bind_text(&b, best->variant, sizeof best->variant);
    bind_real(&b, best->gbps);
    bind_real(&b, best->median_ms);
    bind_real(&b, best->copy_gbps);
    bind_real(&b, best->kernel1_gbps);
    bind_text(&b, best->kernels, sizeof best->kernels);
    if (best->job_id)
        bind_int(&b, best->job_id);
    else
        bind_null(&b);
    bind_int(&b, best->updated ? best->updated : now());
    return run(s, &b);
}

int fdt_store_best_all(fdt_store *s, fdt_best **out, size_t *count)
{
    binder b;
    void *rows;
    if (start(s, ST_BEST_ALL, &b) != 0 ||
        fetch_all(s, &b, sizeof **out, read_best, NULL, &rows, count) != 0)
        return -1;
    *out = rows;
    return 0;
}

/* ---- code cache ---- */

int fdt_store_code_get(fdt_store *s, const char *key, fdt_code *code)
{
    binder b;
    if (start(s, ST_CODE_GET, &b) != 0)
        return -1;
    bind_text(&b, key, SIZE_MAX);
    int rc = step(&b);
    const int found = rc == SQLITE_ROW;
    if (found) {
        const void *data = sqlite3_column_blob(b.st, 0);
        const size_t size = (size_t)sqlite3_column_bytes(b.st, 0);
        void *copy = malloc(size ? size : 1);
        if (!copy) {
            rc = store_fail(s, "out of memory");
        } else {
            if (size)
                memcpy(copy, data, size);
            code->data = copy;
            code->size = size;
            rc = SQLITE_DONE;
        }
    }
    return finish(s, b.st, rc) == 0 ? found : -1;
}

int fdt_store_code_put(fdt_store *s, const char *key, const void *data, size_t size)
{
    binder b;
    if (start(s, ST_CODE_PUT, &b) != 0)
        return -1;
    bind_text(&b, key, SIZE_MAX);
    bind_blob(&b, data, size);
    bind_int(&b, now());
    return run(s, &b);
}
