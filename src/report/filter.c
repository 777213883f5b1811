// SPDX-License-Identifier: GPL-2.0
/*
 * report: the filters (the run options' meanings: cli_filter) applied to a
 * recorded request, and the names a recording gives its devices and cgroups.
 */
#include <fnmatch.h>
#include <string.h>

#include "records/cgroup.h"
#include "records/container.h"
#include "records/fname.h"
#include "records/stages.h"
#include "lib/parse.h"
#include "report/driver.h"
#include "report/internal.h"
#include "report/jsonl.h"
#include "records/reader.h"

const char *rp_dev_name_of(void *ctx, uint32_t dev)
{
	return rr_dev_name(&((struct report *)ctx)->rr, dev);
}

const char *rp_dev_serial_of(void *ctx, uint32_t dev)
{
	return rr_dev_serial(&((struct report *)ctx)->rr, dev);
}

const char *rp_cgroup_of(void *ctx, uint64_t id)
{
	return rr_cgroup_path(&((struct report *)ctx)->rr, id);
}

const char *rp_pod_of(void *ctx, uint64_t id)
{
	struct report *rp = ctx;
	const char *path = rr_cgroup_path(&rp->rr, id);
	struct ct_full f;

	if (!path)
		return NULL;
	ct_describe(rp->names, path, &f); /* a malformed path: what it gave (container_matches) */
	if (f.pod)
		snprintf(rp->pod, sizeof(rp->pod), "%s/%s", f.pod_ns ? f.pod_ns : "", f.pod);
	else if (f.ci.pod_uid[0])
		snprintf(rp->pod, sizeof(rp->pod), "%s", f.ci.pod_uid);
	else
		return NULL;
	return rp->pod;
}

/* The task's cgroup, as the recording named it, is one of --cgroup or below one. */
static int cgroup_matches(const struct report *rp, const struct it_task *t)
{
	const char *path = rr_cgroup_path(&rp->rr, t->cgroup_id);

	for (int i = 0; path && i < rp->o.f.nr_cgroups; i++)
		if (cg_under(path, rp->o.f.cgroups[i]))
			return 1;
	return 0;
}

/*
 * --container: the id (4 hex digits or more of its start), or the name (this
 * host's, or the one the path holds); --pod: the UID, the name or namespace/name.
 */
static int container_matches(const struct report *rp, const struct it_task *t)
{
	const char *path = rr_cgroup_path(&rp->rr, t->cgroup_id), *c = rp->o.container;
	const char *p = rp->o.pod;
	char nsname[2 * CT_NAME_MAX];
	struct ct_full f;
	size_t n;

	if (!path)
		return 0;
	ct_describe(rp->names, path, &f);
	if (c) {
		n = strlen(c);
		if (!((f.ci.id[0] && n >= 4 && !strncmp(f.ci.id, c, n)) ||
		      (f.container && !strcmp(f.container, c)) ||
		      (f.ci.name[0] && !strcmp(f.ci.name, c))))
			return 0;
	}
	if (p) {
		snprintf(nsname, sizeof(nsname), "%s/%s", f.pod_ns ? f.pod_ns : "",
			 f.pod ? f.pod : "");
		if (!((f.ci.pod_uid[0] && !strcmp(f.ci.pod_uid, p)) ||
		      (f.pod && (!strcmp(f.pod, p) || !strcmp(nsname, p)))))
			return 0;
	}
	return 1;
}

static int dev_matches(const struct report *rp, uint32_t dev)
{
	const char *name = rr_dev_name(&rp->rr, dev);
	char devno[24];

	if (!dev)
		return 0;
	parse_fmt_devno(dev, devno, sizeof(devno));
	for (int i = 0; i < rp->o.f.nr_dev_names; i++)
		if (!strcmp(rp->o.f.dev_names[i], devno) ||
		    (name && !strcmp(rp->o.f.dev_names[i], name)))
			return 1;
	return 0;
}

/* --blame: a matching request's block request on dev is a victim when -d names dev. */
int rp_victim_dev(void *ctx, uint32_t dev)
{
	const struct report *rp = ctx;

	return !rp->o.f.nr_dev_names || dev_matches(rp, dev);
}

/* The task, device and inode of the request itself (not of its block requests). */
const struct it_task *rp_req_task(const struct corr_req *r, uint32_t *dev, uint64_t *ino)
{
	switch (r->kind) {
	case CORR_SYSCALL:
		*dev = r->sys->dev, *ino = r->sys->ino;
		return &r->sys->task;
	case CORR_URING:
		*dev = r->uring->dev, *ino = r->uring->ino;
		return &r->uring->task;
	case CORR_AIO:
		*dev = r->aio.iocb.dev, *ino = 0;
		return &r->aio.task;
	default:
		*dev = r->blocks[0]->dev, *ino = r->blocks[0]->ino;
		return stages_block_owner(r->blocks[0]);
	}
}

static int file_matches(const struct rp_opts *o, uint32_t dev, uint64_t ino)
{
	return o->has_file &&
	       (o->file_bdev ? dev == o->file_dev : dev == o->file_dev && ino == o->file_ino);
}

/* A recorded name against -f: the pattern, or the path and what is below it. */
static int name_matches(const struct rp_opts *o, const char *name)
{
	size_t n = strlen(o->file_pat), len = strlen(name), del = strlen(" (deleted)");
	char buf[RF_FILE_LEN];

	if (len > del && !strcmp(name + len - del, " (deleted)") && len - del < sizeof(buf)) {
		memcpy(buf, name, len - del);
		buf[len - del] = '\0';
		name = buf; /* the name it had */
	}
	if (o->file_glob)
		return !fnmatch(o->file_pat, name, 0);
	while (n > 1 && o->file_pat[n - 1] == '/')
		n--;
	return !strncmp(name, o->file_pat, n) && (!name[n] || name[n] == '/');
}

/* The recorded names of file k (the host's or the container's) against -f. */
static int key_matches(const struct report *rp, const struct fn_key *k)
{
	const struct fn_entry *e = rp->rr.fnames ? fn_peek(rp->rr.fnames, k) : NULL;

	return e && (name_matches(&rp->o, e->file) || (e->cfile && name_matches(&rp->o, e->cfile)));
}

/* -f: the request's file, or one of its block requests', by name or (this host's) inode. */
static int files_match(const struct report *rp, const struct corr_req *r, uint32_t dev,
		       uint64_t ino)
{
	const struct rp_opts *o = &rp->o;
	struct fn_key rk, k;
	int has_rk = fn_req_key(r, &rk);

	if (file_matches(o, dev, ino) || (has_rk && key_matches(rp, &rk)))
		return 1;
	for (int i = 0; i < r->nr_blocks; i++)
		if ((o->file_bdev && file_matches(o, r->blocks[i]->dev, 0)) ||
		    (fn_blk_key(r->blocks[i], has_rk ? &rk : NULL, &k) && key_matches(rp, &k)))
			return 1;
	return 0;
}

/* RP_F_NR when q passes every filter, else the first filter it fails. */
enum rp_filter rp_matches(const struct report *rp, const struct rp_req *q)
{
	const struct rp_opts *o = &rp->o;
	const struct it_opts *f = &o->f;
	const struct corr_req *r = q->r;
	/* a JSON line's times are CLOCK_MONOTONIC: on this boot's wall clock for the filters */
	int64_t off = q->real_off_ns ? q->real_off_ns : rp->boot_off_ns;
	uint64_t real = q->start_ns + (uint64_t)off, ino;
	uint32_t dev;
	const struct it_task *t = rp_req_task(r, &dev, &ino);
	int ok;

	if (f->min_lat_ns && (q->end_ns < q->start_ns || q->end_ns - q->start_ns < f->min_lat_ns))
		return RP_F_MINLAT;
	if (real < f->since_real || (f->until_real && real >= f->until_real))
		return RP_F_WINDOW;
	if (f->has_comm && strncmp(t->comm, f->comm, IT_COMM_LEN))
		return RP_F_COMM;
	ok = !f->nr_pids;
	for (int i = 0; !ok && i < f->nr_pids; i++)
		ok = t->pid == f->pids[i];
	if (!ok)
		return RP_F_PID;
	if (f->nr_cgroups && !cgroup_matches(rp, t))
		return RP_F_CGROUP;
	if ((o->container || o->pod) && !container_matches(rp, t))
		return RP_F_CONTAINER;
	if (f->nr_dev_names) {
		ok = dev_matches(rp, dev);
		for (int i = 0; !ok && i < r->nr_blocks; i++)
			ok = dev_matches(rp, r->blocks[i]->dev);
		if (!ok)
			return RP_F_DEV;
	}
	if (o->file_pat && !files_match(rp, r, dev, ino))
		return RP_F_FILE;
	return RP_F_NR;
}
