// SPDX-License-Identifier: GPL-2.0
/*
 * heatmap: `iotracer report --heatmap FILE.svg`, a latency heatmap per device
 * and op (docs/record.md, "Heatmap"): time in columns, latency (the request's,
 * or with --stage a stage of its block requests) in log2 rows (row k
 * holds [2^k, 2^(k+1)) ns, like the daemon's histograms), the number of
 * requests in each cell as its colour. Every finished request lands in exactly
 * one cell, so the cells add up to the requests the report matched, less the
 * unfinished ones (no latency: counted in the title).
 *
 * The time range is known only once every request is read, so a request is
 * kept as 16 bytes (start, device index, row) until the picture is drawn.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records/output.h"
#include "records/stages.h"
#include "lib/abi.h"
#include "lib/opts.h"
#include "lib/parse.h"
#include "lib/svg.h"
#include "report/internal.h"

#define HM_MAX_COLS 120
#define HM_PLOT_W 960 /* at most, for the cells */
#define HM_CELL_H 14
#define HM_LEFT 70 /* row labels */
#define HM_PANEL_HEAD 28
#define HM_PANEL_FOOT 34 /* time labels */
#define HM_TOP 94 /* title, legend, axes */
#define HM_AXIS_H 16 /* the time axis title under the ticks */

/* Light to dark: one colour per count level (a log scale of the busiest cell). */
static const char *const hm_palette[] = {
	"#ffffb2", "#fed976", "#feb24c", "#fd8d3c", "#fc4e2a", "#e31a1c", "#b10026", "#67000d",
};
#define HM_LEVELS (int)(sizeof(hm_palette) / sizeof(hm_palette[0]))

/* The stages a heatmap draws (enum it_stage; their names are abi's), --stage's order. */
static const unsigned int hm_stages[] = { IT_ST_TOTAL, IT_ST_Q2C, IT_ST_Q2D, IT_ST_D2C };

struct hm_ent {
	uint64_t start_ns;
	uint32_t dev_idx; /* the panel: a (device, op) */
	uint32_t row; /* log2 of the latency in ns */
};

/* A panel: one device and op. */
struct hm_panel {
	uint32_t dev;
	uint8_t op;
};

struct hm {
	unsigned int stage; /* enum it_stage, one of hm_stages */
	struct hm_ent *e;
	size_t n, cap;
	struct hm_panel *devs; /* in order of first request */
	uint32_t nr_devs;
	uint64_t unfinished;
	int64_t real_off_ns; /* of the first request: the title's wall-clock time */
	int oom;
};

/* The picture's frame, from every request kept. */
struct hm_grid {
	uint64_t t0, col_ns; /* first column's start, column width */
	int ncols, row_lo, nrows, cell_w;
	uint64_t max; /* the busiest cell's count */
	uint64_t *cnt; /* [dev][row][col] */
};

const char *hm_stage_kw(int i)
{
	return i >= 0 && i < (int)(sizeof(hm_stages) / sizeof(hm_stages[0])) ?
		       abi_stage_name(hm_stages[i]) :
		       NULL;
}

int hm_stage_of(const char *name)
{
	int i = opts_kw_find(hm_stage_kw, name);

	return i < 0 ? -1 : (int)hm_stages[i];
}

struct hm *hm_new(unsigned int stage)
{
	struct hm *h = calloc(1, sizeof(struct hm));

	if (h)
		h->stage = stage;
	return h;
}

void hm_free(struct hm *h)
{
	if (!h)
		return;
	free(h->e);
	free(h->devs);
	free(h);
}

static int dev_index(struct hm *h, uint32_t dev, uint8_t op, uint32_t *idx)
{
	struct hm_panel *n;

	for (uint32_t i = 0; i < h->nr_devs; i++)
		if (h->devs[i].dev == dev && h->devs[i].op == op) {
			*idx = i;
			return 0;
		}
	n = realloc(h->devs, (h->nr_devs + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	h->devs = n;
	n[h->nr_devs] = (struct hm_panel){ dev, op };
	*idx = h->nr_devs++;
	return 0;
}

/* One cell's worth: start .. end on (dev, op); end 0 or before start: unfinished. */
static void hm_put(struct hm *h, uint64_t start, uint64_t end, uint32_t dev, uint8_t op,
		   int64_t real_off_ns)
{
	struct hm_ent *x;
	uint64_t lat;
	uint32_t idx;

	if (h->oom)
		return;
	if (!end || end < start) {
		h->unfinished++;
		return;
	}
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 4096;

		x = realloc(h->e, cap * sizeof(*x));
		if (!x) {
			h->oom = 1;
			return;
		}
		h->e = x;
		h->cap = cap;
	}
	if (dev_index(h, dev, op, &idx)) {
		h->oom = 1;
		return;
	}
	if (!h->n)
		h->real_off_ns = real_off_ns;
	lat = end - start;
	h->e[h->n++] = (struct hm_ent){ start, idx, lat ? 63 - __builtin_clzll(lat) : 0 };
}

void hm_add(struct hm *h, const struct rp_req *q, uint32_t dev)
{
	struct req_view v;

	if (h->stage == IT_ST_TOTAL) {
		stages_make_view(q->r, &v);
		hm_put(h, q->start_ns, q->end_ns, dev, (uint8_t)v.op, q->real_off_ns);
		return;
	}
	for (int i = 0; i < q->r->nr_blocks; i++) {
		const struct it_block_rec *b = q->r->blocks[i];
		/* q2d and d2c need the issue stamp: without it the stage is not drawn */
		uint64_t from = h->stage == IT_ST_D2C ? b->d_ns : b->q_ns;
		uint64_t to = h->stage == IT_ST_Q2D ? b->d_ns : b->c_ns;

		if (!b->d_ns && h->stage != IT_ST_Q2C)
			from = 1, to = 0;
		/* placed in time by its queue stamp, like the total by the request's start */
		hm_put(h, b->q_ns, to && to >= from ? b->q_ns + (to - from) : 0, b->dev, b->op,
		       q->real_off_ns);
	}
}

/* The smallest 1, 2 or 5 x 10^k ns that is at least ns. */
static uint64_t nice_ns(uint64_t ns)
{
	uint64_t m = 1;

	for (;;) {
		if (ns <= m)
			return m;
		if (ns <= 2 * m)
			return 2 * m;
		if (ns <= 5 * m)
			return 5 * m;
		m *= 10;
	}
}

static int grid_make(const struct hm *h, struct hm_grid *g)
{
	uint64_t t1 = 0, span;
	int row_hi = 0;

	memset(g, 0, sizeof(*g));
	g->t0 = UINT64_MAX;
	g->row_lo = 63;
	for (size_t i = 0; i < h->n; i++) {
		const struct hm_ent *x = &h->e[i];

		g->t0 = x->start_ns < g->t0 ? x->start_ns : g->t0;
		t1 = x->start_ns > t1 ? x->start_ns : t1;
		g->row_lo = (int)x->row < g->row_lo ? (int)x->row : g->row_lo;
		row_hi = (int)x->row > row_hi ? (int)x->row : row_hi;
	}
	if (!h->n)
		g->t0 = 0, g->row_lo = 0;
	span = t1 - g->t0 + 1;
	g->col_ns = nice_ns((span + HM_MAX_COLS - 1) / HM_MAX_COLS);
	g->ncols = (int)((span - 1) / g->col_ns + 1);
	g->nrows = row_hi - g->row_lo + 1;
	g->cell_w = HM_PLOT_W / g->ncols > 16 ? 16 : HM_PLOT_W / g->ncols;
	g->cnt = calloc((size_t)(h->nr_devs ? h->nr_devs : 1) * g->nrows * g->ncols,
			sizeof(*g->cnt));
	if (!g->cnt)
		return -ENOMEM;
	for (size_t i = 0; i < h->n; i++) {
		const struct hm_ent *x = &h->e[i];
		size_t c = (size_t)x->dev_idx * g->nrows * g->ncols +
			   (size_t)(x->row - g->row_lo) * g->ncols +
			   (x->start_ns - g->t0) / g->col_ns;

		if (++g->cnt[c] > g->max)
			g->max = g->cnt[c];
	}
	return 0;
}

/* A count's colour: log scale from 1 (lightest) to the busiest cell (darkest). */
static int level_of(uint64_t c, uint64_t max)
{
	if (max <= 1)
		return 0;
	return (int)lround((HM_LEVELS - 1) * log((double)c) / log((double)max));
}

/* "512ns", "1us", "2ms", "1s": a power of two in ns, rounded for a label. */
static void fmt_pow2(int k, char *buf, size_t n)
{
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	double v = ldexp(1, k);
	int u = 0;

	while (u < 3 && v >= 1000) {
		v /= 1000;
		u++;
	}
	snprintf(buf, n, "%.*f%s", v < 10 && v != floor(v) ? 1 : 0, v, unit[u]);
}

/* The time axis's unit: s, ms, us or ns, by the span it covers. */
static void axis_unit(uint64_t span_ns, const char **unit, double *scale)
{
	if (span_ns >= 2000000000ull)
		*unit = "s", *scale = 1e9;
	else if (span_ns >= 2000000)
		*unit = "ms", *scale = 1e6;
	else if (span_ns >= 2000)
		*unit = "us", *scale = 1e3;
	else
		*unit = "ns", *scale = 1;
}

/* A column's width: "100ms", "2s", "50us". */
static void fmt_col(uint64_t ns, char *buf, size_t n)
{
	const char *unit;
	double scale;

	axis_unit(ns, &unit, &scale);
	snprintf(buf, n, "%g%s", ns / scale, unit);
}

static int panel_h(const struct hm_grid *g)
{
	return HM_PANEL_HEAD + g->nrows * HM_CELL_H + HM_PANEL_FOOT + HM_AXIS_H;
}

/* The smallest count drawn in colour level l (level_of's rounding edge). */
static uint64_t level_min(int l, uint64_t max)
{
	if (!l || max <= 1)
		return 1;
	return (uint64_t)ceil(exp((l - 0.5) * log((double)max) / (HM_LEVELS - 1)));
}

/* The colours some count up to the busiest cell's is drawn in, each once. */
static void draw_legend(struct svg *s, const struct hm_grid *g)
{
	int x = 120;

	svg_printf(s, "<text x=\"10\" y=\"66\" font-size=\"11\">requests per cell:</text>\n");
	for (int l = 0; l < HM_LEVELS; l++) {
		uint64_t c = level_min(l, g->max);

		/* no count in [c, next level's): a colour no cell can have */
		if (c > g->max || (l + 1 < HM_LEVELS && level_min(l + 1, g->max) <= c))
			continue;
		svg_printf(
			s,
			"<rect class=\"legend\" x=\"%d\" y=\"56\" width=\"14\" height=\"14\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"67\" font-size=\"10\">&#8805;%llu</text>\n",
			x, hm_palette[level_of(c, g->max)], x + 17, (unsigned long long)c);
		x += 60;
	}
	svg_printf(
		s,
		"<text x=\"10\" y=\"84\" font-size=\"10\" fill=\"#555\">rows: latency in log2 "
		"buckets, labelled with their lower edge, slowest on top; columns: time</text>\n");
}

/* The time axis: ticks in one unit from 0, and its title naming the unit. */
static void draw_time_axis(struct svg *s, const struct hm_grid *g, int y)
{
	int step = g->ncols / 6 ? g->ncols / 6 : 1;
	const char *unit;
	double scale;

	axis_unit((uint64_t)g->ncols * g->col_ns, &unit, &scale);
	for (int c = 0; c < g->ncols; c += step)
		svg_printf(s, "<text x=\"%d\" y=\"%d\" font-size=\"10\">%g</text>\n",
			   HM_LEFT + c * g->cell_w, y + 14, (double)c * g->col_ns / scale);
	svg_printf(s,
		   "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#555\">time since the first "
		   "request (%s)</text>\n",
		   HM_LEFT, y + 14 + HM_AXIS_H, unit);
}

/* One device and op: row labels, the cells, the axes. */
static void draw_panel(struct svg *s, const struct hm_grid *g, const uint64_t *cnt,
		       const char *name, const char *op, int y0)
{
	int yb = y0 + HM_PANEL_HEAD, ymid = yb + g->nrows * HM_CELL_H / 2;
	uint64_t total = 0;
	char esc[128], lab[32];

	for (int i = 0; i < g->nrows * g->ncols; i++)
		total += cnt[i];
	svg_printf(s,
		   "<g class=\"device\" data-device=\"%s\" data-count=\"%llu\" data-op=\"%s\">\n",
		   svg_escape(name, esc, sizeof(esc)), (unsigned long long)total, op);
	svg_printf(
		s,
		"<text x=\"10\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">%s %s: %llu requests</text>\n",
		y0 + 18, esc, op, (unsigned long long)total);
	svg_printf(s,
		   "<text x=\"12\" y=\"%d\" font-size=\"10\" fill=\"#555\" text-anchor=\"middle\" "
		   "transform=\"rotate(-90 12 %d)\">latency</text>\n",
		   ymid, ymid);
	for (int r = 0; r < g->nrows; r++) {
		/* the slowest row on top */
		int y = yb + (g->nrows - 1 - r) * HM_CELL_H;

		fmt_pow2(g->row_lo + r, lab, sizeof(lab));
		svg_printf(
			s,
			"<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">%s</text>\n",
			HM_LEFT - 4, y + HM_CELL_H - 3, lab);
		for (int c = 0; c < g->ncols; c++) {
			uint64_t n = cnt[r * g->ncols + c];

			if (!n)
				continue;
			svg_printf(
				s,
				"<rect class=\"cell\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" data-count=\"%llu\"><title>%s &#8805;%s, column %d: %llu</title></rect>\n",
				HM_LEFT + c * g->cell_w, y, g->cell_w, HM_CELL_H,
				hm_palette[level_of(n, g->max)], (unsigned long long)n, esc, lab, c,
				(unsigned long long)n);
		}
	}
	svg_printf(
		s,
		"<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n",
		HM_LEFT, yb, g->ncols * g->cell_w, g->nrows * HM_CELL_H);
	draw_time_axis(s, g, yb + g->nrows * HM_CELL_H);
	svg_printf(s, "</g>\n");
}

static char *hm_doc(const struct hm *h, const struct hm_grid *g,
		    const char *(*name)(void *ctx, uint32_t dev), void *ctx)
{
	int w = HM_LEFT + g->ncols * g->cell_w + 20, y = HM_TOP;
	char when[48], col[32], lab[32], what[256];
	const char *stage = abi_stage_name(h->stage);
	struct svg s;
	int n;

	if (h->real_off_ns)
		rp_fmt_real(g->t0 + (uint64_t)h->real_off_ns, when, sizeof(when));
	else
		snprintf(when, sizeof(when), "%.3f s (monotonic)", g->t0 / 1e9);
	fmt_col(g->col_ns, col, sizeof(col));
	if (h->n)
		n = snprintf(what, sizeof(what),
			     "%zu requests (%llu unfinished%s, not drawn), from %s, %s per column",
			     h->n, (unsigned long long)h->unfinished,
			     h->stage == IT_ST_TOTAL ? "" : " or without the stage", when, col);
	else
		n = snprintf(what, sizeof(what), "no finished request to draw (%llu unfinished%s)",
			     (unsigned long long)h->unfinished,
			     h->stage == IT_ST_TOTAL ? "" : " or without the stage");
	/* the second title line at ~6.5 px a character (11 px sans-serif) must fit */
	if (w < 20 + n * 7)
		w = 20 + n * 7;
	if (w < 640)
		w = 640;
	svg_begin(&s, w, HM_TOP + (int)h->nr_devs * panel_h(g) + 10);
	svg_printf(
		&s,
		"<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">IO latency heatmap: "
		"%s latency%s</text>\n",
		stage, h->stage == IT_ST_TOTAL ? "" : " of the block requests");
	svg_printf(&s, "<text x=\"10\" y=\"40\" font-size=\"11\">%s</text>\n", what);
	if (h->n)
		draw_legend(&s, g);
	for (uint32_t d = 0; d < h->nr_devs; d++) {
		const char *nm = name ? name(ctx, h->devs[d].dev) : NULL;

		if (!nm)
			nm = h->devs[d].dev ? parse_fmt_devno(h->devs[d].dev, lab, sizeof(lab)) :
					      "-";
		draw_panel(&s, g, g->cnt + (size_t)d * g->nrows * g->ncols, nm,
			   abi_op_name(h->devs[d].op), y);
		y += panel_h(g);
	}
	return svg_end(&s);
}

int hm_write(struct hm *h, FILE *f, const char *(*name)(void *ctx, uint32_t dev), void *ctx)
{
	struct hm_grid g;
	char *doc;
	int err = 0;

	if (h->oom || grid_make(h, &g))
		return -ENOMEM;
	doc = hm_doc(h, &g, name, ctx);
	if (!doc)
		err = -ENOMEM;
	else if (fputs(doc, f) < 0)
		err = -EIO;
	free(doc);
	free(g.cnt);
	return err;
}
