/* fdtune.c - the fdtune command: a table of subcommands dispatched by name.
 *
 * Exit codes: FDT_EXIT_* (commands.h), which `fdtune --help` lists. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "engine/compile_helper.h"
#include "version.h"

static const fdt_command commands[] = {
    {"bench", fdt_cmd_bench, "bench NX NY NZ [options]",
     "compile, verify and time every variant on this host's device (no daemon)"},
    {"variants", fdt_cmd_variants, "variants NX NY NZ [options]",
     "list or count the variant space for a shape on this host's device"},
    {"query", fdt_cmd_query, "query NX NY NZ [options]",
     "the best known configuration for a problem, from fdtuned"},
    {"tune", fdt_cmd_tune, "tune NX NY NZ [--wait]", "queue a tuning job for one problem"},
    {"batch", fdt_cmd_batch, "batch FILE|--sweep L L L",
     "queue a tuning job for every shape of a file or a sweep"},
    {"status", fdt_cmd_status, "status [JOB]", "the daemon's state, or a job's"},
    {"watch", fdt_cmd_watch, "watch JOB...", "follow jobs queued before until they end"},
    {"jobs", fdt_cmd_jobs, "jobs [--state S]", "list the jobs, newest first"},
    {"cancel", fdt_cmd_cancel, "cancel JOB", "cancel a queued or running job"},
    {"devices", fdt_cmd_devices, "devices", "the devices fdtuned tunes"},
    {"export", fdt_cmd_export, "export [--what W]", "the best configurations or every result"},
    {"import", fdt_cmd_import, "import FILE...", "merge results another fdtuned exported"},
    {"report", fdt_cmd_report, "report -o FILE",
     "an HTML page of the store: each device's and problem's figures, plotted"},
    {"shutdown", fdt_cmd_shutdown, "shutdown", "stop fdtuned"},
    {"replay", fdt_cmd_replay, "replay FILE... [options]",
     "compare search strategies on recorded spaces (no daemon, no GPU)"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *to)
{
    fprintf(to, "usage: fdtune [--socket PATH] [--json] [--timeout S] COMMAND [arguments]\n"
            "       fdtune --version | --help\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(to, "  %-28s %s\n", commands[i].usage, commands[i].help);
    fprintf(to, "\n'fdtune COMMAND --help' describes a command's options. The commands from\n"
            "query on talk to fdtuned through its socket (--socket PATH, else $FDTUNE_SOCKET,\n"
            "else the user's daemon, else the system's). --socket, --json and --timeout may\n"
            "come before the command as well as after it.\n"
            "\nexit codes:\n"
            "  0  ok\n"
            "  1  the daemon refused, or the work failed\n"
            "  2  bad usage\n"
            "  3  cannot reach the daemon\n"
            "  4  forbidden: this user may not do that (see fdtuned's admin_group), or may not\n"
            "     use its socket (its socket_group)\n"
            "  130  Ctrl-C ended a wait (tune --wait, batch --wait, watch): the jobs go on\n");
}

/* The options every daemon command takes (FDT_DAEMON_OPTIONS) that stand before the
 * command: how many arguments from argv[1] they take (--json one, --socket PATH two,
 * --socket=PATH one), 0 where argv[1] is none of them. */
static int global_option(int argc, char **argv)
{
    static const char *const with_value[] = {"--socket", "--timeout"};
    if (strcmp(argv[1], "--json") == 0)
        return 1;
    for (size_t i = 0; i < sizeof with_value / sizeof *with_value; i++) {
        const size_t n = strlen(with_value[i]);
        if (strncmp(argv[1], with_value[i], n) == 0 && argv[1][n] == '=')
            return 1;
        if (strcmp(argv[1], with_value[i]) == 0)
            return argc > 2 ? 2 : 0;
    }
    return 0;
}

/* The index of the command in argv: past the options before it. */
static int command_index(int argc, char **argv)
{
    int at = 1, n;
    while (at < argc && (n = global_option(argc - at + 1, argv + at - 1)) > 0)
        at += n;
    return at;
}

/* argv with the options before the command (up to lead) moved after it, where the
 * command's own parser reads them (its getopt takes options anywhere among its
 * arguments); malloc'd. */
static char **command_first(int argc, char **argv, int lead)
{
    char **out = malloc(((size_t)argc + 1) * sizeof *out);
    if (!out)
        return NULL;
    int k = 0;
    out[k++] = argv[0];
    for (int i = lead; i < argc; i++)
        out[k++] = argv[i];
    for (int i = 1; i < lead; i++)
        out[k++] = argv[i];
    out[k] = NULL;
    return out;
}

/* The command argv[1] (help and --version are two more) with its arguments. */
static int dispatch(int argc, char **argv)
{
    const char *name = argv[1];
    if (strcmp(name, "help") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        printf("fdtune %s\n", FDT_VERSION);
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "fdtune: unknown command '%s'\n", name);
    usage(stderr);
    return FDT_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], FDT_COMPILE_HELPER_ARG) == 0)
        return fdt_compile_helper_main(argv[2]); /* fdtune bench's compiles */
    if (argc < 2) {
        usage(stderr);
        return FDT_EXIT_USAGE;
    }
    const int at = command_index(argc, argv);
    if (at == argc) {
        fprintf(stderr, "fdtune: expected a COMMAND after '%s'\n", argv[argc - 1]);
        usage(stderr);
        return FDT_EXIT_USAGE;
    }
    char **args = command_first(argc, argv, at);
    if (!args)
        return FDT_EXIT_FAILED;
    const int rc = dispatch(argc, args);
    free(args);
    return rc;
}
