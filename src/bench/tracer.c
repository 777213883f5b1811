// SPDX-License-Identifier: GPL-2.0
/*
 * tracer: the tracers a bench compares: none, iotracer (with or without JSON
 * output, a layer set, another build), the bpftrace peers (scripts in
 * src/bench/scripts) and libbpf-tools' biolatency; their names, where their
 * scripts are, their command lines.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/internal.h"
#include "lib/parse.h"

static const struct {
	const char *name;
	enum tkind k;
} kinds[] = {
	{ "none", T_NONE },
	{ "iotracer", T_IOT },
	{ "iotracer-nojson", T_IOT_NOJSON },
	{ "iotracer-scrape", T_IOT_SCRAPE },
	{ "iotracer-alwayson", T_IOT_ALWAYSON },
	{ "iotracer-empty", T_IOT_EMPTY },
	{ "floor-raw", T_FLOOR_RAW },
	{ "floor-percall", T_FLOOR_PERCALL },
	{ "bpftrace-hist", T_BT_HIST },
	{ "bpftrace-print", T_BT_PRINT },
	{ "libbpf-biolatency", T_BIOLAT },
};

const char *tracer_kind_name(enum tkind k)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].k == k)
			return kinds[i].name;
	return "?";
}

int tracer_is_iot(const struct tracer *t)
{
	return t->k == T_IOT || t->k == T_IOT_NOJSON || t->k == T_IOT_SCRAPE ||
	       t->k == T_IOT_ALWAYSON || t->k == T_IOT_EMPTY;
}

/* Measured like the always-on profile: --metrics, scraped while the workload runs. */
int tracer_alwayson(const struct tracer *t)
{
	return t->k == T_IOT_ALWAYSON || t->k == T_IOT_EMPTY;
}

/*
 * iotracer-empty: the loader empties the programs of the syscall hooks
 * (IOTRACER_EMPTY_PROGS, docs/bench.md "Tax"): the same hooks and attach
 * methods with nothing run, the floor a syscall pays for being hooked at all.
 */
const char *tracer_env(const struct tracer *tr)
{
	return tr->k == T_IOT_EMPTY ? "IOTRACER_EMPTY_PROGS=1" : NULL;
}

int tracer_find(const struct bench *b, const char *name)
{
	for (int i = 0; i < b->ntr; i++)
		if (!strcmp(b->tr[i].name, name))
			return i;
	return -1;
}

/* iotracer@PATH[:LAYERS]: another build, side by side with this one. */
static int tracer_exe(struct tracer *t, const char *at, const char *colon)
{
	size_t len = colon ? (size_t)(colon - at - 1) : strlen(at + 1);

	if (!tracer_is_iot(t) || !len || len >= sizeof(t->exe))
		return -EINVAL;
	memcpy(t->exe, at + 1, len);
	return access(t->exe, X_OK) ? -EINVAL : 0;
}

/* Layers: iotracer:block or iotracer:syscall+block, into an -l value. */
static int tracer_layers(struct tracer *t, const char *layers)
{
	uint32_t mask;

	if (!tracer_is_iot(t))
		return -EINVAL;
	snprintf(t->layers, sizeof(t->layers), "%s", layers);
	for (char *p = t->layers; *p; p++)
		if (*p == '+')
			*p = ',';
	return parse_layers(t->layers, &mask) ? -EINVAL : 0;
}

int tracer_get(struct bench *b, const char *name)
{
	struct tracer t = { 0 };
	const char *at = strchr(name, '@');
	const char *colon = strchr(at ? at : name, ':');
	size_t base = at ? (size_t)(at - name) : colon ? (size_t)(colon - name) : strlen(name);
	size_t k, nk = sizeof(kinds) / sizeof(kinds[0]);
	int i = tracer_find(b, name);

	if (i >= 0)
		return i;
	if (strlen(name) >= sizeof(t.name))
		return -EINVAL;
	for (k = 0; k < nk; k++)
		if (strlen(kinds[k].name) == base && !strncmp(name, kinds[k].name, base))
			break;
	if (k == nk)
		return -EINVAL;
	t.k = kinds[k].k;
	if (at && tracer_exe(&t, at, colon))
		return -EINVAL;
	if (colon && tracer_layers(&t, colon + 1))
		return -EINVAL;
	snprintf(t.name, sizeof(t.name), "%s", name);
	t.avail = 1;
	if (b->ntr >= MAX_TRACERS)
		return -ENOSPC;
	b->tr[b->ntr] = t;
	return b->ntr++;
}

int tracer_find_in_path(const char *cmd, char *out, size_t n)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(cmd, '/'))
		return access(cmd, X_OK) ? -ENOENT : (snprintf(out, n, "%s", cmd), 0);
	if (!path || !*path)
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	while (*path) {
		const char *c = strchr(path, ':');
		size_t l = c ? (size_t)(c - path) : strlen(path);

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)l, path, cmd);
		if (l && !access(buf, X_OK)) {
			snprintf(out, n, "%s", buf);
			return 0;
		}
		path += l + (c ? 1 : 0);
	}
	return -ENOENT;
}

/*
 * The bpftrace scripts: --tools-dir, $IOTRACER_TOOLS, src/bench/scripts next
 * to the binary (a build tree), ../share/iotracer/scripts from it and
 * /usr/share/iotracer/scripts (installed).
 */
void tracer_find_tools(struct bench *b)
{
	char dir[PATH_MAX], cand[5][PATH_MAX + 64];
	const char *env = getenv("IOTRACER_TOOLS");
	char *slash;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s", b->exe);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (b->o.tools_dir)
		snprintf(cand[n++], sizeof(cand[0]), "%s", b->o.tools_dir);
	if (env && *env)
		snprintf(cand[n++], sizeof(cand[0]), "%s", env);
	snprintf(cand[n++], sizeof(cand[0]), "%s/src/bench/scripts", dir);
	snprintf(cand[n++], sizeof(cand[0]), "%s/../share/iotracer/scripts", dir);
	snprintf(cand[n++], sizeof(cand[0]), "/usr/share/iotracer/scripts");
	for (int i = 0; i < n; i++) {
		char f[PATH_MAX + 96];

		if (snprintf(f, sizeof(f), "%s/blk_lat_hist.bt", cand[i]) >= (int)sizeof(f))
			continue;
		if (!access(f, R_OK) &&
		    snprintf(b->tools, sizeof(b->tools), "%s", cand[i]) < (int)sizeof(b->tools))
			return;
	}
	b->tools[0] = '\0';
}

/* tools/tax_floor: build/tax_floor next to a build tree's ./iotracer. */
static void find_tax_floor(struct bench *b)
{
	char dir[PATH_MAX], *slash;

	snprintf(dir, sizeof(dir), "%s", b->exe);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (snprintf(b->tax_floor, sizeof(b->tax_floor), "%s/build/tax_floor", dir) >=
		    (int)sizeof(b->tax_floor) ||
	    access(b->tax_floor, X_OK))
		b->tax_floor[0] = '\0';
}

void tracer_check_tools(struct bench *b)
{
	int have_bt = !tracer_find_in_path("bpftrace", b->bpftrace, sizeof(b->bpftrace));

	find_tax_floor(b);
	if (tracer_find_in_path("biolatency", b->biolatency, sizeof(b->biolatency)))
		b->biolatency[0] = '\0';
	for (int i = 0; i < b->ntr; i++) {
		struct tracer *t = &b->tr[i];

		snprintf(t->cell, sizeof(t->cell), "not installed");
		if ((t->k == T_FLOOR_RAW || t->k == T_FLOOR_PERCALL) && !b->tax_floor[0]) {
			t->avail = 0;
			snprintf(t->why, sizeof(t->why),
				 "build/tax_floor not next to this binary (make tools)");
			snprintf(t->cell, sizeof(t->cell), "not built: make tools");
		}
		if (t->k == T_BIOLAT && !b->biolatency[0]) {
			t->avail = 0;
			snprintf(
				t->why, sizeof(t->why),
				"not installed (biolatency not in PATH: apt-get install libbpf-tools)");
		}
		if (t->k != T_BT_HIST && t->k != T_BT_PRINT)
			continue;
		if (!have_bt) {
			t->avail = 0;
			snprintf(t->why, sizeof(t->why), "not installed (bpftrace not in PATH)");
		} else if (!b->tools[0]) {
			t->avail = 0;
			snprintf(t->why, sizeof(t->why),
				 "scripts not found (src/bench/scripts/*.bt; --tools-dir)");
		}
	}
}

int tracer_argv(const struct bench *b, const struct tracer *tr, const struct target *t,
		const char *json, int port, int all_devs, char **argv, char store[][PATH_MAX + 64])
{
	int n = 0, s = 0;

	switch (tr->k) {
	case T_IOT:
	case T_IOT_NOJSON:
	case T_IOT_SCRAPE:
	case T_IOT_ALWAYSON:
	case T_IOT_EMPTY:
		/* this very binary, even if the file was replaced since we started */
		argv[n++] = tr->exe[0] ? (char *)tr->exe : "/proc/self/exe";
		argv[n++] = "-q";
		argv[n++] = "--no-live";
		if (tr->k != T_IOT_NOJSON) {
			argv[n++] = "-j";
			snprintf(store[s], sizeof(store[0]), "%s", json);
			argv[n++] = store[s++];
		}
		if (tracer_alwayson(tr)) {
			argv[n++] = "--profile";
			argv[n++] = "always-on";
		}
		if (tr->k == T_IOT_SCRAPE || tracer_alwayson(tr)) {
			argv[n++] = "--metrics";
			snprintf(store[s], sizeof(store[0]), "127.0.0.1:%d", port);
			argv[n++] = store[s++];
		}
		if (!all_devs) {
			argv[n++] = "-d";
			argv[n++] = (char *)t->dev;
		}
		if (tr->layers[0]) {
			argv[n++] = "-l";
			argv[n++] = (char *)tr->layers;
		}
		break;
	case T_BT_HIST:
	case T_BT_PRINT:
		argv[n++] = (char *)b->bpftrace;
		snprintf(store[s], sizeof(store[0]), "%s/%s", b->tools,
			 tr->k == T_BT_HIST ? "blk_lat_hist.bt" : "blk_io_print.bt");
		argv[n++] = store[s++];
		snprintf(store[s], sizeof(store[0]), "%u", IT_MKDEV(t->maj, t->min));
		argv[n++] = store[s++];
		break;
	case T_FLOOR_RAW:
	case T_FLOOR_PERCALL:
		argv[n++] = (char *)b->tax_floor;
		argv[n++] = tr->k == T_FLOOR_RAW ? "raw" : "percall";
		break;
	case T_BIOLAT:
		/* per disk, this one only: the peer's like-for-like block histogram */
		argv[n++] = (char *)b->biolatency;
		argv[n++] = "-D";
		argv[n++] = "-d";
		argv[n++] = (char *)t->name;
		break;
	default:
		return -EINVAL;
	}
	argv[n] = NULL;
	return n;
}
