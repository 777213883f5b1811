/* SPDX-License-Identifier: GPL-2.0 */
/*
 * chsrc: `iotracer report --from clickhouse://...` (docs/fleet.md, "Reports"),
 * the driver's source besides files: the server matches the filters, sums the
 * summary's stages, picks the slowest requests and the blame sums; the report's
 * own code computes the percentiles and draws the per-request outputs from the
 * rows it reads back. chsql.c writes the SQL. Driver files: they share driver.h.
 */
#ifndef IT_REPORT_CHSRC_H
#define IT_REPORT_CHSRC_H

#include <stdint.h>
#include <stdio.h>

#include "sink/http.h"
#include "sink/native.h"

struct report;

struct ch_src {
	struct sk_http *h;
	struct sk_url url;
	char from[200], blame_from[200]; /* "db.table FINAL" */
	struct nat_buf where, cols; /* the filters' condition, the requests' columns (C strings) */
	uint64_t total, hosts; /* requests in the table; hosts of those matched */
	int rows_oom;
};

/* Connect (--from, --auth, --ca) and make the filters' SQL; 0 or the exit status. */
int ch_open(struct report *rp);
/*
 * Everything the outputs need, from the server (after rp_start()), but --by
 * file's sums: the driver calls ch_by_key() after it. 0 or 1 (said).
 */
int ch_report(struct report *rp);
/* print_reading()'s lines for a server. */
void ch_print_reading(const struct report *rp, FILE *f);
void ch_free(struct ch_src *c);
/*
 * The query sql, each line of its answer split into nf tab-separated fields to
 * fn (a line of another count is a bad answer); 0, or 1 after one line said.
 */
int ch_each_line(struct report *rp, struct nat_buf *sql, int nf,
		 int (*fn)(struct report *rp, char **f, void *ctx), void *ctx);
/* " WHERE" the blame rows of the matched requests (their key among the matched requests'). */
int ch_blame_where(const struct ch_src *c, struct nat_buf *sql);

/*
 * chkey.c: --by file|cgroup|pod, the server's sums per key (and the stored blame
 * lines' per victim key). It calls chsrc.c's helpers above; chsrc.c never calls it.
 */
int ch_by_key(struct report *rp);

/* chsql.c */
int ch_sqlf(struct nat_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An fnmatch(3) pattern (flags 0: '*' matches '/' too) as an anchored re2 expression. */
int ch_glob_regex(struct nat_buf *b, const char *pattern);
/* The filters as a WHERE condition (without the word). 0 or -ENOMEM. */
int ch_where(const struct report *rp, struct nat_buf *b);
/*
 * The summary's stage buckets: TabSeparated rows l s d dn o k bk n min max sum
 * bytes first last (k: the histogram's kind, "member" or "").
 */
int ch_summary_sql(const char *from, const char *where, struct nat_buf *q);
/*
 * --by KIND (enum bk_kind): per host and key (a file's name, or "[MAJ:MIN]
 * ino N" as the report names an unnamed file, "": none; a cgroup's path; a
 * pod's "namespace/name", UID or "(no pod)") and latency bucket, TabSeparated
 * rows host key container_file ended bucket n bytes min max sum, ordered by
 * host, key.
 */
int ch_keys_sql(int kind, const char *from, const char *where, struct nat_buf *q);
/* The blame rows' victim key of KIND, as ch_keys_sql()'s ("": none). */
const char *ch_victim_key(int kind);

#endif /* IT_REPORT_CHSRC_H */
