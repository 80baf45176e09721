/* wire.h - the JSON shapes that cross a pipe or a socket: devices and their balance,
 * problems, timing and measured results, both ways. The daemon, the worker and the client
 * agree on these through this one file (jansson objects; the caller owns what a *_json
 * function returns). */
#ifndef FDT_WIRE_H
#define FDT_WIRE_H

#include <jansson.h>

#include "engine/balance.h"
#include "engine/measure.h"
#include "result_row.h"

/* A JSON string of text, which may be cut short inside a multi-byte character or be in
 * another encoding (compiler messages): were it not UTF-8, its bytes above 0x7f become '?'
 * instead of the string being refused. NULL only when out of memory. */
json_t *fdt_wire_text(const char *text);

json_t *fdt_wire_device_json(const fdt_device_info *d);
/* 0, or -1 with the missing or mistyped field named in err. */
int fdt_wire_device_parse(const json_t *j, fdt_device_info *d, char *err, size_t errlen);

/* {"copy_gbps":..,"l2_gbps":..,"measured":..} */
json_t *fdt_wire_balance_json(const fdt_balance *b);
int fdt_wire_balance_parse(const json_t *j, fdt_balance *b, char *err, size_t errlen);

/* {"nx":..,"ny":..,"nz":..,"radius":..,"precision":"double"} */
json_t *fdt_wire_problem_json(const fdt_problem *p);
/* Checks types and ranges (fdt_problem_check); 0 or -1 with a message. */
int fdt_wire_problem_parse(const json_t *j, fdt_problem *p, char *err, size_t errlen);

/* {"samples":..,"min_sample_ms":..,"timeout_ms":..} */
json_t *fdt_wire_timing_json(const fdt_timing *t);
int fdt_wire_timing_parse(const json_t *j, fdt_timing *t, char *err, size_t errlen);

/* One measured variant: every field of fdt_result_row but job_id. */
json_t *fdt_wire_result_json(const fdt_result_row *r);
int fdt_wire_result_parse(const json_t *j, fdt_result_row *r, char *err, size_t errlen);

/* {"median_ms":..,"min_ms":..,"q1_ms":..,"q3_ms":..,"samples":..,"reps":..} */
json_t *fdt_wire_stats_json(const fdt_stats *s);
int fdt_wire_stats_parse(const json_t *j, fdt_stats *s, char *err, size_t errlen);

#endif
