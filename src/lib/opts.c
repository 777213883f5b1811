// SPDX-License-Identifier: GPL-2.0
/*
 * opts: a command line from a table of rows. See opts.h.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/opts.h"

#define OPTS_MAX 80 /* rows of one command, at most */

static int opts_count(const struct opt_cmd *c)
{
	int n = 0;

	while (c->rows[n])
		n++;
	return n;
}

const struct opt_row *opts_row(const struct opt_cmd *c, int key)
{
	for (int i = 0; c->rows[i]; i++)
		if (c->rows[i]->key == key)
			return c->rows[i];
	return NULL;
}

void opts_tables(const struct opt_cmd *c, struct option *lo, char *shortopts)
{
	char *s = shortopts;
	int i;

	*s++ = ':';
	for (i = 0; c->rows[i]; i++) {
		const struct opt_row *r = c->rows[i];

		lo[i] = (struct option){ r->name, r->arg ? required_argument : no_argument, NULL,
					 r->key };
		if (r->key >= 256)
			continue;
		*s++ = (char)r->key;
		if (r->arg)
			*s++ = ':';
	}
	lo[i] = (struct option){ NULL, 0, NULL, 0 };
	*s = '\0';
}

#define OPTS_HELP_W 55 /* the help column's width: 80 - 25 */

/*
 * r's help into buf (n bytes), its "{}" replaced by r->kw's keywords, "a, b, c",
 * a line broken after a comma where the next would pass the column's width.
 * Returns buf.
 */
static const char *opts_help_text(char *buf, size_t n, const struct opt_row *r)
{
	const char *h = r->help ? r->help : "", *at = r->kw ? strstr(h, "{}") : NULL;
	const char *line, *k;
	size_t len;

	if (!at) {
		snprintf(buf, n, "%s", h);
		return buf;
	}
	len = (size_t)snprintf(buf, n, "%.*s", (int)(at - h), h);
	for (int i = 0; (k = r->kw(i)) && len < n; i++) {
		line = strrchr(buf, '\n') ? strrchr(buf, '\n') + 1 : buf;
		if (i && strlen(line) + 2 + strlen(k) > OPTS_HELP_W)
			len += (size_t)snprintf(buf + len, n - len, ",\n%s", k);
		else
			len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", k);
	}
	if (len < n)
		snprintf(buf + len, n - len, "%s", at + 2);
	return buf;
}

void opts_usage_row(FILE *f, const struct opt_row *r)
{
	char left[64], text[1024];
	const char *h = opts_help_text(text, sizeof(text), r);
	size_t len;

	if (r->group)
		fprintf(f, "\n%s\n", r->group);
	if (r->key < 256)
		snprintf(left, sizeof(left), "  -%c, --%s%s%s", r->key, r->name, r->arg ? " " : "",
			 r->arg ? r->arg : "");
	else
		snprintf(left, sizeof(left), "      --%s%s%s", r->name, r->arg ? " " : "",
			 r->arg ? r->arg : "");
	for (int first = 1; *h || first; first = 0) {
		len = strcspn(h, "\n");
		fprintf(f, "%-24s %.*s\n", first ? left : "", (int)len, h);
		h += len + (h[len] == '\n');
	}
}

void opts_usage(const struct opt_cmd *c, FILE *f)
{
	if (c->head)
		fputs(c->head, f);
	for (int i = 0; c->rows[i]; i++)
		opts_usage_row(f, c->rows[i]);
	if (c->tail)
		fputs(c->tail, f);
}

/* "report: " of "iotracer report" (the run options: ""), into pfx. */
static const char *opts_pfx(const struct opt_cmd *c, char *pfx, size_t n)
{
	const char *sub = strchr(c->prog, ' ');

	snprintf(pfx, n, "%s%s", sub ? sub + 1 : "", sub ? ": " : "");
	return pfx;
}

int opts_getopt_error(const struct opt_cmd *c, int ch, int argc, char **argv, FILE *err)
{
	const char *tok = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
	const struct opt_row *r = optopt ? opts_row(c, optopt) : NULL;
	char pfx[32];

	opts_pfx(c, pfx, sizeof(pfx));
	if (ch == ':') {
		if (r)
			it_err_to(err, "%soption '--%s' requires an argument", pfx, r->name);
		else
			it_err_to(err, "%soption '%s' requires an argument", pfx, tok);
	} else if (r && !strncmp(tok, "--", 2)) {
		/* a known long option that takes no argument, given one */
		it_err_to(err, "%soption '--%s' doesn't allow an argument", pfx, r->name);
	} else if (optopt) {
		it_err_to(err, "%sunknown option '-%c'", pfx, optopt);
	} else {
		it_err_to(err, "%sunknown or ambiguous option '%s'", pfx, tok);
	}
	fprintf(err, "Try '%s --help'.\n", c->prog);
	return 2;
}

int opts_unexpected(const struct opt_cmd *c, const char *arg, FILE *err)
{
	char pfx[32];

	it_err_to(err, "%sunexpected argument '%s'", opts_pfx(c, pfx, sizeof(pfx)), arg);
	fprintf(err, "Try '%s --help'.\n", c->prog);
	return 2;
}

int opts_parse(const struct opt_cmd *c, int argc, char **argv,
	       int (*one)(void *ctx, int key, const char *arg), void *ctx, FILE *out, FILE *err)
{
	struct option lo[OPTS_MAX + 1];
	char shortopts[2 * OPTS_MAX + 2];
	const struct opt_row *r;
	int ch, ret;

	if (opts_count(c) > OPTS_MAX)
		abort(); /* a table this long is a programming error */
	out = out ? out : stdout;
	err = err ? err : stderr;
	opts_tables(c, lo, shortopts);
	optind = 0; /* full re-initialisation of glibc getopt */
	opterr = 0;
	while ((ch = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		if (ch == '?' || ch == ':')
			return opts_getopt_error(c, ch, argc, argv, err);
		r = opts_row(c, ch);
		if (r && !strcmp(r->name, "help")) {
			opts_usage(c, out);
			return 1;
		}
		ret = one(ctx, ch, optarg);
		if (ret)
			return ret;
	}
	if (argc - optind > c->operands)
		return opts_unexpected(c, argv[optind + c->operands], err);
	return 0;
}

const char *opts_bad_vmsg(char *buf, size_t n, const char *arg, const char *fmt, va_list ap)
{
	int len = snprintf(buf, n, "bad value '%s' (expected ", arg);

	if (len < 0 || (size_t)len >= n)
		return buf;
	len += vsnprintf(buf + len, n - (size_t)len, fmt, ap);
	if ((size_t)len + 1 < n)
		snprintf(buf + len, n - (size_t)len, ")");
	return buf;
}

const char *opts_bad_msg(char *buf, size_t n, const char *arg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	opts_bad_vmsg(buf, n, arg, fmt, ap);
	va_end(ap);
	return buf;
}

int opts_bad_value(FILE *err, const char *cmd, const char *opt, const char *arg, const char *fmt,
		   ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	opts_bad_vmsg(msg, sizeof(msg), arg, fmt, ap);
	va_end(ap);
	it_err_to(err ? err : stderr, "%s%s--%s: %s", cmd ? cmd : "", cmd ? ": " : "", opt, msg);
	return 2;
}

const char *opts_kw_list(char *buf, size_t n, const char *(*kw)(int i))
{
	size_t len = 0;
	const char *k;

	if (n)
		buf[0] = '\0';
	for (int i = 0; (k = kw(i)) && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : "", k);
	return buf;
}

int opts_kw_find(const char *(*kw)(int i), const char *arg)
{
	const char *k;

	for (int i = 0; (k = kw(i)); i++)
		if (!strcmp(k, arg))
			return i;
	return -1;
}
