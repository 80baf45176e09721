/* jsonl.h - splits a byte stream into lines, for the socket clients and the worker pipes.
 *
 * A line longer than the framer's limit is never buffered whole: the framer reports it once
 * and the caller decides (the server answers line_too_long and closes the connection). */
#ifndef FDT_JSONL_H
#define FDT_JSONL_H

#include <stddef.h>

/* Called with each complete line, without its newline and NUL-terminated (line[len] == 0);
 * the line may be modified. Return nonzero to stop feeding (the owner is closing). */
typedef int (*fdt_jsonl_line_fn)(void *ctx, char *line, size_t len);

typedef struct fdt_jsonl {
    char *buf;
    size_t len, cap;
    size_t max;     /* longest line accepted */
    int too_long;   /* a line passed max: everything after is refused */
} fdt_jsonl;

void fdt_jsonl_init(fdt_jsonl *j, size_t max);
void fdt_jsonl_free(fdt_jsonl *j);

/* Appends data and hands every complete line to fn. Returns 0; 1 when fn asked to stop;
 * -1 when a line is longer than max (j->too_long stays set); -2 when out of memory. */
int fdt_jsonl_feed(fdt_jsonl *j, const char *data, size_t n, fdt_jsonl_line_fn fn, void *ctx);

/* Bytes of a line begun but not ended (a client that disconnects mid-line). */
size_t fdt_jsonl_pending(const fdt_jsonl *j);

#endif
