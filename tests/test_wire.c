/* test_wire.c - the JSON shapes of the worker pipe and the socket (tuner/engine/wire.c) and
 * the frames code objects travel in (common/frame.c): every shape survives a trip through
 * JSON text unchanged, every frame size a trip through a stream cut anywhere, and each kind
 * of bad field or frame is refused with a message that names it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "frame.h"
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
                           .precision = FDT_FLOAT, .cache = FDT_CACHE_PERSIST, .pitch = 520,
                           .offset = 4};
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
    assert_true(fdt_problem_dense(&back));
    json_decref(j);

    /* A pitch of nx is the dense layout, kept in its one form (0). */
    j = json_pack("{s:i, s:i, s:i, s:i}", "nx", 64, "ny", 32, "nz", 16, "pitch", 64);
    assert_int_equal(fdt_wire_problem_parse(j, &back, err, sizeof err), 0);
    assert_int_equal(back.pitch, 0);
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
        {"pitch", "63", "pitch 63 is out of range: a row pitch must be nx (64) to nx + 4096"},
        {"pitch", "4161", "pitch 4161 is out of range"},
        {"pitch", "\"auto\"", "'pitch' must be an integer"},
        {"offset", "32", "offset 32 is out of range: 0 to 31 points (255 bytes) in double"},
        {"offset", "-1", "'offset' must be from 0 to 256"},
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

/* ---- code frames ---- */

/* A frame as fdt_frame_write writes it, in memory. */
static char *framed(const void *data, size_t size, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    assert_non_null(f);
    assert_int_equal(fdt_frame_write(f, data, size), 0);
    assert_int_equal(fclose(f), 0);
    return text;
}

/* Feeds text to a frame begun for size bytes, piece bytes at a time; the last state. */
static fdt_frame_state feed_in_pieces(fdt_frame *f, const char *text, size_t len, size_t piece,
                                      char *why, size_t whylen)
{
    fdt_frame_state st = FDT_FRAME_MORE;
    for (size_t at = 0; at < len && st == FDT_FRAME_MORE;) {
        const size_t n = len - at < piece ? len - at : piece;
        size_t used;
        st = fdt_frame_feed(f, text + at, n, &used, why, whylen);
        assert_true(used <= n);
        if (st == FDT_FRAME_MORE)
            assert_int_equal(used, n);
        at += used;
    }
    return st;
}

/* Every size round the three bin headers' bounds (0, 255 | 256, 65535 | 65536) and a large
 * one come back whole, however the stream cuts them, and the bytes after a frame are left
 * to the lines that follow. */
static void test_frame_round_trip(void **state)
{
    (void)state;
    const size_t sizes[] = {0, 1, 2, 7, 254, 255, 256, 257, 65535, 65536, 65537,
                            (size_t)24 << 20};
    const size_t pieces[] = {1, 3, 4096, (size_t)-1};
    unsigned char *bytes = malloc(sizes[sizeof sizes / sizeof sizes[0] - 1]);
    assert_non_null(bytes);
    for (size_t i = 0; i < sizes[sizeof sizes / sizeof sizes[0] - 1]; i++)
        bytes[i] = (unsigned char)(i * 151 + 7); /* every value, in no simple order */
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t len;
        char *text = framed(bytes, sizes[s], &len);
        for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
            if (pieces[p] == 1 && sizes[s] > 65537)
                continue; /* a byte at a time: the small ones say enough */
            fdt_frame f;
            char why[256] = "";
            assert_int_equal(fdt_frame_begin(&f, sizes[s], why, sizeof why), 0);
            assert_int_equal(feed_in_pieces(&f, text, len, pieces[p], why, sizeof why),
                             FDT_FRAME_DONE);
            size_t size = 99;
            void *back = fdt_frame_take(&f, &size);
            assert_non_null(back);
            assert_int_equal(size, sizes[s]);
            assert_memory_equal(back, bytes, size);
            free(back);
            assert_null(f.buf);
        }
        /* A line that follows in the same read is not the frame's. */
        char *more = realloc(text, len + 3);
        assert_non_null(more);
        memcpy(more + len, "{}\n", 3);
        fdt_frame f;
        char why[256];
        size_t used;
        assert_int_equal(fdt_frame_begin(&f, sizes[s], why, sizeof why), 0);
        assert_int_equal(fdt_frame_feed(&f, more, len + 3, &used, why, sizeof why),
                         FDT_FRAME_DONE);
        assert_int_equal(used, len);
        fdt_frame_free(&f);
        free(more);
    }
    free(bytes);
}

/* A frame cut short is never whole: each of its prefixes asks for more. */
static void test_frame_truncated(void **state)
{
    (void)state;
    const unsigned char bytes[300] = {1, 2, 3};
    size_t len;
    char *text = framed(bytes, sizeof bytes, &len);
    for (size_t cut = 0; cut < len; cut++) {
        fdt_frame f;
        char why[256];
        size_t used;
        assert_int_equal(fdt_frame_begin(&f, sizeof bytes, why, sizeof why), 0);
        assert_int_equal(fdt_frame_feed(&f, text, cut, &used, why, sizeof why),
                         FDT_FRAME_MORE);
        assert_int_equal(used, cut);
        fdt_frame_free(&f);
    }
    free(text);
}

/* Over FDT_FRAME_MAX: the writer writes nothing, the reader allocates nothing. */
static void test_frame_oversized(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    assert_int_equal(fdt_frame_write(out, "", FDT_FRAME_MAX + 1), -1);
    fclose(out);
    assert_int_equal(len, 0);
    free(text);
    fdt_frame f;
    char why[256] = "";
    assert_int_equal(fdt_frame_begin(&f, FDT_FRAME_MAX + 1, why, sizeof why), -1);
    assert_null(f.buf);
    assert_contains(why, "over the limit of 268435456");
    fdt_frame_free(&f); /* harmless on a frame refused */
}

/* Each way a frame can disagree with its line is refused, with what was wrong. */
static void test_frame_refusals(void **state)
{
    (void)state;
    static const struct {
        size_t announced;
        const char *bytes;
        size_t len;
        const char *why;
    } cases[] = {
        /* a msgpack string, not a bin */
        {3, "\xa3" "abc", 4, "not an object whose first byte is 0xa3"},
        /* an array header that would have msgpack-c allocate 2^32 elements */
        {4, "\xdd\xff\xff\xff\xff", 5, "first byte is 0xdd"},
        /* a JSON line where the frame should be */
        {2, "{}", 2, "first byte is 0x7b"},
        /* a bin longer than announced */
        {3, "\xc4\x05" "abc", 5, "runs past the 3 bytes its line announced"},
        /* a bin shorter than announced, and a bin 16 likewise */
        {3, "\xc4\x01" "abc", 5, "holds 1 bytes where its line announced 3"},
        {3, "\xc5\x00\x02" "abc", 6, "holds 2 bytes where its line announced 3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fdt_frame f;
        char why[256] = "";
        size_t used;
        assert_int_equal(fdt_frame_begin(&f, cases[i].announced, why, sizeof why), 0);
        if (fdt_frame_feed(&f, cases[i].bytes, cases[i].len, &used, why, sizeof why) !=
            FDT_FRAME_BAD)
            fail_msg("case %zu was not refused", i);
        assert_contains(why, cases[i].why);
        fdt_frame_free(&f);
    }
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
        cmocka_unit_test(test_frame_round_trip),
        cmocka_unit_test(test_frame_truncated),
        cmocka_unit_test(test_frame_oversized),
        cmocka_unit_test(test_frame_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
