/* args.c - the argument helpers every fdtune command shares (commands.h): whole numbers in
 * a range, kernel families, stencil spec files; each prints why it refuses. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "engine/stencil.h"
#include "engine/variant.h"

int fdt_parse_int(const char *text, long min, long max, const char *what, long *out)
{
    char *end;
    errno = 0;
    const long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno || v < min || v > max) {
        fprintf(stderr, "fdtune: %s must be a whole number from %ld to %ld, not '%s'\n", what,
                min, max, text);
        return -1;
    }
    *out = v;
    return 0;
}

int fdt_parse_spec_file(const char *path, fdt_problem *p, const char **text_out)
{
    static char text[FDT_SPEC_TEXT_MAX + 2]; /* a byte past the bound, and a NUL */
    char why[256];
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "fdtune: --spec %s: %s\n", path, strerror(errno));
        return -1;
    }
    const size_t len = fread(text, 1, sizeof text - 1, in);
    const int failed = ferror(in);
    fclose(in);
    if (failed) {
        fprintf(stderr, "fdtune: --spec %s: cannot be read\n", path);
        return -1;
    }
    /* A file past the bound reaches the parser one byte too long, which it refuses. */
    const fdt_stencil *st = fdt_stencil_from_text(text, len, why, sizeof why);
    if (!st) {
        fprintf(stderr, "fdtune: --spec %s: %s\n", path, why);
        return -1;
    }
    fdt_copy_text(p->stencil, sizeof p->stencil, st->name);
    p->radius = st->min_radius;
    text[len] = '\0';
    if (text_out)
        *text_out = text;
    return 0;
}

int fdt_parse_family(const char *name)
{
    if (fdt_family_find(name))
        return 0;
    fprintf(stderr, "fdtune: unknown kernel family '%s' (" FDT_FAMILIES_HELP ")\n", name);
    return -1;
}
