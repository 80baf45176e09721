/* client_json.h - what the fdtune command shares with libfdtune beyond the public header:
 * the JSON form of a problem, so that every request names its fields one way. Not
 * installed, and hidden from libfdtune.so's symbols. */
#ifndef FDT_CLIENT_JSON_H
#define FDT_CLIENT_JSON_H

#include <jansson.h>

#include "fdtune.h"

/* {"v":1,"op":op,"precision":..,"radius":..,"cache":..,"device":..} plus "nx","ny","nz"
 * when with_shape, and "tune_if_missing" when set. NULL when out of memory. */
__attribute__((visibility("hidden")))
json_t *fdtune_problem_request(const char *op, const fdtune_problem *p, int with_shape);

#endif
