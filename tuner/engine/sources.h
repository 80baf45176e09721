/* sources.h - the kernel sources built into the program, by their hashes: every answer names
 * one, the daemon's "source" operation looks one up, libfdtune checks what it is served
 * against them; and the version of them all that every stored result carries. */
#ifndef FDT_SOURCES_H
#define FDT_SOURCES_H

/* The hash of a source built into the program (fdt_family_source, fdt_persist_source: that
 * very pointer), or NULL for any other text. */
const char *fdt_built_in_hash(const char *text);
/* The built-in source whose hash is hash (the "source" operation's answer), or NULL. */
const char *fdt_built_in_source(const char *hash);

/* The kernel sources' version: a hash over the source of every family that serves the
 * built-in stencils, as 16 hex digits. */
const char *fdt_kernels_version(void);

#endif
