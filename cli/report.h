/* report.h - fdtune report: what its page is drawn from, the store's rows as the daemon's
 * devices and export operations answer them (gathered by cmd_report.c), and the writer of
 * the page (report.c): one self-contained HTML file, its plots inline SVG (plot.h), its
 * styles inline, nothing fetched from anywhere. */
#ifndef FDT_REPORT_H
#define FDT_REPORT_H

#include <stdio.h>

#include "device.h"
#include "engine/variant.h"
#include "problem.h"

/* A device: one the daemon found at start-up (index >= 0), or one only the store's rows
 * name (index -1), whose balance the daemon does not hold. */
typedef struct fdt_report_device {
    char fingerprint[20];
    int index;
    fdt_device_info info; /* its name, backend, arch, L2 size, driver and compiler */
    fdt_balance balance;
} fdt_report_device;

/* A tuned problem's best row (export --what best). */
typedef struct fdt_report_best {
    char fingerprint[20];
    fdt_problem problem;
    fdt_cache_mode state; /* the state it was timed in: under cache auto, the one chosen */
    char variant[FDT_VARIANT_NAME_MAX];
    double gbps, kernel1_gbps, copy_gbps, interior_copy_gbps; /* 0: not timed */
    long long job;
    char doubt[256];      /* why its figures may not be trusted; "" */
} fdt_report_best;

/* A measured variant (export --what results). */
typedef struct fdt_report_result {
    char fingerprint[20];
    fdt_problem problem;
    size_t order;         /* its place in the store: the export's order, its measurement's */
    long long job;
    fdt_variant variant;  /* family NULL: a name this fdtune does not know (another version) */
    int ok;               /* ran and was right, its speed ranked (status ok, GB/s > 0) */
    int leader;           /* a leader's second, longer timing, not an evaluation */
    double gbps;
    double cost_s;        /* what compiling and measuring it took (fdt_result_cost_s) */
} fdt_report_result;

typedef struct fdt_report {
    fdt_report_device *devices;
    size_t ndevices;
    fdt_report_best *best;
    size_t nbest;
    fdt_report_result *results;
    size_t nresults;
    const char *source;   /* where the rows came from (the daemon's socket), for the header */
} fdt_report;

/* Writes the page of r to out: the results are sorted by problem first. 0, or -1 when out
 * of memory (reported); write errors are out's (ferror). */
int fdt_report_write(fdt_report *r, FILE *out);
void fdt_report_free(fdt_report *r);

#endif
