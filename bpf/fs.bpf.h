/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fs layer: what the filesystem did for the syscall in flight — page-cache
 * misses (filemap), iomap direct IO, flusher writeback of an inode (so its
 * bios are attributed to the file). Time in vfs_read/vfs_write (fentry) is no
 * longer taken: those run for sockets and pipes too (docs/hooks.md "fileio").
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

#endif /* IT_FS_BPF_H */
