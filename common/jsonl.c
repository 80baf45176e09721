/* jsonl.c - line framing over a growing buffer; see jsonl.h. */
#include "jsonl.h"

#include <stdlib.h>
#include <string.h>

void fdt_jsonl_init(fdt_jsonl *j, size_t max)
{
    memset(j, 0, sizeof *j);
    j->max = max;
}

void fdt_jsonl_free(fdt_jsonl *j)
{
    free(j->buf);
    j->buf = NULL;
    j->len = j->cap = 0;
}

size_t fdt_jsonl_pending(const fdt_jsonl *j)
{
    return j->len;
}

static int reserve(fdt_jsonl *j, size_t need)
{
    if (need <= j->cap)
        return 0;
    size_t cap = j->cap ? j->cap : 4096;
    while (cap < need)
        cap *= 2;
    char *buf = realloc(j->buf, cap);
    if (!buf)
        return -1;
    j->buf = buf;
    j->cap = cap;
    return 0;
}

/* Every line is gathered in the buffer, even one that arrived whole: one copy of a short
 * line costs less than the code that would avoid it. */
int fdt_jsonl_feed(fdt_jsonl *j, const char *data, size_t n, fdt_jsonl_line_fn fn, void *ctx)
{
    if (j->too_long)
        return -1;
    while (n > 0) {
        const char *nl = memchr(data, '\n', n);
        const size_t take = nl ? (size_t)(nl - data) : n;
        if (j->len + take > j->max) {
            j->too_long = 1;
            j->len = 0;
            return -1;
        }
        if (reserve(j, j->len + take + 1) < 0)
            return -2;
        memcpy(j->buf + j->len, data, take);
        j->len += take;
        if (!nl)
            return 0;
        size_t len = j->len;
        if (len > 0 && j->buf[len - 1] == '\r')
            len--;
        j->buf[len] = '\0';
        j->len = 0;
        if (fn(ctx, j->buf, len))
            return 1;
        data += take + 1;
        n -= take + 1;
    }
    return 0;
}
