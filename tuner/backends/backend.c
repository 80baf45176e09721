/* backend.c - the backend registry: every backend by name, and auto's choice among them. */
#include "backends/backend.h"

#include <string.h>

static const fdt_backend_ops *const backends[] = {
    &fdt_backend_hip,
    &fdt_backend_cuda,
    &fdt_backend_cpu,
};

const fdt_backend_ops *fdt_backend_find(const char *name)
{
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (strcmp(backends[i]->name, name) == 0)
            return backends[i];
    return NULL;
}

fdt_status fdt_backend_open(const char *name, int device, const fdt_backend_ops **ops,
                            fdt_backend **out, fdt_error *err)
{
    if (strcmp(name, "auto") != 0) {
        *ops = fdt_backend_find(name);
        if (!*ops)
            return fdt_fail(err, FDT_ERROR, "unknown backend '%s' (expected auto, hip, cuda or cpu)",
                            name);
        return (*ops)->open(device, out, err);
    }
    /* auto: the first backend that finds a device; the last failure explains a miss. */
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
        *ops = backends[i];
        if (backends[i]->open(device, out, err) == FDT_OK)
            return FDT_OK;
    }
    return err ? err->status : FDT_ERROR;
}
