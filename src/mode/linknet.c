// SPDX-License-Identifier: GPL-2.0
/*
 * link transports (link.h, docs/link.md "Transports and addresses"):
 * listeners (vsock, unix, tcp), dials with backoff (sockets, virtio-serial
 * ports). The peers they make are link.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "mode/link_int.h"

/* ---- listeners ---- */

static void set_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void lk_accept(struct link *l, struct listener *ls)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char name[128];
	int i, fd;

	for (i = 0; i < EVENTS; i++) {
		len = sizeof(ss);
		memset(&ss, 0, sizeof(ss));
		fd = accept4(ls->ep.fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && errno == EINTR)
			continue;
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				lk_warn(l, "link: %s: accept: %s", ls->name, strerror(errno));
			return;
		}
		if (ss.ss_family == AF_INET || ss.ss_family == AF_INET6)
			set_nodelay(fd);
		addr_sockname(&ss, ls->name, name, sizeof(name));
		lk_peer_new(l, fd, name, NULL, 0, 0, &ss, ls->kind);
	}
}

/* A unix socket file nobody listens on (connect refused) is stale. */
static int unix_stale(const char *path)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, stale;

	if (lstat(path, &st) || !S_ISSOCK(st.st_mode))
		return 0;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	memcpy(un.sun_path, path, strlen(path) + 1);
	stale = connect(fd, (struct sockaddr *)&un, sizeof(un)) < 0 && errno == ECONNREFUSED;
	close(fd);
	return stale;
}

static int bind_listen(int fd, const struct net_addr *a, const struct sockaddr_storage *ss,
		       socklen_t len)
{
	int one = 1;

	if (a->kind == ADDR_TCP)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)ss, len) < 0) {
		if (errno != EADDRINUSE || a->kind != ADDR_UNIX || !unix_stale(a->path))
			return -errno;
		unlink(a->path);
		if (bind(fd, (const struct sockaddr *)ss, len) < 0)
			return -errno;
	}
	/* owner only, before anyone can connect (connect needs write permission) */
	if (a->kind == ADDR_UNIX && chmod(a->path, 0600) < 0)
		return -errno;
	return listen(fd, 64) < 0 ? -errno : 0;
}

int link_listen(struct link *l, const struct net_addr *a)
{
	struct sockaddr_storage ss;
	struct listener *ls;
	struct stat st;
	socklen_t len;
	int fd, err;

	if (a->kind == ADDR_SERIAL)
		return -EOPNOTSUPP;
	if (a->kind == ADDR_TCP && !l->key.len && !addr_is_loopback(a))
		return -EPERM; /* anyone on the network could feed us: a key first */
	err = addr_sockaddr(a, 1, &ss, &len);
	if (err)
		return err;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ls = calloc(1, sizeof(*ls));
	err = ls ? bind_listen(fd, a, &ss, len) : -ENOMEM;
	if (!err) {
		ls->ep.kind = EP_LISTEN;
		ls->ep.fd = fd;
		ls->kind = a->kind;
		err = lk_ep_ctl(l, &ls->ep, EPOLL_CTL_ADD, EPOLLIN);
	}
	if (err) {
		free(ls);
		close(fd);
		return err;
	}
	addr_format(a, ls->name, sizeof(ls->name));
	if (a->kind == ADDR_UNIX && !stat(a->path, &st)) {
		ls->is_unix = 1;
		snprintf(ls->path, sizeof(ls->path), "%s", a->path);
		ls->dev = st.st_dev;
		ls->ino = st.st_ino;
	}
	ls->next = l->lsn;
	l->lsn = ls;
	lk_log(l, "link: listening on %s", ls->name);
	return 0;
}

/* ---- dialing ---- */

static int read_line(const char *path, char *buf, size_t n)
{
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	r = read(fd, buf, n - 1);
	close(fd);
	if (r < 0)
		return -1;
	buf[r] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* /dev/vportNpM of the virtio-serial port named name. */
static int serial_find(const char *name, char *dev, size_t n)
{
	char path[512], buf[128];
	struct dirent *de;
	DIR *dir = opendir(VPORTS);
	int found = -1;

	if (!dir)
		return -1;
	while (found && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), VPORTS "/%s/name", de->d_name);
		if (read_line(path, buf, sizeof(buf)) || strcmp(buf, name))
			continue;
		snprintf(dev, n, "/dev/%s", de->d_name);
		found = 0;
	}
	closedir(dir);
	return found;
}

static int serial_open(const struct net_addr *a, char *why, size_t n)
{
	char dev[300];
	int fd;

	if (a->path[0] == '/') {
		snprintf(dev, sizeof(dev), "%s", a->path);
	} else if (serial_find(a->path, dev, sizeof(dev))) {
		snprintf(why, n, "no virtio-serial port named %s", a->path);
		return -1;
	}
	fd = open(dev, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		snprintf(why, n, "open %.100s: %s", dev, strerror(errno));
	return fd;
}

static int sock_connect(const struct net_addr *a, int *connecting, char *why, size_t n)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd;

	if (addr_sockaddr(a, 0, &ss, &len)) {
		snprintf(why, n, "bad address");
		return -1;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, n, "socket: %s", strerror(errno));
		return -1;
	}
	if (a->kind == ADDR_TCP)
		set_nodelay(fd);
	if (!connect(fd, (struct sockaddr *)&ss, len))
		return fd;
	if (errno == EINPROGRESS) {
		*connecting = 1;
		return fd;
	}
	snprintf(why, n, "connect: %s", strerror(errno));
	close(fd);
	return -1;
}

void lk_dial_start(struct link *l, struct dial *d)
{
	int serial = d->addr.kind == ADDR_SERIAL, connecting = 0, fd;
	char why[160];

	if (serial)
		fd = serial_open(&d->addr, why, sizeof(why));
	else
		fd = sock_connect(&d->addr, &connecting, why, sizeof(why));
	if (fd < 0)
		lk_dial_retry(l, d, why, 0);
	else if (!lk_peer_new(l, fd, d->name, d, connecting, serial, NULL, d->addr.kind))
		lk_dial_retry(l, d, "out of memory", 0);
}

int link_dial(struct link *l, const struct net_addr *a)
{
	struct sockaddr_storage ss;
	struct dial *d, **dp;
	socklen_t len;

	if (a->kind != ADDR_SERIAL && addr_sockaddr(a, 0, &ss, &len))
		return -EINVAL;
	if (a->kind == ADDR_SERIAL && !a->path[0])
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->addr = *a;
	addr_format(a, d->name, sizeof(d->name));
	d->backoff = l->o.backoff_min_ns;
	for (dp = &l->dials; *dp; dp = &(*dp)->next)
		;
	*dp = d;
	lk_dial_start(l, d);
	return 0;
}

void lk_net_free(struct link *l)
{
	struct listener *ls;
	struct dial *d;
	struct stat st;

	while ((ls = l->lsn)) {
		l->lsn = ls->next;
		close(ls->ep.fd);
		if (ls->is_unix && !lstat(ls->path, &st) && st.st_dev == ls->dev &&
		    st.st_ino == ls->ino)
			unlink(ls->path);
		free(ls);
	}
	while ((d = l->dials)) {
		l->dials = d->next;
		free(d);
	}
}
