/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fs layer: what the filesystem did for the syscall in flight — page-cache
 * misses (filemap), iomap direct IO, flusher writeback of an inode (so its
 * bios are attributed to the file), and time in vfs_read/vfs_write where the
 * kernel allows fentry (or, failing that, kprobes).
 */
#ifndef IT_FS_BPF_H
#define IT_FS_BPF_H

#include "maps.bpf.h"
#include "core_fixes.bpf.h"
#include "progs.bpf.h"

/* Pages added to the page cache = misses. */
SEC("tp/filemap/mm_filemap_add_to_page_cache")
int fs_page_cache_add(struct trace_event_raw_mm_filemap_op_page_cache *ctx)
{
	struct thread_state *st = it_state();

	if (!st || !st->in_sys)
		return 0;
	st->cache_miss_pages += it_page_cache_pages(ctx);
	return 0;
}

SEC("tp_btf/iomap_dio_rw_begin")
int btf_iomap_dio_rw_begin(u64 *ctx)
{
	struct thread_state *st = it_state();

	if (st && st->in_sys)
		st->dio_count++;
	return 0;
}

/* Flusher writeback: bios queued between start and end belong to this inode. */
SEC("tp_btf/writeback_single_inode_start")
int btf_writeback_single_inode_start(u64 *ctx)
{
	struct inode *inode = (void *)ctx[0];
	struct thread_state *st;

	st = it_state_new(it_current_task());
	if (st)
		st->wb_ino = BPF_CORE_READ(inode, i_ino);
	return 0;
}

SEC("tp_btf/writeback_single_inode")
int btf_writeback_single_inode(u64 *ctx)
{
	struct thread_state *st = it_state();

	if (st)
		st->wb_ino = 0;
	return 0;
}

static __always_inline int it_vfs_enter(void)
{
	struct thread_state *st = it_state();

	if (st && st->in_sys)
		st->vfs_enter_ns = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int it_vfs_exit(void)
{
	struct thread_state *st = it_state();

	if (st && st->in_sys && st->vfs_enter_ns) {
		st->vfs_ns += bpf_ktime_get_ns() - st->vfs_enter_ns;
		st->vfs_enter_ns = 0;
	}
	return 0;
}

/*
 * fentry/fexit where allowed, kprobe/kretprobe otherwise; the loader picks. Programs:
 * fentry_vfs_read, kprobe_vfs_read, fexit_vfs_read, kretprobe_vfs_read,
 * fentry_vfs_write, kprobe_vfs_write, fexit_vfs_write, kretprobe_vfs_write.
 */
IT_FN_ENTRY(vfs_read, it_vfs_enter())
IT_FN_EXIT(vfs_read, it_vfs_exit())
IT_FN_ENTRY(vfs_write, it_vfs_enter())
IT_FN_EXIT(vfs_write, it_vfs_exit())

#endif /* IT_FS_BPF_H */
