// SPDX-License-Identifier: GPL-2.0
/*
 * addr: the link addresses the CLI, the guest and the host share (lib/addr.h):
 * parse, print, and turn into a sockaddr.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <linux/vm_sockets.h>

#include "lib/addr.h"

static __attribute__((format(printf, 3, 4))) int addr_err(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	if (why && n) {
		va_start(ap, fmt);
		vsnprintf(why, n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Decimal in [min, max], the whole of s[0..len). */
static int parse_num(const char *s, size_t len, uint64_t min, uint64_t max, uint32_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!len || len > 10)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v < min || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_vsock(const char *r, struct net_addr *a, char *why, size_t n)
{
	const char *c = strchr(r, ':');
	const char *port = c ? c + 1 : r;

	a->cid = VMADDR_CID_ANY;
	if (c && parse_num(r, (size_t)(c - r), 0, UINT32_MAX - 1, &a->cid))
		return addr_err(why, n, "vsock: bad CID '%.*s'", (int)(c - r), r);
	if (parse_num(port, strlen(port), 1, UINT32_MAX - 1, &a->port))
		return addr_err(why, n, "vsock: bad port '%s' (1..4294967294)", port);
	return 0;
}

static int parse_tcp(const char *r, struct net_addr *a, char *why, size_t n)
{
	const char *host = r, *end, *port;
	unsigned char bin[sizeof(struct in6_addr)];
	size_t hl;

	if (*r == '[') {
		host = r + 1;
		end = strchr(host, ']');
		if (!end || end[1] != ':')
			return addr_err(why, n, "tcp: expected [IPV6]:PORT");
		port = end + 2;
	} else {
		end = strrchr(r, ':');
		if (!end)
			return addr_err(why, n, "tcp: expected HOST:PORT");
		port = end + 1;
	}
	hl = (size_t)(end - host);
	if (!hl || hl >= sizeof(a->host))
		return addr_err(why, n, "tcp: bad host length");
	memcpy(a->host, host, hl);
	a->host[hl] = '\0';
	if (parse_num(port, strlen(port), 1, 65535, &a->port))
		return addr_err(why, n, "tcp: bad port '%s' (1..65535)", port);
	if (!strcmp(a->host, "localhost"))
		snprintf(a->host, sizeof(a->host), "127.0.0.1");
	if (*r == '[' ? inet_pton(AF_INET6, a->host, bin) == 1 :
			inet_pton(AF_INET, a->host, bin) == 1)
		return 0;
	if (*r != '[' && strchr(a->host, ':'))
		return addr_err(why, n, "tcp: an IPv6 address goes in brackets: [%s]", a->host);
	return addr_err(why, n, "tcp: '%s' is not a numeric address (no DNS; localhost works)",
			a->host);
}

static int parse_path(const char *r, struct net_addr *a, size_t max, char *why, size_t n)
{
	size_t len = strlen(r);

	if (!len)
		return addr_err(why, n, "empty path");
	if (len >= max)
		return addr_err(why, n, "path too long (%zu bytes, at most %zu)", len, max - 1);
	memcpy(a->path, r, len + 1);
	return 0;
}

int addr_parse(const char *s, struct net_addr *a, char *why, size_t whylen)
{
	static const char *const kinds[] = {
		[ADDR_VSOCK] = "vsock", [ADDR_UNIX] = "unix", [ADDR_TCP] = "tcp", [ADDR_SERIAL] = "serial"
	};
	const char *c = s ? strchr(s, ':') : NULL;
	unsigned int k;

	memset(a, 0, sizeof(*a));
	if (!c)
		return addr_err(why, whylen,
				"'%s': expected vsock:[CID:]PORT, unix:PATH, tcp:HOST:PORT or "
				"serial:NAME",
				s ? s : "");
	for (k = ADDR_VSOCK; k <= ADDR_SERIAL; k++)
		if ((size_t)(c - s) == strlen(kinds[k]) && !strncmp(s, kinds[k], (size_t)(c - s)))
			break;
	a->kind = (enum addr_kind)k;
	switch (k) {
	case ADDR_VSOCK:
		return parse_vsock(c + 1, a, why, whylen);
	case ADDR_TCP:
		return parse_tcp(c + 1, a, why, whylen);
	case ADDR_UNIX:
		return parse_path(c + 1, a, sizeof(((struct sockaddr_un *)0)->sun_path), why,
				  whylen);
	case ADDR_SERIAL:
		if (c[1] == '/' ? strncmp(c + 1, "/dev/", 5) != 0 : strchr(c + 1, '/') != NULL)
			return addr_err(why, whylen, "serial: a port NAME or a /dev/ path");
		return parse_path(c + 1, a, sizeof(a->path), why, whylen);
	}
	return addr_err(why, whylen, "unknown transport '%.*s' (vsock, unix, tcp, serial)",
			(int)(c - s), s);
}

int addr_parse_hostport(const char *s, struct net_addr *a, char *why, size_t whylen)
{
	memset(a, 0, sizeof(*a));
	a->kind = ADDR_TCP;
	if (s && s[0] == ':') {
		if (parse_num(s + 1, strlen(s + 1), 1, 65535, &a->port))
			return addr_err(why, whylen, "bad port '%s' (1..65535)", s + 1);
		return 0;
	}
	if (!parse_tcp(s ? s : "", a, why, whylen))
		return 0;
	/* the reason without parse_tcp()'s "tcp: " prefix: there is no transport here */
	if (why && !strncmp(why, "tcp: ", 5))
		memmove(why, why + 5, strlen(why + 5) + 1);
	return -EINVAL;
}

int addr_format(const struct net_addr *a, char *buf, size_t len)
{
	switch (a->kind) {
	case ADDR_VSOCK:
		if (a->cid == VMADDR_CID_ANY)
			return snprintf(buf, len, "vsock:%u", a->port);
		return snprintf(buf, len, "vsock:%u:%u", a->cid, a->port);
	case ADDR_UNIX:
		return snprintf(buf, len, "unix:%s", a->path);
	case ADDR_TCP:
		return snprintf(buf, len, strchr(a->host, ':') ? "tcp:[%s]:%u" : "tcp:%s:%u",
				a->host, a->port);
	case ADDR_SERIAL:
		return snprintf(buf, len, "serial:%s", a->path);
	}
	return snprintf(buf, len, "?");
}

/* sockaddr of a (vsock without CID: any for a listener, the host for a dialer). */
int addr_sockaddr(const struct net_addr *a, int listening, struct sockaddr_storage *ss,
		  socklen_t *len)
{
	struct sockaddr_vm *vm = (struct sockaddr_vm *)ss;
	struct sockaddr_un *un = (struct sockaddr_un *)ss;
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	switch (a->kind) {
	case ADDR_VSOCK:
		vm->svm_family = AF_VSOCK;
		vm->svm_cid = a->cid == VMADDR_CID_ANY && !listening ? VMADDR_CID_HOST : a->cid;
		vm->svm_port = a->port;
		*len = sizeof(*vm);
		return 0;
	case ADDR_UNIX:
		if (!a->path[0] || strlen(a->path) >= sizeof(un->sun_path))
			return -EINVAL;
		un->sun_family = AF_UNIX;
		memcpy(un->sun_path, a->path, strlen(a->path) + 1);
		*len = sizeof(*un);
		return 0;
	case ADDR_TCP:
		if (!a->host[0]) { /* every address: IPv6 any (dual stack where the host allows) */
			in6->sin6_family = AF_INET6;
			in6->sin6_addr = in6addr_any;
			in6->sin6_port = htons((uint16_t)a->port);
			*len = sizeof(*in6);
			return 0;
		}
		if (inet_pton(AF_INET, a->host, &in->sin_addr) == 1) {
			in->sin_family = AF_INET;
			in->sin_port = htons((uint16_t)a->port);
			*len = sizeof(*in);
			return 0;
		}
		if (inet_pton(AF_INET6, a->host, &in6->sin6_addr) != 1)
			return -EINVAL;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)a->port);
		*len = sizeof(*in6);
		return 0;
	case ADDR_SERIAL:
		break;
	}
	return -EINVAL;
}

void addr_sockname(const struct sockaddr_storage *ss, const char *fallback, char *out, size_t n)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_vm *vm = (const struct sockaddr_vm *)ss;
	char ip[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET && inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip)))
		snprintf(out, n, "tcp:%s:%u", ip, ntohs(in->sin_port));
	else if (ss->ss_family == AF_INET6 && inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip)))
		snprintf(out, n, "tcp:[%s]:%u", ip, ntohs(in6->sin6_port));
	else if (ss->ss_family == AF_VSOCK)
		snprintf(out, n, "vsock:%u:%u", vm->svm_cid, vm->svm_port);
	else
		snprintf(out, n, "%s", fallback);
}

/* 127.0.0.0/8, ::1 and ::ffff:127.x.y.z: only this host can reach it. */
static int ip_is_loopback(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
	const uint8_t *b = in6->sin6_addr.s6_addr;

	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss->ss_family != AF_INET6)
		return 0;
	if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
		return 1;
	return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && b[12] == 127;
}

int addr_is_loopback(const struct net_addr *a)
{
	struct sockaddr_storage ss;
	socklen_t len;

	return a->kind == ADDR_TCP && !addr_sockaddr(a, 1, &ss, &len) && ip_is_loopback(&ss);
}

int addr_peer_is_loopback(const struct sockaddr_storage *ss)
{
	return ip_is_loopback(ss);
}
