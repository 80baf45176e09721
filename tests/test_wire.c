/* test_wire.c - the JSON shapes of the worker pipe and the socket (tuner/engine/wire.c) and
 * the base64 of code objects (common/base64.c): every shape survives a trip through
 * JSON text unchanged, and each kind of bad field is refused with a message that names it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base64.h"
#include "engine/wire.h"

/* Through text and back, as a line on a pipe travels. */
static json_t *via_text(json_t *j)
{
    assert_non_null(j);
    char *text = json_dumps(j, JSON_COMPACT);
    assert_non_null(text);
    json_decref(j);
    json_error_t jerr;
    json_t *back = json_loads(text, 0, &jerr);
    free(text);
    assert_non_null(back);
    return back;
}

/* Sets field of the object j to the JSON text value (or removes it when value is NULL). */
static void set_field(json_t *j, const char *field, const char *value)
{
    if (!value) {
        json_object_del(j, field);
        return;
    }
    json_error_t jerr;
    json_t *v = json_loads(value, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    assert_non_null(v);
    json_object_set_new(j, field, v);
}

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part))
        fail_msg("'%s' does not contain '%s'", text, part);
}

/* The samples are zeroed whole before their fields are set, so that padding compares
 * equal with assert_memory_equal. */
static fdt_device_info sample_device(void)
{
    fdt_device_info d;
    memset(&d, 0, sizeof d);
    d.compute_units = 132;
    d.memory_bytes = 85520809984ull;
    d.l2_bytes = 52428800;
    d.warp_size = 32;
    d.max_threads_per_block = 1024;
    d.max_shared_per_block = 49152;
    d.max_grid[0] = 2147483647u;
    d.max_grid[1] = d.max_grid[2] = 65535;
    d.block_barriers = 1;
    d.l2_persist = 1;
    strcpy(d.backend, "cuda");
    strcpy(d.vendor, "NVIDIA");
    strcpy(d.name, "NVIDIA H100 80GB HBM3 \"quoted\" \\ name");
    strcpy(d.arch, "sm_90");
    strcpy(d.driver_version, "13.0");
    strcpy(d.compiler_version, "NVRTC 13.0");
    return d;
}

static void test_device_round_trip(void **state)
{
    (void)state;
    const fdt_device_info d = sample_device();
    json_t *j = via_text(fdt_wire_device_json(&d));
    fdt_device_info back;
    char err[256] = "";
    assert_int_equal(fdt_wire_device_parse(j, &back, err, sizeof err), 0);
    assert_memory_equal(&back, &d, sizeof d);
    json_decref(j);
}

typedef struct bad_field {
    const char *field;
    const char *value; /* JSON text; NULL: the field removed */
    const char *message;
} bad_field;

typedef int (*parse_fn)(const json_t *j, void *out, char *err, size_t errlen);

/* Each case spoils one field of a good object; the parser must refuse it with message. */
static void expect_refusals(json_t *good, parse_fn parse, void *out, const bad_field *cases,
                            size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_t *j = json_deep_copy(good);
        set_field(j, cases[i].field, cases[i].value);
        char err[256] = "";
        if (parse(j, out, err, sizeof err) != -1)
            fail_msg("%s = %s was accepted", cases[i].field, cases[i].value ? cases[i].value
                                                                              : "(missing)");
        assert_contains(err, cases[i].message);
        json_decref(j);
    }
}

static int parse_device(const json_t *j, void *out, char *err, size_t errlen)
{
    return fdt_wire_device_parse(j, out, err, errlen);
}

static void test_device_refusals(void **state)
{
    (void)state;
    const fdt_device_info d = sample_device();
    json_t *good = fdt_wire_device_json(&d);
    const bad_field cases[] = {
        {"name", NULL, "'name' is missing"},
        {"name", "7", "'name' must be a string"},
        {"arch", "\"" "0123456789012345678901234567890123456789012345678" "\"",
         "'arch' must be a string of at most 47 characters"},
        {"vendor", "\"NV\\u0000IDIA\"", "'vendor' must be a string"},
        {"compute_units", "132.5", "'compute_units' must be an integer"},
        {"compute_units", "-1", "'compute_units' must be from 0"},
        {"warp_size", "\"32\"", "'warp_size' must be an integer"},
        {"memory_bytes", "-5", "'memory_bytes' must be from 0"},
        {"block_barriers", "2", "'block_barriers' must be from 0 to 1"},
        {"l2_persist", NULL, "'l2_persist' is missing"},
        {"max_grid", "[1, 2]", "'max_grid' must be an array of 3 integers"},
        {"max_grid", "[1, 0, 3]", "'max_grid' must hold integers from 1"},
        {"max_grid", NULL, "'max_grid' must be an array"},
    };
    fdt_device_info out;
    expect_refusals(good, parse_device, &out, cases, sizeof cases / sizeof cases[0]);
    char err[64] = "";
    json_t *array = json_array();
    assert_int_equal(fdt_wire_device_parse(array, &out, err, sizeof err), -1);
    assert_contains(err, "expected a JSON object");
    json_decref(array);
    json_decref(good);
}

static int parse_problem(const json_t *j, void *out, char *err, size_t errlen)
{
    return fdt_wire_problem_parse(j, out, err, errlen);
}

static void test_problem_round_trip_and_defaults(void **state)
{
    (void)state;
    const fdt_problem p = {.stencil = "laplacian", .nx = 513, .ny = 9, .nz = 65536, .radius = 4,
                           .precision = FDT_FLOAT, .cache = FDT_CACHE_PERSIST};
    json_t *j = via_text(fdt_wire_problem_json(&p));
    fdt_problem back;
    char err[256] = "";
    assert_int_equal(fdt_wire_problem_parse(j, &back, err, sizeof err), 0);
    assert_memory_equal(&back, &p, sizeof p);
    json_decref(j);

    /* A client may leave out radius, precision and cache. */
    j = json_pack("{s:i, s:i, s:i}", "nx", 64, "ny", 32, "nz", 16);
    assert_int_equal(fdt_wire_problem_parse(j, &back, err, sizeof err), 0);
    assert_int_equal(back.radius, 1);
    assert_int_equal(back.precision, FDT_DOUBLE);
    assert_int_equal(back.cache, FDT_CACHE_HOT);
    assert_int_equal(back.nz, 16);
    json_decref(j);
}

static void test_problem_refusals(void **state)
{
    (void)state;
    const fdt_problem p = {.stencil = "laplacian", .nx = 64, .ny = 64, .nz = 64, .radius = 1,
                           .precision = FDT_DOUBLE};
    json_t *good = fdt_wire_problem_json(&p);
    const bad_field cases[] = {
        {"nx", NULL, "'nx' is missing"},
        {"ny", "\"64\"", "'ny' must be an integer"},
        {"nz", "64.5", "'nz' must be an integer"},
        {"nx", "2", "nx = 2 is out of range"},
        {"nz", "70000", "'nz' must be from 1 to 65536"},
        {"nx", "1e300", "'nx' must be an integer"},
        {"radius", "5", "'radius' must be from 1 to 4"},
        {"radius", "true", "'radius' must be an integer"},
        {"precision", "\"half\"", "'precision' must be \"float\" or \"double\""},
        {"precision", "1", "'precision' must be \"float\" or \"double\""},
        {"cache", "\"warm\"", "'cache' must be \"hot\", \"cold\", \"persist\" or \"auto\""},
        {"cache", "0", "'cache' must be \"hot\", \"cold\", \"persist\" or \"auto\""},
    };
    fdt_problem out;
    expect_refusals(good, parse_problem, &out, cases, sizeof cases / sizeof cases[0]);
    /* Radius 4 needs 9 points per side: the shape check sees the parsed radius. */
    json_t *j = json_pack("{s:i, s:i, s:i, s:i}", "nx", 8, "ny", 64, "nz", 64, "radius", 4);
    char err[256] = "";
    assert_int_equal(fdt_wire_problem_parse(j, &out, err, sizeof err), -1);
    assert_contains(err, "nx = 8 is out of range: each side must be 9");
    json_decref(j);
    json_decref(good);
}

static int parse_timing(const json_t *j, void *out, char *err, size_t errlen)
{
    return fdt_wire_timing_parse(j, out, err, errlen);
}

static void test_timing(void **state)
{
    (void)state;
    fdt_timing t;
    memset(&t, 0, sizeof t);
    t.min_sample_ms = 0.1 + 0.2;
    t.samples = 15;
    t.timeout_ms = 5000.0;
    json_t *j = via_text(fdt_wire_timing_json(&t));
    fdt_timing back;
    char err[256] = "";
    assert_int_equal(fdt_wire_timing_parse(j, &back, err, sizeof err), 0);
    assert_memory_equal(&back, &t, sizeof t);
    const bad_field cases[] = {
        {"samples", "0", "'samples' must be from 1"},
        {"samples", NULL, "'samples' is missing"},
        {"min_sample_ms", "\"1\"", "'min_sample_ms' must be a number"},
        {"min_sample_ms", "-0.5", "'min_sample_ms' must be from 0"},
        {"timeout_ms", "0", "'timeout_ms' must be from"},
        {"timeout_ms", "null", "'timeout_ms' must be a number"},
    };
    expect_refusals(j, parse_timing, &back, cases, sizeof cases / sizeof cases[0]);
    json_decref(j);
}

static int parse_balance(const json_t *j, void *out, char *err, size_t errlen)
{
    return fdt_wire_balance_parse(j, out, err, errlen);
}

/* A device's balance: the worker's answer and the devices op's field, both ways; its time a
 * full 64-bit one. */
static void test_balance(void **state)
{
    (void)state;
    fdt_balance b;
    memset(&b, 0, sizeof b);
    b.copy_gbps = 3013.75;
    b.l2_gbps = 0.1 + 0.2;
    b.measured = 4102444800; /* past 2^31 */
    json_t *j = via_text(fdt_wire_balance_json(&b));
    fdt_balance back;
    char err[256] = "";
    assert_int_equal(fdt_wire_balance_parse(j, &back, err, sizeof err), 0);
    assert_memory_equal(&back, &b, sizeof b);
    const bad_field cases[] = {
        {"copy_gbps", NULL, "'copy_gbps' is missing"},
        {"copy_gbps", "-1", "'copy_gbps' must be from 0"},
        {"l2_gbps", "\"fast\"", "'l2_gbps' must be a number"},
        {"measured", "1.5", "'measured' must be an integer"},
        {"measured", "-3", "'measured' must be from 0"},
    };
    expect_refusals(j, parse_balance, &back, cases, sizeof cases / sizeof cases[0]);
    json_decref(j);
}

static fdt_result_row sample_row(void)
{
    fdt_result_row r;
    memset(&r, 0, sizeof r);
    r.leader = 1;
    r.median_ms = 0.123456789012345;
    r.min_ms = 0.1;
    r.q1_ms = 0.11;
    r.q3_ms = 0.13;
    r.gbps = 2730.6789;
    r.compile_ms = 143.25;
    r.samples = 50;
    r.reps = 17;
    r.vgprs = 64;
    r.sgprs = -1;
    r.shared_bytes = 12288;
    strcpy(r.variant, "tiled:64x2x2:m8:seed");
    strcpy(r.status, "ok");
    strcpy(r.message, "line one\nline \"two\"");
    return r;
}

static int parse_result(const json_t *j, void *out, char *err, size_t errlen)
{
    return fdt_wire_result_parse(j, out, err, errlen);
}

static void test_result_round_trip(void **state)
{
    (void)state;
    const fdt_result_row r = sample_row();
    json_t *j = via_text(fdt_wire_result_json(&r));
    fdt_result_row back;
    char err[256] = "";
    assert_int_equal(fdt_wire_result_parse(j, &back, err, sizeof err), 0);
    assert_memory_equal(&back, &r, sizeof r);
    /* job_id is the daemon's, never on the wire. */
    assert_null(json_object_get(j, "job_id"));
    /* A worker that crashed is recorded by the daemon with the same shape. */
    set_field(j, "status", "\"crashed\"");
    assert_int_equal(fdt_wire_result_parse(j, &back, err, sizeof err), 0);
    assert_string_equal(back.status, "crashed");
    json_decref(j);
}

static void test_result_refusals(void **state)
{
    (void)state;
    const fdt_result_row r = sample_row();
    json_t *good = fdt_wire_result_json(&r);
    const bad_field cases[] = {
        {"variant", NULL, "'variant' is missing"},
        {"variant", "\"" "naive:256x1x1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" "\"",
         "'variant' must be a string of at most 63 characters"},
        {"status", "\"fine\"", "'status' must be a result status, not 'fine'"},
        {"status", "0", "'status' must be a string"},
        {"leader", "2", "'leader' must be from 0 to 1"},
        {"leader", "true", "'leader' must be an integer"},
        {"median_ms", "-1", "'median_ms' must be from 0"},
        {"gbps", "null", "'gbps' must be a number"},
        {"samples", "1.5", "'samples' must be an integer"},
        {"vgprs", "-2", "'vgprs' must be from -1"},
        {"message", NULL, "'message' is missing"},
    };
    fdt_result_row out;
    expect_refusals(good, parse_result, &out, cases, sizeof cases / sizeof cases[0]);
    json_decref(good);
}

/* A compiler message cut short inside a multi-byte character still travels. */
static void test_text_that_is_not_utf8(void **state)
{
    (void)state;
    fdt_result_row r = sample_row();
    strcpy(r.message, "error: \xe2\x80\x98x\xe2\x80\x99 undeclared \xe2\x80");
    json_t *j = via_text(fdt_wire_result_json(&r));
    fdt_result_row back;
    char err[256] = "";
    assert_int_equal(fdt_wire_result_parse(j, &back, err, sizeof err), 0);
    assert_string_equal(back.message, "error: ???x??? undeclared ??");
    json_decref(j);
    j = fdt_wire_text("plain \xe2\x80\x98quoted\xe2\x80\x99");
    assert_string_equal(json_string_value(j), "plain \xe2\x80\x98quoted\xe2\x80\x99");
    json_decref(j);
}

static int parse_stats(const json_t *j, void *out, char *err, size_t errlen)
{
    return fdt_wire_stats_parse(j, out, err, errlen);
}

static void test_stats(void **state)
{
    (void)state;
    const fdt_stats s = {.median_ms = 1.0 / 3, .min_ms = 0.25, .q1_ms = 0.3, .q3_ms = 0.4,
                         .samples = 50, .reps = 1000};
    json_t *j = via_text(fdt_wire_stats_json(&s));
    fdt_stats back;
    char err[256] = "";
    assert_int_equal(fdt_wire_stats_parse(j, &back, err, sizeof err), 0);
    assert_memory_equal(&back, &s, sizeof s);
    const bad_field cases[] = {
        {"reps", NULL, "'reps' is missing"},
        {"q1_ms", "[]", "'q1_ms' must be a number"},
    };
    expect_refusals(j, parse_stats, &back, cases, sizeof cases / sizeof cases[0]);
    json_decref(j);

    /* JSON has no infinity: it is written as null, which the reader refuses by name. */
    fdt_stats odd = s;
    odd.median_ms = 1.0 / 0.0;
    j = via_text(fdt_wire_stats_json(&odd));
    assert_int_equal(fdt_wire_stats_parse(j, &back, err, sizeof err), -1);
    assert_contains(err, "'median_ms' must be a number");
    json_decref(j);
}

/* ---- base64 ---- */

static void test_base64_known_vectors(void **state)
{
    (void)state;
    /* RFC 4648, section 10. */
    const char *plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        char *text = fdt_base64_encode(plain[i], strlen(plain[i]));
        assert_string_equal(text, coded[i]);
        free(text);
        void *data = NULL;
        size_t size = 99;
        assert_int_equal(fdt_base64_decode(coded[i], strlen(coded[i]), &data, &size), 0);
        assert_int_equal(size, strlen(plain[i]));
        assert_memory_equal(data, plain[i], size);
        free(data);
    }
}

static void test_base64_round_trip(void **state)
{
    (void)state;
    unsigned char bytes[300];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (unsigned char)(i * 151 + 7); /* every value, in no simple order */
    for (size_t n = 0; n <= sizeof bytes; n += n < 8 ? 1 : 37) {
        char *text = fdt_base64_encode(bytes, n);
        assert_int_equal(strlen(text), (n + 2) / 3 * 4);
        void *data = NULL;
        size_t size = 0;
        assert_int_equal(fdt_base64_decode(text, strlen(text), &data, &size), 0);
        assert_int_equal(size, n);
        assert_memory_equal(data, bytes, n);
        free(data);
        free(text);
    }
}

static void test_base64_rejects_bad_input(void **state)
{
    (void)state;
    const char *bad[] = {
        "Zg=",       /* not a multiple of 4 */
        "Zm9",       /* likewise */
        "Zg==Zm8=",  /* padding before the end */
        "Z===",      /* too much padding */
        "=Zm8",      /* padding first */
        "Zh==",      /* unused bits set: not the canonical encoding */
        "Zm9=",      /* likewise */
        "Zm9v!A==",  /* outside the alphabet */
        "Zm 9v",     /* whitespace */
        "Zm-_",      /* the URL-safe alphabet */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        void *data = NULL;
        size_t size = 0;
        if (fdt_base64_decode(bad[i], strlen(bad[i]), &data, &size) != -1)
            fail_msg("'%s' was accepted", bad[i]);
        assert_null(data);
    }
    /* A NUL inside the given length is not a digit. */
    void *data = NULL;
    size_t size = 0;
    assert_int_equal(fdt_base64_decode("Zm\0v", 4, &data, &size), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_round_trip),
        cmocka_unit_test(test_device_refusals),
        cmocka_unit_test(test_problem_round_trip_and_defaults),
        cmocka_unit_test(test_problem_refusals),
        cmocka_unit_test(test_timing),
        cmocka_unit_test(test_balance),
        cmocka_unit_test(test_result_round_trip),
        cmocka_unit_test(test_result_refusals),
        cmocka_unit_test(test_text_that_is_not_utf8),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_base64_known_vectors),
        cmocka_unit_test(test_base64_round_trip),
        cmocka_unit_test(test_base64_rejects_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
