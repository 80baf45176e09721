/* spec.c - a user's stencil spec parsed, validated and normalized (spec.h); the format and
 * its messages: docs/stencils.md. The text is bounded (size, nesting) before jansson sees
 * it; then the names are read first, so that every term is checked against all of them;
 * each term expands into raw taps of its output; then each output's taps are sorted,
 * merged and stripped of zeros, and a name no tap uses is refused. */
#include "engine/spec.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashes.h"

/* A location's room: names are at most FDT_SPEC_NAME_MAX characters and any other text a
 * message shows is cut to SHOWN_MAX, so a location never nears it. */
#define LOC_MAX 128
#define SHOWN_MAX 32
#define NAME_SIZE (FDT_SPEC_NAME_MAX + 1)

typedef struct parser {
    fdt_spec *spec;
    char *err;
    size_t errlen;
} parser;

/* Writes "loc: what" into the parser's error; returns -1, the parse's failure. */
__attribute__((format(printf, 3, 4)))
static int fail(parser *p, const char *loc, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (p->errlen > 0)
        snprintf(p->err, p->errlen, "%s: %s", loc, what);
    return -1;
}

/* text as a message shows it: cut to SHOWN_MAX characters, anything but printable ASCII as
 * '?', so that no user text can garble a message or a terminal. */
static void shown(char out[SHOWN_MAX + 4], const char *text)
{
    size_t i = 0;
    for (; text[i] != '\0' && i < SHOWN_MAX; i++)
        out[i] = text[i] >= ' ' && text[i] <= '~' ? text[i] : '?';
    strcpy(out + i, text[i] != '\0' ? "..." : "");
}

static void loc_key(char out[LOC_MAX], const char *loc, const char *key)
{
    char k[SHOWN_MAX + 4];
    shown(k, key);
    snprintf(out, LOC_MAX, "%.90s%s%s", loc, *loc ? "." : "", k); /* bounded, as above */
}

static void loc_index(char out[LOC_MAX], const char *loc, size_t i)
{
    snprintf(out, LOC_MAX, "%.100s[%zu]", loc, i); /* bounded: a location stays short */
}

static int listed(const char *const *list, const char *s)
{
    for (size_t i = 0; list[i]; i++)
        if (strcmp(list[i], s) == 0)
            return 1;
    return 0;
}

/* Refuses any key of obj that known (NULL-terminated) does not list, naming those it does. */
static int check_keys(parser *p, const char *loc, json_t *obj, const char *const *known)
{
    const char *key;
    json_t *value;
    json_object_foreach(obj, key, value) {
        (void)value;
        if (listed(known, key))
            continue;
        char at[LOC_MAX], names[256] = "";
        loc_key(at, loc, key);
        for (size_t i = 0; known[i]; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     i ? ", " : "", known[i]);
        return fail(p, at, "unknown key (known here: %s)", names);
    }
    return 0;
}

/* The value at key of obj, or NULL with "loc.key: missing: what" said. */
static json_t *required(parser *p, const char *loc, json_t *obj, const char *key,
                        const char *what)
{
    json_t *v = json_object_get(obj, key);
    if (!v) {
        char at[LOC_MAX];
        loc_key(at, loc, key);
        fail(p, at, "missing: %s", what);
    }
    return v;
}

/* ---- names ---- */

static int name_start(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static int name_char(char c)
{
    return name_start(c) || (c >= '0' && c <= '9');
}

/* Copies s into out where it is a name: [A-Za-z_][A-Za-z0-9_]*, 1 to FDT_SPEC_NAME_MAX. */
static int check_name(parser *p, const char *loc, const char *s, char out[NAME_SIZE])
{
    char sh[SHOWN_MAX + 4];
    shown(sh, s);
    const size_t n = strlen(s);
    if (n > FDT_SPEC_NAME_MAX)
        return fail(p, loc, "\"%s\" is longer than %d characters", sh, FDT_SPEC_NAME_MAX);
    int ok = n > 0 && name_start(s[0]);
    for (size_t i = 1; ok && i < n; i++)
        ok = name_char(s[i]);
    if (!ok)
        return fail(p, loc, "\"%s\" is not a name: a letter or _, then letters, digits or _",
                    sh);
    memcpy(out, s, n + 1);
    return 0;
}

static int check_name_value(parser *p, const char *loc, json_t *v, char out[NAME_SIZE])
{
    if (!json_is_string(v))
        return fail(p, loc, "must be a name (a string)");
    return check_name(p, loc, json_string_value(v), out);
}

static int find_name(const char (*names)[NAME_SIZE], size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return (int)i;
    return -1;
}

static int find_output(const fdt_spec *s, const char *name)
{
    for (size_t i = 0; i < s->noutputs; i++)
        if (strcmp(s->outputs[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* What name already names in the spec ("an input" ...), or NULL: names are unique across
 * inputs, outputs, coefficient fields and constants. */
static const char *name_use(const fdt_spec *s, const char *name)
{
    if (find_name(s->inputs, s->ninputs, name) >= 0)
        return "an input";
    if (find_name(s->coefficients, s->ncoefficients, name) >= 0)
        return "a coefficient field";
    if (find_name(s->constants, s->nconstants, name) >= 0)
        return "a constant";
    if (find_output(s, name) >= 0)
        return "an output";
    return NULL;
}

static int check_unique(parser *p, const char *loc, const char *name)
{
    const char *use = name_use(p->spec, name);
    return use ? fail(p, loc, "\"%s\" is already the name of %s", name, use) : 0;
}

/* The list of names at key of root (inputs, coefficients, constants) into names. */
static int parse_name_list(parser *p, json_t *root, const char *key, size_t least, size_t most,
                           char (*names)[NAME_SIZE], size_t *count)
{
    json_t *list = json_object_get(root, key);
    if (!list && least == 0)
        return 0;
    if (!list)
        return fail(p, key, "missing: a list of names");
    if (!json_is_array(list))
        return fail(p, key, "must be an array of names");
    if (json_array_size(list) < least)
        return fail(p, key, "needs at least %zu name", least);
    if (json_array_size(list) > most)
        return fail(p, key, "%zu names: the most is %zu", json_array_size(list), most);
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) {
        char at[LOC_MAX], name[NAME_SIZE];
        loc_index(at, key, i);
        if (check_name_value(p, at, v, name) || check_unique(p, at, name))
            return -1;
        memcpy(names[(*count)++], name, NAME_SIZE);
    }
    return 0;
}

/* The index among names (each a what: "input", "constant" ...) of the name v gives, or -1
 * with the error said. An output's name is refused as such: outputs are never read. */
static int name_ref(parser *p, const char *loc, json_t *v, const char (*names)[NAME_SIZE],
                    size_t n, const char *what)
{
    char name[NAME_SIZE];
    if (check_name_value(p, loc, v, name))
        return -1;
    const int i = find_name(names, n, name);
    if (i >= 0)
        return i;
    if (find_output(p->spec, name) >= 0)
        return fail(p, loc, "\"%s\" is an output: outputs are only written, inputs only read",
                    name);
    return fail(p, loc, "\"%s\" is no %s", name, what);
}

static int input_ref(parser *p, const char *loc, json_t *v)
{
    return name_ref(p, loc, v, p->spec->inputs, p->spec->ninputs, "input");
}

static int coefficient_ref(parser *p, const char *loc, json_t *v)
{
    return name_ref(p, loc, v, p->spec->coefficients, p->spec->ncoefficients,
                    "coefficient field");
}

static int constant_ref(parser *p, const char *loc, json_t *v)
{
    return name_ref(p, loc, v, p->spec->constants, p->spec->nconstants, "constant");
}

/* ---- numbers ---- */

/* *out = the number at key of obj, or fallback where obj has none. jansson refuses a
 * number that overflows a double, so every number it gives is finite. */
static int optional_number(parser *p, const char *loc, json_t *obj, const char *key,
                           double fallback, double *out)
{
    json_t *v = json_object_get(obj, key);
    *out = fallback;
    if (!v)
        return 0;
    char at[LOC_MAX];
    loc_key(at, loc, key);
    if (!json_is_number(v))
        return fail(p, at, "must be a number");
    *out = json_number_value(v);
    return 0;
}

/* *out = the integer at key of obj, which must be there; what says what it is. */
static int required_int(parser *p, const char *loc, json_t *obj, const char *key,
                        const char *what, json_int_t *out)
{
    json_t *v = required(p, loc, obj, key, what);
    if (!v)
        return -1;
    char at[LOC_MAX];
    loc_key(at, loc, key);
    if (!json_is_integer(v))
        return fail(p, at, "must be an integer: %s", what);
    *out = json_integer_value(v);
    return 0;
}

/* [dx, dy, dz], each within -FDT_SPEC_OFFSET_MAX..FDT_SPEC_OFFSET_MAX. */
static int parse_offset(parser *p, const char *loc, json_t *v, int d[3])
{
    if (!json_is_array(v) || json_array_size(v) != 3)
        return fail(p, loc, "must be [dx, dy, dz]: three integers");
    for (size_t a = 0; a < 3; a++) {
        json_t *e = json_array_get(v, a);
        char at[LOC_MAX];
        loc_index(at, loc, a);
        if (!json_is_integer(e))
            return fail(p, at, "must be an integer");
        const json_int_t x = json_integer_value(e);
        if (x < -FDT_SPEC_OFFSET_MAX || x > FDT_SPEC_OFFSET_MAX)
            return fail(p, at, "%lld is outside %d..%d", (long long)x, -FDT_SPEC_OFFSET_MAX,
                        FDT_SPEC_OFFSET_MAX);
        d[a] = (int)x;
    }
    return 0;
}

static int optional_offset(parser *p, const char *loc, json_t *obj, const char *key, int d[3])
{
    json_t *v = json_object_get(obj, key);
    d[0] = d[1] = d[2] = 0;
    if (!v)
        return 0;
    char at[LOC_MAX];
    loc_key(at, loc, key);
    return parse_offset(p, at, v, d);
}

/* ---- terms ---- */

/* What multiplies every tap a term makes: its weight, its constant (-1: none) and its
 * coefficient field (-1: none) at its offset. */
typedef struct factor {
    double weight;
    int constant;
    int coefficient;
    int cd[3];
} factor;

/* The term's weight, times and coefficient keys (check_keys has refused those its kind
 * does not take). */
static int parse_factor(parser *p, const char *loc, json_t *term, factor *f)
{
    char at[LOC_MAX];
    f->constant = f->coefficient = -1;
    if (optional_number(p, loc, term, "weight", 1.0, &f->weight))
        return -1;
    json_t *times = json_object_get(term, "times");
    loc_key(at, loc, "times");
    if (times && (f->constant = constant_ref(p, at, times)) < 0)
        return -1;
    json_t *coefficient = json_object_get(term, "coefficient");
    loc_key(at, loc, "coefficient");
    if (coefficient && (f->coefficient = coefficient_ref(p, at, coefficient)) < 0)
        return -1;
    loc_key(at, loc, "coefficient_at");
    if (!coefficient && json_object_get(term, "coefficient_at"))
        return fail(p, at, "needs \"coefficient\": the field read at this offset");
    return optional_offset(p, loc, term, "coefficient_at", f->cd);
}

/* Appends the tap weight * constant * coefficient * input(at + d) to o; a zero weight (a
 * first derivative's centre) adds nothing. */
static int add_tap(parser *p, const char *loc, fdt_spec_output *o, const factor *f, int input,
                   const int d[3], int constant, double weight)
{
    if (!isfinite(weight))
        return fail(p, loc, "a weight is not finite: the product of the term's numbers "
                            "overflows");
    if (weight == 0)
        return 0;
    if (o->ntaps == FDT_SPEC_TAPS_MAX)
        return fail(p, loc, "more than %d taps in output \"%s\" once generators are expanded",
                    FDT_SPEC_TAPS_MAX, o->name);
    o->taps[o->ntaps++] = (fdt_spec_tap){
        .input = (int8_t)input, .dx = (int8_t)d[0], .dy = (int8_t)d[1], .dz = (int8_t)d[2],
        .coefficient = (int8_t)f->coefficient, .cdx = (int8_t)f->cd[0],
        .cdy = (int8_t)f->cd[1], .cdz = (int8_t)f->cd[2], .constant = (int8_t)constant,
        .weight = weight};
    return 0;
}

static int parse_tap(parser *p, const char *loc, json_t *term, fdt_spec_output *o)
{
    char at[LOC_MAX];
    factor f;
    int d[3];
    loc_key(at, loc, "tap");
    const int input = input_ref(p, at, json_object_get(term, "tap"));
    if (input < 0 || parse_factor(p, loc, term, &f) ||
        optional_offset(p, loc, term, "at", d))
        return -1;
    return add_tap(p, loc, o, &f, input, d, f.constant, f.weight);
}

static int64_t factorial(int n)
{
    int64_t f = 1;
    for (int i = 2; i <= n; i++)
        f *= i;
    return f;
}

/* The weight at offset k of the central difference of accuracy order 2R for the first or
 * second derivative (the closed forms of Fornberg's tables), each one division of exact
 * integers: the double nearest the exact weight, as stencil.c writes its table.
 *   first:  w_k =   (-1)^(k+1) (R!)^2 / (k   (R-k)! (R+k)!),  w_-k = -w_k,  w_0 = 0
 *   second: w_k = 2 (-1)^(k+1) (R!)^2 / (k^2 (R-k)! (R+k)!),  w_-k =  w_k,  w_0 = -2 sum 1/j^2 */
static double central_weight(int derivative, int R, int k)
{
    const int64_t rf2 = factorial(R) * factorial(R);
    const int m = abs(k);
    if (m == 0 && derivative == 1)
        return 0;
    if (m == 0) {
        int64_t sum = 0; /* sum (R!)^2 / j^2: each exact, j^2 divides (R!)^2 */
        for (int j = 1; j <= R; j++)
            sum += rf2 / (j * j);
        return (double)(-2 * sum) / (double)rf2;
    }
    const int64_t num = (derivative == 2 ? 2 : 1) * (m % 2 ? rf2 : -rf2);
    const int64_t den = (derivative == 2 ? m * m : m) * factorial(R - m) * factorial(R + m);
    const double w = (double)num / (double)den;
    return derivative == 1 && k < 0 ? -w : w;
}

/* One axis's scale: a number, or a constant (its value 1 here, its index kept). */
typedef struct scale {
    double value;
    int constant;
} scale;

static int parse_scale_entry(parser *p, const char *loc, json_t *v, scale *s)
{
    s->value = 1.0;
    s->constant = -1;
    if (json_is_number(v)) {
        s->value = json_number_value(v);
        return 0;
    }
    if (!json_is_string(v))
        return fail(p, loc, "must be a number or a constant's name");
    s->constant = constant_ref(p, loc, v);
    return s->constant < 0 ? -1 : 0;
}

/* The scale of each of naxes axes: absent (1), one number or constant for all, or an array
 * of one per axis. */
static int parse_scales(parser *p, const char *loc, json_t *term, size_t naxes,
                        scale scales[3])
{
    json_t *v = json_object_get(term, "scale");
    char at[LOC_MAX];
    loc_key(at, loc, "scale");
    for (size_t a = 0; a < naxes; a++)
        scales[a] = (scale){1.0, -1};
    if (!v)
        return 0;
    if (!json_is_array(v)) {
        if (parse_scale_entry(p, at, v, &scales[0]))
            return -1;
        for (size_t a = 1; a < naxes; a++)
            scales[a] = scales[0];
        return 0;
    }
    if (json_array_size(v) != naxes)
        return fail(p, at, "%zu entries for %zu axes: one per axis", json_array_size(v), naxes);
    for (size_t a = 0; a < naxes; a++) {
        char entry[LOC_MAX];
        loc_index(entry, at, a);
        if (parse_scale_entry(p, entry, json_array_get(v, a), &scales[a]))
            return -1;
    }
    return 0;
}

/* The axes a derivative is taken along ("x", "zy", "xyz"), as 0, 1, 2 in their order. */
static int parse_axes(parser *p, const char *loc, json_t *term, int axes[3], size_t *naxes)
{
    json_t *v = required(p, loc, term, "axes", "a string of axes, e.g. \"xyz\"");
    char at[LOC_MAX];
    loc_key(at, loc, "axes");
    if (!v)
        return -1;
    if (!json_is_string(v))
        return fail(p, at, "must be a string of axes, e.g. \"xyz\"");
    const char *s = json_string_value(v);
    if (*s == '\0')
        return fail(p, at, "names no axis: one or more of x, y, z");
    *naxes = 0;
    for (size_t i = 0; s[i] != '\0'; i++) {
        const char *axis = strchr("xyz", s[i]);
        if (!axis || *naxes == 3)
            return fail(p, at, "'%c' is no axis: one or more of x, y, z",
                        s[i] >= ' ' && s[i] <= '~' ? s[i] : '?');
        for (size_t j = 0; j < *naxes; j++)
            if (axes[j] == axis - "xyz")
                return fail(p, at, "'%c' twice", s[i]);
        axes[(*naxes)++] = (int)(axis - "xyz");
    }
    return 0;
}

static int parse_derivative(parser *p, const char *loc, json_t *term, fdt_spec_output *o)
{
    char at[LOC_MAX];
    json_int_t derivative, order;
    if (required_int(p, loc, term, "derivative", "1 or 2 (first or second)", &derivative))
        return -1;
    loc_key(at, loc, "derivative");
    if (derivative != 1 && derivative != 2)
        return fail(p, at, "must be 1 or 2 (first or second), not %lld", (long long)derivative);
    json_t *of = required(p, loc, term, "of", "the input it is taken of");
    loc_key(at, loc, "of");
    const int input = of ? input_ref(p, at, of) : -1;
    if (input < 0 ||
        required_int(p, loc, term, "order", "an even order from 2 to 8", &order))
        return -1;
    loc_key(at, loc, "order");
    if (order < 2 || order > FDT_SPEC_ORDER_MAX || order % 2)
        return fail(p, at, "must be an even order from 2 to %d, not %lld", FDT_SPEC_ORDER_MAX,
                    (long long)order);
    int axes[3];
    size_t naxes = 0;
    scale scales[3];
    factor f;
    if (parse_axes(p, loc, term, axes, &naxes) || parse_scales(p, loc, term, naxes, scales) ||
        parse_factor(p, loc, term, &f))
        return -1;
    const int R = (int)order / 2;
    for (size_t a = 0; a < naxes; a++)
        for (int k = -R; k <= R; k++) {
            int d[3] = {0, 0, 0};
            d[axes[a]] = k;
            const double w = central_weight((int)derivative, R, k) * scales[a].value * f.weight;
            if (add_tap(p, loc, o, &f, input, d, scales[a].constant, w))
                return -1;
        }
    return 0;
}

static const char *const box_classes[] = {"center", "face", "edge", "corner", NULL};

/* The 27-point box: each point's weight by how many of its offsets are not 0. */
static int parse_box(parser *p, const char *loc, json_t *term, fdt_spec_output *o)
{
    char at[LOC_MAX];
    factor f;
    loc_key(at, loc, "box27");
    const int input = input_ref(p, at, json_object_get(term, "box27"));
    if (input < 0 || parse_factor(p, loc, term, &f))
        return -1;
    json_t *weights = required(p, loc, term, "weights", "{center, face, edge, corner}");
    loc_key(at, loc, "weights");
    if (!weights)
        return -1;
    if (!json_is_object(weights))
        return fail(p, at, "must be an object: {center, face, edge, corner}");
    double w[4];
    if (check_keys(p, at, weights, box_classes))
        return -1;
    for (size_t c = 0; c < 4; c++)
        if (optional_number(p, at, weights, box_classes[c], 0.0, &w[c]))
            return -1;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                const int d[3] = {dx, dy, dz};
                const double weight = w[abs(dx) + abs(dy) + abs(dz)] * f.weight;
                if (add_tap(p, loc, o, &f, input, d, f.constant, weight))
                    return -1;
            }
    return 0;
}

/* The kinds of term: the key that names each, the keys it takes, how it expands. */
typedef struct term_kind {
    const char *key;
    const char *const *keys;
    int (*expand)(parser *p, const char *loc, json_t *term, fdt_spec_output *o);
} term_kind;

static const char *const tap_keys[] = {"tap", "at", "weight", "times", "coefficient",
                                       "coefficient_at", NULL};
static const char *const derivative_keys[] = {"derivative", "of", "order", "axes", "scale",
                                              "weight", "coefficient", "coefficient_at", NULL};
static const char *const box_keys[] = {"box27", "weights", "weight", "times", "coefficient",
                                       "coefficient_at", NULL};
static const term_kind term_kinds[] = {
    {"tap", tap_keys, parse_tap},
    {"derivative", derivative_keys, parse_derivative},
    {"box27", box_keys, parse_box},
};
#define NKINDS (sizeof term_kinds / sizeof term_kinds[0])

static int parse_term(parser *p, const char *loc, json_t *term, fdt_spec_output *o)
{
    if (!json_is_object(term))
        return fail(p, loc, "must be an object: a term");
    const term_kind *kind = NULL;
    for (size_t k = 0; k < NKINDS; k++) {
        if (!json_object_get(term, term_kinds[k].key))
            continue;
        if (kind)
            return fail(p, loc, "is both a %s and a %s: a term is one of tap, derivative, "
                                "box27", kind->key, term_kinds[k].key);
        kind = &term_kinds[k];
    }
    if (!kind)
        return fail(p, loc, "names no kind: a term is one of tap, derivative, box27");
    const size_t before = o->ntaps;
    if (check_keys(p, loc, term, kind->keys) || kind->expand(p, loc, term, o))
        return -1;
    return o->ntaps == before ? fail(p, loc, "the term is all zero") : 0;
}

/* ---- normalization ---- */

/* The canonical order: input, dz, dy, dx, coefficient, cdz, cdy, cdx, constant; then the
 * weight, so that like taps are summed in one order however the terms were written. */
static int tap_order(const void *pa, const void *pb)
{
    const fdt_spec_tap *a = pa, *b = pb;
    const int ka[] = {a->input, a->dz, a->dy, a->dx, a->coefficient, a->cdz, a->cdy, a->cdx,
                      a->constant};
    const int kb[] = {b->input, b->dz, b->dy, b->dx, b->coefficient, b->cdz, b->cdy, b->cdx,
                      b->constant};
    for (size_t i = 0; i < sizeof ka / sizeof ka[0]; i++)
        if (ka[i] != kb[i])
            return ka[i] < kb[i] ? -1 : 1;
    return (a->weight > b->weight) - (a->weight < b->weight);
}

static int same_tap(const fdt_spec_tap *a, const fdt_spec_tap *b)
{
    fdt_spec_tap x = *a, y = *b;
    x.weight = y.weight = 0;
    return tap_order(&x, &y) == 0;
}

/* Sorts o's taps, sums like taps into one, drops those that sum to zero. */
static int merge_taps(parser *p, const char *loc, fdt_spec_output *o)
{
    qsort(o->taps, o->ntaps, sizeof o->taps[0], tap_order);
    size_t n = 0;
    for (size_t i = 0; i < o->ntaps; i++) {
        if (n > 0 && same_tap(&o->taps[n - 1], &o->taps[i]))
            o->taps[n - 1].weight += o->taps[i].weight;
        else
            o->taps[n++] = o->taps[i];
        if (!isfinite(o->taps[n - 1].weight))
            return fail(p, loc, "like taps sum to a weight that is not finite");
    }
    o->ntaps = 0;
    for (size_t i = 0; i < n; i++)
        if (o->taps[i].weight != 0)
            o->taps[o->ntaps++] = o->taps[i];
    return o->ntaps ? 0 : fail(p, loc, "its terms cancel out: no tap is left");
}

static int unused(parser *p, const char *list, size_t i, const char *name, const char *verb)
{
    char at[LOC_MAX];
    loc_index(at, list, i);
    return fail(p, at, "\"%s\" is %s by no term", name, verb);
}

/* Refuses an input, coefficient field or constant that no tap left uses: a kernel argument
 * read by nothing is a mistake in the spec, not a pattern to tune. */
static int check_used(parser *p)
{
    const fdt_spec *s = p->spec;
    int inputs[FDT_SPEC_INPUTS_MAX] = {0}, coefficients[FDT_SPEC_COEFFICIENTS_MAX] = {0};
    int constants[FDT_SPEC_CONSTANTS_MAX] = {0};
    for (size_t o = 0; o < s->noutputs; o++)
        for (size_t i = 0; i < s->outputs[o].ntaps; i++) {
            const fdt_spec_tap *t = &s->outputs[o].taps[i];
            inputs[t->input] = 1;
            if (t->coefficient >= 0)
                coefficients[t->coefficient] = 1;
            if (t->constant >= 0)
                constants[t->constant] = 1;
        }
    for (size_t i = 0; i < s->ninputs; i++)
        if (!inputs[i])
            return unused(p, "inputs", i, s->inputs[i], "read");
    for (size_t i = 0; i < s->ncoefficients; i++)
        if (!coefficients[i])
            return unused(p, "coefficients", i, s->coefficients[i], "read");
    for (size_t i = 0; i < s->nconstants; i++)
        if (!constants[i])
            return unused(p, "constants", i, s->constants[i], "used");
    return 0;
}

static void widen(int *reach, int d)
{
    if (abs(d) > *reach)
        *reach = abs(d);
}

static void span(int *lo, int *hi, int d)
{
    *lo = d < *lo ? d : *lo;
    *hi = d > *hi ? d : *hi;
}

int fdt_spec_holds_window(const fdt_spec_hold *h)
{
    return h->lo <= h->hi;
}

int fdt_spec_holds_tiles(const fdt_spec_hold *h)
{
    return h->zlo <= h->zhi;
}

/* Field f read at (dx, dy, dz): in its column's z-window, or in its tiles. */
static void hold_read(fdt_spec_hold *h, int dx, int dy, int dz)
{
    if (dx == 0 && dy == 0) {
        span(&h->lo, &h->hi, dz);
        return;
    }
    span(&h->zlo, &h->zhi, dz);
    widen(&h->rx, dx);
    widen(&h->ry, dy);
}

/* The reach per axis and overall, and how the z-marching families hold each field. */
static void measure_reach(fdt_spec *s)
{
    for (size_t f = 0; f < s->ninputs + s->ncoefficients; f++)
        s->hold[f] = (fdt_spec_hold){.lo = INT8_MAX, .hi = INT8_MIN, .zlo = INT8_MAX,
                                     .zhi = INT8_MIN}; /* offsets are int8_t */
    for (size_t o = 0; o < s->noutputs; o++)
        for (size_t i = 0; i < s->outputs[o].ntaps; i++) {
            const fdt_spec_tap *t = &s->outputs[o].taps[i];
            const int d[3] = {t->dx, t->dy, t->dz}, cd[3] = {t->cdx, t->cdy, t->cdz};
            for (int a = 0; a < 3; a++) {
                widen(&s->reach[a], d[a]);
                widen(&s->reach[a], cd[a]);
                widen(&s->radius, s->reach[a]);
            }
            hold_read(&s->hold[t->input], t->dx, t->dy, t->dz);
            if (t->coefficient >= 0)
                hold_read(&s->hold[s->ninputs + (size_t)t->coefficient], t->cdx, t->cdy, t->cdz);
        }
}

/* ---- the document ---- */

/* Refuses text nested deeper than FDT_SPEC_DEPTH_MAX before jansson sees it, so that no
 * input drives a parser's recursion deep. */
static int check_depth(parser *p, const char *text, size_t len)
{
    int depth = 0, in_string = 0;
    for (size_t i = 0; i < len; i++) {
        const char c = text[i];
        if (in_string) {
            i += c == '\\'; /* the escaped character is no quote */
            in_string = c != '"';
        } else if (c == '"') {
            in_string = 1;
        } else if ((c == '[' || c == '{') && ++depth > FDT_SPEC_DEPTH_MAX) {
            return fail(p, "spec", "nested deeper than %d levels (at byte %zu)",
                        FDT_SPEC_DEPTH_MAX, i);
        } else if (c == ']' || c == '}') {
            depth--;
        }
    }
    return 0;
}

static int check_version(parser *p, json_t *root)
{
    json_t *v = json_object_get(root, "fdtune_stencil");
    if (!v)
        return fail(p, "fdtune_stencil", "missing: a spec starts with \"fdtune_stencil\": %d",
                    FDT_SPEC_VERSION);
    if (!json_is_integer(v))
        return fail(p, "fdtune_stencil", "must be the integer %d", FDT_SPEC_VERSION);
    if (json_integer_value(v) != FDT_SPEC_VERSION)
        return fail(p, "fdtune_stencil", "version %lld is not known: this reader reads %d",
                    (long long)json_integer_value(v), FDT_SPEC_VERSION);
    return 0;
}

/* The outputs' names first (so that a term may read none of them, whichever comes first),
 * then each output's terms. */
static int parse_output_names(parser *p, json_t *outputs)
{
    const char *key;
    json_t *terms;
    json_object_foreach(outputs, key, terms) {
        char at[LOC_MAX], name[NAME_SIZE];
        loc_key(at, "outputs", key);
        if (check_name(p, at, key, name))
            return -1;
        if (find_name(p->spec->inputs, p->spec->ninputs, name) >= 0)
            return fail(p, at, "\"%s\" is an input: inputs are only read, outputs only written",
                        name);
        if (check_unique(p, at, name))
            return -1;
        memcpy(p->spec->outputs[p->spec->noutputs++].name, name, NAME_SIZE);
    }
    return 0;
}

static int parse_output_terms(parser *p, const char *loc, json_t *terms, fdt_spec_output *o)
{
    if (!json_is_array(terms))
        return fail(p, loc, "must be an array of terms");
    if (json_array_size(terms) == 0)
        return fail(p, loc, "has no terms");
    if (json_array_size(terms) > FDT_SPEC_TERMS_MAX)
        return fail(p, loc, "%zu terms: the most is %d", json_array_size(terms),
                    FDT_SPEC_TERMS_MAX);
    size_t i;
    json_t *term;
    json_array_foreach(terms, i, term) {
        char at[LOC_MAX];
        loc_index(at, loc, i);
        if (parse_term(p, at, term, o))
            return -1;
    }
    return merge_taps(p, loc, o);
}

static int parse_outputs(parser *p, json_t *root)
{
    json_t *outputs = required(p, "", root, "outputs", "each output's name and its terms");
    if (!outputs)
        return -1;
    if (!json_is_object(outputs))
        return fail(p, "outputs", "must be an object: each output's name and its terms");
    if (json_object_size(outputs) == 0)
        return fail(p, "outputs", "has no output");
    if (json_object_size(outputs) > FDT_SPEC_OUTPUTS_MAX)
        return fail(p, "outputs", "%zu outputs: the most is %d", json_object_size(outputs),
                    FDT_SPEC_OUTPUTS_MAX);
    if (parse_output_names(p, outputs))
        return -1;
    size_t o = 0;
    const char *key;
    json_t *terms;
    json_object_foreach(outputs, key, terms) {
        char at[LOC_MAX];
        loc_key(at, "outputs", key);
        if (parse_output_terms(p, at, terms, &p->spec->outputs[o++]))
            return -1;
    }
    return 0;
}

static const char *const root_keys[] = {"fdtune_stencil", "name", "description", "inputs",
                                        "coefficients", "constants", "outputs", NULL};

static int parse_root(parser *p, json_t *root)
{
    fdt_spec *s = p->spec;
    if (!json_is_object(root))
        return fail(p, "spec", "must be an object");
    if (check_version(p, root) || check_keys(p, "", root, root_keys))
        return -1;
    json_t *name = required(p, "", root, "name", "the stencil's name");
    json_t *description = json_object_get(root, "description");
    if (!name || check_name_value(p, "name", name, s->name))
        return -1;
    if (description && !json_is_string(description))
        return fail(p, "description", "must be a string");
    if (parse_name_list(p, root, "inputs", 1, FDT_SPEC_INPUTS_MAX, s->inputs, &s->ninputs) ||
        parse_name_list(p, root, "coefficients", 0, FDT_SPEC_COEFFICIENTS_MAX, s->coefficients,
                        &s->ncoefficients) ||
        parse_name_list(p, root, "constants", 0, FDT_SPEC_CONSTANTS_MAX, s->constants,
                        &s->nconstants))
        return -1;
    if (s->ninputs + s->ncoefficients > FDT_SPEC_READ_MAX)
        return fail(p, "coefficients", "%zu fields read with the %zu inputs: the most is %d",
                    s->ninputs + s->ncoefficients, s->ninputs, FDT_SPEC_READ_MAX);
    return parse_outputs(p, root);
}

int fdt_spec_parse(const char *text, size_t len, fdt_spec *out, char *err, size_t errlen)
{
    parser p = {.spec = out, .err = err, .errlen = errlen};
    memset(out, 0, sizeof *out);
    if (!text)
        return fail(&p, "spec", "no text");
    if (len > FDT_SPEC_TEXT_MAX)
        return fail(&p, "spec", "%zu bytes: the most is %d", len, FDT_SPEC_TEXT_MAX);
    if (check_depth(&p, text, len))
        return -1;
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return fail(&p, "spec", "line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
    const int rc = parse_root(&p, root);
    json_decref(root);
    if (rc || check_used(&p))
        return -1;
    measure_reach(out);
    return 0;
}

/* ---- what the tuner asks of a parsed spec ---- */

void fdt_spec_hash(const fdt_spec *spec, char out[17])
{
    fdt_hasher h = fdt_hasher_start64();
    fdt_hasher_text(&h, "fdt_spec pattern 1", SIZE_MAX);
    fdt_hasher_int(&h, (int64_t)spec->ninputs);
    fdt_hasher_int(&h, (int64_t)spec->ncoefficients);
    fdt_hasher_int(&h, (int64_t)spec->nconstants);
    fdt_hasher_int(&h, (int64_t)spec->noutputs);
    for (size_t o = 0; o < spec->noutputs; o++) {
        const fdt_spec_output *out_o = &spec->outputs[o];
        fdt_hasher_int(&h, (int64_t)out_o->ntaps);
        for (size_t i = 0; i < out_o->ntaps; i++) {
            const fdt_spec_tap *t = &out_o->taps[i];
            const int8_t pattern[] = {t->input, t->dx, t->dy, t->dz, t->coefficient,
                                      t->cdx, t->cdy, t->cdz, t->constant};
            for (size_t k = 0; k < sizeof pattern; k++)
                fdt_hasher_int(&h, pattern[k]);
        }
    }
    fdt_hasher_hex(&h, out);
}

/* The distinct offsets at which one field is read, by every output. */
typedef struct offset_set {
    size_t n;
    int8_t d[FDT_SPEC_OUTPUTS_MAX * FDT_SPEC_TAPS_MAX][3];
} offset_set;

static void offset_add(offset_set *s, int8_t dx, int8_t dy, int8_t dz)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->d[i][0] == dx && s->d[i][1] == dy && s->d[i][2] == dz)
            return;
    s->d[s->n][0] = dx;
    s->d[s->n][1] = dy;
    s->d[s->n++][2] = dz;
}

/* The offsets of input field, or of coefficient field where of_coefficient. */
static void field_offsets(const fdt_spec *spec, int field, int of_coefficient, offset_set *s)
{
    s->n = 0;
    for (size_t o = 0; o < spec->noutputs; o++)
        for (size_t i = 0; i < spec->outputs[o].ntaps; i++) {
            const fdt_spec_tap *t = &spec->outputs[o].taps[i];
            if (of_coefficient && t->coefficient == field)
                offset_add(s, t->cdx, t->cdy, t->cdz);
            if (!of_coefficient && t->input == field)
                offset_add(s, t->dx, t->dy, t->dz);
        }
}

static int int64_order(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Cuts axis a where any box [d, d + extent) of s begins or ends, sorted, each once. */
#define CUTS_MAX (2 * (2 * FDT_SPEC_OFFSET_MAX + 1))
static size_t axis_cuts(const offset_set *s, int a, int64_t extent, int64_t cuts[CUTS_MAX])
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        for (int end = 0; end < 2; end++) {
            const int64_t c = s->d[i][a] + end * extent;
            size_t k = 0;
            while (k < n && cuts[k] != c)
                k++;
            if (k == n)
                cuts[n++] = c;
        }
    qsort(cuts, n, sizeof cuts[0], int64_order);
    return n;
}

static int cell_covered(const offset_set *s, const int64_t lo[3], const int64_t hi[3],
                        const int64_t extent[3])
{
    for (size_t i = 0; i < s->n; i++) {
        int inside = 1;
        for (int a = 0; a < 3; a++)
            inside = inside && s->d[i][a] <= lo[a] && hi[a] <= s->d[i][a] + extent[a];
        if (inside)
            return 1;
    }
    return 0;
}

/* The points of the union of the boxes [d, d + extent) for each offset d of s, counted
 * exactly: every axis cut where a box begins or ends, each cell of the cuts wholly inside
 * some box or outside all. */
static double union_points(const offset_set *s, const int64_t extent[3])
{
    int64_t cuts[3][CUTS_MAX];
    size_t n[3];
    for (int a = 0; a < 3; a++)
        n[a] = axis_cuts(s, a, extent[a], cuts[a]);
    int64_t points = 0;
    for (size_t x = 0; x + 1 < n[0]; x++)
        for (size_t y = 0; y + 1 < n[1]; y++)
            for (size_t z = 0; z + 1 < n[2]; z++) {
                const int64_t lo[3] = {cuts[0][x], cuts[1][y], cuts[2][z]};
                const int64_t hi[3] = {cuts[0][x + 1], cuts[1][y + 1], cuts[2][z + 1]};
                if (cell_covered(s, lo, hi, extent))
                    points += (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
            }
    return (double)points;
}

double fdt_spec_ideal_bytes(const fdt_spec *spec, int nx, int ny, int nz, size_t real_size)
{
    const int n[3] = {nx, ny, nz};
    int64_t interior[3];
    for (int a = 0; a < 3; a++) {
        interior[a] = (int64_t)n[a] - 2 * spec->radius; /* the kernels' interior */
        if (interior[a] <= 0)
            return 0;
    }
    offset_set s; /* 3 KiB */
    double points = (double)spec->noutputs * (double)(interior[0] * interior[1] * interior[2]);
    for (size_t i = 0; i < spec->ninputs; i++) {
        field_offsets(spec, (int)i, 0, &s);
        points += union_points(&s, interior);
    }
    for (size_t k = 0; k < spec->ncoefficients; k++) {
        field_offsets(spec, (int)k, 1, &s);
        points += union_points(&s, interior);
    }
    return points * (double)real_size;
}

static double load(const void *field, fdt_precision precision, size_t i)
{
    return precision == FDT_FLOAT ? ((const float *)field)[i] : ((const double *)field)[i];
}

double fdt_spec_point(const fdt_spec *spec, size_t output, const void *const *fields,
                      const double *constants, int nx, int ny, fdt_precision precision,
                      size_t at, double *rounding)
{
    const fdt_spec_output *o = &spec->outputs[output];
    const ptrdiff_t line = nx, slice = (ptrdiff_t)nx * ny, here = (ptrdiff_t)at;
    double acc = 0, magnitude = 0;
    for (size_t i = 0; i < o->ntaps; i++) {
        const fdt_spec_tap *t = &o->taps[i];
        double term = t->weight * load(fields[t->input], precision,
                                       (size_t)(here + t->dx + t->dy * line + t->dz * slice));
        if (t->constant >= 0)
            term *= constants[t->constant];
        if (t->coefficient >= 0)
            term *= load(fields[spec->ninputs + (size_t)t->coefficient], precision,
                         (size_t)(here + t->cdx + t->cdy * line + t->cdz * slice));
        acc += term;
        magnitude += fabs(term);
    }
    if (rounding)
        *rounding = fdt_rounding_bound(o->ntaps, magnitude);
    return acc;
}
