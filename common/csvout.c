/* csvout.c - a CSV field; see csvout.h. */
#include "csvout.h"

#include <csv.h>
#include <string.h>

void fdt_csv_field(FILE *out, const char *text)
{
    if (strpbrk(text, ",\"\r\n"))
        csv_fwrite(out, text, strlen(text));
    else
        fputs(text, out);
}
