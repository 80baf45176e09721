/* amdgpu_codeobj.h - what the tuner reads from AMDGPU code objects (the ELF files hiprtc
 * returns) without a GPU: a kernel's resource usage, and the code object inside an offload
 * bundle. Both take untrusted bytes: bad input gives FDT_ERROR and a message, never a crash. */
#ifndef FDT_AMDGPU_CODEOBJ_H
#define FDT_AMDGPU_CODEOBJ_H

#include "backends/backend.h"

/* Reads the registers, scratch and LDS of kernel entry from the NT_AMDGPU_METADATA note of
 * the code object elf (code object v3 and later: msgpack metadata). */
fdt_status fdt_amdgpu_resources(const void *elf, size_t size, const char *entry,
                                fdt_resources *out, fdt_error *err);

/* Finds the code object for arch ("gfx90a") in a clang offload bundle and points *elf into
 * data; data that is no bundle is passed through unchanged. */
fdt_status fdt_amdgpu_unbundle(const void *data, size_t size, const char *arch,
                               const void **elf, size_t *elf_size, fdt_error *err);

#endif
