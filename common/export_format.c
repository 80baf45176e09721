/* export_format.c - the columns of an export's rows (export_format.h). */
#include "export_format.h"

#include <string.h>

/* The device a row was measured on: its fingerprint, then every field the fingerprint is
 * made of (common/hashes.c), so that an importing store can keep a device it never saw. */
#define DEVICE_COLUMNS                                                                     \
    {"fingerprint", FDT_COLUMN_TEXT}, {"device", FDT_COLUMN_TEXT},                         \
        {"backend", FDT_COLUMN_TEXT}, {"vendor", FDT_COLUMN_TEXT}, {"arch", FDT_COLUMN_TEXT}, \
        {"compute_units", FDT_COLUMN_INT}, {"memory_bytes", FDT_COLUMN_INT},               \
        {"driver_version", FDT_COLUMN_TEXT}, {"compiler_version", FDT_COLUMN_TEXT}
#define KEY_COLUMNS                                                                        \
    {"stencil", FDT_COLUMN_TEXT}, {"radius", FDT_COLUMN_INT}, {"precision", FDT_COLUMN_TEXT}, \
        {"nx", FDT_COLUMN_INT}, {"ny", FDT_COLUMN_INT}, {"nz", FDT_COLUMN_INT},            \
        {"cache", FDT_COLUMN_TEXT}, {"pitch", FDT_COLUMN_INT}, {"offset", FDT_COLUMN_INT}

const fdt_column fdt_result_columns[] = {
    {"format", FDT_COLUMN_TEXT},
    DEVICE_COLUMNS,
    KEY_COLUMNS,
    {"job", FDT_COLUMN_INT}, /* its id where it was measured */
    {"variant", FDT_COLUMN_TEXT},
    {"status", FDT_COLUMN_TEXT},
    {"leader", FDT_COLUMN_BOOL},
    {"median_ms", FDT_COLUMN_REAL},
    {"min_ms", FDT_COLUMN_REAL},
    {"q1_ms", FDT_COLUMN_REAL},
    {"q3_ms", FDT_COLUMN_REAL},
    {"samples", FDT_COLUMN_INT},
    {"reps", FDT_COLUMN_INT},
    {"gbps", FDT_COLUMN_REAL},
    {"compile_ms", FDT_COLUMN_REAL},
    {"vgprs", FDT_COLUMN_INT},
    {"sgprs", FDT_COLUMN_INT},
    {"scratch_bytes", FDT_COLUMN_INT},
    {"shared_bytes", FDT_COLUMN_INT},
    {"message", FDT_COLUMN_TEXT},
    /* provenance: the kernel sources' version, when, on which host, by which fdtuned */
    {"kernels", FDT_COLUMN_TEXT},
    {"measured", FDT_COLUMN_INT},
    {"host", FDT_COLUMN_TEXT},
    {"store", FDT_COLUMN_TEXT},    /* the store its job is in there: job ids are its own */
    {"fdtuned", FDT_COLUMN_TEXT},
    {"strategy", FDT_COLUMN_TEXT}, /* how its job searched there */
    /* the job's outcome: the leader row its winner is, and the ceilings timed beside it */
    {"winner", FDT_COLUMN_BOOL},
    /* where the job chose the cache state (cache auto), what it chose: hot, or persist with
     * persist's fastest leader timed beside persist's copy; "" where it chose nothing */
    {"auto_state", FDT_COLUMN_TEXT},
    {"auto_variant", FDT_COLUMN_TEXT},
    {"auto_gbps", FDT_COLUMN_REAL},
    {"auto_median_ms", FDT_COLUMN_REAL},
    {"auto_copy_gbps", FDT_COLUMN_REAL},
    {"state", FDT_COLUMN_TEXT},
    {"copy_gbps", FDT_COLUMN_REAL},
    {"interior_copy_gbps", FDT_COLUMN_REAL},
    {"kernel1_gbps", FDT_COLUMN_REAL},
    {"doubt", FDT_COLUMN_TEXT},
    {NULL, FDT_COLUMN_TEXT},
};

const fdt_column fdt_best_columns[] = {
    {"format", FDT_COLUMN_TEXT},
    DEVICE_COLUMNS,
    KEY_COLUMNS,
    {"state", FDT_COLUMN_TEXT},
    {"variant", FDT_COLUMN_TEXT},
    {"gbps", FDT_COLUMN_REAL},
    {"median_ms", FDT_COLUMN_REAL},
    {"copy_gbps", FDT_COLUMN_REAL},
    {"interior_copy_gbps", FDT_COLUMN_REAL},
    {"kernel1_gbps", FDT_COLUMN_REAL},
    {"kernels", FDT_COLUMN_TEXT},
    {"job", FDT_COLUMN_INT},
    {"updated", FDT_COLUMN_INT},
    {"doubt", FDT_COLUMN_TEXT},
    {"host", FDT_COLUMN_TEXT},
    {"store", FDT_COLUMN_TEXT},
    {"fdtuned", FDT_COLUMN_TEXT},
    {NULL, FDT_COLUMN_TEXT},
};

const fdt_column *fdt_column_find(const fdt_column *list, const char *name)
{
    for (; list->name; list++)
        if (strcmp(list->name, name) == 0)
            return list;
    return NULL;
}
