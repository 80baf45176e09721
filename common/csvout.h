/* csvout.h - one field of a CSV line (RFC 4180) as the exports and fdtune's tables write
 * it: quoted by libcsv where it holds a separator, a quote or a line break, else as it is,
 * so that the plain fields of most rows stay plain for awk and cut. */
#ifndef FDT_CSVOUT_H
#define FDT_CSVOUT_H

#include <stdio.h>

void fdt_csv_field(FILE *out, const char *text);

#endif
