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

#define JW_MAX_DEPTH 31

struct jw {
	char *buf; /* NUL terminated when not NULL */
	size_t len, cap;
	int depth; /* open containers */
	unsigned char first[32]; /* per depth: JW_F_* bits */
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

const char *jw_data(const struct jw *w); /* "" before anything is written */
size_t jw_len(const struct jw *w);
int jw_error(const struct jw *w);

#endif /* IT_JSONW_H */
