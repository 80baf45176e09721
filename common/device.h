/* device.h - what a device is to every part: its identity and limits (fdt_device_info, which
 * the store keys results by and the variants are pruned by), the balance measured on it, a
 * launch geometry and a compiled code object. The backends fill them; the store keeps them. */
#ifndef FDT_DEVICE_H
#define FDT_DEVICE_H

#include <stddef.h>
#include <stdint.h>

typedef struct fdt_dim3 {
    unsigned x, y, z;
} fdt_dim3;

/* What identifies a device for the results store, plus the limits variants are pruned by. */
typedef struct fdt_device_info {
    char backend[8];          /* "hip", "cuda", "cpu" */
    char vendor[32];
    char name[128];
    char arch[48];            /* gfx90a, sm_90, x86_64 */
    int compute_units;        /* CUs, SMs, or cores */
    uint64_t memory_bytes;
    uint64_t l2_bytes;        /* the cache every compute unit shares: a GPU's L2, a CPU's
                                 last level; 0 where the device does not say */
    char driver_version[48];
    char compiler_version[48];/* hiprtc / NVRTC / c++ version */
    int warp_size;
    int max_threads_per_block;
    int max_shared_per_block; /* bytes of static shared memory a block may use */
    unsigned max_grid[3];
    int block_barriers;       /* 0 where __syncthreads cannot run (cpu) */
    int l2_persist;           /* 1 where cache mode persist can run (NVIDIA sm_80 and later) */
} fdt_device_info;

/* A compiled code object (hsaco, cubin, or the path of a shared object for cpu). */
typedef struct fdt_code {
    void *data;
    size_t size;
} fdt_code;

void fdt_code_free(fdt_code *code);

/* What the daemon measured on a device at its first start, or again once doubted: the copy's
 * and the L2 kernel's speed (engine/balance.h measures them), kept with the device's row. */
typedef struct fdt_balance {
    double copy_gbps;   /* the copy: bytes read and written per second, in GB/s */
    double l2_gbps;     /* the L2 kernel: bytes read and written per second; 0 where the
                           device does not say its L2 size */
    double copy_spread; /* the copy's samples: fdt_stats_spread (engine/measure.h) */
    int64_t measured;   /* when, in unix seconds; 0: not measured yet */
    char doubt[200];    /* the daemon's reason to doubt it (daemon/doubt.h), or empty; never
                           on the worker pipe */
} fdt_balance;

#endif
