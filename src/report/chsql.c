// SPDX-License-Identifier: GPL-2.0
/*
 * report --from clickhouse://: the SQL (docs/fleet.md, "Reports"). The filters
 * become a WHERE clause with the meanings rp_matches() gives them over a
 * recording; the summary's stage statistics are GROUP BYs over the same
 * buckets as the report's own histograms (records/hist.h), so the server sums
 * and the report computes the percentiles, the same numbers as from the
 * recordings of the same requests.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "blame/blame.h"
#include "sink/schema.h"
#include "report/chsrc.h"
#include "report/driver.h"

/* printf into b; b->oom... set by the caller's check of the return. */
int ch_sqlf(struct nat_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || nat_buf_room(b, (size_t)n + 1))
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf((char *)b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

/* 'x' with \ and ' escaped (n bytes of s). */
static int sql_str(struct nat_buf *b, const char *s, size_t n)
{
	int err = ch_sqlf(b, "'");

	for (size_t i = 0; !err && i < n; i++)
		err = ch_sqlf(b, "%s%c", s[i] == '\'' || s[i] == '\\' ? "\\" : "", s[i]);
	return err ?: ch_sqlf(b, "'");
}

/* [s0, s1, ...] */
static int sql_list(struct nat_buf *b, char *const *v, int n)
{
	int err = ch_sqlf(b, "[");

	for (int i = 0; !err && i < n; i++)
		err = (i ? ch_sqlf(b, ",") : 0) ?: sql_str(b, v[i], strlen(v[i]));
	return err ?: ch_sqlf(b, "]");
}

/* --cgroup: the path, or below it (cg_under()); a path the row does not know never matches. */
static int where_cgroups(struct nat_buf *b, const struct it_opts *f)
{
	int err = ch_sqlf(b, " AND cgroup != '' AND (0");

	for (int i = 0; !err && i < f->nr_cgroups; i++) {
		const char *p = f->cgroups[i];
		size_t n = strlen(p);

		while (n && p[n - 1] == '/')
			n--;
		if (!n) {
			err = ch_sqlf(b, " OR 1");
			continue;
		}
		err = ch_sqlf(b, " OR cgroup = ") ?: sql_str(b, p, n);
		err = err ?: ch_sqlf(b, " OR startsWith(cgroup, concat(") ?: sql_str(b, p, n);
		err = err ?: ch_sqlf(b, ", '/'))");
	}
	return err ?: ch_sqlf(b, ")");
}

/* --container (an id's start, 4+ digits, or a name) and --pod (UID, name, namespace/name). */
static int where_containers(struct nat_buf *b, const struct rp_opts *o)
{
	const char *c = o->container, *p = o->pod;
	int err = 0;

	if (c) {
		err = ch_sqlf(b, " AND (container = ") ?: sql_str(b, c, strlen(c));
		if (!err && strlen(c) >= 4)
			err = ch_sqlf(b, " OR startsWith(container_id, ") ?:
				      sql_str(b, c, strlen(c))		  ?:
									    ch_sqlf(b, ")");
		err = err ?: ch_sqlf(b, ")");
	}
	if (p && !err) {
		err = ch_sqlf(b, " AND (pod_uid = ") ?: sql_str(b, p, strlen(p));
		err = err ?: ch_sqlf(b, " OR pod = ") ?: sql_str(b, p, strlen(p));
		err = err						       ?:
			      ch_sqlf(b, " OR concat(namespace, '/', pod) = ") ?:
			      sql_str(b, p, strlen(p))			       ?:
										 ch_sqlf(b, ")");
	}
	return err;
}

/* -d: the request's device or one of its block requests', by name or MAJ:MIN. */
static int where_dev(struct nat_buf *b, const struct rp_opts *o)
{
	const struct it_opts *f = &o->f;
	int err;

	if (f->nr_dev_names) {
		err = ch_sqlf(b, " AND (has(") ?: sql_list(b, f->dev_names, f->nr_dev_names);
		err = err				   ?:
			      ch_sqlf(b, ", dev) OR has(") ?:
			      sql_list(b, f->dev_names, f->nr_dev_names);
		err = err						   ?:
			      ch_sqlf(b, ", devno) OR hasAny(block.dev, ") ?:
			      sql_list(b, f->dev_names, f->nr_dev_names);
		err = err					      ?:
			      ch_sqlf(b, ") OR hasAny(block.devno, ") ?:
			      sql_list(b, f->dev_names, f->nr_dev_names);
		return err ?: ch_sqlf(b, "))");
	}
	return 0;
}

/* An fnmatch(3) pattern (flags 0: '*' matches '/' too) as an anchored re2 expression. */
int ch_glob_regex(struct nat_buf *b, const char *p)
{
	int err = ch_sqlf(b, "^");

	for (; !err && *p; p++) {
		const char *set = p + 1 + (p[1] == '!' || p[1] == '^'), *e = NULL;

		if (*p == '[' && *set)
			e = strchr(set + 1, ']'); /* a ']' first is one of the set */
		if (e) { /* a bracket expression, as it is (re2 takes a ']' first as one too) */
			err = ch_sqlf(b, "[%s%.*s]", set > p + 1 ? "^" : "", (int)(e - set), set);
			p = e;
		} else if (*p == '*' || *p == '?') {
			err = ch_sqlf(b, "%s", *p == '*' ? ".*" : ".");
		} else if (*p == '\\' && p[1]) {
			p++;
			err = ch_sqlf(b, "%s%c", isalnum((unsigned char)*p) ? "" : "\\", *p);
		} else {
			err = ch_sqlf(b, "%s%c", strchr(".^$|()+{}\\[]", *p) ? "\\" : "", *p);
		}
	}
	return err ?: ch_sqlf(b, "$");
}

/* The name x had before it was unlinked: " (deleted)" cut (filter.c's name_matches()). */
#define CH_NAME_WAS "replaceRegexpOne(%s, ' \\\\(deleted\\\\)$', '')"

/* " OR" x (a name's SQL, not "") against -f: the pattern, or the path and below it. */
static int name_cond(struct nat_buf *b, const struct rp_opts *o, const char *x)
{
	size_t n = strlen(o->file_pat);
	struct nat_buf re = { 0 };
	int err;

	if (o->file_glob) {
		err = ch_glob_regex(&re, o->file_pat) ?:
							ch_sqlf(b, " OR match(" CH_NAME_WAS ", ", x);
		err = err ?: sql_str(b, (char *)re.p, re.len) ?: ch_sqlf(b, ")");
		nat_buf_free(&re);
		return err;
	}
	while (n > 1 && o->file_pat[n - 1] == '/')
		n--;
	err = ch_sqlf(b, " OR " CH_NAME_WAS " = ", x) ?: sql_str(b, o->file_pat, n);
	err = err ?: ch_sqlf(b, " OR startsWith(" CH_NAME_WAS ", concat(", x);
	return err ?: sql_str(b, o->file_pat, n) ?: ch_sqlf(b, ", '/'))");
}

/*
 * -f: the request's file or one of its block requests', by name (host's or
 * container's), or by this host's inode (a block device: its requests).
 */
static int where_file(struct nat_buf *b, const struct rp_opts *o)
{
	static const char *const cols[] = { "file", "container_file" };
	char devno[24];
	int err;

	if (!o->file_pat)
		return 0;
	snprintf(devno, sizeof(devno), "%u:%u", IT_MAJOR(o->file_dev), IT_MINOR(o->file_dev));
	if (o->has_file && o->file_bdev)
		err = ch_sqlf(b, " AND (devno = '%s' OR has(block.devno, '%s')", devno, devno);
	else if (o->has_file)
		err = ch_sqlf(b, " AND ((devno = '%s' AND ino = %llu)", devno,
			      (unsigned long long)o->file_ino);
	else
		err = ch_sqlf(b, " AND (0");
	for (int i = 0; !err && i < 2; i++) {
		err = ch_sqlf(b, " OR (%s != '' AND (0", cols[i]) ?: name_cond(b, o, cols[i]);
		err = err							    ?:
			      ch_sqlf(b, ")) OR arrayExists(fx -> fx != '' AND (0") ?:
			      name_cond(b, o, "fx")				    ?:
			      ch_sqlf(b, "), block.%s)", cols[i]);
	}
	return err ?: ch_sqlf(b, ")");
}

int ch_where(const struct report *rp, struct nat_buf *b)
{
	const struct rp_opts *o = &rp->o;
	const struct it_opts *f = &o->f;
	int err = ch_sqlf(b, "1");

	if (!err && f->min_lat_ns)
		err = ch_sqlf(b, " AND lat_ns >= %llu", (unsigned long long)f->min_lat_ns);
	if (!err && f->since_real)
		err = ch_sqlf(b, " AND ts >= %llu", (unsigned long long)f->since_real);
	if (!err && f->until_real)
		err = ch_sqlf(b, " AND ts < %llu", (unsigned long long)f->until_real);
	if (!err && f->has_comm)
		err = ch_sqlf(b, " AND comm = ") ?: sql_str(b, f->comm, strlen(f->comm));
	for (int i = 0; !err && i < f->nr_pids; i++)
		err = ch_sqlf(b, "%s%u%s", i ? "," : " AND pid IN (", f->pids[i],
			      i == f->nr_pids - 1 ? ")" : "");
	if (!err && f->nr_cgroups)
		err = where_cgroups(b, f);
	if (!err)
		err = where_containers(b, o);
	if (!err)
		err = where_dev(b, o);
	if (!err)
		err = where_file(b, o);
	if (!err && o->nr_hosts)
		err = ch_sqlf(b, " AND has(")			 ?:
			      sql_list(b, o->hosts, o->nr_hosts) ?:
								   ch_sqlf(b, ", host)");
	return err;
}

/*
 * The bucket of value v (records/hist.c: exact below 128, then 128 buckets per
 * power of two): v with the bits below the bucket's width cleared. floor(log2())
 * of a double may round up just below a power of two: one less then.
 */
static int sql_bucket(struct nat_buf *q, const char *v)
{
	return ch_sqlf(q,
		       "if(%s < 128, %s, bitShiftLeft(bitShiftRight(%s, toUInt8((toUInt8(t0 - "
		       "(bitShiftRight(%s, least(toUInt8(floor(log2(toFloat64(%s)))), 63) AS t0) = "
		       "0)) AS t) - 7)), toUInt8(t - 7)))",
		       v, v, v, v, v);
}

/* the request's start, CLOCK_MONOTONIC (a UInt64 difference is signed in SQL: cast back) */
#define CH_START "toUInt64(ts - toUInt64(clock_off))"
#define CH_Q "toUInt64(" CH_START " + b.q_off_ns)" /* a block request's queue stamp */
/* The flags' values as the SQL writes them (schema.h, iotracer.h). */
#define CH_F_END "16777216"
#define CH_F_SCHED_SW "4096"
#define CH_F_SCHED_CNT "2048"
#define CH_F_WB "16384"
#define CH_F_BDEV "2"
#define CH_F_UPPER "32768"
#define CH_STK_PART "65535"
#define CH_BF_ISSUED "2147483648"
_Static_assert(SK_F_END == 16777216 && IT_F_SCHED_SW == 4096 && IT_F_SCHED_CNT == 2048 &&
		       IT_F_WB == 16384 && IT_F_BDEV == 2 && IT_F_UPPER == 32768 &&
		       IT_STK_PART == 65535 && SK_BF_ISSUED == 2147483648u,
	       "the flags' values in chsql.c's SQL");
#define CH_END_F "bitAnd(flags, " CH_F_END ") != 0"
/* a block request in the block layer's rows: not an upper bio (stages.c's stats_stack()) */
#define CH_NOT_UPPER "bitAnd(b.flags, " CH_F_UPPER ") = 0"
#define CH_UPPER "bitAnd(b.flags, " CH_F_UPPER ") != 0"
/* its histogram's kind (uhist.c): a member of a stack's, or a disk's own */
#define CH_HK "if(b.upper_devno != '', 'member', '')"

/* One branch of the summary's UNION ALL: its layer, stage, value, condition, bytes and span. */
struct ch_branch {
	const char *layer; /* a literal, or "b.drv_layer" */
	const char *stage;
	const char *value;
	const char *cond;
	int block; /* ARRAY JOIN block AS b */
	const char *bytes, *first, *last; /* NULL: the row carries no bytes */
	const char *dev, *name; /* the row's device (NULL: the request's, or b's) */
	const char *hk; /* its histogram's kind (NULL: '') */
};

/* The stages of stages.c (stages_request()), each a branch. */
static const struct ch_branch ch_branches[] = {
	{ .layer = "'syscall'",
	  .stage = "total",
	  .value = "lat_ns",
	  .cond = "kind = 'syscall'",
	  .bytes = "bytes",
	  .first = CH_START,
	  .last = CH_START " + lat_ns" },
	{ .layer = "'syscall'",
	  .stage = "offcpu",
	  .value = "offcpu_ns",
	  .cond = "kind = 'syscall' AND bitAnd(flags, " CH_F_SCHED_SW ") != 0" },
	{ .layer = "'syscall'",
	  .stage = "runq",
	  .value = "runq_ns",
	  .cond = "kind = 'syscall' AND bitAnd(flags, " CH_F_SCHED_CNT ") != 0" },
	{ .layer = "'io_uring'",
	  .stage = "total",
	  .value = "lat_ns",
	  .cond = "kind = 'io_uring'",
	  .bytes = "bytes",
	  .first = CH_START,
	  .last = CH_START " + lat_ns" },
	{ .layer = "'aio'",
	  .stage = "total",
	  .value = "lat_ns",
	  .cond = "kind = 'aio' AND " CH_END_F,
	  .bytes = "bytes",
	  .first = CH_START,
	  .last = CH_START " + lat_ns" },
	{ .layer = "'block'",
	  .stage = "q2c",
	  .value = "b.q2c_ns",
	  .cond = CH_NOT_UPPER,
	  .hk = CH_HK,
	  .block = 1,
	  .bytes = "b.bytes",
	  .first = CH_Q,
	  .last = CH_Q " + b.q2c_ns" },
	{ .layer = "'block'",
	  .stage = "d2c",
	  .value = "b.d2c_ns",
	  .block = 1,
	  .hk = CH_HK,
	  .cond = CH_NOT_UPPER " AND bitAnd(b.flags, " CH_BF_ISSUED ") != 0" },
	{ .layer = "'block'",
	  .stage = "q2d",
	  .value = "b.q2d_ns",
	  .block = 1,
	  .hk = CH_HK,
	  .cond = CH_NOT_UPPER " AND bitAnd(b.flags, " CH_BF_ISSUED ") != 0" },
	{ .layer = "'block'",
	  .stage = "dirty_age",
	  .value = "(" CH_Q " - b.dirty_first_ns)",
	  .block = 1,
	  .hk = CH_HK,
	  .cond = CH_NOT_UPPER " AND bitAnd(b.flags, " CH_F_WB ") != 0 AND b.dirty_first_ns != 0 "
			       "AND b.dirty_first_ns <= " CH_Q },
	{ .layer = "b.drv_layer",
	  .stage = "drv",
	  .value = "(b.drv_done_ns - b.drv_submit_ns)",
	  .block = 1,
	  .cond = "b.drv_layer != '' AND b.drv_submit_ns != 0 AND "
		  "b.drv_done_ns >= b.drv_submit_ns" },
	/* the stack layer: an upper bio's rows, a partition's request on its partition */
	{ .layer = "'stack'",
	  .stage = "q2c",
	  .value = "b.q2c_ns",
	  .cond = CH_UPPER,
	  .block = 1,
	  .bytes = "b.bytes",
	  .first = CH_Q,
	  .last = CH_Q " + b.q2c_ns" },
	{ .layer = "'stack'",
	  .stage = "q2c",
	  .value = "b.q2c_ns",
	  .cond = CH_NOT_UPPER " AND b.upper_devno != '' AND b.up_off = " CH_STK_PART,
	  .block = 1,
	  .dev = "b.upper_devno",
	  .name = "b.upper" },
	{ .layer = "'stack'",
	  .stage = "q2r",
	  .value = "(b.stk_r_ns - " CH_Q ")",
	  .cond = CH_UPPER " AND b.stk_r_ns >= " CH_Q,
	  .block = 1 },
	{ .layer = "'stack'",
	  .stage = "m2c",
	  .value = "(" CH_Q " + b.q2c_ns - b.stk_m_ns)",
	  .cond = CH_UPPER " AND b.stk_m_ns != 0 AND b.stk_m_ns <= " CH_Q " + b.q2c_ns",
	  .block = 1 },
	{ .layer = "b.drv_layer",
	  .stage = "kick2irq",
	  .value = "(b.drv_done_ns - b.drv_kick_ns)",
	  .block = 1,
	  .cond = "b.drv_layer != '' AND b.drv_submit_ns != 0 AND "
		  "b.drv_done_ns >= b.drv_submit_ns AND b.drv_kick_ns != 0 AND "
		  "b.drv_done_ns >= b.drv_kick_ns" },
};

static int branch(struct nat_buf *q, const struct ch_branch *br, const char *from,
		  const char *where)
{
	const char *dev = br->dev ? br->dev : br->block ? "b.devno" : "devno";
	const char *name = br->name ? br->name : br->block ? "b.dev" : "dev";
	const char *op = br->block ? "b.op" : "op", *end = br->block ? "1" : CH_END_F;
	char v[256];
	int err;

	snprintf(v, sizeof(v), "toUInt64(%s)", br->value);
	err = ch_sqlf(q, "SELECT %s AS l, '%s' AS s, %s AS d, any(%s) AS dn, %s AS o, %s AS k, ", br->layer, br->stage, dev, name, op, br->hk ? br->hk : "''") ?:
		      sql_bucket(q, v);
	err = err ?: ch_sqlf(q, " AS bk, count(), min(%s), max(%s), sum(%s), ", v, v, v);
	/* a total's bytes and span: only of the requests that ended (stage_bytes()) */
	if (!err && br->bytes)
		err = ch_sqlf(q,
			      "sum(toUInt64(if(%s, %s, 0))), min(toUInt64(if(%s, %s, "
			      "18446744073709551615))), max(toUInt64(if(%s, %s, 0)))",
			      end, br->bytes, end, br->first, end, br->last);
	else if (!err)
		err = ch_sqlf(q, "toUInt64(0), toUInt64(18446744073709551615), toUInt64(0)");
	return err   ?:
		       ch_sqlf(q, " FROM %s%s WHERE (%s) AND %s GROUP BY l, d, o, k, bk", from,
			       br->block ? " ARRAY JOIN block AS b" : "", where, br->cond);
}

int ch_summary_sql(const char *from, const char *where, struct nat_buf *q)
{
	int err = 0;

	for (size_t i = 0; !err && i < sizeof(ch_branches) / sizeof(ch_branches[0]); i++)
		err = (i ? ch_sqlf(q, " UNION ALL ") : 0) ?:
							    branch(q, &ch_branches[i], from, where);
	return err;
}

/*
 * The file a request names (fname.c's fn_req_key()), as bykey.c names it:
 * its name, else "[MAJ:MIN] ino N" (" node" for a block device's), else "":
 * a syscall's, io_uring's or aio's fd, a block kind's first block request.
 */
#define CH_FILE_KEY                                                                                  \
	"if(file != '', file, if(kind != 'block', if(ino != 0, concat('[', if(devno = '', "          \
	"'0:0', devno), ']', if(bitAnd(flags, " CH_F_BDEV ") != 0, ' node', ''), ' ino ', "          \
	"toString(ino)), ''), if(block.ino[1] = 0, '', if(block.file_devno[1] != '', "               \
	"concat('[', block.file_devno[1], ']', if(bitAnd(block.flags[1], " CH_F_BDEV                 \
	") != 0, ' node', ''), ' ino ', toString(block.ino[1])), if(bitAnd(block.flags[1], " CH_F_WB \
	") != 0 AND block.dirty_file_devno[1] NOT IN ('', '0:0'), concat('[', "                      \
	"block.dirty_file_devno[1], '] ino ', toString(block.ino[1])), '')))))"

/* A request's cgroup and pod as bykey.c names them (filter.c's rp_pod_of()). */
#define CH_CGROUP_KEY                                                                           \
	"if(cgroup != '', cgroup, if(cgroup_id = 0, '" BLAME_NO_TASK "', concat('cgroup-id ', " \
	"toString(cgroup_id))))"
#define CH_POD_KEY \
	"if(pod != '', concat(namespace, '/', pod), if(pod_uid != '', pod_uid, '" BK_NO_POD "'))"

int ch_keys_sql(int kind, const char *from, const char *where, struct nat_buf *q)
{
	const char *key = kind == BK_POD    ? CH_POD_KEY :
			  kind == BK_CGROUP ? CH_CGROUP_KEY :
					      CH_FILE_KEY;

	return ch_sqlf(q,
		       "SELECT host, k, %s, e, bk, count(), sum(bytes), min(lat_ns), max(lat_ns), "
		       "sum(lat_ns) FROM (SELECT host, %s AS k, container_file, bytes, lat_ns, " CH_END_F
		       " AS e, ",
		       kind == BK_FILE ? "any(container_file)" : "''", key) ?:
		       sql_bucket(q, "lat_ns") ?:
		       ch_sqlf(q, " AS bk FROM %s WHERE %s) GROUP BY host, k, e, bk ORDER BY host, k",
			       from, where);
}

const char *ch_victim_key(int kind)
{
	if (kind == BK_POD) /* no UID in the lines: a named pod's */
		return "if(victim_pod != '', concat(victim_namespace, '/', victim_pod), '')";
	return kind == BK_CGROUP ? "victim_cgroup" : "victim_file";
}
