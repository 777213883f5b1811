/* SPDX-License-Identifier: GPL-2.0 */
/*
 * jsonw: a streaming JSON writer into a growable buffer, for JSON lines.
 *
 *	struct jw w;
 *	jw_init(&w);
 *	jw_obj_begin(&w, NULL);
 *	jw_str(&w, "type", "request");
 *	jw_arr_begin(&w, "block");
 *	jw_u64(&w, NULL, 42);
 *	jw_arr_end(&w);
 *	jw_obj_end(&w);
 *	fwrite(jw_data(&w), 1, jw_len(&w), f);  -> {"type":"request","block":[42]}
 *	jw_reset(&w);                           (next line, buffer kept)
 *	jw_free(&w);
 *
 * Commas are automatic. Inside an object every value needs a key; inside an
 * array or at the top level the key must be NULL. Misuse (wrong key, unbalanced
 * end, nesting deeper than JW_MAX_DEPTH) or ENOMEM sets w->err, after which
 * every call is a no-op until jw_reset(). Several top-level values are
 * separated by '\n' (JSON lines); the buffer never ends with a newline.
 * Strings are escaped so that the output is always valid JSON and UTF-8:
 * '"', '\\', control characters, and every byte that is not part of a valid
 * UTF-8 sequence (as \u00XX: the byte read as Latin-1).
 */
#ifndef IT_JSONW_H
#define IT_JSONW_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define JW_MAX_DEPTH 31

struct jw {
	char *buf; /* NUL terminated by jw_data() */
	size_t len, cap;
	int depth; /* open containers */
	unsigned char
		kind[32]; /* per depth: JW_F_* bits (not OBJ or ARR at depth 0, or after an error) */
	int err; /* 0, ENOMEM or EINVAL (misuse) */
};

void jw_init(struct jw *w);
void jw_free(struct jw *w);
void jw_reset(struct jw *w); /* len = 0, depth = 0, err = 0; buffer kept */

void jw_obj_begin(struct jw *w, const char *key);
void jw_obj_end(struct jw *w);
void jw_arr_begin(struct jw *w, const char *key);
void jw_arr_end(struct jw *w);

void jw_str(struct jw *w, const char *key, const char *v); /* v NULL -> null */
void jw_strn(struct jw *w, const char *key, const char *v, size_t n); /* to NUL or n bytes */
void jw_u64(struct jw *w, const char *key, uint64_t v);
void jw_i64(struct jw *w, const char *key, int64_t v);
void jw_bool(struct jw *w, const char *key, int v);
void jw_null(struct jw *w, const char *key);
void jw_double(struct jw *w, const char *key, double v); /* %.6g; NaN/inf -> null */
void jw_hex(struct jw *w, const char *key, uint64_t v); /* "0x1a2b" */
/*
 * Members written once and kept ("k":v,"k2":v2: another writer's object
 * without its braces), added to the current object as they are, with one
 * copy: the caller vouches that they are JSON. n == 0 adds nothing.
 */
void jw_members(struct jw *w, const char *m, size_t n);

const char *jw_data(const struct jw *w); /* "" before anything is written */
size_t jw_len(const struct jw *w);
int jw_error(const struct jw *w);

/*
 * Keys known at compile time. A JSON line of a request has ~45 keys, nearly
 * all string literals. When the compiler can tell that a key is a string of
 * at most JW_LIT_MAX bytes with nothing to escape, the macros at the end call
 * an inline jw_*_lit() variant instead: it checks that the writer is in an
 * object with room for the key and the value, and then stores the key as the
 * constant it is (jw_str() does the same for a literal value). Every other
 * key (a variable, NULL, a literal that needs escaping or is longer, a build
 * without optimization), and every call that is not that simple case (an
 * error, misuse, the buffer must grow, a string value to escape), goes to the
 * function itself. The output and the errors are the same either way, and
 * every argument is evaluated once.
 */
#define JW_LIT_MAX 32

/* w->kind[depth]: the container at this depth (depth 0, the top level, is neither) */
#define JW_F_MORE 0x1 /* a value was written in it: a comma before the next */
#define JW_F_OBJ 0x2 /* an object */
#define JW_F_ARR 0x4 /* an array */

/* Longest integer values: "18446744073709551615", "-9223372036854775808" */
#define JW_U64_MAX_LEN 20
#define JW_I64_MAX_LEN 20
/* String values up to this long are copied while they are checked, in one pass */
#define JW_STR_FAST 64

/* v in decimal at p (at most JW_U64_MAX_LEN bytes); returns the end. */
char *jw_fmt_u64(char *p, uint64_t v);
/*
 * v (at most n bytes, up to its NUL) at p if that is at most JW_STR_FAST
 * bytes with nothing to escape; returns the end, or NULL when v is not that.
 */
char *jw_put_plain(char *p, const char *v, size_t n);

/*
 * Separator and key (klen bytes, plain) before a value of at most vmax
 * bytes; where to write the value, or NULL when the general path must do it.
 * Nothing is committed: jw_lit_commit() does.
 */
static inline __attribute__((always_inline)) char *jw_lit_pre(struct jw *w, const char *key,
							      size_t klen, size_t vmax)
{
	unsigned char f = w->kind[w->depth];
	char *p;

	/* in an object (not after an error), with room: separator, quotes, colon, key, value, NUL */
	if (__builtin_expect(!(f & JW_F_OBJ) || w->cap - w->len <= 4 + klen + vmax, 0))
		return NULL;
	p = w->buf + w->len;
	*p = ',';
	p += f & JW_F_MORE;
	*p++ = '"';
	memcpy(p, key, klen);
	p += klen;
	*p++ = '"';
	*p++ = ':';
	return p;
}

/*
 * The value after a jw_lit_pre() ends at p. The object now has a value: a
 * plain store, so the next comma does not wait for a read-modify-write.
 */
static inline __attribute__((always_inline)) void jw_lit_commit(struct jw *w, char *p)
{
	w->kind[w->depth] = JW_F_OBJ | JW_F_MORE;
	w->len = (size_t)(p - w->buf);
}

/* Open an object ('{', JW_F_OBJ) or array ('[', JW_F_ARR) under a literal key. */
static inline __attribute__((always_inline)) void
jw_open_lit(struct jw *w, const char *key, size_t klen, char open, unsigned char kind)
{
	char *p = w->depth < JW_MAX_DEPTH ? jw_lit_pre(w, key, klen, 1) : NULL;

	if (!p) {
		if (kind == JW_F_OBJ)
			jw_obj_begin(w, key);
		else
			jw_arr_begin(w, key);
		return;
	}
	*p++ = open;
	jw_lit_commit(w, p);
	w->kind[++w->depth] = kind;
}

static inline __attribute__((always_inline)) void jw_obj_begin_lit(struct jw *w, const char *key,
								   size_t klen)
{
	jw_open_lit(w, key, klen, '{', JW_F_OBJ);
}

static inline __attribute__((always_inline)) void jw_arr_begin_lit(struct jw *w, const char *key,
								   size_t klen)
{
	jw_open_lit(w, key, klen, '[', JW_F_ARR);
}

/* jw_*_begin(w, NULL): an array element or a top-level value. */
static inline __attribute__((always_inline)) int jw_begin_elem(struct jw *w, unsigned char kind,
							       char open)
{
	unsigned char f = w->kind[w->depth];
	char *p;

	if (__builtin_expect(w->err || (f & JW_F_OBJ) || w->depth >= JW_MAX_DEPTH ||
				     w->cap - w->len <= 2,
			     0))
		return 0;
	p = w->buf + w->len;
	if (w->depth) {
		*p = ',';
		p += f & JW_F_MORE;
		w->kind[w->depth] = JW_F_ARR | JW_F_MORE;
	} else if (w->len) {
		*p++ = '\n';
	}
	*p++ = open;
	w->len = (size_t)(p - w->buf);
	w->kind[++w->depth] = kind;
	return 1;
}

static inline __attribute__((always_inline)) void jw_obj_begin_elem(struct jw *w)
{
	if (!jw_begin_elem(w, JW_F_OBJ, '{'))
		jw_obj_begin(w, NULL);
}

static inline __attribute__((always_inline)) void jw_arr_begin_elem(struct jw *w)
{
	if (!jw_begin_elem(w, JW_F_ARR, '['))
		jw_arr_begin(w, NULL);
}

/* jw_*_end(): close the container if it is of that kind (not after an error), room for 1 byte */
static inline __attribute__((always_inline)) int jw_end_fast(struct jw *w, unsigned char kind,
							     char close)
{
	if (__builtin_expect(!(w->kind[w->depth] & kind) || w->cap - w->len <= 1, 0))
		return 0;
	w->buf[w->len++] = close;
	w->kind[w->depth--] = 0;
	return 1;
}

static inline __attribute__((always_inline)) void jw_obj_end_inline(struct jw *w)
{
	if (!jw_end_fast(w, JW_F_OBJ, '}'))
		jw_obj_end(w);
}

static inline __attribute__((always_inline)) void jw_arr_end_inline(struct jw *w)
{
	if (!jw_end_fast(w, JW_F_ARR, ']'))
		jw_arr_end(w);
}

/* A literal value too: vlen bytes, plain. */
static inline __attribute__((always_inline)) void
jw_strl_lit(struct jw *w, const char *key, size_t klen, const char *v, size_t vlen)
{
	char *p = jw_lit_pre(w, key, klen, vlen + 2);

	if (!p) {
		jw_str(w, key, v);
		return;
	}
	*p++ = '"';
	memcpy(p, v, vlen);
	p += vlen;
	*p++ = '"';
	jw_lit_commit(w, p);
}

static inline __attribute__((always_inline)) void jw_strn_lit(struct jw *w, const char *key,
							      size_t klen, const char *v, size_t n)
{
	char *p = v ? jw_lit_pre(w, key, klen, JW_STR_FAST + 2) : NULL;

	if (p) {
		*p++ = '"';
		p = jw_put_plain(p, v, n);
	}
	if (!p) {
		jw_strn(w, key, v, n);
		return;
	}
	*p++ = '"';
	jw_lit_commit(w, p);
}

static inline __attribute__((always_inline)) void jw_str_lit(struct jw *w, const char *key,
							     size_t klen, const char *v)
{
	/* jw_strn() with n = SIZE_MAX is jw_str() */
	jw_strn_lit(w, key, klen, v, (size_t)-1);
}

static inline __attribute__((always_inline)) void jw_u64_lit(struct jw *w, const char *key,
							     size_t klen, uint64_t v)
{
	char *p = jw_lit_pre(w, key, klen, JW_U64_MAX_LEN);

	if (!p) {
		jw_u64(w, key, v);
		return;
	}
	jw_lit_commit(w, jw_fmt_u64(p, v));
}

static inline __attribute__((always_inline)) void jw_i64_lit(struct jw *w, const char *key,
							     size_t klen, int64_t v)
{
	char *p = jw_lit_pre(w, key, klen, JW_I64_MAX_LEN);

	if (!p) {
		jw_i64(w, key, v);
		return;
	}
	*p = '-';
	p += v < 0;
	/* 0 - u: INT64_MIN too */
	jw_lit_commit(w, jw_fmt_u64(p, v < 0 ? 0 - (uint64_t)v : (uint64_t)v));
}

static inline __attribute__((always_inline)) void jw_bool_lit(struct jw *w, const char *key,
							      size_t klen, int v)
{
	char *p = jw_lit_pre(w, key, klen, 5);

	if (!p) {
		jw_bool(w, key, v);
		return;
	}
	if (v) {
		memcpy(p, "true", 4);
		p += 4;
	} else {
		memcpy(p, "false", 5);
		p += 5;
	}
	jw_lit_commit(w, p);
}

/* jw_members() in an object with room: the separator and one copy. */
static inline __attribute__((always_inline)) void jw_members_inline(struct jw *w, const char *m,
								    size_t n)
{
	unsigned char f = w->kind[w->depth];
	char *p;

	if (__builtin_expect(!(f & JW_F_OBJ) || !n || w->cap - w->len <= 1 + n, 0)) {
		jw_members(w, m, n);
		return;
	}
	p = w->buf + w->len;
	*p = ',';
	p += f & JW_F_MORE;
	memcpy(p, m, n);
	jw_lit_commit(w, p + n);
}

/*
 * jw_members() of members that have JW_PAD bytes readable past their n (kept
 * so, like fn_get_json()'s): in an object with room for those too, copied in
 * blocks of JW_PAD bytes, no call. What the last block writes past n is the
 * buffer's room, written over next.
 */
#define JW_PAD 16
static inline __attribute__((always_inline)) void jw_members_pad(struct jw *w, const char *m,
								 size_t n)
{
	unsigned char f = w->kind[w->depth];
	size_t i = 0;
	char *p;

	if (__builtin_expect(!(f & JW_F_OBJ) || !n || w->cap - w->len <= 1 + n + JW_PAD, 0)) {
		jw_members(w, m, n);
		return;
	}
	p = w->buf + w->len;
	*p = ',';
	p += f & JW_F_MORE;
	do {
		memcpy(p + i, m + i, JW_PAD);
		i += JW_PAD;
	} while (i < n);
	jw_lit_commit(w, p + n);
}

#ifndef JW_NO_LIT_MACROS
/* Byte i of the constant string k is plain (see jw_plain in jsonw.c) or past its end. */
#define JW_LIT_C(k, i)                                                                      \
	((i) >= __builtin_strlen(k) ||                                                      \
	 ((unsigned char)(k)[i] >= 0x20 && (unsigned char)(k)[i] < 0x80 && (k)[i] != '"' && \
	  (k)[i] != '\\'))
#define JW_LIT_C8(k, i)                                                                      \
	(JW_LIT_C(k, i) && JW_LIT_C(k, i + 1) && JW_LIT_C(k, i + 2) && JW_LIT_C(k, i + 3) && \
	 JW_LIT_C(k, i + 4) && JW_LIT_C(k, i + 5) && JW_LIT_C(k, i + 6) && JW_LIT_C(k, i + 7))
#define JW_LIT_OK(k)                                                                \
	(__builtin_strlen(k) <= JW_LIT_MAX && JW_LIT_C8(k, 0) && JW_LIT_C8(k, 8) && \
	 JW_LIT_C8(k, 16) && JW_LIT_C8(k, 24))
/*
 * s, when the compiler knows it at this point, else "\x01" (a string that is
 * not plain): NULL, a variable or an array never reach __builtin_strlen or
 * a test of their address, so no -Wnonnull or -Waddress either.
 */
#define JW_CS(s)                                                                                  \
	__builtin_choose_expr(__builtin_constant_p(s),                                            \
			      ((__UINTPTR_TYPE__)(const void *)(s) ? (const char *)(s) : "\x01"), \
			      "\x01")
/* 1 when s is a string known at compile time that can be copied as it is */
#define JW_LIT(s)                                                                \
	(__builtin_constant_p(s) && __builtin_constant_p(JW_LIT_OK(JW_CS(s))) && \
	 JW_LIT_OK(JW_CS(s)))
#define JW_LEN(s) __builtin_strlen(JW_CS(s))
/* 1 when s is NULL as a constant */
#define JW_NULL(s) (__builtin_constant_p(s) && !(__UINTPTR_TYPE__)(const void *)(s))

#define jw_obj_begin(w, key)                                        \
	(JW_LIT(key)  ? jw_obj_begin_lit((w), (key), JW_LEN(key)) : \
	 JW_NULL(key) ? jw_obj_begin_elem(w) :                      \
			jw_obj_begin((w), (key)))
#define jw_arr_begin(w, key)                                        \
	(JW_LIT(key)  ? jw_arr_begin_lit((w), (key), JW_LEN(key)) : \
	 JW_NULL(key) ? jw_arr_begin_elem(w) :                      \
			jw_arr_begin((w), (key)))
#define jw_members(w, m, n) jw_members_inline((w), (m), (n))
#define jw_obj_end(w) jw_obj_end_inline(w)
#define jw_arr_end(w) jw_arr_end_inline(w)
#define jw_str(w, key, v)                                                                  \
	(JW_LIT(key) ? (JW_LIT(v) ? jw_strl_lit((w), (key), JW_LEN(key), (v), JW_LEN(v)) : \
				    jw_str_lit((w), (key), JW_LEN(key), (v))) :            \
		       jw_str((w), (key), (v)))
#define jw_strn(w, key, v, n)                                           \
	(JW_LIT(key) ? jw_strn_lit((w), (key), JW_LEN(key), (v), (n)) : \
		       jw_strn((w), (key), (v), (n)))
#define jw_u64(w, key, v) \
	(JW_LIT(key) ? jw_u64_lit((w), (key), JW_LEN(key), (v)) : jw_u64((w), (key), (v)))
#define jw_i64(w, key, v) \
	(JW_LIT(key) ? jw_i64_lit((w), (key), JW_LEN(key), (v)) : jw_i64((w), (key), (v)))
#define jw_bool(w, key, v) \
	(JW_LIT(key) ? jw_bool_lit((w), (key), JW_LEN(key), (v)) : jw_bool((w), (key), (v)))
#endif /* JW_NO_LIT_MACROS */

#endif /* IT_JSONW_H */
