/* test_states.c - docs/protocol.md agrees with the names the daemon sends: the job states
 * and phases (db/store_jobs.c's tables) and the workers' lane states (scheduler.c's), each
 * list the doc gives holding every name of its table and no other, and the status answer's
 * job counts keyed by the same states; and each table's names and enums map one to one.
 * Run from the repository root, as make's tests are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/scheduler.h"
#include "store.h"

#define DOC "docs/protocol.md"
#define MAX_NAMES 16
#define NAME_MAX_LEN 32

typedef struct name_list {
    size_t n;
    char names[MAX_NAMES][NAME_MAX_LEN];
} name_list;

/* One enum's names, as the code sends them. */
typedef const char *(*name_of_fn)(int value);

static const char *job_state_of(int v)
{
    return fdt_job_state_name((fdt_job_state)v);
}

/* FDT_JOB_PHASE_NONE is sent as "", never listed: the names start at the first phase. */
static const char *job_phase_of(int v)
{
    return fdt_job_phase_name((fdt_job_phase)v);
}

static const char *lane_state_of(int v)
{
    return fdt_lane_state_name((fdt_lane_state)v);
}

/* The doc, its lines joined by spaces, so that a list may run over several lines. */
static char *read_doc(void)
{
    FILE *f = fopen(DOC, "r");
    if (!f)
        fail_msg("cannot open %s: run the test from the repository root", DOC);
    char *text = calloc(1, 1 << 20);
    assert_non_null(text);
    const size_t n = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    assert_true(n > 0 && n < (1 << 20) - 1);
    for (size_t i = 0; i < n; i++)
        if (text[i] == '\n')
            text[i] = ' ';
    return text;
}

static void add_name(name_list *l, const char *from, size_t len)
{
    if (l->n == MAX_NAMES || len == 0 || len >= NAME_MAX_LEN)
        fail_msg("%s: a list holds more than %d names, or a name of %zu characters", DOC,
                 MAX_NAMES, len);
    memcpy(l->names[l->n], from, len);
    l->names[l->n++][len] = '\0';
}

/* The `names` of the sentence that follows marker (the only one in the doc), outside
 * parentheses: "States: `queued`, `running`." gives queued and running. */
static name_list doc_list(const char *doc, const char *marker)
{
    name_list l = {0};
    const char *at = strstr(doc, marker);
    if (!at || strstr(at + 1, marker))
        fail_msg("%s must say \"%s\" once, followed by the list", DOC, marker);
    int depth = 0;
    for (const char *p = at + strlen(marker); *p; p++) {
        if (*p == '`') {
            const char *end = strchr(p + 1, '`');
            assert_non_null(end);
            if (depth == 0)
                add_name(&l, p + 1, (size_t)(end - p - 1));
            p = end;
        } else if (*p == '(') {
            depth++;
        } else if (*p == ')') {
            depth--;
        } else if (*p == '.' && depth == 0 && (p[1] == ' ' || p[1] == '\0')) {
            break;
        }
    }
    if (l.n == 0)
        fail_msg("%s: no names after \"%s\"", DOC, marker);
    return l;
}

/* The keys of the JSON object that follows marker in the doc's example. */
static name_list doc_keys(const char *doc, const char *marker)
{
    name_list l = {0};
    const char *at = strstr(doc, marker);
    if (!at)
        fail_msg("%s has no example with %s", DOC, marker);
    const char *end = strchr(at, '}');
    assert_non_null(end);
    for (const char *p = at + strlen(marker); p < end; p++) {
        if (*p != '"')
            continue;
        const char *close = strchr(p + 1, '"');
        assert_true(close && close < end);
        add_name(&l, p + 1, (size_t)(close - p - 1));
        p = strchr(close, ',');
        if (!p || p > end)
            break;
    }
    return l;
}

static int listed(const name_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->names[i], name) == 0)
            return 1;
    return 0;
}

/* Every name of values first..count-1 is in the doc's list, and the list holds no other. */
static void assert_doc_matches(const name_list *doc, const char *what, name_of_fn name_of,
                               int first, int count)
{
    int wrong = 0;
    for (int v = first; v < count; v++)
        if (!listed(doc, name_of(v))) {
            print_error("%s lists no %s '%s', which the daemon sends\n", DOC, what, name_of(v));
            wrong++;
        }
    for (size_t i = 0; i < doc->n; i++) {
        int known = 0;
        for (int v = first; v < count; v++)
            known |= strcmp(doc->names[i], name_of(v)) == 0;
        if (!known) {
            print_error("%s lists a %s '%s' that the daemon never sends\n", DOC, what,
                        doc->names[i]);
            wrong++;
        }
    }
    assert_int_equal(wrong, 0);
}

static void test_job_states_match_the_doc(void **state)
{
    (void)state;
    char *doc = read_doc();
    const name_list states = doc_list(doc, "States: ");
    assert_doc_matches(&states, "job state", job_state_of, 0, FDT_JOB_STATES);
    const name_list counts = doc_keys(doc, "\"jobs\":{");
    assert_doc_matches(&counts, "job state counted by status", job_state_of, 0, FDT_JOB_STATES);
    free(doc);
}

static void test_job_phases_match_the_doc(void **state)
{
    (void)state;
    char *doc = read_doc();
    const name_list phases = doc_list(doc, "Phase while running: ");
    assert_doc_matches(&phases, "job phase", job_phase_of, FDT_JOB_PHASE_NONE + 1,
                       FDT_JOB_PHASES);
    free(doc);
}

static void test_worker_states_match_the_doc(void **state)
{
    (void)state;
    char *doc = read_doc();
    const name_list lanes = doc_list(doc, "`worker` is ");
    assert_doc_matches(&lanes, "worker state", lane_state_of, 0, FDT_LANE_STATES);
    free(doc);
}

/* Each name parses back to its value, no two alike, and a name the table lacks to none. */
static void test_names_and_values_map_one_to_one(void **state)
{
    (void)state;
    for (int v = 0; v < FDT_JOB_STATES; v++)
        assert_int_equal(fdt_job_state_parse(job_state_of(v)), v);
    for (int v = 0; v < FDT_JOB_PHASES; v++)
        assert_int_equal(fdt_job_phase_parse(job_phase_of(v)), v);
    for (int v = 0; v < FDT_LANE_STATES; v++)
        for (int w = v + 1; w < FDT_LANE_STATES; w++)
            assert_string_not_equal(lane_state_of(v), lane_state_of(w));
    assert_string_equal(fdt_job_phase_name(FDT_JOB_PHASE_NONE), "");
    assert_int_equal(fdt_job_state_parse("paused"), FDT_JOB_STATES);
    assert_int_equal(fdt_job_state_parse(""), FDT_JOB_STATES);
    assert_int_equal(fdt_job_phase_parse("Measure"), FDT_JOB_PHASES);
    assert_string_equal(fdt_job_state_name(FDT_JOB_STATES), "unknown");
    assert_string_equal(fdt_job_phase_name(FDT_JOB_PHASES), "unknown");
    assert_string_equal(fdt_lane_state_name(FDT_LANE_STATES), "unknown");
}

/* The list the bad_request and fdtune's --state messages name, whole or cut short. */
static void test_states_text(void **state)
{
    (void)state;
    char text[64];
    fdt_job_states_text(text, sizeof text);
    assert_string_equal(text, "queued, running, done, failed or cancelled");
    char short_text[10];
    fdt_job_states_text(short_text, sizeof short_text);
    assert_string_equal(short_text, "queued, r");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_states_match_the_doc),
        cmocka_unit_test(test_job_phases_match_the_doc),
        cmocka_unit_test(test_worker_states_match_the_doc),
        cmocka_unit_test(test_names_and_values_map_one_to_one),
        cmocka_unit_test(test_states_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
