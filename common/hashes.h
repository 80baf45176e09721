/* hashes.h - the hashes that tell results and code objects apart: a device's fingerprint, a
 * compile's code key, a source's identity, a checksum, and the hasher they are made with
 * (for the engine's own: the kernel sources' version). The engine computes them (the
 * session asks its code cache by code key); the store keys its rows by them. */
#ifndef FDT_HASHES_H
#define FDT_HASHES_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"

/* XXH3 (xxHash), 64 or 128 bits. Every field is hashed as its length (8 bytes,
 * little-endian) and then its bytes, so that fields cannot run into each other:
 * ("ab", "c") != ("a", "bc"). The state is xxHash's streaming state, held here as bytes so
 * that xxhash.h is included by hashes.c alone, which checks that it fits. */
typedef struct fdt_hasher {
    unsigned char state[576]; /* sizeof (XXH3_state_t) in xxHash 0.8 */
    int wide;
} fdt_hasher;

fdt_hasher fdt_hasher_start64(void);
fdt_hasher fdt_hasher_start128(void);
/* One field: text up to cap bytes (SIZE_MAX: to its end), or an integer. */
void fdt_hasher_text(fdt_hasher *h, const char *text, size_t cap);
void fdt_hasher_int(fdt_hasher *h, int64_t v);
/* The hash as 16 hex digits (64 bits) or 32 (128), NUL-terminated. */
void fdt_hasher_hex(const fdt_hasher *h, char *out);

/* The fingerprint of a device: stable over runs, different when any field differs. */
void fdt_device_fingerprint(const fdt_device_info *d, char out[20]);

/* The code cache's key of one compile: a hash of the source, the defines, the arch and the
 * compiler version, as 32 hex digits. */
void fdt_code_key(const char *source, const char *const *defines, size_t ndefines,
                  const char *arch, const char *compiler_version, char out[33]);

/* A kernel source's identity, as the daemon's answers name it and its "source" operation
 * looks it up: a hash of the text, as 32 hex digits. */
void fdt_source_hash(const char *text, char out[33]);

/* A checksum of n bytes (XXH3, 64 bits): catches damage, not tampering. */
uint64_t fdt_hash_bytes(const void *data, size_t n);

#endif
