// SPDX-License-Identifier: GPL-2.0
/*
 * jsonw: streaming JSON writer. See jsonw.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"

/* w->first[depth] bits */
#define JW_F_MORE 0x1 /* a value was written at this depth: comma before the next */
#define JW_F_OBJ 0x2 /* the container at this depth is an object */
#define JW_F_ARR 0x4 /* ... an array (depth 0, the top level, is neither) */

#define JW_MIN_CAP 256

void jw_init(struct jw *w)
{
	memset(w, 0, sizeof(*w));
}

void jw_free(struct jw *w)
{
	free(w->buf);
	jw_init(w);
}

void jw_reset(struct jw *w)
{
	w->len = 0;
	w->depth = 0;
	w->err = 0;
	memset(w->first, 0, sizeof(w->first));
	if (w->buf)
		w->buf[0] = '\0';
}

/* Room for n more bytes plus the NUL; sets err on failure. */
static int jw_reserve(struct jw *w, size_t n)
{
	size_t cap;
	char *nbuf;

	if (w->err)
		return -1;
	if (n > SIZE_MAX / 2 - w->len - 1) {
		w->err = ENOMEM;
		return -1;
	}
	if (w->len + n + 1 <= w->cap)
		return 0;
	cap = w->cap ? w->cap : JW_MIN_CAP;
	while (cap < w->len + n + 1)
		cap *= 2;
	nbuf = realloc(w->buf, cap);
	if (!nbuf) {
		w->err = ENOMEM;
		return -1;
	}
	w->buf = nbuf;
	w->cap = cap;
	return 0;
}

/* Append n raw bytes (caller reserved). */
static inline void jw_raw(struct jw *w, const char *s, size_t n)
{
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

static void jw_put(struct jw *w, const char *s, size_t n)
{
	if (!jw_reserve(w, n))
		jw_raw(w, s, n);
}

/*
 * Length of the valid UTF-8 sequence at s (at most n bytes), or 0 if the
 * byte at s does not start one (RFC 3629: no overlongs, no surrogates,
 * nothing above U+10FFFF).
 */
static size_t jw_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0; /* overlong */
	else if (c == 0xed)
		hi = 0x9f; /* surrogates */
	else if (c == 0xf0)
		lo = 0x90; /* overlong */
	else if (c == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* Append s[0..n) as a quoted, escaped JSON string. */
static void jw_put_string(struct jw *w, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, ulen;
	char esc[6];

	/* worst case: every byte becomes \u00XX */
	if (n > (SIZE_MAX - 2) / 6 || jw_reserve(w, n * 6 + 2))
		return;
	jw_raw(w, "\"", 1);
	while (i < n) {
		unsigned char c = s[i];

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			w->buf[w->len++] = (char)c;
			i++;
			continue;
		}
		if (c >= 0x80) {
			ulen = jw_utf8_len(s + i, n - i);
			if (ulen) {
				memcpy(w->buf + w->len, s + i, ulen);
				w->len += ulen;
				i += ulen;
				continue;
			}
		}
		esc[0] = '\\';
		switch (c) {
		case '"':
		case '\\':
			esc[1] = (char)c;
			break;
		case '\b':
			esc[1] = 'b';
			break;
		case '\f':
			esc[1] = 'f';
			break;
		case '\n':
			esc[1] = 'n';
			break;
		case '\r':
			esc[1] = 'r';
			break;
		case '\t':
			esc[1] = 't';
			break;
		default:
			/* other control characters and stray bytes: \u00XX */
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xf];
			memcpy(w->buf + w->len, esc, 6);
			w->len += 6;
			i++;
			continue;
		}
		memcpy(w->buf + w->len, esc, 2);
		w->len += 2;
		i++;
	}
	jw_raw(w, "\"", 1);
}

static void jw_misuse(struct jw *w)
{
	if (!w->err)
		w->err = EINVAL;
}

/* Separator and key before a value; 0 when the value may be written. */
static int jw_pre(struct jw *w, const char *key)
{
	unsigned char *f;

	if (w->err)
		return -1;
	f = &w->first[w->depth];
	if ((*f & JW_F_OBJ) ? !key : !!key) {
		jw_misuse(w);
		return -1;
	}
	if (*f & JW_F_MORE)
		jw_put(w, w->depth ? "," : "\n", 1);
	*f |= JW_F_MORE;
	if (key) {
		jw_put_string(w, key, strlen(key));
		jw_put(w, ":", 1);
	}
	return w->err ? -1 : 0;
}

static void jw_begin(struct jw *w, const char *key, unsigned char kind, char open)
{
	if (w->err)
		return;
	if (w->depth >= JW_MAX_DEPTH) {
		jw_misuse(w);
		return;
	}
	if (jw_pre(w, key))
		return;
	jw_put(w, &open, 1);
	w->depth++;
	w->first[w->depth] = kind;
}

static void jw_end(struct jw *w, unsigned char kind, char close)
{
	if (w->err)
		return;
	if (!w->depth || !(w->first[w->depth] & kind)) {
		jw_misuse(w);
		return;
	}
	jw_put(w, &close, 1);
	w->first[w->depth] = 0;
	w->depth--;
}

void jw_obj_begin(struct jw *w, const char *key)
{
	jw_begin(w, key, JW_F_OBJ, '{');
}

void jw_obj_end(struct jw *w)
{
	jw_end(w, JW_F_OBJ, '}');
}

void jw_arr_begin(struct jw *w, const char *key)
{
	jw_begin(w, key, JW_F_ARR, '[');
}

void jw_arr_end(struct jw *w)
{
	jw_end(w, JW_F_ARR, ']');
}

static void jw_value_raw(struct jw *w, const char *key, const char *s)
{
	if (!jw_pre(w, key))
		jw_put(w, s, strlen(s));
}

void jw_str(struct jw *w, const char *key, const char *v)
{
	if (!v)
		jw_null(w, key);
	else if (!jw_pre(w, key))
		jw_put_string(w, v, strlen(v));
}

void jw_strn(struct jw *w, const char *key, const char *v, size_t n)
{
	if (!v)
		jw_null(w, key);
	else if (!jw_pre(w, key))
		jw_put_string(w, v, strnlen(v, n));
}

void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	jw_value_raw(w, key, buf);
}

void jw_i64(struct jw *w, const char *key, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	jw_value_raw(w, key, buf);
}

void jw_bool(struct jw *w, const char *key, int v)
{
	jw_value_raw(w, key, v ? "true" : "false");
}

void jw_null(struct jw *w, const char *key)
{
	jw_value_raw(w, key, "null");
}

void jw_double(struct jw *w, const char *key, double v)
{
	char buf[40], *p;

	if (!isfinite(v)) {
		jw_null(w, key);
		return;
	}
	snprintf(buf, sizeof(buf), "%.6g", v);
	/* a locale with a decimal comma must not break the JSON */
	for (p = buf; *p; p++)
		if (*p == ',')
			*p = '.';
	jw_value_raw(w, key, buf);
}

void jw_hex(struct jw *w, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "\"0x%" PRIx64 "\"", v);
	jw_value_raw(w, key, buf);
}

const char *jw_data(const struct jw *w)
{
	return w->buf ? w->buf : "";
}

size_t jw_len(const struct jw *w)
{
	return w->len;
}

int jw_error(const struct jw *w)
{
	return w->err;
}
