/* SPDX-License-Identifier: GPL-2.0 */
/*
 * log: the one way iotracer reports an error, a warning or a note.
 *
 * Every line goes to the log stream (stderr unless log_to() says otherwise) as
 *   iotracer: MESSAGE              it_err(), it_note()
 *   iotracer: warning: MESSAGE     it_warn()
 * one line per call, the newline added here, control bytes of the message
 * written as \xNN (a name or a file's text is never printed raw). Errors and
 * warnings always print;
 * notes are dropped under -q and debug lines need -v. Messages name the bad
 * input first ("--dev: no such device 'sdz'") and say what to do where they can.
 *
 * The *_to() forms write to a given stream: parsers that tests drive with a
 * memory stream take one (cli_parse), everything else uses the short forms.
 */
#ifndef IT_LIB_LOG_H
#define IT_LIB_LOG_H

#include <stdarg.h>
#include <stdio.h>

#define IT_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* -v: 1 shows debug lines; -q: 1 drops notes. */
void log_set_level(int verbose, int quiet);
int log_verbose(void);
/* Where the short forms write (NULL: stderr). */
void log_to(FILE *f);

void it_err(const char *fmt, ...) IT_PRINTF(1, 2);
void it_warn(const char *fmt, ...) IT_PRINTF(1, 2);
void it_note(const char *fmt, ...) IT_PRINTF(1, 2);
/* A note kept under -q: the one start line a service logs (what it runs with). */
void it_note_always(const char *fmt, ...) IT_PRINTF(1, 2);
void it_debug(const char *fmt, ...) IT_PRINTF(1, 2);

void it_err_to(FILE *f, const char *fmt, ...) IT_PRINTF(2, 3);
void it_warn_to(FILE *f, const char *fmt, ...) IT_PRINTF(2, 3);
void it_vlog(FILE *f, const char *kind, const char *fmt, va_list ap) IT_PRINTF(3, 0);

#endif /* IT_LIB_LOG_H */
