// SPDX-License-Identifier: GPL-2.0
/*
 * container_names: the names the node holds for pods and containers (kubelet's
 * log directories, docker's and podman's state), read again when a source's
 * mtime changes. See container.h and docs/cgroups.md, "Names from the node".
 */
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "records/container.h"
#include "lib/clock.h"
#include "lib/json.h"

#define NM_REFRESH_NS 1000000000ull /* sources looked at no more than once a second, */
#define NM_MISS_NS 100000000ull /* or ten times a second while an id or UID finds no name */
#define NM_AGAIN_NS 10000000ull /* a miss looks again at once, if the last look is 10 ms old */
#define NM_FILE_MAX (16u << 20) /* a state file larger than this is skipped (counted) */

/* key -> (a, b): pods: UID -> (namespace, pod); containers: id -> (name, "") */
struct nm_ent {
	char *key, *a, *b;
};

struct nm_map {
	struct nm_ent *e;
	size_t n, cap;
};

enum nm_src { NM_PODS, NM_KLOGS, NM_DOCKER, NM_PODMAN, NM_NR };

struct ct_names {
	char root[PATH_MAX];
	struct nm_map map[NM_NR];
	/* names from elsewhere (ct_names_add: a recording's): before the sources' */
	struct nm_map added_pods, added_containers;
	uint64_t sig[NM_NR]; /* the sources' mtimes at their last scan (0: absent) */
	uint64_t next_ns, last_ns; /* the next refresh due, the last one done */
	struct ct_names_stats st;
	/* ct_describe's memo: the last path and what it gave */
	char last_path[512];
	uint64_t last_gen, gen;
	struct ct_full last;
	int last_ret;
};

static void map_clear(struct nm_map *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->e[i].key);
		free(m->e[i].a);
		free(m->e[i].b);
	}
	m->n = 0;
}

static int map_add(struct nm_map *m, const char *key, size_t key_n, const char *a, size_t a_n,
		   const char *b, size_t b_n)
{
	struct nm_ent *e;

	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;

		e = realloc(m->e, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		m->e = e;
		m->cap = cap;
	}
	e = &m->e[m->n];
	e->key = strndup(key, key_n);
	e->a = strndup(a, a_n);
	e->b = strndup(b, b_n);
	if (!e->key || !e->a || !e->b) {
		free(e->key);
		free(e->a);
		free(e->b);
		return -ENOMEM;
	}
	m->n++;
	return 0;
}

static int ent_cmp(const void *x, const void *y)
{
	return strcmp(((const struct nm_ent *)x)->key, ((const struct nm_ent *)y)->key);
}

static const struct nm_ent *map_find(const struct nm_map *m, const char *key)
{
	struct nm_ent k = { .key = (char *)key };

	return m->n ? bsearch(&k, m->e, m->n, sizeof(k), ent_cmp) : NULL;
}

static const char *const src_path[NM_NR] = {
	[NM_PODS] = "/var/log/pods",
	[NM_KLOGS] = "/var/log/containers",
	[NM_DOCKER] = "/var/lib/docker/containers",
	[NM_PODMAN] = "/var/lib/containers/storage/*-containers/containers.json",
};

/* A source's signature: its mtimes (globbed paths summed), 0 when absent. */
static uint64_t signature(const struct ct_names *n, enum nm_src s)
{
	char pat[PATH_MAX];
	uint64_t sig = 0;
	glob_t g;

	snprintf(pat, sizeof(pat), "%s%s", n->root, src_path[s]);
	if (glob(pat, GLOB_NOSORT, NULL, &g))
		return 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct stat st;

		if (!stat(g.gl_pathv[i], &st))
			sig += (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
			       (uint64_t)st.st_mtim.tv_nsec + 1;
	}
	globfree(&g);
	return sig;
}

/* A name as the runtimes allow them: printable, no '/', not empty, < CT_NAME_MAX. */
static int good_name(const char *s, size_t len)
{
	if (!len || len >= CT_NAME_MAX)
		return 0;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f || s[i] == '/')
			return 0;
	return 1;
}

static int good_id(const char *s, size_t len)
{
	if (len != CT_ID_LEN)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!strchr("0123456789abcdef", s[i]) || !s[i])
			return 0;
	return 1;
}

/* <dir>/<namespace>_<pod>_<uid> (none of the three holds '_'). */
static void scan_pod(struct ct_names *n, const char *d)
{
	const char *u1 = strchr(d, '_'), *u2 = u1 ? strchr(u1 + 1, '_') : NULL;
	size_t ul = u2 ? strlen(u2 + 1) : 0;

	if (!u2 || strchr(u2 + 1, '_') || !good_name(d, u1 - d) ||
	    !good_name(u1 + 1, u2 - u1 - 1) || !ul || ul > CT_UID_MAX || !good_name(u2 + 1, ul)) {
		n->st.bad++;
		return;
	}
	map_add(&n->map[NM_PODS], u2 + 1, ul, d, u1 - d, u1 + 1, u2 - u1 - 1);
}

/* <dir>/<pod>_<namespace>_<container>-<id>.log */
static void scan_klog(struct ct_names *n, const char *d)
{
	size_t len = strlen(d);
	const char *id, *u1, *u2;

	if (len < 4 || strcmp(d + len - 4, ".log"))
		return; /* not the kubelet's */
	len -= 4;
	id = d + len - CT_ID_LEN;
	u1 = strchr(d, '_');
	u2 = u1 ? strchr(u1 + 1, '_') : NULL;
	if (len < CT_ID_LEN + 2 || id[-1] != '-' || !good_id(id, CT_ID_LEN) || !u2 ||
	    u2 + 1 >= id - 1 || !good_name(u2 + 1, id - 1 - (u2 + 1))) {
		n->st.bad++;
		return;
	}
	map_add(&n->map[NM_KLOGS], id, CT_ID_LEN, u2 + 1, id - 1 - (u2 + 1), "", 0);
}

/* A whole file into a NUL-terminated buffer; NULL: gone, unreadable or too big. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	struct stat st;

	if (!f)
		return NULL;
	if (!fstat(fileno(f), &st) && st.st_size >= 0 && (uint64_t)st.st_size < NM_FILE_MAX &&
	    (buf = malloc((size_t)st.st_size + 1))) {
		*len = fread(buf, 1, (size_t)st.st_size, f);
		buf[*len] = '\0';
	}
	fclose(f);
	return buf;
}

static struct json *read_json(const char *path)
{
	size_t len = 0;
	char *buf = slurp(path, &len);
	struct json *j = buf ? json_parse(buf, len) : NULL;

	free(buf);
	return j;
}

/* <dir>/<id>/config.v2.json: "Name": "/<name>" */
static void scan_docker(struct ct_names *n, const char *dir, const char *d)
{
	char path[PATH_MAX];
	struct json *j;
	const struct json *name;

	if (!good_id(d, strlen(d)))
		return;
	if (snprintf(path, sizeof(path), "%s/%s/config.v2.json", dir, d) >= (int)sizeof(path))
		return;
	j = read_json(path);
	name = json_get(j, "Name");
	if (name && name->t == JSON_STR && name->str[0] == '/' &&
	    good_name(name->str + 1, strlen(name->str + 1)))
		map_add(&n->map[NM_DOCKER], d, CT_ID_LEN, name->str + 1, strlen(name->str + 1), "",
			0);
	else
		n->st.bad++; /* vanished since readdir, or not docker's format */
	json_free(j);
}

/* containers.json: [{"id": "<id>", "names": ["<name>", ...], ...}, ...] */
static void scan_podman_file(struct ct_names *n, const char *path)
{
	struct json *j = read_json(path);

	if (!j || j->t != JSON_ARR) {
		n->st.bad++;
		goto out;
	}
	for (const struct json *c = j->child; c; c = c->next) {
		const struct json *id = json_get(c, "id"), *names = json_get(c, "names");
		const struct json *nm = names && names->t == JSON_ARR ? names->child : NULL;

		if (!id || id->t != JSON_STR || !good_id(id->str, strlen(id->str)) || !nm ||
		    nm->t != JSON_STR || !good_name(nm->str, strlen(nm->str))) {
			n->st.bad++;
			continue;
		}
		map_add(&n->map[NM_PODMAN], id->str, CT_ID_LEN, nm->str, strlen(nm->str), "", 0);
	}
out:
	json_free(j);
}

static void scan(struct ct_names *n, enum nm_src s)
{
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *dp;

	map_clear(&n->map[s]);
	n->st.scans++;
	snprintf(dir, sizeof(dir), "%s%s", n->root, src_path[s]);
	if (s == NM_PODMAN) {
		glob_t g;

		if (!glob(dir, 0, NULL, &g)) {
			for (size_t i = 0; i < g.gl_pathc; i++)
				scan_podman_file(n, g.gl_pathv[i]);
			globfree(&g);
		}
		goto sort;
	}
	dp = opendir(dir);
	if (!dp)
		goto sort;
	while ((de = readdir(dp)))
		if (de->d_name[0] != '.') {
			if (s == NM_PODS)
				scan_pod(n, de->d_name);
			else if (s == NM_KLOGS)
				scan_klog(n, de->d_name);
			else
				scan_docker(n, dir, de->d_name);
		}
	closedir(dp);
sort:
	if (n->map[s].n)
		qsort(n->map[s].e, n->map[s].n, sizeof(struct nm_ent), ent_cmp);
}

/* Read again the sources whose signature changed (all: every one). */
static void refresh(struct ct_names *n, uint64_t now, int all)
{
	n->next_ns = now + NM_REFRESH_NS;
	n->last_ns = now;
	for (int s = 0; s < NM_NR; s++) {
		uint64_t sig = signature(n, s);

		if (sig == n->sig[s] && !all)
			continue;
		n->sig[s] = sig;
		scan(n, s);
		n->gen++;
	}
	n->st.pods = n->map[NM_PODS].n;
	n->st.containers = n->map[NM_KLOGS].n + n->map[NM_DOCKER].n + n->map[NM_PODMAN].n;
}

void ct_names_refresh(struct ct_names *n, int force)
{
	uint64_t now = it_mono_ns();

	if (!n || (!force && now < n->next_ns))
		return;
	refresh(n, now, force);
}

struct ct_names *ct_names_new(const char *root)
{
	struct ct_names *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	if (!root)
		root = getenv("IOTRACER_HOST_ROOT");
	snprintf(n->root, sizeof(n->root), "%s", root ? root : "");
	/* "/" and "" are the same root */
	if (!strcmp(n->root, "/"))
		n->root[0] = '\0';
	n->gen = 1;
	ct_names_refresh(n, 1);
	return n;
}

void ct_names_free(struct ct_names *n)
{
	if (!n)
		return;
	for (int s = 0; s < NM_NR; s++) {
		map_clear(&n->map[s]);
		free(n->map[s].e);
	}
	map_clear(&n->added_pods);
	free(n->added_pods.e);
	map_clear(&n->added_containers);
	free(n->added_containers.e);
	free(n);
}

int ct_names_add(struct ct_names *n, int pod, const char *id, const char *name, const char *ns)
{
	struct nm_map *m = pod ? &n->added_pods : &n->added_containers;
	/* as the sources keep them: pods UID -> (namespace, pod), containers id -> (name, "") */
	const char *a = pod ? (ns ? ns : "") : name, *b = pod ? name : "";
	struct nm_ent *old = (struct nm_ent *)map_find(m, id);

	if (old) {
		char *na = strdup(a), *nb = strdup(b);

		if (!na || !nb) {
			free(na);
			free(nb);
			return -ENOMEM;
		}
		free(old->a);
		free(old->b);
		old->a = na;
		old->b = nb;
	} else {
		if (map_add(m, id, strlen(id), a, strlen(a), b, strlen(b)))
			return -ENOMEM;
		qsort(m->e, m->n, sizeof(m->e[0]), ent_cmp);
	}
	n->gen++; /* ct_describe's memo is stale */
	return 0;
}

/* A new container is named in its runtime's files just before it starts: look sooner. */
static void missed(struct ct_names *n)
{
	if (n->next_ns > n->last_ns + NM_MISS_NS)
		n->next_ns = n->last_ns + NM_MISS_NS;
}

/*
 * A lookup missed: a container's first request may come before the next refresh
 * of the file its runtime wrote just before starting it. Look again now (sources
 * whose mtime changed are read again), at most every NM_AGAIN_NS. 1: looked.
 */
static int look_again(struct ct_names *n)
{
	uint64_t now = it_mono_ns();

	if (now < n->last_ns + NM_AGAIN_NS)
		return 0;
	refresh(n, now, 0);
	return 1;
}

int ct_names_pod(struct ct_names *n, const char *uid, const char **ns, const char **pod)
{
	const struct nm_ent *e;

	ct_names_refresh(n, 0);
	e = map_find(&n->added_pods, uid);
	if (!e)
		e = map_find(&n->map[NM_PODS], uid);
	if (!e && look_again(n))
		e = map_find(&n->map[NM_PODS], uid);
	if (!e) {
		n->st.miss_pod++;
		missed(n);
		return -ENOENT;
	}
	*ns = e->a;
	*pod = e->b;
	return 0;
}

static const char *container_find(struct ct_names *n, const char *id)
{
	static const enum nm_src order[] = { NM_KLOGS, NM_PODMAN, NM_DOCKER };

	if (map_find(&n->added_containers, id))
		return map_find(&n->added_containers, id)->a;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		const struct nm_ent *e = map_find(&n->map[order[i]], id);

		if (e)
			return e->a;
	}
	return NULL;
}

const char *ct_names_container(struct ct_names *n, const char *id)
{
	const char *name;

	ct_names_refresh(n, 0);
	name = container_find(n, id);
	if (!name && look_again(n))
		name = container_find(n, id);
	if (name)
		return name;
	n->st.miss_container++;
	missed(n);
	return NULL;
}

void ct_names_stats(const struct ct_names *n, struct ct_names_stats *st)
{
	if (n)
		*st = n->st;
	else
		memset(st, 0, sizeof(*st));
}

static int describe(struct ct_names *n, const char *path, struct ct_full *f)
{
	int ret = ct_decode(path, &f->ci);

	f->container = f->pod = f->pod_ns = NULL;
	if (!n)
		return ret;
	if (f->ci.id[0])
		f->container = ct_names_container(n, f->ci.id);
	if (f->ci.pod_uid[0] && ct_names_pod(n, f->ci.pod_uid, &f->pod_ns, &f->pod))
		f->pod = f->pod_ns = NULL;
	return ret;
}

int ct_describe(struct ct_names *n, const char *path, struct ct_full *f)
{
	if (!n)
		return describe(NULL, path, f);
	ct_names_refresh(n, 0);
	/* requests come in runs from one cgroup: the last answer, while no source changed */
	if (n->last_gen == n->gen && !strcmp(n->last_path, path ? path : "")) {
		*f = n->last;
		return n->last_ret;
	}
	n->last_ret = describe(n, path, f);
	if (n->last_ret)
		n->st.malformed++;
	n->last = *f;
	n->last_gen = n->gen;
	snprintf(n->last_path, sizeof(n->last_path), "%s", path ? path : "");
	return n->last_ret;
}
