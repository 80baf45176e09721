/* example_spec.h - the C tests' way to one of the example specs: the row of
 * examples/specs/NAME.json (read from the repository root, where make runs the tests) made
 * a stencil, or the test failed with why. Include after cmocka.h. */
#ifndef FDT_TESTS_EXAMPLE_SPEC_H
#define FDT_TESTS_EXAMPLE_SPEC_H

#include <stdio.h>

#include "engine/stencil.h"

static const fdt_stencil *example_spec(const char *name)
{
    static char text[65536];
    char path[128], err[256];
    snprintf(path, sizeof path, "examples/specs/%s.json", name);
    FILE *in = fopen(path, "r");
    if (!in)
        fail_msg("%s: cannot be read (run from the repository root)", path);
    const size_t len = fread(text, 1, sizeof text, in);
    fclose(in);
    const fdt_stencil *st = fdt_stencil_from_text(text, len, err, sizeof err);
    if (!st)
        fail_msg("%s: %s", path, err);
    return st;
}

#endif
