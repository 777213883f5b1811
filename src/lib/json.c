// SPDX-License-Identifier: GPL-2.0
/* json: a small JSON DOM reader (lib/json.h). Recursive descent over [s, e). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"

struct json_p {
	const char *s, *e;
	int depth;
};

static void jr_ws(struct json_p *p)
{
	while (p->s < p->e && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
		p->s++;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * The 4 hex digits of a \u escape at p->s (before q) as UTF-8 into *o.
 * Surrogates are not needed by any reader here: they become '?'. A 6-byte
 * escape never gives more than 3 bytes, so the output still fits.
 */
static int jr_unicode(struct json_p *p, const char *q, char **o)
{
	unsigned u = 0;

	if (q - p->s < 4)
		return -EINVAL;
	for (int i = 0; i < 4; i++) {
		int h = hexval(p->s[i]);

		if (h < 0)
			return -EINVAL;
		u = u << 4 | h;
	}
	p->s += 4;
	if (u >= 0xd800 && u <= 0xdfff)
		u = '?';
	if (u < 0x80) {
		*(*o)++ = u;
	} else if (u < 0x800) {
		*(*o)++ = 0xc0 | u >> 6;
		*(*o)++ = 0x80 | (u & 0x3f);
	} else {
		*(*o)++ = 0xe0 | u >> 12;
		*(*o)++ = 0x80 | ((u >> 6) & 0x3f);
		*(*o)++ = 0x80 | (u & 0x3f);
	}
	return 0;
}

/* The escape after a backslash at p->s into *o. 0 or -EINVAL. */
static int jr_escape(struct json_p *p, const char *q, char **o)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	char c = *p->s++;
	const char *k;

	if (c == 'u')
		return jr_unicode(p, q, o);
	k = c ? strchr(from, c) : NULL;
	if (!k)
		return -EINVAL;
	*(*o)++ = to[k - from];
	return 0;
}

/* Parse a string at p->s (on the opening quote). Returns malloc'd text or NULL. */
static char *jr_string(struct json_p *p)
{
	const char *q;
	char *out, *o;

	if (p->s >= p->e || *p->s != '"')
		return NULL;
	p->s++;
	/* the closing quote; the decoded string is never longer than the source */
	for (q = p->s; q < p->e && *q != '"'; q++)
		if (*q == '\\' && q + 1 < p->e)
			q++;
	if (q >= p->e)
		return NULL;
	out = malloc(q - p->s + 1);
	if (!out)
		return NULL;
	o = out;
	while (p->s < q) {
		char c = *p->s++;

		if ((unsigned char)c < 0x20)
			goto bad;
		if (c != '\\')
			*o++ = c;
		else if (jr_escape(p, q, &o))
			goto bad;
	}
	*o = '\0';
	p->s = q + 1;
	return out;
bad:
	free(out);
	return NULL;
}

static struct json *jr_value(struct json_p *p);

static struct json *jr_new(enum json_type t)
{
	struct json *v = calloc(1, sizeof(*v));

	if (v)
		v->t = t;
	return v;
}

/* One member of an object ("key": value) or an array (value). NULL on error. */
static struct json *jr_member(struct json_p *p, int obj)
{
	char *key = NULL;
	struct json *m;

	jr_ws(p);
	if (obj) {
		key = jr_string(p);
		if (!key)
			return NULL;
		jr_ws(p);
		if (p->s >= p->e || *p->s != ':') {
			free(key);
			return NULL;
		}
		p->s++;
	}
	m = jr_value(p);
	if (!m) {
		free(key);
		return NULL;
	}
	m->key = key;
	return m;
}

static struct json *jr_container(struct json_p *p, int obj)
{
	struct json *v = jr_new(obj ? JSON_OBJ : JSON_ARR), **tail;
	char close = obj ? '}' : ']';

	if (!v)
		return NULL;
	if (++p->depth > JSON_MAX_DEPTH)
		goto bad;
	tail = &v->child;
	p->s++;
	jr_ws(p);
	if (p->s < p->e && *p->s == close) {
		p->s++;
		p->depth--;
		return v;
	}
	for (;;) {
		struct json *m = jr_member(p, obj);

		if (!m)
			goto bad;
		*tail = m;
		tail = &m->next;
		jr_ws(p);
		if (p->s < p->e && *p->s == ',') {
			p->s++;
			continue;
		}
		if (p->s < p->e && *p->s == close) {
			p->s++;
			break;
		}
		goto bad;
	}
	p->depth--;
	return v;
bad:
	json_free(v);
	return NULL;
}

/* true, false or null. */
static struct json *jr_literal(struct json_p *p)
{
	static const struct {
		const char *w;
		enum json_type t;
		int val;
	} lits[] = { { "true", JSON_BOOL, 1 },
		     { "false", JSON_BOOL, 0 },
		     { "null", JSON_NULL, 0 } };

	for (size_t i = 0; i < sizeof(lits) / sizeof(lits[0]); i++) {
		size_t l = strlen(lits[i].w);

		if ((size_t)(p->e - p->s) >= l && !memcmp(p->s, lits[i].w, l)) {
			struct json *v = jr_new(lits[i].t);

			p->s += l;
			if (v)
				v->num = lits[i].val;
			return v;
		}
	}
	return NULL;
}

/* A number: the characters a JSON number can hold, then strtod must take them all. */
static struct json *jr_number(struct json_p *p)
{
	char buf[64], *end;
	size_t l = 0;
	struct json *v;
	double d;

	while (p->s + l < p->e && l < sizeof(buf) - 1 &&
	       (isdigit((unsigned char)p->s[l]) || strchr("+-.eE", p->s[l])))
		l++;
	if (!l || l == sizeof(buf) - 1)
		return NULL;
	memcpy(buf, p->s, l);
	buf[l] = '\0';
	if (!isdigit((unsigned char)buf[0]) && buf[0] != '-')
		return NULL;
	errno = 0;
	d = strtod(buf, &end);
	if (*end || errno == EINVAL)
		return NULL;
	p->s += l;
	v = jr_new(JSON_NUM);
	if (v)
		v->num = d;
	return v;
}

static struct json *jr_value(struct json_p *p)
{
	struct json *v;

	jr_ws(p);
	if (p->s >= p->e)
		return NULL;
	switch (*p->s) {
	case '{':
		return jr_container(p, 1);
	case '[':
		return jr_container(p, 0);
	case '"':
		v = jr_new(JSON_STR);
		if (v && !(v->str = jr_string(p))) {
			free(v);
			v = NULL;
		}
		return v;
	case 't':
	case 'f':
	case 'n':
		return jr_literal(p);
	default:
		return jr_number(p);
	}
}

struct json *json_parse(const char *s, size_t n)
{
	struct json_p p = { s, s + n, 0 };
	struct json *v;

	if (!s)
		return NULL;
	v = jr_value(&p);
	if (!v)
		return NULL;
	jr_ws(&p);
	if (p.s != p.e) {
		json_free(v);
		return NULL;
	}
	return v;
}

void json_free(struct json *v)
{
	while (v) {
		struct json *next = v->next;

		json_free(v->child);
		free(v->str);
		free(v->key);
		free(v);
		v = next;
	}
}

const struct json *json_get(const struct json *v, const char *key)
{
	if (!v || v->t != JSON_OBJ)
		return NULL;
	for (const struct json *m = v->child; m; m = m->next)
		if (m->key && !strcmp(m->key, key))
			return m;
	return NULL;
}

const struct json *json_path(const struct json *v, const char *path)
{
	char key[128];

	while (v && path && *path) {
		const char *dot = strchr(path, '.');
		size_t l = dot ? (size_t)(dot - path) : strlen(path);

		if (l >= sizeof(key))
			return NULL;
		memcpy(key, path, l);
		key[l] = '\0';
		v = json_get(v, key);
		path = dot ? dot + 1 : NULL;
	}
	return v;
}

double json_num(const struct json *v, const char *path, double def)
{
	const struct json *n = json_path(v, path);

	return n && n->t == JSON_NUM ? n->num : def;
}
