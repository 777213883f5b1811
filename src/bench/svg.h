/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svg: a horizontal bar chart as a standalone SVG document, drawn by hand
 * (no plotting stack; the document frame and escaping: lib/svg.h). Used by
 * `iotracer bench --svg`; knows nothing of it.
 */
#ifndef IT_BENCH_SVG_H
#define IT_BENCH_SVG_H

#include "lib/svg.h"

struct svg_bar {
	const char *group; /* workload: bars with the same group are drawn together */
	const char *label; /* tracer */
	double value, lo, hi; /* median and min-max (lo/hi NaN: no whisker) */
	int color; /* index into the palette */
};

struct svg_panel {
	const char *title; /* e.g. "added CPU, % per core" */
	const struct svg_bar *bars;
	int nbars;
	double limit; /* a target line (NaN: none) */
	const char *limit_label;
};

/*
 * A horizontal bar chart, one panel after the other, as a standalone SVG
 * document (malloc'd, NUL terminated; NULL on ENOMEM). Text is XML-escaped.
 */
char *bench_svg_chart(const char *title, const struct svg_panel *panels, int npanels);

#endif /* IT_BENCH_SVG_H */
