/* amdgpu_archs.c - the table of AMD GPU facts per target and the device info built from it
 * (see amdgpu_archs.h). Nothing here was measured: no AMD GPU is lent to this project.
 *
 * Sources, cited per figure below as [S], [B4], [B3], [L], [I]:
 *   [S]  ROCm documentation, "AMD GPU specifications" (rocm.docs.amd.com, reference/
 *        gpu-specs): compute units, wavefront size, LDS, L2 and VGPR file per product.
 *   [B4] ROCm blogs, "Finite difference method - Laplacian part 4": "the MI100, MI210,
 *        MI250, and MI250X GPUs all have 8 MB of L2 cache shared among the compute units
 *        per GCD", and "the MI50 where the LLC is only 4 MB of L2 cache".
 *   [B3] ROCm blogs, "... Laplacian part 3": a 24-VGPR kernel runs at occupancy 8 waves per
 *        EU on an MI250X GCD, the most there is.
 *   [L]  LLVM, AMDGPUUsage and AMDGPUBaseInfo's getMaxWavesPerEU: 10 waves per EU on GFX9
 *        before gfx90a, 8 on gfx90a and gfx94x, 16 on GFX10.3 and GFX11; on gfx90a and
 *        gfx94x the 512 VGPRs of a lane are one file shared by VGPRs and AGPRs.
 *   [I]  HIP: maxThreadsPerBlock is 1024 on every AMD GPU; a block's LDS is at most 64 KiB
 *        (the 128 KiB of an RDNA workgroup processor serve two compute units).
 * The brief this was written to gave 10 waves per EU for gfx90a; [L] and [B3] say 8. */
#include "backends/amdgpu_archs.h"

#include <stdio.h>
#include <string.h>

#define MIB (1024u * 1024u)

static const fdt_amdgpu_arch archs[] = {
    /* [S] MI50 60 CUs (MI60 64), wave64, L2 4 MiB [B4], VGPR file 256 per lane (no AGPRs);
     * the Hygon DCU parts run gfx906 code. [L] 10 waves per EU. */
    {.arch = "gfx906", .products = "Instinct MI50/MI60 (gfx906)", .wavefront = 64,
     .compute_units = 60, .l2_bytes = 4 * MIB, .lds_per_block = 65536,
     .max_threads_per_block = 1024, .vgprs_per_lane = 256, .max_waves_per_eu = 10},
    /* [S] MI100 120 CUs, L2 8 MiB [B4], "256 VGPR and 256 AccVGPR"; [L] 10 waves per EU. */
    {.arch = "gfx908", .products = "Instinct MI100", .wavefront = 64, .compute_units = 120,
     .l2_bytes = 8 * MIB, .lds_per_block = 65536, .max_threads_per_block = 1024,
     .vgprs_per_lane = 512, .max_waves_per_eu = 10},
    /* [S] MI250X 110 CUs and 8 MiB L2 per GCD (the runtime shows each GCD as a device),
     * VGPR file 512 KiB: 512 per lane, unified [L]; 8 waves per EU [L], [B3]. */
    {.arch = "gfx90a", .products = "Instinct MI250X (one GCD)", .wavefront = 64,
     .compute_units = 110, .l2_bytes = 8 * MIB, .lds_per_block = 65536,
     .max_threads_per_block = 1024, .vgprs_per_lane = 512, .max_waves_per_eu = 8},
    /* [S] MI300X 304 CUs, 38 per XCD, L2 4 MiB per XCD (the 256 MiB Infinity Cache is
     * not counted: blocks are spread over the eight XCDs, and a block's misses go to its
     * own XCD's L2). gfx940 and gfx941 were MI300's first targets, now gfx942. */
    {.arch = "gfx940", .products = "Instinct MI300 (gfx940)", .wavefront = 64,
     .compute_units = 304, .l2_bytes = 4 * MIB, .lds_per_block = 65536,
     .max_threads_per_block = 1024, .vgprs_per_lane = 512, .max_waves_per_eu = 8},
    {.arch = "gfx941", .products = "Instinct MI300 (gfx941)", .wavefront = 64,
     .compute_units = 304, .l2_bytes = 4 * MIB, .lds_per_block = 65536,
     .max_threads_per_block = 1024, .vgprs_per_lane = 512, .max_waves_per_eu = 8},
    {.arch = "gfx942", .products = "Instinct MI300X", .wavefront = 64, .compute_units = 304,
     .l2_bytes = 4 * MIB, .lds_per_block = 65536, .max_threads_per_block = 1024,
     .vgprs_per_lane = 512, .max_waves_per_eu = 8},
    /* RDNA: [S] "32 or 64": hiprtc compiles wave32 unless told -mwavefrontsize64, so 32.
     * RX 6900 XT 80 CUs, L2 4 MiB (and a 128 MiB Infinity Cache [B4] not counted here);
     * RX 7900 XTX 96 CUs, L2 6 MiB (96 MiB Infinity Cache). [L] 16 waves per EU. */
    {.arch = "gfx1030", .products = "Radeon RX 6900 XT", .wavefront = 32, .compute_units = 80,
     .l2_bytes = 4 * MIB, .lds_per_block = 65536, .max_threads_per_block = 1024,
     .vgprs_per_lane = 256, .max_waves_per_eu = 16},
    {.arch = "gfx1100", .products = "Radeon RX 7900 XTX", .wavefront = 32,
     .compute_units = 96, .l2_bytes = 6 * MIB, .lds_per_block = 65536,
     .max_threads_per_block = 1024, .vgprs_per_lane = 256, .max_waves_per_eu = 16},
};

const fdt_amdgpu_arch *fdt_amdgpu_arch_find(const char *arch)
{
    const size_t len = strcspn(arch, ":");
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        if (strlen(archs[i].arch) == len && strncmp(archs[i].arch, arch, len) == 0)
            return &archs[i];
    return NULL;
}

int fdt_amdgpu_arch_device(const char *arch, fdt_device_info *out)
{
    const fdt_amdgpu_arch *a = fdt_amdgpu_arch_find(arch);
    if (!a)
        return -1;
    *out = (fdt_device_info){
        .compute_units = a->compute_units, .l2_bytes = a->l2_bytes,
        .warp_size = a->wavefront, .max_threads_per_block = a->max_threads_per_block,
        .max_shared_per_block = a->lds_per_block, .max_grid = {2147483647u, 65535, 65535},
        .block_barriers = 1, .l2_persist = 0};
    snprintf(out->backend, sizeof out->backend, "hip");
    snprintf(out->vendor, sizeof out->vendor, "AMD");
    snprintf(out->name, sizeof out->name, "AMD %s", a->products);
    snprintf(out->arch, sizeof out->arch, "%s", a->arch);
    return 0;
}
