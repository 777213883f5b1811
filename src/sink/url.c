// SPDX-License-Identifier: GPL-2.0
/*
 * url: a clickhouse:// address and the password file (see http.h). Pure.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/keyfile.h"
#include "sink/http.h"

/* [A-Za-z0-9_]{1,63} */
static int ident_ok(const char *s, size_t n)
{
	if (!n || n > 63)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return 1;
}

/* A host name or IPv4 address: letters, digits, '-', '.'; an IPv6 address in brackets. */
static int host_ok(const char *s, size_t n, int v6)
{
	if (!n || n > 253)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!(isalnum(c) || c == '-' || c == '.' || (v6 && (c == ':' || c == '%'))))
			return 0;
	}
	return 1;
}

#define BAD(...)                                    \
	do {                                        \
		snprintf(why, whylen, __VA_ARGS__); \
		return -EINVAL;                     \
	} while (0)

/* HOST:PORT at p (up to '/'), into u. */
static int host_port(const char *p, const char *slash, struct sk_url *u, char *why, size_t whylen)
{
	const char *colon, *h = p, *he;
	char *end;
	unsigned long port;
	int v6 = *p == '[';

	if (v6) {
		he = memchr(p, ']', (size_t)(slash - p));
		if (!he)
			BAD("no ']' after the IPv6 address");
		h = p + 1;
		colon = he + 1 < slash && he[1] == ':' ? he + 1 : NULL;
	} else {
		colon = memchr(p, ':', (size_t)(slash - p));
		he = colon ? colon : slash;
	}
	if (!host_ok(h, (size_t)(he - h), v6))
		BAD("bad host '%.*s'", (int)(he - h), h);
	if (!colon || colon + 1 == slash)
		BAD("no port (HOST:PORT: ClickHouse's HTTP port, 8123 by default)");
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || end != slash || !port || port > 65535 || !isdigit((unsigned char)colon[1]))
		BAD("bad port '%.*s' (1 to 65535)", (int)(slash - colon - 1), colon + 1);
	snprintf(u->host, sizeof(u->host), "%.*s", (int)(he - h), h);
	u->port = (uint16_t)port;
	return 0;
}

int sk_url_parse(const char *s, struct sk_url *u, char *why, size_t whylen)
{
	const char *p, *at, *slash, *dot;

	memset(u, 0, sizeof(*u));
	if (!strncmp(s, "clickhouse://", 13)) {
		p = s + 13;
	} else if (!strncmp(s, "clickhouses://", 14)) {
		p = s + 14;
		u->tls = 1;
	} else {
		BAD("'%s' is not a clickhouse:// address (clickhouse://[USER@]HOST:PORT/DB.TABLE)",
		    s);
	}
	slash = strchr(p, '/');
	if (!slash)
		BAD("no /DB.TABLE after HOST:PORT");
	at = memchr(p, '@', (size_t)(slash - p));
	if (at) {
		if (!ident_ok(p, (size_t)(at - p)))
			BAD("bad user '%.*s' (letters, digits, '_'; the password goes in a file: "
			    "--sink-auth)",
			    (int)(at - p), p);
		snprintf(u->user, sizeof(u->user), "%.*s", (int)(at - p), p);
		p = at + 1;
	}
	if (host_port(p, slash, u, why, whylen))
		return -EINVAL;
	dot = strchr(slash + 1, '.');
	if (!dot || !ident_ok(slash + 1, (size_t)(dot - slash - 1)) ||
	    !ident_ok(dot + 1, strlen(dot + 1)))
		BAD("bad table '%s' (DB.TABLE: letters, digits, '_')", slash + 1);
	snprintf(u->db, sizeof(u->db), "%.*s", (int)(dot - slash - 1), slash + 1);
	snprintf(u->table, sizeof(u->table), "%s", dot + 1);
	return 0;
}

int sk_password_load(const char *path, char *pw, size_t n, char *why, size_t whylen)
{
	size_t r = 0, line;
	const char *nl;
	/* the link key's rules (lib/keyfile.h), the daemon's own user allowed too; a first line */
	int err = keyfile_read(path, geteuid(), 1, pw, n - 1, &r, why, whylen);

	if (err) {
		memset(pw, 0, n);
		return err;
	}
	nl = memchr(pw, '\n', r);
	line = nl ? (size_t)(nl - pw) : r;
	if (line && pw[line - 1] == '\r')
		line--;
	if (memchr(pw, '\0', line)) {
		snprintf(why, whylen, "a NUL byte in the password");
		err = -EINVAL;
	} else if (!line) {
		snprintf(why, whylen, "empty: the password is the file's first line");
		err = -EINVAL;
	}
	pw[line] = '\0';
	if (err)
		memset(pw, 0, n);
	return err;
}
