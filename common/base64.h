/* base64.h - base64 (RFC 4648, standard alphabet, padded), so that compiled code objects
 * travel inside JSON lines from fdtune-worker to the daemon's code cache. */
#ifndef FDT_BASE64_H
#define FDT_BASE64_H

#include <stddef.h>

/* The text of size bytes of data, NUL-terminated and malloc'd; NULL when out of memory. */
char *fdt_base64_encode(const void *data, size_t size);

/* Decodes len characters of text into *out (malloc'd, *size bytes). Only the canonical
 * encoding is accepted: a length that is a multiple of 4, the alphabet, padding only at
 * the end, unused bits zero. 0, -1 for bad input, -2 when out of memory. */
int fdt_base64_decode(const char *text, size_t len, void **out, size_t *size);

#endif
