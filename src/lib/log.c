// SPDX-License-Identifier: GPL-2.0
/* log: one line per message, one format (lib/log.h). */
#include <stdarg.h>
#include <stdio.h>

#include "lib/log.h"

static FILE *log_stream;
static int log_v, log_q;

void log_set_level(int verbose, int quiet)
{
	log_v = verbose;
	log_q = quiet;
}

int log_verbose(void)
{
	return log_v;
}

void log_to(FILE *f)
{
	log_stream = f;
}

/*
 * msg with its control bytes (a config file's binary, a name with an escape
 * sequence) as \xNN into out: a message is one line, and it never moves the
 * terminal's cursor or colours it.
 */
static void log_escape(const char *msg, char *out, size_t n)
{
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)msg; *p && o + 5 < n; p++) {
		if (*p < 0x20 || *p == 0x7f)
			o += (size_t)snprintf(out + o, n - o, "\\x%02x", *p);
		else
			out[o++] = (char)*p;
	}
	out[o] = '\0';
}

/* "iotracer: [KIND: ]MESSAGE\n" in one stdio call, so lines from two threads
 * do not interleave. */
void it_vlog(FILE *f, const char *kind, const char *fmt, va_list ap)
{
	char msg[1024], esc[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_escape(msg, esc, sizeof(esc));
	fprintf(f ? f : stderr, "iotracer: %s%s%s\n", kind ? kind : "", kind ? ": " : "", esc);
}

#define LOG_BODY(stream, kind)                  \
	do {                                    \
		va_list ap;                     \
		va_start(ap, fmt);              \
		it_vlog(stream, kind, fmt, ap); \
		va_end(ap);                     \
	} while (0)

void it_err(const char *fmt, ...)
{
	LOG_BODY(log_stream, NULL);
}

void it_warn(const char *fmt, ...)
{
	LOG_BODY(log_stream, "warning");
}

void it_note(const char *fmt, ...)
{
	if (!log_q)
		LOG_BODY(log_stream, NULL);
}

void it_note_always(const char *fmt, ...)
{
	LOG_BODY(log_stream, NULL);
}

void it_debug(const char *fmt, ...)
{
	if (log_v)
		LOG_BODY(log_stream, "debug");
}

void it_err_to(FILE *f, const char *fmt, ...)
{
	LOG_BODY(f, NULL);
}

void it_warn_to(FILE *f, const char *fmt, ...)
{
	LOG_BODY(f, "warning");
}
