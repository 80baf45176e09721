/* module_cache.h - libfdtune's disk cache of compiled modules, shared by every process of
 * a node: a solver started on 1000 ranks compiles each module once, the others wait for it
 * and read the file. Internal to libfdtune (hidden from libfdtune.so's symbols). */
#ifndef FDT_MODULE_CACHE_H
#define FDT_MODULE_CACHE_H

#include <stddef.h>

#include "backends/backend.h"

#define FDT_HIDDEN __attribute__((visibility("hidden")))

typedef struct fdt_module_cache {
    char dir[4096]; /* "" when there is no cache: every module is compiled */
    /* What the caller should pass on, "" if nothing: why a cache that was asked for is not
     * used, or the last file in it that was refused and why. */
    char note[4096 + 256];
} fdt_module_cache;

/* Resolves the directory: explicit (NULL: fdt_default_cache_dir; "": none), creating it
 * 0700 where missing. A directory that
 * another user owns or others may write is refused: its modules could be anyone's code. */
FDT_HIDDEN void fdt_module_cache_open(fdt_module_cache *c, const char *explicit_dir);

/* What makes a module: the caller's bytes and how to compile them when the cache lacks
 * them. fetch_source is called only on a miss, so a cached module needs no source. */
typedef struct fdt_module_recipe {
    const char *key;  /* fdt_code_key of source hash, defines, arch, entry and compiler */
    fdt_status (*compile)(void *ctx, fdt_code *out, fdt_error *err);
    void *ctx;
} fdt_module_recipe;

/* The module for r: from the cache, or compiled once per node while other processes
 * asking for the same key wait on its lock, then stored. *hit says which. A file in the
 * module's place that is not a whole module this user wrote (a FIFO, a link, another
 * user's file, one others may write, a damaged one) is never waited on or loaded: it is
 * removed, the module compiled into its place, and c->note says so. */
FDT_HIDDEN fdt_status fdt_module_cache_get(fdt_module_cache *c, const fdt_module_recipe *r,
                                           fdt_code *out, int *hit, fdt_error *err);

/* Removes key's module, one the device refused to load, so that it is compiled again. */
FDT_HIDDEN void fdt_module_cache_drop(const fdt_module_cache *c, const char *key);

#endif
