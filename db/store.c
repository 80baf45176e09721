/* store.c - the SQLite store behind store.h: opening, checking and migrating the file,
 * every statement's text (all prepared once, at open), errors, and the helpers the other
 * store_*.c files bind, read and run statements with (store_int.h). The rows themselves are
 * theirs: devices, jobs, results and best, the code cache. */
#include "store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

/* Generated from db/schema.sql and db/migrate_N.sql by the Makefile. */
extern const char fdt_schema_sql[], fdt_migrate_2_sql[], fdt_migrate_3_sql[],
    fdt_migrate_4_sql[], fdt_migrate_5_sql[], fdt_migrate_6_sql[], fdt_migrate_7_sql[],
    fdt_migrate_8_sql[], fdt_migrate_9_sql[], fdt_migrate_10_sql[], fdt_migrate_11_sql[],
    fdt_migrate_12_sql[], fdt_migrate_13_sql[];

/* Written into every store's header, so that another program's SQLite file is refused
 * rather than migrated. "FDTu". */
#define FDT_APPLICATION_ID 0x46445475

/* Step i takes a file from schema version i to version i + 1, inside one transaction. */
static const char *const migrations[] = {fdt_schema_sql, fdt_migrate_2_sql, fdt_migrate_3_sql,
                                         fdt_migrate_4_sql, fdt_migrate_5_sql,
                                         fdt_migrate_6_sql, fdt_migrate_7_sql,
                                         fdt_migrate_8_sql, fdt_migrate_9_sql,
                                         fdt_migrate_10_sql, fdt_migrate_11_sql,
                                         fdt_migrate_12_sql, fdt_migrate_13_sql};
_Static_assert(sizeof migrations / sizeof migrations[0] == FDT_SCHEMA_VERSION,
               "one migration step per schema version");

/* ---- statements ---- */

/* Column lists shared by the statements that write a row and those that read it back; the
 * binders and readers in store_*.c walk them in this order. */
#define KEY_COLUMNS "stencil, radius, precision, nx, ny, nz, cache, row_pitch, base_offset"
#define DEVICE_COLUMNS                                                                     \
    "backend, vendor, name, arch, compute_units, memory_bytes, l2_bytes, driver_version, " \
    "compiler_version, warp_size, max_threads_per_block, max_shared_per_block, "           \
    "max_grid_x, max_grid_y, max_grid_z, block_barriers"
#define JOB_COLUMNS                                                                        \
    "state, device_index, " KEY_COLUMNS ", family, subset, total, done, ok, failed, "      \
    "phase, best_variant, best_gbps, error, created, started, finished, strategy, budget, " \
    "budget_s, patience, quick, warm, spent_s, choose_cache, wall_s, compile_s, gpu_s, "      \
    "priority, batch, fingerprint, ended_by, ran_on, noisy, remeasures, doubt, origin_store, " \
    "origin_host, origin_job, fdtuned, imported"
#define RESULT_COLUMNS                                                                     \
    "job_id, variant, status, leader, median_ms, min_ms, q1_ms, q3_ms, gbps, compile_ms, " \
    "samples, reps, vgprs, sgprs, scratch_bytes, shared_bytes, message"
#define BEST_COLUMNS                                                                       \
    "device_id, " KEY_COLUMNS ", variant, gbps, median_ms, copy_gbps, interior_copy_gbps, " \
    "kernel1_gbps, kernels, job_id, updated, state, doubt, remeasure_after"
#define SELECT_JOB "SELECT id, " JOB_COLUMNS " FROM jobs "
/* best's primary key, in its order. */
#define BEST_KEY "device_id, stencil, radius, precision, cache, nx, ny, nz, row_pitch, base_offset"

static const char *const statements[ST_COUNT] = {
    [ST_DEVICES] = "SELECT id, fingerprint, " DEVICE_COLUMNS " FROM devices ORDER BY id",
    [ST_JOB_GET] = SELECT_JOB "WHERE id = ?",
    [ST_JOB_FIND_ACTIVE] =
        SELECT_JOB "WHERE state IN ('queued', 'running') AND device_index = ? "
        "AND fingerprint = ? AND stencil = ? AND radius = ? AND precision = ? AND nx = ? AND ny = ? AND nz = ? "
        "AND cache = ? AND row_pitch = ? AND base_offset = ? AND family = ? AND subset = ? AND strategy = ? AND choose_cache = ? "
        "ORDER BY id LIMIT 1",
    [ST_JOB_NEXT] =
        SELECT_JOB "WHERE state = 'queued' AND (device_index = ?1 OR (device_index = -1 AND "
        "fingerprint IN ('', ?2))) ORDER BY priority DESC, id LIMIT 1",
    [ST_JOBS] = SELECT_JOB "WHERE ?1 IS NULL OR state = ?1 ORDER BY id DESC LIMIT ?2",
    [ST_JOB_COUNTS] = "SELECT state, count(*) FROM jobs GROUP BY state",
    /* Per batch: its jobs' counts and points, ended and running (with the share of their
     * spaces measured and their wall time so far), and the sums that fit the done jobs'
     * wall time to their points (fdt_batch_share). */
    [ST_BATCHES_ACTIVE] =
        "SELECT batch, count(*), sum(ended), sum(running), total(running * part), "
        "min(CASE WHEN started > 0 THEN started END), total(p), total(ended * p), "
        "total(running * p), total(running * wall_s), total(fit), total(fit * p), "
        "total(fit * wall_s), "
        "total(fit * p * p), total(fit * p * wall_s) "
        "FROM (SELECT batch, started, wall_s, 1.0 * nx * ny * nz AS p, "
        "state IN ('done', 'failed', 'cancelled') AS ended, state = 'running' AS running, "
        "CASE WHEN total > 0 THEN 1.0 * done / total ELSE 0 END AS part, "
        "state = 'done' AND wall_s > 0 AS fit FROM jobs WHERE batch IN "
        "(SELECT batch FROM jobs WHERE batch > 0 AND state IN ('queued', 'running'))) "
        "GROUP BY batch ORDER BY batch",
    [ST_JOB_LEADERS] =
        "SELECT variant FROM results WHERE job_id = ? AND leader = 0 AND status = 'ok' "
        "AND median_ms IS NOT NULL ORDER BY median_ms, id LIMIT ?",
    [ST_JOB_RESULTS] = "SELECT " RESULT_COLUMNS " FROM results WHERE job_id = ? ORDER BY id",
    /* The key's columns in KEY_COLUMNS' order, for bind_key; results_by_problem serves it. */
    [ST_FULLEST_JOB] =
        "SELECT job_id, count(*) FROM results WHERE device_id = ? AND stencil = ? AND radius = ? "
        "AND precision = ? AND nx = ? AND ny = ? AND nz = ? AND cache = ? AND row_pitch = ? "
        "AND base_offset = ? AND leader = 0 "
        "GROUP BY job_id ORDER BY count(*) DESC, job_id DESC LIMIT 1",
    /* Exports read in pages, each one short query that starts where the last ended (keyset,
     * never OFFSET, which would read every row before the page again). */
    [ST_RESULTS_PAGE] =
        "SELECT id, " RESULT_COLUMNS ", device_id, " KEY_COLUMNS ", kernels, measured "
        "FROM results WHERE id > ? ORDER BY id LIMIT ?",
    /* The winner of one problem on one device; the parameters: the device, bind_key's. */
    [ST_BEST_GET] =
        "SELECT " BEST_COLUMNS " FROM best WHERE device_id = ? AND stencil = ? AND radius = ? "
        "AND precision = ? AND nx = ? AND ny = ? AND nz = ? AND cache = ? AND row_pitch = ? "
        "AND base_offset = ?",
    /* The job an imported file's rows of one job elsewhere went to, on this device. */
    [ST_JOB_OF_ORIGIN] =
        SELECT_JOB "WHERE origin_store = ? AND origin_job = ? AND fingerprint = ? AND "
        "stencil = ? AND radius = ? AND precision = ? AND nx = ? AND ny = ? AND nz = ? AND "
        "cache = ? AND row_pitch = ? AND base_offset = ? LIMIT 1",
    [ST_BEST_ALL] =
        "SELECT " BEST_COLUMNS " FROM best "
        "ORDER BY " BEST_KEY,
    /* The primary key's order; the parameters are the device and bind_key's order. */
    [ST_BEST_PAGE] =
        "SELECT " BEST_COLUMNS " FROM best "
        "WHERE (" BEST_KEY ") > (?1, ?2, ?3, ?4, ?8, ?5, ?6, ?7, ?9, ?10) "
        "ORDER BY " BEST_KEY " LIMIT ?11",
    [ST_BEST_DEFER] = "UPDATE best SET remeasure_after = ? WHERE device_id = ? AND job_id = ?",
    /* The device's doubtful winner due to be measured again first, if any. */
    [ST_BEST_DUE] =
        "SELECT " BEST_COLUMNS " FROM best WHERE device_id = ? "
        "AND remeasure_after BETWEEN 1 AND ? ORDER BY remeasure_after LIMIT 1",
    [ST_CODE_GET] = "SELECT code FROM code_cache WHERE key = ?",
    [ST_STENCILS] = "SELECT name, spec FROM stencils ORDER BY created, name",

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
        "RETURNING id, copy_gbps, l2_gbps, balance_measured, balance_doubt, "
        "balance_copy_spread",
    /* The row a device was stored in under an older fingerprint (the hash changed between
     * builds): every field fdt_device_fingerprint hashes alike, and no row under the one it
     * has now (?1). Should there be more than one, the one seen last. */
    [ST_DEVICE_ADOPTABLE] =
        "SELECT id, fingerprint FROM devices WHERE backend = ?2 AND vendor = ?3 AND name = ?4 "
        "AND arch = ?5 AND compute_units = ?6 AND memory_bytes = ?7 AND driver_version = ?8 "
        "AND compiler_version = ?9 AND NOT EXISTS "
        "(SELECT 1 FROM devices WHERE fingerprint = ?1) ORDER BY last_seen DESC, id DESC LIMIT 1",
    [ST_DEVICE_ADOPT] = "UPDATE devices SET fingerprint = ? WHERE id = ?",
    [ST_JOBS_ADOPT] = "UPDATE jobs SET fingerprint = ?2 WHERE fingerprint = ?1",
    [ST_DEVICE_BALANCE_PUT] =
        "UPDATE devices SET copy_gbps = ?, l2_gbps = ?, balance_measured = ?, "
        "balance_doubt = ?, balance_copy_spread = ? WHERE id = ?",
    [ST_JOB_CREATE] =
        "INSERT INTO jobs (" JOB_COLUMNS ") "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    [ST_JOB_UPDATE] =
        "UPDATE jobs SET state = ?, total = ?, done = ?, ok = ?, failed = ?, phase = ?, "
        "best_variant = ?, best_gbps = ?, error = ?, started = ?, finished = ?, warm = ?, "
        "spent_s = ?, wall_s = ?, compile_s = ?, gpu_s = ?, batch = ?, ended_by = ?, "
        "ran_on = ?, noisy = ?, doubt = ? WHERE id = ?",
    [ST_JOBS_REQUEUE] = "UPDATE jobs SET state = 'queued', phase = '' WHERE state = 'running'",
    /* A first-pass row that exists already is left alone (no change: the caller reports
     * it); a leader row replaces the earlier one. */
    [ST_RESULT_ADD] =
        "INSERT INTO results (" RESULT_COLUMNS ", device_id, " KEY_COLUMNS ", kernels, measured) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?) "
        "ON CONFLICT (job_id, leader, variant) DO UPDATE SET status = excluded.status, "
        "median_ms = excluded.median_ms, min_ms = excluded.min_ms, q1_ms = excluded.q1_ms, "
        "q3_ms = excluded.q3_ms, gbps = excluded.gbps, compile_ms = excluded.compile_ms, "
        "samples = excluded.samples, reps = excluded.reps, vgprs = excluded.vgprs, "
        "sgprs = excluded.sgprs, scratch_bytes = excluded.scratch_bytes, "
        "shared_bytes = excluded.shared_bytes, message = excluded.message, "
        "device_id = excluded.device_id, kernels = excluded.kernels, "
        "measured = excluded.measured "
        "WHERE excluded.leader = 1",
    /* An imported row: never replaces a row of its job (importing twice adds nothing). */
    [ST_RESULT_IMPORT] =
        "INSERT INTO results (" RESULT_COLUMNS ", device_id, " KEY_COLUMNS ", kernels, measured) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?) "
        "ON CONFLICT (job_id, leader, variant) DO NOTHING",
    [ST_BEST_PUT] =
        "INSERT INTO best (" BEST_COLUMNS ") "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (" BEST_KEY ") DO UPDATE SET "
        "variant = excluded.variant, gbps = excluded.gbps, median_ms = excluded.median_ms, "
        "copy_gbps = excluded.copy_gbps, interior_copy_gbps = excluded.interior_copy_gbps, "
        "kernel1_gbps = excluded.kernel1_gbps, "
        "kernels = excluded.kernels, job_id = excluded.job_id, updated = excluded.updated, "
        "state = excluded.state, doubt = excluded.doubt, "
        "remeasure_after = excluded.remeasure_after",
    [ST_CODE_PUT] =
        "INSERT INTO code_cache (key, code, created) VALUES (?, ?, ?) "
        "ON CONFLICT (key) DO UPDATE SET code = excluded.code, created = excluded.created",
    /* One pattern, one row: the first spec of it stays (stencil.c's rows do the same). */
    [ST_STENCIL_PUT] =
        "INSERT INTO stencils (name, spec, created) VALUES (?, ?, ?) "
        "ON CONFLICT (name) DO NOTHING",
    /* A stencil renamed from ?1 to ?2 in every row that names it. Where both names have a
     * row of one key (a store that went back to an older fdtuned and forward again), the
     * spec renamed takes the other's place (one pattern: either serves), and of two winners
     * of one problem the one updated last stays. */
    [ST_STENCIL_RENAME] = "UPDATE OR REPLACE stencils SET name = ?2 WHERE name = ?1",
    [ST_STENCIL_RENAME_JOBS] = "UPDATE jobs SET stencil = ?2 WHERE stencil = ?1",
    [ST_STENCIL_RENAME_RESULTS] = "UPDATE results SET stencil = ?2 WHERE stencil = ?1",
    [ST_STENCIL_RENAME_BEST_OLDER] =
        "DELETE FROM best WHERE stencil = ?1 AND EXISTS (SELECT 1 FROM best AS b "
        "WHERE b.stencil = ?2 AND b.device_id = best.device_id AND b.radius = best.radius "
        "AND b.precision = best.precision AND b.cache = best.cache AND b.nx = best.nx "
        "AND b.ny = best.ny AND b.nz = best.nz AND b.row_pitch = best.row_pitch "
        "AND b.base_offset = best.base_offset AND b.updated >= best.updated)",
    [ST_STENCIL_RENAME_BEST] = "UPDATE OR REPLACE best SET stencil = ?2 WHERE stencil = ?1",
};

int64_t store_now(void)
{
    return (int64_t)time(NULL);
}

/* ---- errors ---- */

int store_fail(fdt_store *s, const char *fmt, ...)
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

static void bound(binder *b, int rc)
{
    if (b->rc == SQLITE_OK)
        b->rc = rc;
}

void bind_int(binder *b, int64_t v)
{
    bound(b, sqlite3_bind_int64(b->st, ++b->next, v));
}

void bind_real(binder *b, double v)
{
    bound(b, sqlite3_bind_double(b->st, ++b->next, v));
}

void bind_null(binder *b)
{
    bound(b, sqlite3_bind_null(b->st, ++b->next));
}

void bind_text(binder *b, const char *text, size_t cap)
{
    if (!text) {
        bind_null(b);
        return;
    }
    ++b->next;
    bound(b, sqlite3_bind_text64(b->st, b->next, text, strnlen(text, cap), SQLITE_STATIC,
                                 SQLITE_UTF8));
}

void bind_blob(binder *b, const void *data, size_t size)
{
    ++b->next;
    bound(b, size ? sqlite3_bind_blob64(b->st, b->next, data, size, SQLITE_STATIC)
                  : sqlite3_bind_zeroblob(b->st, b->next, 0));
}

void bind_limit(binder *b, size_t n)
{
    bind_int(b, n > (size_t)INT64_MAX ? INT64_MAX : (int64_t)n);
}

void bind_key(binder *b, const fdt_key *k)
{
    bind_text(b, k->problem.stencil, sizeof k->problem.stencil);
    bind_int(b, k->problem.radius);
    bind_text(b, fdt_precision_name(k->problem.precision), SIZE_MAX);
    bind_int(b, k->problem.nx);
    bind_int(b, k->problem.ny);
    bind_int(b, k->problem.nz);
    bind_text(b, fdt_cache_mode_name(k->problem.cache), SIZE_MAX);
    bind_int(b, k->problem.pitch == k->problem.nx ? 0 : k->problem.pitch);
    bind_int(b, k->problem.offset);
}

int64_t col_int(reader *r)
{
    return sqlite3_column_int64(r->st, r->next++);
}

double col_real(reader *r)
{
    const int i = r->next++;
    return sqlite3_column_type(r->st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(r->st, i);
}

void col_text(reader *r, char *dst, size_t cap)
{
    const unsigned char *text = sqlite3_column_text(r->st, r->next++);
    fdt_copy_text(dst, cap, text ? (const char *)text : "");
}

int col_key(fdt_store *s, reader *r, fdt_key *k)
{
    char precision[16], cache[16];
    col_text(r, k->problem.stencil, sizeof k->problem.stencil);
    k->problem.radius = col_int(r);
    col_text(r, precision, sizeof precision);
    k->problem.nx = col_int(r);
    k->problem.ny = col_int(r);
    k->problem.nz = col_int(r);
    col_text(r, cache, sizeof cache);
    k->problem.pitch = col_int(r);
    k->problem.offset = col_int(r);
    if (fdt_precision_parse(precision, &k->problem.precision) != 0)
        return store_fail(s, "the store holds an unknown precision '%s'", precision);
    if (fdt_cache_mode_parse(cache, &k->problem.cache) != 0)
        return store_fail(s, "the store holds an unknown cache mode '%s'", cache);
    return 0;
}

/* ---- running statements ---- */

int stmt_start(fdt_store *s, int which, binder *b)
{
    *b = (binder){.st = s->st[which]};
    return b->st ? 0 : store_fail(s, "the store is open read-only");
}

int stmt_step(binder *b)
{
    return b->rc == SQLITE_OK ? sqlite3_step(b->st) : b->rc;
}

int stmt_finish(fdt_store *s, sqlite3_stmt *st, int rc)
{
    const int result = rc == SQLITE_DONE ? 0 : rc == REPORTED ? -1 : sql_fail(s);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return result;
}

int stmt_run(fdt_store *s, binder *b)
{
    return stmt_finish(s, b->st, stmt_step(b));
}

int stmt_fetch_one(fdt_store *s, binder *b, row_reader read, void *out)
{
    int rc = stmt_step(b);
    const int found = rc == SQLITE_ROW;
    if (found)
        rc = read(s, b->st, out) == 0 ? SQLITE_DONE : REPORTED;
    return stmt_finish(s, b->st, rc) == 0 ? found : -1;
}

int stmt_fetch_all(fdt_store *s, binder *b, size_t size, row_reader read,
                   void (*release)(void *items, size_t n), void **out, size_t *count)
{
    char *items = NULL;
    size_t n = 0, cap = 0;
    int rc;
    for (rc = stmt_step(b); rc == SQLITE_ROW; rc = sqlite3_step(b->st)) {
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
    if (stmt_finish(s, b->st, rc) != 0) {
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

int fdt_store_begin(fdt_store *s)
{
    return exec(s, "BEGIN IMMEDIATE");
}

/* A failed COMMIT (a full disk) leaves the transaction open in SQLite: roll it back here so
 * that the caller's one answer to a failure is its own. */
int fdt_store_commit(fdt_store *s)
{
    if (exec(s, "COMMIT") == 0)
        return 0;
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

/* Keeps the error that made the caller give up, not the rollback's. */
void fdt_store_rollback(fdt_store *s)
{
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
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
    /* A version below 0 is no fdtuned's: it would also index the migrations out of bounds. */
    if (*version < 0)
        return store_fail(s, "schema version %" PRId64 " is not one fdtuned knows; left "
                             "untouched", *version);
    if ((*version > 0 && app_id != FDT_APPLICATION_ID) || (*version == 0 && objects > 0))
        return store_fail(s, "a SQLite database of another program, not an fdtuned store; "
                             "left untouched");
    if (*version > FDT_SCHEMA_VERSION)
        return store_fail(s, "schema version %" PRId64 " is newer than this fdtuned's (%d); "
                             "refusing to open it so that a newer fdtuned's data stays intact",
                          *version, FDT_SCHEMA_VERSION);
    return 0;
}

/* A damaged file is refused, not served: answers read from it could be wrong, and writing
 * to it could lose what is left. README.md ("The service") says how to salvage its rows. */
static int check_integrity(fdt_store *s)
{
    char verdict[256] = "";
    if (query_one(s, "PRAGMA quick_check", NULL, verdict, sizeof verdict) != 0)
        return -1;
    if (strcmp(verdict, "ok") != 0)
        return store_fail(s, "the file is damaged (quick_check: %s); left untouched: salvage "
                             "its rows with sqlite3's .recover into a new store", verdict);
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
    if (check_file(s, &version) != 0 || check_integrity(s) != 0)
        return -1;
    if (s->readonly && version < FDT_SCHEMA_VERSION)
        return store_fail(s, "schema version %" PRId64 " is older than %d; start fdtuned once to "
                             "migrate it", version, FDT_SCHEMA_VERSION);
    if (!s->readonly && (configure(s) != 0 || migrate(s, version) != 0))
        return -1;
    return prepare(s);
}

/* ---- one daemon per store ---- */

/* Two daemons on one store would take each other's jobs and measure on one device at once,
 * so the daemon holds an exclusive flock on the store file itself for as long as it is
 * open: the lock is the file's (its device and inode), whatever name reached it, where one
 * on "<path>.lock" let a second daemon in through a symbolic or a hard link.
 *
 * flock rather than fcntl: its lock belongs to the open file, not the process, so SQLite's
 * own locks (POSIX byte ranges of the same file, at 0x40000000 and past) never meet it, and
 * SQLite unlocking or closing its own descriptor leaves it held; a second open in the same
 * process is refused too, and the lock goes with the last close however the process ends:
 * the store of a dead daemon is simply taken. /proc/locks names a flock's holder (for an
 * open file description lock it says -1), which is how a daemon refused under another name
 * learns the pid. The descriptor is close-on-exec: workers never hold it.
 *
 * Closing any descriptor of the store drops every POSIX lock this process holds on it,
 * SQLite's included; so this one is closed only where the process has no connection to the
 * store: on a refusal, before SQLite has opened it (a holder /proc/locks lists, this process
 * among them, is refused before the file is opened at all), and in fdt_store_close after
 * SQLite has closed it. A process must not keep a read-only connection open past closing
 * the store it holds.
 *
 * "<path>.lock" (0600, never followed) is the pid file: the holder writes its pid there, so
 * that one refused under the same name is told the lock file as well, and the pid where
 * /proc is not mounted. */

/* The pid the pid file names, or 0 when it names none: its holder may be between taking
 * the lock and writing its pid, or could not write it. */
static long lock_holder(int fd)
{
    char text[32] = "";
    if (pread(fd, text, sizeof text - 1, 0) <= 0)
        return 0;
    const long pid = strtol(text, NULL, 10);
    return pid > 0 ? pid : 0;
}

/* Writes this process's pid into the pid file; 0, or -1 when the file cannot take it (a
 * full disk). */
static int record_pid(int fd)
{
    char text[32];
    const int n = snprintf(text, sizeof text, "%ld\n", (long)getpid());
    return ftruncate(fd, 0) == 0 && pwrite(fd, text, (size_t)n, 0) == n ? 0 : -1;
}

/* The pid holding a flock on the file st describes, from /proc/locks ("1: FLOCK ADVISORY
 * WRITE 4242 fe:00:1093 0 EOF", device in hex); 0 when none is listed, or /proc is not
 * mounted, or the holder is outside this pid namespace. */
static long flock_holder(const struct stat *st)
{
    FILE *f = fopen("/proc/locks", "re");
    if (!f)
        return 0;
    char line[256], kind[16];
    long holder = 0, pid;
    unsigned dev_major, dev_minor;
    unsigned long long ino;
    while (!holder && fgets(line, sizeof line, f))
        if (sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%llu", kind, &pid, &dev_major, &dev_minor,
                   &ino) == 5 && strcmp(kind, "FLOCK") == 0 && pid > 0 &&
            dev_major == major(st->st_dev) && dev_minor == minor(st->st_dev) &&
            ino == (unsigned long long)st->st_ino)
            holder = pid;
    fclose(f);
    return holder;
}

/* The refusal, naming the holder that /proc/locks gave, else the one the pid file names. */
static int refuse(fdt_store *s, const char *lock, int pid_fd, long holder)
{
    const long named = lock_holder(pid_fd);
    if (!holder)
        holder = named;
    if (holder && holder == named)
        return store_fail(s, "in use by another fdtuned: pid %ld holds the lock file %s", holder,
                          lock);
    if (holder)
        return store_fail(s, "in use by another fdtuned: pid %ld holds this file under another "
                             "name (a symbolic or hard link to the store it serves)", holder);
    return store_fail(s, "in use by another fdtuned: the store is locked, by a pid %s does not "
                         "name yet", lock);
}

/* Takes the store file's lock; path exists. */
static int lock_file(fdt_store *s, const char *path, const char *lock, int pid_fd)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return store_fail(s, "cannot stat the store: %s", strerror(errno));
    long holder = flock_holder(&st);
    if (holder)
        return refuse(s, lock, pid_fd, holder);
    s->lock_fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (s->lock_fd < 0)
        return store_fail(s, "cannot open the store to lock it: %s", strerror(errno));
    if (flock(s->lock_fd, LOCK_EX | LOCK_NB) == 0) {
        /* The lock, not the pid, is what excludes: a file that cannot take the pid leaves a
         * refused daemon's message without it, and must not keep this one from starting. */
        (void)record_pid(pid_fd);
        return 0;
    }
    if (errno != EWOULDBLOCK)
        return store_fail(s, "cannot lock the store: %s", strerror(errno));
    /* Taken between the look at /proc/locks and the open. */
    if (fstat(s->lock_fd, &st) == 0)
        holder = flock_holder(&st);
    return refuse(s, lock, pid_fd, holder);
}

/* A new store is created 0600 before SQLite opens it, because SQLite gives its -wal and
 * -shm files the database file's mode: all three are private. O_EXCL: an existing file
 * keeps the mode its owner chose, and nothing is created through a symlink. */
static int create_private(fdt_store *s, const char *path)
{
    const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
        /* Nothing was written through it: a failing close loses nothing. */
        close(fd);
        return 0;
    }
    if (errno == EEXIST)
        return 0;
    return store_fail(s, "cannot create the store: %s", strerror(errno));
}

/* The pid file first, so that one that cannot be opened (a symlink) leaves nothing made. */
static int lock_store(fdt_store *s, const char *path)
{
    char lock[PATH_MAX + 8];
    if (snprintf(lock, sizeof lock, "%s.lock", path) >= (int)sizeof lock)
        return store_fail(s, "the lock file's path is too long");
    const int pid_fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
    if (pid_fd < 0)
        return store_fail(s, "cannot open the lock file %s: %s", lock, strerror(errno));
    const int rc = create_private(s, path) == 0 ? lock_file(s, path, lock, pid_fd) : -1;
    close(pid_fd);
    return rc;
}

static fdt_store *store_open(const char *path, int readonly, char *err, size_t errlen)
{
    fdt_store *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    s->readonly = readonly;
    s->lock_fd = -1;
    if ((!readonly && lock_store(s, path) != 0) || open_file(s, path) != 0 ||
        query_one(s, "SELECT id FROM store_id", NULL, s->id, sizeof s->id) != 0) {
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

const char *fdt_store_id(const fdt_store *s)
{
    return s->id;
}

void fdt_store_close(fdt_store *s)
{
    if (!s)
        return;
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(s->st[i]);
    /* The close checkpoints the WAL and removes it only if no other process reads the file.
     * A worker killed a moment before may not have let its read lock go yet (a hurried stop
     * does not wait for it): this checkpoint waits for it, up to the busy timeout (5 s, so
     * a stop may take that long while a live reader holds on), and leaves the WAL empty even
     * if the close cannot remove it. Where it cannot (SQLITE_BUSY), the WAL stays, intact:
     * the next open replays it. */
    if (!s->readonly && s->db)
        sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    sqlite3_close_v2(s->db);
    /* Only now, with the file closed and its WAL checkpointed, may another daemon take it. */
    if (s->lock_fd >= 0)
        close(s->lock_fd);
    free(s);
}
