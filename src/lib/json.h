/* SPDX-License-Identifier: GPL-2.0 */
/*
 * json: the JSON reader of iotracer, a small DOM (lib/jsonw.h is the writer).
 *
 * Enough for fio's --output-format=json, iotracer's own summary lines and
 * QEMU's JSON option syntax (-blockdev '{...}'): every value of RFC 8259,
 * members kept in document order, strings decoded to UTF-8 (\uXXXX of the
 * BMP; a surrogate becomes '?'), numbers as double, nesting up to
 * JSON_MAX_DEPTH. Anything else (trailing commas, junk after the value,
 * truncated input) is a parse error: NULL.
 */
#ifndef IT_LIB_JSON_H
#define IT_LIB_JSON_H

#include <stddef.h>

#define JSON_MAX_DEPTH 64

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ };

struct json {
	enum json_type t;
	double num; /* JSON_NUM; JSON_BOOL: 0/1 */
	char *str; /* JSON_STR */
	char *key; /* member name inside an object, else NULL */
	struct json *child, *next; /* JSON_ARR/JSON_OBJ members, in order */
};

/* Parse one JSON value of s[0..n) (white space around it allowed). NULL on error. */
struct json *json_parse(const char *s, size_t n);
/* Free a value and its members (NULL is fine). */
void json_free(struct json *v);
/* Member KEY of an object (NULL if v is not an object or has no such member). */
const struct json *json_get(const struct json *v, const char *key);
/* Dotted path "a.b.c" of object members (keys without dots); "" is v itself. */
const struct json *json_path(const struct json *v, const char *path);
/* Number at path, or def when absent or not a number. */
double json_num(const struct json *v, const char *path, double def);

#endif /* IT_LIB_JSON_H */
