// SPDX-License-Identifier: GPL-2.0
/*
 * output: a block record's place in its stack, the "stack" object of a
 * request's block[] entries (docs/json.md: block[].stack).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "records/corr.h"
#include "records/output_int.h"
#include "records/stack.h"
#include "lib/jsonw.h"

/* A partition's start sector, from sysfs (the last one asked kept); UINT64_MAX: unknown. */
static uint64_t part_start(struct it_out *out, uint32_t dev)
{
	static uint32_t last_dev;
	static uint64_t last_start = UINT64_MAX;
	char path[256];
	unsigned long long v;
	FILE *f;

	if (out->dn) /* a recording: not this machine's sysfs */
		return UINT64_MAX;
	if (dev == last_dev)
		return last_start;
	snprintf(path, sizeof(path), "%s/dev/block/%u:%u/start",
		 out->sysfs_root ? out->sysfs_root : "/sys", IT_MAJOR(dev), IT_MINOR(dev));
	f = fopen(path, "r");
	last_dev = dev;
	last_start = UINT64_MAX;
	if (f) {
		if (fscanf(f, "%llu", &v) == 1)
			last_start = v;
		fclose(f);
	}
	return last_start;
}

static void json_chain(struct it_out *out, const struct stk_info *si)
{
	char buf[STK_MAX_LEVELS * 72];
	struct out_dev tmp;
	size_t n = 0;

	buf[0] = 0;
	for (int k = 0; k < si->nr_chain && n < sizeof(buf); k++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", k ? " -> " : "",
				      dev_get(out, si->chain[k], &tmp)->name);
	jw_str(&out->w, "chain", buf);
}

void out_json_stack(struct it_out *out, const struct corr_req *r, int i)
{
	const struct it_block_rec *b = r->blocks[i];
	struct jw *w = &out->w;
	struct stk_info si;
	struct out_dev tmp;
	uint64_t sec;

	if (!stk_is_member(b) && !stk_is_upper(b))
		return;
	stk_describe(r, i, &si);
	jw_obj_begin(w, "stack");
	jw_str(w, "role", stk_is_upper(b) ? "upper" : "member");
	if (stk_is_member(b)) {
		const struct out_dev *d = dev_get(out, b->up_dev, &tmp);

		jw_str(w, "upper", d->name);
		jw_str(w, "upper_devno", d->devno);
		jw_str(w, "how", stk_how_name(si.how));
		sec = stk_upper_sector(r, i, &si,
				       si.how == STK_PARTITION ? part_start(out, b->up_dev) :
								 UINT64_MAX);
		if (sec != UINT64_MAX)
			jw_u64(w, "upper_sector", sec);
		if (b->up_off < IT_STK_FAR && si.how != STK_PARTITION && si.how != STK_LOST)
			jw_u64(w, "upper_offset", (uint64_t)b->up_off * 512);
	}
	if (stk_is_upper(b)) {
		jw_u64(w, "pieces", b->stk_pieces);
		if (b->stk_r_ns >= b->q_ns)
			jw_u64(w, "q2r_ns", b->stk_r_ns - b->q_ns);
		if (b->stk_m_ns && b->stk_m_ns <= b->c_ns)
			jw_u64(w, "m2c_ns", b->c_ns - b->stk_m_ns);
	}
	json_chain(out, &si);
	jw_obj_end(w);
}
