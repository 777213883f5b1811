// SPDX-License-Identifier: GPL-2.0
/*
 * filters: set the BPF side's filters on a loaded skeleton, at start or in
 * place on reload. See filters.h.
 *
 * The pid and file maps hold a generation number as value: the new set is
 * written with the next generation, then the entries of older ones are
 * deleted, so an entry in both sets is never missing. The device list is
 * double-buffered: the new list goes into the idle copy, then dev_cur flips.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "iotracer.h"
#include "iotracer.skel.h"
#include "records/cgroup.h"
#include "load/filters.h"
#include "load/loader.h"
#include "lib/log.h"

/* What the checks resolved, before anything is written. */
struct filter_in {
	int cg_fds[IT_MAX_CGROUPS]; /* --cgroup directories, open */
	struct stat file_st;
};

/* The generation of the pid and file map entries (wraps: only "current or not" matters). */
static uint8_t map_gen;

static void close_cgroups(struct filter_in *in)
{
	for (int i = 0; i < IT_MAX_CGROUPS; i++)
		if (in->cg_fds[i] >= 0)
			close(in->cg_fds[i]);
}

/* Open the --cgroup directories (they may have been removed since the options were read). */
static int open_cgroups(const struct ld_config *o, struct filter_in *in, FILE *err)
{
	char mnt[CG_PATH_MAX], rel[CG_PATH_MAX], path[2 * CG_PATH_MAX], why[CG_PATH_MAX + 128];
	const char *who = o->where_cgroup;
	int ret = o->nr_cgroups ? cg_mount_point(NULL, NULL, mnt, sizeof(mnt)) : 0;

	if (ret) {
		it_err_to(err, "%s: no cgroup2 hierarchy: %s", who, strerror(-ret));
		return ret;
	}
	for (int i = 0; i < o->nr_cgroups; i++) {
		if (cg_resolve(mnt, o->cgroups[i], rel, sizeof(rel), why, sizeof(why))) {
			it_err_to(err, "%s: %s", who, why);
			return -EINVAL;
		}
		snprintf(path, sizeof(path), "%s%s", mnt, rel);
		in->cg_fds[i] = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (in->cg_fds[i] < 0) {
			it_err_to(err, "%s: cannot open '%s': %s", who, path, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

static int check_inputs(const struct ld_config *o, struct filter_in *in, FILE *err)
{
	int ret;

	memset(in, 0, sizeof(*in));
	for (int i = 0; i < IT_MAX_CGROUPS; i++)
		in->cg_fds[i] = -1;
	ret = open_cgroups(o, in, err);
	if (ret)
		return ret;
	if (o->file_path && stat(o->file_path, &in->file_st)) {
		it_err_to(err, "%s: cannot stat '%s': %s", o->where_file, o->file_path,
			  strerror(errno));
		return -errno;
	}
	return 0;
}

/*
 * Delete the entries of map fd whose u8 value is not gen: collect their keys
 * first (a hash walk restarts when its current key is deleted), then delete.
 */
static void drop_stale(int fd, size_t key_size, uint8_t gen)
{
	uint8_t key[64], *stale = NULL, *grown, val;
	size_t n = 0, cap = 0;
	int have = 0;

	if (key_size > sizeof(key))
		return;
	while (!bpf_map_get_next_key(fd, have ? key : NULL, key)) {
		have = 1;
		if (bpf_map_lookup_elem(fd, key, &val) || val == gen)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			grown = realloc(stale, cap * key_size);
			if (!grown)
				break;
			stale = grown;
		}
		memcpy(stale + n++ * key_size, key, key_size);
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, stale + i * key_size);
	free(stale);
}

/* ---- files: nftw has no context argument ---- */
static int files_fd = -1;
static int files_added;

static int add_file(const struct stat *st)
{
	struct it_file_key k = { .ino = st->st_ino,
				 .dev = IT_MKDEV(major(st->st_dev), minor(st->st_dev)) };

	if (bpf_map_update_elem(files_fd, &k, &map_gen, BPF_ANY))
		return -errno;
	files_added++;
	return 0;
}

static int add_tree_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	if (type != FTW_F && type != FTW_D)
		return 0;
	return add_file(st) ? 1 : 0; /* stop once the map is full */
}

static int fill_files(struct iotracer_bpf *skel, const struct ld_config *o, const struct stat *st,
		      FILE *err)
{
	files_fd = bpf_map__fd(skel->maps.files);
	files_added = 0;
	if (!S_ISDIR(st->st_mode))
		return add_file(st);
	if (nftw(o->file_path, add_tree_entry, 16, FTW_PHYS | FTW_MOUNT) != 0)
		it_warn_to(err, "--file: only the first %d files of '%s' are traced", files_added,
			   o->file_path);
	return 0;
}

static int fill_pids(struct iotracer_bpf *skel, const struct ld_config *o)
{
	int fd = bpf_map__fd(skel->maps.pids);

	for (int i = 0; i < o->nr_pids; i++)
		if (bpf_map_update_elem(fd, &o->pids[i], &map_gen, BPF_ANY))
			return -errno;
	return 0;
}

/*
 * The --cgroup directories into the idle half of map "cgroups", then switch
 * to it (the map takes its own reference on each cgroup).
 */
static int set_cgroups(struct iotracer_bpf *skel, const struct ld_config *o,
		       const struct filter_in *in)
{
	struct iotracer_bpf__bss *b = skel->bss;
	int fd = bpf_map__fd(skel->maps.cgroups);
	uint32_t next = !(b->cg_cur & 1);

	for (int i = 0; i < o->nr_cgroups; i++) {
		uint32_t idx = next * IT_MAX_CGROUPS + i;

		if (bpf_map_update_elem(fd, &idx, &in->cg_fds[i], BPF_ANY))
			return -errno;
	}
	b->nr_cgroup_list[next] = o->nr_cgroups;
	__atomic_store_n(&b->cg_cur, next, __ATOMIC_RELEASE);
	return 0;
}

/* The device list into the idle copy, then switch to it. */
static void set_devs(struct iotracer_bpf__bss *b, const struct ld_config *o)
{
	uint32_t next = !(b->dev_cur & 1);

	for (int i = 0; i < o->nr_devs; i++)
		b->dev_list[next][i] = o->devs[i];
	b->nr_dev_list[next] = o->nr_devs;
	__atomic_store_n(&b->dev_cur, next, __ATOMIC_RELEASE);
}

/* The scalar knobs; each filter widens (flag off) before and narrows (flag on) after. */
static void set_knobs(struct iotracer_bpf *skel, const struct ld_config *o)
{
	struct iotracer_bpf__bss *b = skel->bss;
	/* files_by_caller: the files map holds what the caller put there (host mode's images) */
	int on_pid = o->nr_pids > 0, on_dev = o->nr_devs > 0, on_comm = o->has_comm;
	int on_file = o->file_path != NULL || o->files_by_caller;
	int on_cg = o->nr_cgroups > 0;

	if (!on_pid)
		b->filter_pid = 0;
	if (!on_dev)
		b->filter_dev = 0;
	if (!on_comm)
		b->filter_comm = 0;
	if (!on_file)
		b->filter_file = 0;
	if (!on_cg)
		b->filter_cgroup = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	set_devs(b, o);
	memcpy((char *)b->target_comm, o->comm, IT_COMM_LEN);
	b->agg_keys = o->agg_keys;
	b->min_lat_ns = o->min_lat_ns;
	b->sample_n = o->sample > 1 ? (uint32_t)o->sample : 1;
	/* every request leaves a record: the daemon builds the histograms (daemon.c) */
	b->kern_hists = o->sample > 1 || o->min_lat_ns > 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	b->filter_pid = on_pid;
	b->filter_dev = on_dev;
	b->filter_comm = on_comm;
	b->filter_file = on_file;
	b->filter_cgroup = on_cg;
}

int it_filters_apply(struct iotracer_bpf *skel, const struct ld_config *o, FILE *err)
{
	struct filter_in in;
	int ret;

	ret = check_inputs(o, &in, err);
	if (ret) {
		close_cgroups(&in);
		return ret;
	}
	map_gen++;
	ret = fill_pids(skel, o);
	if (!ret && o->nr_cgroups) /* none: set_knobs turns the filter off, the list stays */
		ret = set_cgroups(skel, o, &in);
	close_cgroups(&in);
	if (!ret && o->file_path && !o->files_by_caller)
		ret = fill_files(skel, o, &in.file_st, err);
	if (ret) {
		it_err_to(err, "cannot set up filters: %s", strerror(-ret));
		return ret;
	}
	set_knobs(skel, o);
	drop_stale(bpf_map__fd(skel->maps.pids), sizeof(uint32_t), map_gen);
	if (!o->files_by_caller)
		drop_stale(bpf_map__fd(skel->maps.files), sizeof(struct it_file_key), map_gen);
	return 0;
}
