// SPDX-License-Identifier: GPL-2.0
/*
 * schema: the sink's two tables (see schema.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sink/schema.h"

#define SK_SPEC(id, n, t, g) [SK_R_##id] = { .name = n, .type = t, .group = g },
const struct nat_colspec sk_req_spec[SK_R_NR] = { SK_REQ_COLS(SK_SPEC) };
#undef SK_SPEC
#define SK_SPEC(id, n, t, g) [SK_B_##id] = { .name = n, .type = t, .group = g },
const struct nat_colspec sk_blame_spec[SK_B_NR] = { SK_BLAME_COLS(SK_SPEC) };
#undef SK_SPEC

/* The type a column of spec c has on the server: "UInt64", "Array(UInt64)". */
static void type_of(const struct nat_colspec *c, char *buf, size_t n)
{
	snprintf(buf, n, c->group ? "Array(%s)" : "%s", nat_type_name(c->type));
}

/* The server's type of column name in a DESCRIBE answer; 0 when found. */
static int describe_find(const char *d, size_t len, const char *name, char *type, size_t n)
{
	size_t nl = strlen(name);
	const char *end = d + len;

	while (d < end) {
		const char *eol = memchr(d, '\n', (size_t)(end - d)), *tab;

		if (!eol)
			eol = end;
		tab = memchr(d, '\t', (size_t)(eol - d));
		if (tab && (size_t)(tab - d) == nl && !memcmp(d, name, nl)) {
			const char *t = tab + 1, *te = memchr(t, '\t', (size_t)(eol - t));
			size_t tl = (size_t)((te ? te : eol) - t);

			snprintf(type, n, "%.*s", (int)tl, t);
			return 0;
		}
		d = eol + 1;
	}
	return -ENOENT;
}

int sk_schema_check(const struct nat_colspec *spec, int n, const char *describe, size_t len,
		    char *why, size_t whylen)
{
	char want[48], have[96];

	for (int i = 0; i < n; i++) {
		type_of(&spec[i], want, sizeof(want));
		if (describe_find(describe, len, spec[i].name, have, sizeof(have))) {
			snprintf(why, whylen, "no column %s (%s)", spec[i].name, want);
			return -EPROTO;
		}
		if (strcmp(have, want)) {
			snprintf(why, whylen, "column %s is %s, this build writes %s", spec[i].name,
				 have, want);
			return -EPROTO;
		}
	}
	return 0;
}

int sk_schema_select(const struct nat_colspec *spec, int n, struct nat_buf *out)
{
	for (int i = 0; i < n; i++) {
		size_t l = strlen(spec[i].name) + 3; /* a comma, two backquotes */

		if (nat_buf_room(out, l + 1))
			return -ENOMEM;
		snprintf((char *)out->p + out->len, l + 1, "%s`%s`", i ? "," : "", spec[i].name);
		out->len += strlen((char *)out->p + out->len);
	}
	return 0;
}
