// SPDX-License-Identifier: GPL-2.0
/*
 * config: read the INI config file with libinih and apply each key through
 * cli_apply(), the command line's own per-option code: a value means the
 * same, and is checked the same, wherever it is written. See config.h and
 * docs/config.md.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include <ini.h>

#include "service/cli.h"
#include "service/config.h"
#include "lib/log.h"

#define CONFIG_MAX_LINE 4096

struct config_ctx {
	struct it_opts *o;
	FILE *f;
	unsigned int line; /* of the text read last (libinih reads a line, then calls back) */
	int at_start; /* the next read starts a line */
	char msg[512]; /* the first error, without FILE:LINE */
	int failed;
};

/* A flag's value: 1 for yes/true/on/1, 0 for no/false/off/0, -1 otherwise. */
static int config_bool(const char *v)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(v, yes[i]))
			return 1;
		if (!strcasecmp(v, no[i]))
			return 0;
	}
	return -1;
}

/* Where `name` belongs, for the message of a key in the wrong section. */
static void config_misplaced(struct config_ctx *c, const char *name, const char *home)
{
	if (!*home)
		snprintf(c->msg, sizeof(c->msg),
			 "%s: belongs at the top of the file, before any [section]", name);
	else
		snprintf(c->msg, sizeof(c->msg), "%s: belongs in section [%s]", name, home);
}

/* ini_handler: one key. Returns 0 on error (libinih then stops at this line). */
static int config_key(void *user, const char *section, const char *name, const char *value)
{
	struct config_ctx *c = user;
	struct cli_src src = { .msg = c->msg, .msg_size = sizeof(c->msg) };
	const struct cli_option *r = cli_option_named(name);
	const char *home = r ? r->section : NULL;
	int on;

	if (!home) {
		snprintf(c->msg, sizeof(c->msg), "unknown key '%s'%s%s%s", name,
			 *section ? " in [" : "", section, *section ? "]" : "");
		goto fail;
	}
	if (strcmp(home, section)) {
		config_misplaced(c, name, home);
		goto fail;
	}
	if (r->row.arg) {
		if (cli_apply(r->row.key, value, c->o, stdout, &src) != CLI_RUN)
			goto fail;
		cli_set_line(c->o, r->row.key, c->line);
		return 1;
	}
	on = config_bool(value);
	if (on < 0) {
		char msg[256];

		snprintf(c->msg, sizeof(c->msg), "%s: %s", name,
			 opts_bad_msg(msg, sizeof(msg), value, "yes or no"));
		goto fail;
	}
	if (on && cli_apply(r->row.key, NULL, c->o, stdout, &src) != CLI_RUN)
		goto fail;
	cli_set_line(c->o, r->row.key, c->line);
	return 1;
fail:
	c->failed = 1;
	return 0;
}

/* ini_reader: fgets, counting lines (a long line may come in parts). */
static char *config_gets(char *s, int n, void *stream)
{
	struct config_ctx *c = stream;
	char *r = fgets(s, n, c->f);

	if (r) {
		c->line += c->at_start;
		c->at_start = strchr(r, '\n') != NULL;
	}
	return r;
}

int config_read(const char *path, struct it_opts *o, FILE *err)
{
	struct config_ctx c = { .o = o, .at_start = 1 };
	int line;

	/* the Debian build's knobs: one value per line, stop at the first error */
	ini_allow_multiline = false;
	ini_stop_on_first_error = true;
	ini_use_stack = false;
	ini_allow_realloc = true;
	ini_max_line = CONFIG_MAX_LINE;
	ini_inline_comment_prefixes = (char *)";#";
	errno = 0;
	c.f = fopen(path, "re");
	line = c.f ? ini_parse_stream(config_gets, &c, config_key, &c) : -1;
	/* a directory opens, then every read fails (EISDIR): not an empty file */
	if (c.f && !line && ferror(c.f))
		line = -1;
	if (c.f)
		fclose(c.f);
	if (!line)
		return CLI_RUN;
	if (line == -1)
		it_err_to(err, "%s: cannot read: %s", path, strerror(errno ? errno : ENOENT));
	else if (line < 0)
		it_err_to(err, "%s: out of memory", path);
	else if (c.failed)
		it_err_to(err, "%s:%d: %s", path, line, c.msg);
	else
		it_err_to(err, "%s:%d: syntax error (expected KEY = VALUE or [SECTION])", path,
			  line);
	return CLI_USAGE;
}

int config_parse(int argc, char **argv, struct it_opts *o, FILE *out, FILE *err)
{
	const char *file;
	int ret;

	if (!err)
		err = stderr;
	ret = cli_config_file(argc, argv, o, err, &file);
	if (ret == CLI_RUN && file)
		ret = config_read(file, o, err);
	if (ret == CLI_RUN)
		return cli_parse(argc, argv, o, out, err);
	fflush(err);
	return ret;
}
