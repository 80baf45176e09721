/* store_stencils.c - the stencils table: users' stencil specs by the name their problems
 * carry, written when a job is queued for one, read back when the daemon starts, and
 * renamed in every row when a build names a spec otherwise. */
#include "store_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int fdt_store_stencil_put(fdt_store *s, const char *name, const char *spec)
{
    binder b;
    if (stmt_start(s, ST_STENCIL_PUT, &b) != 0)
        return -1;
    bind_text(&b, name, SIZE_MAX);
    bind_text(&b, spec, SIZE_MAX);
    bind_int(&b, store_now());
    return stmt_run(s, &b);
}

typedef struct stencil_row {
    char *name, *spec;
} stencil_row;

static int read_stencil(fdt_store *s, sqlite3_stmt *st, void *out)
{
    stencil_row *row = out;
    const char *name = (const char *)sqlite3_column_text(st, 0);
    const char *spec = (const char *)sqlite3_column_text(st, 1);
    row->name = name ? strdup(name) : NULL;
    row->spec = spec ? strdup(spec) : NULL;
    if (row->name && row->spec)
        return 0;
    free(row->name);
    free(row->spec);
    return store_fail(s, "out of memory");
}

static void free_stencils(void *items, size_t n)
{
    stencil_row *rows = items;
    for (size_t i = 0; i < n; i++) {
        free(rows[i].name);
        free(rows[i].spec);
    }
    free(rows);
}

/* Every row is read before fn sees the first, so that fn may write to the store (rename a
 * stencil) with no statement of the table still reading it. */
int fdt_store_stencils_each(fdt_store *s, int (*fn)(void *ctx, const char *name,
                                                    const char *spec), void *ctx)
{
    binder b;
    void *items;
    size_t n;
    if (stmt_start(s, ST_STENCILS, &b) != 0 ||
        stmt_fetch_all(s, &b, sizeof(stencil_row), read_stencil, free_stencils, &items, &n) != 0)
        return -1;
    const stencil_row *rows = items;
    for (size_t i = 0; i < n && fn(ctx, rows[i].name, rows[i].spec) == 0; i++)
        ;
    free_stencils(items, n);
    return 0;
}

static int rename_in(fdt_store *s, int which, const char *from, const char *to)
{
    binder b;
    if (stmt_start(s, which, &b) != 0)
        return -1;
    bind_text(&b, from, SIZE_MAX);
    bind_text(&b, to, SIZE_MAX);
    return stmt_run(s, &b);
}

/* A stencil's name is its spec's pattern hash (tuner/engine/stencil.c): a build whose hash
 * differs (FNV-1a became XXH3) names a stored spec otherwise, and every row that carries the
 * name must follow it, or the spec's jobs, results and answers are left under a name that
 * nothing asks for. All of them in one transaction: a stencil is never half renamed. */
int fdt_store_stencil_rename(fdt_store *s, const char *from, const char *to)
{
    static const int tables[] = {ST_STENCIL_RENAME, ST_STENCIL_RENAME_JOBS,
                                 ST_STENCIL_RENAME_RESULTS, ST_STENCIL_RENAME_BEST_OLDER,
                                 ST_STENCIL_RENAME_BEST};
    if (fdt_store_begin(s) != 0)
        return -1;
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        if (rename_in(s, tables[i], from, to) != 0) {
            fdt_store_rollback(s);
            return -1;
        }
    return fdt_store_commit(s);
}
