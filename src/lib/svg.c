// SPDX-License-Identifier: GPL-2.0
/*
 * svg: a growable text buffer for an SVG document, XML escaping and the
 * document frame (svg.h). Knows nothing of what is drawn.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/svg.h"

void svg_printf(struct svg *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->err)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->err = 1;
			return;
		}
		if (b->p && (size_t)n < room) {
			b->len += n;
			return;
		}
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *np = realloc(b->p, cap);
		if (!np) {
			b->err = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
}

void svg_begin(struct svg *b, int width, int height)
{
	memset(b, 0, sizeof(*b));
	svg_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	svg_printf(
		b,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n",
		width, height, width, height);
	svg_printf(b, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
}

char *svg_end(struct svg *b)
{
	svg_printf(b, "</svg>\n");
	if (b->err) {
		free(b->p);
		b->p = NULL;
	}
	return b->p;
}

char *svg_escape(const char *s, char *buf, size_t n)
{
	size_t o = 0;

	if (!n)
		return buf;
	for (; s && *s; s++) {
		const char *rep = NULL;
		char one[2] = { *s, 0 };

		switch (*s) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&apos;";
			break;
		default:
			/* control characters are not allowed in XML 1.0 */
			if ((unsigned char)*s < 0x20 && *s != '\t')
				one[0] = ' ';
			rep = one;
		}
		size_t l = strlen(rep);
		if (o + l >= n)
			break;
		memcpy(buf + o, rep, l);
		o += l;
	}
	buf[o] = '\0';
	return buf;
}
