/* test_spec.c - the stencil spec (tuner/engine/spec.c, docs/stencils.md): the six examples
 * of examples/specs/ parse into their normalized form; every kind of bad spec is refused
 * with its own message (the table below); the generators' weights are Fornberg's, the
 * second derivative's bit for bit those of stencil.c's built-in Laplacian; the Laplacian
 * spec's host reference and ideal bytes equal the built-in's; the hash follows the pattern
 * and nothing else; div(k grad u) evaluates as written by hand; no mangled text crashes.
 * Run from the repository root, as make's tests are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/spec.h"
#include "engine/stencil.h"

#define SPECS "examples/specs/"
#define ERR_MAX 512

/* cmocka 1.1's float assertion compares in single precision; these figures need double. */
#define assert_near(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (tol))

static fdt_spec spec; /* 17 KiB: off the stack */

static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *text = malloc(FDT_SPEC_TEXT_MAX + 1);
    assert_non_null(text);
    *len = fread(text, 1, FDT_SPEC_TEXT_MAX + 1, f);
    fclose(f);
    text[*len] = '\0';
    return text;
}

/* Parses text into spec, failing the test with the parser's message if it refuses it. */
static void parse_ok(const char *text, size_t len)
{
    char err[ERR_MAX] = "";
    if (fdt_spec_parse(text, len, &spec, err, sizeof err) != 0)
        fail_msg("refused: %s\n%s", err, text);
}

static void parse_file(const char *name)
{
    char path[256];
    size_t len;
    snprintf(path, sizeof path, SPECS "%s.json", name);
    char *text = read_text(path, &len);
    parse_ok(text, len);
    free(text);
}

static void parse_string(const char *text)
{
    parse_ok(text, strlen(text));
}

/* The tap of output o at input offset d with constant c (any coefficient), or NULL. */
static const fdt_spec_tap *tap_at(size_t o, int dx, int dy, int dz, int constant)
{
    for (size_t i = 0; i < spec.outputs[o].ntaps; i++) {
        const fdt_spec_tap *t = &spec.outputs[o].taps[i];
        if (t->dx == dx && t->dy == dy && t->dz == dz && t->constant == constant)
            return t;
    }
    return NULL;
}

/* ---- the examples ---- */

static void test_examples_parse_into_their_normalized_form(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        size_t ninputs, ncoefficients, nconstants, noutputs, ntaps;
        int reach[3];
        int zdepth; /* of input 0's column: its z-window holds -zdepth .. zdepth */
    } examples[] = {
        {"laplacian_r1", 1, 0, 3, 1, 9, {1, 1, 1}, 1},
        {"anisotropic", 1, 0, 3, 1, 9 + 5 + 3, {4, 2, 1}, 1},
        {"div_k_grad", 1, 1, 3, 1, 21, {1, 1, 1}, 1},
        {"acoustic8", 2, 1, 3, 1, 3 * 9 + 2, {4, 4, 4}, 4},
        {"gradient4", 1, 0, 3, 3, 4, {2, 2, 2}, 2},
        {"box27", 1, 0, 1, 1, 27, {1, 1, 1}, 1},
    };
    for (size_t e = 0; e < sizeof examples / sizeof examples[0]; e++) {
        parse_file(examples[e].name);
        assert_string_equal(spec.name, examples[e].name);
        assert_int_equal(spec.ninputs, examples[e].ninputs);
        assert_int_equal(spec.ncoefficients, examples[e].ncoefficients);
        assert_int_equal(spec.nconstants, examples[e].nconstants);
        assert_int_equal(spec.noutputs, examples[e].noutputs);
        assert_int_equal(spec.outputs[0].ntaps, examples[e].ntaps);
        assert_memory_equal(spec.reach, examples[e].reach, sizeof spec.reach);
        assert_int_equal(spec.hold[0].lo, -examples[e].zdepth);
        assert_int_equal(spec.hold[0].hi, examples[e].zdepth);
        const int *r = examples[e].reach;
        assert_int_equal(spec.radius, r[0] > r[1] ? (r[0] > r[2] ? r[0] : r[2])
                                                  : (r[1] > r[2] ? r[1] : r[2]));
    }
    /* The wave update reads u_prev and v2 at the point alone: a one-plane z-window and no
     * tile for either; u off its column only in its own plane, 4 away in x and y. */
    parse_file("acoustic8");
    for (int f = 1; f <= 2; f++) {
        assert_true(spec.hold[f].lo == 0 && spec.hold[f].hi == 0);
        assert_true(spec.hold[f].zlo > spec.hold[f].zhi);
    }
    const fdt_spec_hold u = spec.hold[0];
    assert_true(u.zlo == 0 && u.zhi == 0 && u.rx == 4 && u.ry == 4);
    assert_non_null(tap_at(0, 0, 0, 0, -1)); /* 2u - u_prev: one tap each, no constant */
    parse_file("div_k_grad");
    assert_true(spec.hold[1].lo == -1 && spec.hold[1].hi == 1);
    parse_file("box27"); /* every plane of the 3x3x3 box off the column */
    assert_true(spec.hold[0].zlo == -1 && spec.hold[0].zhi == 1);
    assert_true(spec.hold[0].rx == 1 && spec.hold[0].ry == 1);
    parse_file("gradient4");
    assert_string_equal(spec.outputs[2].name, "du_dz");
    for (size_t o = 0; o < 3; o++)
        assert_int_equal(spec.outputs[o].ntaps, 4); /* the zero centre dropped */
}

/* laplacian_r1's taps, in the canonical order (input, dz, dy, dx, ..., constant): the
 * built-in's 7-point Laplacian, its centre once per axis constant. */
static void test_laplacian_r1_taps_in_canonical_order(void **state)
{
    (void)state;
    static const fdt_spec_tap want[] = {
        {0, 0, 0, -1, -1, 0, 0, 0, 2, 1.0},  {0, 0, -1, 0, -1, 0, 0, 0, 1, 1.0},
        {0, -1, 0, 0, -1, 0, 0, 0, 0, 1.0},  {0, 0, 0, 0, -1, 0, 0, 0, 0, -2.0},
        {0, 0, 0, 0, -1, 0, 0, 0, 1, -2.0},  {0, 0, 0, 0, -1, 0, 0, 0, 2, -2.0},
        {0, 1, 0, 0, -1, 0, 0, 0, 0, 1.0},   {0, 0, 1, 0, -1, 0, 0, 0, 1, 1.0},
        {0, 0, 0, 1, -1, 0, 0, 0, 2, 1.0},
    };
    parse_file("laplacian_r1");
    assert_int_equal(spec.outputs[0].ntaps, 9);
    for (size_t i = 0; i < 9; i++) {
        const fdt_spec_tap *t = &spec.outputs[0].taps[i], *w = &want[i];
        assert_int_equal(t->input, w->input);
        assert_int_equal(t->dx, w->dx);
        assert_int_equal(t->dy, w->dy);
        assert_int_equal(t->dz, w->dz);
        assert_int_equal(t->coefficient, -1);
        assert_int_equal(t->constant, w->constant);
        assert_true(t->weight == w->weight);
    }
}

/* ---- generators ---- */

/* Fornberg's central weights w[R][k], k = 0..R, accuracy order 2R; w_-k = -w_k (first
 * derivative) or w_k (second). */
static const double first_weights[5][5] = {
    {0},
    {0, 1.0 / 2},
    {0, 2.0 / 3, -1.0 / 12},
    {0, 3.0 / 4, -3.0 / 20, 1.0 / 60},
    {0, 4.0 / 5, -1.0 / 5, 4.0 / 105, -1.0 / 280},
};
static const double second_weights[5][5] = {
    {0},
    {-2.0, 1.0},
    {-5.0 / 2, 4.0 / 3, -1.0 / 12},
    {-49.0 / 18, 3.0 / 2, -3.0 / 20, 1.0 / 90},
    {-205.0 / 72, 8.0 / 5, -1.0 / 5, 8.0 / 315, -1.0 / 560},
};

static void parse_derivative(int derivative, int order, const char *axes, const char *scale)
{
    char text[512];
    snprintf(text, sizeof text,
             "{\"fdtune_stencil\": 1, \"name\": \"d\", \"inputs\": [\"u\"], "
             "\"constants\": [\"s\"], \"outputs\": {\"f\": [{\"derivative\": %d, \"of\": \"u\", "
             "\"order\": %d, \"axes\": \"%s\", \"scale\": %s}]}}",
             derivative, order, axes, scale);
    parse_string(text);
}

static void test_generator_weights_are_fornbergs(void **state)
{
    (void)state;
    for (int R = 1; R <= 4; R++)
        for (int d = 1; d <= 2; d++) {
            parse_derivative(d, 2 * R, "y", "\"s\"");
            const double *w = d == 1 ? first_weights[R] : second_weights[R];
            assert_int_equal(spec.outputs[0].ntaps, d == 1 ? 2 * R : 2 * R + 1);
            for (int k = -R; k <= R; k++) {
                const double want = d == 1 && k < 0 ? -w[-k] : w[abs(k)];
                const fdt_spec_tap *t = tap_at(0, 0, k, 0, 0);
                if (want == 0) {
                    assert_null(t);
                    continue;
                }
                assert_non_null(t);
                assert_true(t->weight == want); /* exact: one division of exact integers */
            }
        }
}

/* The built-in's reference at one point of its one output, f. */
static double builtin_point(const fdt_stencil *s, const fdt_problem *p, const void *u,
                            const double *c, size_t at)
{
    const void *const in[] = {u};
    return fdt_stencil_point(s, p, in, c, 0, at, NULL);
}

/* stencil.c's weights, read through its reference: u a unit spike at +r along x and only
 * cx set, laplacian point returns exactly w[R][r]. The spec's second derivative must give
 * the same doubles. */
static void test_second_derivative_weights_equal_the_builtins(void **state)
{
    (void)state;
    const fdt_stencil *lap = fdt_stencil_find("laplacian");
    assert_non_null(lap);
    enum { N = 9 };
    static double u[N * N * N];
    const double c[3] = {1, 0, 0};
    for (int R = 1; R <= 4; R++) {
        const fdt_problem p = {.stencil = "laplacian", .nx = N, .ny = N, .nz = N, .radius = R,
                               .precision = FDT_DOUBLE};
        parse_derivative(2, 2 * R, "x", "\"s\"");
        const size_t centre = 4 + 4 * N + 4 * N * N;
        for (int r = 0; r <= R; r++) {
            memset(u, 0, sizeof u);
            u[centre + (size_t)r] = 1;
            const double builtin = builtin_point(lap, &p, u, c, centre);
            const fdt_spec_tap *t = tap_at(0, r, 0, 0, 0);
            assert_non_null(t);
            assert_true(t->weight == builtin);
        }
    }
}

/* ---- the host reference and the bytes model against the built-in ---- */

static double random_unit(void)
{
    return 2.0 * rand() / RAND_MAX - 1.0;
}

static void fill(void *field, fdt_precision precision, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (precision == FDT_FLOAT)
            ((float *)field)[i] = (float)random_unit();
        else
            ((double *)field)[i] = random_unit();
    }
}

/* An interior point of an nx x ny x nz grid whose taps reach r, at random. */
static size_t random_interior(int nx, int ny, int nz, int r)
{
    const size_t x = (size_t)(r + rand() % (nx - 2 * r));
    const size_t y = (size_t)(r + rand() % (ny - 2 * r));
    const size_t z = (size_t)(r + rand() % (nz - 2 * r));
    return x + (size_t)nx * (y + (size_t)ny * z);
}

/* The Laplacian of radius R as a spec: the second derivative of order 2R along x, y, z. */
static void laplacian_spec(int R)
{
    char text[512];
    snprintf(text, sizeof text,
             "{\"fdtune_stencil\": 1, \"name\": \"lap\", \"inputs\": [\"u\"], "
             "\"constants\": [\"cx\", \"cy\", \"cz\"], \"outputs\": {\"f\": [{\"derivative\": 2, "
             "\"of\": \"u\", \"order\": %d, \"axes\": \"xyz\", "
             "\"scale\": [\"cx\", \"cy\", \"cz\"]}]}}",
             2 * R);
    parse_string(text);
}

static void test_laplacian_spec_point_and_bytes_equal_the_builtins(void **state)
{
    (void)state;
    const fdt_stencil *lap = fdt_stencil_find("laplacian");
    enum { NX = 17, NY = 13, NZ = 11 }; /* odd, and unlike along each axis */
    static double field[NX * NY * NZ];
    srand(30);
    for (int R = 1; R <= 4; R++)
        for (int prec = FDT_FLOAT; prec <= FDT_DOUBLE; prec++) {
            const fdt_problem p = {.stencil = "laplacian", .nx = NX, .ny = NY, .nz = NZ,
                                   .radius = R, .precision = (fdt_precision)prec};
            laplacian_spec(R);
            fill(field, p.precision, NX * NY * NZ);
            const double h[3] = {0.5 + random_unit() / 4, 0.7, 1.3};
            double c[3];
            fdt_stencil_coefficients(lap, h, c);
            const void *fields[] = {field};
            for (int i = 0; i < 200; i++) {
                const size_t at = random_interior(NX, NY, NZ, R);
                const double want = builtin_point(lap, &p, field, c, at);
                const double got = fdt_spec_point(&spec, 0, fields, c, NX, NY, p.precision, at, NULL);
                assert_near(got, want, 1e-12 * (1 + fabs(want)));
            }
            const double bytes =
                fdt_spec_ideal_bytes(&spec, NX, NY, NZ, fdt_real_size(p.precision));
            assert_true(bytes == fdt_stencil_ideal_bytes(lap, &p));
        }
}

/* The other examples' bytes, each by its own count. */
static void test_ideal_bytes_of_the_other_examples(void **state)
{
    (void)state;
    const int nx = 31, ny = 19, nz = 23;
    const fdt_stencil *lap = fdt_stencil_find("laplacian");
    const double n = (double)nx * ny * nz;
    /* box27: all of u read (the interior grown by 1 each way is the grid), f written. */
    parse_file("box27");
    assert_true(fdt_spec_ideal_bytes(&spec, nx, ny, nz, 8) ==
                8 * (n + (nx - 2.0) * (ny - 2) * (nz - 2)));
    /* acoustic8: u over the star of radius 4 (the Laplacian's reads), u_prev and v2 over the
     * interior, u_next written: the Laplacian of radius 4 and two interiors more. */
    fdt_problem p = {.stencil = "laplacian", .nx = nx, .ny = ny, .nz = nz, .radius = 4,
                     .precision = FDT_FLOAT};
    const double interior4 = (nx - 8.0) * (ny - 8) * (nz - 8);
    parse_file("acoustic8");
    assert_true(fdt_spec_ideal_bytes(&spec, nx, ny, nz, 4) ==
                fdt_stencil_ideal_bytes(lap, &p) + 2 * 4 * interior4);
    /* gradient4: the three outputs read u over the star of radius 2, and write 3 interiors. */
    p.radius = 2;
    const double interior2 = (nx - 4.0) * (ny - 4) * (nz - 4);
    parse_file("gradient4");
    assert_true(fdt_spec_ideal_bytes(&spec, nx, ny, nz, 4) ==
                fdt_stencil_ideal_bytes(lap, &p) + 2 * 4 * interior2);
    /* No interior, no bytes. */
    assert_true(fdt_spec_ideal_bytes(&spec, 4, ny, nz, 4) == 0);
}

/* div(k grad u) with k averaged at half points, written out by hand. */
static double div_k_grad(const double *u, const double *k, const double c[3], size_t at,
                         const size_t stride[3])
{
    double acc = 0;
    for (int a = 0; a < 3; a++) {
        const size_t s = stride[a];
        const double k_plus = 0.5 * (k[at] + k[at + s]), k_minus = 0.5 * (k[at - s] + k[at]);
        acc += c[a] * (k_plus * (u[at + s] - u[at]) - k_minus * (u[at] - u[at - s]));
    }
    return acc;
}

static void test_div_k_grad_point_matches_the_formula(void **state)
{
    (void)state;
    enum { NX = 15, NY = 9, NZ = 11 };
    static double u[NX * NY * NZ], k[NX * NY * NZ];
    const size_t stride[3] = {1, NX, NX * NY};
    srand(31);
    fill(u, FDT_DOUBLE, NX * NY * NZ);
    for (size_t i = 0; i < NX * NY * NZ; i++)
        k[i] = 1.5 + random_unit(); /* a conductivity: positive */
    const double c[3] = {4.0, 2.25, 0.5};
    const void *fields[] = {u, k};
    parse_file("div_k_grad");
    for (int i = 0; i < 300; i++) {
        const size_t at = random_interior(NX, NY, NZ, 1);
        const double want = div_k_grad(u, k, c, at, stride);
        assert_near(fdt_spec_point(&spec, 0, fields, c, NX, NY, FDT_DOUBLE, at, NULL), want,
                    1e-12 * (1 + fabs(want)));
    }
}

/* ---- the hash ---- */

#define LAP_BODY "\"outputs\": {\"f\": [{\"derivative\": 2, \"of\": \"u\", \"order\": 2, "
static const char *const hash_same[] = {
    /* the reference */
    "{\"fdtune_stencil\": 1, \"name\": \"a\", \"inputs\": [\"u\"], \"constants\": [\"cx\", "
    "\"cy\", \"cz\"], " LAP_BODY "\"axes\": \"xyz\", \"scale\": [\"cx\", \"cy\", \"cz\"]}]}}",
    /* other names for the spec, the fields and the constants */
    "{\"fdtune_stencil\": 1, \"name\": \"b\", \"inputs\": [\"v\"], \"constants\": [\"p\", "
    "\"q\", \"r\"], \"outputs\": {\"g\": [{\"derivative\": 2, \"of\": \"v\", \"order\": 2, "
    "\"axes\": \"xyz\", \"scale\": [\"p\", \"q\", \"r\"]}]}}",
    /* keys in another order, other whitespace, a description */
    "{\n  \"outputs\": {\"f\": [{\"scale\": [\"cx\",\"cy\",\"cz\"],\"axes\":\"xyz\",\n"
    "    \"order\":2, \"of\":\"u\", \"derivative\":2}]},\n\t\"constants\":[\"cx\",\"cy\",\"cz\"],"
    " \"inputs\":[\"u\"], \"description\": \"the same\", \"name\":\"a\", \"fdtune_stencil\":1}",
    /* the same taps written one by one, in another order, with other numeric weights */
    "{\"fdtune_stencil\": 1, \"name\": \"a\", \"inputs\": [\"u\"], \"constants\": [\"cx\", "
    "\"cy\", \"cz\"], \"outputs\": {\"f\": ["
    "{\"tap\": \"u\", \"at\": [0, 0, 1], \"times\": \"cz\"},"
    "{\"tap\": \"u\", \"at\": [0, 0, -1], \"times\": \"cz\"},"
    "{\"tap\": \"u\", \"times\": \"cz\", \"weight\": -6},"
    "{\"tap\": \"u\", \"times\": \"cy\", \"weight\": -2},"
    "{\"tap\": \"u\", \"times\": \"cx\", \"weight\": -2},"
    "{\"derivative\": 2, \"of\": \"u\", \"order\": 2, \"axes\": \"yx\", \"scale\": [\"cy\", "
    "\"cx\"], \"weight\": 3}]}}",
};
static const char *const hash_other[] = {
    /* an offset: a 4th-order second derivative along z */
    "{\"fdtune_stencil\": 1, \"name\": \"a\", \"inputs\": [\"u\"], \"constants\": [\"cx\", "
    "\"cy\", \"cz\"], \"outputs\": {\"f\": ["
    "{\"derivative\": 2, \"of\": \"u\", \"order\": 2, \"axes\": \"xy\", \"scale\": [\"cx\", "
    "\"cy\"]}, {\"derivative\": 2, \"of\": \"u\", \"order\": 4, \"axes\": \"z\", \"scale\": "
    "\"cz\"}]}}",
    /* a field: the y part times a coefficient field */
    "{\"fdtune_stencil\": 1, \"name\": \"a\", \"inputs\": [\"u\"], \"coefficients\": [\"k\"], "
    "\"constants\": [\"cx\", \"cy\", \"cz\"], \"outputs\": {\"f\": ["
    "{\"derivative\": 2, \"of\": \"u\", \"order\": 2, \"axes\": \"xz\", \"scale\": [\"cx\", "
    "\"cz\"]}, {\"derivative\": 2, \"of\": \"u\", \"order\": 2, \"axes\": \"y\", \"scale\": "
    "\"cy\", \"coefficient\": \"k\"}]}}",
    /* which constant a weight uses: the y and z scales swapped */
    "{\"fdtune_stencil\": 1, \"name\": \"a\", \"inputs\": [\"u\"], \"constants\": [\"cx\", "
    "\"cy\", \"cz\"], " LAP_BODY "\"axes\": \"xyz\", \"scale\": [\"cx\", \"cz\", \"cy\"]}]}}",
    /* a second input read at the point */
    "{\"fdtune_stencil\": 1, \"name\": \"a\", \"inputs\": [\"u\", \"w\"], \"constants\": [\"cx\", "
    "\"cy\", \"cz\"], \"outputs\": {\"f\": [{\"tap\": \"w\"}, {\"derivative\": 2, \"of\": \"u\", "
    "\"order\": 2, \"axes\": \"xyz\", \"scale\": [\"cx\", \"cy\", \"cz\"]}]}}",
};

static void hash_of(const char *text, char out[17])
{
    parse_string(text);
    fdt_spec_hash(&spec, out);
}

static void test_hash_follows_the_pattern_alone(void **state)
{
    (void)state;
    char reference[17], h[17];
    hash_of(hash_same[0], reference);
    assert_int_equal(strlen(reference), 16);
    for (size_t i = 1; i < sizeof hash_same / sizeof hash_same[0]; i++) {
        hash_of(hash_same[i], h);
        if (strcmp(h, reference) != 0)
            fail_msg("hash_same[%zu]: %s, the reference %s", i, h, reference);
    }
    for (size_t i = 0; i < sizeof hash_other / sizeof hash_other[0]; i++) {
        hash_of(hash_other[i], h);
        if (strcmp(h, reference) == 0)
            fail_msg("hash_other[%zu] hashes as the reference", i);
    }
    /* The example is the same pattern as the reference. */
    parse_file("laplacian_r1");
    fdt_spec_hash(&spec, h);
    assert_string_equal(h, reference);
}

/* ---- bad specs ---- */

#define HEAD "{\"fdtune_stencil\": 1, \"name\": \"s\", \"inputs\": [\"u\"], "
#define TAP_F(term) HEAD "\"outputs\": {\"f\": [" term "]}}"
#define D2 "{\"derivative\": 2, \"of\": \"u\", \"order\": 2, \"axes\": \"x\""

typedef struct bad_spec {
    const char *what;
    const char *text;      /* NULL: made by make */
    char *(*make)(void);
    const char *message;
} bad_spec;

/* A valid spec padded past FDT_SPEC_TEXT_MAX with spaces. */
static char *make_oversized(void)
{
    char *t = malloc(FDT_SPEC_TEXT_MAX + 2);
    const char *body = TAP_F("{\"tap\": \"u\"}");
    memset(t, ' ', FDT_SPEC_TEXT_MAX + 1);
    memcpy(t, body, strlen(body));
    t[FDT_SPEC_TEXT_MAX + 1] = '\0';
    return t;
}

/* An output of FDT_SPEC_TERMS_MAX + 1 taps. */
static char *make_too_many_terms(void)
{
    char *t = malloc(FDT_SPEC_TEXT_MAX);
    strcpy(t, HEAD "\"outputs\": {\"f\": [");
    for (int i = 0; i <= FDT_SPEC_TERMS_MAX; i++)
        strcat(t, i ? ", {\"tap\": \"u\"}" : "{\"tap\": \"u\"}");
    strcat(t, "]}}");
    return t;
}

/* Ten 27-point boxes, every weight set: 270 taps before merging, more than
 * FDT_SPEC_TAPS_MAX. */
static char *make_too_many_taps(void)
{
    static const char box[] =
        "{\"box27\": \"u\", \"weights\": {\"center\": 1, \"face\": 1, \"edge\": 1, \"corner\": 2}}";
    char *t = malloc(FDT_SPEC_TEXT_MAX);
    strcpy(t, HEAD "\"outputs\": {\"f\": [");
    for (int i = 0; i < 10; i++)
        strcat(strcat(t, i ? ", " : ""), box);
    strcat(t, "]}}");
    return t;
}

static const bad_spec bad_specs[] = {
    {"over the size bound", NULL, make_oversized, "spec: 65537 bytes: the most is 65536"},
    {"nested too deep", "{\"a\": [[[[[[[1]]]]]]]}", NULL,
     "spec: nested deeper than 6 levels (at byte 11)"},
    {"not JSON", "stencil", NULL, "spec: line 1, column 7: '[' or '{' expected near 'stencil'"},
    {"trailing garbage", TAP_F("{\"tap\": \"u\"}") " x", NULL,
     "spec: line 1, column 87: end of file expected near 'x'"},
    {"a duplicate key", HEAD "\"inputs\": [\"v\"], \"outputs\": {}}", NULL,
     "spec: line 1, column 60: duplicate object key near '\"inputs\"'"},
    {"a number that overflows", TAP_F("{\"tap\": \"u\", \"weight\": 1e999}"), NULL,
     "spec: line 1, column 98: real number overflow near '1e999'"},
    {"not an object", "[1, 2]", NULL, "spec: must be an object"},
    {"no version", "{\"name\": \"s\", \"inputs\": [\"u\"]}", NULL,
     "fdtune_stencil: missing: a spec starts with \"fdtune_stencil\": 1"},
    {"another version", "{\"fdtune_stencil\": 2}", NULL,
     "fdtune_stencil: version 2 is not known: this reader reads 1"},
    {"a version not an integer", "{\"fdtune_stencil\": \"1\"}", NULL,
     "fdtune_stencil: must be the integer 1"},
    {"an unknown key", HEAD "\"colour\": 3, \"outputs\": {}}", NULL,
     "colour: unknown key (known here: fdtune_stencil, name, description, inputs, "
     "coefficients, constants, outputs)"},
    {"an unknown key of a term", TAP_F("{\"tap\": \"u\", \"wieght\": 2}"), NULL,
     "outputs.f[0].wieght: unknown key (known here: tap, at, weight, times, coefficient, "
     "coefficient_at)"},
    {"no name", "{\"fdtune_stencil\": 1, \"inputs\": [\"u\"]}", NULL,
     "name: missing: the stencil's name"},
    {"inputs not an array", "{\"fdtune_stencil\": 1, \"name\": \"s\", \"inputs\": \"u\"}", NULL,
     "inputs: must be an array of names"},
    {"no inputs", "{\"fdtune_stencil\": 1, \"name\": \"s\", \"inputs\": []}", NULL,
     "inputs: needs at least 1 name"},
    {"a weight not a number", TAP_F("{\"tap\": \"u\", \"weight\": \"2\"}"), NULL,
     "outputs.f[0].weight: must be a number"},
    {"a name not a name", "{\"fdtune_stencil\": 1, \"name\": \"s\", \"inputs\": [\"1u\"]}",
     NULL, "inputs[0]: \"1u\" is not a name: a letter or _, then letters, digits or _"},
    {"a name not a string", "{\"fdtune_stencil\": 1, \"name\": 7}", NULL,
     "name: must be a name (a string)"},
    {"a name too long", HEAD "\"constants\": [\"a23456789abcdef01\"]}", NULL,
     "constants[0]: \"a23456789abcdef01\" is longer than 16 characters"},
    {"a name twice in one list",
     "{\"fdtune_stencil\": 1, \"name\": \"s\", \"inputs\": [\"u\", \"u\"]}", NULL,
     "inputs[1]: \"u\" is already the name of an input"},
    {"a name of two kinds", HEAD "\"coefficients\": [\"k\"], \"constants\": [\"k\"]}", NULL,
     "constants[0]: \"k\" is already the name of a coefficient field"},
    {"an output named as a constant", HEAD "\"constants\": [\"f\"], " "\"outputs\": {\"f\": []}}",
     NULL, "outputs.f: \"f\" is already the name of a constant"},
    {"writing an input", HEAD "\"outputs\": {\"u\": [{\"tap\": \"u\"}]}}", NULL,
     "outputs.u: \"u\" is an input: inputs are only read, outputs only written"},
    {"a tap of an unknown field", TAP_F("{\"tap\": \"w\"}"), NULL,
     "outputs.f[0].tap: \"w\" is no input"},
    {"reading an output", HEAD "\"outputs\": {\"f\": [{\"tap\": \"g\"}], \"g\": [{\"tap\": \"u\"}]}}",
     NULL, "outputs.f[0].tap: \"g\" is an output: outputs are only written, inputs only read"},
    {"an offset out of range", TAP_F("{\"tap\": \"u\", \"at\": [0, 9, 0]}"), NULL,
     "outputs.f[0].at[1]: 9 is outside -8..8"},
    {"an offset of two numbers", TAP_F("{\"tap\": \"u\", \"at\": [1, 0]}"), NULL,
     "outputs.f[0].at: must be [dx, dy, dz]: three integers"},
    {"an offset not an integer", TAP_F("{\"tap\": \"u\", \"at\": [0, 0, 0.5]}"), NULL,
     "outputs.f[0].at[2]: must be an integer"},
    {"an odd order", TAP_F("{\"derivative\": 2, \"of\": \"u\", \"order\": 3, \"axes\": \"x\"}"),
     NULL, "outputs.f[0].order: must be an even order from 2 to 8, not 3"},
    {"a zero order", TAP_F("{\"derivative\": 2, \"of\": \"u\", \"order\": 0, \"axes\": \"x\"}"),
     NULL, "outputs.f[0].order: must be an even order from 2 to 8, not 0"},
    {"too large an order",
     TAP_F("{\"derivative\": 1, \"of\": \"u\", \"order\": 10, \"axes\": \"x\"}"), NULL,
     "outputs.f[0].order: must be an even order from 2 to 8, not 10"},
    {"an order not an integer",
     TAP_F("{\"derivative\": 1, \"of\": \"u\", \"order\": \"4\", \"axes\": \"x\"}"), NULL,
     "outputs.f[0].order: must be an integer: an even order from 2 to 8"},
    {"a third derivative", TAP_F("{\"derivative\": 3, \"of\": \"u\", \"order\": 2}"), NULL,
     "outputs.f[0].derivative: must be 1 or 2 (first or second), not 3"},
    {"a derivative of nothing", TAP_F("{\"derivative\": 1, \"order\": 2, \"axes\": \"x\"}"), NULL,
     "outputs.f[0].of: missing: the input it is taken of"},
    {"an unknown axis", TAP_F("{\"derivative\": 2, \"of\": \"u\", \"order\": 2, \"axes\": \"xw\"}"),
     NULL, "outputs.f[0].axes: 'w' is no axis: one or more of x, y, z"},
    {"an axis twice", TAP_F("{\"derivative\": 2, \"of\": \"u\", \"order\": 2, \"axes\": \"zxz\"}"),
     NULL, "outputs.f[0].axes: 'z' twice"},
    {"no axis", TAP_F("{\"derivative\": 2, \"of\": \"u\", \"order\": 2, \"axes\": \"\"}"), NULL,
     "outputs.f[0].axes: names no axis: one or more of x, y, z"},
    {"a scale per axis short", TAP_F(D2 ", \"scale\": [1, 2]}"), NULL,
     "outputs.f[0].scale: 2 entries for 1 axes: one per axis"},
    {"an unknown constant", TAP_F("{\"tap\": \"u\", \"times\": \"dt\"}"), NULL,
     "outputs.f[0].times: \"dt\" is no constant"},
    {"an unknown constant in a scale", TAP_F(D2 ", \"scale\": [\"h\"]}"), NULL,
     "outputs.f[0].scale[0]: \"h\" is no constant"},
    {"a scale neither number nor name", TAP_F(D2 ", \"scale\": true}"), NULL,
     "outputs.f[0].scale: must be a number or a constant's name"},
    {"an unknown coefficient field", TAP_F("{\"tap\": \"u\", \"coefficient\": \"k\"}"), NULL,
     "outputs.f[0].coefficient: \"k\" is no coefficient field"},
    {"a coefficient offset with no coefficient",
     TAP_F("{\"tap\": \"u\", \"coefficient_at\": [1, 0, 0]}"), NULL,
     "outputs.f[0].coefficient_at: needs \"coefficient\": the field read at this offset"},
    {"no outputs", HEAD "\"outputs\": {}}", NULL, "outputs: has no output"},
    {"no outputs key", HEAD "\"constants\": []}", NULL,
     "outputs: missing: each output's name and its terms"},
    {"an output with no terms", HEAD "\"outputs\": {\"f\": []}}", NULL, "outputs.f: has no terms"},
    {"terms not an array", HEAD "\"outputs\": {\"f\": {\"tap\": \"u\"}}}", NULL,
     "outputs.f: must be an array of terms"},
    {"a term not an object", TAP_F("[\"u\"]"), NULL, "outputs.f[0]: must be an object: a term"},
    {"a term of no kind", TAP_F("{\"weight\": 2}"), NULL,
     "outputs.f[0]: names no kind: a term is one of tap, derivative, box27"},
    {"a term of two kinds", TAP_F("{\"tap\": \"u\", \"box27\": \"u\"}"), NULL,
     "outputs.f[0]: is both a tap and a box27: a term is one of tap, derivative, box27"},
    {"too many inputs",
     "{\"fdtune_stencil\": 1, \"name\": \"s\", \"inputs\": [\"a\", \"b\", \"c\", \"d\", \"e\", "
     "\"f\", \"g\", \"h\", \"i\"]}", NULL, "inputs: 9 names: the most is 8"},
    {"too many fields read",
     "{\"fdtune_stencil\": 1, \"name\": \"s\", \"inputs\": [\"a\", \"b\", \"c\", \"d\", \"e\"], "
     "\"coefficients\": [\"f\", \"g\", \"h\", \"i\"]}", NULL,
     "coefficients: 9 fields read with the 5 inputs: the most is 8"},
    {"too many constants",
     HEAD "\"constants\": [\"a\", \"b\", \"c\", \"d\", \"e\", \"f\", \"g\", \"h\", \"i\", \"j\", "
     "\"k\", \"l\", \"m\", \"n\", \"o\", \"p\", \"q\"]}", NULL,
     "constants: 17 names: the most is 16"},
    {"too many outputs",
     HEAD "\"outputs\": {\"a\": [], \"b\": [], \"c\": [], \"d\": [], \"e\": []}}", NULL,
     "outputs: 5 outputs: the most is 4"},
    {"too many terms", NULL, make_too_many_terms, "outputs.f: 65 terms: the most is 64"},
    {"too many taps", NULL, make_too_many_taps,
     "outputs.f[9]: more than 256 taps in output \"f\" once generators are expanded"},
    {"a term all zero", TAP_F("{\"tap\": \"u\", \"weight\": 0}"), NULL,
     "outputs.f[0]: the term is all zero"},
    {"a box all zero", TAP_F("{\"box27\": \"u\", \"weights\": {\"edge\": 0}}"), NULL,
     "outputs.f[0]: the term is all zero"},
    {"a box with an unknown class", TAP_F("{\"box27\": \"u\", \"weights\": {\"side\": 1}}"), NULL,
     "outputs.f[0].weights.side: unknown key (known here: center, face, edge, corner)"},
    {"a weight that overflows", TAP_F(D2 ", \"scale\": 1e300, \"weight\": 1e300}"), NULL,
     "outputs.f[0]: a weight is not finite: the product of the term's numbers overflows"},
    {"terms that cancel", TAP_F("{\"tap\": \"u\", \"weight\": 2}, {\"tap\": \"u\", \"weight\": -2}"),
     NULL, "outputs.f: its terms cancel out: no tap is left"},
    {"an input no term reads",
     "{\"fdtune_stencil\": 1, \"name\": \"s\", \"inputs\": [\"u\", \"v\"], "
     "\"outputs\": {\"f\": [{\"tap\": \"u\"}]}}", NULL, "inputs[1]: \"v\" is read by no term"},
    {"a coefficient field no term reads", HEAD "\"coefficients\": [\"k\"], "
     "\"outputs\": {\"f\": [{\"tap\": \"u\"}]}}", NULL,
     "coefficients[0]: \"k\" is read by no term"},
    {"a constant no term uses", HEAD "\"constants\": [\"dt\"], "
     "\"outputs\": {\"f\": [{\"tap\": \"u\"}]}}", NULL, "constants[0]: \"dt\" is used by no term"},
    {"a description not a string", HEAD "\"description\": 1}", NULL,
     "description: must be a string"},
};

static void test_bad_specs_refused_each_with_its_message(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof bad_specs / sizeof bad_specs[0]; i++) {
        const bad_spec *b = &bad_specs[i];
        char *made = b->make ? b->make() : NULL;
        const char *text = made ? made : b->text;
        char err[ERR_MAX] = "";
        const int rc = fdt_spec_parse(text, strlen(text), &spec, err, sizeof err);
        if (rc != -1 || strcmp(err, b->message) != 0) {
            printf("%s: rc %d\n  got:  %s\n  want: %s\n", b->what, rc, err, b->message);
            failures++;
        }
        free(made);
    }
    assert_int_equal(failures, 0);
}

/* Every prefix of every example, and every byte of each replaced by each of a few others:
 * each parse ends with 0 or -1 and a message, never a crash (run under the sanitizers by
 * make's SAN=1 pass). */
static void test_mangled_examples_never_crash(void **state)
{
    (void)state;
    static const char *const names[] = {"laplacian_r1", "anisotropic", "div_k_grad",
                                        "acoustic8", "gradient4", "box27"};
    static const char others[] = {'\0', '"', '[', '{', '}', '9', '-', 'e', '\\'};
    for (size_t e = 0; e < sizeof names / sizeof names[0]; e++) {
        char path[256];
        size_t len;
        snprintf(path, sizeof path, SPECS "%s.json", names[e]);
        char *text = read_text(path, &len);
        char err[ERR_MAX];
        for (size_t n = 0; n < len; n++)
            if (fdt_spec_parse(text, n, &spec, err, sizeof err) != 0)
                assert_true(strchr(err, ':') != NULL);
        for (size_t i = 0; i < len; i++)
            for (size_t k = 0; k < sizeof others; k++) {
                const char kept = text[i];
                text[i] = others[k];
                if (fdt_spec_parse(text, len, &spec, err, sizeof err) != 0)
                    assert_true(strchr(err, ':') != NULL);
                text[i] = kept;
            }
        free(text);
    }
}

/* A process makes rows of at most FDT_STENCIL_SPECS_MAX patterns (docs/protocol.md): the
 * next is refused with the reason, one of a pattern it knows is still found, and the rows
 * made before stay. */
static void test_specs_a_process_holds_are_bounded(void **state)
{
    (void)state;
    char text[256], err[256];
    const fdt_stencil *first = NULL;
    int made = 0, refused = 0;
    for (int i = 0; i < 9 * 9 * 9 && !refused; i++) {
        const int dx = i % 9 - 4, dy = i / 9 % 9 - 4, dz = i / 81 - 4;
        if (!dx && !dy && !dz)
            continue; /* reaches nothing: refused for another reason */
        snprintf(text, sizeof text, "{\"fdtune_stencil\": 1, \"name\": \"b\", \"inputs\": "
                 "[\"u\"], \"outputs\": {\"f\": [{\"tap\": \"u\", \"at\": [%d, %d, %d]}]}}",
                 dx, dy, dz);
        const fdt_stencil *st = fdt_stencil_from_text(text, strlen(text), err, sizeof err);
        if (!st) {
            refused = 1;
            assert_non_null(strstr(err, "the most it takes"));
        } else {
            first = first ? first : st;
            made++;
        }
    }
    assert_true(refused);
    assert_int_equal(made, FDT_STENCIL_SPECS_MAX); /* no other test here makes rows */
    assert_ptr_equal(fdt_stencil_find(first->name), first);
    assert_ptr_equal(fdt_stencil_from_text(first->text, strlen(first->text), err, sizeof err),
                     first);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_examples_parse_into_their_normalized_form),
        cmocka_unit_test(test_laplacian_r1_taps_in_canonical_order),
        cmocka_unit_test(test_generator_weights_are_fornbergs),
        cmocka_unit_test(test_second_derivative_weights_equal_the_builtins),
        cmocka_unit_test(test_laplacian_spec_point_and_bytes_equal_the_builtins),
        cmocka_unit_test(test_ideal_bytes_of_the_other_examples),
        cmocka_unit_test(test_div_k_grad_point_matches_the_formula),
        cmocka_unit_test(test_hash_follows_the_pattern_alone),
        cmocka_unit_test(test_bad_specs_refused_each_with_its_message),
        cmocka_unit_test(test_mangled_examples_never_crash),
        cmocka_unit_test(test_specs_a_process_holds_are_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
