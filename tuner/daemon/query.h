/* query.h - the answer to "what should I launch for this problem": an exact tuned shape, the
 * nearest tuned shape, or the default, on this device or the closest stored one. The
 * distance and the device levels are documented in docs/protocol.md. */
#ifndef FDT_QUERY_H
#define FDT_QUERY_H

#include <jansson.h>

#include "daemon/daemon.h"
#include "hashes.h"

typedef enum fdt_match { FDT_MATCH_EXACT, FDT_MATCH_NEAREST, FDT_MATCH_DEFAULT } fdt_match;

/* How closely a stored device stands for the asked one, best first. */
typedef enum fdt_level {
    FDT_LEVEL_FINGERPRINT, /* the same device, driver and compiler */
    FDT_LEVEL_MODEL,       /* same vendor, name, CU count and memory; another driver */
    FDT_LEVEL_ARCH,        /* same backend and arch */
    FDT_LEVEL_NONE
} fdt_level;

const char *fdt_match_name(fdt_match m);
const char *fdt_level_name(fdt_level l);

fdt_level fdt_query_level(const fdt_device_info *asked, const fdt_device_info *stored);

/* The distance between an asked and a tuned shape; 0 for the same shape. */
double fdt_query_distance(const fdt_problem *asked, const fdt_problem *tuned, uint64_t l2_bytes);

/* The candidate nearest to the asked problem, or -1 when n == 0. */
long fdt_query_nearest(const fdt_problem *asked, const fdt_best *candidates, size_t n,
                       uint64_t l2_bytes, double *distance);

typedef struct fdt_answer {
    fdt_match match;
    fdt_level level;
    fdt_best best;            /* unless match is default */
    fdt_device_info from;     /* the device it was measured on */
    double distance;
    /* A nearest answer's variant: "model" (best.variant was replaced by the guided model's
     * choice among the nearest tuned problems' results, expecting that share of the best
     * from that many problems) or "nearest" (the nearest tuned shape's own winner). */
    const char *chosen_by;
    double expected;
    size_t neighbours;
    /* Asked with pitch auto: the answer is the fastest layout's (ops.c), and dense_gbps the
     * dense layout's own figure (0: not measured there). */
    int layout_auto;
    double dense_gbps;
} fdt_answer;

/* Loads the best rows and the devices from the store into memory (after the probe has
 * stored this host's devices); 0 or -1 with the reason. */
int fdt_query_cache_load(fdt_daemon *d, char *err, size_t errlen);
void fdt_query_cache_free(fdt_daemon *d);
/* Keeps a best row just stored, so that queries see it at once; 0 or -1 (out of memory). */
int fdt_query_remember(fdt_daemon *d, const fdt_best *b);

/* The answer body (a JSON object's text) last written for this device and key, if nothing
 * was tuned since; NULL otherwise. Valid until the next put. */
const char *fdt_query_memo_get(fdt_daemon *d, int device, const fdt_key *key);
/* Keeps body (malloc'd, taken over) as the answer for device and key; returns it. */
const char *fdt_query_memo_put(fdt_daemon *d, int device, const fdt_key *key, char *body);

/* Looks the problem up for device slot dev, from memory. */
void fdt_query_find(fdt_daemon *d, const fdt_device_slot *dev, const fdt_key *key,
                    fdt_answer *out);

/* What a solver needs to launch variant for the asked problem: family, parameters, grid and
 * block for that shape, the -D defines, the sources and the stencil's entry point. NULL if
 * the name does not parse or the problem names no stencil that exists. */
json_t *fdt_query_config_json(const char *variant, const fdt_problem *asked);

/* Cache mode persist's set-up kernel for the asked problem: sources, entry, grid and block
 * (compiled with the same defines as the variant). */
json_t *fdt_query_persist_json(const fdt_problem *asked);

#endif
