/* fdtune.c - the fdtune command: a table of subcommands dispatched by name.
 *
 * Exit codes: FDT_EXIT_* (commands.h), which `fdtune --help` lists. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "engine/compile_helper.h"

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
    {"shutdown", fdt_cmd_shutdown, "shutdown", "stop fdtuned"},
    {"replay", fdt_cmd_replay, "replay FILE... [options]",
     "compare search strategies on recorded spaces (no daemon, no GPU)"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *to)
{
    fprintf(to, "usage: fdtune COMMAND [arguments]\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(to, "  %-28s %s\n", commands[i].usage, commands[i].help);
    fprintf(to, "\n'fdtune COMMAND --help' describes a command's options. The commands from\n"
            "query on talk to fdtuned through its socket (--socket PATH, else $FDTUNE_SOCKET,\n"
            "else the user's daemon, else the system's).\n"
            "\nexit codes:\n"
            "  0  ok\n"
            "  1  the daemon refused, or the work failed\n"
            "  2  bad usage\n"
            "  3  cannot reach the daemon\n"
            "  4  forbidden: this user may not do that (see fdtuned's admin_group)\n"
            "  130  Ctrl-C ended a wait (tune --wait, batch --wait, watch): the jobs go on\n");
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], FDT_COMPILE_HELPER_ARG) == 0)
        return fdt_compile_helper_main(argv[2]); /* fdtune bench's compiles */
    if (argc < 2) {
        usage(stderr);
        return FDT_EXIT_USAGE;
    }
    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "fdtune: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return FDT_EXIT_USAGE;
}
