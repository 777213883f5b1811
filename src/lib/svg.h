/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svg: the frame of a standalone SVG document drawn by hand (no plotting
 * stack): a growable text buffer, XML escaping, the root element and a white
 * background. The pictures themselves belong to their parts: the bench's bar
 * chart (src/bench/svg.c), the report's latency heatmap (src/report/heatmap.c).
 *
 *	struct svg s;
 *	svg_begin(&s, 960, 400);
 *	svg_printf(&s, "<rect x=\"%d\" .../>\n", x);
 *	char *doc = svg_end(&s);      (malloc'd, NULL on ENOMEM)
 */
#ifndef IT_LIB_SVG_H
#define IT_LIB_SVG_H

#include <stddef.h>

struct svg {
	char *p;
	size_t len, cap;
	int err; /* ENOMEM or a format error: every later call is a no-op */
};

/* The XML declaration, the root element (width x height px, sans-serif), a white page. */
void svg_begin(struct svg *s, int width, int height);
void svg_printf(struct svg *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Close the root element; the document (the caller frees it), or NULL after an error. */
char *svg_end(struct svg *s);

/* XML-escape str into buf (truncated to n, NUL terminated). Returns buf. */
char *svg_escape(const char *str, char *buf, size_t n);

#endif /* IT_LIB_SVG_H */
