/* html.h - text written into fdtune report's page: every string that comes from the store
 * or the daemon (device names, variant names, doubt, a stencil's name) goes through here,
 * so that none of it can open a tag, an entity or an attribute in the page. */
#ifndef FDT_HTML_H
#define FDT_HTML_H

#include <stdio.h>

/* Writes text with & < > " ' as entities: safe in an element's text and in a quoted
 * attribute value, of HTML and of inline SVG alike. */
void fdt_html_text(FILE *out, const char *text);
/* The same for printf-formatted text (a variant's name inside a sentence). */
void fdt_html_textf(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
