/* commands.h - the fdtune subcommands and the argument helpers they share. */
#ifndef FDT_COMMANDS_H
#define FDT_COMMANDS_H

#include "problem.h"

/* The exit codes `fdtune --help` documents. */
enum {
    FDT_EXIT_OK = 0,
    FDT_EXIT_FAILED = 1,      /* the daemon refused, or the work failed */
    FDT_EXIT_USAGE = 2,
    FDT_EXIT_UNREACHABLE = 3, /* fdtuned cannot be reached, or stopped answering */
    FDT_EXIT_FORBIDDEN = 4,   /* the daemon does not let this user do that */
    FDT_EXIT_INTERRUPTED = 130 /* Ctrl-C ended a wait (128 + SIGINT); the jobs go on */
};

typedef struct fdt_command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command's name */
    const char *usage;
    const char *help;
} fdt_command;

int fdt_cmd_bench(int argc, char **argv);
int fdt_cmd_variants(int argc, char **argv);
int fdt_cmd_query(int argc, char **argv);
int fdt_cmd_tune(int argc, char **argv);
int fdt_cmd_batch(int argc, char **argv);
int fdt_cmd_status(int argc, char **argv);
int fdt_cmd_watch(int argc, char **argv);
int fdt_cmd_jobs(int argc, char **argv);
int fdt_cmd_cancel(int argc, char **argv);
int fdt_cmd_devices(int argc, char **argv);
int fdt_cmd_export(int argc, char **argv);
int fdt_cmd_import(int argc, char **argv);
int fdt_cmd_report(int argc, char **argv);
int fdt_cmd_shutdown(int argc, char **argv);
int fdt_cmd_replay(int argc, char **argv);

/* The kernel families a user may pick with --family (the test-only ones are not listed). */
#define FDT_FAMILIES_HELP "naive, tiled, zmarch, zvec, zroll, smem, xytile, ring; for a spec: " \
                          "snaive, smarch, szwin, svec, stile"

/* The argument helpers every command shares (args.c). */

/* Parses a whole decimal integer in [min, max]; on failure prints why, naming what, and
 * returns -1. */
int fdt_parse_int(const char *text, long min, long max, const char *what, long *out);
/* Checks that name is a kernel family; on failure prints why and returns -1. */
int fdt_parse_family(const char *name);
/* Reads the stencil spec in the file at path (docs/stencils.md) and sets p's stencil and
 * radius to its row's, and *text (when text is not NULL) to the file's text, in a buffer
 * of its own that the next call overwrites; on failure prints why (the file, the place in
 * the spec, what is wrong) and returns -1. */
int fdt_parse_spec_file(const char *path, fdt_problem *p, const char **text);

#endif
