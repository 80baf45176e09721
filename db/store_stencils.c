/* store_stencils.c - the stencils table: users' stencil specs by the name their problems
 * carry, written when a job is queued for one, read back when the daemon starts. */
#include "store_int.h"

#include <stdint.h>

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

int fdt_store_stencils_each(fdt_store *s, int (*fn)(void *ctx, const char *name,
                                                    const char *spec), void *ctx)
{
    binder b;
    if (stmt_start(s, ST_STENCILS, &b) != 0)
        return -1;
    int rc;
    while ((rc = stmt_step(&b)) == SQLITE_ROW &&
           fn(ctx, (const char *)sqlite3_column_text(b.st, 0),
              (const char *)sqlite3_column_text(b.st, 1)) == 0)
        ;
    return stmt_finish(s, b.st, rc == SQLITE_ROW ? SQLITE_DONE : rc);
}
