/* hashes.h - the hashes that tell results and code objects apart: a device's fingerprint,
 * a compile's code key and the kernel sources' version. The engine computes them (the
 * session asks its code cache by code key); the store keys its rows by them. */
#ifndef FDT_HASHES_H
#define FDT_HASHES_H

#include <stddef.h>
#include <stdint.h>

#include "backends/backend.h"

/* The fingerprint of a device: stable over runs, different when any field differs. */
void fdt_device_fingerprint(const fdt_device_info *d, char out[20]);

/* The code cache's key of one compile: a hash of the source, the defines, the arch and the
 * compiler version, as 32 hex digits. */
void fdt_code_key(const char *source, const char *const *defines, size_t ndefines,
                  const char *arch, const char *compiler_version, char out[33]);

/* A kernel source's identity, as the daemon's answers name it and its "source" operation
 * looks it up: a hash of the text, as 32 hex digits. */
void fdt_source_hash(const char *text, char out[33]);

/* The hash of a source built into the program (fdt_family_source, fdt_persist_source: that
 * very pointer), or NULL for any other text. */
const char *fdt_built_in_hash(const char *text);
/* The built-in source whose hash is hash (the "source" operation's answer), or NULL. */
const char *fdt_built_in_source(const char *hash);

/* A checksum of n bytes (FNV-1a, 64 bits): catches damage, not tampering. */
uint64_t fdt_hash_bytes(const void *data, size_t n);

/* The kernel sources' version: a hash over every family's source, as 16 hex digits. */
const char *fdt_kernels_version(void);

#endif
