/* store_results.c - the results and best tables: every measured variant as it lands, the
 * names a job resumes and re-measures by, and the best configuration per device and problem. */
#include "store_int.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
    if (stmt_start(s, ST_RESULT_ADD, &b) != 0)
        return -1;
    bind_result(&b, r);
    bind_int(&b, device_id);
    bind_key(&b, key);
    bind_text(&b, kernels, SIZE_MAX);
    bind_int(&b, store_now());
    if (stmt_run(s, &b) != 0)
        return -1;
    if (sqlite3_changes(s->db) == 0) {
        store_fail(s, "job %" PRId64 " already has a first-pass result for %.*s; kept the first",
                   r->job_id, (int)sizeof r->variant, r->variant);
        return 1;
    }
    return 0;
}

int fdt_store_result_import(fdt_store *s, int64_t device_id, const fdt_key *key,
                            const fdt_result_row *r)
{
    binder b;
    if (stmt_start(s, ST_RESULT_IMPORT, &b) != 0)
        return -1;
    bind_result(&b, r);
    bind_int(&b, device_id);
    bind_key(&b, key);
    bind_text(&b, r->kernels, sizeof r->kernels);
    bind_int(&b, r->measured);
    if (stmt_run(s, &b) != 0)
        return -1;
    return sqlite3_changes(s->db) > 0;
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
    if (stmt_fetch_all(s, b, sizeof **names, read_name, release_names, &rows, count) != 0)
        return -1;
    *names = rows;
    return 0;
}

int fdt_store_job_leaders(fdt_store *s, int64_t job_id, size_t n, char ***names,
                          size_t *count)
{
    binder b;
    if (stmt_start(s, ST_JOB_LEADERS, &b) != 0)
        return -1;
    bind_int(&b, job_id);
    bind_limit(&b, n);
    return fetch_names(s, &b, names, count);
}

int fdt_store_job_results(fdt_store *s, int64_t job_id, fdt_result_row **out, size_t *count)
{
    binder b;
    void *rows;
    if (stmt_start(s, ST_JOB_RESULTS, &b) != 0)
        return -1;
    bind_int(&b, job_id);
    if (stmt_fetch_all(s, &b, sizeof **out, read_result, NULL, &rows, count) != 0)
        return -1;
    *out = rows;
    return 0;
}

int fdt_store_results_page(fdt_store *s, int64_t after, size_t limit, fdt_result_fn row,
                           void *ctx)
{
    binder b;
    int rc;
    if (stmt_start(s, ST_RESULTS_PAGE, &b) != 0)
        return -1;
    bind_int(&b, after);
    bind_limit(&b, limit);
    while ((rc = stmt_step(&b)) == SQLITE_ROW) {
        reader c = {b.st, 0};
        fdt_result_row r;
        fdt_key key;
        const int64_t id = col_int(&c);
        col_result(&c, &r);
        const int64_t device_id = col_int(&c);
        if (col_key(s, &c, &key) != 0) {
            rc = REPORTED;
            break;
        }
        col_text(&c, r.kernels, sizeof r.kernels);
        r.measured = col_int(&c);
        if (row(ctx, id, device_id, &key, &r) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    }
    return stmt_finish(s, b.st, rc);
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
    best->interior_copy_gbps = col_real(&r);
    best->kernel1_gbps = col_real(&r);
    col_text(&r, best->kernels, sizeof best->kernels);
    best->job_id = col_int(&r);
    best->updated = col_int(&r);
    char state[16];
    col_text(&r, state, sizeof state);
    if (fdt_cache_mode_parse(state, &best->state) != 0)
        return store_fail(s, "a best row has an unknown state '%s'", state);
    col_text(&r, best->doubt, sizeof best->doubt);
    best->remeasure_after = col_int(&r);
    return 0;
}

/* The state a row was timed in: its key's cache, but for auto, the one chosen. */
static fdt_cache_mode best_state(const fdt_best *best)
{
    const fdt_cache_mode key = best->key.problem.cache;
    return key == FDT_CACHE_AUTO ? best->state : key;
}

/* A row not tied to a job (job_id 0) stores NULL, which the foreign key allows. The
 * table's CHECK refuses a state of auto. */
int fdt_store_best_put(fdt_store *s, const fdt_best *best)
{
    binder b;
    if (stmt_start(s, ST_BEST_PUT, &b) != 0)
        return -1;
    bind_int(&b, best->device_id);
    bind_key(&b, &best->key);
    bind_text(&b, best->variant, sizeof best->variant);
    bind_real(&b, best->gbps);
    bind_real(&b, best->median_ms);
    bind_real(&b, best->copy_gbps);
    bind_real(&b, best->interior_copy_gbps);
    bind_real(&b, best->kernel1_gbps);
    bind_text(&b, best->kernels, sizeof best->kernels);
    if (best->job_id)
        bind_int(&b, best->job_id);
    else
        bind_null(&b);
    bind_int(&b, best->updated ? best->updated : store_now());
    bind_text(&b, fdt_cache_mode_name(best_state(best)), SIZE_MAX);
    bind_text(&b, best->doubt, sizeof best->doubt);
    bind_int(&b, best->remeasure_after);
    return stmt_run(s, &b);
}

int fdt_store_best_get(fdt_store *s, int64_t device_id, const fdt_key *key, fdt_best *out)
{
    binder b;
    if (stmt_start(s, ST_BEST_GET, &b) != 0)
        return -1;
    bind_int(&b, device_id);
    bind_key(&b, key);
    return stmt_fetch_one(s, &b, read_best, out);
}

int fdt_store_best_due(fdt_store *s, int64_t device_id, int64_t now, fdt_best *out)
{
    binder b;
    if (stmt_start(s, ST_BEST_DUE, &b) != 0)
        return -1;
    bind_int(&b, device_id);
    bind_int(&b, now);
    return stmt_fetch_one(s, &b, read_best, out);
}

int fdt_store_best_defer(fdt_store *s, int64_t device_id, int64_t job_id, int64_t when)
{
    binder b;
    if (stmt_start(s, ST_BEST_DEFER, &b) != 0)
        return -1;
    bind_int(&b, when);
    bind_int(&b, device_id);
    bind_int(&b, job_id);
    return stmt_run(s, &b);
}

int fdt_store_best_all(fdt_store *s, fdt_best **out, size_t *count)
{
    binder b;
    void *rows;
    if (stmt_start(s, ST_BEST_ALL, &b) != 0 ||
        stmt_fetch_all(s, &b, sizeof **out, read_best, NULL, &rows, count) != 0)
        return -1;
    *out = rows;
    return 0;
}

int fdt_store_best_page(fdt_store *s, const fdt_best *after, size_t limit, fdt_best **out,
                        size_t *count)
{
    binder b;
    void *rows;
    if (stmt_start(s, ST_BEST_PAGE, &b) != 0)
        return -1;
    if (after) {
        bind_int(&b, after->device_id);
        bind_key(&b, &after->key);
    } else {
        /* Below every row: device ids start at 1, and the rest of the key is not compared. */
        const fdt_key none = {0};
        bind_int(&b, 0);
        bind_key(&b, &none);
    }
    bind_limit(&b, limit);
    if (stmt_fetch_all(s, &b, sizeof **out, read_best, NULL, &rows, count) != 0)
        return -1;
    *out = rows;
    return 0;
}

static int read_job_rows(fdt_store *s, sqlite3_stmt *st, void *out)
{
    (void)s;
    int64_t *job_rows = out;
    job_rows[0] = sqlite3_column_int64(st, 0);
    job_rows[1] = sqlite3_column_int64(st, 1);
    return 0;
}

int fdt_store_fullest_job(fdt_store *s, int64_t device_id, const fdt_key *key,
                          int64_t *job_id, int64_t *rows)
{
    binder b;
    int64_t job_rows[2];
    if (stmt_start(s, ST_FULLEST_JOB, &b) != 0)
        return -1;
    bind_int(&b, device_id);
    bind_key(&b, key);
    const int found = stmt_fetch_one(s, &b, read_job_rows, job_rows);
    if (found == 1) {
        *job_id = job_rows[0];
        *rows = job_rows[1];
    }
    return found;
}
