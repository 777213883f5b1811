// SPDX-License-Identifier: GPL-2.0
/*
 * bench: `iotracer bench`, what leaving a tracer on costs, measured under fio.
 * See bench.h and docs/bench.md.
 *
 * Layout of this file: pure helpers first (statistics, /proc parsers, a small
 * JSON reader, fio and summary parsers: unit tested), then the machinery
 * (loop devices, child processes, BPF statistics), the run loop, and the
 * reports (table, JSON, SVG).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/loop.h>

#include "lib/clock.h"
#include "bench/bench.h"
#include "lib/jsonw.h"
#include "lib/parse.h"

#ifndef IT_VERSION
#define IT_VERSION "dev"
#endif

/* ================================================================ statistics */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Copy the non-NaN samples of v, sorted. Returns the count (0 on ENOMEM). */
static int sorted_copy(const double *v, int n, double **out)
{
	double *c;
	int m = 0;

	*out = NULL;
	if (n <= 0)
		return 0;
	c = malloc(n * sizeof(*c));
	if (!c)
		return 0;
	for (int i = 0; i < n; i++)
		if (!isnan(v[i]))
			c[m++] = v[i];
	qsort(c, m, sizeof(*c), cmp_double);
	*out = c;
	return m;
}

double bench_median(const double *v, int n)
{
	double *c, med = NAN;
	int m = sorted_copy(v, n, &c);

	if (m > 0)
		med = m % 2 ? c[m / 2] : (c[m / 2 - 1] + c[m / 2]) / 2;
	free(c);
	return med;
}

void bench_stat(const double *v, int n, struct bstat *out)
{
	double *c;
	int m = sorted_copy(v, n, &c);

	out->n = m;
	out->med = out->min = out->max = NAN;
	if (m > 0) {
		out->med = m % 2 ? c[m / 2] : (c[m / 2 - 1] + c[m / 2]) / 2;
		out->min = c[0];
		out->max = c[m - 1];
	}
	free(c);
}

/* ================================================================ /proc parsers */

int bench_parse_proc_stat(const char *text, struct cpu_snap *s)
{
	const char *p = text;
	unsigned long long f[10] = { 0 };
	int found = 0, ncpu = 0;

	while (p && *p) {
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
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!found || !ncpu)
		return -EINVAL;
	s->idle_ticks = f[3] + f[4];
	s->ncpu = ncpu;
	return 0;
}

double bench_busy_ns(const struct cpu_snap *a, const struct cpu_snap *b, long user_hz)
{
	double elapsed = (double)b->t_ns - (double)a->t_ns;
	double idle = ((double)b->idle_ticks - (double)a->idle_ticks) * 1e9 / (double)user_hz;

	if (user_hz <= 0 || a->ncpu <= 0)
		return NAN;
	return elapsed * a->ncpu - idle;
}

double bench_busy_pct(const struct cpu_snap *a, const struct cpu_snap *b, long user_hz)
{
	double elapsed = (double)b->t_ns - (double)a->t_ns;

	if (!(elapsed > 0) || a->ncpu <= 0)
		return NAN;
	return 100.0 * bench_busy_ns(a, b, user_hz) / (elapsed * a->ncpu);
}

int bench_parse_schedstat(const char *text, uint64_t *run_ns)
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

int bench_parse_status_kb(const char *text, const char *key, uint64_t *kb)
{
	size_t kl = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == ':') {
			unsigned long long v;
			char unit[8] = "";

			if (sscanf(p + kl + 1, "%llu %7s", &v, unit) < 1)
				return -EINVAL;
			if (unit[0] && strcmp(unit, "kB"))
				return -EINVAL;
			*kb = v;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -ENOENT;
}

int bench_parse_fdinfo_prog(const char *text, struct bench_prog *p)
{
	const char *l = text;
	int have_id = 0;
	struct bench_prog r = { 0 };

	while (l && *l) {
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
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	if (!have_id)
		return 0;
	/* a link fd also shows prog_id (of the program it holds): not a program fd */
	if (strstr(text, "link_type:") || strstr(text, "link_id:"))
		return 0;
	*p = r;
	return 1;
}

int bench_btf_name(const void *btf, size_t len, uint32_t type_id, char *buf, size_t n)
{
	const struct btf_header *h = btf;
	const unsigned char *types, *strs;
	size_t off = 0;

	if (!btf || len < sizeof(*h) || h->magic != BTF_MAGIC || h->hdr_len < sizeof(*h) ||
	    (uint64_t)h->hdr_len + h->type_off + h->type_len > len ||
	    (uint64_t)h->hdr_len + h->str_off + h->str_len > len || !type_id || !n)
		return -EINVAL;
	types = (const unsigned char *)btf + h->hdr_len + h->type_off;
	strs = (const unsigned char *)btf + h->hdr_len + h->str_off;
	for (uint32_t id = 1; off + sizeof(struct btf_type) <= h->type_len; id++) {
		struct btf_type t;
		uint32_t vlen, kind;
		size_t extra;

		memcpy(&t, types + off, sizeof(t));
		kind = BTF_INFO_KIND(t.info);
		vlen = BTF_INFO_VLEN(t.info);
		if (id == type_id) {
			if (t.name_off >= h->str_len)
				return -EINVAL;
			size_t l =
				strnlen((const char *)strs + t.name_off, h->str_len - t.name_off);
			if (l >= n)
				l = n - 1;
			memcpy(buf, strs + t.name_off, l);
			buf[l] = '\0';
			return 0;
		}
		switch (kind) {
		case BTF_KIND_INT:
			extra = 4;
			break;
		case BTF_KIND_ARRAY:
			extra = 12;
			break;
		case BTF_KIND_STRUCT:
		case BTF_KIND_UNION:
			extra = (size_t)vlen * 12;
			break;
		case BTF_KIND_ENUM:
			extra = (size_t)vlen * 8;
			break;
		case BTF_KIND_FUNC_PROTO:
			extra = (size_t)vlen * 8;
			break;
		case BTF_KIND_VAR:
			extra = 4;
			break;
		case BTF_KIND_DATASEC:
			extra = (size_t)vlen * 12;
			break;
		case 17: /* DECL_TAG */
			extra = 4;
			break;
		case 19: /* ENUM64 */
			extra = (size_t)vlen * 12;
			break;
		case BTF_KIND_PTR:
		case BTF_KIND_FWD:
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_FUNC:
		case 16: /* FLOAT */
		case 18: /* TYPE_TAG */
			extra = 0;
			break;
		default:
			return -EINVAL;
		}
		off += sizeof(struct btf_type) + extra;
	}
	return -ENOENT;
}

/* ================================================================ JSON reader */

struct bjp {
	const char *s, *e;
	int depth;
};

#define BJ_MAX_DEPTH 64

static void bj_ws(struct bjp *p)
{
	while (p->s < p->e && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
		p->s++;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parse a string at p->s (on the opening quote). Returns malloc'd text or NULL. */
static char *bj_string(struct bjp *p)
{
	const char *q;
	char *out, *o;

	if (p->s >= p->e || *p->s != '"')
		return NULL;
	p->s++;
	/* the decoded string is never longer than the source */
	for (q = p->s; q < p->e && *q != '"'; q++)
		if (*q == '\\' && q + 1 < p->e)
			q++;
	if (q >= p->e)
		return NULL;
	out = malloc(q - p->s + 1);
	if (!out)
		return NULL;
	o = out;
	while (p->s < q) {
		char c = *p->s++;

		if ((unsigned char)c < 0x20)
			goto bad;
		if (c != '\\') {
			*o++ = c;
			continue;
		}
		c = *p->s++;
		switch (c) {
		case '"':
			*o++ = '"';
			break;
		case '\\':
			*o++ = '\\';
			break;
		case '/':
			*o++ = '/';
			break;
		case 'b':
			*o++ = '\b';
			break;
		case 'f':
			*o++ = '\f';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'u': {
			unsigned u = 0;

			if (q - p->s < 4)
				goto bad;
			for (int i = 0; i < 4; i++) {
				int h = hexval(p->s[i]);

				if (h < 0)
					goto bad;
				u = u << 4 | h;
			}
			p->s += 4;
			/* surrogates are not needed here: keep a placeholder */
			if (u >= 0xd800 && u <= 0xdfff)
				u = '?';
			if (u < 0x80) {
				*o++ = u;
			} else if (u < 0x800) {
				*o++ = 0xc0 | u >> 6;
				*o++ = 0x80 | (u & 0x3f);
			} else {
				/* 3 bytes from a 6-byte escape: still fits */
				*o++ = 0xe0 | u >> 12;
				*o++ = 0x80 | ((u >> 6) & 0x3f);
				*o++ = 0x80 | (u & 0x3f);
			}
			break;
		}
		default:
			goto bad;
		}
	}
	*o = '\0';
	p->s = q + 1;
	return out;
bad:
	free(out);
	return NULL;
}

static struct bj *bj_value(struct bjp *p);

static struct bj *bj_new(enum bj_type t)
{
	struct bj *v = calloc(1, sizeof(*v));

	if (v)
		v->t = t;
	return v;
}

static struct bj *bj_container(struct bjp *p, int obj)
{
	struct bj *v = bj_new(obj ? BJ_OBJ : BJ_ARR), **tail;
	char close = obj ? '}' : ']';

	if (!v)
		return NULL;
	if (++p->depth > BJ_MAX_DEPTH)
		goto bad;
	tail = &v->child;
	p->s++;
	bj_ws(p);
	if (p->s < p->e && *p->s == close) {
		p->s++;
		p->depth--;
		return v;
	}
	for (;;) {
		char *key = NULL;
		struct bj *m;

		bj_ws(p);
		if (obj) {
			key = bj_string(p);
			if (!key)
				goto bad;
			bj_ws(p);
			if (p->s >= p->e || *p->s != ':') {
				free(key);
				goto bad;
			}
			p->s++;
		}
		m = bj_value(p);
		if (!m) {
			free(key);
			goto bad;
		}
		m->key = key;
		*tail = m;
		tail = &m->next;
		bj_ws(p);
		if (p->s < p->e && *p->s == ',') {
			p->s++;
			continue;
		}
		if (p->s < p->e && *p->s == close) {
			p->s++;
			break;
		}
		goto bad;
	}
	p->depth--;
	return v;
bad:
	bj_free(v);
	return NULL;
}

static struct bj *bj_value(struct bjp *p)
{
	struct bj *v;

	bj_ws(p);
	if (p->s >= p->e)
		return NULL;
	switch (*p->s) {
	case '{':
		return bj_container(p, 1);
	case '[':
		return bj_container(p, 0);
	case '"':
		v = bj_new(BJ_STR);
		if (v && !(v->str = bj_string(p))) {
			free(v);
			v = NULL;
		}
		return v;
	case 't':
	case 'f':
	case 'n': {
		static const struct {
			const char *w;
			enum bj_type t;
			int val;
		} lits[] = { { "true", BJ_BOOL, 1 },
			     { "false", BJ_BOOL, 0 },
			     { "null", BJ_NULL, 0 } };

		for (size_t i = 0; i < sizeof(lits) / sizeof(lits[0]); i++) {
			size_t l = strlen(lits[i].w);

			if ((size_t)(p->e - p->s) >= l && !memcmp(p->s, lits[i].w, l)) {
				p->s += l;
				v = bj_new(lits[i].t);
				if (v)
					v->num = lits[i].val;
				return v;
			}
		}
		return NULL;
	}
	default: {
		char buf[64], *end;
		size_t l = 0;

		while (p->s + l < p->e && l < sizeof(buf) - 1 &&
		       (isdigit((unsigned char)p->s[l]) || strchr("+-.eE", p->s[l])))
			l++;
		if (!l || l == sizeof(buf) - 1)
			return NULL;
		memcpy(buf, p->s, l);
		buf[l] = '\0';
		if (!isdigit((unsigned char)buf[0]) && buf[0] != '-')
			return NULL;
		errno = 0;
		double d = strtod(buf, &end);
		if (*end || errno == EINVAL)
			return NULL;
		p->s += l;
		v = bj_new(BJ_NUM);
		if (v)
			v->num = d;
		return v;
	}
	}
}

struct bj *bj_parse(const char *s, size_t n)
{
	struct bjp p = { s, s + n, 0 };
	struct bj *v;

	if (!s)
		return NULL;
	v = bj_value(&p);
	if (!v)
		return NULL;
	bj_ws(&p);
	if (p.s != p.e) {
		bj_free(v);
		return NULL;
	}
	return v;
}

void bj_free(struct bj *v)
{
	while (v) {
		struct bj *next = v->next;

		bj_free(v->child);
		free(v->str);
		free(v->key);
		free(v);
		v = next;
	}
}

const struct bj *bj_get(const struct bj *v, const char *key)
{
	if (!v || v->t != BJ_OBJ)
		return NULL;
	for (const struct bj *m = v->child; m; m = m->next)
		if (m->key && !strcmp(m->key, key))
			return m;
	return NULL;
}

const struct bj *bj_path(const struct bj *v, const char *path)
{
	char key[128];

	while (v && path && *path) {
		const char *dot = strchr(path, '.');
		size_t l = dot ? (size_t)(dot - path) : strlen(path);

		if (l >= sizeof(key))
			return NULL;
		memcpy(key, path, l);
		key[l] = '\0';
		v = bj_get(v, key);
		path = dot ? dot + 1 : NULL;
	}
	return v;
}

double bj_num(const struct bj *v, const char *path, double def)
{
	const struct bj *n = bj_path(v, path);

	return n && n->t == BJ_NUM ? n->num : def;
}

/* ================================================================ fio / tracer output */

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
	const struct bj *jobs;
	double lat_sum = 0, best_ios = -1;
	struct bj *root;

	memset(r, 0, sizeof(*r));
	r->lat_mean_ns = r->lat_p99_ns = NAN;
	if (!start)
		return -EINVAL;
	/* fio may print text after the JSON too: cut at the last '}' */
	const char *end = text + n;
	while (end > start && end[-1] != '}')
		end--;
	root = bj_parse(start, end - start);
	if (!root)
		return -EINVAL;
	jobs = bj_get(root, "jobs");
	if (!jobs || jobs->t != BJ_ARR || !jobs->child) {
		bj_free(root);
		return -EINVAL;
	}
	for (const struct bj *j = jobs->child; j; j = j->next) {
		static const char *const dirs[] = { "read", "write", "trim" };

		r->jobs++;
		r->errors += num_u64(bj_num(j, "error", 0));
		for (int d = 0; d < 3; d++) {
			const struct bj *dj = bj_get(j, dirs[d]);
			double ios = bj_num(dj, "total_ios", 0);
			double mean = bj_num(dj, "clat_ns.mean", NAN);
			const struct bj *pct = bj_path(dj, "clat_ns.percentile");

			if (!dj)
				continue;
			r->iops += bj_num(dj, "iops", 0);
			r->ios += num_u64(ios);
			if (ios > 0 && !isnan(mean))
				lat_sum += mean * ios;
			if (ios > best_ios && ios > 0) {
				const struct bj *p99 = bj_get(pct, "99.000000");

				best_ios = ios;
				r->lat_p99_ns = p99 && p99->t == BJ_NUM ? p99->num : NAN;
			}
		}
	}
	if (r->ios)
		r->lat_mean_ns = lat_sum / r->ios;
	bj_free(root);
	return 0;
}

static int64_t members_sum(const struct bj *o)
{
	double s = 0;

	if (!o || o->t != BJ_OBJ)
		return -1;
	for (const struct bj *m = o->child; m; m = m->next)
		if (m->t == BJ_NUM)
			s += m->num;
	return num_i64(s);
}

/* "block.ringbuf=3 syscall.inflight=1": the non-zero per-layer drop counters. */
static void drops_detail(const struct bj *d, char *buf, size_t n)
{
	size_t o = 0;

	buf[0] = '\0';
	for (const struct bj *l = d && d->t == BJ_OBJ ? d->child : NULL; l; l = l->next) {
		if (l->t != BJ_OBJ)
			continue;
		for (const struct bj *k = l->child; k; k = k->next) {
			int w;

			if (k->t != BJ_NUM || k->num <= 0)
				continue;
			w = snprintf(buf + o, n - o, "%s%s.%s=%.0f", o ? " " : "", l->key, k->key,
				     k->num);
			if (w < 0 || (size_t)w >= n - o)
				return;
			o += w;
		}
	}
}

int bench_parse_tracer_summary(const char *text, size_t n, struct tracer_sum *s)
{
	const char *end = text + n, *line_end = end;

	s->requests = s->records = s->drops = -1;
	s->rec_syscall = s->rec_block = s->rec_uring = s->rec_aio = -1;
	s->drops_block = s->drops_other = -1;
	s->drops_detail[0] = '\0';
	/* JSON lines, from the last one back */
	while (line_end > text) {
		const char *ls = line_end;

		while (ls > text && ls[-1] != '\n')
			ls--;
		if (ls < line_end && *ls == '{' && memmem(ls, line_end - ls, "\"summary\"", 9) &&
		    memmem(ls, line_end - ls, "\"final\":true", 12)) {
			struct bj *v = bj_parse(ls, line_end - ls);
			const struct bj *t = bj_get(v, "type");

			if (v && t && t->t == BJ_STR && !strcmp(t->str, "summary")) {
				s->requests = num_i64(bj_num(v, "requests", -1));
				s->records = members_sum(bj_get(v, "records"));
				s->drops = num_i64(bj_num(v, "drops.total", -1));
				drops_detail(bj_get(v, "drops"), s->drops_detail,
					     sizeof(s->drops_detail));
				s->rec_syscall = num_i64(bj_num(v, "records.syscall", -1));
				s->rec_block = num_i64(bj_num(v, "records.block", -1));
				s->rec_uring = num_i64(bj_num(v, "records.io_uring", -1));
				s->rec_aio = num_i64(bj_num(v, "records.aio", -1));
				s->drops_block = members_sum(bj_path(v, "drops.block"));
				if (s->drops >= 0) {
					if (s->drops_block < 0) /* no block layer */
						s->drops_block = 0;
					s->drops_other = s->drops - s->drops_block;
				}
				bj_free(v);
				return 0;
			}
			bj_free(v);
		}
		line_end = ls > text ? ls - 1 : text;
	}
	/* text output */
	const char *last = NULL, *p = text;
	static const char tag[] = "=== final summary after ";
	while ((p = memmem(p, end - p, tag, sizeof(tag) - 1))) {
		last = p;
		p += sizeof(tag) - 1;
	}
	if (last) {
		long long rq, un, dr;
		char buf[256];
		size_t l = end - last < (ptrdiff_t)sizeof(buf) - 1 ? (size_t)(end - last) :
								     sizeof(buf) - 1;
		const char *colon;

		memcpy(buf, last, l);
		buf[l] = '\0';
		colon = strstr(buf, ": ");
		if (colon && sscanf(colon + 2, "%lld requests, %lld unjoined, %lld dropped", &rq,
				    &un, &dr) == 3) {
			s->requests = rq;
			s->drops = dr;
			return 0;
		}
	}
	return -ENOENT;
}

/* ================================================================ small system helpers */

#define IT_MKDEV_BENCH(ma, mi) ((uint32_t)(ma) << 20 | (uint32_t)(mi)) /* kernel dev_t */

static volatile sig_atomic_t g_stop; /* SIGINT/SIGTERM/SIGHUP: stop and clean up */
static volatile sig_atomic_t g_alarm;
static int g_verbose;

#define MAX_KIDS 8
static pid_t g_kids[MAX_KIDS]; /* process groups we started and did not reap yet */

static void on_signal(int sig)
{
	if (sig == SIGALRM)
		g_alarm = 1;
	else
		g_stop = 1;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static __attribute__((format(printf, 1, 2))) void progress(const char *fmt, ...)
{
	va_list ap;
	char buf[512];
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "[%02d:%02d:%02d] %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec, buf);
}

/* Read a whole file (NUL terminated); *len without the NUL. NULL on error. */
static char *read_file(const char *path, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
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
	close(fd);
	free(buf);
	return NULL;
}

/* The last max bytes of a file (NUL terminated). */
static char *read_tail(const char *path, size_t max, size_t *len)
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

static int write_file(const char *path, const char *data, size_t len)
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

static void kids_add(pid_t p)
{
	for (int i = 0; i < MAX_KIDS; i++)
		if (!g_kids[i]) {
			g_kids[i] = p;
			return;
		}
}

static void kids_del(pid_t p)
{
	for (int i = 0; i < MAX_KIDS; i++)
		if (g_kids[i] == p)
			g_kids[i] = 0;
}

/*
 * Start argv[0] (PATH lookup) in its own process group, stdin from /dev/null,
 * stdout/stderr to files (NULL: /dev/null). It gets SIGKILL if we die.
 */
static pid_t spawn(char *const argv[], const char *out, const char *err)
{
	pid_t parent = getpid(), pid;

	if (g_verbose) {
		char line[2048];
		size_t o = 0;

		for (int i = 0; argv[i] && o < sizeof(line) - 1; i++)
			o += snprintf(line + o, sizeof(line) - o, "%s%s", i ? " " : "", argv[i]);
		progress("  exec: %s", line);
	}
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		sigset_t none;
		int fd;

		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGALRM, SIG_DFL);
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0) {
			dup2(fd, 0);
			close(fd);
		}
		fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			close(fd);
		}
		if (err && out && !strcmp(err, out)) {
			dup2(1, 2);
		} else {
			fd = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd >= 0) {
				dup2(fd, 2);
				close(fd);
			}
		}
		execvp(argv[0], argv);
		dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	kids_add(pid);
	return pid;
}

/* Wait for pid to exit, polling, up to timeout_ms (< 0: forever, unless g_stop). */
static int wait_exit(pid_t pid, int timeout_ms, int *status)
{
	uint64_t end = it_mono_ns() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) * 1000000ull;

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid) {
			kids_del(pid);
			return 0;
		}
		if (r < 0 && errno != EINTR) {
			kids_del(pid);
			return -errno;
		}
		if (timeout_ms >= 0 && it_mono_ns() >= end)
			return -ETIMEDOUT;
		sleep_ms(20);
	}
}

/* Signal the group; wait up to grace_ms; then SIGKILL the group and reap. */
static int stop_child(pid_t pid, int sig, int grace_ms, int *status)
{
	int st = 0;

	kill(-pid, sig);
	kill(pid, sig);
	if (!wait_exit(pid, grace_ms, &st)) {
		if (status)
			*status = st;
		/* leftovers of the group (fio job processes) */
		kill(-pid, SIGKILL);
		return 0;
	}
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	wait_exit(pid, 5000, &st);
	if (status)
		*status = st;
	return -ETIMEDOUT;
}

static void kill_all_kids(void)
{
	for (int i = 0; i < MAX_KIDS; i++)
		if (g_kids[i])
			stop_child(g_kids[i], SIGTERM, 5000, NULL);
}

/* Blocking wait for fio with a deadline (SIGALRM), precise end time. */
static int wait_fio(pid_t pid, unsigned timeout_s, int *status)
{
	int st = 0, ret = 0;

	g_alarm = 0;
	alarm(timeout_s);
	for (;;) {
		pid_t r = waitpid(pid, &st, 0);

		if (r == pid)
			break;
		if (r < 0 && errno == EINTR && !g_stop && !g_alarm)
			continue;
		alarm(0);
		ret = g_stop ? -EINTR : -ETIMEDOUT;
		stop_child(pid, SIGTERM, 5000, &st);
		*status = st;
		return ret;
	}
	alarm(0);
	kids_del(pid);
	*status = st;
	return 0;
}

/* ================================================================ /proc sampling */

static int cpu_snapshot(struct cpu_snap *s)
{
	char *t = read_file("/proc/stat", NULL);
	int ret;

	s->t_ns = it_mono_ns();
	if (!t)
		return -errno;
	ret = bench_parse_proc_stat(t, s);
	free(t);
	return ret;
}

uint64_t bench_proc_cpu_ns(pid_t pid)
{
	char path[64];
	uint64_t sum = 0;
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char p2[300], *t;
		uint64_t v;

		if (e->d_name[0] == '.')
			continue;
		if (snprintf(p2, sizeof(p2), "/proc/%d/task/%s/schedstat", (int)pid, e->d_name) >=
		    (int)sizeof(p2))
			continue;
		t = read_file(p2, NULL);
		if (t && !bench_parse_schedstat(t, &v))
			sum += v;
		free(t);
	}
	closedir(d);
	return sum;
}

static void proc_mem(pid_t pid, int64_t *rss_anon_kb, int64_t *hwm_kb)
{
	char path[64], *t;
	uint64_t v;

	*rss_anon_kb = *hwm_kb = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	t = read_file(path, NULL);
	if (!t)
		return;
	if (!bench_parse_status_kb(t, "RssAnon", &v))
		*rss_anon_kb = v;
	if (!bench_parse_status_kb(t, "VmHWM", &v))
		*hwm_kb = v;
	free(t);
}

/* Count the BPF-related fds of pid: programs, links, perf events. -1 if gone. */
static int bpf_fd_counts(pid_t pid, int *progs, int *links, int *perf)
{
	char path[64];
	DIR *d;
	struct dirent *e;

	*progs = *links = *perf = 0;
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char p2[300], l[128];
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		if (snprintf(p2, sizeof(p2), "/proc/%d/fd/%s", (int)pid, e->d_name) >=
		    (int)sizeof(p2))
			continue;
		n = readlink(p2, l, sizeof(l) - 1);
		if (n <= 0)
			continue;
		l[n] = '\0';
		if (!strcmp(l, "anon_inode:bpf-prog"))
			(*progs)++;
		else if (!strcmp(l, "anon_inode:bpf_link"))
			(*links)++;
		else if (!strcmp(l, "anon_inode:[perf_event]"))
			(*perf)++;
	}
	closedir(d);
	return 0;
}

/* ================================================================ BPF statistics */

static long bpf_sys(int cmd, union bpf_attr *a, unsigned int sz)
{
	return syscall(__NR_bpf, cmd, a, sz);
}

/* Turn run-time statistics on while the returned fd is open (or via the sysctl). */
static int g_stats_sysctl_old = -1;

static int stats_on(void)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.enable_stats.type = BPF_STATS_RUN_TIME;
	fd = bpf_sys(BPF_ENABLE_STATS, &a, sizeof(a));
	if (fd >= 0)
		return fd;
	/* older kernels: the sysctl, restored by stats_off() */
	char *t = read_file("/proc/sys/kernel/bpf_stats_enabled", NULL);
	if (t) {
		g_stats_sysctl_old = atoi(t);
		free(t);
		if (!write_file("/proc/sys/kernel/bpf_stats_enabled", "1\n", 2))
			return INT_MAX;
	}
	return -1;
}

static void stats_off(int fd)
{
	if (fd == INT_MAX) {
		char v[4];

		snprintf(v, sizeof(v), "%d\n", g_stats_sysctl_old > 0);
		write_file("/proc/sys/kernel/bpf_stats_enabled", v, strlen(v));
		g_stats_sysctl_old = -1;
	} else if (fd >= 0) {
		close(fd);
	}
}

static int obj_info(int fd, void *info, uint32_t len)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = fd;
	a.info.info_len = len;
	a.info.info = (uintptr_t)info;
	return bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) ? -errno : 0;
}

/* Name of BTF type type_id of BTF object btf_id (the program's full function name). */
static int btf_func_name(uint32_t btf_id, uint32_t type_id, char *buf, size_t n)
{
	union bpf_attr a;
	struct bpf_btf_info bi;
	void *data = NULL;
	int fd, ret;

	memset(&a, 0, sizeof(a));
	a.btf_id = btf_id;
	fd = bpf_sys(BPF_BTF_GET_FD_BY_ID, &a, sizeof(a));
	if (fd < 0)
		return -errno;
	memset(&bi, 0, sizeof(bi));
	ret = obj_info(fd, &bi, sizeof(bi));
	if (!ret && (!bi.btf_size || bi.btf_size > (64u << 20)))
		ret = -EINVAL;
	if (!ret && !(data = malloc(bi.btf_size)))
		ret = -ENOMEM;
	if (!ret) {
		uint32_t size = bi.btf_size;

		memset(&bi, 0, sizeof(bi));
		bi.btf = (uintptr_t)data;
		bi.btf_size = size;
		ret = obj_info(fd, &bi, sizeof(bi));
		if (!ret)
			ret = bench_btf_name(data, size, type_id, buf, n);
	}
	free(data);
	close(fd);
	return ret;
}

/* Program name: the full function name from BTF, else the kernel's 15-char name. */
static void prog_name(uint32_t id, char *buf, size_t n)
{
	union bpf_attr a;
	struct bpf_prog_info info;
	struct bpf_func_info fi;
	int fd;

	snprintf(buf, n, "id%u", id);
	memset(&a, 0, sizeof(a));
	a.prog_id = id;
	fd = bpf_sys(BPF_PROG_GET_FD_BY_ID, &a, sizeof(a));
	if (fd < 0)
		return;
	memset(&info, 0, sizeof(info));
	if (!obj_info(fd, &info, sizeof(info))) {
		uint32_t btf_id = info.btf_id, nfi = info.nr_func_info;

		if (info.name[0])
			snprintf(buf, n, "%.*s", (int)sizeof(info.name), info.name);
		if (btf_id && nfi) {
			memset(&info, 0, sizeof(info));
			memset(&fi, 0, sizeof(fi));
			info.nr_func_info = 1;
			info.func_info_rec_size = sizeof(fi);
			info.func_info = (uintptr_t)&fi;
			if (!obj_info(fd, &info, sizeof(info)) && fi.type_id) {
				char full[48];

				if (!btf_func_name(btf_id, fi.type_id, full, sizeof(full)) &&
				    full[0])
					snprintf(buf, n, "%s", full);
			}
		}
	}
	close(fd);
}

/* Number of BPF programs loaded on the system (ours and everybody else's). */
static int system_prog_count(void)
{
	union bpf_attr a;
	int n = 0;

	memset(&a, 0, sizeof(a));
	while (n < 100000) {
		a.start_id = a.next_id;
		if (bpf_sys(BPF_PROG_GET_NEXT_ID, &a, sizeof(a)))
			break;
		n++;
	}
	return n;
}

static double loadavg1(void)
{
	char *t = read_file("/proc/loadavg", NULL);
	double v = NAN;

	if (t)
		v = strtod(t, NULL);
	free(t);
	return v;
}

/* The BPF programs whose fds pid holds, with their run statistics. */
static int prog_snapshot(pid_t pid, struct bench_prog *out, int max, int names)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		char p2[300], *t;
		struct bench_prog p;
		int dup = 0;

		if (e->d_name[0] == '.')
			continue;
		if (snprintf(p2, sizeof(p2), "/proc/%d/fdinfo/%s", (int)pid, e->d_name) >=
		    (int)sizeof(p2))
			continue;
		t = read_file(p2, NULL);
		if (!t)
			continue;
		if (bench_parse_fdinfo_prog(t, &p) == 1) {
			for (int i = 0; i < n; i++)
				dup |= out[i].id == p.id;
			if (!dup) {
				if (names)
					prog_name(p.id, p.name, sizeof(p.name));
				out[n++] = p;
			}
		}
		free(t);
	}
	closedir(d);
	return n;
}

/* ================================================================ workloads and tracers */

enum { M_CPU, M_IOPS }; /* what a workload's overhead is read from */
enum { P_REFERENCE = 1, P_MAXRATE = 2, P_LAYERS = 4 };

struct workload {
	int preset;
	const char *name, *desc;
	int ram; /* RAM-backed loop device */
	int metric;
	const char *args; /* fio job options, after the global ones */
	int asked_iops; /* the fio rate_iops of all jobs together; 0: as fast as it goes */
};

#define REF_G "--ioengine=psync --bs=4k "
static const struct workload g_wls[] = {
	{ P_REFERENCE, "ref-rand",
	  "psync direct 4k randread 12000 + randwrite 250 IOPS (2 fio processes)", 0, M_CPU,
	  REF_G "--direct=1 --name=randread --rw=randread --rate_iops=12000 "
		"--name=randwrite --rw=randwrite --rate_iops=250", 12250 },
	{ P_REFERENCE, "ref-seq", "psync direct 4k read 12000 + write 250 IOPS, sequential", 0,
	  M_CPU,
	  REF_G "--direct=1 --name=read --rw=read --rate_iops=12000 "
		"--name=write --rw=write --rate_iops=250", 12250 },
	{ P_REFERENCE, "ref-buffered", "psync buffered 4k randread 12000 + randwrite 250 IOPS", 0,
	  M_CPU,
	  REF_G "--direct=0 --name=randread --rw=randread --rate_iops=12000 "
		"--name=randwrite --rw=randwrite --rate_iops=250", 12250 },
	{ P_REFERENCE, "ref-12r1w", "psync direct 4k, 12 readers x 1000 + 1 writer x 250 IOPS", 0,
	  M_CPU,
	  REF_G "--direct=1 --name=readers --rw=randread --rate_iops=1000 --numjobs=12 "
		"--name=writer --rw=randwrite --rate_iops=250", 12250 },
	{ P_MAXRATE, "max-psync", "psync QD1 4k randread direct, RAM-backed loop", 1, M_IOPS,
	  "--ioengine=psync --bs=4k --direct=1 --name=randread --rw=randread", 0 },
	{ P_MAXRATE, "max-uring", "io_uring QD32 4k randread direct, RAM-backed loop", 1, M_IOPS,
	  "--ioengine=io_uring --iodepth=32 --bs=4k --direct=1 --name=randread --rw=randread", 0 },
	{ P_LAYERS, "layers-psync",
	  "psync QD1 4k randread direct, RAM-backed loop: one layer at a time", 1, M_IOPS,
	  "--ioengine=psync --bs=4k --direct=1 --name=randread --rw=randread", 0 },
};
#define NR_WLS (int)(sizeof(g_wls) / sizeof(g_wls[0]))

static const char *preset_name(int p)
{
	return p == P_REFERENCE ? "reference" : p == P_MAXRATE ? "maxrate" : "layers";
}

enum tkind { T_NONE, T_IOT, T_IOT_NOJSON, T_BT_HIST, T_BT_PRINT };

struct tracer {
	enum tkind k;
	char name[64]; /* as given: "iotracer", "iotracer:block", ... */
	char layers[64]; /* iotracer -l value ("" = all) */
	char exe[256]; /* iotracer@PATH: that binary; "" = this one */
	int avail;
	char why[128]; /* when not available */
};

#define MAX_TRACERS 32
static struct tracer g_tr[MAX_TRACERS];
static int g_ntr;

/* Find or add a tracer by name; -EINVAL for an unknown name, -ENOSPC. */
static int tracer_get(const char *name)
{
	struct tracer t = { 0 };
	const char *at = strchr(name, '@');
	const char *colon = strchr(at ? at : name, ':');
	size_t base = at ? (size_t)(at - name) : colon ? (size_t)(colon - name) : strlen(name);

	for (int i = 0; i < g_ntr; i++)
		if (!strcmp(g_tr[i].name, name))
			return i;
	if (strlen(name) >= sizeof(t.name))
		return -EINVAL;
	if (base == 4 && !strncmp(name, "none", 4))
		t.k = T_NONE;
	else if (base == 8 && !strncmp(name, "iotracer", 8))
		t.k = T_IOT;
	else if (base == 15 && !strncmp(name, "iotracer-nojson", 15))
		t.k = T_IOT_NOJSON;
	else if (base == 13 && !strncmp(name, "bpftrace-hist", 13))
		t.k = T_BT_HIST;
	else if (base == 14 && !strncmp(name, "bpftrace-print", 14))
		t.k = T_BT_PRINT;
	else
		return -EINVAL;
	if (at) {
		/* iotracer@PATH[:LAYERS]: another build, side by side with this one */
		size_t len = colon ? (size_t)(colon - at - 1) : strlen(at + 1);

		if ((t.k != T_IOT && t.k != T_IOT_NOJSON) || !len || len >= sizeof(t.exe))
			return -EINVAL;
		memcpy(t.exe, at + 1, len);
		if (access(t.exe, X_OK))
			return -EINVAL;
	}
	if (colon) {
		uint32_t mask;

		/* layers: iotracer:block or iotracer:syscall+block */
		if (t.k != T_IOT && t.k != T_IOT_NOJSON)
			return -EINVAL;
		snprintf(t.layers, sizeof(t.layers), "%s", colon + 1);
		for (char *p = t.layers; *p; p++)
			if (*p == '+')
				*p = ',';
		if (parse_layers(t.layers, &mask))
			return -EINVAL;
	}
	snprintf(t.name, sizeof(t.name), "%s", name);
	t.avail = 1;
	if (g_ntr >= MAX_TRACERS)
		return -ENOSPC;
	g_tr[g_ntr] = t;
	return g_ntr++;
}

/* ================================================================ options and state */

struct bopts {
	int quick, pairs, bpf_stats, keep, force;
	uint64_t runtime_ns, size;
	unsigned presets;
	const char *target, *json, *svg, *tracers, *tools_dir, *workloads;
};

struct target {
	int ready, failed;
	char dev[256]; /* /dev/loopN (or the user's block device) */
	char name[32]; /* loopN */
	unsigned maj, min;
	int lfd; /* our fd on the loop device (-1: not our loop) */
	char backing[PATH_MAX];
	int created; /* we created the backing file */
	int direct_io;
	char workdir[PATH_MAX]; /* tracer and fio outputs */
	char desc[PATH_MAX + 64];
};

struct run {
	int wl, tr, round, stats;
	int ok;
	char err[256];
	struct fio_res fio;
	double elapsed_s, busy_pct, busy_ns;
	uint64_t tracer_cpu_ns;
	double tracer_cpu_pct;
	int64_t rss_anon_kb, hwm_kb;
	struct tracer_sum sum;
	int nprogs;
	struct bench_prog *progs; /* deltas over the fio run */
	uint64_t bpf_ns, bpf_cnt;
	int64_t blk_ios; /* requests the target device completed during fio (its stat), -1 */
	int sys_progs; /* BPF programs loaded on the system during the run (noise hint) */
	double load1; /* 1-minute load average before the run */
};

struct bench {
	struct bopts o;
	char exe[PATH_MAX];
	char tools[PATH_MAX];
	char bpftrace[PATH_MAX];
	long user_hz;
	int ncpu;
	struct target tg[2]; /* [0] disk, [1] RAM; with --target both name one device */
	int shared_target;
	struct run *runs;
	int nruns, cap;
	int total_planned, done;
	int wl_tr[NR_WLS][MAX_TRACERS]; /* which tracers run on which workload */
	int wl_sel[NR_WLS];
	int interrupted;
};

static int find_in_path(const char *cmd, char *out, size_t n)
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

/* tools/ with the bpftrace scripts. */
static void find_tools(struct bench *b)
{
	char dir[PATH_MAX], cand[6][PATH_MAX + 64];
	const char *env = getenv("IOTRACER_TOOLS");
	int n = 0;

	snprintf(dir, sizeof(dir), "%s", b->exe);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (b->o.tools_dir)
		snprintf(cand[n++], sizeof(cand[0]), "%s", b->o.tools_dir);
	if (env && *env)
		snprintf(cand[n++], sizeof(cand[0]), "%s", env);
	snprintf(cand[n++], sizeof(cand[0]), "%s/tools", dir);
	snprintf(cand[n++], sizeof(cand[0]), "%s/../share/iotracer/tools", dir);
	snprintf(cand[n++], sizeof(cand[0]), "/usr/share/iotracer/tools");
	for (int i = 0; i < n; i++) {
		char f[PATH_MAX + 96];

		if (snprintf(f, sizeof(f), "%s/blk_lat_hist.bt", cand[i]) >= (int)sizeof(f))
			continue;
		if (!access(f, R_OK) &&
		    snprintf(b->tools, sizeof(b->tools), "%s", cand[i]) < (int)sizeof(b->tools)) {
			return;
		}
	}
	b->tools[0] = '\0';
}

/* ================================================================ targets */

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#include <sys/vfs.h>

static int on_tmpfs(const char *path)
{
	struct statfs sf;

	return !statfs(path, &sf) && sf.f_type == TMPFS_MAGIC;
}

/* maj:min of the whole disk a device belongs to (itself if not a partition). */
static void disk_of(unsigned maj, unsigned min, unsigned *dmaj, unsigned *dmin)
{
	char p[96], real[PATH_MAX], f[PATH_MAX + 32];
	char *t;

	*dmaj = maj;
	*dmin = min;
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u", maj, min);
	if (!realpath(p, real))
		return;
	snprintf(f, sizeof(f), "%s/partition", real);
	if (access(f, F_OK))
		return;
	char *slash = strrchr(real, '/');
	if (!slash)
		return;
	*slash = '\0';
	snprintf(f, sizeof(f), "%s/dev", real);
	t = read_file(f, NULL);
	if (t && sscanf(t, "%u:%u", dmaj, dmin) != 2) {
		*dmaj = maj;
		*dmin = min;
	}
	free(t);
}

/* Refuse a block device that is mounted, holds a mounted partition, is (on) the root disk, swap, or held by dm/md. */
static int check_device(unsigned maj, unsigned min, char *why, size_t n)
{
	unsigned dmaj, dmin, rmaj, rmin, mmaj, mmin;
	struct stat st;
	char *t, p[96];

	disk_of(maj, min, &dmaj, &dmin);
	if (!stat("/", &st)) {
		disk_of(major(st.st_dev), minor(st.st_dev), &rmaj, &rmin);
		if ((rmaj == dmaj && rmin == dmin) ||
		    (major(st.st_dev) == maj && minor(st.st_dev) == min)) {
			snprintf(why, n, "%u:%u is the root disk (or on it)", maj, min);
			return -EBUSY;
		}
	}
	t = read_file("/proc/self/mountinfo", NULL);
	for (char *l = t; l && *l;) {
		char mnt[512];

		if (sscanf(l, "%*u %*u %u:%u %*s %511s", &mmaj, &mmin, mnt) == 3) {
			unsigned pmaj, pmin;

			disk_of(mmaj, mmin, &pmaj, &pmin);
			if ((mmaj == maj && mmin == min) || (pmaj == maj && pmin == min)) {
				snprintf(why, n, "%u:%u is mounted (%.200s)", mmaj, mmin, mnt);
				free(t);
				return -EBUSY;
			}
		}
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	free(t);
	t = read_file("/proc/swaps", NULL);
	for (char *l = t ? strchr(t, '\n') : NULL; l && *++l;) {
		char dev[256];

		if (sscanf(l, "%255s", dev) == 1 && !stat(dev, &st) && S_ISBLK(st.st_mode) &&
		    major(st.st_rdev) == maj && minor(st.st_rdev) == min) {
			snprintf(why, n, "%.200s is in use as swap", dev);
			free(t);
			return -EBUSY;
		}
		l = strchr(l, '\n');
	}
	free(t);
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/holders", maj, min);
	DIR *d = opendir(p);
	if (d) {
		struct dirent *e;
		int held = 0;

		while ((e = readdir(d)))
			held |= e->d_name[0] != '.';
		closedir(d);
		if (held) {
			snprintf(why, n, "%u:%u is held by another device (dm/md/bcache)", maj,
				 min);
			return -EBUSY;
		}
	}
	return 0;
}

/* Refuse data that looks like a file system, swap, LVM/LUKS or a partition table. */
static int check_signature(int fd, char *why, size_t n)
{
	static unsigned char buf[69632];
	ssize_t r = pread(fd, buf, sizeof(buf), 0);

	if (r < 0)
		return 0;
	if (r > 1081 && buf[1080] == 0x53 && buf[1081] == 0xef)
		snprintf(why, n, "it holds an ext2/3/4 file system");
	else if (r > 4 && !memcmp(buf, "XFSB", 4))
		snprintf(why, n, "it holds an XFS file system");
	else if (r > 65608 && !memcmp(buf + 65600, "_BHRfS_M", 8))
		snprintf(why, n, "it holds a btrfs file system");
	else if (r > 4096 && !memcmp(buf + 4086, "SWAPSPACE2", 10))
		snprintf(why, n, "it holds a swap area");
	else if (r > 6 && !memcmp(buf, "LUKS\xba\xbe", 6))
		snprintf(why, n, "it holds a LUKS volume");
	else if (r > 520 && !memcmp(buf + 512, "LABELONE", 8))
		snprintf(why, n, "it holds an LVM physical volume");
	else if (r > 511 && buf[510] == 0x55 && buf[511] == 0xaa)
		snprintf(why, n, "it has a partition table or boot sector");
	else
		return 0;
	return -EEXIST;
}

/* Write size bytes of a pattern into a new file (O_DIRECT when possible). */
static int fill_file(const char *path, uint64_t size)
{
	const size_t chunk = 1 << 20;
	void *buf;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_DIRECT, 0600);
	if (fd < 0 && errno == EINVAL)
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (posix_memalign(&buf, 4096, chunk)) {
		close(fd);
		return -ENOMEM;
	}
	memset(buf, 0x5a, chunk);
	for (uint64_t off = 0; off < size && !g_stop; off += chunk) {
		size_t l = size - off < chunk ? size - off : chunk;
		ssize_t w = pwrite(fd, buf, l, off);

		if (w != (ssize_t)l) {
			ret = w < 0 ? -errno : -EIO;
			break;
		}
	}
	free(buf);
	if (!ret && g_stop)
		ret = -EINTR;
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

/* A loop device over backing (autoclear: it goes away when our fd closes). */
static int loop_attach(struct target *t)
{
	int ffd, ctl, ret = -EBUSY;
	struct stat st;

	ffd = open(t->backing, O_RDWR | O_CLOEXEC);
	if (ffd < 0)
		return -errno;
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		ret = -errno;
		close(ffd);
		return ret;
	}
	t->direct_io = !on_tmpfs(t->backing);
	for (int tries = 0; tries < 20; tries++) {
		struct loop_config cfg;
		int nr = ioctl(ctl, LOOP_CTL_GET_FREE), lfd;

		if (nr < 0) {
			ret = -errno;
			break;
		}
		snprintf(t->dev, sizeof(t->dev), "/dev/loop%d", nr);
		lfd = open(t->dev, O_RDWR | O_CLOEXEC);
		if (lfd < 0) {
			ret = -errno;
			sleep_ms(50);
			continue;
		}
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = ffd;
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR | (t->direct_io ? LO_FLAGS_DIRECT_IO : 0);
		snprintf((char *)cfg.info.lo_file_name, LO_NAME_SIZE, "%s", t->backing);
		if (!ioctl(lfd, LOOP_CONFIGURE, &cfg)) {
			t->lfd = lfd;
			ret = 0;
			break;
		}
		ret = -errno;
		close(lfd);
		if (ret == -EINVAL && t->direct_io) {
			t->direct_io = 0; /* the backing fs cannot do direct IO */
			continue;
		}
		if (ret != -EBUSY)
			break;
	}
	close(ctl);
	close(ffd);
	if (ret)
		return ret;
	fstat(t->lfd, &st);
	t->maj = major(st.st_rdev);
	t->min = minor(st.st_rdev);
	snprintf(t->name, sizeof(t->name), "%s", t->dev + 5);
	return 0;
}

static void loop_detach(struct target *t)
{
	if (t->lfd < 0)
		return;
	ioctl(t->lfd, LOOP_CLR_FD, 0);
	close(t->lfd);
	t->lfd = -1;
}

static void rm_tree_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char p[PATH_MAX + 256];

		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

static int target_setup(struct bench *b, int ram, char *err, size_t n)
{
	struct target *t = &b->tg[b->shared_target ? 0 : ram];
	const char *base = ram ? "/dev/shm" : "/var/tmp";
	int ret;

	if (t->ready)
		return 0;
	if (t->failed) {
		snprintf(err, n, "target setup failed before");
		return -EIO;
	}
	t->failed = 1;
	t->lfd = -1;
	if (b->o.target)
		base = "/var/tmp";
	snprintf(t->workdir, sizeof(t->workdir), "%s/iotracer-bench.XXXXXX", base);
	if (!mkdtemp(t->workdir)) {
		snprintf(err, n, "mkdtemp %s: %s", t->workdir, strerror(errno));
		t->workdir[0] = '\0';
		return -errno;
	}
	if (b->o.target) {
		struct stat st;
		char why[256];

		if (!stat(b->o.target, &st) && S_ISBLK(st.st_mode)) {
			int fd;

			if ((ret = check_device(major(st.st_rdev), minor(st.st_rdev), why,
						sizeof(why)))) {
				snprintf(err, n, "refusing %.200s: %.200s", b->o.target, why);
				return ret;
			}
			fd = open(b->o.target, O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				snprintf(err, n, "%s: %s", b->o.target, strerror(errno));
				return -errno;
			}
			ret = b->o.force ? 0 : check_signature(fd, why, sizeof(why));
			close(fd);
			if (ret) {
				snprintf(
					err, n,
					"refusing %.200s: %.200s (bench writes to the target; --force to overwrite)",
					b->o.target, why);
				return ret;
			}
			snprintf(t->dev, sizeof(t->dev), "%s", b->o.target);
			t->maj = major(st.st_rdev);
			t->min = minor(st.st_rdev);
			if (parse_dev_name(IT_MKDEV_BENCH(t->maj, t->min), NULL, t->name,
					   sizeof(t->name)))
				snprintf(t->name, sizeof(t->name), "%u:%u", t->maj, t->min);
			snprintf(t->desc, sizeof(t->desc), "%s (%u:%u, user device)", b->o.target,
				 t->maj, t->min);
			t->ready = 1;
			t->failed = 0;
			return 0;
		}
		if (!stat(b->o.target, &st) && !S_ISREG(st.st_mode)) {
			snprintf(err, n, "%s: not a block device or regular file", b->o.target);
			return -EINVAL;
		}
		snprintf(t->backing, sizeof(t->backing), "%s", b->o.target);
		if (stat(b->o.target, &st)) {
			progress("creating %s (%" PRIu64 " MiB)", t->backing, b->o.size >> 20);
			if ((ret = fill_file(t->backing, b->o.size))) {
				snprintf(err, n, "cannot create %s: %s", t->backing,
					 strerror(-ret));
				unlink(t->backing);
				return ret;
			}
			t->created = 1;
		} else {
			int fd = open(b->o.target, O_RDONLY | O_CLOEXEC);

			ret = fd < 0 || b->o.force ? 0 : check_signature(fd, why, sizeof(why));
			if (fd >= 0)
				close(fd);
			if (ret) {
				snprintf(err, n, "refusing %.200s: %.200s (--force to overwrite)",
					 b->o.target, why);
				return ret;
			}
			if (st.st_size < (off_t)(64 << 20)) {
				snprintf(err, n, "%s: smaller than 64 MiB", b->o.target);
				return -EINVAL;
			}
		}
	} else {
		char wd[PATH_MAX];

		memcpy(wd, t->workdir, sizeof(wd));
		if (snprintf(t->backing, sizeof(t->backing), "%s/loop.img", wd) >=
		    (int)sizeof(t->backing)) {
			snprintf(err, n, "path too long");
			return -ENAMETOOLONG;
		}
		progress("creating a %" PRIu64 " MiB backing file in %s (%s)", b->o.size >> 20,
			 base, ram ? "tmpfs, RAM" : "the root disk's file system");
		if ((ret = fill_file(t->backing, b->o.size))) {
			snprintf(err, n, "cannot create %s: %s", t->backing, strerror(-ret));
			unlink(t->backing);
			return ret;
		}
		t->created = 1;
	}
	if ((ret = loop_attach(t))) {
		snprintf(err, n, "cannot set up a loop device over %s: %s", t->backing,
			 strerror(-ret));
		if (t->created)
			unlink(t->backing);
		return ret;
	}
	/* the loop device keeps the file open: remove its name now, nothing is left behind */
	if (t->created && !b->o.target)
		unlink(t->backing);
	{
		char desc[sizeof(t->desc)];

		snprintf(desc, sizeof(desc), "%s over %s%s (%" PRIu64 " MiB, %s, direct-io %s)",
			 t->dev, t->backing, t->created && !b->o.target ? " (unlinked)" : "",
			 b->o.size >> 20, on_tmpfs(t->workdir) ? "tmpfs/RAM" : "disk",
			 t->direct_io ? "on" : "off");
		memcpy(t->desc, desc, sizeof(desc));
	}
	progress("target: %s", t->desc);
	t->ready = 1;
	t->failed = 0;
	return 0;
}

static void targets_cleanup(struct bench *b)
{
	for (int i = 0; i < 2; i++) {
		struct target *t = &b->tg[i];

		if (!t->ready && !t->failed)
			continue;
		loop_detach(t);
		if (t->created && b->o.target && i == 0)
			unlink(t->backing);
		if (t->workdir[0] && !b->o.keep)
			rm_tree_files(t->workdir);
		else if (t->workdir[0])
			progress("kept %s", t->workdir);
		t->ready = t->failed = 0;
		if (b->shared_target)
			break;
	}
}

/* ================================================================ one run */

#define MAX_ARGS 64

/* Split a space-separated option string into argv (words are pointers into a copy). */
static int split_args(char *s, char **argv, int max)
{
	int n = 0;

	for (char *tok = strtok(s, " "); tok && n < max - 1; tok = strtok(NULL, " "))
		argv[n++] = tok;
	argv[n] = NULL;
	return n;
}

/* The tracer's command line into argv (strings in store). Returns argc or -errno. */
/*
 * Requests a block device completed so far, from /sys/class/block/NAME/stat:
 * reads + writes + discards + flushes (fields 1, 5, 12 and 16; the last two
 * since 4.18 and 5.5). -1 if unreadable.
 */
static int64_t blk_completed(const char *dev)
{
	const char *name = strrchr(dev, '/');
	char path[PATH_MAX], *txt, *p, *end;
	unsigned long long f[16] = { 0 };
	int n = 0;

	snprintf(path, sizeof(path), "/sys/class/block/%s/stat", name ? name + 1 : dev);
	txt = read_file(path, NULL);
	if (!txt)
		return -1;
	for (p = txt; n < 16; n++, p = end) {
		f[n] = strtoull(p, &end, 10);
		if (end == p)
			break;
	}
	free(txt);
	return n >= 5 ? (int64_t)(f[0] + f[4] + f[11] + f[15]) : -1;
}

/* Does the run's tracer follow fio's requests (the syscall layer, which fs and sched pull in)? */
static int traces_requests(const struct run *r)
{
	const char *l = g_tr[r->tr].layers;

	return !l[0] || strstr(l, "all") || strstr(l, "syscall") || strstr(l, "fs") ||
	       strstr(l, "sched");
}

/*
 * Records an iotracer run lost without counting them, against oracles it did
 * not compute: the requests the device completed (its stat) against block
 * records + counted block drops, and fio's IOs against syscall, io_uring and
 * aio records + the other counted drops. -1 when a figure is missing.
 */
static void run_unreported(const struct run *r, int64_t *blk, int64_t *req)
{
	const struct tracer_sum *s = &r->sum;

	*blk = *req = -1;
	if (!r->ok || s->drops < 0) /* drops known: drops_block and drops_other are too */
		return;
	if (r->blk_ios >= 0 && s->rec_block >= 0) {
		*blk = r->blk_ios - s->rec_block - s->drops_block;
		*blk = *blk > 0 ? *blk : 0;
	}
	if (s->rec_syscall >= 0 && s->rec_uring >= 0 && s->rec_aio >= 0 && traces_requests(r)) {
		*req = (int64_t)r->fio.ios - s->rec_syscall - s->rec_uring - s->rec_aio -
		       s->drops_other;
		*req = *req > 0 ? *req : 0;
	}
}

static int tracer_argv(struct bench *b, const struct tracer *tr, const struct target *t,
		       const char *json, char **argv, char store[][PATH_MAX + 64])
{
	int n = 0, s = 0;

	switch (tr->k) {
	case T_IOT:
	case T_IOT_NOJSON:
		/* this very binary, even if the file was replaced since we started */
		argv[n++] = tr->exe[0] ? (char *)tr->exe : "/proc/self/exe";
		argv[n++] = "-q";
		argv[n++] = "--no-live";
		if (tr->k == T_IOT) {
			argv[n++] = "-j";
			snprintf(store[s], sizeof(store[0]), "%s", json);
			argv[n++] = store[s++];
		}
		argv[n++] = "-d";
		argv[n++] = (char *)t->dev;
		if (tr->layers[0]) {
			argv[n++] = "-l";
			argv[n++] = (char *)tr->layers;
		}
		break;
	case T_BT_HIST:
	case T_BT_PRINT:
		argv[n++] = b->bpftrace;
		snprintf(store[s], sizeof(store[0]), "%s/%s", b->tools,
			 tr->k == T_BT_HIST ? "blk_lat_hist.bt" : "blk_io_print.bt");
		argv[n++] = store[s++];
		snprintf(store[s], sizeof(store[0]), "%u", IT_MKDEV_BENCH(t->maj, t->min));
		argv[n++] = store[s++];
		break;
	default:
		return -EINVAL;
	}
	argv[n] = NULL;
	return n;
}

/*
 * Wait until the tracer has loaded and attached: its BPF program fds exist
 * and the number of its program/link/perf-event fds has not changed for
 * 600 ms. -ECHILD if it exited, -ETIMEDOUT.
 */
static int wait_attached(pid_t pid, int timeout_ms)
{
	long last = -1;
	int stable = 0;

	for (int waited = 0; waited < timeout_ms && !g_stop; waited += 100) {
		int progs, links, perf, st;
		long sig;

		if (waitpid(pid, &st, WNOHANG) == pid) {
			kids_del(pid);
			return -ECHILD;
		}
		if (bpf_fd_counts(pid, &progs, &links, &perf))
			return -ECHILD;
		sig = progs * 1000000L + links * 1000L + perf;
		if (progs > 0 && sig == last) {
			if (++stable >= 6)
				return 0;
		} else {
			stable = 0;
		}
		last = sig;
		sleep_ms(100);
	}
	return g_stop ? -EINTR : -ETIMEDOUT;
}

static void tail_of(const char *path, char *buf, size_t n)
{
	size_t len;
	char *t = read_tail(path, n - 1, &len);

	buf[0] = '\0';
	if (!t)
		return;
	for (size_t i = 0; i < len; i++)
		if (t[i] == '\n' || t[i] == '\r')
			t[i] = ' ';
	snprintf(buf, n, "%s", t);
	free(t);
}

static int run_one(struct bench *b, int wl, int tri, int round, int stats, struct run *r)
{
	const struct workload *w = &g_wls[wl];
	const struct tracer *tr = &g_tr[tri];
	struct target *t;
	char fio_json[PATH_MAX + 64], fio_out[PATH_MAX + 64], tr_out[PATH_MAX + 64],
		tr_err[PATH_MAX + 64], tr_json[PATH_MAX + 64], runtime[32], filename[96],
		out_opt[PATH_MAX + 80];
	char argstore[4][PATH_MAX + 64], *targv[MAX_ARGS], *fargv[MAX_ARGS], *wargs = NULL;
	struct bench_prog p0[BENCH_MAX_PROGS], p1[BENCH_MAX_PROGS];
	int n0 = 0, n1 = 0, st = 0, sfd = -1, ret, fa = 0;
	struct cpu_snap s0, s1;
	uint64_t c0 = 0, c1 = 0;
	int64_t blk0, blk1;
	pid_t tpid = 0, fpid;
	char err[1024];
	static int seq;

	memset(r, 0, sizeof(*r));
	r->wl = wl;
	r->tr = tri;
	r->round = round;
	r->stats = stats;
	r->rss_anon_kb = r->hwm_kb = r->blk_ios = -1;
	r->sum.requests = r->sum.records = r->sum.drops = -1;
	r->busy_pct = r->busy_ns = r->tracer_cpu_pct = NAN;
	r->fio.lat_mean_ns = r->fio.lat_p99_ns = NAN;

	if ((ret = target_setup(b, w->ram, err, sizeof(err)))) {
		snprintf(r->err, sizeof(r->err), "%.250s", err);
		return ret;
	}
	t = &b->tg[b->shared_target ? 0 : w->ram];
	seq++;
	snprintf(fio_json, sizeof(fio_json), "%s/fio.%d.json", t->workdir, seq);
	snprintf(fio_out, sizeof(fio_out), "%s/fio.%d.out", t->workdir, seq);
	snprintf(tr_out, sizeof(tr_out), "%s/tracer.%d.out", t->workdir, seq);
	snprintf(tr_err, sizeof(tr_err), "%s/tracer.%d.err", t->workdir, seq);
	snprintf(tr_json, sizeof(tr_json), "%s/tracer.%d.json", t->workdir, seq);

	/* fio: global options, then the workload's jobs */
	snprintf(out_opt, sizeof(out_opt), "--output=%s", fio_json);
	snprintf(filename, sizeof(filename), "--filename=%s", t->dev);
	snprintf(runtime, sizeof(runtime), "--runtime=%" PRIu64 "ms", b->o.runtime_ns / 1000000);
	fargv[fa++] = "fio";
	fargv[fa++] = "--output-format=json";
	fargv[fa++] = out_opt;
	fargv[fa++] = filename;
	fargv[fa++] = "--time_based";
	fargv[fa++] = runtime;
	fargv[fa++] = "--norandommap";
	fargv[fa++] = "--randrepeat=0";
	wargs = strdup(w->args);
	if (!wargs)
		return -ENOMEM;
	split_args(wargs, fargv + fa, MAX_ARGS - fa);

	if (tr->k != T_NONE) {
		if (tracer_argv(b, tr, t, tr_json, targv, argstore) < 0) {
			snprintf(r->err, sizeof(r->err), "bad tracer");
			goto out;
		}
		tpid = spawn(targv, tr_out, tr_err);
		if (tpid < 0) {
			snprintf(r->err, sizeof(r->err), "cannot start %s: %s", tr->name,
				 strerror(-tpid));
			tpid = 0;
			goto out;
		}
		ret = wait_attached(tpid, 60000);
		if (ret) {
			char tail[200];

			tail_of(tr_err, tail, sizeof(tail));
			snprintf(r->err, sizeof(r->err), "%s %s: %s", tr->name,
				 ret == -ECHILD ? "exited before attaching" : "did not attach",
				 tail);
			goto out;
		}
		sleep_ms(200);
	}
	if (stats) {
		sfd = stats_on();
		if (sfd < 0) {
			snprintf(r->err, sizeof(r->err), "cannot enable BPF run-time statistics");
			goto out;
		}
	}
	if (tpid) {
		n0 = prog_snapshot(tpid, p0, BENCH_MAX_PROGS, 1);
		c0 = bench_proc_cpu_ns(tpid);
	}
	r->sys_progs = system_prog_count();
	r->load1 = loadavg1();
	blk0 = blk_completed(t->dev);
	cpu_snapshot(&s0);
	fpid = spawn(fargv, fio_out, fio_out);
	if (fpid < 0) {
		snprintf(r->err, sizeof(r->err), "cannot start fio: %s", strerror(-fpid));
		goto out;
	}
	ret = wait_fio(fpid, (unsigned)(b->o.runtime_ns / 1000000000ull) + 90, &st);
	cpu_snapshot(&s1);
	blk1 = blk_completed(t->dev);
	r->blk_ios = blk0 >= 0 && blk1 >= blk0 ? blk1 - blk0 : -1;
	if (tpid) {
		c1 = bench_proc_cpu_ns(tpid);
		n1 = prog_snapshot(tpid, p1, BENCH_MAX_PROGS, 0);
		proc_mem(tpid, &r->rss_anon_kb, &r->hwm_kb);
	}
	if (sfd >= 0) {
		stats_off(sfd);
		sfd = -1;
	}
	if (ret) {
		snprintf(r->err, sizeof(r->err), "fio %s",
			 ret == -EINTR ? "interrupted" : "timed out");
		goto out;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		char tail[200];

		tail_of(fio_out, tail, sizeof(tail));
		snprintf(r->err, sizeof(r->err), "fio failed (status 0x%x): %s", st, tail);
		goto out;
	}
	if (tpid) {
		int tst = 0;

		/* bpftrace prints its maps on SIGINT; iotracer ends on SIGTERM */
		ret = stop_child(tpid, tr->k == T_BT_HIST || tr->k == T_BT_PRINT ? SIGINT : SIGTERM,
				 30000, &tst);
		tpid = 0;
		if (ret || !WIFEXITED(tst) || WEXITSTATUS(tst)) {
			char tail[200];

			tail_of(tr_err, tail, sizeof(tail));
			snprintf(r->err, sizeof(r->err),
				 "%s did not exit cleanly (status 0x%x): %s", tr->name, tst, tail);
			goto out;
		}
	}
	/* results */
	{
		size_t len;
		char *txt = read_file(fio_json, &len);

		if (!txt || bench_parse_fio(txt, len, &r->fio) || !r->fio.jobs) {
			snprintf(r->err, sizeof(r->err), "cannot parse fio's JSON output");
			free(txt);
			goto out;
		}
		free(txt);
		if (r->fio.errors) {
			snprintf(r->err, sizeof(r->err), "fio reported %" PRIu64 " job errors",
				 r->fio.errors);
			goto out;
		}
	}
	r->elapsed_s = (s1.t_ns - s0.t_ns) / 1e9;
	r->busy_ns = bench_busy_ns(&s0, &s1, b->user_hz);
	r->busy_pct = bench_busy_pct(&s0, &s1, b->user_hz);
	if (tr->k != T_NONE) {
		r->tracer_cpu_ns = c1 >= c0 ? c1 - c0 : 0;
		r->tracer_cpu_pct = 100.0 * r->tracer_cpu_ns / (double)(s1.t_ns - s0.t_ns);
	}
	if (tr->k == T_IOT || tr->k == T_IOT_NOJSON) {
		size_t len;
		char *txt = read_tail(tr->k == T_IOT ? tr_json : tr_out, 8 << 20, &len);

		if (!txt || bench_parse_tracer_summary(txt, len, &r->sum)) {
			snprintf(r->err, sizeof(r->err), "no final summary in %s's output",
				 tr->name);
			free(txt);
			goto out;
		}
		free(txt);
	}
	if (stats && n1 > 0) {
		r->progs = calloc(n1, sizeof(*r->progs));
		for (int i = 0; r->progs && i < n1; i++) {
			struct bench_prog *d = &r->progs[r->nprogs++];

			*d = p1[i];
			d->run_time_ns = d->run_cnt = 0;
			for (int j = 0; j < n0; j++)
				if (p0[j].id == p1[i].id) {
					snprintf(d->name, sizeof(d->name), "%s", p0[j].name);
					d->run_time_ns = p1[i].run_time_ns - p0[j].run_time_ns;
					d->run_cnt = p1[i].run_cnt - p0[j].run_cnt;
				}
			if (!d->name[0])
				prog_name(d->id, d->name, sizeof(d->name));
			r->bpf_ns += d->run_time_ns;
			r->bpf_cnt += d->run_cnt;
		}
	}
	r->ok = 1;
out:
	if (sfd >= 0)
		stats_off(sfd);
	if (tpid)
		stop_child(tpid, SIGTERM, 10000, NULL);
	free(wargs);
	if (!b->o.keep) {
		unlink(fio_json);
		unlink(fio_out);
		unlink(tr_out);
		unlink(tr_err);
		unlink(tr_json);
	}
	return r->ok ? 0 : -EIO;
}

/* ================================================================ aggregation */

struct agg {
	int wl, tr, pairs, nfail;
	struct bstat iops, ratio, lat_mean, lat_p99, busy, added, tcpu, cpu_ns_io, added_ns_io,
		daemon_ns_io, records, bpf_ns_io, bpf_runs_io;
	int64_t rss_max, hwm_max, drops_total;
	const struct run *stats_run; /* last good BPF statistics run */
	const char *err; /* last error */
};

static int g_none = -1; /* index of the "none" tracer */

static const struct run *find_run(const struct bench *b, int wl, int tr, int round, int stats)
{
	for (int i = 0; i < b->nruns; i++) {
		const struct run *r = &b->runs[i];

		if (r->wl == wl && r->tr == tr && r->round == round && r->stats == stats && r->ok)
			return r;
	}
	return NULL;
}

static void aggregate(const struct bench *b, int wl, int tr, struct agg *a)
{
	int n = b->nruns + 1, k = 0, ks = 0;
	double *v[13];

	memset(a, 0, sizeof(*a));
	a->wl = wl;
	a->tr = tr;
	a->rss_max = a->hwm_max = -1;
	for (int i = 0; i < 13; i++)
		v[i] = calloc(n, sizeof(double));
	for (int i = 0; i < 13; i++)
		if (!v[i])
			goto out;
	for (int i = 0; i < b->nruns; i++) {
		const struct run *r = &b->runs[i], *base;
		double ios;

		if (r->wl != wl || r->tr != tr)
			continue;
		if (!r->ok) {
			a->nfail++;
			a->err = r->err;
			continue;
		}
		ios = r->fio.ios ? (double)r->fio.ios : NAN;
		if (r->tr != g_none) {
			if (r->rss_anon_kb > a->rss_max)
				a->rss_max = r->rss_anon_kb;
			if (r->hwm_kb > a->hwm_max)
				a->hwm_max = r->hwm_kb;
			if (r->sum.drops >= 0)
				a->drops_total =
					(a->drops_total < 0 ? 0 : a->drops_total) + r->sum.drops;
			else if (g_tr[tr].k == T_IOT || g_tr[tr].k == T_IOT_NOJSON)
				a->drops_total = -1;
		}
		if (r->stats) {
			v[11][ks] = r->bpf_ns / ios;
			v[12][ks++] = r->bpf_cnt / ios;
			a->stats_run = r;
			continue;
		}
		base = find_run(b, wl, g_none, r->round, 0);
		v[0][k] = r->fio.iops;
		v[1][k] = base && tr != g_none ? r->fio.iops / base->fio.iops : NAN;
		v[2][k] = r->fio.lat_mean_ns;
		v[3][k] = r->fio.lat_p99_ns;
		v[4][k] = r->busy_pct;
		v[5][k] = base && tr != g_none ? r->busy_pct - base->busy_pct : NAN;
		v[6][k] = tr != g_none ? r->tracer_cpu_pct : NAN;
		v[7][k] = r->busy_ns / ios;
		v[8][k] = base && tr != g_none ?
				  r->busy_ns / ios - base->busy_ns / (double)base->fio.ios :
				  NAN;
		v[9][k] = tr != g_none ? r->tracer_cpu_ns / ios : NAN;
		v[10][k] = r->sum.records >= 0	? (double)r->sum.records :
			   r->sum.requests >= 0 ? (double)r->sum.requests :
						  NAN;
		k++;
	}
	a->pairs = k;
	bench_stat(v[0], k, &a->iops);
	bench_stat(v[1], k, &a->ratio);
	bench_stat(v[2], k, &a->lat_mean);
	bench_stat(v[3], k, &a->lat_p99);
	bench_stat(v[4], k, &a->busy);
	bench_stat(v[5], k, &a->added);
	bench_stat(v[6], k, &a->tcpu);
	bench_stat(v[7], k, &a->cpu_ns_io);
	bench_stat(v[8], k, &a->added_ns_io);
	bench_stat(v[9], k, &a->daemon_ns_io);
	bench_stat(v[10], k, &a->records);
	bench_stat(v[11], ks, &a->bpf_ns_io);
	bench_stat(v[12], ks, &a->bpf_runs_io);
out:
	for (int i = 0; i < 13; i++)
		free(v[i]);
}

/* ================================================================ text report */

static const char *fmt_ns(double ns, char *buf, size_t n)
{
	if (isnan(ns))
		snprintf(buf, n, "-");
	else
		parse_fmt_duration((uint64_t)(ns < 0 ? 0 : ns + 0.5), buf, n);
	return buf;
}

/* v with dec decimals (a sign when sign), "-" for NaN. */
static const char *fmt_num(double v, int dec, int sign, char *buf, size_t n)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else if (sign)
		snprintf(buf, n, "%+.*f", dec, v);
	else
		snprintf(buf, n, "%.*f", dec, v);
	return buf;
}

static const char *fmt_i64(int64_t v, char *buf, size_t n)
{
	if (v < 0)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%" PRId64, v);
	return buf;
}

static void print_workload(const struct bench *b, int wl, FILE *f)
{
	const struct workload *w = &g_wls[wl];
	const struct target *t = &b->tg[b->shared_target ? 0 : w->ram];
	char s[16][48];

	fprintf(f, "\n== %s [%s]: %s\n", w->name, preset_name(w->preset), w->desc);
	fprintf(f,
		"   target %s; %d round(s) x %.1f s; busy = whole system, average %% per core (%d cores); tracer CPU in %% of one core\n",
		t->desc, b->o.pairs, b->o.runtime_ns / 1e9, b->ncpu);
	fprintf(f, "%-22s %9s %-17s %6s %8s %8s %6s %-22s %7s %8s %8s %9s %5s %8s %7s %8s %8s\n",
		"tracer", "IOPS", "[min-max]", "ratio", "lat", "p99", "busy%",
		"added%/core [min..max]", "tracer%", "RssAnon", "VmHWM", "recs/run", "drops",
		"BPF/IO", "runs/IO", "daemon/IO", "CPU/IO");
	for (int tr = 0; tr < g_ntr; tr++) {
		struct agg a;
		char mm[48], add[64];

		if (!b->wl_tr[wl][tr])
			continue;
		if (!g_tr[tr].avail) {
			fprintf(f, "%-22s not run: %s\n", g_tr[tr].name, g_tr[tr].why);
			continue;
		}
		aggregate(b, wl, tr, &a);
		if (!a.pairs) {
			fprintf(f, "%-22s no successful run%s%s\n", g_tr[tr].name,
				a.err ? ": " : "", a.err ? a.err : "");
			continue;
		}
		snprintf(mm, sizeof(mm), "[%.0f-%.0f]", a.iops.min, a.iops.max);
		if (tr == g_none)
			snprintf(add, sizeof(add), "-");
		else
			snprintf(add, sizeof(add), "%+.2f [%+.2f..%+.2f]", a.added.med, a.added.min,
				 a.added.max);
		fprintf(f,
			"%-22s %9.0f %-17s %6s %8s %8s %6.2f %-22s %7s %8s %8s %9s %5s %8s %7s %8s %8s\n",
			g_tr[tr].name, a.iops.med, mm, fmt_num(a.ratio.med, 3, 0, s[0], 48),
			fmt_ns(a.lat_mean.med, s[1], 48), fmt_ns(a.lat_p99.med, s[2], 48),
			a.busy.med, add, fmt_num(a.tcpu.med, 2, 0, s[3], 48),
			fmt_i64(a.rss_max, s[4], 48), fmt_i64(a.hwm_max, s[5], 48),
			fmt_num(a.records.med, 0, 0, s[6], 48),
			tr == g_none ? "-" : fmt_i64(a.drops_total, s[7], 48),
			fmt_ns(a.bpf_ns_io.med, s[8], 48),
			fmt_num(a.bpf_runs_io.med, 2, 0, s[9], 48),
			fmt_ns(a.daemon_ns_io.med, s[10], 48), fmt_ns(a.cpu_ns_io.med, s[11], 48));
		if (a.nfail)
			fprintf(f, "%-22s   (%d run(s) failed: %s)\n", "", a.nfail,
				a.err ? a.err : "?");
	}
	/* where the BPF time goes */
	for (int tr = 0; tr < g_ntr; tr++) {
		struct agg a;
		const struct run *r;

		if (!b->wl_tr[wl][tr] || tr == g_none || !g_tr[tr].avail)
			continue;
		aggregate(b, wl, tr, &a);
		r = a.stats_run;
		if (!r || !r->nprogs || !r->fio.ios)
			continue;
		fprintf(f,
			"   BPF programs of %s (bpf_stats run, %" PRIu64
			" IOs, %.0f ns/IO in all):\n",
			g_tr[tr].name, r->fio.ios, r->bpf_ns / (double)r->fio.ios);
		fprintf(f, "      %-36s %8s %8s %8s\n", "program", "runs/IO", "ns/run", "ns/IO");
		for (int i = 0; i < r->nprogs; i++) {
			const struct bench_prog *p = &r->progs[i];

			if (!p->run_cnt)
				continue;
			fprintf(f, "      %-36s %8.2f %8.0f %8.1f\n", p->name,
				p->run_cnt / (double)r->fio.ios,
				p->run_time_ns / (double)p->run_cnt,
				p->run_time_ns / (double)r->fio.ios);
		}
	}
	fflush(f);
}

static void print_preset_summary(const struct bench *b, int preset, FILE *f)
{
	int metric = preset == P_REFERENCE ? M_CPU : M_IOPS, any = 0;

	for (int wl = 0; wl < NR_WLS; wl++)
		any |= b->wl_sel[wl] && g_wls[wl].preset == preset;
	if (!any)
		return;
	if (metric == M_CPU)
		fprintf(f,
			"\n== %s: whole-system CPU busy, average %% per core (%d cores), median of %d pair(s); with (added)\n",
			preset_name(preset), b->ncpu, b->o.pairs);
	else
		fprintf(f, "\n== %s: IOPS, median of %d pair(s); with (ratio with/without)\n",
			preset_name(preset), b->o.pairs);
	fprintf(f, "%-14s", "workload");
	for (int tr = 0; tr < g_ntr; tr++) {
		int used = 0;

		for (int wl = 0; wl < NR_WLS; wl++)
			used |= b->wl_sel[wl] && g_wls[wl].preset == preset && b->wl_tr[wl][tr];
		if (used)
			fprintf(f, " %22s", g_tr[tr].name);
	}
	fprintf(f, "\n");
	for (int wl = 0; wl < NR_WLS; wl++) {
		if (!b->wl_sel[wl] || g_wls[wl].preset != preset)
			continue;
		fprintf(f, "%-14s", g_wls[wl].name);
		for (int tr = 0; tr < g_ntr; tr++) {
			int used = 0;
			char cell[64];
			struct agg a;

			for (int w2 = 0; w2 < NR_WLS; w2++)
				used |= b->wl_sel[w2] && g_wls[w2].preset == preset &&
					b->wl_tr[w2][tr];
			if (!used)
				continue;
			if (!b->wl_tr[wl][tr]) {
				fprintf(f, " %22s", "");
				continue;
			}
			if (!g_tr[tr].avail) {
				fprintf(f, " %22s", "not installed");
				continue;
			}
			aggregate(b, wl, tr, &a);
			if (!a.pairs)
				snprintf(cell, sizeof(cell), "failed");
			else if (tr == g_none)
				snprintf(cell, sizeof(cell), metric == M_CPU ? "%.2f" : "%.0f",
					 metric == M_CPU ? a.busy.med : a.iops.med);
			else if (metric == M_CPU)
				snprintf(cell, sizeof(cell), "%.2f (%+.2f)", a.busy.med,
					 a.added.med);
			else
				snprintf(cell, sizeof(cell), "%.0f (%.3f)", a.iops.med,
					 a.ratio.med);
			fprintf(f, " %22s", cell);
		}
		fprintf(f, "\n");
	}
}

static void print_cost_table(const struct bench *b, FILE *f)
{
	char s[6][48];
	int hdr = 0;

	for (int wl = 0; wl < NR_WLS; wl++) {
		struct agg base;

		if (!b->wl_sel[wl])
			continue;
		aggregate(b, wl, g_none, &base);
		for (int tr = 0; tr < g_ntr; tr++) {
			struct agg a;

			if (!b->wl_tr[wl][tr] || tr == g_none || !g_tr[tr].avail)
				continue;
			aggregate(b, wl, tr, &a);
			if (!hdr) {
				fprintf(f,
					"\n== cost per IO (fio IOs): BPF run time (bpf_stats runs), tracer process CPU, added whole-system CPU\n");
				fprintf(f, "%-14s %-22s %10s %8s %10s %12s %14s\n", "workload",
					"tracer", "BPF ns/IO", "runs/IO", "daemon/IO",
					"added CPU/IO", "no-tracer CPU/IO");
				hdr = 1;
			}
			fprintf(f, "%-14s %-22s %10s %8s %10s %12s %14s\n", g_wls[wl].name,
				g_tr[tr].name, fmt_num(a.bpf_ns_io.med, 0, 0, s[0], 48),
				fmt_num(a.bpf_runs_io.med, 2, 0, s[1], 48),
				fmt_num(a.daemon_ns_io.med, 0, 0, s[2], 48),
				fmt_num(a.added_ns_io.med, 0, 1, s[3], 48),
				fmt_num(base.cpu_ns_io.med, 0, 0, s[4], 48));
		}
	}
}

/* ================================================================ targets of issue 5 */

struct check {
	char name[128];
	double value, limit;
	int le; /* value <= limit passes (else >=) */
	const char *unit;
	char unjudged[112]; /* why the value cannot be judged (printed, not MET/MISS); "" */
};

static int find_wl(const char *name)
{
	for (int i = 0; i < NR_WLS; i++)
		if (!strcmp(g_wls[i].name, name))
			return i;
	return -1;
}

static int find_tr(const char *name)
{
	for (int i = 0; i < g_ntr; i++)
		if (!strcmp(g_tr[i].name, name))
			return i;
	return -1;
}

/* Median of a result, NAN if the cell was not run. */
static double cell(const struct bench *b, const char *wl, const char *tr, int what)
{
	int w = find_wl(wl), t = find_tr(tr);
	struct agg a;

	if (w < 0 || t < 0 || !b->wl_sel[w] || !b->wl_tr[w][t] || !g_tr[t].avail)
		return NAN;
	aggregate(b, w, t, &a);
	switch (what) {
	case 0:
		return a.added.med;
	case 1:
		return a.ratio.med;
	case 2:
		return a.bpf_ns_io.med;
	case 3:
		return a.iops.med;
	case 4:
		return a.daemon_ns_io.med;
	default:
		return NAN;
	}
}

/*
 * The measured reference check compares CPU at equal IO rates only if the
 * runs without a tracer held the asked rate: a disk that cannot (this lab's
 * root disk at ~8-12k IOPS) makes the pairs differ by their IO counts, and
 * the difference is noise. Then the check is shown, not judged.
 */
static void ref_unjudged(const struct bench *b, const struct workload *ref, struct check *c)
{
	double none = cell(b, ref->name, "none", 3);

	if (!isnan(none) && none < 0.97 * ref->asked_iops)
		snprintf(c->unjudged, sizeof(c->unjudged),
			 "not judged: without a tracer fio ran %.0f of %d IOPS asked", none,
			 ref->asked_iops);
}

static int collect_checks(const struct bench *b, struct check *c, int max)
{
	const struct workload *ref = &g_wls[find_wl("ref-rand")];
	int n = 0;
	double v, hist;

#define ADD(nm, val, lim, le_, u)                                         \
	do {                                                              \
		if (n < max && !isnan(val)) {                             \
			snprintf(c[n].name, sizeof(c[n].name), "%s", nm); \
			c[n].value = (val);                               \
			c[n].limit = (lim);                               \
			c[n].le = (le_);                                  \
			c[n].unit = (u);                                  \
			c[n].unjudged[0] = 0;                             \
			n++;                                              \
		}                                                         \
	} while (0)

	v = cell(b, ref->name, "iotracer", 0);
	ADD("reference load (ref-rand): added CPU, iotracer all layers", v, 0.5, 1, "%/core");
	if (!isnan(v) && n)
		ref_unjudged(b, ref, &c[n - 1]);
	/*
	 * The same target from the per-IO costs, which noise barely moves: BPF
	 * run time plus the daemon's CPU per IO, at the asked rate. A lower bound
	 * of the added CPU (no cache or scheduling side effects).
	 */
	v = cell(b, ref->name, "iotracer", 2) + cell(b, ref->name, "iotracer", 4);
	ADD("reference load (ref-rand): (BPF + daemon) per IO x asked IOPS",
	    v * ref->asked_iops / 1e9 / (b->ncpu > 0 ? b->ncpu : 1) * 100, 0.5, 1, "%/core");
	ADD("max rate psync QD1: IOPS ratio, iotracer all layers",
	    cell(b, "max-psync", "iotracer", 1), 0.95, 0, "");
	ADD("max rate io_uring QD32: IOPS ratio, iotracer all layers",
	    cell(b, "max-uring", "iotracer", 1), 0.90, 0, "");
	v = cell(b, "max-psync", "iotracer", 2);
	if (isnan(v))
		v = cell(b, "layers-psync", "iotracer", 2);
	ADD("BPF run time per IO, all layers (psync, RAM loop)", v, 1500, 1, "ns");
	v = cell(b, "layers-psync", "iotracer:block", 2);
	ADD("BPF run time per IO, block layer alone (psync, RAM loop)", v, 600, 1, "ns");
	hist = cell(b, "max-psync", "bpftrace-hist", 2);
	if (!isnan(v) && !isnan(hist))
		ADD("BPF per IO, block alone, below bpftrace-hist's (ratio)", v / hist, 1.0, 1,
		    "x");
	/* drops and memory over every iotracer run */
	{
		int64_t drops = -1, lost = -1, rss = -1;

		for (int i = 0; i < b->nruns; i++) {
			const struct run *r = &b->runs[i];
			int64_t ub, ur;

			if (!r->ok || (g_tr[r->tr].k != T_IOT && g_tr[r->tr].k != T_IOT_NOJSON))
				continue;
			if (r->sum.drops >= 0)
				drops = (drops < 0 ? 0 : drops) + r->sum.drops;
			if (r->rss_anon_kb > rss)
				rss = r->rss_anon_kb;
			run_unreported(r, &ub, &ur);
			if (ub >= 0 || ur >= 0)
				lost = (lost < 0 ? 0 : lost) + (ub > 0 ? ub : 0) + (ur > 0 ? ur : 0);
		}
		ADD("iotracer drops, all runs", drops < 0 ? NAN : (double)drops, 0, 1, "records");
		ADD("iotracer unreported drops (vs fio IOs and the device's stat)",
		    lost < 0 ? NAN : (double)lost, 0, 1, "records");
		ADD("iotracer RssAnon, max over runs", rss < 0 ? NAN : (double)rss, 2048, 1, "KiB");
	}
#undef ADD
	return n;
}

static int check_ok(const struct check *c)
{
	return c->le ? c->value <= c->limit : c->value >= c->limit;
}

static void print_checks(const struct bench *b, FILE *f)
{
	struct check c[16];
	int n = collect_checks(b, c, 16);

	if (!n)
		return;
	fprintf(f, "\n== targets (issue 5)\n");
	for (int i = 0; i < n; i++)
		fprintf(f, "%-4s %-62s %10.3f %s %g %s%s%s\n",
			c[i].unjudged[0] ? "n/a" : check_ok(&c[i]) ? "MET" : "MISS", c[i].name,
			c[i].value, c[i].le ? "<=" : ">=", c[i].limit, c[i].unit,
			c[i].unjudged[0] ? " -- " : "", c[i].unjudged);
}

/* ================================================================ JSON report */

static void jw_bstat(struct jw *w, const char *key, const struct bstat *s)
{
	jw_obj_begin(w, key);
	jw_double(w, "median", s->med);
	jw_double(w, "min", s->min);
	jw_double(w, "max", s->max);
	jw_i64(w, "n", s->n);
	jw_obj_end(w);
}

static void jw_i64_or_null(struct jw *w, const char *key, int64_t v)
{
	if (v < 0)
		jw_null(w, key);
	else
		jw_i64(w, key, v);
}

static const char *kind_name(enum tkind k)
{
	static const char *const n[] = { "none", "iotracer", "iotracer-nojson", "bpftrace-hist",
					 "bpftrace-print" };

	return n[k];
}

static int write_json(const struct bench *b, const char *path, int complete)
{
	struct jw w;
	struct utsname u;
	struct check c[16];
	int nc, ret;

	jw_init(&w);
	jw_obj_begin(&w, NULL);
	jw_str(&w, "type", "iotracer-bench");
	jw_u64(&w, "format", 1);
	jw_str(&w, "version", IT_VERSION);
	jw_bool(&w, "complete", complete);
	jw_obj_begin(&w, "host");
	if (!uname(&u)) {
		jw_str(&w, "kernel", u.release);
		jw_str(&w, "machine", u.machine);
	}
	jw_i64(&w, "ncpu", b->ncpu);
	jw_i64(&w, "user_hz", b->user_hz);
	jw_obj_end(&w);

	jw_obj_begin(&w, "config");
	jw_bool(&w, "quick", b->o.quick);
	jw_i64(&w, "pairs", b->o.pairs);
	jw_double(&w, "runtime_s", b->o.runtime_ns / 1e9);
	jw_u64(&w, "size_bytes", b->o.size);
	jw_str(&w, "target", b->o.target);
	jw_bool(&w, "bpf_stats_runs", b->o.bpf_stats);
	jw_arr_begin(&w, "presets");
	for (int p = P_REFERENCE; p <= P_LAYERS; p <<= 1)
		if (b->o.presets & p)
			jw_str(&w, NULL, preset_name(p));
	jw_arr_end(&w);
	jw_obj_end(&w);

	jw_arr_begin(&w, "targets");
	for (int i = 0; i < (b->shared_target ? 1 : 2); i++) {
		const struct target *t = &b->tg[i];

		if (!t->dev[0])
			continue;
		jw_obj_begin(&w, NULL);
		jw_str(&w, "kind", b->shared_target ? "user" : i ? "ram" : "disk");
		jw_str(&w, "dev", t->dev);
		jw_str(&w, "backing", t->backing[0] ? t->backing : NULL);
		jw_bool(&w, "direct_io", t->direct_io);
		jw_str(&w, "desc", t->desc);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);

	jw_arr_begin(&w, "workloads");
	for (int wl = 0; wl < NR_WLS; wl++) {
		if (!b->wl_sel[wl])
			continue;
		jw_obj_begin(&w, NULL);
		jw_str(&w, "name", g_wls[wl].name);
		jw_str(&w, "preset", preset_name(g_wls[wl].preset));
		jw_str(&w, "desc", g_wls[wl].desc);
		jw_str(&w, "metric", g_wls[wl].metric == M_CPU ? "cpu" : "iops");
		jw_bool(&w, "ram", g_wls[wl].ram);
		jw_str(&w, "fio_args", g_wls[wl].args);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);

	jw_arr_begin(&w, "tracers");
	for (int tr = 0; tr < g_ntr; tr++) {
		jw_obj_begin(&w, NULL);
		jw_str(&w, "name", g_tr[tr].name);
		jw_str(&w, "kind", kind_name(g_tr[tr].k));
		jw_str(&w, "layers", g_tr[tr].layers[0] ? g_tr[tr].layers : "all");
		jw_bool(&w, "available", g_tr[tr].avail);
		if (!g_tr[tr].avail)
			jw_str(&w, "why", g_tr[tr].why);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);

	jw_arr_begin(&w, "runs");
	for (int i = 0; i < b->nruns; i++) {
		const struct run *r = &b->runs[i];

		jw_obj_begin(&w, NULL);
		jw_str(&w, "workload", g_wls[r->wl].name);
		jw_str(&w, "preset", preset_name(g_wls[r->wl].preset));
		jw_str(&w, "tracer", g_tr[r->tr].name);
		jw_i64(&w, "round", r->round);
		jw_bool(&w, "bpf_stats", r->stats);
		jw_bool(&w, "ok", r->ok);
		if (!r->ok)
			jw_str(&w, "error", r->err);
		jw_double(&w, "iops", r->fio.iops);
		jw_u64(&w, "ios", r->fio.ios);
		jw_i64(&w, "fio_jobs", r->fio.jobs);
		jw_double(&w, "lat_mean_ns", r->fio.lat_mean_ns);
		jw_double(&w, "lat_p99_ns", r->fio.lat_p99_ns);
		jw_double(&w, "elapsed_s", r->elapsed_s);
		jw_double(&w, "busy_pct", r->busy_pct);
		jw_double(&w, "busy_cpu_ns", r->busy_ns);
		jw_i64(&w, "system_bpf_progs", r->sys_progs);
		jw_double(&w, "loadavg1_before", r->load1);
		jw_i64_or_null(&w, "blk_ios", r->blk_ios);
		if (g_tr[r->tr].k == T_IOT || g_tr[r->tr].k == T_IOT_NOJSON) {
			int64_t ub, ur;

			run_unreported(r, &ub, &ur);
			jw_i64_or_null(&w, "unreported_block", ub);
			jw_i64_or_null(&w, "unreported_requests", ur);
		}
		if (g_tr[r->tr].k != T_NONE) {
			jw_u64(&w, "tracer_cpu_ns", r->tracer_cpu_ns);
			jw_double(&w, "tracer_cpu_pct", r->tracer_cpu_pct);
			jw_i64_or_null(&w, "rss_anon_kb", r->rss_anon_kb);
			jw_i64_or_null(&w, "vmhwm_kb", r->hwm_kb);
			jw_i64_or_null(&w, "requests", r->sum.requests);
			jw_i64_or_null(&w, "records", r->sum.records);
			jw_i64_or_null(&w, "drops", r->sum.drops);
			if (r->sum.drops_detail[0])
				jw_str(&w, "drops_detail", r->sum.drops_detail);
		}
		if (r->stats) {
			jw_u64(&w, "bpf_run_time_ns", r->bpf_ns);
			jw_u64(&w, "bpf_run_cnt", r->bpf_cnt);
			jw_arr_begin(&w, "progs");
			for (int k = 0; k < r->nprogs; k++) {
				jw_obj_begin(&w, NULL);
				jw_u64(&w, "id", r->progs[k].id);
				jw_str(&w, "name", r->progs[k].name);
				jw_u64(&w, "run_time_ns", r->progs[k].run_time_ns);
				jw_u64(&w, "run_cnt", r->progs[k].run_cnt);
				jw_obj_end(&w);
			}
			jw_arr_end(&w);
		}
		jw_obj_end(&w);
	}
	jw_arr_end(&w);

	jw_arr_begin(&w, "results");
	for (int wl = 0; wl < NR_WLS; wl++) {
		if (!b->wl_sel[wl])
			continue;
		for (int tr = 0; tr < g_ntr; tr++) {
			struct agg a;

			if (!b->wl_tr[wl][tr])
				continue;
			aggregate(b, wl, tr, &a);
			jw_obj_begin(&w, NULL);
			jw_str(&w, "workload", g_wls[wl].name);
			jw_str(&w, "preset", preset_name(g_wls[wl].preset));
			jw_str(&w, "tracer", g_tr[tr].name);
			jw_bool(&w, "available", g_tr[tr].avail);
			jw_i64(&w, "pairs", a.pairs);
			jw_i64(&w, "failed_runs", a.nfail);
			jw_bstat(&w, "iops", &a.iops);
			jw_bstat(&w, "lat_mean_ns", &a.lat_mean);
			jw_bstat(&w, "lat_p99_ns", &a.lat_p99);
			jw_bstat(&w, "busy_pct", &a.busy);
			jw_bstat(&w, "cpu_ns_per_io", &a.cpu_ns_io);
			if (tr != g_none) {
				jw_bstat(&w, "iops_ratio", &a.ratio);
				jw_bstat(&w, "added_busy_pct", &a.added);
				jw_bstat(&w, "added_cpu_ns_per_io", &a.added_ns_io);
				jw_bstat(&w, "tracer_cpu_pct", &a.tcpu);
				jw_bstat(&w, "daemon_cpu_ns_per_io", &a.daemon_ns_io);
				jw_bstat(&w, "records_per_run", &a.records);
				jw_i64_or_null(&w, "drops_total", a.drops_total);
				jw_i64_or_null(&w, "rss_anon_kb_max", a.rss_max);
				jw_i64_or_null(&w, "vmhwm_kb_max", a.hwm_max);
				jw_bstat(&w, "bpf_ns_per_io", &a.bpf_ns_io);
				jw_bstat(&w, "bpf_runs_per_io", &a.bpf_runs_io);
				if (a.stats_run && a.stats_run->fio.ios) {
					const struct run *r = a.stats_run;

					jw_arr_begin(&w, "bpf_progs");
					for (int k = 0; k < r->nprogs; k++) {
						const struct bench_prog *p = &r->progs[k];

						jw_obj_begin(&w, NULL);
						jw_str(&w, "name", p->name);
						jw_double(&w, "runs_per_io",
							  p->run_cnt / (double)r->fio.ios);
						jw_double(&w, "ns_per_run",
							  p->run_cnt ? p->run_time_ns /
									       (double)p->run_cnt :
								       NAN);
						jw_double(&w, "ns_per_io",
							  p->run_time_ns / (double)r->fio.ios);
						jw_obj_end(&w);
					}
					jw_arr_end(&w);
				}
			}
			jw_obj_end(&w);
		}
	}
	jw_arr_end(&w);

	nc = collect_checks(b, c, 16);
	jw_arr_begin(&w, "checks");
	for (int i = 0; i < nc; i++) {
		jw_obj_begin(&w, NULL);
		jw_str(&w, "name", c[i].name);
		jw_double(&w, "value", c[i].value);
		jw_str(&w, "op", c[i].le ? "<=" : ">=");
		jw_double(&w, "limit", c[i].limit);
		jw_str(&w, "unit", c[i].unit);
		if (c[i].unjudged[0])
			jw_str(&w, "unjudged", c[i].unjudged);
		else
			jw_bool(&w, "met", check_ok(&c[i]));
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	if (jw_error(&w)) {
		jw_free(&w);
		return -ENOMEM;
	}
	{
		/* jsonw never ends with a newline */
		size_t len = jw_len(&w);
		char *buf = malloc(len + 1);

		if (!buf) {
			jw_free(&w);
			return -ENOMEM;
		}
		memcpy(buf, jw_data(&w), len);
		buf[len] = '\n';
		ret = write_file(path, buf, len + 1);
		free(buf);
	}
	jw_free(&w);
	return ret;
}

/* ================================================================ SVG report */

static int write_svg(const struct bench *b, const char *path)
{
	struct svg_bar *bars[3];
	struct svg_panel pan[3];
	char *labels, *doc;
	int nb[3] = { 0 }, np = 0, nl = 0, ret;
	size_t max = (size_t)NR_WLS * g_ntr + 1;
	static const char *const titles[3] = {
		"Added whole-system CPU, % per core (rate-limited workloads; bar = median, whisker = min-max)",
		"IOPS lost, % of the no-tracer IOPS (unthrottled workloads)",
		"BPF run time per IO, ns (bpf_stats runs)",
	};

	labels = calloc(max * 3, 48);
	for (int i = 0; i < 3; i++)
		bars[i] = calloc(max, sizeof(struct svg_bar));
	if (!labels || !bars[0] || !bars[1] || !bars[2]) {
		ret = -ENOMEM;
		goto out;
	}
	for (int wl = 0; wl < NR_WLS; wl++) {
		if (!b->wl_sel[wl])
			continue;
		for (int tr = 0; tr < g_ntr; tr++) {
			struct agg a;
			struct svg_bar *x;
			char *lab = labels + (size_t)48 * nl++;

			if (!b->wl_tr[wl][tr] || tr == g_none || !g_tr[tr].avail)
				continue;
			aggregate(b, wl, tr, &a);
			snprintf(lab, 48, "%s", g_tr[tr].name);
			if (g_wls[wl].metric == M_CPU) {
				x = &bars[0][nb[0]++];
				*x = (struct svg_bar){ g_wls[wl].name, lab,	    a.added.med,
						       a.added.min,    a.added.max, tr };
			} else {
				x = &bars[1][nb[1]++];
				*x = (struct svg_bar){
					g_wls[wl].name,		 lab,
					100 * (1 - a.ratio.med), 100 * (1 - a.ratio.max),
					100 * (1 - a.ratio.min), tr
				};
			}
			if (!isnan(a.bpf_ns_io.med)) {
				x = &bars[2][nb[2]++];
				*x = (struct svg_bar){
					g_wls[wl].name, lab, a.bpf_ns_io.med, NAN, NAN, tr
				};
			}
		}
	}
	for (int i = 0; i < 3; i++) {
		if (!nb[i])
			continue;
		pan[np] = (struct svg_panel){ titles[i], bars[i], nb[i], NAN, NULL };
		if (i == 0) {
			pan[np].limit = 0.5;
			pan[np].limit_label = "target 0.5 %/core";
		} else if (i == 1) {
			pan[np].limit = 5;
			pan[np].limit_label = "target: psync <= 5 %, io_uring <= 10 %";
		} else {
			pan[np].limit = 1500;
			pan[np].limit_label = "target 1500 ns (all layers)";
		}
		np++;
	}
	doc = svg_chart("iotracer bench: tracer overhead under fio", pan, np);
	if (!doc) {
		ret = -ENOMEM;
		goto out;
	}
	ret = write_file(path, doc, strlen(doc));
	free(doc);
out:
	free(labels);
	for (int i = 0; i < 3; i++)
		free(bars[i]);
	return ret;
}

/* ================================================================ main */

static void bench_usage(FILE *f)
{
	fprintf(f,
		"Usage: iotracer bench [options]\n"
		"Measure what a tracer costs under fio: runs each workload in rounds without and\n"
		"with every tracer (A B A B ...), reports medians and min-max. Needs root and fio.\n"
		"\n"
		"  --preset LIST       reference, maxrate, layers or all (comma list; default reference)\n"
		"  --quick             1 pair of 2 s runs, the first workload of each preset (for tests)\n"
		"  --pairs N           rounds of (none, tracer...) per workload (default 3)\n"
		"  --runtime DUR       fio run time of each run (default 10s; --quick 2s)\n"
		"  --tracers LIST      none,iotracer,iotracer-nojson,bpftrace-hist,bpftrace-print (default:\n"
		"                      all of them); iotracer:LAYERS (e.g. iotracer:syscall+block) for -l;\n"
		"                      iotracer@PATH[:LAYERS]: another iotracer build, side by side\n"
		"  --workloads LIST    only these workloads (ref-rand,ref-seq,ref-buffered,ref-12r1w,\n"
		"                      max-psync,max-uring,layers-psync)\n"
		"  --target DEV|FILE   run on this block device or file instead of a loop device over a\n"
		"                      file of our own (a device is written to; mounted devices, the root\n"
		"                      disk and devices with a file system are refused, see --force)\n"
		"  --size SIZE         size of the backing file (default 1G; --quick 256M)\n"
		"  --json FILE         write every raw sample and the aggregates as JSON\n"
		"  --svg FILE          write the overhead chart as SVG\n"
		"  --no-bpf-stats      skip the extra run per tracer with BPF run-time statistics on\n"
		"  --tools-dir DIR     where the bpftrace scripts are (default: tools/ next to the binary)\n"
		"  --force             allow a --target that holds a file system or partition table\n"
		"  --keep              keep the work directory (fio and tracer outputs)\n"
		"  -v, --verbose       print every command\n"
		"  -h, --help          this text\n"
		"\n"
		"Progress goes to stderr, the tables to stdout. See docs/bench.md.\n");
}

static int usage_err(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "iotracer bench: %s: %s '%s'\n", opt, why, val);
	return 2;
}

static int parse_presets(const char *s, unsigned *mask)
{
	char buf[128], *save = NULL;

	*mask = 0;
	if (strlen(s) >= sizeof(buf) || !*s)
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "reference"))
			*mask |= P_REFERENCE;
		else if (!strcmp(t, "maxrate"))
			*mask |= P_MAXRATE;
		else if (!strcmp(t, "layers"))
			*mask |= P_LAYERS;
		else if (!strcmp(t, "all"))
			*mask |= P_REFERENCE | P_MAXRATE | P_LAYERS;
		else
			return -EINVAL;
	}
	return *mask ? 0 : -EINVAL;
}

/* Add a tracer list to workload wl's runs. */
static int add_tracers(struct bench *b, int wl, const char *list)
{
	char buf[512], *save = NULL;

	if (strlen(list) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int i = tracer_get(t);

		if (i < 0)
			return i;
		b->wl_tr[wl][i] = 1;
	}
	return 0;
}

static struct run *new_run(struct bench *b)
{
	if (b->nruns == b->cap) {
		int cap = b->cap ? b->cap * 2 : 64;
		struct run *n = realloc(b->runs, cap * sizeof(*n));

		if (!n)
			return NULL;
		b->runs = n;
		b->cap = cap;
	}
	return &b->runs[b->nruns++];
}

static void report_run(struct bench *b, const struct run *r)
{
	char tag[128];

	b->done++;
	snprintf(tag, sizeof(tag), "[%d/%d] %s %s%s", b->done, b->total_planned, g_wls[r->wl].name,
		 g_tr[r->tr].name, r->stats ? " bpf-stats run" : "");
	if (!r->ok) {
		progress("%s round %d: FAILED: %s", tag, r->round + 1, r->err);
		return;
	}
	if (r->stats) {
		progress("%s: %.0f IOPS, BPF %.0f ns/IO (%.2f runs/IO)", tag, r->fio.iops,
			 r->fio.ios ? r->bpf_ns / (double)r->fio.ios : NAN,
			 r->fio.ios ? r->bpf_cnt / (double)r->fio.ios : NAN);
		return;
	}
	if (g_tr[r->tr].k == T_NONE)
		progress("%s round %d: %.0f IOPS, busy %.2f %%/core", tag, r->round + 1,
			 r->fio.iops, r->busy_pct);
	else
		progress(
			"%s round %d: %.0f IOPS, busy %.2f %%/core, tracer %.2f %% of a core, RssAnon %" PRId64
			" KiB, records %" PRId64 ", drops %" PRId64 "%s%s%s",
			tag, r->round + 1, r->fio.iops, r->busy_pct, r->tracer_cpu_pct,
			r->rss_anon_kb, r->sum.records >= 0 ? r->sum.records : r->sum.requests,
			r->sum.drops, r->sum.drops_detail[0] ? " (" : "", r->sum.drops_detail,
			r->sum.drops_detail[0] ? ")" : "");
}

int bench_main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "quick", no_argument, NULL, 'Q' },
		{ "target", required_argument, NULL, 't' },
		{ "pairs", required_argument, NULL, 'n' },
		{ "preset", required_argument, NULL, 'p' },
		{ "runtime", required_argument, NULL, 'r' },
		{ "json", required_argument, NULL, 'j' },
		{ "svg", required_argument, NULL, 's' },
		{ "tracers", required_argument, NULL, 'T' },
		{ "size", required_argument, NULL, 'S' },
		{ "workloads", required_argument, NULL, 'w' },
		{ "no-bpf-stats", no_argument, NULL, 'B' },
		{ "tools-dir", required_argument, NULL, 'D' },
		{ "keep", no_argument, NULL, 'k' },
		{ "force", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const default_tracers =
		"none,iotracer,iotracer-nojson,bpftrace-hist,bpftrace-print";
	static const char *const layer_tracers =
		"none,iotracer:syscall,iotracer:fs,iotracer:sched,iotracer:block,iotracer";
	struct bench *b = calloc(1, sizeof(*b));
	int runtime_set = 0, size_set = 0, pairs_set = 0, c, ret = 0;
	struct sigaction sa;
	uint64_t v;

	if (!b) {
		fprintf(stderr, "iotracer bench: out of memory\n");
		return 1;
	}
	b->o.pairs = 3;
	b->o.runtime_ns = 10ull * 1000000000;
	b->o.size = 1ull << 30;
	b->o.presets = P_REFERENCE;
	b->o.bpf_stats = 1;
	b->tg[0].lfd = b->tg[1].lfd = -1;
	g_ntr = 0;
	g_verbose = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vh", lopts, NULL)) != -1) {
		switch (c) {
		case 'Q':
			b->o.quick = 1;
			break;
		case 't':
			b->o.target = optarg;
			break;
		case 'n':
			if (parse_u64(optarg, 1, 100, &v)) {
				ret = usage_err("--pairs", optarg, "expected 1..100, got");
				goto out_free;
			}
			b->o.pairs = v;
			pairs_set = 1;
			break;
		case 'p':
			if (parse_presets(optarg, &b->o.presets)) {
				ret = usage_err("--preset", optarg,
						"expected reference, maxrate, layers or all, got");
				goto out_free;
			}
			break;
		case 'r':
			if (parse_duration(optarg, &v) || v < 1000000000ull ||
			    v > 3600ull * 1000000000) {
				ret = usage_err("--runtime", optarg,
						"expected a duration of 1s..1h, got");
				goto out_free;
			}
			b->o.runtime_ns = v;
			runtime_set = 1;
			break;
		case 'j':
			b->o.json = optarg;
			break;
		case 's':
			b->o.svg = optarg;
			break;
		case 'T':
			b->o.tracers = optarg;
			break;
		case 'S':
			if (parse_size(optarg, &v) || v < (64ull << 20) || v > (64ull << 30)) {
				ret = usage_err("--size", optarg,
						"expected a size of 64M..64G, got");
				goto out_free;
			}
			b->o.size = v;
			size_set = 1;
			break;
		case 'w':
			b->o.workloads = optarg;
			break;
		case 'B':
			b->o.bpf_stats = 0;
			break;
		case 'D':
			b->o.tools_dir = optarg;
			break;
		case 'k':
			b->o.keep = 1;
			break;
		case 'f':
			b->o.force = 1;
			break;
		case 'v':
			g_verbose = 1;
			break;
		case 'h':
			bench_usage(stdout);
			goto out_free;
		case ':':
			fprintf(stderr, "iotracer bench: option '%s' needs an argument\n",
				argv[optind - 1]);
			ret = 2;
			goto out_free;
		default:
			fprintf(stderr,
				"iotracer bench: unknown option '%s'\nTry 'iotracer bench --help'.\n",
				argv[optind - 1]);
			ret = 2;
			goto out_free;
		}
	}
	if (optind < argc) {
		ret = usage_err("bench", argv[optind], "unexpected argument");
		goto out_free;
	}
	if (b->o.quick) {
		if (!pairs_set)
			b->o.pairs = 1;
		if (!runtime_set)
			b->o.runtime_ns = 2ull * 1000000000;
		if (!size_set)
			b->o.size = 256ull << 20;
	}

	/* what runs where */
	g_none = tracer_get("none");
	for (int wl = 0; wl < NR_WLS; wl++) {
		const struct workload *w = &g_wls[wl];

		if (!(b->o.presets & w->preset))
			continue;
		if (b->o.workloads) {
			char buf[256], *save = NULL;
			int hit = 0;

			snprintf(buf, sizeof(buf), "%s", b->o.workloads);
			for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
				hit |= !strcmp(t, w->name);
			if (!hit)
				continue;
		} else if (b->o.quick) {
			int first = 1;

			for (int k = 0; k < wl; k++)
				first &= g_wls[k].preset != w->preset;
			if (!first)
				continue;
		}
		b->wl_sel[wl] = 1;
		b->wl_tr[wl][g_none] = 1;
		ret = add_tracers(b, wl,
				  w->preset == P_LAYERS ? layer_tracers :
				  b->o.tracers		? b->o.tracers :
							  default_tracers);
		if (ret) {
			ret = usage_err(
				"--tracers", b->o.tracers,
				"expected a list of none, iotracer[@PATH][:LAYERS], iotracer-nojson[@PATH][:LAYERS], bpftrace-hist, bpftrace-print (PATH an executable), got");
			goto out_free;
		}
	}
	{
		int any = 0;

		for (int wl = 0; wl < NR_WLS; wl++)
			any |= b->wl_sel[wl];
		if (!any) {
			ret = usage_err("--workloads", b->o.workloads ? b->o.workloads : "",
					"no workload of the chosen presets matches");
			goto out_free;
		}
	}

	/* environment */
	if (geteuid() != 0) {
		fprintf(stderr, "iotracer bench: need root (loop devices, BPF): run with sudo\n");
		ret = 1;
		goto out_free;
	}
	{
		char fio[PATH_MAX];

		if (find_in_path("fio", fio, sizeof(fio))) {
			fprintf(stderr,
				"iotracer bench: fio not found in PATH (apt-get install fio)\n");
			ret = 1;
			goto out_free;
		}
	}
	{
		ssize_t l = readlink("/proc/self/exe", b->exe, sizeof(b->exe) - 1);

		if (l <= 0) {
			fprintf(stderr, "iotracer bench: cannot read /proc/self/exe: %s\n",
				strerror(errno));
			ret = 1;
			goto out_free;
		}
		b->exe[l] = '\0';
	}
	find_tools(b);
	{
		int have_bt = !find_in_path("bpftrace", b->bpftrace, sizeof(b->bpftrace));

		for (int tr = 0; tr < g_ntr; tr++) {
			if (g_tr[tr].k != T_BT_HIST && g_tr[tr].k != T_BT_PRINT)
				continue;
			if (!have_bt) {
				g_tr[tr].avail = 0;
				snprintf(g_tr[tr].why, sizeof(g_tr[tr].why),
					 "not installed (bpftrace not in PATH)");
			} else if (!b->tools[0]) {
				g_tr[tr].avail = 0;
				snprintf(g_tr[tr].why, sizeof(g_tr[tr].why),
					 "scripts not found (tools/*.bt; --tools-dir)");
			}
		}
	}
	b->user_hz = sysconf(_SC_CLK_TCK);
	{
		struct cpu_snap s;

		if (cpu_snapshot(&s)) {
			fprintf(stderr, "iotracer bench: cannot read /proc/stat\n");
			ret = 1;
			goto out_free;
		}
		b->ncpu = s.ncpu;
	}
	if (b->o.target)
		b->shared_target = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: waits return EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* plan */
	for (int wl = 0; wl < NR_WLS; wl++) {
		if (!b->wl_sel[wl])
			continue;
		for (int tr = 0; tr < g_ntr; tr++)
			if (b->wl_tr[wl][tr] && g_tr[tr].avail)
				b->total_planned += b->o.pairs + (tr != g_none && b->o.bpf_stats);
	}
	progress(
		"iotracer bench: %d runs of %.1f s (%d pair(s)%s), %d CPUs; Ctrl-C stops and cleans up",
		b->total_planned, b->o.runtime_ns / 1e9, b->o.pairs,
		b->o.bpf_stats ? " + one bpf_stats run per tracer" : "", b->ncpu);

	for (int wl = 0; wl < NR_WLS && !g_stop; wl++) {
		if (!b->wl_sel[wl])
			continue;
		progress("workload %s: %s", g_wls[wl].name, g_wls[wl].desc);
		{
			/* warm-up, not recorded: caches, the backing file, the loop worker */
			struct run warm;
			uint64_t rt = b->o.runtime_ns;

			b->o.runtime_ns = b->o.quick	     ? 1000000000ull :
					  rt < 3000000000ull ? rt :
							       3000000000ull;
			run_one(b, wl, g_none, -1, 0, &warm);
			b->o.runtime_ns = rt;
			if (!warm.ok && !g_stop)
				progress("warm-up run failed: %s", warm.err);
			if (b->tg[b->shared_target ? 0 : g_wls[wl].ram].failed) {
				ret = 1;
				goto done;
			}
		}
		for (int round = 0; round < b->o.pairs && !g_stop; round++) {
			for (int tr = 0; tr < g_ntr && !g_stop; tr++) {
				struct run *r;

				if (!b->wl_tr[wl][tr] || !g_tr[tr].avail)
					continue;
				r = new_run(b);
				if (!r)
					break;
				run_one(b, wl, tr, round, 0, r);
				if (g_stop && !r->ok) {
					b->nruns--;
					break;
				}
				report_run(b, r);
				if (b->tg[b->shared_target ? 0 : g_wls[wl].ram].failed &&
				    !b->tg[b->shared_target ? 0 : g_wls[wl].ram].ready) {
					ret = 1;
					goto done;
				}
			}
		}
		for (int tr = 0; tr < g_ntr && b->o.bpf_stats && !g_stop; tr++) {
			struct run *r;

			if (!b->wl_tr[wl][tr] || !g_tr[tr].avail || tr == g_none)
				continue;
			r = new_run(b);
			if (!r)
				break;
			run_one(b, wl, tr, 0, 1, r);
			if (g_stop && !r->ok) {
				b->nruns--;
				break;
			}
			report_run(b, r);
		}
		if (!g_stop)
			print_workload(b, wl, stdout);
	}
done:
	if (g_stop) {
		b->interrupted = 1;
		progress("interrupted: cleaning up, reporting what was measured");
	}
	kill_all_kids();
	targets_cleanup(b);

	for (int p = P_REFERENCE; p <= P_LAYERS; p <<= 1)
		if (b->o.presets & p)
			print_preset_summary(b, p, stdout);
	print_cost_table(b, stdout);
	print_checks(b, stdout);
	fflush(stdout);
	if (b->o.json) {
		int e = write_json(b, b->o.json, !b->interrupted && !ret);

		if (e) {
			fprintf(stderr, "iotracer bench: cannot write %s: %s\n", b->o.json,
				strerror(-e));
			ret = 1;
		} else {
			progress("wrote %s", b->o.json);
		}
	}
	if (b->o.svg) {
		int e = write_svg(b, b->o.svg);

		if (e) {
			fprintf(stderr, "iotracer bench: cannot write %s: %s\n", b->o.svg,
				strerror(-e));
			ret = 1;
		} else {
			progress("wrote %s", b->o.svg);
		}
	}
	{
		int failed = 0;

		for (int i = 0; i < b->nruns; i++)
			failed += !b->runs[i].ok;
		if (failed) {
			progress("%d run(s) failed (see the tables and the JSON)", failed);
			if (!ret)
				ret = 1;
		}
	}
	if (b->interrupted)
		ret = 130;
out_free:
	for (int i = 0; i < b->nruns; i++)
		free(b->runs[i].progs);
	free(b->runs);
	free(b);
	return ret;
}
