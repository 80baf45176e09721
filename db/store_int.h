/* store_int.h - what the store's files share, seen by no code outside db/: the handle, the
 * statements by number, and the helpers that bind parameters, read columns and run a
 * statement. store.c holds every statement's text, in one table, because all of them are
 * prepared at open (a read-only store only the reads); store_devices.c, store_jobs.c,
 * store_results.c and store_code.c bind and read the rows of their tables in the order of
 * the column lists there. */
#ifndef FDT_STORE_INT_H
#define FDT_STORE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "store.h"

/* Reads come first: a read-only store prepares only those. */
enum {
    ST_DEVICES,
    ST_JOB_GET,
    ST_JOB_FIND_ACTIVE,
    ST_JOB_NEXT,
    ST_JOBS,
    ST_JOB_COUNTS,
    ST_BATCHES_ACTIVE,
    ST_JOB_LEADERS,
    ST_JOB_RESULTS,
    ST_FULLEST_JOB,
    ST_RESULTS_PAGE,
    ST_BEST_ALL,
    ST_BEST_PAGE,
    ST_BEST_DUE,
    ST_BEST_GET,
    ST_JOB_OF_ORIGIN,
    ST_CODE_GET,
    ST_STENCILS,
    ST_FIRST_WRITE,
    ST_DEVICE_UPSERT = ST_FIRST_WRITE,
    ST_DEVICE_ADOPTABLE, /* a read, but only ever before a write: a read-only store lacks it */
    ST_DEVICE_ADOPT,
    ST_JOBS_ADOPT,
    ST_DEVICE_BALANCE_PUT,
    ST_JOB_CREATE,
    ST_JOB_UPDATE,
    ST_JOBS_REQUEUE,
    ST_RESULT_ADD,
    ST_RESULT_IMPORT,
    ST_BEST_PUT,
    ST_BEST_DEFER,
    ST_CODE_PUT,
    ST_STENCIL_PUT,
    ST_STENCIL_RENAME,
    ST_STENCIL_RENAME_JOBS,
    ST_STENCIL_RENAME_RESULTS,
    ST_STENCIL_RENAME_BEST_OLDER,
    ST_STENCIL_RENAME_BEST,
    ST_COUNT
};

struct fdt_store {
    sqlite3 *db;
    int readonly;
    int lock_fd;              /* the store file itself, open for its flock (one daemon per store); -1: none */
    sqlite3_stmt *st[ST_COUNT]; /* NULL for the writes of a read-only store */
    char err[512];
    char id[40];              /* the store's identity (db/migrate_12.sql) */
};

/* A step result meaning "failed, and s->err says why already"; SQLite's codes are >= 0. */
#define REPORTED (-1)

/* Sets the message fdt_store_error returns; -1, for returning. */
int store_fail(fdt_store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int64_t store_now(void);

/* ---- binding parameters and reading columns, in the order of the column lists ---- */

typedef struct binder {
    sqlite3_stmt *st;
    int next; /* the last parameter bound */
    int rc;   /* the first failure */
} binder;

void bind_int(binder *b, int64_t v);
/* NaN is stored as NULL (SQLite has no NaN) and read back as NaN. */
void bind_real(binder *b, double v);
void bind_null(binder *b);
/* Text of at most cap bytes (the size of a struct's field, which may lack its NUL); NULL
 * binds NULL. The text must live until the statement is reset. */
void bind_text(binder *b, const char *text, size_t cap);
void bind_blob(binder *b, const void *data, size_t size);
/* A count for LIMIT, which SQLite takes as a signed 64-bit value. */
void bind_limit(binder *b, size_t n);
void bind_key(binder *b, const fdt_key *k);

typedef struct reader {
    sqlite3_stmt *st;
    int next;
} reader;

int64_t col_int(reader *r);
double col_real(reader *r);
void col_text(reader *r, char *dst, size_t cap);
/* 0, or -1 with the reason in s->err when the row holds a name this build does not know. */
int col_key(fdt_store *s, reader *r, fdt_key *k);

/* ---- running statements ---- */

/* Begins a use of a prepared statement; a write on a read-only store fails here. */
int stmt_start(fdt_store *s, int which, binder *b);
int stmt_step(binder *b);
/* Ends a use: 0 when the last step was SQLITE_DONE, else -1 with the reason in s->err.
 * Bindings are cleared so that no pointer into the caller's memory outlives the call. */
int stmt_finish(fdt_store *s, sqlite3_stmt *st, int rc);
/* Steps once and ends the use: for statements that return no rows. */
int stmt_run(fdt_store *s, binder *b);

typedef int (*row_reader)(fdt_store *s, sqlite3_stmt *st, void *out);

/* The first row, if any, into out: 1, 0 or -1. */
int stmt_fetch_one(fdt_store *s, binder *b, row_reader read, void *out);
/* Every row into a malloc'd array of items of size bytes. On failure release (when given)
 * frees what the rows read so far own, and the array. */
int stmt_fetch_all(fdt_store *s, binder *b, size_t size, row_reader read,
                   void (*release)(void *items, size_t n), void **out, size_t *count);

#endif
