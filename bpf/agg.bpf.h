/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Block requests aggregated in the kernel, one hash update per completion:
 * count, bytes, a size histogram, queue and device time and a latency
 * histogram per (cgroup, process, file, device, op) (struct it_agg_key). What
 * the key holds besides device and op is the daemon's choice (agg_keys):
 * /metrics wants device × op (and the cgroup with --metrics-cgroup-depth, the
 * file with --metrics-files), `iotracer top` the process, cgroup and file: the
 * submitter's, or for a write of page-cache pages their dirtier's (wb.bpf.h). Off (agg_keys 0) unless one of them asked: no
 * cost for the record-only daemon. Counts every request that passed the
 * filters, whatever --sample and --min-latency say.
 */
#ifndef IT_AGG_BPF_H
#define IT_AGG_BPF_H

#include "config.bpf.h"
#include "core_fixes.bpf.h"
#include "record.bpf.h"
#include "hist.bpf.h"
#include "request.bpf.h"

/* Per CPU, so plain adds; entries on first use (a few hundred for a busy host). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, struct it_agg_key);
	__type(value, struct it_agg_val);
} agg SEC(".maps");

static struct it_agg_val zero_agg;

/* Slot of a request size: (2^(k-1), 2^k] bytes, so a 4096-byte request is in le="4096". */
static __always_inline u32 it_size_slot(u64 bytes)
{
	u32 k = bytes > 1 ? it_log2(bytes - 1) + 1 : 0;

	return it_verifier_mask(k < IT_SIZE_SLOTS ? k : IT_SIZE_SLOTS - 1, IT_SIZE_SLOTS - 1);
}

/*
 * A new key's cgroup, for the daemon to name while it exists (struct
 * it_cgroup_rec): through the ring buffer, waking the daemon, which handles it
 * at once (a container may exit and its cgroup go soon after its IO). One per
 * new key: rare.
 */
static __always_inline void it_agg_note(u64 cgroup_id, u64 now)
{
	struct it_cgroup_rec r = { .cgroup_id = cgroup_id, .ts_ns = now };

	it_hdr_init(&r.hdr, IT_REC_CGROUP, sizeof(r));
	if (bpf_ringbuf_output(&events, &r, sizeof(r), BPF_RB_FORCE_WAKEUP))
		it_drop(IT_L_BLOCK, IT_DROP_RINGBUF);
}

static __always_inline struct it_agg_val *it_agg_get(const struct it_task *t, u32 dev, u8 op,
						     const struct it_bio_info *bi, u64 now)
{
	struct it_agg_key key = { .dev = dev, .op = op };
	struct it_agg_val *v;

	if (agg_keys & IT_AGG_TGID)
		key.tgid = t->pid;
	if (agg_keys & IT_AGG_CGROUP)
		key.cgroup_id = t->cgroup_id;
	if ((agg_keys & IT_AGG_FILE) && bi->ino) {
		key.ino = bi->ino;
		key.file_dev = bi->file_dev;
		key.file_bdev = !!(bi->flags & IT_F_BDEV);
	}
	v = bpf_map_lookup_elem(&agg, &key);
	if (v)
		return v;
	if (!bpf_map_update_elem(&agg, &key, &zero_agg, BPF_NOEXIST) && (agg_keys & IT_AGG_NOTE))
		it_agg_note(t->cgroup_id, now);
	v = bpf_map_lookup_elem(&agg, &key);
	if (!v) {
		it_drop(IT_L_BLOCK, IT_DROP_HIST);
		return NULL;
	}
	if (agg_keys & IT_AGG_TGID)
		__builtin_memcpy(v->comm, t->comm, IT_COMM_LEN);
	return v;
}

/*
 * A block request (or an upper bio: stack.bpf.h) of `bytes` completed at
 * now: bi its state, owner the task it counts for (the submitter, or for a
 * write of page-cache pages their dirtier: wb.bpf.h), dev and op as its
 * record says.
 */
static __always_inline void it_agg_add(const struct it_bio_info *bi, const struct it_task *owner,
				       u32 dev, u8 op, u32 bytes, u64 now)
{
	struct it_agg_val *v;
	u64 lat = now - bi->q_ns;
	u32 k;

	if (!agg_keys)
		return;
	v = it_agg_get(owner, dev, op, bi, now);
	if (!v)
		return;
	v->count++;
	v->bytes += bytes;
	v->size[it_size_slot(bytes)]++;
	v->q2c_ns += lat;
	if (bi->d_ns && bi->d_ns >= bi->q_ns && bi->d_ns <= now) {
		v->nr_d++;
		v->q2d_ns += bi->d_ns - bi->q_ns;
		v->d2c_ns += now - bi->d_ns;
	}
	k = it_log2(lat);
	v->lat[it_verifier_mask(k < IT_LAT_SLOTS ? k : IT_LAT_SLOTS - 1, IT_LAT_SLOTS - 1)]++;
}

/* A block request: its bytes read from rq only when the aggregation is on. */
static __always_inline void it_agg_block(const struct it_bio_info *bi, const struct it_task *owner,
					 u32 dev, u8 op, struct request *rq, const bool btf,
					 u64 now)
{
	if (agg_keys)
		it_agg_add(bi, owner, dev, op, IT_RD(btf, rq, __data_len), now);
}

#endif /* IT_AGG_BPF_H */
