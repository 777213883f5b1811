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

#include "sink/native.h"

struct report;
struct ch_src;

/* Connect (--from, --auth, --ca) and make the filters' SQL; 0 or the exit status. */
int ch_open(struct report *rp);
/* Everything the outputs need, from the server (after rp_start()); 0 or 1 (said). */
int ch_report(struct report *rp);
/* print_reading()'s lines for a server. */
void ch_print_reading(const struct report *rp, FILE *f);
void ch_free(struct ch_src *c);

/* chsql.c */
int ch_sqlf(struct nat_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The filters as a WHERE condition (without the word). 0 or -ENOMEM. */
int ch_where(const struct report *rp, struct nat_buf *b);
/* The summary's stage buckets: TabSeparated rows l s d dn o bk n min max sum bytes first last. */
int ch_summary_sql(const char *from, const char *where, struct nat_buf *q);

#endif /* IT_REPORT_CHSRC_H */
