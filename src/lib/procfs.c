// SPDX-License-Identifier: GPL-2.0
/* procfs: /proc readers and their parsers (lib/procfs.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/procfs.h"

/* ---------------------------------------------------------------- files */

char *procfs_read_file(const char *path, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;

	if (fd < 0 || !buf) {
		e = fd < 0 ? errno : ENOMEM;
		if (fd >= 0)
			close(fd);
		free(buf);
		errno = e;
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				goto bad;
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			goto bad;
		}
		if (!r)
			break;
		n += r;
	}
	close(fd);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
bad:
	e = errno;
	close(fd);
	free(buf);
	errno = e;
	return NULL;
}

char *procfs_read_tail(const char *path, size_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf;
	size_t want, n = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !(buf = malloc(max + 1))) {
		close(fd);
		return NULL;
	}
	want = (size_t)st.st_size < max ? (size_t)st.st_size : max;
	while (n < want) {
		ssize_t r = pread(fd, buf + n, want - n, st.st_size - want + n);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			break;
		}
		n += r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

int procfs_write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	if (fwrite(data, 1, len, f) != len) {
		int e = -errno;

		fclose(f);
		return e ? e : -EIO;
	}
	return fclose(f) ? -errno : 0;
}

/* The next line of text after p, NULL at the end. */
static const char *next_line(const char *p)
{
	p = strchr(p, '\n');
	return p ? p + 1 : NULL;
}

/*
 * fn(path of /proc/PID/SUB/NAME[/LEAF], ctx) for each entry NAME of
 * /proc/PID/SUB, until fn returns non-zero. -1 if the directory is gone.
 */
static int proc_each(pid_t pid, const char *sub, const char *leaf,
		     int (*fn)(const char *path, void *ctx), void *ctx)
{
	char path[64], p2[320];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, sub);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (snprintf(p2, sizeof(p2), "%s/%s%s%s", path, e->d_name, leaf ? "/" : "",
			     leaf ? leaf : "") >= (int)sizeof(p2))
			continue;
		if (fn(p2, ctx))
			break;
	}
	closedir(d);
	return 0;
}

/* ---------------------------------------------------------------- system CPU */

int procfs_parse_stat(const char *text, struct procfs_cpu *s)
{
	unsigned long long f[10] = { 0 };
	int found = 0, ncpu = 0;

	for (const char *p = text; p && *p; p = next_line(p)) {
		if (!strncmp(p, "cpu ", 4)) {
			int k = sscanf(p + 4, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
				       &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7],
				       &f[8], &f[9]);
			if (k < 5)
				return -EINVAL;
			found = 1;
		} else if (!strncmp(p, "cpu", 3) && isdigit((unsigned char)p[3])) {
			ncpu++;
		}
	}
	if (!found || !ncpu)
		return -EINVAL;
	s->idle_ticks = f[3] + f[4];
	s->ncpu = ncpu;
	return 0;
}

int procfs_cpu_read(struct procfs_cpu *s)
{
	char *t = procfs_read_file("/proc/stat", NULL);
	int ret;

	s->t_ns = it_mono_ns();
	if (!t)
		return -errno;
	ret = procfs_parse_stat(t, s);
	free(t);
	return ret;
}

double procfs_busy_ns(const struct procfs_cpu *a, const struct procfs_cpu *b, long user_hz)
{
	double elapsed = (double)b->t_ns - (double)a->t_ns;
	double idle = ((double)b->idle_ticks - (double)a->idle_ticks) * 1e9 / (double)user_hz;

	if (user_hz <= 0 || a->ncpu <= 0)
		return NAN;
	return elapsed * a->ncpu - idle;
}

double procfs_busy_pct(const struct procfs_cpu *a, const struct procfs_cpu *b, long user_hz)
{
	double elapsed = (double)b->t_ns - (double)a->t_ns;

	if (!(elapsed > 0) || a->ncpu <= 0)
		return NAN;
	return 100.0 * procfs_busy_ns(a, b, user_hz) / (elapsed * a->ncpu);
}

double procfs_loadavg1(void)
{
	char *t = procfs_read_file("/proc/loadavg", NULL);
	double v = NAN;

	if (t)
		v = strtod(t, NULL);
	free(t);
	return v;
}

/* ---------------------------------------------------------------- one process */

int procfs_parse_schedstat(const char *text, uint64_t *run_ns)
{
	unsigned long long v;
	char *end;

	if (!text || !isdigit((unsigned char)*text))
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || (*end && !isspace((unsigned char)*end)))
		return -EINVAL;
	*run_ns = v;
	return 0;
}

static int add_schedstat(const char *path, void *ctx)
{
	char *t = procfs_read_file(path, NULL);
	uint64_t v;

	if (t && !procfs_parse_schedstat(t, &v))
		*(uint64_t *)ctx += v;
	free(t);
	return 0;
}

uint64_t procfs_cpu_ns(pid_t pid)
{
	uint64_t sum = 0;

	proc_each(pid, "task", "schedstat", add_schedstat, &sum);
	return sum;
}

int procfs_parse_status_kb(const char *text, const char *key, uint64_t *kb)
{
	size_t kl = strlen(key);

	for (const char *p = text; p && *p; p = next_line(p)) {
		unsigned long long v;
		char unit[8] = "";

		if (strncmp(p, key, kl) || p[kl] != ':')
			continue;
		if (sscanf(p + kl + 1, "%llu %7s", &v, unit) < 1)
			return -EINVAL;
		if (unit[0] && strcmp(unit, "kB"))
			return -EINVAL;
		*kb = v;
		return 0;
	}
	return -ENOENT;
}

int64_t procfs_tgid(pid_t pid)
{
	char path[64], *t;
	const char *p;
	int64_t ret = -ESRCH;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	t = procfs_read_file(path, NULL);
	for (p = t; p && *p; p = next_line(p))
		if (!strncmp(p, "Tgid:", 5)) {
			ret = strtoll(p + 5, NULL, 10);
			break;
		}
	free(t);
	return ret;
}

void procfs_mem(pid_t pid, int64_t *rss_anon_kb, int64_t *hwm_kb)
{
	char path[64], *t;
	uint64_t v;

	*rss_anon_kb = *hwm_kb = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	t = procfs_read_file(path, NULL);
	if (!t)
		return;
	if (!procfs_parse_status_kb(t, "RssAnon", &v))
		*rss_anon_kb = v;
	if (!procfs_parse_status_kb(t, "VmHWM", &v))
		*hwm_kb = v;
	free(t);
}

int procfs_parse_fdinfo_prog(const char *text, struct procfs_prog *p)
{
	struct procfs_prog r = { 0 };
	int have_id = 0;

	for (const char *l = text; l && *l; l = next_line(l)) {
		unsigned long long v;

		if (sscanf(l, "prog_id: %llu", &v) == 1) {
			if (v > UINT32_MAX)
				return -EINVAL;
			r.id = v;
			have_id = 1;
		} else if (sscanf(l, "run_time_ns: %llu", &v) == 1) {
			r.run_time_ns = v;
		} else if (sscanf(l, "run_cnt: %llu", &v) == 1) {
			r.run_cnt = v;
		}
	}
	if (!have_id)
		return 0;
	/* a link fd also shows prog_id (of the program it holds): not a program fd */
	if (strstr(text, "link_type:") || strstr(text, "link_id:"))
		return 0;
	*p = r;
	return 1;
}

struct prog_list {
	struct procfs_prog *out;
	int n, max;
};

static int add_prog(const char *path, void *ctx)
{
	struct prog_list *l = ctx;
	char *t = procfs_read_file(path, NULL);
	struct procfs_prog p;
	int dup = 0;

	if (t && procfs_parse_fdinfo_prog(t, &p) == 1) {
		for (int i = 0; i < l->n; i++)
			dup |= l->out[i].id == p.id;
		if (!dup)
			l->out[l->n++] = p;
	}
	free(t);
	return l->n >= l->max;
}

int procfs_progs(pid_t pid, struct procfs_prog *out, int max)
{
	struct prog_list l = { out, 0, max };

	if (max > 0)
		proc_each(pid, "fdinfo", NULL, add_prog, &l);
	return l.n;
}

struct fd_counts {
	int *progs, *links, *perf;
};

static int count_fd(const char *path, void *ctx)
{
	struct fd_counts *c = ctx;
	char l[128];
	ssize_t n = readlink(path, l, sizeof(l) - 1);

	if (n <= 0)
		return 0;
	l[n] = '\0';
	if (!strcmp(l, "anon_inode:bpf-prog"))
		(*c->progs)++;
	else if (!strcmp(l, "anon_inode:bpf_link"))
		(*c->links)++;
	else if (!strcmp(l, "anon_inode:[perf_event]"))
		(*c->perf)++;
	return 0;
}

int procfs_bpf_fds(pid_t pid, int *progs, int *links, int *perf)
{
	struct fd_counts c = { progs, links, perf };

	*progs = *links = *perf = 0;
	return proc_each(pid, "fd", NULL, count_fd, &c);
}
