/* amdgpu_archs.h - AMD GPU facts per target (gfx906, gfx908, gfx90a, gfx94x, gfx1030,
 * gfx1100): what the hip space is sized by, and the device info of an arch with no GPU
 * present, so that CI can enumerate the hip space for gfx90a and gfx906 anywhere. The
 * source of each figure is cited beside it in amdgpu_archs.c and in docs/kernels.md. */
#ifndef FDT_AMDGPU_ARCHS_H
#define FDT_AMDGPU_ARCHS_H

#include <stdint.h>

#include "backends/backend.h"

typedef struct fdt_amdgpu_arch {
    const char *arch;       /* the LLVM target, e.g. "gfx90a" */
    const char *products;   /* the parts the figures are for, e.g. "MI250X (one GCD)" */
    int wavefront;          /* threads in a wavefront: 64, or 32 by default on RDNA */
    int compute_units;      /* of one device the runtime shows: a GCD on MI250X */
    uint64_t l2_bytes;      /* the L2 one compute unit's misses go to (one XCD's on MI300) */
    int lds_per_block;      /* bytes of LDS one block may use */
    int max_threads_per_block;
    int vgprs_per_lane;     /* VGPRs one wavefront may hold per lane (with AGPRs on CDNA) */
    int max_waves_per_eu;   /* wavefronts one SIMD keeps resident at most */
} fdt_amdgpu_arch;

/* The facts of arch (features after ':' ignored: "gfx90a:sramecc+:xnack-"), or NULL when
 * the table does not know it. */
const fdt_amdgpu_arch *fdt_amdgpu_arch_find(const char *arch);

/* The device info a hip device of arch reports, from the table alone (no GPU): backend
 * "hip", vendor "AMD", its limits; name "AMD <products>" and no memory, driver or compiler
 * (zeros). 0, or -1 for an arch the table does not know (out untouched). */
int fdt_amdgpu_arch_device(const char *arch, fdt_device_info *out);

#endif
