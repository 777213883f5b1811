/* SPDX-License-Identifier: GPL-2.0 */
/*
 * File names (issue 38): a file's path leaves the kernel once, in a name
 * record (struct it_name_rec), the first time a record of the run names the
 * file; every record carries only its dev and inode, and user space joins
 * them (src/records/fname.h, docs/json.md "file").
 *
 * The hot path pays a compare: the syscall layer keeps the last file each
 * thread's records named in its thread state (it_name_file), the block
 * layer the last one per CPU (it_name_inode, page-cache IO outside a
 * syscall: writeback, mmap faults, readahead). Only when that changes, and
 * every IT_NAME_RECHECK calls on the same file, is map "named" looked up;
 * only a file it does not hold, or whose dentry changed since it was named
 * (renamed, moved, unlinked, another link), costs the walk: its dentries'
 * names up to its file system's root, one bounded loop (it_name_emit, a
 * global function: the verifier checks it once, not at every call site).
 *
 * "named" is bounded (--file-names N); user space forgets names it has not
 * seen used for the longest and deletes them here, then bumps name_gen so
 * that no thread or CPU trusts its last file without a look (dnames.c).
 * A file the map has no room for is counted (IT_CNT_NAME_FULL) and tried
 * again at its next check; a name record the ring buffer has no room for
 * is counted (IT_CNT_NAME_LOST) and its entry deleted, so that it is tried
 * again too.
 */
#ifndef IT_NAMES_BPF_H
#define IT_NAMES_BPF_H

#include "config.bpf.h"
#include "maps.bpf.h"
#include "core_fixes.bpf.h"
#include "record.bpf.h"

/* Calls on one file between two looks at its name (a rename seen within as many). */
#define IT_NAME_RECHECK 64

/* What a file's name was made of when it was written: a change names it again. */
struct it_name_seen {
	u64 dentry;
	u64 parent;
	u64 hash_len; /* d_name's hash and length */
	u64 unlinked;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192); /* --file-names: set by the loader */
	__type(key, struct it_file_key);
	__type(value, struct it_name_seen);
} named SEC(".maps");

/* The walk's state between its steps (in the scratch: the callers' stacks are deep). */
struct it_name_walk {
	u64 d; /* the dentry whose name comes next */
	u64 root; /* its super block's root: the walk's end */
	u32 off; /* bytes of names written */
	u32 steps;
};

/*
 * A name record is built here (4 KiB: not on the stack), with the walk's
 * state and the dentry's. The slack past names[] lets the verifier see every
 * component copy in bounds: one starts below IT_NAME_MAX and is at most
 * IT_NAME_COMP long.
 */
struct it_name_buf {
	struct it_name_walk w;
	struct it_name_seen seen;
	struct it_name_rec r;
	char slack[IT_NAME_COMP];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct it_name_buf);
} name_buf SEC(".maps");

/* Per CPU: the last file the block layer's page-cache IO named (it_name_inode). */
struct it_name_last {
	u64 ino;
	u32 dev;
	u32 gen;
	u32 left;
	u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct it_name_last);
} name_last SEC(".maps");

/* One component at off into r->names; 0, or -1 when it does not fit (the path is cut). */
static __always_inline int it_name_comp(struct it_name_rec *r, u32 *off, u64 d)
{
	struct qstr q = {};
	u32 len, o = *off;

	it_dentry_name(d, &q);
	len = q.len;
	if (len > IT_NAME_COMP - 1) {
		len = IT_NAME_COMP - 1;
		r->flags |= IT_NM_CUT;
	}
	if (o + len + 1 > IT_NAME_MAX)
		return -1;
	o &= IT_NAME_MAX - 1;
	len &= IT_NAME_COMP - 1;
	bpf_probe_read_kernel(&r->names[o], len, q.name);
	r->names[o + len] = 0;
	*off = o + len + 1;
	r->nr++;
	return 0;
}

/* One step of the walk (state in this CPU's name_buf): d's name, then its parent. 1: ended. */
static long it_name_step(u32 i, void *data)
{
	struct it_name_buf *b;
	u32 zero = 0;
	u64 d, parent;

	b = bpf_map_lookup_elem(&name_buf, &zero);
	if (!b)
		return 1;
	d = b->w.d;
	b->w.steps++;
	if (d == b->w.root)
		return 1;
	parent = (u64)BPF_CORE_READ((struct dentry *)d, d_parent);
	if (!parent)
		return 1;
	if (parent == d) /* no directory holds it: a pseudo or disconnected dentry */
		b->r.flags |= IT_NM_PSEUDO;
	if (it_name_comp(&b->r, &b->w.off, d)) {
		b->r.flags |= IT_NM_CUT;
		return 1;
	}
	if (parent == d)
		return 1;
	b->w.d = parent;
	return 0;
}

/*
 * The names from dentry d up to its file system's root, leaf first, in
 * IT_NAME_DEPTH steps at most. With bpf_loop (5.17) the verifier checks a
 * step once; the bounded loop (the compat object's 5.10, kernels before
 * 5.17) makes it check every step of every program that names files (~55 k
 * instructions each, measured on 6.18: over a minute's load in the lab's
 * TCG guests with the file path's 20 programs).
 */
static __always_inline void it_name_walk(struct it_name_buf *b, u64 d)
{
	int i;

	b->w.d = d;
	b->w.root = (u64)BPF_CORE_READ((struct dentry *)d, d_sb, s_root);
	b->w.off = 0;
	b->w.steps = 0;
#ifndef IT_BPF_COMPAT
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop)) {
		bpf_loop(IT_NAME_DEPTH, it_name_step, NULL, 0);
		goto out;
	}
#endif
#pragma clang loop unroll(disable)
	for (i = 0; i < IT_NAME_DEPTH; i++)
		if (it_name_step(i, NULL))
			break;
#ifndef IT_BPF_COMPAT
out:
#endif
	if (b->w.steps >= IT_NAME_DEPTH && b->w.d != b->w.root && !(b->r.flags & IT_NM_PSEUDO))
		b->r.flags |= IT_NM_CUT;
	b->r.len = it_verifier_mask(b->w.off, 2 * IT_NAME_MAX - 1);
}

/* The dentry's state a change of name would change (struct it_name_seen). */
static __always_inline void it_name_state(u64 d, struct it_name_seen *s)
{
	struct dentry *de = (void *)d;
	u64 pprev = 0;

	s->dentry = d;
	s->parent = (u64)BPF_CORE_READ(de, d_parent);
	bpf_core_read(&s->hash_len, sizeof(s->hash_len), &de->d_name.hash_len);
	bpf_core_read(&pprev, sizeof(pprev), &de->d_hash.pprev);
	s->unlinked = !pprev && s->parent != d; /* d_unlinked() */
}

/*
 * Name file (ino, dev_key: dev | bdev << 32) unless "named" holds it as it is:
 * through its dentry and the mount it was reached by (file IO), or its inode
 * (dentry 0: page-cache IO). Pointers as plain values: a global function takes
 * scalars. Returns 1 when a name record was written.
 */
__noinline int it_name_emit(u64 dentry, u64 mnt, u64 inode, u64 ino, u64 dev_key)
{
	struct it_file_key k = { .ino = ino, .dev = (u32)dev_key, .bdev = (u32)(dev_key >> 32) };
	struct it_name_seen *s, *old;
	struct task_struct *task;
	struct it_name_buf *b;
	struct it_name_rec *r;
	u32 zero = 0, size;

	if (!dentry && inode)
		dentry = it_inode_alias(inode);
	b = bpf_map_lookup_elem(&name_buf, &zero);
	if ((!dentry && !inode) || !b)
		return 0;
	s = &b->seen;
	/* an inode of no dentry (a block device's own page cache): named by its type alone */
	if (dentry)
		it_name_state(dentry, s);
	else
		__builtin_memset(s, 0, sizeof(*s));
	old = bpf_map_lookup_elem(&named, &k);
	if (old && old->dentry == s->dentry && old->parent == s->parent &&
	    old->hash_len == s->hash_len && old->unlinked == s->unlinked)
		return 0;
	r = &b->r;
	r->flags = (k.bdev ? IT_NM_BDEV : 0) | (old ? IT_NM_AGAIN : 0) | (mnt ? 0 : IT_NM_INODE) |
		   (s->unlinked ? IT_NM_DELETED : 0);
	if (bpf_map_update_elem(&named, &k, s, BPF_ANY)) {
		it_count(IT_CNT_NAME_FULL);
		return 0;
	}
	task = (struct task_struct *)bpf_get_current_task();
	r->ts_ns = bpf_ktime_get_ns();
	r->ino = ino;
	r->dev = k.dev;
	r->mnt_id = it_mnt_id(mnt);
	r->mnt_ns = mnt ? BPF_CORE_READ(task, nsproxy, mnt_ns, ns.inum) : 0;
	r->pid = bpf_get_current_pid_tgid() >> 32;
	r->nr = 0;
	r->len = 0;
	it_sb_type(dentry ? (u64)BPF_CORE_READ((struct dentry *)dentry, d_sb) :
			    (u64)BPF_CORE_READ((struct inode *)inode, i_sb),
		   r->fstype);
	if (dentry)
		it_name_walk(b, dentry);
	else
		r->flags |= IT_NM_PSEUDO;
	size = IT_NAME_SIZE(r->len > IT_NAME_MAX ? IT_NAME_MAX : r->len);
	it_hdr_init(&r->hdr, IT_REC_NAME, size);
	if (bpf_ringbuf_output(&events, r, size, it_wake_flags())) {
		bpf_map_delete_elem(&named, &k);
		it_count(IT_CNT_NAME_LOST);
		return 0;
	}
	it_count(IT_CNT_NAMES);
	return 1;
}

/*
 * A thread's record names file f (ino and dev as the record has them; flags
 * its IT_F_*; st the thread's state): nothing to do while it is the thread's
 * last file, its name checked within IT_NAME_RECHECK calls, and no name
 * forgotten since (name_gen).
 */
static __always_inline void it_name_file(struct thread_state *st, struct file *f, u64 ino, u32 dev,
					 u32 flags)
{
	u32 gen = name_gen, bdev = flags & IT_F_BDEV ? 1 : 0;
	u64 dentry, mnt;

	if (!names_on)
		return;
	if (st->name_ino == ino && st->name_dev == dev && st->name_bdev == bdev &&
	    st->name_gen == gen && --st->name_left)
		return;
	st->name_ino = ino;
	st->name_dev = dev;
	st->name_bdev = bdev;
	st->name_gen = gen;
	st->name_left = IT_NAME_RECHECK;
	dentry = (u64)BPF_CORE_READ(f, f_path.dentry);
	mnt = (u64)BPF_CORE_READ(f, f_path.mnt);
	it_name_emit(dentry, mnt, 0, ino, dev | (u64)bdev << 32);
}

/* Page-cache IO of inode (ino on file system dev) outside a traced syscall: per CPU. */
static __always_inline void it_name_inode(u64 inode, u64 ino, u32 dev)
{
	struct it_name_last *l;
	u32 zero = 0, gen = name_gen;

	if (!names_on || !inode || !ino)
		return;
	l = bpf_map_lookup_elem(&name_last, &zero);
	if (!l)
		return;
	if (l->ino == ino && l->dev == dev && l->gen == gen && --l->left)
		return;
	l->ino = ino;
	l->dev = dev;
	l->gen = gen;
	l->left = IT_NAME_RECHECK;
	it_name_emit(0, 0, inode, ino, dev);
}

#endif /* IT_NAMES_BPF_H */
