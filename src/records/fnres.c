// SPDX-License-Identifier: GPL-2.0
/*
 * fnres: name records into the paths of the host and of a container (see
 * fnres.h): the record's components joined, then placed under a mount of
 * the namespace that is to see them (mountinfo.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "iotracer.h"
#include "records/fnres.h"
#include "records/mountinfo.h"

#define FR_REREAD_NS (100ull * 1000 * 1000) /* a table read again on a miss, at most this often */
#define FR_NS_TABLES 16 /* other mount namespaces whose tables are kept */

/* One namespace's mounts and when they were read. */
struct fr_ns {
	uint64_t ino; /* the namespace (its nsfs inode); 0: unused */
	struct mi_table t;
	uint64_t read_ns, used_ns;
};

struct fnres {
	char proc[256];
	struct fr_ns self;
	int self_fd; /* /proc/self/mountinfo, polled for changes */
	struct fr_ns other[FR_NS_TABLES];
	uint64_t scan_ino, scan_ns; /* the last namespace looked for in /proc, and when */
	struct fnres_stats st;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t ns_inode(const char *proc, const char *who)
{
	char p[600];
	struct stat st;

	if (snprintf(p, sizeof(p), "%s/%s/ns/mnt", proc, who) >= (int)sizeof(p))
		return 0;
	return stat(p, &st) ? 0 : (uint64_t)st.st_ino;
}

struct fnres *fnres_new(const char *proc)
{
	struct fnres *r = calloc(1, sizeof(*r));
	char p[600];

	if (!r)
		return NULL;
	snprintf(r->proc, sizeof(r->proc), "%s", proc ? proc : "/proc");
	snprintf(p, sizeof(p), "%s/self/mountinfo", r->proc);
	r->self_fd = open(p, O_RDONLY | O_CLOEXEC);
	r->self.ino = ns_inode(r->proc, "self");
	return r;
}

void fnres_free(struct fnres *r)
{
	if (!r)
		return;
	if (r->self_fd >= 0)
		close(r->self_fd);
	mi_free(&r->self.t);
	for (int i = 0; i < FR_NS_TABLES; i++)
		mi_free(&r->other[i].t);
	free(r);
}

void fnres_stats(const struct fnres *r, struct fnres_stats *st)
{
	*st = r->st;
}

/* ---- a record's components ---- */

/*
 * The record's components in root-first order into buf with the markers of
 * the cut and of a pseudo file; 0 or -EINVAL (a record that does not decode).
 */
int fnres_rel(const void *rec, size_t len, char *buf, size_t n)
{
	const struct it_name_rec *nr = rec;
	const char *comp[IT_NAME_DEPTH];
	size_t off = 0, w = 0;
	int k = 0;

	if (len < IT_NAME_SIZE(0) || nr->hdr.type != IT_REC_NAME || nr->len > IT_NAME_MAX ||
	    len < IT_NAME_SIZE(nr->len) || nr->nr > IT_NAME_DEPTH || n < 2)
		return -EINVAL;
	while (off < nr->len && k < IT_NAME_DEPTH) {
		const char *s = nr->names + off;
		const char *z = memchr(s, 0, nr->len - off);

		if (!z)
			return -EINVAL;
		comp[k++] = s;
		off += (size_t)(z - s) + 1;
	}
	if (k != nr->nr || off != nr->len)
		return -EINVAL;
	buf[0] = '\0';
	if (nr->flags & IT_NM_CUT)
		w += (size_t)snprintf(buf + w, n - w, "/%s", FR_CUT);
	for (int i = k - 1; i >= 0 && w < n; i--) {
		/*
		 * a pseudo file's own name heads it (memfd_create's "memfd:NAME"), one
		 * without a name its file system's type ("[pidfs]"); a disconnected
		 * dentry is "/"
		 */
		if (i == k - 1 && (nr->flags & IT_NM_PSEUDO) && !(nr->flags & IT_NM_CUT)) {
			if (!strcmp(comp[i], "/"))
				w += (size_t)snprintf(buf + w, n - w, "[disconnected]");
			else if (!comp[i][0])
				w += (size_t)snprintf(buf + w, n - w, "[%.*s]", IT_FSTYPE_LEN,
						      nr->fstype[0] ? nr->fstype : "unnamed");
			else
				w += (size_t)snprintf(buf + w, n - w, "%s", comp[i]);
			continue;
		}
		w += (size_t)snprintf(buf + w, n - w, "/%s", comp[i]);
	}
	if (!k && (nr->flags & IT_NM_PSEUDO)) /* an inode of no dentry: its file system's type */
		w += (size_t)snprintf(buf + w, n - w, "[%.*s]", IT_FSTYPE_LEN,
				      nr->fstype[0] ? nr->fstype : "unnamed");
	else if (!k && w < n)
		w += (size_t)snprintf(buf + w, n - w, "/");
	if (w >= n)
		return -EINVAL;
	return 0;
}

/* ---- mount tables ---- */

/* This namespace's mountinfo changed since it was read (poll: POLLPRI). */
static int self_changed(struct fnres *r)
{
	struct pollfd p = { .fd = r->self_fd, .events = POLLPRI };

	return r->self_fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLPRI | POLLERR));
}

/* Read a table again if it was never read, or (a miss) changed or old enough. */
static void reread(struct fnres *r, struct fr_ns *ns, const char *who, int miss)
{
	uint64_t now = mono_ns();
	char p[300];

	if (ns->t.m &&
	    !(miss && (now - ns->read_ns >= FR_REREAD_NS || (ns == &r->self && self_changed(r)))))
		return;
	/* a poll that saw the change consumed it: this read is the table after it */
	snprintf(p, sizeof(p), "%s/%s/mountinfo", r->proc, who);
	if (mi_read(&ns->t, p) == 0)
		r->st.reads++;
	ns->read_ns = now;
}

static const struct mi_mount *self_by_id(struct fnres *r, uint32_t id)
{
	const struct mi_mount *m;

	reread(r, &r->self, "self", 0);
	m = mi_by_id(&r->self.t, id);
	if (!m) {
		reread(r, &r->self, "self", 1);
		m = mi_by_id(&r->self.t, id);
	}
	return m;
}

static const struct mi_mount *self_by_dev(struct fnres *r, uint32_t dev, const char *path)
{
	const struct mi_mount *m;

	reread(r, &r->self, "self", 0);
	m = mi_by_dev(&r->self.t, dev, path);
	if (!m) {
		reread(r, &r->self, "self", 1);
		m = mi_by_dev(&r->self.t, dev, path);
	}
	return m;
}

/*
 * A process in mount namespace ino into who: the task itself when it still is
 * (pid), else the first one found in /proc (a short-lived task, dd in a
 * container, is gone by the time its name is read; its container's other
 * processes are not). Looked for at most every FR_REREAD_NS per namespace.
 */
static int ns_task(struct fnres *r, uint64_t ino, uint32_t pid, char *who, size_t n)
{
	struct dirent *e;
	uint64_t now = mono_ns();
	DIR *d;

	snprintf(who, n, "%u", pid);
	if (pid && ns_inode(r->proc, who) == ino)
		return 0;
	if (r->scan_ino == ino && now - r->scan_ns < FR_REREAD_NS)
		return -ENOENT;
	r->scan_ino = ino;
	r->scan_ns = now;
	r->st.scans++;
	d = opendir(r->proc);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		if (strlen(e->d_name) < n && ns_inode(r->proc, e->d_name) == ino) {
			memcpy(who, e->d_name, strlen(e->d_name) + 1);
			closedir(d);
			return 0;
		}
	}
	if (d)
		closedir(d);
	return -ENOENT;
}

/* The table of namespace ino as process pid sees it; NULL when it cannot be read. */
static struct fr_ns *other_ns(struct fnres *r, uint64_t ino, uint32_t pid, uint32_t id)
{
	struct fr_ns *ns = NULL, *lru = &r->other[0];
	char who[32];

	for (int i = 0; i < FR_NS_TABLES; i++) {
		if (r->other[i].ino == ino)
			ns = &r->other[i];
		if (r->other[i].used_ns < lru->used_ns)
			lru = &r->other[i];
	}
	if (ns && mi_by_id(&ns->t, id))
		goto found;
	/* a task of that namespace: its table is the namespace's */
	if (ns_task(r, ino, pid, who, sizeof(who)))
		return ns;
	if (!ns) {
		ns = lru;
		mi_free(&ns->t);
		ns->ino = ino;
		ns->read_ns = 0;
	}
	reread(r, ns, who, 1);
found:
	ns->used_ns = mono_ns();
	return ns;
}

/* ---- a record into paths ---- */

/* A block device node's path when its devtmpfs mount is not known by id: /dev's. */
static const struct mi_mount *devtmpfs(struct fnres *r)
{
	reread(r, &r->self, "self", 0);
	for (int i = 0; i < r->self.t.nr; i++)
		if (!strcmp(r->self.t.m[i].fstype, "devtmpfs") && !strcmp(r->self.t.m[i].root, "/"))
			return &r->self.t.m[i];
	return NULL;
}

/* rel under m into buf; a cut path goes under the mount point whatever the mount's root. */
static int place(const struct mi_mount *m, const char *rel, int cut, char *buf)
{
	if (!m)
		return -ENOENT;
	if (cut) {
		int w = snprintf(buf, FR_PATH_MAX, "%s%s", strcmp(m->point, "/") ? m->point : "",
				 rel);

		return w < 0 || w >= FR_PATH_MAX ? -ENAMETOOLONG : 0;
	}
	return mi_path(m, rel, buf, FR_PATH_MAX);
}

/* The host's path of the file (rel inside its file system). */
static void host_path(struct fnres *r, const struct it_name_rec *n, const char *rel, char *file)
{
	int cut = !!(n->flags & IT_NM_CUT);
	const struct mi_mount *m = n->mnt_id ? self_by_id(r, n->mnt_id) : NULL;

	if (place(m, rel, cut, file) == 0)
		return;
	m = n->flags & IT_NM_BDEV ? devtmpfs(r) : self_by_dev(r, n->dev, cut ? "/" : rel);
	if (place(m, rel, cut, file) == 0)
		return;
	r->st.no_mount++;
	if (snprintf(file, FR_PATH_MAX, "[%u:%u]%s", IT_MAJOR(n->dev), IT_MINOR(n->dev), rel) >=
	    FR_PATH_MAX)
		file[FR_PATH_MAX - 1] = '\0'; /* rel is shorter: never */
}

/* The container's path (another mount namespace's), "" when none or the same as file. */
static void container_path(struct fnres *r, const struct it_name_rec *n, const char *rel,
			   const char *file, char *cfile)
{
	struct fr_ns *ns;

	cfile[0] = '\0';
	if (!n->mnt_ns || !n->mnt_id || n->mnt_ns == r->self.ino)
		return;
	ns = other_ns(r, n->mnt_ns, n->pid, n->mnt_id);
	if (!ns || place(mi_by_id(&ns->t, n->mnt_id), rel, !!(n->flags & IT_NM_CUT), cfile)) {
		cfile[0] = '\0';
		r->st.container_gone++;
		return;
	}
	if (!strcmp(cfile, file))
		cfile[0] = '\0';
	else
		r->st.container++;
}

static void deleted(char *path)
{
	size_t n = strlen(path);

	snprintf(path + n, FR_PATH_MAX - n, " (deleted)");
}

int fnres_name(struct fnres *r, const void *rec, size_t len, struct fn_key *k, char *file,
	       char *cfile)
{
	const struct it_name_rec *n = rec;
	char rel[FR_PATH_MAX];

	if (fnres_rel(rec, len, rel, sizeof(rel))) {
		r->st.bad++;
		return -EINVAL;
	}
	k->ino = n->ino;
	k->dev = n->dev;
	k->bdev = !!(n->flags & IT_NM_BDEV);
	cfile[0] = '\0';
	if ((n->flags & IT_NM_PSEUDO) && !(n->flags & IT_NM_CUT)) {
		memcpy(file, rel, strlen(rel) + 1); /* no mount shows it */
	} else {
		host_path(r, n, rel, file);
		container_path(r, n, rel, file, cfile);
	}
	if (!file[0]) /* nothing to show: never written empty */
		snprintf(file, FR_PATH_MAX, "[unnamed]");
	if (n->flags & IT_NM_DELETED) {
		deleted(file);
		if (cfile[0])
			deleted(cfile);
	}
	r->st.names++;
	return 0;
}
