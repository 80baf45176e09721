/* fdtune.c - the fdtune command: a table of subcommands dispatched by name.
 *
 * Exit codes: 0 success, 1 the work failed (no device, nothing measured), 2 bad usage. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static const fdt_command commands[] = {
    {"bench", fdt_cmd_bench, "bench NX NY NZ [options]",
     "compile, verify and time every variant on this host's device (no daemon)"},
    {"variants", fdt_cmd_variants, "variants NX NY NZ [options]",
     "list or count the variant space for a shape on this host's device"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *to)
{
    fprintf(to, "usage: fdtune COMMAND [arguments]\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(to, "  %-28s %s\n", commands[i].usage, commands[i].help);
    fprintf(to, "\n'fdtune COMMAND --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
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
