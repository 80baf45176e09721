/* html.c - text escaped for fdtune report's page; see html.h. */
#include "html.h"

#include <stdarg.h>
#include <stdlib.h>

void fdt_html_text(FILE *out, const char *text)
{
    for (const char *c = text; *c; c++) {
        switch (*c) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fputc(*c, out);
        }
    }
}

void fdt_html_textf(FILE *out, const char *fmt, ...)
{
    char small[256], *text = small;
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    /* Longer than a line of the page: formatted again at its length, not cut. */
    if ((size_t)n >= sizeof small && (text = malloc((size_t)n + 1))) {
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    fdt_html_text(out, text ? text : small);
    if (text != small)
        free(text);
}
