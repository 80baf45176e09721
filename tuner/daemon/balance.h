/* balance.h - each device's balance (engine/balance.h: the copy's and the L2's bandwidth),
 * measured once per device and kept with its fingerprint in the store. */
#ifndef FDT_DAEMON_BALANCE_H
#define FDT_DAEMON_BALANCE_H

#include <stddef.h>

#include "daemon/daemon.h"
#include "daemon/supervisor.h"

/* At start-up, before the socket opens and any job runs: every device whose stored row has
 * no balance gets a worker that measures it, all side by side, and the loop runs until each
 * has answered or died. A balance measured is stored and kept in the device's slot; one that
 * could not be is logged, and measured again at the next start: the daemon serves either
 * way. Devices measured before are measured again only once doubted (fdt_balance_remeasure). */
void fdt_balance_measure_missing(fdt_daemon *d);

/* A measurement again ended, stored or not (logged either way). */
typedef void (*fdt_balance_done_fn)(fdt_daemon *d, size_t device);

/* Measures device's doubted balance again, in the background with a worker of its own; the
 * caller starts nothing else on the device until done is called, and may stop the worker
 * (fdt_worker_stop), which still calls done. A result slower than the doubted balance leaves
 * it as it was (the host is busy still). The worker, or NULL when none could start (logged;
 * done is not called). */
fdt_worker *fdt_balance_remeasure(fdt_daemon *d, size_t device, fdt_balance_done_fn done);

/* The slot's balance in words, for the log: "copy X GB/s, L2 Y MiB at Z GB/s, measured
 * <local time>", or "balance not measured". */
void fdt_balance_describe(const fdt_device_slot *slot, char *out, size_t len);

#endif
