/* SPDX-License-Identifier: GPL-2.0 */
/*
 * opts: the command line of `iotracer` and of its subcommands (report, top,
 * bench) from tables of rows, one row per option. From the rows alone: getopt's
 * long options and short-option string, the options part of --help, and the
 * wording of an unknown option, a missing argument or a stray operand (the same
 * for every command). The values are each command's own code (a one() callback).
 * Pure user space (getopt and log only).
 */
#ifndef IT_LIB_OPTS_H
#define IT_LIB_OPTS_H

#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* One option. */
struct opt_row {
	const char *name; /* the long option */
	int key; /* its short letter, or a code >= 256 (long only) */
	const char *arg; /* the value's name in --help; NULL: a flag */
	const char *group; /* --help: the heading printed before this option */
	const char *help; /* --help: its lines ('\n' between them); "{}": kw's list */
	/*
	 * A keyword option: its values, kw(0), kw(1)... until NULL, the table its
	 * value is parsed with. --help writes them where help says "{}", and the
	 * bad-value message lists them (opts_kw_list); NULL: no keywords.
	 */
	const char *(*kw)(int i);
};

/* A kw function over a table of names (no NULL in it), for an opt_row's .kw. */
#define OPTS_KW_TABLE(fn, table)                                                                \
	static const char *fn(int i)                                                            \
	{                                                                                       \
		return i >= 0 && i < (int)(sizeof(table) / sizeof(table[0])) ? table[i] : NULL; \
	}

/* A command: its rows (pointers, NULL-terminated: a table may borrow another's rows). */
struct opt_cmd {
	const char *prog; /* "iotracer", "iotracer report" */
	const char *head; /* --help: the text before the options (usage lines, description) */
	const char *tail; /* --help: the text after them */
	const struct opt_row *const *rows;
	int operands; /* operands allowed after the options (report's PATH...) */
};

/* The row of option code key, or NULL. */
const struct opt_row *opts_row(const struct opt_cmd *c, int key);

/*
 * getopt's tables from the rows: lo (n entries at least: rows + 1) and short
 * (2 * rows + 2 bytes at least; it starts with ':').
 */
void opts_tables(const struct opt_cmd *c, struct option *lo, char *shortopts);

/* One option in --help: "  -l, --layers LIST", its help from column 26. */
void opts_usage_row(FILE *f, const struct opt_row *r);
/* The whole --help: head, every row (with its group heading), tail. */
void opts_usage(const struct opt_cmd *c, FILE *f);

/*
 * getopt_long said '?' or ':' (ch): one line naming the option, then
 * "Try 'PROG --help'." to err. Returns 2.
 */
int opts_getopt_error(const struct opt_cmd *c, int ch, int argc, char **argv, FILE *err);

/* An operand where none (or no more) is allowed: one line, the "Try" line. Returns 2. */
int opts_unexpected(const struct opt_cmd *c, const char *arg, FILE *err);

/*
 * Parse argv (argv[0]: the command) by the rows: the row named "help" prints
 * opts_usage() to out; every other option goes to one(ctx, key, value or NULL).
 * Returns 0 with optind at the first operand (more than c->operands allowed is
 * an error: "unexpected argument"), 1 after --help, 2 after a usage error
 * (printed to err), or what one() returned when not 0. out/err NULL: stdout/stderr.
 */
int opts_parse(const struct opt_cmd *c, int argc, char **argv,
	       int (*one)(void *ctx, int key, const char *arg), void *ctx, FILE *out, FILE *err);

/*
 * The one wording of a bad value, for every command and the config file:
 * "bad value 'ARG' (expected WHAT)", WHAT printf'd from fmt, into buf (n bytes).
 * Returns buf.
 */
const char *opts_bad_vmsg(char *buf, size_t n, const char *arg, const char *fmt, va_list ap);
const char *opts_bad_msg(char *buf, size_t n, const char *arg, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * A bad value of --opt: "iotracer: [CMD: ]--OPT: bad value 'ARG' (expected WHAT)" as
 * one line to err (NULL: stderr); cmd NULL for the run options. Returns 2.
 */
int opts_bad_value(FILE *err, const char *cmd, const char *opt, const char *arg, const char *fmt,
		   ...) __attribute__((format(printf, 5, 6)));

/* kw's keywords (an opt_row's .kw) as a list, "a, b, c", into buf (n bytes). Returns buf. */
const char *opts_kw_list(char *buf, size_t n, const char *(*kw)(int i));

/* arg's index among kw's keywords, or -1. */
int opts_kw_find(const char *(*kw)(int i), const char *arg);

#endif /* IT_LIB_OPTS_H */
