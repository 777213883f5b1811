// SPDX-License-Identifier: GPL-2.0
/*
 * report --from clickhouse://: the queries and what their answers feed (see
 * chsrc.h, docs/fleet.md, "Reports"). Every query reads the table with FINAL:
 * rows a retried batch sent twice count once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/abi.h"
#include "lib/log.h"
#include "records/hist.h"
#include "records/output.h"
#include "records/stages.h"
#include "sink/curldl.h"
#include "sink/http.h"
#include "sink/rows.h"
#include "report/chsrc.h"
#include "report/driver.h"

#define CH_TIMEOUT_MS (10L * 60 * 1000) /* a report's query may read much */
#define CH_STREAM_BLOCK 4096 /* rows a block of streamed rows holds */

void ch_free(struct ch_src *c)
{
	if (!c)
		return;
	sk_http_free(c->h);
	nat_buf_free(&c->where);
	nat_buf_free(&c->cols);
	free(c);
}

/* One query, its answer in resp; 0, or 1 after the server's or transport's one line. */
static int query(struct report *rp, const char *sql, struct nat_buf *resp)
{
	struct ch_src *c = rp->ch;
	struct sk_http_res res;

	resp->len = 0;
	if (!sk_http_query(c->h, sql, NULL, 0, 0, resp, &res))
		return 0;
	it_err("report: --from %s:%u: %s", c->url.host, c->url.port, res.msg);
	return 1;
}

int ch_open(struct report *rp)
{
	struct sk_http_cfg cfg = { .ca_file = rp->o.ca, .timeout_ms = CH_TIMEOUT_MS };
	char why[256], pw[256] = "";
	struct ch_src *c = calloc(1, sizeof(*c));

	if (!c) {
		it_err("report: out of memory");
		return 1;
	}
	rp->ch = c;
	if (sk_url_parse(rp->o.from, &cfg.url, why, sizeof(why))) {
		it_err("report: --from: %s", why);
		return 2;
	}
	if (rp->o.auth && sk_password_load(rp->o.auth, pw, sizeof(pw), why, sizeof(why))) {
		it_err("report: --auth: password file '%s': %s", rp->o.auth, why);
		return 2;
	}
	cfg.password = pw[0] ? pw : NULL;
	c->url = cfg.url;
	if (sink_curl_load(why, sizeof(why))) {
		memset(pw, 0, sizeof(pw));
		it_err("report: --from: %s", why);
		return 1;
	}
	c->h = sk_http_new(&cfg);
	memset(pw, 0, sizeof(pw));
	if (!c->h) {
		it_err("report: --from: %s", strerror(errno));
		return 1;
	}
	snprintf(c->from, sizeof(c->from), "%s.%s FINAL", c->url.db, c->url.table);
	snprintf(c->blame_from, sizeof(c->blame_from), "%s.%s" SK_BLAME_SUFFIX " FINAL", c->url.db,
		 c->url.table);
	if (ch_where(rp, &c->where) || nat_buf_room(&c->where, 1) ||
	    sk_schema_select(sk_req_spec, SK_R_NR, &c->cols) || nat_buf_room(&c->cols, 1)) {
		it_err("report: out of memory");
		return 1;
	}
	c->where.p[c->where.len] = '\0';
	c->cols.p[c->cols.len] = '\0';
	return 0;
}

/* ---- the rows read back ---- */

/* Each request of the blocks in buf[*pos..len) to fn, *pos past the whole blocks read. */
static int each_row(struct report *rp, const struct nat_buf *buf, size_t *pos,
		    void (*fn)(struct report *rp, const struct rp_req *q))
{
	struct sk_notes nt = {
		.dev = rp_note_dev, .cgroup = rp_note_cgroup, .file = rp_note_fname, .ctx = rp
	};
	struct rf_req *q = malloc(sizeof(*q));
	struct nat_rblock rb;
	struct sk_rview v;
	struct sk_ident id;
	int err = q ? 0 : -ENOMEM;

	while (!err && *pos < buf->len) {
		size_t at = *pos;

		err = nat_read_block(buf->p, buf->len, pos, &rb);
		if (err) {
			*pos = at;
			nat_rblock_free(&rb);
			break;
		}
		sk_rview_init(&v, &rb);
		for (uint64_t i = 0; i < rb.rows; i++) {
			struct corr_req r;
			struct rp_req rq = { .r = &r };

			if (sk_rows_get(&v, i, q, &id, &nt))
				continue;
			rf_req_view(q, &r);
			rf_req_span(&r, &rq.start_ns, &rq.end_ns);
			rq.real_off_ns = id.clock_off;
			fn(rp, &rq);
		}
		nat_rblock_free(&rb);
	}
	free(q);
	return err;
}

static void to_slowest(struct report *rp, const struct rp_req *q)
{
	slowest_add(rp->slowest, q);
}

/* The -n slowest: the server picks them, the table is report's. */
static int ch_slowest(struct report *rp)
{
	struct ch_src *c = rp->ch;
	struct nat_buf sql = { 0 }, resp = { 0 };
	size_t pos = 0;
	int ret = 1;

	if (!rp->o.top)
		return 0;
	if (!ch_sqlf(&sql,
		     "SELECT %s FROM %s WHERE %s ORDER BY lat_ns DESC, host, run, id LIMIT %d "
		     "FORMAT Native",
		     (char *)c->cols.p, c->from, (char *)c->where.p, rp->o.top) &&
	    !query(rp, (char *)sql.p, &resp)) {
		ret = each_row(rp, &resp, &pos, to_slowest) || pos != resp.len;
		if (ret)
			it_err("report: --from: the slowest requests' rows do not read back");
	}
	nat_buf_free(&sql);
	nat_buf_free(&resp);
	return ret;
}

struct stream_ctx {
	struct report *rp;
	size_t tried; /* the buffer's length at the last block that did not read */
	/* the whole blocks of buf from *pos on, read (*pos past them); -EAGAIN: one cut */
	int (*each)(struct report *rp, const struct nat_buf *buf, size_t *pos);
};

/* A piece of the rows arrived (last: the end): read the whole blocks, keep the rest. */
static int on_stream(void *ctx, struct nat_buf *b, int last)
{
	struct stream_ctx *s = ctx;
	size_t pos = 0;
	int err;

	/* a block read again only once the buffer doubled: O(n log n) over a big block */
	if (!last && b->len < 2 * s->tried)
		return 0;
	err = s->each(s->rp, b, &pos);
	if (err && (err != -EAGAIN || last))
		return err;
	memmove(b->p, b->p + pos, b->len - pos);
	b->len -= pos;
	s->tried = err == -EAGAIN ? b->len : 0;
	return 0;
}

static int each_output(struct report *rp, const struct nat_buf *buf, size_t *pos)
{
	return each_row(rp, buf, pos, rp_outputs);
}

/* -j, --perfetto, --heatmap: every matching row, read as it comes. */
static int ch_each(struct report *rp)
{
	struct ch_src *c = rp->ch;
	struct stream_ctx s = { .rp = rp, .each = each_output };
	struct nat_buf sql = { 0 };
	struct sk_http_res res;
	int ret = 0;

	if (!rp->jout && !rp->pf && !rp->hm)
		return 0;
	if (ch_sqlf(&sql,
		    "SELECT %s FROM %s WHERE %s ORDER BY host, boot, run, id SETTINGS "
		    "max_block_size = %d FORMAT Native",
		    (char *)c->cols.p, c->from, (char *)c->where.p, CH_STREAM_BLOCK)) {
		nat_buf_free(&sql);
		return 1;
	}
	if (sk_http_stream(c->h, (char *)sql.p, on_stream, &s, &res)) {
		it_err("report: --from %s:%u: %s", c->url.host, c->url.port, res.msg);
		ret = 1;
	}
	nat_buf_free(&sql);
	return ret;
}

/* The blame lines of the blocks in buf, to -j; *pos past the whole blocks read. */
static int each_blame(struct report *rp, const struct nat_buf *buf, size_t *pos)
{
	struct sk_notes nt = {
		.dev = rp_note_dev, .cgroup = rp_note_cgroup, .file = rp_note_fname, .ctx = rp
	};
	struct nat_rblock rb;
	struct blame_line l;
	int err = 0;

	while (!err && *pos < buf->len) {
		size_t at = *pos;

		err = nat_read_block(buf->p, buf->len, pos, &rb);
		if (err)
			*pos = at;
		for (uint64_t i = 0; !err && i < rb.rows; i++)
			if (!sk_rows_get_blame(&rb, i, &l, &nt))
				rp_blame_json(rp, &l);
		nat_rblock_free(&rb);
	}
	return err;
}

static int numbers(struct report *rp, const char *sql, uint64_t *v, int n);

/*
 * -j: the stored blame lines of the matched requests, after the requests (a
 * recording's report writes each after its request: the same lines).
 */
static int ch_blame_lines(struct report *rp)
{
	struct ch_src *c = rp->ch;
	struct stream_ctx s = { .rp = rp, .each = each_blame };
	struct nat_buf sql = { 0 }, cols = { 0 };
	struct sk_http_res res;
	uint64_t there = 0;
	int ret = 0;

	if (!rp->jout)
		return 0;
	/* a table without its _blame companion: no blame line to write */
	if (ch_sqlf(&sql, "EXISTS TABLE %.*s", (int)strcspn(c->blame_from, " "), c->blame_from) ||
	    numbers(rp, (char *)sql.p, &there, 1) || !there) {
		nat_buf_free(&sql);
		return there ? 1 : 0;
	}
	sql.len = 0;
	if (sk_schema_select(sk_blame_spec, SK_B_NR, &cols) || nat_buf_room(&cols, 1) ||
	    (cols.p[cols.len] = '\0',
	     ch_sqlf(&sql, "SELECT %s FROM %s", (char *)cols.p, c->blame_from)) ||
	    ch_blame_where(c, &sql) ||
	    ch_sqlf(&sql,
		    " ORDER BY host, boot, run, id SETTINGS max_block_size = %d FORMAT Native",
		    CH_STREAM_BLOCK)) {
		ret = 1;
	} else if (sk_http_stream(c->h, (char *)sql.p, on_stream, &s, &res)) {
		it_err("report: --from %s:%u: %s", c->url.host, c->url.port, res.msg);
		ret = 1;
	}
	nat_buf_free(&sql);
	nat_buf_free(&cols);
	return ret;
}

/* ---- sums ---- */

/* A TabSeparated field's escapes undone in place (a name's \\, \t, \n...). */
static void tsv_unescape(char *s)
{
	static const char esc[] = "bfrnt0'\\", val[] = "\b\f\r\n\t\0'\\";
	char *o = s;
	const char *e;

	for (; *s; s++)
		if (*s == '\\' && s[1] && (e = strchr(esc, s[1]))) {
			*o++ = val[e - esc];
			s++;
		} else {
			*o++ = *s;
		}
	*o = '\0';
}

/* Tab-separated fields of one line of an answer (in place); their number. */
static int fields(char *line, char **f, int max)
{
	int n = 0;
	char *p = line;

	for (; n < max; p++) {
		f[n++] = p;
		p = strchr(p, '\t');
		if (!p)
			break;
		*p = '\0';
	}
	for (int i = 0; i < n; i++)
		tsv_unescape(f[i]);
	return n;
}

static uint64_t u64(const char *s)
{
	return strtoull(s, NULL, 10);
}

static uint32_t devno(const char *s)
{
	unsigned int ma, mi;

	return sscanf(s, "%u:%u", &ma, &mi) == 2 ? IT_MKDEV(ma, mi) : 0;
}

/*
 * The log2 histogram of a stage row (uhist.c's keys; member: a stack member's
 * block request), NULL: the row has none.
 */
static struct it_hist *khist_of(struct report *rp, const char *l, const char *s, uint32_t dev,
				unsigned int op, int member)
{
	static const struct {
		const char *l, *s;
		int layer, kind, stage;
	} map[] = {
		{ "syscall", "total", IT_L_SYSCALL, IT_HK_PLAIN, IT_ST_TOTAL },
		{ "syscall", "offcpu", IT_L_SYSCALL, IT_HK_PLAIN, IT_ST_OFFCPU },
		{ "syscall", "runq", IT_L_SYSCALL, IT_HK_PLAIN, IT_ST_RUNQ },
		{ "io_uring", "total", IT_L_SYSCALL, IT_HK_URING, IT_ST_TOTAL },
		{ "aio", "total", IT_L_SYSCALL, IT_HK_AIO, IT_ST_TOTAL },
		{ "block", "q2c", IT_L_BLOCK, IT_HK_PLAIN, IT_ST_Q2C },
		{ "block", "d2c", IT_L_BLOCK, IT_HK_PLAIN, IT_ST_D2C },
		{ "block", "q2d", IT_L_BLOCK, IT_HK_PLAIN, IT_ST_Q2D },
		{ "block", "dirty_age", IT_L_BLOCK, IT_HK_PLAIN, IT_ST_DIRTY_AGE },
		{ "stack", "q2c", IT_L_STACK, IT_HK_PLAIN, IT_ST_Q2C },
		{ "stack", "q2r", IT_L_STACK, IT_HK_PLAIN, IT_ST_Q2R },
		{ "stack", "m2c", IT_L_STACK, IT_HK_PLAIN, IT_ST_M2C },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		struct it_hist_key k = { .dev = dev, .op = (uint8_t)op };
		struct it_hist_val *v;

		if (strcmp(map[i].l, l) || strcmp(map[i].s, s))
			continue;
		k.layer = (uint8_t)map[i].layer;
		k.kind = (uint16_t)(member ? IT_HK_MEMBER : map[i].kind);
		v = uhists_get(&rp->kh, &k);
		return v ? &v->st[map[i].stage] : NULL;
	}
	return NULL;
}

int ch_each_line(struct report *rp, struct nat_buf *sql, int nf,
		 int (*fn)(struct report *rp, char **f, void *ctx), void *ctx)
{
	struct nat_buf resp = { 0 };
	char *save = NULL, *line, *f[16];
	int ret = !sql->len || nat_buf_room(sql, 1);

	if (!ret) {
		sql->p[sql->len] = '\0';
		ret = query(rp, (char *)sql->p, &resp) || nat_buf_room(&resp, 1);
	}
	if (!ret) {
		resp.p[resp.len] = '\0';
		for (line = strtok_r((char *)resp.p, "\n", &save); line && !ret;
		     line = strtok_r(NULL, "\n", &save))
			ret = fields(line, f, nf) != nf || fn(rp, f, ctx);
		if (ret)
			it_err("report: --from: an answer does not read back: %.100s", line);
	}
	nat_buf_free(&resp);
	return ret;
}

/* One line of the summary's answer into the stage table and the log2 histograms. */
static int summary_line(struct report *rp, char **f, void *ctx)
{
	struct stages_bucket b;
	struct it_hist *h;
	uint32_t dev;
	int op;

	(void)ctx;
	dev = devno(f[2]);
	op = abi_value(&abi_ops, f[4], strlen(f[4]));
	if (dev && f[3][0])
		rp_note_dev(rp, dev, f[3], NULL);
	b = (struct stages_bucket){ .v = u64(f[6]),
				    .n = u64(f[7]),
				    .min = u64(f[8]),
				    .max = u64(f[9]),
				    .sum = u64(f[10]),
				    .bytes = u64(f[11]),
				    .first_ns = u64(f[12]),
				    .last_ns = u64(f[13]) };
	if (b.first_ns == UINT64_MAX)
		b.first_ns = b.last_ns = 0;
	if (stages_add_bucket(out_stages(rp->out, 0), f[0], dev, op < 0 ? IT_OP_OTHER : op, f[1],
			      &b))
		return -EBADMSG;
	h = khist_of(rp, f[0], f[1], dev, op < 0 ? IT_OP_OTHER : (unsigned int)op,
		     !strcmp(f[5], "member"));
	if (h) {
		h->slots[b.v > 1 ? 63 - __builtin_clzll(b.v) : 0] += b.n;
		h->count += b.n;
		h->sum_ns += b.sum;
	}
	return 0;
}

/* The summary's stage statistics: the server's sums per bucket. */
static int ch_summary(struct report *rp)
{
	struct ch_src *c = rp->ch;
	struct nat_buf sql = { 0 };
	int ret = ch_summary_sql(c->from, (char *)c->where.p, &sql) ||
		  ch_each_line(rp, &sql, 14, summary_line, NULL);

	nat_buf_free(&sql);
	return ret;
}

/* One row of numbers (at most 8) of a query; 0 or 1 (said). */
static int numbers(struct report *rp, const char *sql, uint64_t *v, int n)
{
	struct nat_buf resp = { 0 };
	char *f[8];
	int ret = query(rp, sql, &resp);

	if (!ret && !nat_buf_room(&resp, 1)) {
		resp.p[resp.len] = '\0';
		resp.p[strcspn((char *)resp.p, "\n")] = '\0';
		ret = fields((char *)resp.p, f, 8) != n;
		for (int i = 0; !ret && i < n; i++)
			v[i] = u64(f[i]);
	}
	nat_buf_free(&resp);
	return ret;
}

/* Requests in the table, those the filters match, their hosts and span. */
static int ch_counts(struct report *rp)
{
	struct ch_src *c = rp->ch;
	struct nat_buf sql = { 0 };
	uint64_t v[4];
	int ret = ch_sqlf(&sql, "SELECT count() FROM %s", c->from) ||
		  numbers(rp, (char *)sql.p, &c->total, 1);

	sql.len = 0;
	ret = ret ||
	      ch_sqlf(&sql,
		      "SELECT count(), uniqExact(host), min(ts - toUInt64(clock_off)), "
		      "max(if(bitAnd(flags, %u) != 0, ts - toUInt64(clock_off) + lat_ns, 0)) "
		      "FROM %s WHERE %s",
		      SK_F_END, c->from, (char *)c->where.p) ||
	      numbers(rp, (char *)sql.p, v, 4);
	if (!ret) {
		rp->matched = v[0];
		c->hosts = v[1];
		rp->first_ns = v[0] ? v[2] : 0;
		rp->last_ns = v[3];
		out_stages(rp->out, v[0]);
	}
	nat_buf_free(&sql);
	return ret;
}

/* ---- --blame: the stored lines' sums ---- */

int ch_blame_where(const struct ch_src *c, struct nat_buf *sql)
{
	return ch_sqlf(sql,
		       " WHERE (host, boot, run, id) GLOBAL IN (SELECT host, boot, run, id FROM %s "
		       "WHERE %s AND notEmpty(block.dev))",
		       c->from, (char *)c->where.p);
}

/* A victim's parts: the sums of its stored lines. */
static int victim_line(struct report *rp, char **f, void *ctx)
{
	struct blame_line l = { .by = BLAME_BY_CGROUP };
	uint32_t dev = devno(f[0]);

	rp_note_dev(rp, dev, f[1], NULL);
	if (f[3][0])
		rp_note_cgroup(rp, u64(f[2]), f[3]);
	l.requests = u64(f[5]);
	l.wait_ns = u64(f[6]);
	l.own_ns = u64(f[7]);
	l.unattr_ns = u64(f[8]);
	l.self_ns = u64(f[9]);
	l.others_ns = u64(f[10]);
	l.other_ns = u64(f[11]);
	rb_add_sums(rp->blame, dev, u64(f[2]), &l, u64(f[4]));
	*(uint64_t *)ctx += u64(f[4]);
	return 0;
}

/* A culprit of a victim: its share summed. */
static int culprit_line(struct report *rp, char **f, void *ctx)
{
	struct blame_line l = { .by = BLAME_BY_CGROUP, .nr = 1 };

	(void)ctx;
	l.cgroup_id[0] = u64(f[2]);
	l.ns[0] = u64(f[4]);
	if (f[3][0])
		rp_note_cgroup(rp, l.cgroup_id[0], f[3]);
	rb_add_sums(rp->blame, devno(f[0]), u64(f[1]), &l, 0);
	return 0;
}

/* Each victim's parts, then its culprits; *lines: the stored lines summed. */
static int blame_sums(struct report *rp, uint64_t *lines)
{
	struct ch_src *c = rp->ch;
	struct nat_buf sql = { 0 };
	int ret =
		ch_sqlf(&sql,
			"SELECT victim_devno, any(victim_dev), victim_cgroup_id, "
			"any(victim_cgroup), count(), sum(requests), sum(wait_ns), sum(own_ns), "
			"sum(unattributed_ns), sum(self_ns), sum(others_ns), max(other_ns) FROM %s",
			c->blame_from) ||
		ch_blame_where(c, &sql) ||
		ch_sqlf(&sql, " GROUP BY victim_devno, victim_cgroup_id") ||
		ch_each_line(rp, &sql, 12, victim_line, lines);

	sql.len = 0;
	ret = ret ||
	      ch_sqlf(&sql,
		      "SELECT victim_devno, victim_cgroup_id, cu.cgroup_id, any(cu.cgroup), "
		      "sum(cu.ns) FROM %s ARRAY JOIN culprits AS cu",
		      c->blame_from) ||
	      ch_blame_where(c, &sql) ||
	      ch_sqlf(&sql, " GROUP BY victim_devno, victim_cgroup_id, cu.cgroup_id") ||
	      ch_each_line(rp, &sql, 5, culprit_line, NULL);
	nat_buf_free(&sql);
	return ret;
}

/* --blame: the stored lines of the matched requests, summed by the server. */
static int ch_blame(struct report *rp)
{
	struct ch_src *c = rp->ch;
	struct nat_buf sql = { 0 };
	uint64_t lines = 0, want = 0;
	int ret;

	if (!rp->blame)
		return 0;
	ret = blame_sums(rp, &lines) ||
	      ch_sqlf(&sql, "SELECT count() FROM %s WHERE %s AND notEmpty(block.dev)", c->from,
		      (char *)c->where.p) ||
	      numbers(rp, (char *)sql.p, &want, 1);
	/* matched requests with block requests whose line never came */
	if (!ret)
		rp->stored_missing = want > lines ? want - lines : 0;
	nat_buf_free(&sql);
	return ret;
}

int ch_report(struct report *rp)
{
	return ch_counts(rp) || ch_summary(rp) || ch_slowest(rp) || ch_each(rp) ||
	       ch_blame_lines(rp) || ch_blame(rp);
}

void ch_print_reading(const struct report *rp, FILE *f)
{
	const struct ch_src *c = rp->ch;

	fprintf(f, "clickhouse: %s.%s on %s:%u (%s): %llu requests; %llu hosts matched\n",
		c->url.db, c->url.table, c->url.host, c->url.port, sk_http_scheme(c->h),
		(unsigned long long)c->total, (unsigned long long)c->hosts);
	fprintf(f, "requests: %llu read, %llu matched the filters\n", (unsigned long long)c->total,
		(unsigned long long)rp->matched);
	if (c->total && !rp->matched)
		it_warn("report: none of the %llu requests in %s.%s passed the filters",
			(unsigned long long)c->total, c->url.db, c->url.table);
}
