// SPDX-License-Identifier: GPL-2.0
/*
 * parse_out: what the children of a run leave behind: fio's
 * --output-format=json and the final summary of an iotracer run (its -j JSON
 * lines, or the text summary line without -j). Over lib/json's DOM.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/internal.h"
#include "lib/json.h"

/*
 * A JSON number as a count. A cast of a double outside the integer's range is
 * undefined, and the text is another program's: saturate (NaN: 0).
 */
static uint64_t num_u64(double d)
{
	if (!(d > 0))
		return 0;
	return d >= 0x1p64 ? UINT64_MAX : (uint64_t)d;
}

/* a + b, held at INT64_MIN / INT64_MAX instead of overflowing (a tracer's counts are untrusted text) */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static int64_t num_i64(double d)
{
	if (isnan(d))
		return 0;
	if (d >= 0x1p63)
		return INT64_MAX;
	return d <= -0x1p63 ? INT64_MIN : (int64_t)d;
}

int bench_parse_fio(const char *text, size_t n, struct fio_res *r)
{
	const char *start = memchr(text, '{', n);
	const struct json *jobs;
	double lat_sum = 0, best_ios = -1;
	struct json *root;

	memset(r, 0, sizeof(*r));
	r->lat_mean_ns = r->lat_p99_ns = NAN;
	if (!start)
		return -EINVAL;
	/* fio may print text after the JSON too: cut at the last '}' */
	const char *end = text + n;
	while (end > start && end[-1] != '}')
		end--;
	root = json_parse(start, end - start);
	if (!root)
		return -EINVAL;
	jobs = json_get(root, "jobs");
	if (!jobs || jobs->t != JSON_ARR || !jobs->child) {
		json_free(root);
		return -EINVAL;
	}
	for (const struct json *j = jobs->child; j; j = j->next) {
		static const char *const dirs[] = { "read", "write", "trim" };

		r->jobs++;
		r->errors += num_u64(json_num(j, "error", 0));
		for (int d = 0; d < 3; d++) {
			const struct json *dj = json_get(j, dirs[d]);
			double ios = json_num(dj, "total_ios", 0);
			double mean = json_num(dj, "clat_ns.mean", NAN);
			const struct json *pct = json_path(dj, "clat_ns.percentile");

			if (!dj)
				continue;
			r->iops += json_num(dj, "iops", 0);
			r->ios += num_u64(ios);
			if (ios > 0 && !isnan(mean))
				lat_sum += mean * ios;
			if (ios > best_ios && ios > 0) {
				const struct json *p99 = json_get(pct, "99.000000");

				best_ios = ios;
				r->lat_p99_ns = p99 && p99->t == JSON_NUM ? p99->num : NAN;
			}
		}
	}
	if (r->ios)
		r->lat_mean_ns = lat_sum / r->ios;
	json_free(root);
	return 0;
}

static int64_t members_sum(const struct json *o)
{
	double s = 0;

	if (!o || o->t != JSON_OBJ)
		return -1;
	for (const struct json *m = o->child; m; m = m->next)
		if (m->t == JSON_NUM)
			s += m->num;
	return num_i64(s);
}

/* "block.ringbuf=3 syscall.inflight=1": the non-zero per-layer drop counters. */
static void drops_detail(const struct json *d, char *buf, size_t n)
{
	size_t o = 0;

	buf[0] = '\0';
	for (const struct json *l = d && d->t == JSON_OBJ ? d->child : NULL; l; l = l->next) {
		if (l->t != JSON_OBJ)
			continue;
		for (const struct json *k = l->child; k; k = k->next) {
			int w;

			if (k->t != JSON_NUM || k->num <= 0)
				continue;
			w = snprintf(buf + o, n - o, "%s%s.%s=%.0f", o ? " " : "", l->key, k->key,
				     k->num);
			if (w < 0 || (size_t)w >= n - o)
				return;
			o += w;
		}
	}
}

/* Histogram counts of a summary: requests (syscall, io_uring "total"), block "q2c". */
static void hist_counts(const struct json *h, struct tracer_sum *s)
{
	s->hist_req = s->hist_block = 0;
	for (const struct json *e = h && h->t == JSON_ARR ? h->child : NULL; e; e = e->next) {
		const struct json *l = json_get(e, "layer"), *st = json_get(e, "stage");
		int64_t n = num_i64(json_num(e, "count", 0));

		if (!l || !st || l->t != JSON_STR || st->t != JSON_STR)
			continue;
		if ((!strcmp(l->str, "syscall") || !strcmp(l->str, "io_uring")) &&
		    !strcmp(st->str, "total"))
			s->hist_req = sat_add(s->hist_req, n);
		else if (!strcmp(l->str, "block") && !strcmp(st->str, "q2c"))
			s->hist_block = sat_add(s->hist_block, n);
	}
}

/* Ring drops of the block layer, and of every other one. */
static void ring_drops(const struct json *d, struct tracer_sum *s)
{
	s->ring_block = s->ring_other = 0;
	for (const struct json *l = d && d->t == JSON_OBJ ? d->child : NULL; l; l = l->next) {
		int64_t n = num_i64(json_num(l, "ringbuf", 0));

		if (l->t != JSON_OBJ)
			continue;
		if (!strcmp(l->key, "block"))
			s->ring_block = sat_add(s->ring_block, n);
		else
			s->ring_other = sat_add(s->ring_other, n);
	}
}

/* The figures of a final summary JSON line. */
static void summary_from_json(const struct json *v, struct tracer_sum *s)
{
	s->requests = num_i64(json_num(v, "requests", -1));
	s->records = members_sum(json_get(v, "records"));
	s->drops = num_i64(json_num(v, "drops.total", -1));
	drops_detail(json_get(v, "drops"), s->drops_detail, sizeof(s->drops_detail));
	s->rec_syscall = num_i64(json_num(v, "records.syscall", -1));
	s->rec_block = num_i64(json_num(v, "records.block", -1));
	s->rec_uring = num_i64(json_num(v, "records.io_uring", -1));
	s->rec_aio = num_i64(json_num(v, "records.aio", -1));
	s->drops_block = members_sum(json_path(v, "drops.block"));
	hist_counts(json_get(v, "hists"), s);
	ring_drops(json_get(v, "drops"), s);
	if (s->drops >= 0) {
		if (s->drops_block < 0) /* no block layer */
			s->drops_block = 0;
		/* records the daemon itself could not take (counted as "lost") are counted too */
		s->drops_other = sat_add(sat_add(s->drops, -s->drops_block), /* drops_block >= 0 */
					 num_i64(json_num(v, "lost", 0)));
	}
}

/* The last final summary among JSON lines, from the end back. 0 or -ENOENT. */
static int summary_json_lines(const char *text, size_t n, struct tracer_sum *s)
{
	const char *line_end = text + n;

	while (line_end > text) {
		const char *ls = line_end;

		while (ls > text && ls[-1] != '\n')
			ls--;
		if (ls < line_end && *ls == '{' && memmem(ls, line_end - ls, "\"summary\"", 9) &&
		    memmem(ls, line_end - ls, "\"final\":true", 12)) {
			struct json *v = json_parse(ls, line_end - ls);
			const struct json *t = json_get(v, "type");
			int found = v && t && t->t == JSON_STR && !strcmp(t->str, "summary");

			if (found)
				summary_from_json(v, s);
			json_free(v);
			if (found)
				return 0;
		}
		line_end = ls > text ? ls - 1 : text;
	}
	return -ENOENT;
}

/* The last "=== final summary after ...: N [recorded ]requests, N unjoined, N dropped" line. */
static int summary_text(const char *text, size_t n, struct tracer_sum *s)
{
	static const char tag[] = "=== final summary after ";
	const char *end = text + n, *last = NULL, *p = text, *colon;
	long long rq, un, dr;
	char buf[256];
	size_t l;

	while ((p = memmem(p, end - p, tag, sizeof(tag) - 1))) {
		last = p;
		p += sizeof(tag) - 1;
	}
	if (!last)
		return -ENOENT;
	l = end - last < (ptrdiff_t)sizeof(buf) - 1 ? (size_t)(end - last) : sizeof(buf) - 1;
	memcpy(buf, last, l);
	buf[l] = '\0';
	colon = strstr(buf, ": ");
	/* "N recorded requests" under -m or --sample (the profile always-on) */
	if (!colon ||
	    (sscanf(colon + 2, "%lld requests, %lld unjoined, %lld dropped", &rq, &un, &dr) != 3 &&
	     sscanf(colon + 2, "%lld recorded requests, %lld unjoined, %lld dropped", &rq, &un,
		    &dr) != 3))
		return -ENOENT;
	s->requests = rq;
	s->drops = dr;
	return 0;
}

int bench_parse_tracer_summary(const char *text, size_t n, struct tracer_sum *s)
{
	s->requests = s->records = s->drops = -1;
	s->rec_syscall = s->rec_block = s->rec_uring = s->rec_aio = -1;
	s->hist_req = s->hist_block = s->ring_block = s->ring_other = -1;
	s->drops_block = s->drops_other = -1;
	s->drops_detail[0] = '\0';
	if (!summary_json_lines(text, n, s))
		return 0;
	return summary_text(text, n, s);
}
