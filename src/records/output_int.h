/* SPDX-License-Identifier: GPL-2.0 */
/*
 * output internals shared by output.c (the sinks, live lines, attach
 * lines), output_json.c (a request's JSON line), output_summary.c (the
 * summaries), output_stack.c (a request's stack objects) and outfmt.c (the
 * device names, the JSON batches), in that order: each calls only the ones
 * after it, outfmt.c none. Not for other modules: they use output.h.
 */
#ifndef IT_OUTPUT_INT_H
#define IT_OUTPUT_INT_H

#include <stdint.h>
#include <stdio.h>

#include "records/output.h"
#include "records/stages.h"
#include "lib/jsonw.h"

struct cg_cache;
struct ct_names;
struct corr_req;
struct req_view;

/*
 * JSON lines are built one after the other in out->w and written with one
 * fwrite() per batch of about OUT_BATCH_BYTES, not one per line: stdio would
 * otherwise make a write() every few lines (4 KiB buffer, ~5 lines of ~800
 * bytes), and a write() costs several microseconds in some VMs. The first
 * line, and a batch whose first request is OUT_BATCH_AGE_NS older than the
 * current one (request timestamps: no clock read), are written at once; every
 * attach line and summary writes what is pending first (summaries then
 * fflush()), and so does out_free(). Terminals and streams without a file
 * descriptor (open_memstream) get every line at once, as before.
 *
 * 120 KiB: out->w then stays within 128 KiB of RSS (lines are ~1 KiB, with
 * 16 blocks ~9 KiB). Measured per request on a VM, to tmpfs: 56 KiB +10 %,
 * 240 KiB -4 % (for 128 KiB more RSS), 8 KiB +100 %.
 */
#define OUT_BATCH_BYTES (120 * 1024)
#define OUT_BATCH_AGE_NS 1000000000ull

/*
 * Names of the last few devices: parse_dev_name_cached() reads the clock and
 * compares the sysfs root on every call, and "MAJ:MIN" needs a snprintf().
 * Only named devices are kept, and only for OUT_DEV_USES lookups, so that
 * parse_dev_name_cached() still decides when a name is looked up again.
 */
#define OUT_DEVS 4
#define OUT_DEV_USES 4096

struct out_dev {
	uint32_t dev;
	uint32_t uses; /* lookups left; 0: free */
	const char *name; /* nbuf, or (not cached) parse_dev_name_cached()'s buffer */
	char nbuf[64];
	char devno[24];
};

struct it_out {
	FILE *text, *json;
	const char *sysfs_root;
	const struct out_devnames *dn; /* NULL: names from sysfs */
	uint64_t start_ns;
	int live, quiet;
	uint64_t min_lat_ns, sample; /* what thins the records (out_set_thinning) */
	int header_done;
	int error;
	uint64_t requests;
	uint64_t blocks_apart; /* block requests past a request's list, written apart */
	struct jw w; /* JSON lines not written yet (whole lines, no trailing newline) */
	uint64_t json_lost; /* JSON lines a failed write lost */
	uint32_t batch_lines; /* JSON lines in out->w */
	int torn; /* a failed write may have left a partial line in the file */
	int batch; /* JSON lines are batched */
	int json_started; /* a JSON line was written */
	uint64_t batch_ts; /* timestamp of the first request of the batch */
	struct out_dev devs[OUT_DEVS];
	unsigned int next_dev;
	struct stages stages; /* per-stage statistics from the requests (stages.c) */
	struct cg_cache *cg; /* cgroup paths (not owned); NULL: none */
	struct ct_names *names; /* the node's container and pod names (not owned); NULL: ids only */
	struct fn_cache *fn; /* file names (not owned); NULL: none */
	int live_cgroup; /* live lines end with the cgroup path (--cgroup given) */
};

/* outfmt.c: dev_get() of a device not in out->devs: look it up, keep it if named. */
__attribute__((noinline)) const struct out_dev *out_dev_lookup(struct it_out *out, uint32_t dev,
							       struct out_dev *tmp);

/* Name and "MAJ:MIN" of dev; tmp holds them when they are not cached. */
static inline const struct out_dev *dev_get(struct it_out *out, uint32_t dev, struct out_dev *tmp)
{
	for (int i = 0; i < OUT_DEVS; i++) {
		struct out_dev *e = &out->devs[i];

		if (e->uses && e->dev == dev) {
			e->uses--;
			return e;
		}
	}
	return out_dev_lookup(out, dev, tmp);
}

/* outfmt.c: below the other output files, calling none of them */
const char *out_dev_name(struct it_out *out, uint32_t dev, struct out_dev *tmp);
void out_json_write_lost(struct it_out *out, uint32_t lines, int torn);
/* Write the first len bytes (lines whole lines) of the batch in out->w, and empty it. */
void out_json_write(struct it_out *out, size_t len, uint32_t lines);
void out_json_line_done(struct it_out *out, size_t mark, int now);
void out_json_fflush(struct it_out *out);

/* output_json.c */
const char *out_cgroup_of(const struct it_out *out, uint64_t id);
void out_json_dev(struct it_out *out, uint32_t dev);
void out_json_request(struct it_out *out, const struct corr_req *r, const struct req_view *v);

/* output_stack.c: r->blocks[i]'s "stack" object, if it is in a stack */
void out_json_stack(struct it_out *out, const struct corr_req *r, int i);

#endif /* IT_OUTPUT_INT_H */
