/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rows: a request into a row of the requests table (schema.h), a blame line
 * into a row of the blame table, and a request row back into the request it
 * came from (struct rf_req, as a recording or a -j line gives it back: what
 * the JSON line carries, docs/fleet.md, "Schema"). Pure user space.
 */
#ifndef IT_SINK_ROWS_H
#define IT_SINK_ROWS_H

#include <stdint.h>

#include "blame/blame_json.h"
#include "records/corr.h"
#include "records/fname.h"
#include "records/recfmt.h"
#include "sink/native.h"
#include "sink/schema.h"

struct cg_cache;
struct ct_names;

/* Which run a row is of: the columns host, boot, run and clock_off. */
struct sk_ident {
	char host[64];
	char boot[40];
	uint64_t run; /* the daemon's start, CLOCK_MONOTONIC ns (a recording's run_mono_ns) */
	int64_t clock_off; /* CLOCK_REALTIME - CLOCK_MONOTONIC: ts = start + clock_off */
};

/* How names are found for a row (every member may be NULL: none). */
struct sk_lookup {
	const char *sysfs_root; /* device names and serials (NULL: "/sys") */
	/* a device's name and serial (a recording's); NULL: sysfs */
	const char *(*dev_name)(void *ctx, uint32_t dev);
	const char *(*dev_serial)(void *ctx, uint32_t dev);
	/* a cgroup id's path; NULL: cg */
	const char *(*cgroup)(void *ctx, uint64_t id);
	/* a file's names (a recording's); NULL: fn */
	const struct fn_entry *(*fname)(void *ctx, const struct fn_key *k);
	void *ctx;
	struct cg_cache *cg;
	struct ct_names *names; /* container and pod names of the node */
	struct fn_cache *fn; /* the daemon's file names, read as the recording reads them */
};

#define SK_CT_CACHE 8
#define SK_VICTIMS 4096 /* requests remembered for their blame line's victim (by id) */

/* A cgroup's container fields, as ct_describe() gave them (cached by id). */
struct sk_ct {
	uint64_t id;
	int valid;
	char runtime[16], id_s[65], name[128], ctrd_ns[64], pod_uid[40], pod[128], ns[64], qos[16];
};

/*
 * What a blame row says of its victim, from its request's row: the request's
 * first block request's device and owner, the request's ts and file.
 */
struct sk_victim {
	uint64_t id, ts;
	uint64_t cgroup_id;
	uint32_t dev;
	int has_file;
	struct fn_key file;
};

#define SK_DEV_CACHE 8

/* A device's name and "MAJ:MIN", as the rows write them (cached by dev). */
struct sk_dev {
	uint32_t dev;
	uint8_t name_len, devno_len;
	char name[64], devno[24];
};

/* The request rows being built (a nat_block of sk_req_spec), and the blame rows. */
struct sk_rows {
	struct nat_block req, blame;
	struct sk_lookup lk;
	struct sk_dev devs[SK_DEV_CACHE];
	unsigned int dev_next;
	struct sk_ct ct[SK_CT_CACHE];
	unsigned int ct_next;
	struct sk_victim vic[SK_VICTIMS]; /* by id % SK_VICTIMS */
};

int sk_rows_init(struct sk_rows *w, const struct sk_lookup *lk);
/* Look the names up again from now on (a batch's end: a device or a pod may have a new name). */
void sk_rows_forget(struct sk_rows *w);
void sk_rows_free(struct sk_rows *w);

/* One finished request of run id. */
void sk_rows_put(struct sk_rows *w, const struct sk_ident *id, const struct corr_req *r);

/*
 * A request's blame line, made at real_ns: its victim from the request's row
 * put before it (its ts the row's; unknown: real_ns and no victim).
 */
void sk_rows_blame(struct sk_rows *w, const struct sk_ident *id, const struct blame_line *l,
		   uint64_t real_ns);

/* ---- reading back ---- */

/* The columns of sk_req_spec in a block read back (NULL: not in the block). */
struct sk_rview {
	const struct nat_rblock *rb;
	const struct nat_rcol *c[SK_R_NR];
};

void sk_rview_init(struct sk_rview *v, const struct nat_rblock *rb);

/*
 * Names a row gives: a device's name (and serial), a cgroup's path and a
 * file's names (cfile NULL: none), for the reader's tables.
 */
struct sk_notes {
	void (*dev)(void *ctx, uint32_t dev, const char *name, const char *serial);
	void (*cgroup)(void *ctx, uint64_t id, const char *path);
	void (*file)(void *ctx, const struct fn_key *k, const char *file, const char *cfile);
	void *ctx;
};

/*
 * Row i as the request it was: q (zeroed first) and its run (id, may be
 * NULL); its names to nt (may be NULL). 0, or -EINVAL for a row that is no
 * request (an unknown kind, a block kind without block requests).
 */
int sk_rows_get(const struct sk_rview *v, uint64_t i, struct rf_req *q, struct sk_ident *id,
		const struct sk_notes *nt);

/* Row i of a blame block back into its line; its culprits' paths to nt (may be NULL). 0 or -EINVAL. */
int sk_rows_get_blame(const struct nat_rblock *rb, uint64_t i, struct blame_line *l,
		      const struct sk_notes *nt);

/* A string column's value i into buf (NUL-terminated, cut to n - 1). */
char *sk_rows_str(const struct nat_rcol *c, uint64_t i, char *buf, size_t n);

#endif /* IT_SINK_ROWS_H */
