// SPDX-License-Identifier: GPL-2.0
/*
 * reload: compare the running options with a SIGHUP's, option by option.
 * Each option's row (cli.c's table) is its rule: how a change is applied
 * (its reload kind), and how its value is written in the log (its type). Two values differ when they are written differently,
 * so the formatters show everything that matters (and compare lists in
 * order: a reordered list is a harmless in-place update).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotracer.h"
#include "service/cli.h"
#include "service/reload.h"
#include "lib/abi.h"
#include "lib/keyfile.h"
#include "lib/parse.h"

#define VAL_LEN 2048

/* Append to b (of size n) like snprintf, never past the end. */
static void cat(char *b, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *b, size_t n, const char *fmt, ...)
{
	size_t len = strnlen(b, n);
	va_list ap;

	if (len + 1 >= n)
		return;
	va_start(ap, fmt);
	vsnprintf(b + len, n - len, fmt, ap);
	va_end(ap);
}

static void fmt_u32s(const uint32_t *v, int nr, char *b, size_t n)
{
	b[0] = '\0';
	for (int i = 0; i < nr; i++)
		cat(b, n, "%s%u", i ? "," : "", v[i]);
	if (!nr)
		cat(b, n, "-");
}

static void fmt_strs(char *const *v, int nr, char *b, size_t n)
{
	b[0] = '\0';
	for (int i = 0; i < nr; i++)
		cat(b, n, "%s%s", i ? "," : "", v[i]);
	if (!nr)
		cat(b, n, "-");
}

static void fmt_dur(uint64_t ns, char *b, size_t n)
{
	if (!ns)
		snprintf(b, n, "0");
	else
		parse_fmt_duration(ns, b, n);
}

static void fmt_devs(const uint32_t *devs, int nr, char *b, size_t n)
{
	char one[32];

	b[0] = '\0';
	for (int i = 0; i < nr; i++)
		cat(b, n, "%s%s", i ? "," : "", parse_fmt_devno(devs[i], one, sizeof(one)));
	if (!nr)
		cat(b, n, "-");
}

static void fmt_layers(uint32_t layers, char *b, size_t n)
{
	b[0] = '\0';
	for (int l = 0; l < IT_L_MAX; l++)
		if (layers & (1u << l))
			cat(b, n, "%s%s", b[0] ? "," : "", abi_layer_name(l));
	if (!layers)
		cat(b, n, "all");
}

static void fmt_mode(enum it_mode m, char *b, size_t n)
{
	static const char *const names[] = { "standalone", "guest", "host" };

	snprintf(b, n, "%s", m <= IT_MODE_HOST ? names[m] : "?");
}

/* Option r's value in o as the log writes it: two values differ when written differently. */
static void fmt_opt(const struct cli_option *r, const struct it_opts *o, char *b, size_t n)
{
	const void *v = (const char *)o + r->off;
	int nr = r->nr ? *(const int *)((const char *)o + r->nr) : 0;
	const char *s;

	switch (r->val) {
	case CLI_V_FLAG:
		snprintf(b, n, "%s", *(const int *)v ? "yes" : "no");
		break;
	case CLI_V_NOT_FLAG:
		snprintf(b, n, "%s", *(const int *)v ? "no" : "yes");
		break;
	case CLI_V_INT:
	case CLI_V_COUNT:
		snprintf(b, n, "%d", *(const int *)v);
		break;
	case CLI_V_U64:
		snprintf(b, n, "%llu", (unsigned long long)*(const uint64_t *)v);
		break;
	case CLI_V_DUR:
		fmt_dur(*(const uint64_t *)v, b, n);
		break;
	case CLI_V_SIZE:
		snprintf(b, n, "%lluK", (unsigned long long)(*(const uint64_t *)v >> 10));
		break;
	case CLI_V_STR:
		s = *(char *const *)v;
		snprintf(b, n, "%s", s ? s : r->unset ? r->unset : "-");
		break;
	case CLI_V_STRS:
		fmt_strs(v, nr, b, n);
		break;
	case CLI_V_U32S:
		fmt_u32s(v, nr, b, n);
		break;
	case CLI_V_DEVS:
		fmt_devs(v, nr, b, n);
		break;
	case CLI_V_LAYERS:
		fmt_layers(*(const uint32_t *)v, b, n);
		break;
	case CLI_V_COMM:
		snprintf(b, n, "%s", o->has_comm ? o->comm : "-");
		break;
	case CLI_V_MODE:
		fmt_mode(*(const enum it_mode *)v, b, n);
		break;
	case CLI_V_KEY: /* the key itself never goes to the log */
		snprintf(b, n, "%s", o->link_key && o->link_key->len ? "set" : "-");
		break;
	case CLI_V_NONE:
		b[0] = '\0';
		break;
	}
}

/* Where the written value does not tell (a secret): do a and b differ? */
static int key_differs(const struct it_opts *a, const struct it_opts *b)
{
	size_t la = a->link_key ? a->link_key->len : 0, lb = b->link_key ? b->link_key->len : 0;

	return la != lb || (la && memcmp(a->link_key->bytes, b->link_key->bytes, la));
}

/*
 * The rules are the options that have a config key (cli.c's table): each
 * row's reload kind says how a change is applied, its value type how the
 * value is written and compared.
 */
static const struct cli_option *rule_at(int *i)
{
	const struct cli_option *r;

	while ((r = cli_option(*i)) && !r->section)
		(*i)++;
	return r;
}

const char *reload_rule(int i, enum reload_kind *kind)
{
	const struct cli_option *r;
	int at = 0;

	for (r = rule_at(&at); r; at++, r = rule_at(&at))
		if (!i--) {
			*kind = r->reload;
			return r->row.name;
		}
	return NULL;
}

void reload_plan(const struct it_opts *old, const struct it_opts *n, struct reload_plan *p)
{
	char *a = malloc(VAL_LEN), *b = malloc(VAL_LEN);
	const struct cli_option *r;

	memset(p, 0, sizeof(*p));
	for (int i = 0; a && b && (r = rule_at(&i)); i++) {
		int k = r->reload;

		fmt_opt(r, old, a, VAL_LEN);
		fmt_opt(r, n, b, VAL_LEN);
		if (r->val == CLI_V_KEY ? !key_differs(old, n) : !strcmp(a, b))
			continue;
		cat(p->what[k], sizeof(p->what[k]), "%s%s %.200s -> %.200s", p->nr[k] ? "; " : "",
		    r->row.name, a, b);
		cat(p->names[k], sizeof(p->names[k]), "%s%s", p->nr[k] ? ", " : "", r->row.name);
		p->nr[k]++;
	}
	free(a);
	free(b);
}

static int keep_str(char **dst, const char *src)
{
	char *dup = src ? strdup(src) : NULL;

	if (src && !dup)
		return -ENOMEM;
	free(*dst);
	*dst = dup;
	return 0;
}

/* Give n the value of option r in old. 0, -ENOMEM, or -EINVAL: a type not kept yet. */
static int keep_opt(const struct cli_option *r, const struct it_opts *old, struct it_opts *n)
{
	const void *from = (const char *)old + r->off;
	void *to = (char *)n + r->off;

	switch (r->val) {
	case CLI_V_FLAG:
	case CLI_V_NOT_FLAG:
	case CLI_V_INT:
	case CLI_V_COUNT:
		*(int *)to = *(const int *)from;
		return 0;
	case CLI_V_U64:
	case CLI_V_DUR:
	case CLI_V_SIZE:
		*(uint64_t *)to = *(const uint64_t *)from;
		return 0;
	case CLI_V_STR:
		return keep_str(to, *(char *const *)from);
	default:
		return -EINVAL;
	}
}

int reload_keep_start_only(const struct it_opts *old, struct it_opts *n)
{
	const struct cli_option *r;
	int ret = 0;

	for (int i = 0; !ret && (r = rule_at(&i)); i++)
		if (r->reload == RELOAD_START)
			ret = keep_opt(r, old, n);
	return ret;
}
