/* store_code.c - the code cache table: compiled code objects by their code key
 * (common/hashes.h); a worker reads them, the daemon writes them. */
#include "store_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int fdt_store_code_get(fdt_store *s, const char *key, fdt_code *code)
{
    binder b;
    if (stmt_start(s, ST_CODE_GET, &b) != 0)
        return -1;
    bind_text(&b, key, SIZE_MAX);
    int rc = stmt_step(&b);
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
    return stmt_finish(s, b.st, rc) == 0 ? found : -1;
}

/* Replaces a row already under key: a worker sends a fresh object for cached code that did
 * not load (stored damaged), and the fresh one must heal the row, not leave it. */
int fdt_store_code_put(fdt_store *s, const char *key, const void *data, size_t size)
{
    binder b;
    if (stmt_start(s, ST_CODE_PUT, &b) != 0)
        return -1;
    bind_text(&b, key, SIZE_MAX);
    bind_blob(&b, data, size);
    bind_int(&b, store_now());
    return stmt_run(s, &b);
}
