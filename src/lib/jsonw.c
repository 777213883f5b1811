// SPDX-License-Identifier: GPL-2.0
/*
 * jsonw: streaming JSON writer. See jsonw.h.
 *
 * Hot path (one JSON line per traced IO): every value costs one capacity
 * check (the buffer is kept across jw_reset() and grows by doubling). A
 * literal key takes the inline path of jsonw.h, stored as the constant it is;
 * other keys that need no escaping are copied while they are checked. String
 * values are copied while they are checked (jw_put_plain()), and integers are
 * formatted by hand (8-digit chunks, two digits per table lookup, no
 * divisions inside a chunk), never through printf. Only jw_double() uses snprintf.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JW_NO_LIT_MACROS /* the functions themselves, not the macros of the same name */
#include "lib/jsonw.h"

#define JW_MIN_CAP 256

/* Longest hex value: "\"0x<16>\"" (the integers: jsonw.h) */
#define JW_HEX_MAX_LEN 20

/* 1: a byte that goes into a JSON string as it is (printable ASCII and DEL, not '"' '\\') */
static const unsigned char jw_plain[256] = {
	[0x20 ... 0x21] = 1, /* '"' is 0x22 */
	[0x23 ... 0x5b] = 1, /* '\\' is 0x5c */
	[0x5d ... 0x7f] = 1,
};

static const char jw_hexdig[16] = "0123456789abcdef";

static const char jw_digits2[200] = "00010203040506070809"
				    "10111213141516171819"
				    "20212223242526272829"
				    "30313233343536373839"
				    "40414243444546474849"
				    "50515253545556575859"
				    "60616263646566676869"
				    "70717273747576777879"
				    "80818283848586878889"
				    "90919293949596979899";

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
	memset(w->kind, 0, sizeof(w->kind));
	if (w->buf)
		w->buf[0] = '\0';
}

/*
 * The first error sticks until jw_reset(). The container being written then
 * reads as neither object nor array: no call changes the depth after an
 * error, so the inline paths of jsonw.h, which do not look at err, take the
 * general path, which does nothing.
 */
static __attribute__((noinline)) void jw_fail(struct jw *w, int err)
{
	if (!w->err)
		w->err = err;
	w->kind[w->depth] = 0;
}

/* Slow path of jw_reserve(): grow (doubling, so growth is amortized). */
static __attribute__((noinline)) int jw_grow(struct jw *w, size_t n)
{
	size_t cap;
	char *nbuf;

	if (w->err)
		return -1;
	if (n > SIZE_MAX / 2 - w->len - 1) {
		jw_fail(w, ENOMEM);
		return -1;
	}
	if (w->len + n + 1 <= w->cap)
		return 0;
	cap = w->cap ? w->cap : JW_MIN_CAP;
	while (cap < w->len + n + 1)
		cap *= 2;
	nbuf = realloc(w->buf, cap);
	if (!nbuf) {
		jw_fail(w, ENOMEM);
		return -1;
	}
	w->buf = nbuf;
	w->cap = cap;
	return 0;
}

/*
 * Room for n more bytes plus the NUL; sets err on failure. Callers check
 * w->err first (the fast path does not).
 */
static inline int jw_reserve(struct jw *w, size_t n)
{
	/* cap > len whenever buf exists, and cap == len == 0 before */
	if (__builtin_expect(w->cap - w->len > n, 1))
		return 0;
	return jw_grow(w, n);
}

/*
 * End the bytes written from w->buf + w->len up to p (caller reserved). The
 * NUL is written by jw_data(): there is always room for it.
 */
static inline void jw_commit(struct jw *w, char *p)
{
	w->len = (size_t)(p - w->buf);
}

/*
 * The separator before a value written at p == w->buf + w->len: inside a
 * container a comma after its first value, at the top level a newline after
 * the first value. jw_more() records that the value is written.
 */
static inline char *jw_sep(const struct jw *w, char *p)
{
	if (w->depth) {
		if (w->kind[w->depth] & JW_F_MORE)
			*p++ = ',';
	} else if (w->len) {
		*p++ = '\n';
	}
	return p;
}

static inline void jw_more(struct jw *w)
{
	w->kind[w->depth] |= JW_F_MORE;
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

/* Room a quoted, escaped string of n bytes may take: every byte as \u00XX. */
#define JW_ESC_MAX(n) ((n)*6 + 2)
/* Largest n for which JW_ESC_MAX(n) plus a key and separators cannot overflow. */
#define JW_STR_MAX (SIZE_MAX / 16)

/* Write s[0..n) at p as a quoted, escaped JSON string (room: JW_ESC_MAX(n)); returns the end. */
static char *jw_esc(char *p, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str, *end = s + n;
	size_t ulen;

	*p++ = '"';
	while (s < end) {
		unsigned char c = *s;

		if (jw_plain[c]) {
			*p++ = (char)c;
			s++;
			continue;
		}
		if (c >= 0x80) {
			ulen = jw_utf8_len(s, (size_t)(end - s));
			if (ulen) {
				memcpy(p, s, ulen);
				p += ulen;
				s += ulen;
				continue;
			}
		}
		s++;
		*p++ = '\\';
		switch (c) {
		case '"':
		case '\\':
			*p++ = (char)c;
			break;
		case '\b':
			*p++ = 'b';
			break;
		case '\f':
			*p++ = 'f';
			break;
		case '\n':
			*p++ = 'n';
			break;
		case '\r':
			*p++ = 'r';
			break;
		case '\t':
			*p++ = 't';
			break;
		default:
			/* other control characters and stray bytes: \u00XX */
			memcpy(p, "u00", 3);
			p[3] = jw_hexdig[c >> 4];
			p[4] = jw_hexdig[c & 0xf];
			p += 5;
		}
	}
	*p++ = '"';
	return p;
}

static void jw_misuse(struct jw *w)
{
	jw_fail(w, EINVAL);
}

/* Keys up to this long are copied while they are checked (one pass) */
#define JW_KEY_FAST 64

/* jw_pre() for a key that needs escaping or is long. */
static __attribute__((noinline)) char *jw_pre_key_slow(struct jw *w, const char *key, size_t vmax)
{
	size_t k = strlen(key);
	char *p;

	if (k > JW_STR_MAX) {
		jw_fail(w, ENOMEM);
		return NULL;
	}
	if (jw_reserve(w, 1 + JW_ESC_MAX(k) + 1 + vmax))
		return NULL;
	p = jw_sep(w, w->buf + w->len);
	p = jw_esc(p, key, k);
	*p++ = ':';
	jw_more(w);
	return p;
}

/*
 * Separator and key before a value of at most vmax bytes. Returns where to
 * write the value (room for vmax bytes and the NUL), or NULL when the value
 * must not be written (error or misuse).
 */
static inline __attribute__((always_inline)) char *jw_pre(struct jw *w, const char *key,
							  size_t vmax)
{
	size_t k;
	char *p;

	if (w->err)
		return NULL;
	if ((w->kind[w->depth] & JW_F_OBJ) ? !key : !!key) {
		jw_misuse(w);
		return NULL;
	}
	/* separator, quotes, colon, a short key and the value */
	if (jw_reserve(w, 4 + JW_KEY_FAST + vmax))
		return NULL;
	p = jw_sep(w, w->buf + w->len);
	if (key) {
		/* fast path: a short key with nothing to escape (our literals) */
		*p++ = '"';
		for (k = 0; k < JW_KEY_FAST && jw_plain[(unsigned char)key[k]]; k++)
			p[k] = key[k];
		if (k == JW_KEY_FAST || key[k])
			return jw_pre_key_slow(w, key, vmax); /* nothing committed yet */
		p += k;
		*p++ = '"';
		*p++ = ':';
	}
	jw_more(w);
	return p;
}

static void jw_begin(struct jw *w, const char *key, unsigned char kind, char open)
{
	char *p;

	if (w->err)
		return;
	if (w->depth >= JW_MAX_DEPTH) {
		jw_misuse(w);
		return;
	}
	p = jw_pre(w, key, 1);
	if (!p)
		return;
	*p++ = open;
	jw_commit(w, p);
	w->depth++;
	w->kind[w->depth] = kind;
}

static void jw_end(struct jw *w, unsigned char kind, char close)
{
	if (w->err)
		return;
	if (!w->depth || !(w->kind[w->depth] & kind)) {
		jw_misuse(w);
		return;
	}
	if (jw_reserve(w, 1))
		return;
	w->buf[w->len++] = close;
	w->kind[w->depth] = 0;
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

static void jw_value_raw(struct jw *w, const char *key, const char *s, size_t n)
{
	char *p = jw_pre(w, key, n);

	if (p) {
		memcpy(p, s, n);
		jw_commit(w, p + n);
	}
}

static void jw_value_str(struct jw *w, const char *key, const char *v, size_t n)
{
	char *p;

	if (n > JW_STR_MAX) {
		jw_fail(w, ENOMEM);
		return;
	}
	p = jw_pre(w, key, JW_ESC_MAX(n));
	if (p)
		jw_commit(w, jw_esc(p, v, n));
}

void jw_str(struct jw *w, const char *key, const char *v)
{
	if (!v)
		jw_null(w, key);
	else
		jw_value_str(w, key, v, strlen(v));
}

void jw_strn(struct jw *w, const char *key, const char *v, size_t n)
{
	if (!v)
		jw_null(w, key);
	else
		jw_value_str(w, key, v, strnlen(v, n));
}

/* Decimal digits of v < 10^8 (1 for 0). */
static inline unsigned int jw_digits8(uint32_t v)
{
	if (v < 10000)
		return v < 100 ? 1 + (v >= 10) : 3 + (v >= 1000);
	return v < 1000000 ? 5 + (v >= 100000) : 7 + (v >= 10000000);
}

/*
 * Digits without divisions. y = v * ceil(2^47 / 100^k) is v / 100^k in fixed
 * point with 47 fraction bits, rounded up by e = v * (ceil(2^47 / 100^k) -
 * 2^47 / 100^k) < v. As long as e < 2^47 / 100^k (one unit of the last
 * digit pair), the integer part of y * 100^j is the first digits of v down to
 * pair j, for every j <= k: the integer part of y is the first one or two
 * digits, and each multiplication of the fraction by 100 gives the next pair.
 * The bound holds for every v < 10^8 (k <= 3: v < 2^47 / 10^6 = 1.4 * 10^8),
 * and y < 2^54, y's fraction * 100 < 2^54: no overflow.
 */
#define JW_FP_BITS 47
#define JW_FP_MASK ((1ull << JW_FP_BITS) - 1)

static const uint64_t jw_fp[4] = {
	1ull << JW_FP_BITS,
	(1ull << JW_FP_BITS) / 100 + 1, /* 100^k does not divide 2^47: + 1 is ceil */
	(1ull << JW_FP_BITS) / 10000 + 1,
	(1ull << JW_FP_BITS) / 1000000 + 1,
};

/* Write v < 10^8 as d >= digits(v) digits (leading zeros), d <= 8, at p; returns p + d. */
static inline char *jw_fmt_8(char *p, uint32_t v, unsigned int d)
{
	unsigned int k = (d - 1) / 2; /* pairs after the first one or two digits */
	uint64_t y = v * jw_fp[k];

	if (d & 1) {
		*p++ = (char)('0' + (y >> JW_FP_BITS));
	} else {
		memcpy(p, jw_digits2 + 2 * (y >> JW_FP_BITS), 2);
		p += 2;
	}
	switch (k) {
	case 3:
		y = (y & JW_FP_MASK) * 100;
		memcpy(p, jw_digits2 + 2 * (y >> JW_FP_BITS), 2);
		p += 2;
		/* fall through */
	case 2:
		y = (y & JW_FP_MASK) * 100;
		memcpy(p, jw_digits2 + 2 * (y >> JW_FP_BITS), 2);
		p += 2;
		/* fall through */
	case 1:
		y = (y & JW_FP_MASK) * 100;
		memcpy(p, jw_digits2 + 2 * (y >> JW_FP_BITS), 2);
		p += 2;
	}
	return p;
}

/* In chunks of 8 digits: the first without leading zeros. */
char *jw_fmt_u64(char *p, uint64_t v)
{
	const uint64_t e8 = 100000000ull, e16 = e8 * e8;
	uint64_t hi;

	if (v < e8)
		return jw_fmt_8(p, (uint32_t)v, jw_digits8((uint32_t)v));
	if (v < e16) {
		hi = v / e8;
		p = jw_fmt_8(p, (uint32_t)hi, jw_digits8((uint32_t)hi));
		return jw_fmt_8(p, (uint32_t)(v - hi * e8), 8);
	}
	hi = v / e16; /* at most 1844 */
	p = jw_fmt_8(p, (uint32_t)hi, jw_digits8((uint32_t)hi));
	v -= hi * e16;
	hi = v / e8;
	p = jw_fmt_8(p, (uint32_t)hi, 8);
	return jw_fmt_8(p, (uint32_t)(v - hi * e8), 8);
}

void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	char *p = jw_pre(w, key, JW_U64_MAX_LEN);

	if (p)
		jw_commit(w, jw_fmt_u64(p, v));
}

void jw_i64(struct jw *w, const char *key, int64_t v)
{
	char *p = jw_pre(w, key, JW_I64_MAX_LEN);
	uint64_t u = (uint64_t)v;

	if (!p)
		return;
	if (v < 0) {
		*p++ = '-';
		u = 0 - u; /* INT64_MIN too */
	}
	jw_commit(w, jw_fmt_u64(p, u));
}

void jw_bool(struct jw *w, const char *key, int v)
{
	if (v)
		jw_value_raw(w, key, "true", 4);
	else
		jw_value_raw(w, key, "false", 5);
}

void jw_null(struct jw *w, const char *key)
{
	jw_value_raw(w, key, "null", 4);
}

void jw_double(struct jw *w, const char *key, double v)
{
	char buf[40], *p;
	int n;

	if (!isfinite(v)) {
		jw_null(w, key);
		return;
	}
	n = snprintf(buf, sizeof(buf), "%.6g", v);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		jw_null(w, key); /* cannot happen with %.6g */
		return;
	}
	/* a locale with a decimal comma must not break the JSON */
	for (p = buf; *p; p++)
		if (*p == ',')
			*p = '.';
	jw_value_raw(w, key, buf, (size_t)n);
}

void jw_hex(struct jw *w, const char *key, uint64_t v)
{
	char *p = jw_pre(w, key, JW_HEX_MAX_LEN), *q;
	unsigned int n;

	if (!p)
		return;
	/* "0x" and the digits without leading zeros, like %#x but "0x0" for 0 */
	n = v ? (67u - (unsigned int)__builtin_clzll(v)) / 4 : 1;
	memcpy(p, "\"0x", 3);
	p += 3;
	q = p + n;
	do {
		*--q = jw_hexdig[v & 0xf];
		v >>= 4;
	} while (v);
	p += n;
	*p++ = '"';
	jw_commit(w, p);
}

char *jw_put_plain(char *p, const char *v, size_t n)
{
	const unsigned char *s = (const unsigned char *)v;
	size_t max = n < JW_STR_FAST ? n : JW_STR_FAST, k = 0;

	/* four bytes a round while max allows (a byte is read only if those before were plain) */
	for (; k + 4 <= max; k += 4) {
		if (!jw_plain[s[k]])
			goto stop;
		p[k] = (char)s[k];
		if (!jw_plain[s[k + 1]]) {
			k += 1;
			goto stop;
		}
		p[k + 1] = (char)s[k + 1];
		if (!jw_plain[s[k + 2]]) {
			k += 2;
			goto stop;
		}
		p[k + 2] = (char)s[k + 2];
		if (!jw_plain[s[k + 3]]) {
			k += 3;
			goto stop;
		}
		p[k + 3] = (char)s[k + 3];
	}
	for (; k < max && jw_plain[s[k]]; k++)
		p[k] = (char)s[k];
stop:
	/* stopped at the NUL or after n bytes: done; else a byte to escape, or too long */
	return k == n || !s[k] ? p + k : NULL;
}

void jw_members(struct jw *w, const char *m, size_t n)
{
	char *p;

	if (w->err || !n)
		return;
	if (!(w->kind[w->depth] & JW_F_OBJ)) {
		jw_misuse(w);
		return;
	}
	if (jw_reserve(w, 1 + n))
		return;
	p = jw_sep(w, w->buf + w->len);
	memcpy(p, m, n);
	jw_commit(w, p + n);
	jw_more(w);
}

const char *jw_data(const struct jw *w)
{
	if (!w->buf)
		return "";
	w->buf[w->len] = '\0'; /* the pointer is const, not the bytes */
	return w->buf;
}

size_t jw_len(const struct jw *w)
{
	return w->len;
}

int jw_error(const struct jw *w)
{
	return w->err;
}
