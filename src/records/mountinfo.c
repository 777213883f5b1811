// SPDX-License-Identifier: GPL-2.0
/*
 * mountinfo: parse /proc/PID/mountinfo, find a mount by id or by the file
 * system it shows (see mountinfo.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotracer.h"
#include "lib/procfs.h"
#include "records/mountinfo.h"

/* Undo mountinfo's octal escapes (\040 space, \011 tab, \012 newline, \134 backslash) in place. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

/* The next space-separated field of *p (NUL-terminated in place); NULL at the line's end. */
static char *field(char **p)
{
	char *s = *p, *e;

	while (*s == ' ')
		s++;
	if (!*s)
		return NULL;
	e = strchr(s, ' ');
	if (e) {
		*e = '\0';
		*p = e + 1;
	} else {
		*p = s + strlen(s);
	}
	return s;
}

/* One line "ID PARENT MAJ:MIN ROOT POINT OPTS [TAGS...] - FSTYPE SOURCE SUPER". 0 or -EINVAL. */
static int parse_line(char *line, struct mi_mount *m)
{
	char *p = line, *id, *parent, *devno, *root, *point, *f;
	unsigned long maj, min;
	char *end;

	id = field(&p);
	parent = field(&p);
	devno = field(&p);
	root = field(&p);
	point = field(&p);
	if (!id || !parent || !devno || !root || !point || !field(&p))
		return -EINVAL;
	while ((f = field(&p)) && strcmp(f, "-"))
		; /* optional fields: shared:N, master:N ... */
	if (!f)
		return -EINVAL;
	m->fstype = field(&p);
	m->id = (uint32_t)strtoul(id, &end, 10);
	if (*end || !m->fstype)
		return -EINVAL;
	maj = strtoul(devno, &end, 10);
	if (*end != ':')
		return -EINVAL;
	min = strtoul(end + 1, &end, 10);
	if (*end)
		return -EINVAL;
	m->dev = IT_MKDEV(maj, min);
	unescape(root);
	unescape(point);
	m->root = root;
	m->point = point;
	return 0;
}

int mi_parse(struct mi_table *t, const char *text, size_t len, int *bad)
{
	struct mi_table n = { 0 };
	size_t lines = 1;
	char *p, *nl;

	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	n.text = malloc(len + 1);
	n.m = calloc(lines, sizeof(*n.m));
	if (!n.text || !n.m) {
		mi_free(&n);
		return -ENOMEM;
	}
	memcpy(n.text, text, len);
	n.text[len] = '\0';
	if (bad)
		*bad = 0;
	for (p = n.text; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (*p && parse_line(p, &n.m[n.nr]) == 0)
			n.nr++;
		else if (*p && bad)
			(*bad)++;
		if (!nl)
			break;
	}
	mi_free(t);
	*t = n;
	return 0;
}

int mi_read(struct mi_table *t, const char *path)
{
	size_t len;
	char *text = procfs_read_file(path, &len);
	int ret;

	if (!text)
		return -errno;
	ret = mi_parse(t, text, len, NULL);
	free(text);
	return ret;
}

void mi_free(struct mi_table *t)
{
	free(t->m);
	free(t->text);
	t->m = NULL;
	t->text = NULL;
	t->nr = 0;
}

const struct mi_mount *mi_by_id(const struct mi_table *t, uint32_t id)
{
	for (int i = 0; i < t->nr; i++)
		if (t->m[i].id == id)
			return &t->m[i];
	return NULL;
}

/* The length of root when it is path's prefix at a component boundary, else -1. */
static long root_len(const char *root, const char *path)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return path[0] == '/' ? 0 : -1;
	if (strncmp(root, path, n) || (path[n] && path[n] != '/'))
		return -1;
	return (long)n;
}

const struct mi_mount *mi_by_dev(const struct mi_table *t, uint32_t dev, const char *path)
{
	const struct mi_mount *best = NULL;
	long best_len = -1;

	for (int i = 0; i < t->nr; i++) {
		long n;

		if (t->m[i].dev != dev)
			continue;
		n = root_len(t->m[i].root, path);
		if (n > best_len) {
			best = &t->m[i];
			best_len = n;
		}
	}
	return best;
}

int mi_path(const struct mi_mount *m, const char *path, char *buf, size_t n)
{
	long skip = root_len(m->root, path);
	const char *rest;
	int w;

	if (skip < 0)
		return -ENOENT;
	rest = path + skip;
	/* "/" mounted at "/": "/a"; at "/mnt": "/mnt/a"; the root itself: the point */
	if (!strcmp(m->point, "/"))
		w = snprintf(buf, n, "%s", *rest ? rest : "/");
	else
		w = snprintf(buf, n, "%s%s", m->point, rest);
	return w < 0 || (size_t)w >= n ? -ENAMETOOLONG : 0;
}
