/* cmd_query.c - `fdtune query`: what a solver would be told for a problem, read through
 * libfdtune's own answer parser so that the command shows exactly what solvers get. */
#include <string.h>
#include <time.h>

#include "client_json.h"
#include "cmd_daemon.h"
#include "commands.h"

static const char query_help[] =
    "usage: fdtune query NX NY NZ [options]\n"
    "\n"
    "The best known launch configuration for a problem, from fdtuned's store: the shape's own\n"
    "(exact), the nearest tuned shape's (nearest), or the default kernel's (default).\n"
    "\n"
    FDT_PROBLEM_HELP
    "  --tune-if-missing         unless the shape itself was tuned, also queue a tuning job\n"
    FDT_DAEMON_HELP;

enum { OPT_TUNE_IF_MISSING = FDT_OPT_OWN };

static const struct option options[] = {
    FDT_PROBLEM_OPTIONS,
    FDT_DAEMON_OPTIONS,
    {"tune-if-missing", no_argument, NULL, OPT_TUNE_IF_MISSING},
    {NULL, 0, NULL, 0},
};

static int own_option(int opt, const char *arg, void *ctx)
{
    (void)opt, (void)arg;
    fdtune_problem *p = ctx;
    p->tune_if_missing = 1;
    return 0;
}

/* "on HOST, its job N, fdtuned V, at TIME[; imported TIME]" of the answer's "measured". */
static void print_measured(const json_t *m)
{
    char at[32], imported[32];
    const time_t when = (time_t)json_integer_value(json_object_get(m, "at"));
    const time_t in = (time_t)json_integer_value(json_object_get(m, "imported"));
    strftime(at, sizeof at, "%Y-%m-%d %H:%M UTC", gmtime(&when));
    strftime(imported, sizeof imported, "%Y-%m-%d %H:%M UTC", gmtime(&in));
    printf("measured  on %s, its job %" JSON_INTEGER_FORMAT ", fdtuned %s, %s",
           json_string_value(json_object_get(m, "host")),
           json_integer_value(json_object_get(m, "job")),
           json_string_value(json_object_get(m, "fdtuned")), at);
    if (in)
        printf("; imported %s", imported);
    printf("\n");
}

/* doubt: the answer's reason to doubt its figures, or NULL, and measured: where it was
 * measured, or NULL (libfdtune's fdtune_answer has a fixed layout and carries neither). */
/* The layout to allocate the fields in, and under --pitch auto what it gains on dense rows. */
static void print_layout(const fdtune_layout *l)
{
    printf("layout    pitch %d, offset %d", l->pitch, l->offset);
    if (l->gain > 0)
        printf(" (%.3fx the dense layout's %.1f GB/s)", l->gain, l->dense_gbps);
    printf("\n");
}

static void print_answer(const fdtune_answer *a, const char *doubt, const json_t *measured)
{
    printf("match     %s", a->match);
    if (strcmp(a->match, "nearest") == 0)
        printf(" (distance %.2f)", a->distance);
    printf(", device match %s\n", a->device_match[0] ? a->device_match : "none");
    if (a->from.nx) {
        printf("from      %dx%dx%d on %s", a->from.nx, a->from.ny, a->from.nz,
               a->from.device[0] ? a->from.device : "?");
        if (a->from.driver[0])
            printf(", driver %s", a->from.driver);
        printf("\n");
    }
    printf("variant   %s  (kernel %s in ", a->variant, a->entry);
    for (int i = 0; i < a->nsources; i++)
        printf("%s%s", i ? " + " : "", a->sources[i]);
    printf(")\n");
    printf("launch    grid %d %d %d, block %d %d %d\n", a->grid[0], a->grid[1], a->grid[2],
           a->block[0], a->block[1], a->block[2]);
    printf("defines  ");
    for (int i = 0; i < a->ndefines; i++)
        printf(" -D%s", a->defines[i]);
    printf("\n");
    print_layout(&a->layout);
    if (a->gbps > 0)
        printf("GB/s      %.1f (copy %.1f, kernel 1 %.1f)\n", a->gbps, a->copy_gbps,
               a->kernel1_gbps);
    else
        printf("GB/s      not measured\n");
    if (measured)
        print_measured(measured);
    if (doubt)
        printf("doubtful  %s\n", doubt);
    if (a->persist.present) {
        printf("persist   kernel %s in ", a->persist.entry);
        for (int i = 0; i < a->persist.nsources; i++)
            printf("%s%s", i ? " + " : "", a->persist.sources[i]);
        printf(", grid %d %d %d, block %d %d %d: launch with (f, nx, ny, nz, pitch, 0) once "
               "per f buffer before stepping, (f, nx, ny, nz, pitch, 1) before freeing it\n",
               a->persist.grid[0], a->persist.grid[1], a->persist.grid[2], a->persist.block[0],
               a->persist.block[1], a->persist.block[2]);
    }
    if (a->job)
        printf("job       %lld tunes this shape\n", a->job);
    if (!a->kernels_current)
        printf("note      measured with older kernel sources; tune again to refresh\n");
}

int fdt_cmd_query(int argc, char **argv)
{
    fdt_daemon_args a;
    const int parsed = fdt_daemon_parse(argc, argv, "h", options, query_help, own_option,
                                        &a.problem, &a);
    if (parsed)
        return parsed > 0 ? FDT_EXIT_OK : FDT_EXIT_USAGE;
    if (a.npos != 3)
        return fdt_usage_error("query", "expected the grid shape NX NY NZ");
    if (fdt_parse_shape(a.pos, &a.problem))
        return FDT_EXIT_USAGE;

    fdt_client c;
    int rc = fdt_client_open(&c, "query", &a);
    if (rc)
        return rc;
    json_t *answer;
    rc = fdt_client_call(&c, fdt_problem_request(&a, "query", 1), &answer);
    if (rc == FDT_EXIT_OK && !c.json) {
        fdtune_answer ans;
        char err[256];
        if (fdtune_answer_parse(c.line, &ans, err, sizeof err) == FDTUNE_OK) {
            print_answer(&ans, json_string_value(json_object_get(answer, "doubt")),
                         json_object_get(answer, "measured"));
        } else {
            fprintf(stderr, "fdtune query: %s\n", err);
            rc = FDT_EXIT_FAILED;
        }
    }
    json_decref(answer);
    fdt_client_close(&c);
    return rc;
}
