/* test_store.c - the SQLite store on real files in a temporary directory: opening, the
 * schema version and the files it refuses, the lock of one writer per store and the
 * private modes of its files, devices and their balance, the job queue, results, best, the
 * code cache, the read-only store, bound parameters, and the hashes that key devices and
 * code objects. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "engine/sources.h"
#include "hashes.h"
#include "store.h"

#define assert_near(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (tol))

/* One temporary directory per test; state points at the store's path inside it. */
typedef struct fixture {
    char dir[64];
    char path[96];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    strcpy(f->dir, "/tmp/test_store.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/fdtuned.db", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    DIR *d = opendir(f->dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[512];
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", f->dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(f->dir);
    free(f);
    return 0;
}

static fdt_store *open_store(void **state)
{
    char err[512] = "";
    fdt_store *s = fdt_store_open(((fixture *)*state)->path, err, sizeof err);
    if (!s)
        fail_msg("open: %s", err);
    return s;
}

static const fdt_device_info h100 = {
    .backend = "cuda", .vendor = "NVIDIA", .name = "NVIDIA H100 80GB HBM3", .arch = "sm_90",
    .compute_units = 132, .memory_bytes = 85017624576u, .l2_bytes = 52428800,
    .driver_version = "13.0", .compiler_version = "NVRTC 13.0", .warp_size = 32,
    .max_threads_per_block = 1024, .max_shared_per_block = 49152,
    .max_grid = {2147483647u, 65535, 65535}, .block_barriers = 1};

/* Where the calls that do not look at it put a device's stored balance. */
static fdt_balance balance;

static fdt_key key_of(int n, fdt_precision precision, fdt_cache_mode cache)
{
    return (fdt_key){.problem = {.stencil = "laplacian", .nx = n, .ny = n, .nz = n, .radius = 1,
                                 .precision = precision, .cache = cache}};
}

static fdt_job job_of(int device_index, int n)
{
    return (fdt_job){.device_index = device_index, .key = key_of(n, FDT_DOUBLE, FDT_CACHE_HOT),
                     .total = 100, .strategy = "guided", .patience = 32};
}

/* A PRAGMA's answer, read with SQLite directly rather than through the store. */
/* The schema version a migrated store ends at, as PRAGMA user_version prints it. */
#define TEXT_OF(x) #x
#define VERSION_TEXT(x) TEXT_OF(x)
#define SCHEMA_VERSION_TEXT VERSION_TEXT(FDT_SCHEMA_VERSION)

static void pragma_text(const char *path, const char *pragma, char *out, size_t len)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, pragma, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    snprintf(out, len, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* The first column of a query's first row, read with SQLite directly, is want. */
static void expect_sql(const char *path, const char *query, const char *want)
{
    char answer[64];
    pragma_text(path, query, answer, sizeof answer);
    assert_string_equal(answer, want);
}

static void sql_exec(const char *path, const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

static char *read_file(const char *path, size_t *size)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    *size = (size_t)ftell(fp);
    rewind(fp);
    char *data = malloc(*size + 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, *size, fp), *size);
    fclose(fp);
    return data;
}

/* Opening path (either way) must fail with a message containing why, and leave every byte
 * of the file as it was. */
static void assert_refused(const char *path, const char *why)
{
    size_t before_size, after_size;
    char *before = read_file(path, &before_size);
    for (int readonly = 0; readonly <= 1; readonly++) {
        char err[512] = "";
        fdt_store *s = readonly ? fdt_store_open_readonly(path, err, sizeof err)
                                : fdt_store_open(path, err, sizeof err);
        assert_null(s);
        if (!strstr(err, why) || !strstr(err, path))
            fail_msg("message '%s' does not say '%s' about %s", err, why, path);
    }
    char *after = read_file(path, &after_size);
    assert_int_equal(after_size, before_size);
    assert_memory_equal(after, before, before_size);
    free(before);
    free(after);
}

static void test_create_and_reopen(void **state)
{
    const char *path = ((fixture *)*state)->path;
    char answer[32];
    fdt_store *s = open_store(state);
    fdt_job job = job_of(0, 512);
    int64_t device_id;
    assert_int_equal(fdt_store_device_upsert(s, &h100, &device_id, &balance), 0);
    assert_int_equal(fdt_store_job_create(s, &job), 0);
    assert_true(job.id > 0);
    fdt_store_close(s);

    pragma_text(path, "PRAGMA user_version", answer, sizeof answer);
    assert_int_equal(atoi(answer), FDT_SCHEMA_VERSION);
    pragma_text(path, "PRAGMA journal_mode", answer, sizeof answer);
    assert_string_equal(answer, "wal");

    s = open_store(state);
    fdt_job again;
    assert_int_equal(fdt_store_job_get(s, job.id, &again), 1);
    assert_int_equal(again.key.problem.nx, 512);
    assert_int_equal(again.state, FDT_JOB_QUEUED);
    int64_t same_id;
    assert_int_equal(fdt_store_device_upsert(s, &h100, &same_id, &balance), 0);
    assert_int_equal(same_id, device_id);
    fdt_store_close(s);
}

static unsigned mode_of(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        fail_msg("stat %s failed", path);
    return st.st_mode & 07777;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* One daemon per store: while one handle is open a second writable open is refused, naming
 * the lock file and the holder's pid; readers are not locked out; after close, and over a
 * lock file a dead holder left, the open succeeds. */
static void test_one_writer_per_store(void **state)
{
    const char *path = ((fixture *)*state)->path;
    char lock[128], want[256], err[512] = "";
    snprintf(lock, sizeof lock, "%s.lock", path);
    fdt_store *s = open_store(state);
    assert_int_equal(mode_of(lock), 0600);
    assert_null(fdt_store_open(path, err, sizeof err));
    snprintf(want, sizeof want, "pid %ld holds the lock file %s", (long)getpid(), lock);
    if (!strstr(err, want))
        fail_msg("message '%s' does not say '%s'", err, want);
    fdt_store *reader = fdt_store_open_readonly(path, err, sizeof err);
    if (!reader)
        fail_msg("read-only open: %s", err);
    fdt_store_close(reader);
    fdt_store_close(s);

    write_text(lock, "999999\n");
    s = open_store(state);
    size_t size;
    char *text = read_file(lock, &size);
    snprintf(want, sizeof want, "%ld\n", (long)getpid());
    assert_int_equal(size, strlen(want));
    assert_memory_equal(text, want, size);
    free(text);
    fdt_store_close(s);
}

/* A lock file that is a symlink is refused, never followed to what it names. */
static void test_lock_file_is_never_followed(void **state)
{
    const fixture *f = *state;
    char lock[128], target[128], err[512] = "";
    snprintf(lock, sizeof lock, "%s.lock", f->path);
    snprintf(target, sizeof target, "%s/elsewhere", f->dir);
    assert_int_equal(symlink(target, lock), 0);
    assert_null(fdt_store_open(f->path, err, sizeof err));
    if (!strstr(err, "cannot open the lock file") || !strstr(err, lock))
        fail_msg("message '%s' does not name the lock file", err);
    assert_int_equal(access(target, F_OK), -1);
}

/* A new store and its -wal and -shm are private whatever the umask lets through; an
 * existing store keeps the mode its owner gave it. */
static void test_store_files_are_private(void **state)
{
    const char *path = ((fixture *)*state)->path;
    char wal[128], shm[128];
    snprintf(wal, sizeof wal, "%s-wal", path);
    snprintf(shm, sizeof shm, "%s-shm", path);
    const mode_t old_mask = umask(022);
    fdt_store *s = open_store(state);
    int64_t device_id;
    assert_int_equal(fdt_store_device_upsert(s, &h100, &device_id, &balance), 0);
    assert_int_equal(mode_of(path), 0600);
    assert_int_equal(mode_of(wal), 0600);
    assert_int_equal(mode_of(shm), 0600);
    fdt_store_close(s);

    assert_int_equal(chmod(path, 0640), 0);
    s = open_store(state);
    assert_int_equal(fdt_store_device_upsert(s, &h100, &device_id, &balance), 0);
    assert_int_equal(mode_of(path), 0640);
    assert_int_equal(mode_of(wal), 0640);
    fdt_store_close(s);
    umask(old_mask);
}

static void test_refuses_newer_schema(void **state)
{
    const char *path = ((fixture *)*state)->path;
    fdt_store_close(open_store(state));
    sql_exec(path, "PRAGMA user_version = 99");
    assert_refused(path, "newer");
}

/* A version below any fdtuned's is refused, not migrated from (it indexed the migrations
 * out of bounds). */
static void test_refuses_unknown_schema(void **state)
{
    const char *path = ((fixture *)*state)->path;
    fdt_store_close(open_store(state));
    sql_exec(path, "PRAGMA user_version = -1");
    assert_refused(path, "schema version -1 is not one fdtuned knows");
    expect_sql(path, "PRAGMA user_version", "-1");
}

/* A damaged file is refused, and left as it was. */
static void test_refuses_damaged_file(void **state)
{
    const char *path = ((fixture *)*state)->path;
    fdt_store *s = open_store(state);
    fdt_store_close(s);
    sql_exec(path, "PRAGMA journal_mode = DELETE; CREATE TABLE filler (x BLOB);"
                   "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)"
                   " INSERT INTO filler SELECT randomblob(300) FROM n;");
    size_t size;
    char *bytes = read_file(path, &size);
    assert_true(size > 8 * 4096);
    for (size_t i = 3 * 4096; i < 6 * 4096; i++) /* interior pages, not the header */
        bytes[i] = (char)(i * 7);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(bytes, 1, size, fp), size);
    fclose(fp);
    free(bytes);
    char err[512] = "";
    assert_null(fdt_store_open(path, err, sizeof err));
    assert_true(strstr(err, "damaged") || strstr(err, "malformed"));
}

static void test_refuses_what_is_not_a_store(void **state)
{
    const char *path = ((fixture *)*state)->path;
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    for (int i = 0; i < 8192; i++)
        fputc((i * 131 + 7) & 0xff, fp);
    fclose(fp);
    assert_refused(path, "not a SQLite database");

    unlink(path);
    sql_exec(path, "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')");
    assert_refused(path, "another program");
}

static void test_devices_round_trip(void **state)
{
    fdt_store *s = open_store(state);
    fdt_device_info newer_driver = h100;
    strcpy(newer_driver.driver_version, "13.1");
    int64_t a, b;
    assert_int_equal(fdt_store_device_upsert(s, &h100, &a, &balance), 0);
    assert_int_equal(fdt_store_device_upsert(s, &newer_driver, &b, &balance), 0);
    assert_true(a != b);

    fdt_device_row *rows;
    size_t n;
    char fingerprint[20];
    assert_int_equal(fdt_store_devices(s, &rows, &n), 0);
    assert_int_equal(n, 2);
    fdt_device_fingerprint(&h100, fingerprint);
    assert_int_equal(rows[0].id, a);
    assert_string_equal(rows[0].fingerprint, fingerprint);
    assert_memory_equal(&rows[0].info, &h100, sizeof h100);
    assert_string_equal(rows[1].info.driver_version, "13.1");
    free(rows);
    fdt_store_close(s);
}

/* A device's balance: none until stored, then kept with the device and given back whenever
 * the device is seen again, in another run too; a second one replaces it; one for a device
 * the store does not have is refused. */
static void test_device_balance(void **state)
{
    fdt_store *s = open_store(state);
    int64_t id, again;
    fdt_balance b = {.copy_gbps = 1.0};
    assert_int_equal(fdt_store_device_upsert(s, &h100, &id, &b), 0);
    assert_int_equal(b.measured, 0);
    assert_near(b.copy_gbps, 0, 0);
    assert_near(b.l2_gbps, 0, 0);

    const fdt_balance measured = {.copy_gbps = 3013.7, .l2_gbps = 7021.5,
                                  .measured = 1795000000};
    assert_int_equal(fdt_store_device_balance_put(s, id, &measured), 0);
    fdt_store_close(s);
    s = open_store(state);
    assert_int_equal(fdt_store_device_upsert(s, &h100, &again, &b), 0);
    assert_int_equal(again, id);
    assert_near(b.copy_gbps, 3013.7, 1e-9);
    assert_near(b.l2_gbps, 7021.5, 1e-9);
    assert_int_equal(b.measured, 1795000000);

    const fdt_balance newer = {.copy_gbps = 3000.0, .l2_gbps = 0, .measured = 1795000100};
    assert_int_equal(fdt_store_device_balance_put(s, id, &newer), 0);
    assert_int_equal(fdt_store_device_upsert(s, &h100, &again, &b), 0);
    assert_near(b.l2_gbps, 0, 0);
    assert_int_equal(b.measured, 1795000100);

    assert_int_equal(fdt_store_device_balance_put(s, id + 41, &measured), -1);
    if (!strstr(fdt_store_error(s), "no device"))
        fail_msg("unexpected message: %s", fdt_store_error(s));
    fdt_store_close(s);
}

static void assert_job_ids(fdt_job *jobs, size_t n, const int64_t *ids, size_t nids)
{
    assert_int_equal(n, nids);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(jobs[i].id, ids[i]);
    free(jobs);
}

/* Which job a device takes next: the highest priority first (an interactive tune before
 * batch jobs), then the oldest, among its own jobs and those any device of its fingerprint
 * (or any device at all) may run; a job's costs and batch are kept, and an unfinished
 * batch's progress is counted. */
static void test_job_queue_spreads_over_devices(void **state)
{
    fdt_store *s = open_store(state);
    fdt_job own = job_of(0, 64), kind = job_of(-1, 96), any = job_of(-1, 128),
            tune = job_of(1, 160), other = job_of(-1, 192), got;
    strcpy(kind.fingerprint, "fpA");
    strcpy(other.fingerprint, "fpB");
    tune.priority = 1;
    fdt_job *all[] = {&own, &kind, &any, &tune, &other};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(fdt_store_job_create(s, all[i]), 0);
    assert_int_equal(fdt_store_job_next(s, 0, "fpA", &got), 1);
    assert_int_equal(got.id, own.id);
    assert_int_equal(fdt_store_job_next(s, 1, "fpA", &got), 1);
    assert_int_equal(got.id, tune.id); /* the tune, though queued after the others */
    assert_int_equal(fdt_store_job_next(s, 2, "fpA", &got), 1);
    assert_int_equal(got.id, kind.id);
    assert_int_equal(fdt_store_job_next(s, 2, "fpC", &got), 1);
    assert_int_equal(got.id, any.id); /* another kind: only what any device may run */
    assert_int_equal(fdt_store_job_next(s, 3, "fpB", &got), 1);
    assert_int_equal(got.id, any.id);
    any.state = FDT_JOB_DONE;
    assert_int_equal(fdt_store_job_update(s, &any), 0);
    assert_int_equal(fdt_store_job_next(s, 3, "fpB", &got), 1);
    assert_int_equal(got.id, other.id);
    assert_int_equal(fdt_store_job_next(s, 3, "fpC", &got), 0);

    /* costs and batches */
    kind.wall_s = 12.5;
    kind.compile_s = 3.25;
    kind.gpu_s = 10.0;
    kind.batch = kind.id;
    kind.state = FDT_JOB_RUNNING;
    kind.started = 1700000000;
    kind.total = 10;
    kind.done = 5;
    other.batch = kind.id;
    assert_int_equal(fdt_store_job_update(s, &kind), 0);
    assert_int_equal(fdt_store_job_update(s, &other), 0);
    assert_int_equal(fdt_store_job_get(s, kind.id, &got), 1);
    assert_near(got.wall_s, 12.5, 1e-12);
    assert_near(got.compile_s, 3.25, 1e-12);
    assert_near(got.gpu_s, 10.0, 1e-12);
    assert_int_equal(got.batch, kind.id);
    assert_string_equal(got.fingerprint, "fpA");
    fdt_batch_progress *b;
    size_t n;
    assert_int_equal(fdt_store_batches_active(s, &b, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(b[0].batch, kind.id);
    assert_int_equal(b[0].jobs, 2);
    assert_int_equal(b[0].ended, 0);
    assert_int_equal(b[0].running, 1);
    assert_near(b[0].running_part, 0.5, 1e-12);
    assert_int_equal(b[0].started, 1700000000);
    free(b);
    kind.state = other.state = FDT_JOB_DONE;
    assert_int_equal(fdt_store_job_update(s, &kind), 0);
    assert_int_equal(fdt_store_job_update(s, &other), 0);
    assert_int_equal(fdt_store_batches_active(s, &b, &n), 0);
    assert_int_equal(n, 0); /* a batch all ended is no longer listed */
    free(b);
    fdt_store_close(s);
}

static void test_job_lifecycle(void **state)
{
    fdt_store *s = open_store(state);
    fdt_job a = job_of(0, 512), b = job_of(1, 512), c = job_of(0, 256), got;
    assert_int_equal(fdt_store_job_create(s, &a), 0);
    assert_int_equal(fdt_store_job_create(s, &b), 0);
    assert_int_equal(fdt_store_job_create(s, &c), 0);
    assert_true(a.created > 0);

    assert_int_equal(fdt_store_job_next(s, 0, "fp", &got), 1);
    assert_int_equal(got.id, a.id);
    assert_int_equal(fdt_store_job_next(s, 1, "fp", &got), 1);
    assert_int_equal(got.id, b.id);
    assert_int_equal(fdt_store_job_next(s, 2, "fp", &got), 0);

    a.state = FDT_JOB_RUNNING;
    a.started = 1700000000;
    a.done = 40;
    a.ok = 39;
    a.failed = 1;
    a.best_gbps = 2930.5;
    a.phase = FDT_JOB_PHASE_MEASURE;
    strcpy(a.best_variant, "tiled:64x2x2:m8:seed");
    assert_int_equal(fdt_store_job_update(s, &a), 0);
    assert_int_equal(fdt_store_job_get(s, a.id, &got), 1);
    assert_int_equal(got.state, FDT_JOB_RUNNING);
    assert_int_equal(got.done, 40);
    assert_int_equal(got.failed, 1);
    assert_int_equal(got.total, 100);
    assert_int_equal(got.started, 1700000000);
    assert_int_equal(got.created, a.created);
    assert_near(got.best_gbps, 2930.5, 1e-9);
    assert_int_equal(got.phase, FDT_JOB_PHASE_MEASURE);
    assert_string_equal(got.best_variant, "tiled:64x2x2:m8:seed");
    /* how it searches is kept; the warm start is unset until it runs, then kept */
    assert_string_equal(got.strategy, "guided");
    assert_int_equal(got.patience, 32);
    assert_false(got.has_warm);
    a.has_warm = 1;
    a.spent_s = 2.5;
    assert_int_equal(fdt_store_job_update(s, &a), 0);
    assert_int_equal(fdt_store_job_get(s, a.id, &got), 1);
    assert_true(got.has_warm);
    assert_string_equal(got.warm, "");
    assert_near(got.spent_s, 2.5, 1e-12);
    strcpy(a.warm, "3,1,2");
    assert_int_equal(fdt_store_job_update(s, &a), 0);
    assert_int_equal(fdt_store_job_get(s, a.id, &got), 1);
    assert_string_equal(got.warm, "3,1,2");
    fdt_job unknown = job_of(0, 64);
    strcpy(unknown.strategy, "annealing");
    assert_int_equal(fdt_store_job_create(s, &unknown), -1);
    assert_int_equal(fdt_store_job_next(s, 0, "fp", &got), 1);
    assert_int_equal(got.id, c.id);

    fdt_job like = job_of(0, 512);
    assert_int_equal(fdt_store_job_find_active(s, &like, &got), 1);
    assert_int_equal(got.id, a.id);
    strcpy(like.strategy, "exhaustive"); /* another strategy is another tuning */
    assert_int_equal(fdt_store_job_find_active(s, &like, &got), 0);
    strcpy(like.strategy, "guided");
    like.subset = 10;
    assert_int_equal(fdt_store_job_find_active(s, &like, &got), 0);
    like = job_of(0, 512);
    like.key.problem.precision = FDT_FLOAT;
    assert_int_equal(fdt_store_job_find_active(s, &like, &got), 0);

    c.state = FDT_JOB_DONE;
    assert_int_equal(fdt_store_job_update(s, &c), 0);
    assert_int_equal(fdt_store_job_find_active(s, &(fdt_job){.key = c.key}, &got), 0);
    int counts[5];
    assert_int_equal(fdt_store_job_counts(s, counts), 0);
    assert_int_equal(counts[FDT_JOB_QUEUED], 1);
    assert_int_equal(counts[FDT_JOB_RUNNING], 1);
    assert_int_equal(counts[FDT_JOB_DONE], 1);
    assert_int_equal(counts[FDT_JOB_FAILED], 0);
    assert_int_equal(counts[FDT_JOB_CANCELLED], 0);

    fdt_job *list;
    size_t n;
    assert_int_equal(fdt_store_jobs(s, -1, 10, &list, &n), 0);
    assert_job_ids(list, n, (int64_t[]){c.id, b.id, a.id}, 3);
    assert_int_equal(fdt_store_jobs(s, FDT_JOB_QUEUED, 10, &list, &n), 0);
    assert_job_ids(list, n, (int64_t[]){b.id}, 1);
    assert_int_equal(fdt_store_jobs(s, -1, 2, &list, &n), 0);
    assert_job_ids(list, n, (int64_t[]){c.id, b.id}, 2);
    assert_int_equal(fdt_store_jobs(s, 7, 10, &list, &n), -1);

    assert_int_equal(fdt_store_jobs_requeue_running(s), 1);
    assert_int_equal(fdt_store_job_get(s, a.id, &got), 1);
    assert_int_equal(got.state, FDT_JOB_QUEUED);
    assert_int_equal(got.phase, FDT_JOB_PHASE_NONE);
    assert_int_equal(got.done, 40);
    assert_int_equal(fdt_store_job_next(s, 0, "fp", &got), 1);
    assert_int_equal(got.id, a.id);
    assert_int_equal(fdt_store_jobs_requeue_running(s), 0);

    assert_int_equal(fdt_store_job_get(s, c.id + 100, &got), 0);
    fdt_job ghost = job_of(0, 64);
    ghost.id = c.id + 100;
    assert_int_equal(fdt_store_job_update(s, &ghost), -1);
    assert_non_null(strstr(fdt_store_error(s), "no job"));
    fdt_store_close(s);
}

static fdt_result_row result_of(int64_t job_id, const char *variant, const char *status,
                                double median_ms)
{
    fdt_result_row r = {.job_id = job_id, .median_ms = median_ms, .min_ms = median_ms * 0.9,
                        .q1_ms = median_ms * 0.95, .q3_ms = median_ms * 1.05,
                        .gbps = 1000 / median_ms, .samples = 20, .reps = 4, .vgprs = 32,
                        .sgprs = -1, .scratch_bytes = 0, .shared_bytes = 0};
    strcpy(r.variant, variant);
    strcpy(r.status, status);
    return r;
}

static void assert_names(char **names, size_t n, const char *const *want, size_t nwant)
{
    assert_int_equal(n, nwant);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(names[i], want[i]);
    fdt_store_names_free(names, n);
}

/* A store with one device and one job; results are added to it. */
static fdt_store *store_with_job(void **state, int64_t *device_id, fdt_job *job)
{
    fdt_store *s = open_store(state);
    *job = job_of(0, 512);
    assert_int_equal(fdt_store_device_upsert(s, &h100, device_id, &balance), 0);
    assert_int_equal(fdt_store_job_create(s, job), 0);
    return s;
}

typedef struct export_seen {
    int rows, stop_after;
    int64_t device_id, last_id;
    fdt_key key;
} export_seen;

static int on_export_row(void *ctx, int64_t id, int64_t device_id, const fdt_key *key,
                         const fdt_result_row *r)
{
    export_seen *seen = ctx;
    assert_true(r->job_id > 0);
    assert_true(id > seen->last_id); /* in id order: the next page starts after the last */
    seen->last_id = id;
    seen->device_id = device_id;
    seen->key = *key;
    return ++seen->rows == seen->stop_after;
}

static void test_results(void **state)
{
    int64_t device_id;
    fdt_job job;
    fdt_store *s = store_with_job(state, &device_id, &job);
    const char *kernels = fdt_kernels_version();
    const fdt_result_row first[] = {
        result_of(job.id, "tiled:64x2x2:m8:seed", "ok", 2.0),
        result_of(job.id, "zmarch:32x4x1:mz4", "ok", 1.0),
        result_of(job.id, "broken:256x1x1:bug1", "wrong", 0.5),
        result_of(job.id, "naive:256x1x1", "ok", 3.0),
        result_of(job.id, "smem:32x8x1:mz8", "compile_error", NAN),
        result_of(job.id, "zvec:32x8x1:mz4", "noisy", 0.9), /* never a leader */
    };
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(fdt_store_result_add(s, device_id, &job.key, kernels, &first[i]), 0);

    fdt_result_row again = result_of(job.id, "tiled:64x2x2:m8:seed", "ok", 9.0);
    assert_int_equal(fdt_store_result_add(s, device_id, &job.key, kernels, &again), 1);
    assert_non_null(strstr(fdt_store_error(s), "already"));

    fdt_result_row leader = result_of(job.id, "zmarch:32x4x1:mz4", "ok", 1.1);
    leader.leader = 1;
    assert_int_equal(fdt_store_result_add(s, device_id, &job.key, kernels, &leader), 0);
    leader.median_ms = 1.2;
    assert_int_equal(fdt_store_result_add(s, device_id, &job.key, kernels, &leader), 0);

    fdt_result_row bogus = result_of(job.id, "naive:128x1x1", "bogus", 1.0);
    assert_int_equal(fdt_store_result_add(s, device_id, &job.key, kernels, &bogus), -1);
    fdt_result_row orphan = result_of(job.id + 1, "naive:128x1x1", "ok", 1.0);
    assert_int_equal(fdt_store_result_add(s, device_id, &job.key, kernels, &orphan), -1);

    fdt_result_row *rows;
    size_t n;
    assert_int_equal(fdt_store_job_results(s, job.id, &rows, &n), 0);
    assert_int_equal(n, 7);
    assert_string_equal(rows[0].variant, "tiled:64x2x2:m8:seed");
    assert_near(rows[0].median_ms, 2.0, 1e-12);
    assert_near(rows[0].q3_ms, 2.1, 1e-12);
    assert_int_equal(rows[0].samples, 20);
    assert_int_equal(rows[0].sgprs, -1);
    assert_true(isnan(rows[4].median_ms));
    assert_string_equal(rows[4].status, "compile_error");
    assert_string_equal(rows[5].status, "noisy");
    assert_int_equal(rows[6].leader, 1);
    assert_near(rows[6].median_ms, 1.2, 1e-12);
    free(rows);

    char **names;
    assert_int_equal(fdt_store_job_leaders(s, job.id, 2, &names, &n), 0);
    assert_names(names, n, (const char *const[]){"zmarch:32x4x1:mz4", "tiled:64x2x2:m8:seed"},
                 2);
    assert_int_equal(fdt_store_job_leaders(s, job.id, 10, &names, &n), 0);
    assert_int_equal(n, 3);
    fdt_store_names_free(names, n);

    export_seen seen = {0};
    assert_int_equal(fdt_store_results_page(s, 0, 1000, on_export_row, &seen), 0);
    assert_int_equal(seen.rows, 7);
    assert_int_equal(seen.device_id, device_id);
    assert_int_equal(seen.key.problem.nz, 512);
    assert_int_equal(seen.key.problem.precision, FDT_DOUBLE);
    assert_int_equal(seen.key.problem.cache, FDT_CACHE_HOT);
    seen = (export_seen){.stop_after = 2};
    assert_int_equal(fdt_store_results_page(s, 0, 1000, on_export_row, &seen), 0);
    assert_int_equal(seen.rows, 2);
    /* Pages: at most limit rows, each page starting after the last id of the one before. */
    seen = (export_seen){0};
    assert_int_equal(fdt_store_results_page(s, 0, 4, on_export_row, &seen), 0);
    assert_int_equal(seen.rows, 4);
    const int64_t fourth = seen.last_id;
    assert_int_equal(fdt_store_results_page(s, fourth, 4, on_export_row, &seen), 0);
    assert_int_equal(seen.rows, 7);
    assert_int_equal(fdt_store_results_page(s, seen.last_id, 4, on_export_row, &seen), 0);
    assert_int_equal(seen.rows, 7);

    /* The warm start's question: the job that measured the problem most fully; leader
     * rows do not count, another problem's rows even less. */
    fdt_job second = job_of(0, 512), other = job_of(0, 256);
    assert_int_equal(fdt_store_job_create(s, &second), 0);
    assert_int_equal(fdt_store_job_create(s, &other), 0);
    for (int i = 0; i < 6; i++) {
        char name[32];
        snprintf(name, sizeof name, "naive:%dx1x1", 32 << i);
        fdt_result_row r = result_of(second.id, name, "ok", 1.0);
        r.leader = i < 3;
        assert_int_equal(fdt_store_result_add(s, device_id, &second.key, kernels, &r), 0);
        r.job_id = other.id;
        r.leader = 0;
        assert_int_equal(fdt_store_result_add(s, device_id, &other.key, kernels, &r), 0);
    }
    int64_t fullest = 0, first_pass = 0;
    assert_int_equal(fdt_store_fullest_job(s, device_id, &job.key, &fullest, &first_pass), 1);
    assert_int_equal(fullest, job.id); /* 6 first-pass rows against second's 3 */
    assert_int_equal(first_pass, 6);
    assert_int_equal(fdt_store_fullest_job(s, device_id, &other.key, &fullest, &first_pass), 1);
    assert_int_equal(fullest, other.id);
    assert_int_equal(first_pass, 6);
    assert_int_equal(fdt_store_fullest_job(s, device_id + 1, &job.key, &fullest, &first_pass), 0);
    fdt_store_close(s);
}

static fdt_best best_of(int64_t device_id, fdt_key key, const char *variant, double gbps)
{
    fdt_best b = {.device_id = device_id, .key = key, .gbps = gbps, .median_ms = 1.5,
                  .copy_gbps = 3013.7, .interior_copy_gbps = 2855.0,
                  .kernel1_gbps = 2708.2};
    strcpy(b.variant, variant);
    strcpy(b.kernels, fdt_kernels_version());
    return b;
}

static void test_best(void **state)
{
    int64_t device_id;
    fdt_job job;
    fdt_store *s = store_with_job(state, &device_id, &job);
    const fdt_key big = key_of(512, FDT_DOUBLE, FDT_CACHE_HOT);
    fdt_best b = best_of(device_id, big, "naive:256x1x1", 2000);
    assert_int_equal(fdt_store_best_put(s, &b), 0);
    b = best_of(device_id, big, "tiled:64x2x2:m8:seed", 2930);
    b.job_id = job.id;
    b.interior_copy_gbps = 2861.5; /* the upsert replaces it too */
    strcpy(b.doubt, "the copy ran at 1.0 GB/s");
    assert_int_equal(fdt_store_best_put(s, &b), 0);
    const fdt_best others[] = {
        best_of(device_id, key_of(256, FDT_DOUBLE, FDT_CACHE_HOT), "zmarch:32x4x1:mz4", 2500),
        best_of(device_id, key_of(512, FDT_FLOAT, FDT_CACHE_HOT), "naive:256x1x1", 2800),
        best_of(device_id, key_of(512, FDT_DOUBLE, FDT_CACHE_COLD), "naive:256x1x1", 2100),
        best_of(device_id, key_of(512, FDT_DOUBLE, FDT_CACHE_PERSIST), "zvec:16x16x1:mz4", 2920),
    };
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(fdt_store_best_put(s, &others[i]), 0);
    fdt_best orphan = best_of(device_id + 5, big, "naive:256x1x1", 1);
    assert_int_equal(fdt_store_best_put(s, &orphan), -1);

    fdt_best *rows;
    size_t n;
    /* Ordered by key: double before float, cold before hot before persist, then the shape. */
    assert_int_equal(fdt_store_best_all(s, &rows, &n), 0);
    assert_int_equal(n, 5);
    assert_int_equal(rows[0].key.problem.cache, FDT_CACHE_COLD);
    assert_int_equal(rows[1].key.problem.nx, 256);
    assert_int_equal(rows[1].job_id, 0);
    assert_string_equal(rows[2].variant, "tiled:64x2x2:m8:seed");
    assert_near(rows[2].gbps, 2930, 1e-9);
    assert_near(rows[2].copy_gbps, 3013.7, 1e-9);
    assert_near(rows[2].interior_copy_gbps, 2861.5, 1e-9);
    assert_string_equal(rows[2].doubt, "the copy ran at 1.0 GB/s");
    assert_string_equal(rows[1].doubt, "");
    assert_int_equal(rows[2].job_id, job.id);
    assert_true(rows[2].updated > 0);
    assert_string_equal(rows[2].kernels, fdt_kernels_version());
    assert_int_equal(rows[3].key.problem.cache, FDT_CACHE_PERSIST);
    assert_string_equal(rows[3].variant, "zvec:16x16x1:mz4");
    assert_int_equal(rows[3].state, FDT_CACHE_PERSIST); /* a state follows its key */
    assert_int_equal(rows[2].state, FDT_CACHE_HOT);
    assert_int_equal(rows[4].key.problem.precision, FDT_FLOAT);

    /* Pages of two walk the same order, each starting after the last row of the one before. */
    fdt_best *page, after = {0};
    size_t seen = 0;
    for (int k = 0; k < 3; k++) {
        assert_int_equal(fdt_store_best_page(s, k ? &after : NULL, 2, &page, &n), 0);
        assert_int_equal(n, k < 2 ? 2 : 1);
        for (size_t i = 0; i < n; i++, seen++) {
            assert_int_equal(page[i].key.problem.cache, rows[seen].key.problem.cache);
            assert_int_equal(page[i].key.problem.nx, rows[seen].key.problem.nx);
            assert_string_equal(page[i].variant, rows[seen].variant);
        }
        after = page[n - 1];
        free(page);
    }
    assert_int_equal(fdt_store_best_page(s, &after, 2, &page, &n), 0);
    assert_int_equal(n, 0);
    free(page);
    free(rows);
    fdt_store_close(s);
}

/* A shape laid out another way is another problem: a padded layout's winner stands beside
 * the dense one's, each found by its own key and read back with its layout; a pitch equal
 * to nx is the dense layout (one row, not two); a job's layout and its results' travel. */
static void test_best_keeps_each_layout(void **state)
{
    int64_t device_id;
    fdt_job job;
    fdt_store *s = store_with_job(state, &device_id, &job);
    const fdt_key dense = key_of(96, FDT_DOUBLE, FDT_CACHE_HOT);
    fdt_key padded = dense, offset_only = dense, pitch_nx = dense;
    padded.problem.pitch = 100;
    padded.problem.offset = 3;
    offset_only.problem.offset = 3;
    pitch_nx.problem.pitch = 96;
    fdt_best b = best_of(device_id, dense, "zvec:64x4x1:mz4", 3367.9);
    assert_int_equal(fdt_store_best_put(s, &b), 0);
    b = best_of(device_id, padded, "tiled:32x2x2:m2:seed", 3550.1);
    assert_int_equal(fdt_store_best_put(s, &b), 0);
    b = best_of(device_id, offset_only, "naive:256x1x1", 3000);
    assert_int_equal(fdt_store_best_put(s, &b), 0);
    b = best_of(device_id, pitch_nx, "zvec:32x4x1:mz4", 3400);
    assert_int_equal(fdt_store_best_put(s, &b), 0); /* replaces the dense row */
    fdt_best got;
    assert_int_equal(fdt_store_best_get(s, device_id, &padded, &got), 1);
    assert_string_equal(got.variant, "tiled:32x2x2:m2:seed");
    assert_int_equal(got.key.problem.pitch, 100);
    assert_int_equal(got.key.problem.offset, 3);
    assert_int_equal(fdt_store_best_get(s, device_id, &dense, &got), 1);
    assert_string_equal(got.variant, "zvec:32x4x1:mz4");
    assert_int_equal(got.key.problem.pitch, 0);
    assert_int_equal(got.key.problem.offset, 0);
    fdt_best *rows;
    size_t n;
    assert_int_equal(fdt_store_best_all(s, &rows, &n), 0);
    assert_int_equal(n, 3);
    free(rows);

    fdt_job j = job_of(0, 96);
    j.key = padded;
    assert_int_equal(fdt_store_job_create(s, &j), 0);
    fdt_job back;
    assert_int_equal(fdt_store_job_get(s, j.id, &back), 1);
    assert_int_equal(back.key.problem.pitch, 100);
    assert_int_equal(back.key.problem.offset, 3);
    fdt_store_close(s);
}

/* A doubtful row due to be measured again is found by its device once its time has come,
 * the earliest first; one never to be measured again (0), or another device's, is not. */
static void test_best_due(void **state)
{
    int64_t device_id;
    fdt_job job;
    fdt_store *s = store_with_job(state, &device_id, &job);
    fdt_best later =
        best_of(device_id, key_of(256, FDT_DOUBLE, FDT_CACHE_HOT), "naive:256x1x1", 9);
    later.remeasure_after = 200;
    fdt_best sooner =
        best_of(device_id, key_of(512, FDT_DOUBLE, FDT_CACHE_HOT), "naive:256x1x1", 9);
    sooner.remeasure_after = 100;
    strcpy(sooner.doubt, "the copy ran at 1.0 GB/s");
    const fdt_best never = best_of(device_id, key_of(128, FDT_DOUBLE, FDT_CACHE_HOT),
                                   "naive:256x1x1", 9);
    assert_int_equal(fdt_store_best_put(s, &later), 0);
    assert_int_equal(fdt_store_best_put(s, &sooner), 0);
    assert_int_equal(fdt_store_best_put(s, &never), 0);
    fdt_best due;
    assert_int_equal(fdt_store_best_due(s, device_id, 99, &due), 0);
    assert_int_equal(fdt_store_best_due(s, device_id + 1, 1000, &due), 0);
    assert_int_equal(fdt_store_best_due(s, device_id, 250, &due), 1);
    assert_int_equal(due.key.problem.nx, 512);
    assert_int_equal(due.remeasure_after, 100);
    assert_string_equal(due.doubt, "the copy ran at 1.0 GB/s");
    due.remeasure_after = 0; /* measured again: the upsert moves it on */
    assert_int_equal(fdt_store_best_put(s, &due), 0);
    assert_int_equal(fdt_store_best_due(s, device_id, 250, &due), 1);
    assert_int_equal(due.key.problem.nx, 256);
    fdt_store_close(s);
}

/* Cache auto's row keeps the state it chose; a row whose key is a state cannot say another
 * one, and auto is no state. */
static void test_best_under_auto_keeps_its_state(void **state)
{
    int64_t device_id;
    fdt_job job;
    fdt_store *s = store_with_job(state, &device_id, &job);
    fdt_best chose = best_of(device_id, key_of(100, FDT_DOUBLE, FDT_CACHE_AUTO),
                             "zvec:64x8x1:mz2:lb", 2688);
    chose.state = FDT_CACHE_PERSIST;
    assert_int_equal(fdt_store_best_put(s, &chose), 0);
    fdt_best hot = best_of(device_id, key_of(100, FDT_DOUBLE, FDT_CACHE_HOT), "naive:256x1x1",
                           2300);
    hot.state = FDT_CACHE_PERSIST; /* ignored: the key says hot */
    assert_int_equal(fdt_store_best_put(s, &hot), 0);
    fdt_best bad = chose;
    bad.state = FDT_CACHE_AUTO;
    assert_int_equal(fdt_store_best_put(s, &bad), -1);
    fdt_best *rows;
    size_t n;
    assert_int_equal(fdt_store_best_all(s, &rows, &n), 0);
    assert_int_equal(n, 2);
    /* Ordered by the cache's name: auto before hot. */
    assert_int_equal(rows[0].key.problem.cache, FDT_CACHE_AUTO);
    assert_int_equal(rows[0].state, FDT_CACHE_PERSIST);
    assert_string_equal(rows[0].variant, "zvec:64x8x1:mz2:lb");
    assert_int_equal(rows[1].key.problem.cache, FDT_CACHE_HOT);
    assert_int_equal(rows[1].state, FDT_CACHE_HOT);
    free(rows);

    fdt_job choosing = job_of(0, 100);
    choosing.choose_cache = 1;
    assert_int_equal(fdt_store_job_create(s, &choosing), 0);
    fdt_job back;
    assert_int_equal(fdt_store_job_get(s, choosing.id, &back), 1);
    assert_int_equal(back.choose_cache, 1);
    fdt_store_close(s);
}

/* A fingerprint made up for h100, as a build of another hash would have made it. */
#define OLD_FINGERPRINT "0123456789abcdef"
#define DEVICE_FIELDS                                                                     \
    "backend, vendor, name, arch, compute_units, memory_bytes, l2_bytes, driver_version, " \
    "compiler_version, warp_size, max_threads_per_block, max_shared_per_block, "           \
    "max_grid_x, max_grid_y, max_grid_z, block_barriers, first_seen"

/* A device an older build stored under its fingerprint of then is adopted when it registers:
 * the same row (its id, balance, results and best rows), under the new fingerprint, and the
 * jobs any device of its kind may run follow it. A device of another identity is not
 * adopted, nor a row of the old fingerprint beside one of the new (an older build that ran
 * again). */
static void test_device_adopted_from_an_older_fingerprint(void **state)
{
    const char *path = ((fixture *)*state)->path;
    int64_t id, other_id, again;
    fdt_job job;
    fdt_store *s = store_with_job(state, &id, &job);
    fdt_device_info newer_driver = h100;
    strcpy(newer_driver.driver_version, "13.1");
    assert_int_equal(fdt_store_device_upsert(s, &newer_driver, &other_id, &balance), 0);
    const fdt_balance measured = {.copy_gbps = 3013.7, .measured = 1795000000};
    assert_int_equal(fdt_store_device_balance_put(s, id, &measured), 0);
    const fdt_result_row r = result_of(job.id, "naive:256x1x1", "ok", 1.0);
    assert_int_equal(fdt_store_result_add(s, id, &job.key, "k", &r), 0);
    const fdt_best b = best_of(id, job.key, "naive:256x1x1", 2000);
    assert_int_equal(fdt_store_best_put(s, &b), 0);
    fdt_job kind = job_of(-1, 96);
    strcpy(kind.fingerprint, OLD_FINGERPRINT);
    assert_int_equal(fdt_store_job_create(s, &kind), 0);
    fdt_store_close(s);
    sql_exec(path, "UPDATE devices SET fingerprint = '" OLD_FINGERPRINT "' "
                   "WHERE driver_version = '13.0'");

    s = open_store(state);
    fdt_balance kept;
    assert_int_equal(fdt_store_device_upsert(s, &h100, &again, &kept), 0);
    assert_int_equal(again, id);
    assert_near(kept.copy_gbps, 3013.7, 1e-9);
    char fingerprint[20], other[20];
    fdt_device_fingerprint(&h100, fingerprint);
    fdt_device_fingerprint(&newer_driver, other);
    fdt_device_row *rows;
    size_t n;
    assert_int_equal(fdt_store_devices(s, &rows, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].id, id);
    assert_string_equal(rows[0].fingerprint, fingerprint);
    assert_int_equal(rows[1].id, other_id);
    assert_string_equal(rows[1].fingerprint, other);
    free(rows);
    fdt_job next;
    assert_int_equal(fdt_store_job_next(s, 1, fingerprint, &next), 1);
    assert_int_equal(next.id, kind.id);
    assert_string_equal(next.fingerprint, fingerprint);
    int64_t fullest = 0, first_pass = 0;
    assert_int_equal(fdt_store_fullest_job(s, again, &job.key, &fullest, &first_pass), 1);
    assert_int_equal(fullest, job.id);
    fdt_best *best;
    assert_int_equal(fdt_store_best_all(s, &best, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(best[0].device_id, id);
    free(best);
    fdt_store_close(s);

    sql_exec(path, "INSERT INTO devices (fingerprint, " DEVICE_FIELDS ", last_seen) "
                   "SELECT '" OLD_FINGERPRINT "', " DEVICE_FIELDS ", last_seen + 1 "
                   "FROM devices WHERE driver_version = '13.0'");
    s = open_store(state);
    assert_int_equal(fdt_store_device_upsert(s, &h100, &again, &kept), 0);
    assert_int_equal(again, id);
    fdt_store_close(s);
    expect_sql(path, "SELECT count(*) FROM devices WHERE fingerprint = '" OLD_FINGERPRINT "'",
               "1");
}

#define OLD_SPEC "spec-0123456789abcdef"
#define NEW_SPEC "spec-fedcba9876543210"

static fdt_key spec_key(const char *name, int n)
{
    fdt_key k = key_of(n, FDT_DOUBLE, FDT_CACHE_HOT);
    strcpy(k.problem.stencil, name);
    return k;
}

static fdt_best spec_best(int64_t device_id, const char *name, int n, double gbps,
                          int64_t updated)
{
    fdt_best b = best_of(device_id, spec_key(name, n), "snaive:256x1x1", gbps);
    b.updated = updated;
    return b;
}

typedef struct specs_seen {
    int rows;
    char name[32], spec[64];
} specs_seen;

static int on_spec(void *ctx, const char *name, const char *spec)
{
    specs_seen *seen = ctx;
    seen->rows++;
    snprintf(seen->name, sizeof seen->name, "%s", name);
    snprintf(seen->spec, sizeof seen->spec, "%s", spec);
    return 0;
}

/* A spec that a build names otherwise (its pattern's hash changed) is renamed in every row
 * that carries the name: its spec, its jobs, their results and its best rows are found
 * under the new name, and none is left under the old; another stencil's rows stay. Where
 * both names hold a winner of one problem (a store that went back to an older build and
 * forward again), the one updated last stays. */
static void test_stencil_renamed_in_every_row(void **state)
{
    const char *path = ((fixture *)*state)->path;
    int64_t id;
    fdt_job laplacian, job = job_of(0, 64);
    fdt_store *s = store_with_job(state, &id, &laplacian);
    job.key = spec_key(OLD_SPEC, 64);
    assert_int_equal(fdt_store_stencil_put(s, OLD_SPEC, "{\"fdtune_stencil\": 1}"), 0);
    assert_int_equal(fdt_store_job_create(s, &job), 0);
    const fdt_result_row r = result_of(job.id, "snaive:256x1x1", "ok", 1.0);
    assert_int_equal(fdt_store_result_add(s, id, &job.key, "k", &r), 0);
    const fdt_best bests[] = {
        spec_best(id, OLD_SPEC, 64, 900, 200),
        spec_best(id, OLD_SPEC, 96, 800, 300), spec_best(id, NEW_SPEC, 96, 700, 100),
        spec_best(id, OLD_SPEC, 128, 600, 100), spec_best(id, NEW_SPEC, 128, 650, 300),
        best_of(id, laplacian.key, "naive:256x1x1", 2000),
    };
    for (size_t i = 0; i < sizeof bests / sizeof bests[0]; i++)
        assert_int_equal(fdt_store_best_put(s, &bests[i]), 0);

    assert_int_equal(fdt_store_stencil_rename(s, OLD_SPEC, NEW_SPEC), 0);
    specs_seen seen = {0};
    assert_int_equal(fdt_store_stencils_each(s, on_spec, &seen), 0);
    assert_int_equal(seen.rows, 1);
    assert_string_equal(seen.name, NEW_SPEC);
    assert_string_equal(seen.spec, "{\"fdtune_stencil\": 1}");
    fdt_job got;
    assert_int_equal(fdt_store_job_get(s, job.id, &got), 1);
    assert_string_equal(got.key.problem.stencil, NEW_SPEC);
    assert_int_equal(fdt_store_job_get(s, laplacian.id, &got), 1);
    assert_string_equal(got.key.problem.stencil, "laplacian");
    int64_t fullest = 0, first_pass = 0;
    const fdt_key renamed = spec_key(NEW_SPEC, 64);
    assert_int_equal(fdt_store_fullest_job(s, id, &renamed, &fullest, &first_pass), 1);
    assert_int_equal(fullest, job.id);
    fdt_best *rows;
    size_t n;
    assert_int_equal(fdt_store_best_all(s, &rows, &n), 0);
    assert_int_equal(n, 4); /* laplacian, then the spec's 64, 96 and 128 */
    assert_string_equal(rows[0].key.problem.stencil, "laplacian");
    const double winners[] = {900, 800, 650};
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal(rows[i + 1].key.problem.stencil, NEW_SPEC);
        assert_near(rows[i + 1].gbps, winners[i], 1e-9);
    }
    free(rows);
    fdt_store_close(s);
    expect_sql(path,
               "SELECT (SELECT count(*) FROM stencils WHERE name = '" OLD_SPEC "') + "
               "(SELECT count(*) FROM jobs WHERE stencil = '" OLD_SPEC "') + "
               "(SELECT count(*) FROM results WHERE stencil = '" OLD_SPEC "') + "
               "(SELECT count(*) FROM best WHERE stencil = '" OLD_SPEC "')",
               "0");
}

/* A file of schema version 1 as the previous release left it: a device, a job whose id is
 * below the counter's high-water mark, its result and its best row. */
extern const char fdt_schema_sql[];
static const char version_1_rows[] =
    "PRAGMA user_version = 1; PRAGMA application_id = 1178883189;"
    "INSERT INTO devices VALUES (1, 'fp', 'cuda', 'NVIDIA', 'H100', 'sm_90', 132, 80, 50, "
    "  '13.0', 'NVRTC 13.0', 32, 1024, 49152, 2147483647, 65535, 65535, 1, 1, 1);"
    "INSERT INTO jobs VALUES (40, 'done', 0, 'laplacian', 1, 'double', 64, 64, 64, 'hot', '', "
    "  0, 1, 1, 1, 0, '', 'naive:256x1x1', 100.0, '', 1, 1, 1);"
    "INSERT INTO jobs VALUES (7, 'done', 0, 'laplacian', 1, 'double', 64, 64, 64, 'hot', '', "
    "  0, 1, 1, 1, 0, '', 'naive:256x1x1', 100.0, '', 1, 1, 1);"
    "DELETE FROM jobs WHERE id = 40;"
    "INSERT INTO results (job_id, device_id, stencil, radius, precision, nx, ny, nz, cache, "
    "  kernels, variant, status, leader, samples, reps, vgprs, sgprs, scratch_bytes, "
    "  shared_bytes, message, measured) VALUES (7, 1, 'laplacian', 1, 'double', 64, 64, 64, "
    "  'hot', 'k', 'naive:256x1x1', 'ok', 0, 15, 10, 32, -1, 0, 0, '', 1);"
    "INSERT INTO best VALUES (1, 'laplacian', 1, 'double', 'hot', 64, 64, 64, "
    "  'naive:256x1x1', 100.0, 0.1, 3000.0, 2700.0, 'k', 7, 1);";

/* Opening it migrates it to the current version (cache mode persist, search strategies, the
 * interior copy, the devices' balance, noisy results and doubtful best rows, how jobs ended,
 * then doubt kept and acted on):
 * every row is kept, job ids are not given out again, a
 * job from before strategies measures every variant, a best row from before the interior
 * copy says it was not timed (0), and foreign keys are enforced again afterwards. */
static void test_migrates_version_1(void **state)
{
    const char *path = ((fixture *)*state)->path;
    sql_exec(path, fdt_schema_sql);
    sql_exec(path, version_1_rows);
    fdt_store *s = open_store(state);

    fdt_job job;
    assert_int_equal(fdt_store_job_get(s, 7, &job), 1);
    assert_int_equal(job.key.problem.nx, 64);
    assert_string_equal(job.best_variant, "naive:256x1x1");
    assert_string_equal(job.strategy, "exhaustive");
    assert_false(job.has_warm);
    assert_string_equal(job.ended_by, ""); /* not known of a job from before version 10 */
    assert_int_equal(job.ran_on, -1);
    assert_int_equal(job.noisy, 0); /* nor from before version 11: */
    assert_int_equal(job.remeasures, 0);
    assert_string_equal(job.doubt, "");
    export_seen seen = {0};
    assert_int_equal(fdt_store_results_page(s, 0, 1000, on_export_row, &seen), 0);
    assert_int_equal(seen.rows, 1);
    fdt_best *rows;
    size_t n;
    assert_int_equal(fdt_store_best_all(s, &rows, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].job_id, 7);
    assert_near(rows[0].copy_gbps, 3000.0, 1e-9);
    assert_near(rows[0].interior_copy_gbps, 0, 0);
    assert_string_equal(rows[0].doubt, "");
    assert_int_equal(rows[0].remeasure_after, 0);
    free(rows);
    fdt_result_row noisy = result_of(7, "zvec:32x8x1:mz4", "noisy", 0.9);
    assert_int_equal(fdt_store_result_add(s, 1, &job.key, "k", &noisy), 0);

    fdt_job next = job_of(0, 128);
    assert_int_equal(fdt_store_job_create(s, &next), 0);
    assert_int_equal(next.id, 41);
    fdt_best persist = best_of(1, key_of(64, FDT_DOUBLE, FDT_CACHE_PERSIST), "zvec:16x16x1:mz4",
                               120);
    assert_int_equal(fdt_store_best_put(s, &persist), 0);
    fdt_best orphan = best_of(9, key_of(64, FDT_DOUBLE, FDT_CACHE_PERSIST), "naive:256x1x1", 1);
    assert_int_equal(fdt_store_best_put(s, &orphan), -1);
    fdt_store_close(s);

    expect_sql(path, "PRAGMA user_version", SCHEMA_VERSION_TEXT);
    expect_sql(path, "SELECT count(*) FROM pragma_foreign_key_check", "0");
}

/* A file of schema version 3 as the previous release left it: version 1's rows taken
 * through that release's own migrations, and a guided job with its warm start. */
extern const char fdt_migrate_2_sql[], fdt_migrate_3_sql[];
static void write_version_3(const char *path)
{
    sql_exec(path, fdt_schema_sql);
    sql_exec(path, version_1_rows);
    sql_exec(path, fdt_migrate_2_sql);
    sql_exec(path, fdt_migrate_3_sql);
    sql_exec(path, "PRAGMA user_version = 3;"
                   "UPDATE jobs SET strategy = 'guided', budget = 20, warm = '3,5', "
                   "  spent_s = 2.5 WHERE id = 7");
}

/* Opening it migrates it to the current version: every row is kept as it was, the best row's
 * interior copy reads 0 (not timed), and a new best row keeps its interior copy. */
static void test_migrates_version_3(void **state)
{
    const char *path = ((fixture *)*state)->path;
    write_version_3(path);
    fdt_store *s = open_store(state);

    fdt_job job;
    assert_int_equal(fdt_store_job_get(s, 7, &job), 1);
    assert_string_equal(job.strategy, "guided");
    assert_int_equal(job.budget, 20);
    assert_true(job.has_warm);
    assert_string_equal(job.warm, "3,5");
    assert_near(job.spent_s, 2.5, 1e-9);
    export_seen seen = {0};
    assert_int_equal(fdt_store_results_page(s, 0, 1000, on_export_row, &seen), 0);
    assert_int_equal(seen.rows, 1);
    fdt_best persist = best_of(1, key_of(64, FDT_DOUBLE, FDT_CACHE_PERSIST), "zvec:16x16x1:mz4",
                               120);
    assert_int_equal(fdt_store_best_put(s, &persist), 0);
    fdt_best *rows;
    size_t n;
    assert_int_equal(fdt_store_best_all(s, &rows, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(rows[0].variant, "naive:256x1x1");
    assert_near(rows[0].gbps, 100.0, 1e-9);
    assert_near(rows[0].copy_gbps, 3000.0, 1e-9);
    assert_near(rows[0].kernel1_gbps, 2700.0, 1e-9);
    assert_near(rows[0].interior_copy_gbps, 0, 0);
    assert_int_equal(rows[0].job_id, 7);
    assert_int_equal(rows[0].state, rows[0].key.problem.cache);
    assert_int_equal(job.choose_cache, 0);
    assert_near(rows[1].interior_copy_gbps, 2855.0, 1e-9);
    free(rows);
    fdt_job next = job_of(0, 128);
    assert_int_equal(fdt_store_job_create(s, &next), 0);
    assert_int_equal(next.id, 41);
    fdt_store_close(s);

    expect_sql(path, "PRAGMA user_version", SCHEMA_VERSION_TEXT);
    expect_sql(path, "SELECT count(*) FROM pragma_foreign_key_check", "0");
}

/* A file of schema version 4 as the previous release left it: version 1's rows taken
 * through that release's own migrations. */
extern const char fdt_migrate_4_sql[];
static void write_version_4(const char *path)
{
    write_version_3(path);
    sql_exec(path, fdt_migrate_4_sql);
    sql_exec(path, "PRAGMA user_version = 4");
}

/* Opening it migrates it to the current version: the device keeps its row, its id and every
 * field, with no balance yet (0: the next start measures it); the job, result and best rows
 * are kept as they were; a balance can then be stored for the old device. */
static void test_migrates_version_4(void **state)
{
    const char *path = ((fixture *)*state)->path;
    write_version_4(path);
    fdt_store *s = open_store(state);
    fdt_device_row *devices;
    size_t n;
    assert_int_equal(fdt_store_devices(s, &devices, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(devices[0].id, 1);
    assert_string_equal(devices[0].fingerprint, "fp");
    assert_string_equal(devices[0].info.name, "H100");
    assert_int_equal(devices[0].info.l2_bytes, 50);
    free(devices);
    fdt_job job;
    assert_int_equal(fdt_store_job_get(s, 7, &job), 1);
    assert_string_equal(job.strategy, "guided");
    export_seen seen = {0};
    assert_int_equal(fdt_store_results_page(s, 0, 1000, on_export_row, &seen), 0);
    assert_int_equal(seen.rows, 1);
    fdt_best *rows;
    assert_int_equal(fdt_store_best_all(s, &rows, &n), 0);
    assert_int_equal(n, 1);
    assert_near(rows[0].copy_gbps, 3000.0, 1e-9);
    assert_true(fdt_problem_dense(&rows[0].key.problem)); /* stored before layouts: dense */
    free(rows);
    fdt_store_close(s);
    expect_sql(path, "SELECT copy_gbps || ' ' || l2_gbps || ' ' || balance_measured "
                     "FROM devices WHERE id = 1", "0.0 0.0 0");

    expect_sql(path, "SELECT '[' || balance_doubt || ']' FROM devices WHERE id = 1", "[]");

    s = open_store(state);
    const fdt_balance measured = {.copy_gbps = 3013.7, .l2_gbps = 7021.5, .measured = 17,
                                  .doubt = "the host was busy"};
    assert_int_equal(fdt_store_device_balance_put(s, 1, &measured), 0);
    fdt_store_close(s);
    expect_sql(path, "SELECT balance_measured FROM devices WHERE id = 1", "17");
    expect_sql(path, "SELECT balance_doubt FROM devices WHERE id = 1", "the host was busy");
    expect_sql(path, "PRAGMA user_version", SCHEMA_VERSION_TEXT);
    expect_sql(path, "SELECT count(*) FROM pragma_foreign_key_check", "0");
}

/* A version 1 file whose rows already break a reference (a result of a job that is gone,
 * written by something that did not enforce foreign keys): the migration is refused with a
 * message, and the file stays at version 1 with every row. */
static void test_migration_refuses_broken_references(void **state)
{
    const char *path = ((fixture *)*state)->path;
    sql_exec(path, fdt_schema_sql);
    sql_exec(path, version_1_rows);
    sql_exec(path, "DELETE FROM best; DELETE FROM jobs WHERE id = 7");
    char err[512] = "";
    assert_null(fdt_store_open(path, err, sizeof err));
    if (!strstr(err, "migration refused: the file holds 1 reference(s) to rows that do not "
                     "exist"))
        fail_msg("unexpected message: %s", err);
    expect_sql(path, "PRAGMA user_version", "1");
    expect_sql(path, "SELECT count(*) FROM results", "1");
}

static void test_code_cache(void **state)
{
    fdt_store *s = open_store(state);
    unsigned char object[1000];
    for (size_t i = 0; i < sizeof object; i++)
        object[i] = (unsigned char)(i % 7 == 0 ? 0 : i * 37);
    char key[33];
    fdt_code_key("source", NULL, 0, "gfx90a", "hiprtc 5.2", key);
    fdt_code code = {0};
    assert_int_equal(fdt_store_code_get(s, key, &code), 0);
    assert_int_equal(fdt_store_code_put(s, key, object, sizeof object), 0);
    assert_int_equal(fdt_store_code_get(s, key, &code), 1);
    assert_int_equal(code.size, sizeof object);
    assert_memory_equal(code.data, object, sizeof object);
    fdt_code_free(&code);

    assert_int_equal(fdt_store_code_put(s, key, object, 10), 0);
    assert_int_equal(fdt_store_code_get(s, key, &code), 1);
    assert_int_equal(code.size, 10);
    fdt_code_free(&code);
    assert_int_equal(fdt_store_code_put(s, "empty", "", 0), 0);
    assert_int_equal(fdt_store_code_get(s, "empty", &code), 1);
    assert_int_equal(code.size, 0);
    fdt_code_free(&code);
    fdt_store_close(s);
}

/* Every write through the store fails with a message; nothing is changed. */
static void assert_writes_fail(fdt_store *ro)
{
    fdt_job job = job_of(0, 64);
    fdt_result_row r = result_of(1, "naive:256x1x1", "ok", 1);
    fdt_best b = best_of(1, job.key, "naive:256x1x1", 1);
    int64_t id;
    assert_int_equal(fdt_store_device_upsert(ro, &h100, &id, &balance), -1);
    assert_non_null(strstr(fdt_store_error(ro), "read-only"));
    assert_int_equal(fdt_store_device_balance_put(ro, 1, &balance), -1);
    assert_int_equal(fdt_store_job_create(ro, &job), -1);
    job.id = 1;
    assert_int_equal(fdt_store_job_update(ro, &job), -1);
    assert_int_equal(fdt_store_jobs_requeue_running(ro), -1);
    assert_int_equal(fdt_store_result_add(ro, 1, &job.key, "k", &r), -1);
    assert_int_equal(fdt_store_best_put(ro, &b), -1);
    assert_int_equal(fdt_store_code_put(ro, "key", "x", 1), -1);
}

static void test_readonly(void **state)
{
    const char *path = ((fixture *)*state)->path;
    char err[512] = "";
    assert_null(fdt_store_open_readonly(path, err, sizeof err));
    assert_non_null(strstr(err, path));

    int64_t device_id;
    fdt_job job;
    fdt_store *s = store_with_job(state, &device_id, &job);
    assert_int_equal(fdt_store_code_put(s, "k1", "code\0object", 11), 0);

    for (int writer_open = 1; writer_open >= 0; writer_open--) {
        fdt_store *ro = fdt_store_open_readonly(path, err, sizeof err);
        if (!ro)
            fail_msg("read-only open: %s", err);
        fdt_code code;
        assert_int_equal(fdt_store_code_get(ro, "k1", &code), 1);
        assert_memory_equal(code.data, "code\0object", 11);
        fdt_code_free(&code);
        fdt_job *jobs;
        size_t n;
        assert_int_equal(fdt_store_jobs(ro, -1, 10, &jobs, &n), 0);
        assert_int_equal(n, 1);
        free(jobs);
        assert_writes_fail(ro);
        fdt_store_close(ro);
        if (writer_open)
            fdt_store_close(s);
    }
    s = open_store(state);
    int counts[5];
    assert_int_equal(fdt_store_job_counts(s, counts), 0);
    assert_int_equal(counts[FDT_JOB_QUEUED], 1);
    fdt_store_close(s);
}

/* A reader in another process that lets go only after the close has begun (a worker killed
 * a moment before its daemon stops in a hurry) still finds the WAL checkpointed and empty:
 * the close waits for it. The reader, forked before this process opens the store so that
 * they share no SQLite state, holds a read transaction on the WAL's frames, says so, and
 * exits 300 ms later without closing, as a killed process does. */
static void test_close_empties_the_wal_past_a_reader(void **state)
{
    const char *path = ((fixture *)*state)->path;
    int go[2], reading[2];
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(reading), 0);
    const pid_t reader = fork();
    assert_true(reader >= 0);
    if (reader == 0) {
        char c;
        sqlite3 *db;
        close(go[1]);
        close(reading[0]);
        const int ok =
            read(go[0], &c, 1) == 1 &&
            sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
            sqlite3_exec(db, "BEGIN; SELECT count(*) FROM jobs", NULL, NULL, NULL) == SQLITE_OK &&
            write(reading[1], "r", 1) == 1;
        usleep(300 * 1000);
        _exit(ok ? 0 : 1);
    }
    close(go[0]); /* a reader that dies before saying so ends the read below with 0 */
    close(reading[1]);
    int64_t device_id;
    fdt_job job;
    fdt_store *s = store_with_job(state, &device_id, &job);
    char wal[128], c;
    snprintf(wal, sizeof wal, "%s-wal", path);
    struct stat st;
    assert_int_equal(stat(wal, &st), 0);
    assert_true(st.st_size > 0); /* the job is in the WAL's frames */
    assert_int_equal(write(go[1], "g", 1), 1);
    assert_int_equal(read(reading[0], &c, 1), 1);
    fdt_store_close(s);
    int status;
    assert_int_equal(waitpid(reader, &status, 0), reader);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(go[1]);
    close(reading[0]);
    if (stat(wal, &st) == 0 && st.st_size != 0)
        fail_msg("the close left %lld bytes in %s", (long long)st.st_size, wal);
    expect_sql(path, "SELECT count(*) FROM jobs", "1");
}

static void test_strings_are_stored_verbatim(void **state)
{
    static const char nasty[] = "it's \"quoted\"; DROP TABLE jobs; -- ' OR 1=1";
    int64_t device_id;
    fdt_job job;
    fdt_store *s = store_with_job(state, &device_id, &job);
    job.state = FDT_JOB_FAILED;
    strcpy(job.error, nasty);
    strcpy(job.best_variant, "x'); DELETE FROM results;");
    assert_int_equal(fdt_store_job_update(s, &job), 0);

    fdt_result_row r = result_of(job.id, "a';--", "error", NAN);
    strcpy(r.message, nasty);
    assert_int_equal(fdt_store_result_add(s, device_id, &job.key, nasty, &r), 0);
    assert_int_equal(fdt_store_code_put(s, nasty, nasty, sizeof nasty), 0);

    fdt_job got;
    assert_int_equal(fdt_store_job_get(s, job.id, &got), 1);
    assert_string_equal(got.error, nasty);
    assert_string_equal(got.best_variant, "x'); DELETE FROM results;");
    fdt_result_row *rows;
    size_t n;
    assert_int_equal(fdt_store_job_results(s, job.id, &rows, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(rows[0].variant, "a';--");
    assert_string_equal(rows[0].message, nasty);
    free(rows);
    fdt_code code;
    assert_int_equal(fdt_store_code_get(s, nasty, &code), 1);
    assert_string_equal(code.data, nasty);
    fdt_code_free(&code);
    fdt_store_close(s);
}

static void test_fingerprint(void **state)
{
    (void)state;
    char base[20], other[20];
    fdt_device_fingerprint(&h100, base);
    /* Pinned: stored results are keyed by it, so it must not change between builds (a
     * change of hash is adopted, test_device_adopted_from_an_older_fingerprint). The value
     * is XXH3 64 over length-prefixed fields, computed independently (xxhsum -H3). */
    assert_string_equal(base, "4bff275f192d9bfb");
    fdt_device_fingerprint(&h100, other);
    assert_string_equal(other, base);

    fdt_device_info d[9];
    for (int i = 0; i < 9; i++)
        d[i] = h100;
    strcpy(d[0].backend, "hip");
    strcpy(d[1].vendor, "AMD");
    strcpy(d[2].name, "NVIDIA H100 PCIe");
    strcpy(d[3].arch, "sm_89");
    d[4].compute_units = 114;
    d[5].memory_bytes += 1;
    strcpy(d[6].driver_version, "12.8");
    strcpy(d[7].compiler_version, "NVRTC 12.8");
    strcpy(d[8].vendor, "NVIDIAN"); /* with the name's first letter moved into the vendor */
    strcpy(d[8].name, "VIDIA H100 80GB HBM3");
    for (int i = 0; i < 9; i++) {
        fdt_device_fingerprint(&d[i], other);
        if (strcmp(other, base) == 0)
            fail_msg("changing field %d left the fingerprint %s", i, base);
    }

    fdt_device_info same = h100;
    same.l2_bytes = 1;
    same.warp_size = 64;
    fdt_device_fingerprint(&same, other);
    assert_string_equal(other, base);
}

static void test_code_key(void **state)
{
    (void)state;
    const char *defines[] = {"R=1", "BX=64"};
    const char *joined[] = {"R=1BX=64"};
    const char *moved[] = {"R=1B", "X=64"};
    const char *changed[] = {"R=2", "BX=64"};
    char base[33], other[33];
    fdt_code_key("__global__ void k() {}", defines, 2, "sm_90", "NVRTC 13.0", base);
    assert_string_equal(base, "0ccb4d0389cfd073e0c9725f27e295bc"); /* xxhsum -H2 */

    char keys[7][33];
    fdt_code_key("__global__ void k() { }", defines, 2, "sm_90", "NVRTC 13.0", keys[0]);
    fdt_code_key("__global__ void k() {}", changed, 2, "sm_90", "NVRTC 13.0", keys[1]);
    fdt_code_key("__global__ void k() {}", defines, 1, "sm_90", "NVRTC 13.0", keys[2]);
    fdt_code_key("__global__ void k() {}", joined, 1, "sm_90", "NVRTC 13.0", keys[3]);
    fdt_code_key("__global__ void k() {}", moved, 2, "sm_90", "NVRTC 13.0", keys[4]);
    fdt_code_key("__global__ void k() {}", defines, 2, "sm_80", "NVRTC 13.0", keys[5]);
    fdt_code_key("__global__ void k() {}", defines, 2, "sm_90", "NVRTC 12.8", keys[6]);
    for (int i = 0; i < 7; i++) {
        if (strcmp(keys[i], base) == 0)
            fail_msg("input %d left the key %s", i, base);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(keys[i], keys[j]);
    }
    fdt_code_key("__global__ void k() {}", defines, 2, "sm_90", "NVRTC 13.0", other);
    assert_string_equal(other, base);
}

/* The checksum and the source hash, pinned as the fingerprint is: XXH3 64 of the bytes, and
 * XXH3 128 of the text as one field (its length, 8 bytes little-endian, then its bytes),
 * computed independently (xxhsum -H3, -H2). */
static void test_checksum_and_source_hash(void **state)
{
    (void)state;
    char hash[33];
    assert_int_equal(fdt_hash_bytes("abc", 3), 0x78af5f94892f3950u);
    fdt_source_hash("abc", hash);
    assert_string_equal(hash, "45bcdc88efffd44520b986a5e7fe1438");
}

static void test_kernels_version(void **state)
{
    (void)state;
    const char *v = fdt_kernels_version();
    assert_int_equal(strlen(v), 16);
    assert_int_equal(strspn(v, "0123456789abcdef"), 16);
    assert_ptr_equal(fdt_kernels_version(), v);
    assert_string_not_equal(v, "2d06800538d394c2"); /* the hash of nothing */
}

/* A batch's share done weighs its jobs by what their done ones cost per grid point: two
 * done jobs of 1e6 and 2e6 points took 3 s and 5 s (1 s + 2 us a point), so the two left,
 * of 8e6 points each, are 34 of the 42 seconds the batch costs in all; a running one has
 * done its wall time so far, at most 95% of its 17 s. One done job shows no cost per
 * point: every job weighs alike. */
static void test_batch_share_weighs_jobs_by_their_cost(void **state)
{
    (void)state;
    fdt_batch_progress b = {.jobs = 4, .ended = 2, .points = 19e6, .ended_points = 3e6,
                            .fit_n = 2, .fit_p = 3e6, .fit_w = 8, .fit_pp = 5e12,
                            .fit_pw = 13e6};
    assert_float_equal(fdt_batch_share(&b), 8.0 / 42.0, 1e-9);
    b.running = 1;
    b.running_part = 0.01; /* a guided search measures a sliver of its space */
    b.running_points = 8e6;
    b.running_wall = 8.5;
    assert_float_equal(fdt_batch_share(&b), (8.0 + 8.5) / 42.0, 1e-9);
    b.running_wall = 30; /* slower than its like: not done before it ends */
    assert_float_equal(fdt_batch_share(&b), (8.0 + 0.95 * 17.0) / 42.0, 1e-9);
    const fdt_batch_progress one = {.jobs = 4, .ended = 1, .points = 19e6, .ended_points = 1e6,
                                    .fit_n = 1, .fit_p = 1e6, .fit_w = 3, .fit_pp = 1e12,
                                    .fit_pw = 3e6};
    assert_float_equal(fdt_batch_share(&one), 0.25, 1e-9);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        TEST(test_create_and_reopen),
        TEST(test_migrates_version_1),
        TEST(test_migrates_version_3),
        TEST(test_migrates_version_4),
        TEST(test_migration_refuses_broken_references),
        TEST(test_one_writer_per_store),
        TEST(test_lock_file_is_never_followed),
        TEST(test_store_files_are_private),
        TEST(test_refuses_newer_schema),
        TEST(test_refuses_unknown_schema),
        TEST(test_refuses_damaged_file),
        TEST(test_refuses_what_is_not_a_store),
        TEST(test_devices_round_trip),
        TEST(test_device_balance),
        TEST(test_job_lifecycle),
        TEST(test_job_queue_spreads_over_devices),
        TEST(test_results),
        TEST(test_best),
        TEST(test_best_keeps_each_layout),
        TEST(test_best_due),
        TEST(test_best_under_auto_keeps_its_state),
        TEST(test_device_adopted_from_an_older_fingerprint),
        TEST(test_stencil_renamed_in_every_row),
        TEST(test_code_cache),
        TEST(test_readonly),
        TEST(test_close_empties_the_wal_past_a_reader),
        TEST(test_strings_are_stored_verbatim),
        cmocka_unit_test(test_fingerprint),
        cmocka_unit_test(test_code_key),
        cmocka_unit_test(test_checksum_and_source_hash),
        cmocka_unit_test(test_batch_share_weighs_jobs_by_their_cost),
        cmocka_unit_test(test_kernels_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
