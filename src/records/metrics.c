// SPDX-License-Identifier: GPL-2.0
/*
 * metrics: Prometheus text exposition of the daemon's histograms, counters
 * and attach status. See metrics.h and docs/metrics.md.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "records/container.h"
#include "records/metrics.h"
#include "lib/abi.h"
#include "lib/parse.h"

#define HIST_NAME "iotracer_request_duration_seconds"
#define LOST_NAME "iotracer_lost_requests_total"

void metrics_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value with \, " and newline escaped (the format's only escapes). */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

void metrics_sample(FILE *f, const char *name, const struct metrics_label *labels, int nr,
		    const char *value)
{
	fputs(name, f);
	for (int i = 0; i < nr; i++) {
		fprintf(f, "%c%s=\"", i ? ',' : '{', labels[i].name);
		put_escaped(f, labels[i].value);
		fputc('"', f);
	}
	fprintf(f, "%s %s\n", nr ? "}" : "", value);
}

void metrics_sample_u64(FILE *f, const char *name, const struct metrics_label *labels, int nr,
			uint64_t value)
{
	char v[24];

	snprintf(v, sizeof(v), "%llu", (unsigned long long)value);
	metrics_sample(f, name, labels, nr, v);
}

void metrics_single(FILE *f, const char *name, const char *type, const char *help, uint64_t value)
{
	metrics_family(f, name, type, help);
	metrics_sample_u64(f, name, NULL, 0, value);
}

char *metrics_fmt_seconds(uint64_t ns, char *buf, size_t n)
{
	uint64_t frac = ns % 1000000000ull;
	int len = snprintf(buf, n, "%llu.%09llu", (unsigned long long)(ns / 1000000000ull),
			   (unsigned long long)frac);

	/* drop the trailing zeros of the fraction, and the point when nothing is left */
	while (len > 0 && (size_t)len < n && buf[len - 1] == '0')
		buf[--len] = '\0';
	if (len > 0 && (size_t)len < n && buf[len - 1] == '.')
		buf[--len] = '\0';
	return buf;
}

/* Requests counted by a histogram: the sum of its slots (what +Inf and _count say). */
static uint64_t hist_total(const struct it_hist *h)
{
	uint64_t t = 0;

	for (int k = 0; k < IT_HIST_SLOTS; k++)
		t += h->slots[k];
	return t;
}

/* The _bucket, _sum and _count lines of one histogram; l: its n labels, room for le. */
static void write_hist(FILE *f, const struct it_hist *h, struct metrics_label *l, int n)
{
	uint64_t cum = 0, total = hist_total(h);
	char le[32], sum[32];
	int k;

	l[n].name = "le";
	l[n].value = le;
	for (k = 0; k < METRICS_SLOT_FIRST; k++)
		cum += h->slots[k];
	for (; k <= METRICS_SLOT_LAST; k++) {
		cum += h->slots[k];
		metrics_fmt_seconds((1ull << (k + 1)) - 1, le, sizeof(le));
		metrics_sample_u64(f, HIST_NAME "_bucket", l, n + 1, cum);
	}
	l[n].value = "+Inf";
	metrics_sample_u64(f, HIST_NAME "_bucket", l, n + 1, total);
	metrics_sample(f, HIST_NAME "_sum", l, n, metrics_fmt_seconds(h->sum_ns, sum, sizeof(sum)));
	metrics_sample_u64(f, HIST_NAME "_count", l, n, total);
}

/*
 * The layer, dev and op labels of a histogram key into l[0..3), and a stack's
 * role (upper: a dm/md device's or a partition's own; member: a disk's
 * requests remapped from one) in l[3]: their number.
 */
static int key_labels(struct metrics_label *l, const struct out_khist *kh,
		      const struct metrics_in *in)
{
	const char *role = out_khist_role(&kh->key);

	l[0] = (struct metrics_label){ "layer", out_khist_layer(&kh->key) };
	l[1] = (struct metrics_label){ "device", in->dev_name(kh->key.dev, in->dev_ctx) };
	l[2] = (struct metrics_label){ "op", abi_op_name(kh->key.op) };
	if (!role)
		return 3;
	l[3] = (struct metrics_label){ "role", role };
	return 4;
}

static void write_hists(FILE *f, const struct metrics_in *in)
{
	metrics_family(f, HIST_NAME, "histogram",
		       "Latency of finished requests per layer, device, op and stage, from the "
		       "log2 histograms (every request, whatever --sample and --min-latency say).");
	for (int i = 0; i < in->nr_khists; i++) {
		const struct out_khist *kh = &in->khists[i];
		struct metrics_label l[6];
		int n = key_labels(l, kh, in);

		for (int s = 0; s < IT_ST_MAX; s++) {
			if (!hist_total(&kh->val.st[s]))
				continue;
			l[n].name = "stage";
			l[n].value = abi_stage_name(s);
			write_hist(f, &kh->val.st[s], l, n + 1);
		}
	}
}

/*
 * One request per syscall/io_uring request (stage total) and per block request
 * (stage q2c): no key has both.
 */
static void write_requests(FILE *f, const struct metrics_in *in)
{
	metrics_family(f, "iotracer_requests_total", "counter",
		       "Finished requests per layer, device and op.");
	for (int i = 0; i < in->nr_khists; i++) {
		uint64_t n = hist_total(&in->khists[i].val.st[IT_ST_TOTAL]) +
			     hist_total(&in->khists[i].val.st[IT_ST_Q2C]);
		struct metrics_label l[4];
		int nl = key_labels(l, &in->khists[i], in);

		if (n)
			metrics_sample_u64(f, "iotracer_requests_total", l, nl, n);
	}
}

/* ---- block bytes, sizes and cgroups (the kernel's aggregation, records/agg.h) ---- */

#define SIZE_NAME "iotracer_request_size_bytes"

/* Row i is the first of its (device, op): the rows of other cgroups are added to it. */
static int first_of_key(const struct metrics_in *in, int i, struct it_agg_val *sum)
{
	const struct agg_row *r = &in->agg[i];

	for (int j = 0; j < i; j++)
		if (in->agg[j].dev == r->dev && in->agg[j].op == r->op)
			return 0;
	*sum = r->v;
	for (int j = i + 1; j < in->nr_agg; j++)
		if (in->agg[j].dev == r->dev && in->agg[j].op == r->op)
			agg_add(sum, &in->agg[j].v);
	return 1;
}

/* The buckets of one size histogram; l: its 3 labels, room for le. */
static void write_sizes(FILE *f, const struct it_agg_val *v, struct metrics_label l[4])
{
	uint64_t cum = 0;
	char le[24];
	int k;

	l[3] = (struct metrics_label){ "le", le };
	for (k = 0; k < METRICS_SIZE_FIRST; k++)
		cum += v->size[k];
	for (; k <= METRICS_SIZE_LAST; k++) {
		cum += v->size[k];
		snprintf(le, sizeof(le), "%llu", 1ull << k);
		metrics_sample_u64(f, SIZE_NAME "_bucket", l, 4, cum);
	}
	l[3].value = "+Inf";
	metrics_sample_u64(f, SIZE_NAME "_bucket", l, 4, v->count);
	metrics_sample_u64(f, SIZE_NAME "_sum", l, 3, v->bytes);
	metrics_sample_u64(f, SIZE_NAME "_count", l, 3, v->count);
}

static void write_bytes(FILE *f, const struct metrics_in *in)
{
	struct it_agg_val sum;

	for (int hist = 0; hist < 2; hist++) {
		if (!hist)
			metrics_family(f, "iotracer_request_bytes_total", "counter",
				       "Bytes of finished block requests per device and op.");
		else
			metrics_family(f, SIZE_NAME, "histogram",
				       "Size of finished block requests per device and op (le: "
				       "bytes, powers of two).");
		for (int i = 0; i < in->nr_agg; i++) {
			struct metrics_label l[4] = {
				{ "layer", "block" },
				{ "device", in->dev_name(in->agg[i].dev, in->dev_ctx) },
				{ "op", abi_op_name(in->agg[i].op) },
			};

			if (!first_of_key(in, i, &sum))
				continue;
			if (hist)
				write_sizes(f, &sum, l);
			else
				metrics_sample_u64(f, "iotracer_request_bytes_total", l, 3,
						   sum.bytes);
		}
	}
}

/*
 * --metrics-containers: the container, pod and namespace of a row's cgroup label, as
 * the label was first named (agg.h), else from its path now (agg_ct_labels).
 */
static void ct_labels(struct ct_names *names, const struct agg_row *r, struct metrics_label *l,
		      char buf[3][CT_NAME_MAX])
{
	const char(*ct)[CT_NAME_MAX] = r->ct;

	if (!ct) {
		agg_ct_labels(names, r->cgroup, buf);
		ct = (const char(*)[CT_NAME_MAX])buf;
	}
	l[0] = (struct metrics_label){ "container", ct[0] };
	l[1] = (struct metrics_label){ "pod", ct[1] };
	l[2] = (struct metrics_label){ "namespace", ct[2] };
}

static void write_cgroups(FILE *f, const struct metrics_in *in)
{
	static const char *const names[2] = { "iotracer_cgroup_requests_total",
					      "iotracer_cgroup_bytes_total" };
	static const char *const helps[2] = {
		"Finished block requests per cgroup (--metrics-cgroup-depth levels below the root; "
		"'other' past 64 cgroups), device and op, by the task that queued them.",
		"Bytes of finished block requests per cgroup, device and op.",
	};

	for (int n = 0; n < 2; n++) {
		metrics_family(f, names[n], "counter", helps[n]);
		for (int i = 0; i < in->nr_agg; i++) {
			const struct agg_row *r = &in->agg[i];
			struct metrics_label l[6] = {
				{ "cgroup", r->cgroup ? r->cgroup : "other" },
				{ "device", in->dev_name(r->dev, in->dev_ctx) },
				{ "op", abi_op_name(r->op) },
			};
			char buf[3][CT_NAME_MAX];

			if (in->ct_labels)
				ct_labels(in->names, r, l + 3, buf);
			metrics_sample_u64(f, names[n], l, in->ct_labels ? 6 : 3,
					   n ? r->v.bytes : r->v.count);
		}
	}
}

/*
 * Every request the daemon could not follow, in one family (docs/metrics.md): the
 * kernel side's per layer (ringbuf, inflight, hist), the block requests whose
 * completion no attached side will see (missed), records lost in user space (user).
 * The block requests in flight are a gauge beside it: they come and go.
 */
static void write_drops(FILE *f, const struct metrics_in *in)
{
	static const char *const help =
		"Requests the daemon could not follow, per layer and reason: ringbuf (record "
		"buffer full), inflight (request table full), hist (histogram table full), "
		"missed (block: issued, completion not seen by an attached BPF side), user "
		"(records lost in user space: a failed copy, the correlator full).";
	struct metrics_label l[2] = { { "layer", NULL }, { "reason", NULL } };

	metrics_family(f, LOST_NAME, "counter", help);
	for (int layer = 0; layer < IT_L_MAX; layer++) {
		if (!(in->drop_layers & (1u << layer)))
			continue;
		l[0].value = abi_layer_name(layer);
		for (int k = 0; k < IT_DROP_KINDS; k++) {
			if (k == IT_DROP_MISSED)
				continue;
			l[1].value = abi_name(&abi_drops, k);
			metrics_sample_u64(f, LOST_NAME, l, 2,
					   in->drops[layer * IT_DROP_KINDS + k]);
		}
	}
	l[0].value = "block";
	l[1].value = "missed";
	metrics_sample_u64(f, LOST_NAME, l, 2, in->blk_missed);
	l[0].value = "daemon";
	l[1].value = "user";
	metrics_sample_u64(f, LOST_NAME, l, 2, in->lost);
	metrics_family(f, "iotracer_inflight_requests", "gauge",
		       "Requests issued and not seen completing yet, per layer: down again as they "
		       "complete; one whose completion was missed stays until 120 s after its "
		       "issue or a reload, then it counts as lost (reason missed).");
	l[0].value = "block";
	metrics_sample_u64(f, "iotracer_inflight_requests", l, 1, in->blk_inflight);
}

/*
 * Page-cache writeback followed to its dirtier (bpf/wb.bpf.h, docs/metrics.md): the
 * folios noted and looked up, and the bytes of block writes by whether their dirtier
 * is known, the unknown ones by reason (the records' block[].dirty sums).
 */
static void write_writeback(FILE *f, const uint64_t *cnt)
{
	static const struct {
		const char *event;
		int idx;
	} folios[] = { { "noted", IT_CNT_WB_NOTED },
		       { "found", IT_CNT_WB_FOUND },
		       { "unknown", IT_CNT_WB_UNKNOWN } };
	struct metrics_label l = { "event", NULL };

	metrics_family(f, "iotracer_writeback_folios_total", "counter",
		       "Page-cache folios: noted going clean to dirty in a traced task (noted), "
		       "and looked up in a block write: dirtier found (found) or not (unknown).");
	for (size_t i = 0; i < sizeof(folios) / sizeof(folios[0]); i++) {
		l.value = folios[i].event;
		metrics_sample_u64(f, "iotracer_writeback_folios_total", &l, 1, cnt[folios[i].idx]);
	}
	metrics_single(f, "iotracer_writeback_found_bytes_total", "counter",
		       "Bytes of page-cache block writes whose dirtier is known (block[].dirty "
		       "bytes + other_bytes).",
		       cnt[IT_CNT_WB_FOUND_BYTES]);
	metrics_family(f, "iotracer_writeback_unknown_bytes_total", "counter",
		       "Bytes of page-cache block writes whose dirtier is not known, by reason: "
		       "not_noted (dirtied before the trace, by a filtered task, or the note "
		       "evicted), redirtied, many (a third dirtier in one request), truncated "
		       "(past the pages one walk reads).");
	l.name = "reason";
	/* one counter per IT_WB_* bit, in bit order */
	for (unsigned int i = 0; out_wb_why_name(i) && IT_CNT_WB_UNK_BYTES + i < IT_NR_COUNTERS;
	     i++) {
		l.value = out_wb_why_name(i);
		metrics_sample_u64(f, "iotracer_writeback_unknown_bytes_total", &l, 1,
				   cnt[IT_CNT_WB_UNK_BYTES + i]);
	}
}

static void write_hooks(FILE *f, const struct metrics_in *in)
{
	if (!in->nr_hooks)
		return;
	metrics_family(f, "iotracer_hook_attached", "gauge",
		       "1 if the hook is attached, 0 if not (the attach report says why).");
	for (int i = 0; i < in->nr_hooks; i++) {
		const struct metrics_hook *h = &in->hooks[i];
		struct metrics_label l[3] = { { "layer", h->layer },
					      { "hook", h->hook },
					      { "method", h->method } };

		metrics_sample(f, "iotracer_hook_attached", l, 3, h->ok ? "1" : "0");
	}
	metrics_family(f, "iotracer_hook_state", "gauge",
		       "1 for the hook's state, 0 for the others: attached, off (by an option), "
		       "absent (nothing to hook on this machine), failed (there, wanted, and could "
		       "not attach: alert on this one).");
	for (int i = 0; i < in->nr_hooks; i++) {
		const struct metrics_hook *h = &in->hooks[i];

		for (unsigned int s = 0; s < OUT_HS_MAX; s++) {
			struct metrics_label l[4] = { { "layer", h->layer },
						      { "hook", h->hook },
						      { "method", h->method },
						      { "state", out_hook_st_name(s) } };

			metrics_sample(f, "iotracer_hook_state", l, 4, h->state == s ? "1" : "0");
		}
	}
}

static void write_proc(FILE *f, const struct metrics_proc *p)
{
	char v[48];

	metrics_family(f, "process_cpu_seconds_total", "counter",
		       "Total user and system CPU time spent in seconds.");
	snprintf(v, sizeof(v), "%.3f",
		 p->ticks_per_sec ? (double)p->cpu_ticks / (double)p->ticks_per_sec : 0.0);
	metrics_sample(f, "process_cpu_seconds_total", NULL, 0, v);
	metrics_single(f, "process_resident_memory_bytes", "gauge",
		       "Resident memory size in bytes.", p->rss_bytes);
	metrics_family(f, "process_start_time_seconds", "gauge",
		       "Start time of the process since unix epoch in seconds.");
	snprintf(v, sizeof(v), "%llu.%03llu", (unsigned long long)(p->start_time_ms / 1000),
		 (unsigned long long)(p->start_time_ms % 1000));
	metrics_sample(f, "process_start_time_seconds", NULL, 0, v);
	metrics_single(f, "process_open_fds", "gauge", "Number of open file descriptors.",
		       p->open_fds);
}

void metrics_write(FILE *f, const struct metrics_in *in)
{
	write_hists(f, in);
	write_requests(f, in);
	if (in->nr_agg)
		write_bytes(f, in);
	if (in->nr_agg && in->agg_cgroups)
		write_cgroups(f, in);
	if (in->drops)
		write_drops(f, in);
	if (in->counters)
		write_writeback(f, in->counters);
	write_hooks(f, in);
	if (in->proc)
		write_proc(f, in->proc);
}

/* ---- /proc ---- */

/* The whole of a small file, NUL-terminated, into buf; 0 or -errno. */
static int read_small(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	size_t len;

	if (!f)
		return -errno;
	len = fread(buf, 1, n - 1, f);
	buf[len] = '\0';
	fclose(f);
	return len ? 0 : -EIO;
}

/* utime + stime, start time (ticks since boot) and rss (pages) from <pid>/stat. */
static int proc_stat(const char *path, uint64_t *cpu, uint64_t *start, uint64_t *rss)
{
	unsigned long long ut, st, t0;
	long long pages;
	char buf[1024];
	const char *p;
	int ret = read_small(path, buf, sizeof(buf));

	if (ret)
		return ret;
	p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
	if (!p || sscanf(p + 1,
			 " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d"
			 " %*d %*d %llu %*u %lld",
			 &ut, &st, &t0, &pages) != 4)
		return -EINVAL;
	*cpu = ut + st;
	*start = t0;
	*rss = pages > 0 ? (uint64_t)pages : 0;
	return 0;
}

/* Boot time (seconds since the epoch) from the btime line of <root>/stat. */
static int proc_btime(const char *path, uint64_t *btime)
{
	unsigned long long v;
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	int ret = -EINVAL;

	if (!f)
		return -errno;
	while (ret && getline(&line, &cap, f) > 0)
		if (sscanf(line, "btime %llu", &v) == 1) {
			*btime = v;
			ret = 0;
		}
	free(line);
	fclose(f);
	return ret;
}

/* Entries of <pid>/fd but the one opendir() itself holds while reading it. */
static int count_fds(const char *path, uint64_t *n)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char self[16];

	if (!d)
		return -errno;
	snprintf(self, sizeof(self), "%d", dirfd(d));
	*n = 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && strcmp(e->d_name, self))
			(*n)++;
	closedir(d);
	return 0;
}

int metrics_proc_read(const char *proc_root, const char *pid, struct metrics_proc *p)
{
	uint64_t start = 0, btime = 0, pages = 0;
	long tck = sysconf(_SC_CLK_TCK), psz = sysconf(_SC_PAGESIZE);
	char path[512];
	int ret;

	memset(p, 0, sizeof(*p));
	p->ticks_per_sec = tck > 0 ? (uint64_t)tck : 100;
	snprintf(path, sizeof(path), "%s/%s/stat", proc_root, pid);
	ret = proc_stat(path, &p->cpu_ticks, &start, &pages);
	if (ret)
		return ret;
	p->rss_bytes = pages * (uint64_t)(psz > 0 ? psz : 4096);
	snprintf(path, sizeof(path), "%s/stat", proc_root);
	ret = proc_btime(path, &btime);
	if (ret)
		return ret;
	p->start_time_ms = btime * 1000 + start * 1000 / p->ticks_per_sec;
	snprintf(path, sizeof(path), "%s/%s/fd", proc_root, pid);
	return count_fds(path, &p->open_fds);
}
