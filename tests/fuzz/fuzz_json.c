// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_json: the JSON reader (json_parse, lib/json.c) and the two readers built
 * on it that take other programs' output: fio's JSON (bench_parse_fio, junk before
 * the first '{' skipped) and iotracer's own -j lines (bench_parse_tracer_summary).
 *
 * Checked besides memory safety: a parsed document has the shape lib/json.h promises:
 * one root value, object members with keys and array members without, text only
 * in strings (NUL-terminated), children only in containers, nesting within the
 * reader's limit.
 */
#include "fuzz.h"
#include "lib/json.h"
#include "bench/internal.h"

/* Checks the shape of v, its siblings and everything under them. */
static void walk(const struct json *v, int depth, int in_obj)
{
	for (; v; v = v->next) {
		FUZZ_CHECK(depth <= 64, "nesting %d deeper than the reader's limit", depth);
		FUZZ_CHECK(in_obj ? v->key != NULL : v->key == NULL, "member key %s",
			   v->key ? v->key : "(none)");
		FUZZ_CHECK((v->t == JSON_STR) == (v->str != NULL), "type %d with str %p", v->t,
			   (void *)v->str);
		FUZZ_CHECK(!v->child || v->t == JSON_ARR || v->t == JSON_OBJ,
			   "type %d with children", v->t);
		if (v->str)
			(void)strlen(v->str);
		walk(v->child, depth + 1, v->t == JSON_OBJ);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy: ASan sees a read past the end */
	char *s = malloc(size ? size : 1);
	struct tracer_sum ts;
	struct fio_res fr;
	struct json *v;

	FUZZ_SETUP(s, "malloc");
	memcpy(s, data, size);
	v = json_parse(s, size);
	if (v) {
		FUZZ_CHECK(!v->next, "more than one root value");
		walk(v, 0, 0);
		(void)json_num(v, "jobs.read.clat_ns.mean", 0);
		(void)json_path(v, "a.b.c");
		json_free(v);
	}
	(void)bench_parse_fio(s, size, &fr);
	(void)bench_parse_tracer_summary(s, size, &ts);
	free(s);
	return 0;
}
