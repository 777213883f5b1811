// SPDX-License-Identifier: GPL-2.0
/*
 * cliparts: the run's options as the parts below read them: the loader's
 * struct ld_config (load/loader.h) and the outputs' struct out_config
 * (records/output.h). Neither part reads struct it_opts: what the daemon's
 * mode or top wants of the BPF side their callers add (daemon_ld_config, top.c).
 */
#include <string.h>

#include "iotracer.h"
#include "load/loader.h"
#include "records/output.h"
#include "service/cli.h"

_Static_assert(CLI_MAX_CGROUPS <= IT_MAX_CGROUPS, "--cgroup list larger than the BPF side's");
_Static_assert(CLI_MAX_DEVS <= IT_MAX_DEVS, "-d list larger than the BPF side's");
_Static_assert(CLI_COMM_LEN == IT_COMM_LEN, "-c name as long as the BPF side's");

/* What the in-kernel aggregation keys by (agg.bpf.h): what /metrics wants. */
static uint8_t agg_keys_of(const struct it_opts *o)
{
	if (!o->metrics_addr)
		return 0;
	/* the daemon names each cgroup at its first request (IT_REC_CGROUP) */
	return IT_AGG_ON | (o->metrics_cg_depth >= 0 ? IT_AGG_CGROUP | IT_AGG_NOTE : 0) |
	       (o->metrics_files > 0 ? IT_AGG_FILE : 0);
}

void cli_ld_config(const struct it_opts *o, struct ld_config *c)
{
	memset(c, 0, sizeof(*c));
	c->layers = o->layers;
	c->verbose = o->verbose;
	c->ring_size = o->ring_size;
	c->file_names = o->file_names;
	c->syscall_hooks = o->syscall_hooks;
	c->writeback = o->writeback;
	c->sched_switch = o->sched_switch;
	c->block_insert = o->block_insert;
	c->keep_all_blocks = !!o->blame;
	c->agg_keys = agg_keys_of(o);
	c->pids = o->pids;
	c->nr_pids = o->nr_pids;
	memcpy(c->comm, o->comm, sizeof(c->comm));
	c->has_comm = o->has_comm;
	c->cgroups = o->cgroups;
	c->nr_cgroups = o->nr_cgroups;
	c->devs = o->devs;
	c->nr_devs = o->nr_devs;
	c->file_path = o->file_path;
	c->min_lat_ns = o->min_lat_ns;
	c->sample = o->sample;
	cli_where(o, "cgroup", c->where_cgroup, sizeof(c->where_cgroup));
	cli_where(o, "file", c->where_file, sizeof(c->where_file));
}

const struct out_config *cli_out_config(const struct it_opts *o, struct out_config *c)
{
	*c = (struct out_config){
		.sysfs_root = o->sysfs_root,
		.live = o->live,
		.quiet = o->quiet,
		.min_lat_ns = o->min_lat_ns,
		.sample = o->sample,
		.live_cgroup = o->nr_cgroups > 0,
	};
	return c;
}
