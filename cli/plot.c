/* plot.c - fdtune report's SVG plots; see plot.h. */
#include "plot.h"

#include <math.h>

#include "html.h"

/* The margins around the plotting area, in pixels: room for the ticks' labels (the x
 * axis's categories are written slanted) and the axes' titles. */
#define LEFT 64.0
#define RIGHT 16.0
#define TOP 16.0
#define BOTTOM 78.0
#define DEFAULT_WIDTH 520.0
#define DEFAULT_HEIGHT 320.0
/* The least room a category's label takes along its axis; more categories than fit are
 * labelled every few. */
#define LABEL_PX 14.0

static double px_x(const fdt_plot *p, double x)
{
    return LEFT + x / p->x.hi * (p->width - LEFT - RIGHT);
}

static double px_y(const fdt_plot *p, double y)
{
    return p->height - BOTTOM - y / p->y.hi * (p->height - TOP - BOTTOM);
}

/* A tick step of 1, 2 or 5 times a power of ten giving about five ticks up to hi; whole
 * numbers only where the axis counts (evaluations). */
static double tick_step(double hi, int whole)
{
    const double raw = hi / 5, unit = pow(10, floor(log10(raw))), r = raw / unit;
    const double step = (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * unit;
    return whole && step < 1 ? 1 : step;
}

/* An axis made ready to place marks on: numbers up to hi rounded up to a whole tick, or
 * categories; an empty one is 1 wide, an empty frame rather than a division by 0. Returns
 * the step between its ticks. */
static double prepare_axis(fdt_axis *a, int whole, size_t *categories)
{
    *categories = a->label ? (size_t)a->hi : 0;
    if (!(a->hi > 0))
        a->hi = 1;
    if (a->label)
        return 1;
    const double step = tick_step(a->hi, whole);
    a->hi = ceil(a->hi / step - 1e-9) * step;
    return step;
}

/* Every how many categories one is labelled: all of them where each has room. */
static size_t label_every(size_t n, double length)
{
    const double fit = length / LABEL_PX;
    return fit >= (double)n || fit < 1 ? 1 : (size_t)ceil((double)n / fit);
}

static void category_label(FILE *out, const fdt_axis *a, size_t i)
{
    char text[64];
    a->label(a->ctx, i, text, sizeof text);
    fdt_html_text(out, text);
}

static void x_ticks(const fdt_plot *p)
{
    const double y = p->height - BOTTOM;
    if (p->x.label) {
        const size_t every = label_every(p->categories[0], p->width - LEFT - RIGHT);
        for (size_t i = 0; i < p->categories[0]; i += every) {
            const double x = px_x(p, (double)i + 0.5);
            fprintf(p->out, "<text class=\"tick\" text-anchor=\"end\" "
                    "transform=\"translate(%.1f,%.1f) rotate(-40)\">", x, y + 12);
            category_label(p->out, &p->x, i);
            fputs("</text>\n", p->out);
        }
        return;
    }
    for (double v = 0; v <= p->x.hi + p->step[0] / 2; v += p->step[0])
        fprintf(p->out, "<text class=\"tick\" text-anchor=\"middle\" x=\"%.1f\" y=\"%.1f\">%g"
                "</text>\n", px_x(p, v), y + 16, v);
}

static void y_ticks(const fdt_plot *p)
{
    if (p->y.label) {
        const size_t every = label_every(p->categories[1], p->height - TOP - BOTTOM);
        for (size_t i = 0; i < p->categories[1]; i += every) {
            fprintf(p->out, "<text class=\"tick\" text-anchor=\"end\" x=\"%.1f\" y=\"%.1f\">",
                    LEFT - 6, px_y(p, (double)i + 0.5) + 4);
            category_label(p->out, &p->y, i);
            fputs("</text>\n", p->out);
        }
        return;
    }
    for (double v = 0; v <= p->y.hi + p->step[1] / 2; v += p->step[1])
        fprintf(p->out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                "<text class=\"tick\" text-anchor=\"end\" x=\"%.1f\" y=\"%.1f\">%g</text>\n",
                LEFT, p->width - RIGHT, px_y(p, v), px_y(p, v), LEFT - 6, px_y(p, v) + 4, v);
}

static void axis_titles(const fdt_plot *p)
{
    fprintf(p->out, "<text class=\"axis-title\" text-anchor=\"middle\" x=\"%.1f\" y=\"%.1f\">",
            (LEFT + p->width - RIGHT) / 2, p->height - 6);
    fdt_html_text(p->out, p->x.title);
    fprintf(p->out, "</text>\n<text class=\"axis-title\" text-anchor=\"middle\" "
            "transform=\"translate(14,%.1f) rotate(-90)\">", (TOP + p->height - BOTTOM) / 2);
    fdt_html_text(p->out, p->y.title);
    fputs("</text>\n", p->out);
}

void fdt_plot_begin(fdt_plot *p, FILE *out, const char *id, const char *kind,
                    const char *caption)
{
    p->out = out;
    p->width = p->width > 0 ? p->width : DEFAULT_WIDTH;
    p->height = p->height > 0 ? p->height : DEFAULT_HEIGHT;
    p->step[0] = prepare_axis(&p->x, 1, &p->categories[0]);
    p->step[1] = prepare_axis(&p->y, 0, &p->categories[1]);
    fprintf(out, "<figure class=\"plot\" id=\"%s\" data-plot=\"%s\"><figcaption>", id, kind);
    fdt_html_text(out, caption);
    fprintf(out, "</figcaption>\n<svg width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "role=\"img\">\n", p->width, p->height, p->width, p->height);
    y_ticks(p);
    x_ticks(p);
    fprintf(out, "<path class=\"axis\" d=\"M%.1f %.1fV%.1fH%.1f\"/>\n", LEFT, TOP,
            p->height - BOTTOM, p->width - RIGHT);
    axis_titles(p);
}

void fdt_plot_end(const fdt_plot *p)
{
    fputs("</svg>\n<div class=\"legend\">", p->out);
}

void fdt_plot_figure_end(const fdt_plot *p)
{
    fputs("</div></figure>\n", p->out);
}

static void title(FILE *out, const char *text)
{
    fputs("<title>", out);
    fdt_html_text(out, text);
    fputs("</title>", out);
}

void fdt_plot_bar(const fdt_plot *p, double x0, double x1, double value, const char *color,
                  const char *text)
{
    if (!(value > 0))
        return;
    /* a figure far below the tallest still shows: a pixel at least */
    const double base = px_y(p, 0), height = base - px_y(p, value) < 1 ? 1 : base - px_y(p, value);
    const double left = px_x(p, x0);
    fprintf(p->out, "<rect class=\"mark bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
            "height=\"%.1f\" fill=\"%s\">", left, base - height, px_x(p, x1) - left, height,
            color);
    title(p->out, text);
    fputs("</rect>\n", p->out);
}

void fdt_plot_doubt(const fdt_plot *p, double x, double y, const char *text)
{
    const double cx = px_x(p, x), base = px_y(p, y) - 3;
    fprintf(p->out, "<polygon class=\"mark doubt\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\">",
            cx - 6, base, cx + 6, base, cx, base - 11);
    title(p->out, text);
    fputs("</polygon>\n", p->out);
}

void fdt_plot_point(const fdt_plot *p, double x, double y, const char *color,
                    const char *text)
{
    fprintf(p->out, "<circle class=\"mark point\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
            "fill=\"%s\">", px_x(p, x), px_y(p, y), color);
    title(p->out, text);
    fputs("</circle>\n", p->out);
}

void fdt_plot_cell(const fdt_plot *p, size_t x, size_t y, double shade, double value,
                   const char *text)
{
    const double left = px_x(p, (double)x), top = px_y(p, (double)y + 1);
    const double w = px_x(p, (double)x + 1) - left, h = px_y(p, (double)y) - top;
    char color[8];
    fdt_plot_shade(shade, color);
    fprintf(p->out, "<rect class=\"mark cell\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
            "height=\"%.1f\" fill=\"%s\">", left, top, w, h, color);
    title(p->out, text);
    fputs("</rect>\n", p->out);
    /* the value where it fits, light on the darker half of the shades */
    if (w >= 36 && h >= 16)
        fprintf(p->out, "<text class=\"cell-value%s\" text-anchor=\"middle\" x=\"%.1f\" "
                "y=\"%.1f\">%.3g</text>\n", shade > 0.5 ? " on-dark" : "", left + w / 2,
                top + h / 2 + 4, value);
}

void fdt_plot_line(const fdt_plot *p, const double *xs, const double *ys, size_t n,
                   const char *color, const char *text)
{
    fprintf(p->out, "<polyline class=\"mark line\" fill=\"none\" stroke=\"%s\" points=\"",
            color);
    for (size_t i = 0; i < n; i++)
        fprintf(p->out, "%s%.1f,%.1f", i ? " " : "", px_x(p, xs[i]), px_y(p, ys[i]));
    fputs("\">", p->out);
    title(p->out, text);
    fputs("</polyline>\n", p->out);
}

void fdt_plot_rule(const fdt_plot *p, double y, const char *label)
{
    fprintf(p->out, "<line class=\"rule\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
            "<text class=\"rule-label\" text-anchor=\"end\" x=\"%.1f\" y=\"%.1f\">",
            LEFT, p->width - RIGHT, px_y(p, y), px_y(p, y), p->width - RIGHT - 2,
            px_y(p, y) - 4);
    fdt_html_text(p->out, label);
    fputs("</text>\n", p->out);
}

void fdt_plot_shade(double t, char out[8])
{
    static const int light[3] = {0xde, 0xeb, 0xf7}, dark[3] = {0x08, 0x30, 0x6b};
    int c[3];
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    for (int i = 0; i < 3; i++)
        c[i] = (int)lround(light[i] + t * (dark[i] - light[i]));
    snprintf(out, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
}

const char *fdt_plot_color(size_t i)
{
    static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
                                          "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
                                          "#17becf", "#d62728"};
    return palette[i % (sizeof palette / sizeof *palette)];
}

void fdt_plot_key(FILE *out, const char *color, const char *label)
{
    fprintf(out, "<span class=\"key\"><span class=\"swatch\" style=\"background:%s\"></span>",
            color);
    fdt_html_text(out, label);
    fputs("</span>\n", out);
}
