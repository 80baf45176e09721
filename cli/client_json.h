/* client_json.h - what the fdtune command and libfdtune's parts share beyond the public
 * header: the JSON form of a problem, so that every request names its fields one way, and
 * a request and its answer as JSON. Not installed, and hidden from libfdtune.so's symbols. */
#ifndef FDT_CLIENT_JSON_H
#define FDT_CLIENT_JSON_H

#include <jansson.h>

#include "fdtune.h"

/* {"v":1,"op":op,"precision":..,"radius":..,"cache":..,"device":..} plus "nx","ny","nz"
 * when with_shape, "tune_if_missing", "pitch" (a number or "auto") and "offset" when set
 * (not 0); with a spec (its JSON text, or NULL),
 * "spec" instead of "radius", which the spec names. NULL when out of memory or when spec
 * is not JSON. */
__attribute__((visibility("hidden")))
json_t *fdtune_problem_request(const char *op, const fdtune_problem *p, const char *spec,
                               int with_shape);

/* Sends req (left to the caller) and reads its answer as a JSON object (*answer, to be
 * released with json_decref): fdtune_request's statuses, and FDTUNE_ERR_ARG when req is
 * NULL or cannot be written, FDTUNE_ERR_ANSWER when the answer is not an object. */
__attribute__((visibility("hidden")))
int fdtune_request_json(fdtune_conn *c, json_t *req, json_t **answer, char *err,
                        size_t errlen);

#endif
