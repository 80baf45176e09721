/* balance.h - a device's balance: how fast it copies memory (a device-to-device copy of
 * buffers well beyond its L2) and how fast it reads its L2 (kernels_src/l2read.hip over half
 * of it). A worker measures it once per device (fdt_balance_measure); the daemon stores it
 * with the device's fingerprint (db/store.h) and answers it in `devices`, so that the search
 * and the reports can tell a stencil's memory traffic from its L2 traffic. */
#ifndef FDT_BALANCE_H
#define FDT_BALANCE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/measure.h"

/* The L2 kernel's launch: grid (blocks, 1, 1) and block (threads, 1, 1); each block reads its
 * chunk of doubles passes times over. */
typedef struct fdt_l2_launch {
    fdt_dim3 grid, block;
    int chunk;  /* a multiple of 4 * block.x */
    int passes;
} fdt_l2_launch;

/* The launch on dev over half its L2 (at most 256 MiB). Returns the doubles the buffer holds
 * (grid.x * chunk), or 0 where dev's L2 size is unknown or too small for one block. */
size_t fdt_l2_read_launch(const fdt_device_info *dev, fdt_l2_launch *out);

/* The L2 kernel's source (kernels_src/l2read.hip after common.h), entry fdt_l2_read, and the
 * defines it is compiled with (*defines, *count). */
const char *fdt_l2_read_kernel(const char *const **defines, size_t *count);

/* Times the copy and the L2 kernel on the open device b with timing's settings, and stamps
 * out with the time. On failure out is zero and err says why. */
fdt_status fdt_balance_measure(const fdt_backend_ops *ops, fdt_backend *b,
                               const fdt_timing *timing, fdt_balance *out, fdt_error *err);

/* Times the copy alone, as fdt_balance_measure does, into *gbps. A job times it again beside
 * its leaders, so that the daemon can tell a device that copies as fast as when its balance
 * was measured from one that a busy host, or another process on it, slows down. */
fdt_status fdt_balance_copy(const fdt_backend_ops *ops, fdt_backend *b,
                            const fdt_timing *timing, double *gbps, fdt_error *err);

#endif
