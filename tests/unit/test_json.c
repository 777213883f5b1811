// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for lib/json, the JSON reader: a document with every kind of
 * value, escapes and \u, numbers, the nesting limit, truncated and malformed
 * input, and reading only the n bytes given.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "unit.h"

static void test_document(void)
{
	static const char doc[] =
		" {\"a\": {\"b\": [1, 2.5, -3e2], \"s\": \"x\\\"y\\u00e9\\n\", \"t\": true,"
		" \"f\": false, \"n\": null}, \"e\": {}, \"z\": []} ";
	struct json *v = json_parse(doc, strlen(doc));
	const struct json *arr, *s;

	if (!ASSERT_TRUE(v != NULL, "parse"))
		return;
	arr = json_path(v, "a.b");
	ASSERT_TRUE(arr && arr->t == JSON_ARR, "array");
	ASSERT_NEAR(arr->child->num, 1, 0, "1");
	ASSERT_NEAR(arr->child->next->num, 2.5, 0, "2.5");
	ASSERT_NEAR(arr->child->next->next->num, -300, 0, "-3e2");
	s = json_path(v, "a.s");
	ASSERT_TRUE(s && s->t == JSON_STR, "string");
	ASSERT_STREQ(s->str, "x\"y\xc3\xa9\n", "escapes");
	ASSERT_NEAR(json_num(v, "a.t", -1), -1, 0, "bool is not a number");
	ASSERT_TRUE(json_path(v, "a.t")->t == JSON_BOOL && json_path(v, "a.t")->num == 1, "true");
	ASSERT_TRUE(json_path(v, "a.n")->t == JSON_NULL, "null");
	ASSERT_TRUE(json_get(v, "e")->t == JSON_OBJ && !json_get(v, "e")->child, "empty object");
	ASSERT_TRUE(json_get(v, "z")->t == JSON_ARR && !json_get(v, "z")->child, "empty array");
	ASSERT_TRUE(json_path(v, "a.nope") == NULL, "missing");
	ASSERT_NEAR(json_num(v, "a.nope", 7), 7, 0, "default");
	json_free(v);

	static const char *const bad[] = { "",		"{",	     "{\"a\":}", "[1,]",
					   "{\"a\" 1}", "[1] x",     "\"abc",	 "tru",
					   "{1:2}",	"[\"\\q\"]", "[-]" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = json_parse(bad[i], strlen(bad[i]));
		if (!ASSERT_TRUE(v == NULL, bad[i]))
			json_free(v);
	}
	/* nesting limit */
	char deep[200];
	memset(deep, '[', 100);
	memset(deep + 100, ']', 100);
	v = json_parse(deep, 200);
	if (!ASSERT_TRUE(v == NULL, "too deep"))
		json_free(v);
}

/* The string of a one-string document, or NULL if it does not parse. Free with free(). */
static char *str_of(const char *doc)
{
	struct json *v = json_parse(doc, strlen(doc));
	char *s = v && v->t == JSON_STR ? strdup(v->str) : NULL;

	json_free(v);
	return s;
}

static void check_str(const char *doc, const char *want, const char *what)
{
	char *s = str_of(doc);

	if (!want)
		ASSERT_TRUE(s == NULL, what);
	else if (ASSERT_TRUE(s != NULL, what))
		ASSERT_STREQ(s, want, what);
	free(s);
}

static void test_escapes(void)
{
	check_str("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"", "\" \\ / \b \f \n \r \t", "all escapes");
	check_str("\"a\\u0041b\"", "aAb", "\\u ASCII");
	check_str("\"\\u00e9\"", "\xc3\xa9", "\\u 2 bytes");
	check_str("\"\\u20AC\"", "\xe2\x82\xac", "\\u 3 bytes, upper-case hex");
	check_str("\"\\ud83d\\ude00\"", "??", "surrogates as ?");
	check_str("\"\\u00\"", NULL, "short \\u");
	check_str("\"\\u00g1\"", NULL, "bad hex");
	check_str("\"\\x\"", NULL, "unknown escape");
	check_str("\"tab\there\"", NULL, "raw control character");
	check_str("\"\"", "", "empty string");
	check_str("\"\\\\\"", "\\", "escaped backslash before the quote");
	check_str("\"abc\\\"", NULL, "escaped closing quote: unterminated");
}

static void check_num(const char *doc, int ok, double want)
{
	struct json *v = json_parse(doc, strlen(doc));

	if (ok && ASSERT_TRUE(v && v->t == JSON_NUM, doc))
		ASSERT_NEAR(v->num, want, 1e-9 * (1 + (want < 0 ? -want : want)), doc);
	if (!ok)
		ASSERT_TRUE(v == NULL, doc);
	json_free(v);
}

static void test_numbers(void)
{
	check_num("0", 1, 0);
	check_num("-17", 1, -17);
	check_num("3.25", 1, 3.25);
	check_num("1e3", 1, 1000);
	check_num("-2.5E-2", 1, -0.025);
	check_num("18446744073709551615", 1, 18446744073709551615.0);
	check_num(" 42 ", 1, 42);
	check_num("1.2.3", 0, 0);
	check_num("--1", 0, 0);
	check_num("+1", 0, 0);
	check_num(".5", 0, 0);
	check_num("1e", 0, 0);
	check_num("-", 0, 0);
	check_num("1x", 0, 0);
	check_num("NaN", 0, 0);
}

static void test_depth(void)
{
	char doc[2 * (JSON_MAX_DEPTH + 1)];
	struct json *v;

	memset(doc, '[', JSON_MAX_DEPTH);
	memset(doc + JSON_MAX_DEPTH, ']', JSON_MAX_DEPTH);
	v = json_parse(doc, 2 * JSON_MAX_DEPTH);
	ASSERT_TRUE(v != NULL, "JSON_MAX_DEPTH levels parse");
	json_free(v);
	memset(doc, '[', JSON_MAX_DEPTH + 1);
	memset(doc + JSON_MAX_DEPTH + 1, ']', JSON_MAX_DEPTH + 1);
	v = json_parse(doc, 2 * (JSON_MAX_DEPTH + 1));
	ASSERT_TRUE(v == NULL, "one level more does not");
	json_free(v);
}

/* Every proper prefix of a document is an error (no partial DOM, no over-read under ASan). */
static void test_truncated(void)
{
	static const char doc[] =
		"{\"a\":[1,-2.5e1,true,false,null,\"x\\u00e9\\n\"],\"b\":{\"c\":{}}}";
	size_t n = strlen(doc);
	struct json *v;

	for (size_t l = 0; l < n; l++) {
		char *part = malloc(l ? l : 1), what[32];

		if (!part)
			return;
		memcpy(part, doc, l);
		v = json_parse(part, l);
		snprintf(what, sizeof(what), "prefix of %zu bytes", l);
		ASSERT_TRUE(v == NULL, what);
		json_free(v);
		free(part);
	}
	v = json_parse(doc, n);
	ASSERT_TRUE(v != NULL, "whole document");
	ASSERT_TRUE(json_path(v, "b.c") && json_path(v, "b.c")->t == JSON_OBJ, "nested object");
	ASSERT_TRUE(json_path(v, "") == v, "empty path is the value");
	ASSERT_TRUE(json_path(v, "a.x") == NULL, "path through an array");
	json_free(v);
	/* only the n bytes given are read */
	v = json_parse("[1] trailing", 3);
	ASSERT_TRUE(v && v->t == JSON_ARR, "n bounds the input");
	json_free(v);
	ASSERT_TRUE(json_parse(NULL, 0) == NULL, "NULL");
	json_free(NULL);
}

static void test_members(void)
{
	static const char doc[] = "{\"k\":1,\"k\":2,\"o\":{\"n\":\"s\"},\"arr\":[{\"x\":1}]}";
	struct json *v = json_parse(doc, strlen(doc));
	const struct json *m;
	int count = 0;

	if (!ASSERT_TRUE(v != NULL, "parse"))
		return;
	for (m = v->child; m; m = m->next)
		count++;
	ASSERT_EQ(count, 4, "members kept in order, duplicates too");
	ASSERT_NEAR(json_num(v, "k", 0), 1, 0, "json_get: the first of duplicates");
	ASSERT_NEAR(json_num(v, "o.n", -1), -1, 0, "a string is not a number");
	ASSERT_TRUE(json_get(json_get(v, "arr"), "x") == NULL, "json_get on an array");
	ASSERT_STREQ(json_get(v, "arr")->child->child->key, "x", "object inside an array");
	json_free(v);
}

int main(void)
{
	RUN_TEST(test_document);
	RUN_TEST(test_escapes);
	RUN_TEST(test_numbers);
	RUN_TEST(test_depth);
	RUN_TEST(test_truncated);
	RUN_TEST(test_members);
	return unit_result();
}
