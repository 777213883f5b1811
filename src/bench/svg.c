// SPDX-License-Identifier: GPL-2.0
/*
 * svg: the overhead chart of `iotracer bench`, drawn by hand (no plotting
 * stack): one panel per metric, one horizontal bar per (workload, tracer),
 * the bar at the median, a whisker from min to max, an optional target line.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/svg.h"
#include "lib/svg.h"

#define SVG_W 960
#define SVG_LABEL_W 300 /* label column */
#define SVG_PLOT_X (SVG_LABEL_W + 10)
#define SVG_PLOT_W (SVG_W - SVG_PLOT_X - 90)
#define SVG_ROW_H 18
#define SVG_GROUP_GAP 8
#define SVG_PANEL_HEAD 46 /* title + axis labels */
#define SVG_PANEL_GAP 30

static const char *const palette[] = {
	"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
};
#define NR_COLORS (int)(sizeof(palette) / sizeof(palette[0]))

/* A "nice" tick step (1, 2 or 5 times a power of ten) for about 5 ticks over range. */
static double nice_step(double range)
{
	double raw, mag, f;

	if (!(range > 0) || !isfinite(range))
		return 1;
	raw = range / 5;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	if (f <= 1)
		return mag;
	if (f <= 2)
		return 2 * mag;
	if (f <= 5)
		return 5 * mag;
	return 10 * mag;
}

static int panel_height(const struct svg_panel *p)
{
	int groups = 0;

	for (int i = 0; i < p->nbars; i++)
		if (!i || strcmp(p->bars[i].group ? p->bars[i].group : "",
				 p->bars[i - 1].group ? p->bars[i - 1].group : ""))
			groups++;
	return SVG_PANEL_HEAD + p->nbars * SVG_ROW_H + groups * SVG_GROUP_GAP + 20;
}

static void fmt_val(double v, char *buf, size_t n)
{
	double a = fabs(v);

	if (!isfinite(v))
		snprintf(buf, n, "n/a");
	else if (a >= 1000)
		snprintf(buf, n, "%.0f", v);
	else if (a >= 10)
		snprintf(buf, n, "%.1f", v);
	else
		snprintf(buf, n, "%.2f", v);
}

/* The horizontal scale of a panel: every value, whisker and the limit in view. */
struct scale {
	double lo, hi, step, k; /* k: pixels per unit */
	int y0, body_h;
};

static double x_of(const struct scale *sc, double v)
{
	return SVG_PLOT_X + (v - sc->lo) * sc->k;
}

static void panel_scale(const struct svg_panel *p, int y0, struct scale *sc)
{
	double lo = 0, hi = 0;

	for (int i = 0; i < p->nbars; i++) {
		const struct svg_bar *r = &p->bars[i];
		double v[3] = { r->value, r->lo, r->hi };

		for (int k = 0; k < 3; k++) {
			if (!isfinite(v[k]))
				continue;
			lo = fmin(lo, v[k]);
			hi = fmax(hi, v[k]);
		}
	}
	if (isfinite(p->limit)) {
		lo = fmin(lo, p->limit);
		hi = fmax(hi, p->limit);
	}
	if (hi - lo <= 0)
		hi = lo + 1;
	sc->step = nice_step(hi - lo);
	sc->lo = floor(lo / sc->step) * sc->step;
	sc->hi = ceil(hi / sc->step) * sc->step;
	sc->k = SVG_PLOT_W / (sc->hi - sc->lo);
	sc->y0 = y0;
	sc->body_h = panel_height(p) - SVG_PANEL_HEAD - 20;
}

/* Grid lines with tick labels, the zero line, the limit line. */
static void draw_axes(struct svg *b, const struct svg_panel *p, const struct scale *sc)
{
	int top = sc->y0 + SVG_PANEL_HEAD - 6, bottom = sc->y0 + SVG_PANEL_HEAD + sc->body_h;
	char esc[256], vbuf[32];
	double step = sc->step;

	for (double t = sc->lo; t <= sc->hi + step / 2; t += step) {
		double x = x_of(sc, t);
		double tv = fabs(t) < step / 1e6 ? 0 : t;

		snprintf(vbuf, sizeof(vbuf), "%.*f", step >= 1 ? 0 : step >= 0.1 ? 1 : 2, tv);
		svg_printf(
			b,
			"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n"
			"<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\" fill=\"#555\">%s</text>\n",
			x, top, x, bottom, x, sc->y0 + SVG_PANEL_HEAD - 10, vbuf);
	}
	svg_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333\"/>\n",
		   x_of(sc, 0), top, x_of(sc, 0), bottom);
	if (!isfinite(p->limit))
		return;
	svg_printf(
		b,
		"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#d62728\" stroke-dasharray=\"4 3\"/>\n",
		x_of(sc, p->limit), top, x_of(sc, p->limit), bottom);
	if (p->limit_label)
		svg_printf(
			b,
			"<text x=\"%.1f\" y=\"%d\" font-size=\"10\" fill=\"#d62728\">%s</text>\n",
			x_of(sc, p->limit) + 3, bottom + 12,
			svg_escape(p->limit_label, esc, sizeof(esc)));
}

/* One bar at row y: label, bar, whisker, value (or n/a). */
static void draw_bar(struct svg *b, const struct svg_bar *r, const struct scale *sc, int y)
{
	int c = r->color >= 0 ? r->color % NR_COLORS : 0;
	char esc[256], vbuf[32];

	svg_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\">%s</text>\n",
		   SVG_LABEL_W, y + 13, svg_escape(r->label, esc, sizeof(esc)));
	if (!isfinite(r->value)) {
		svg_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#888\">n/a</text>\n",
			   SVG_PLOT_X + 4, y + 13);
		return;
	}
	fmt_val(r->value, vbuf, sizeof(vbuf));
	svg_printf(
		b,
		"<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s %s</title></rect>\n",
		x_of(sc, fmin(0, r->value)), y + 3, fabs(r->value) * sc->k, SVG_ROW_H - 5,
		palette[c], svg_escape(r->label, esc, sizeof(esc)), vbuf);
	if (isfinite(r->lo) && isfinite(r->hi)) {
		double xl = x_of(sc, r->lo), xh = x_of(sc, r->hi);
		int ym = y + SVG_ROW_H / 2;

		svg_printf(
			b,
			"<path d=\"M%.1f %dV%dM%.1f %dH%.1fM%.1f %dV%d\" stroke=\"#222\" fill=\"none\"/>\n",
			xl, ym - 4, ym + 4, xl, ym, xh, xh, ym - 4, ym + 4);
	}
	svg_printf(b, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" fill=\"#222\">%s</text>\n",
		   x_of(sc, fmax(fmax(0, r->value), isfinite(r->hi) ? r->hi : 0)) + 4, y + 13,
		   vbuf);
}

static void draw_panel(struct svg *b, const struct svg_panel *p, int y0)
{
	struct scale sc;
	char esc[256];
	int y;

	panel_scale(p, y0, &sc);
	svg_printf(b, "<g class=\"panel\">\n");
	svg_printf(b, "<text x=\"10\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">%s</text>\n",
		   y0 + 16, svg_escape(p->title, esc, sizeof(esc)));
	draw_axes(b, p, &sc);
	y = y0 + SVG_PANEL_HEAD;
	for (int i = 0; i < p->nbars; i++) {
		const struct svg_bar *r = &p->bars[i];
		const char *g = r->group ? r->group : "";

		if (!i || strcmp(g, p->bars[i - 1].group ? p->bars[i - 1].group : "")) {
			y += SVG_GROUP_GAP;
			svg_printf(
				b,
				"<text x=\"10\" y=\"%d\" font-size=\"12\" font-weight=\"bold\">%s</text>\n",
				y + 13, svg_escape(g, esc, sizeof(esc)));
		}
		draw_bar(b, r, &sc, y);
		y += SVG_ROW_H;
	}
	svg_printf(b, "</g>\n");
}

char *bench_svg_chart(const char *title, const struct svg_panel *panels, int npanels)
{
	struct svg b;
	char esc[256];
	int h = 40, y;

	for (int i = 0; i < npanels; i++)
		h += panel_height(&panels[i]) + SVG_PANEL_GAP;
	svg_begin(&b, SVG_W, h);
	svg_printf(&b, "<text x=\"10\" y=\"24\" font-size=\"16\" font-weight=\"bold\">%s</text>\n",
		   svg_escape(title ? title : "", esc, sizeof(esc)));
	y = 40;
	for (int i = 0; i < npanels; i++) {
		draw_panel(&b, &panels[i], y);
		y += panel_height(&panels[i]) + SVG_PANEL_GAP;
	}
	return svg_end(&b);
}
