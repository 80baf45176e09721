/* plot.h - the plots of fdtune report: SVG written inline in its HTML page, no script and
 * nothing fetched. A plot has two axes that start at 0: numbers (GB/s, evaluations), or
 * categories (block shapes, values of m), category i spanning [i, i + 1]. Every mark is
 * placed through the axes, carries the class "mark" and its kind (bar, point, cell, line,
 * doubt) and a <title> the browser shows on hover; tests/test_report.sh counts the marks in
 * the page a browser renders. */
#ifndef FDT_PLOT_H
#define FDT_PLOT_H

#include <stddef.h>
#include <stdio.h>

typedef struct fdt_axis {
    const char *title;
    double hi;    /* numbers: the largest value to show (rounded up to a tick); categories:
                     how many */
    /* Categories: writes the label of category i; NULL for an axis of numbers. */
    void (*label)(const void *ctx, size_t i, char *buf, size_t len);
    const void *ctx;
} fdt_axis;

typedef struct fdt_plot {
    FILE *out;
    fdt_axis x, y;
    double width, height; /* the svg's, in pixels */
    double step[2];       /* the numeric axes' tick steps (x, y) */
    size_t categories[2]; /* the category axes' counts (x, y); 0 for numbers */
} fdt_plot;

/* Opens the figure (id, its kind in data-plot, a caption of plain text) and the svg, and
 * draws the axes, their ticks, labels and titles. Ends with fdt_plot_end. */
void fdt_plot_begin(fdt_plot *p, FILE *out, const char *id, const char *kind,
                    const char *caption);
/* Closes the svg; what follows until fdt_plot_figure_end (a legend) is under the plot. */
void fdt_plot_end(const fdt_plot *p);
void fdt_plot_figure_end(const fdt_plot *p);

/* A bar from 0 to value over [x0, x1] of the x axis; nothing for a value of 0. */
void fdt_plot_bar(const fdt_plot *p, double x0, double x1, double value, const char *color,
                  const char *title);
/* A doubt's mark: a triangle standing at (x, y). */
void fdt_plot_doubt(const fdt_plot *p, double x, double y, const char *title);
void fdt_plot_point(const fdt_plot *p, double x, double y, const char *color,
                    const char *title);
/* A heatmap's cell: category (x, y) of two category axes, filled with the shade of share
 * shade of the map's range (fdt_plot_shade), its value written in it where it has room. */
void fdt_plot_cell(const fdt_plot *p, size_t x, size_t y, double shade, double value,
                   const char *title);
/* A line through the n points (xs[i], ys[i]). */
void fdt_plot_line(const fdt_plot *p, const double *xs, const double *ys, size_t n,
                   const char *color, const char *title);
/* A dashed horizontal line at y across the plot, labelled. */
void fdt_plot_rule(const fdt_plot *p, double y, const char *label);

/* The color of share t (0 to 1) of a heatmap's range, light to dark, as "#rrggbb". */
void fdt_plot_shade(double t, char out[8]);
/* The i-th color of a palette of distinct ones (families, jobs, series). */
const char *fdt_plot_color(size_t i);

/* A legend's entry under a plot: a swatch of color and its label (escaped). */
void fdt_plot_key(FILE *out, const char *color, const char *label);

#endif
