// SPDX-License-Identifier: GPL-2.0
/*
 * reload: compare the running options with a SIGHUP's, option by option.
 * Each option has a rule: how a change is applied, and how its value is
 * written in the log. Two values differ when they are written differently,
 * so the formatters show everything that matters (and compare lists in
 * order: a reordered list is a harmless in-place update).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotracer.h"
#include "core/cli.h"
#include "core/reload.h"
#include "lib/keyfile.h"
#include "lib/parse.h"

#define VAL_LEN 2048

typedef void (*rule_fmt)(const struct it_opts *o, char *b, size_t n);
/* Where the written value does not tell (a secret): do a and b differ? */
typedef int (*rule_differ)(const struct it_opts *a, const struct it_opts *b);

/* Append to b (of size n) like snprintf, never past the end. */
static void cat(char *b, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *b, size_t n, const char *fmt, ...)
{
	size_t len = strnlen(b, n);
	va_list ap;

	if (len + 1 >= n)
		return;
	va_start(ap, fmt);
	vsnprintf(b + len, n - len, fmt, ap);
	va_end(ap);
}

static void fmt_u32s(const uint32_t *v, int nr, char *b, size_t n)
{
	b[0] = '\0';
	for (int i = 0; i < nr; i++)
		cat(b, n, "%s%u", i ? "," : "", v[i]);
	if (!nr)
		cat(b, n, "-");
}

static void fmt_strs(char *const *v, int nr, char *b, size_t n)
{
	b[0] = '\0';
	for (int i = 0; i < nr; i++)
		cat(b, n, "%s%s", i ? "," : "", v[i]);
	if (!nr)
		cat(b, n, "-");
}

static void fmt_str(const char *s, char *b, size_t n)
{
	snprintf(b, n, "%s", s ? s : "-");
}

static void fmt_dur(uint64_t ns, char *b, size_t n)
{
	if (!ns)
		snprintf(b, n, "0");
	else
		parse_fmt_duration(ns, b, n);
}

static void f_pid(const struct it_opts *o, char *b, size_t n)
{
	fmt_u32s(o->pids, o->nr_pids, b, n);
}

static void f_comm(const struct it_opts *o, char *b, size_t n)
{
	fmt_str(o->has_comm ? o->comm : NULL, b, n);
}

static void f_cgroup(const struct it_opts *o, char *b, size_t n)
{
	fmt_strs(o->cgroups, o->nr_cgroups, b, n);
}

static void f_dev(const struct it_opts *o, char *b, size_t n)
{
	char one[32];

	b[0] = '\0';
	for (int i = 0; i < o->nr_devs; i++)
		cat(b, n, "%s%s", i ? "," : "", parse_fmt_devno(o->devs[i], one, sizeof(one)));
	if (!o->nr_devs)
		cat(b, n, "-");
}

static void f_file(const struct it_opts *o, char *b, size_t n)
{
	fmt_str(o->file_path, b, n);
}

static void f_min_lat(const struct it_opts *o, char *b, size_t n)
{
	fmt_dur(o->min_lat_ns, b, n);
}

/* Its values are in the other fields: each is reloaded by its own rule. */
static void f_profile(const struct it_opts *o, char *b, size_t n)
{
	snprintf(b, n, "%s", o->profile ? o->profile : "full");
}

static void f_sample(const struct it_opts *o, char *b, size_t n)
{
	snprintf(b, n, "%llu", (unsigned long long)o->sample);
}

static void f_layers(const struct it_opts *o, char *b, size_t n)
{
	b[0] = '\0';
	for (int l = 0; l < IT_L_MAX; l++)
		if (o->layers & (1u << l))
			cat(b, n, "%s%s", b[0] ? "," : "", parse_layer_name(l));
	if (!o->layers)
		cat(b, n, "all");
}

static void f_ring(const struct it_opts *o, char *b, size_t n)
{
	snprintf(b, n, "%lluK", (unsigned long long)(o->ring_size >> 10));
}

static void f_sched_switch(const struct it_opts *o, char *b, size_t n)
{
	snprintf(b, n, "%s", o->sched_switch ? "yes" : "no");
}

static void f_mode(const struct it_opts *o, char *b, size_t n)
{
	static const char *const names[] = { "standalone", "guest", "host" };

	snprintf(b, n, "%s", o->mode <= IT_MODE_HOST ? names[o->mode] : "?");
}

static void f_link(const struct it_opts *o, char *b, size_t n)
{
	fmt_strs(o->links, o->nr_links, b, n);
}

static void f_listen(const struct it_opts *o, char *b, size_t n)
{
	fmt_strs(o->listens, o->nr_listens, b, n);
}

static void f_qemu_pid(const struct it_opts *o, char *b, size_t n)
{
	fmt_u32s(o->qemu_pids, o->nr_qemu_pids, b, n);
}

static void f_name(const struct it_opts *o, char *b, size_t n)
{
	fmt_str(o->name, b, n);
}

static void f_duration(const struct it_opts *o, char *b, size_t n)
{
	fmt_dur(o->duration_ns, b, n);
}

static void f_interval(const struct it_opts *o, char *b, size_t n)
{
	fmt_dur(o->interval_ns, b, n);
}

static void f_json(const struct it_opts *o, char *b, size_t n)
{
	fmt_str(o->json_path, b, n);
}

static void f_metrics(const struct it_opts *o, char *b, size_t n)
{
	fmt_str(o->metrics_addr, b, n);
}

/* The key itself never goes to the log. */
static void f_link_key(const struct it_opts *o, char *b, size_t n)
{
	snprintf(b, n, "%s", o->link_key && o->link_key->len ? "set" : "-");
}

static int d_link_key(const struct it_opts *a, const struct it_opts *b)
{
	size_t la = a->link_key ? a->link_key->len : 0, lb = b->link_key ? b->link_key->len : 0;

	return la != lb || (la && memcmp(a->link_key->bytes, b->link_key->bytes, la));
}

static void f_record(const struct it_opts *o, char *b, size_t n)
{
	fmt_str(o->record_dir, b, n);
}

static void f_record_size(const struct it_opts *o, char *b, size_t n)
{
	snprintf(b, n, "%lluK", (unsigned long long)(o->record_size >> 10));
}

static void f_record_age(const struct it_opts *o, char *b, size_t n)
{
	fmt_dur(o->record_age_ns, b, n);
}

static void f_record_max(const struct it_opts *o, char *b, size_t n)
{
	snprintf(b, n, "%lluK", (unsigned long long)(o->record_max >> 10));
}

static void f_record_level(const struct it_opts *o, char *b, size_t n)
{
	snprintf(b, n, "%d", o->record_level);
}

static void f_no_live(const struct it_opts *o, char *b, size_t n)
{
	snprintf(b, n, "%s", o->live ? "no" : "yes");
}

static void f_metrics_cg_depth(const struct it_opts *o, char *b, size_t n)
{
	snprintf(b, n, "%d", o->metrics_cg_depth);
}

static void f_quiet(const struct it_opts *o, char *b, size_t n)
{
	snprintf(b, n, "%s", o->quiet ? "yes" : "no");
}

static void f_verbose(const struct it_opts *o, char *b, size_t n)
{
	snprintf(b, n, "%d", o->verbose);
}

/*
 * One rule per option that has a config key (test_config checks that every
 * one has): a new option needs its line here.
 */
#define RULE(n, k, f)                          \
	{                                      \
		.name = n, .kind = k, .fmt = f \
	}

static const struct reload_rule {
	const char *name;
	enum reload_kind kind;
	rule_fmt fmt;
	rule_differ differ; /* NULL: the written values differ */
} rules[] = {
	RULE("pid", RELOAD_FILTER, f_pid),
	RULE("comm", RELOAD_FILTER, f_comm),
	RULE("cgroup", RELOAD_FILTER, f_cgroup),
	RULE("dev", RELOAD_FILTER, f_dev),
	RULE("file", RELOAD_FILTER, f_file),
	RULE("min-latency", RELOAD_FILTER, f_min_lat),
	RULE("sample", RELOAD_FILTER, f_sample),
	RULE("profile", RELOAD_FILTER, f_profile),
	RULE("layers", RELOAD_REATTACH, f_layers),
	RULE("ring-size", RELOAD_REATTACH, f_ring),
	RULE("sched-switch", RELOAD_REATTACH, f_sched_switch),
	RULE("mode", RELOAD_REATTACH, f_mode),
	RULE("link", RELOAD_REATTACH, f_link),
	RULE("listen", RELOAD_REATTACH, f_listen),
	RULE("qemu-pid", RELOAD_REATTACH, f_qemu_pid),
	RULE("name", RELOAD_REATTACH, f_name),
	{ .name = "link-key", .kind = RELOAD_REATTACH, .fmt = f_link_key, .differ = d_link_key },
	RULE("duration", RELOAD_TIMING, f_duration),
	RULE("interval", RELOAD_TIMING, f_interval),
	RULE("json", RELOAD_START, f_json),
	RULE("metrics", RELOAD_START, f_metrics), /* the server is bound at start */
	RULE("metrics-cgroup-depth", RELOAD_START, f_metrics_cg_depth),
	/* the recorder is opened at start */
	RULE("record", RELOAD_START, f_record),
	RULE("record-size", RELOAD_START, f_record_size),
	RULE("record-age", RELOAD_START, f_record_age),
	RULE("record-max", RELOAD_START, f_record_max),
	RULE("record-level", RELOAD_START, f_record_level),
	RULE("no-live", RELOAD_START, f_no_live),
	RULE("quiet", RELOAD_START, f_quiet),
	RULE("verbose", RELOAD_START, f_verbose),
};

#define NR_RULES ((int)(sizeof(rules) / sizeof(rules[0])))

const char *reload_rule(int i, enum reload_kind *kind)
{
	if (i < 0 || i >= NR_RULES)
		return NULL;
	*kind = rules[i].kind;
	return rules[i].name;
}

void reload_plan(const struct it_opts *old, const struct it_opts *n, struct reload_plan *p)
{
	char *a = malloc(VAL_LEN), *b = malloc(VAL_LEN);

	memset(p, 0, sizeof(*p));
	for (int i = 0; a && b && i < NR_RULES; i++) {
		const struct reload_rule *r = &rules[i];
		int k = r->kind;

		r->fmt(old, a, VAL_LEN);
		r->fmt(n, b, VAL_LEN);
		if (r->differ ? !r->differ(old, n) : !strcmp(a, b))
			continue;
		cat(p->what[k], sizeof(p->what[k]), "%s%s %.200s -> %.200s", p->nr[k] ? "; " : "",
		    r->name, a, b);
		cat(p->names[k], sizeof(p->names[k]), "%s%s", p->nr[k] ? ", " : "", r->name);
		p->nr[k]++;
	}
	free(a);
	free(b);
}

static int keep_str(char **dst, const char *src)
{
	char *dup = src ? strdup(src) : NULL;

	if (src && !dup)
		return -ENOMEM;
	free(*dst);
	*dst = dup;
	return 0;
}

int reload_keep_start_only(const struct it_opts *old, struct it_opts *n)
{
	n->live = old->live;
	n->quiet = old->quiet;
	n->verbose = old->verbose;
	n->record_size = old->record_size;
	n->record_age_ns = old->record_age_ns;
	n->record_max = old->record_max;
	n->record_level = old->record_level;
	return keep_str(&n->json_path, old->json_path)		     ?:
		       keep_str(&n->metrics_addr, old->metrics_addr) ?:
		       keep_str(&n->record_dir, old->record_dir);
}
