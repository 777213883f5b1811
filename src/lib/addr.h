/* SPDX-License-Identifier: GPL-2.0 */
/*
 * addr: link addresses (vsock, unix, tcp, virtio-serial), shared by the CLI and
 * the VM modes. Pure user space.
 */
#ifndef IT_LIB_ADDR_H
#define IT_LIB_ADDR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* A side's name in the link hello (--name), NUL included. */
#define ADDR_NAME_LEN 64

/*
 * Parse a link address. Forms: "vsock:PORT" (CID 2 for a dialer, any for a
 * listener), "vsock:CID:PORT", "unix:PATH", "tcp:HOST:PORT" (numeric IPv4 or
 * IPv6 in brackets, or "localhost"), "serial:NAME" (guest: the virtio-serial
 * port whose /sys/class/virtio-ports/ * /name is NAME) or "serial:/dev/PATH".
 * Returns 0 or -EINVAL with a one-line reason in why[whylen].
 */
enum addr_kind { ADDR_VSOCK = 1, ADDR_UNIX, ADDR_TCP, ADDR_SERIAL };
struct net_addr {
	enum addr_kind kind;
	uint32_t cid, port; /* vsock; port also for tcp */
	char host[64]; /* tcp */
	char path[108]; /* unix path, serial name or device path */
};
int addr_parse(const char *s, struct net_addr *a, char *why, size_t whylen);
/*
 * A TCP listening address without the "tcp:" prefix: "HOST:PORT" (numeric IPv4
 * or localhost), "[IPV6]:PORT", or ":PORT" for every address (host left empty:
 * addr_sockaddr() then gives the IPv6 any address, "[::]"). Returns 0 or -EINVAL
 * with a one-line reason in why[whylen].
 */
int addr_parse_hostport(const char *s, struct net_addr *a, char *why, size_t whylen);
/* Print a as addr_parse() reads it ("tcp:[::1]:7767"). Returns snprintf's count. */
int addr_format(const struct net_addr *a, char *buf, size_t len);

/* sockaddr of a (vsock without CID: any for a listener, the host for a dialer);
 * 0 or -EINVAL (serial has none). */
int addr_sockaddr(const struct net_addr *a, int listening, struct sockaddr_storage *ss,
		  socklen_t *len);
/* "tcp:IP:PORT", "vsock:CID:PORT" of a peer, or fallback for other families. */
void addr_sockname(const struct sockaddr_storage *ss, const char *fallback, char *out, size_t n);

/* A tcp address on the loopback (127.0.0.0/8, ::1, ::ffff:127.x): 1, else 0. */
int addr_is_loopback(const struct net_addr *a);
/* The same for a peer's sockaddr (AF_INET/AF_INET6; anything else: 0). */
int addr_peer_is_loopback(const struct sockaddr_storage *ss);

#endif /* IT_LIB_ADDR_H */
