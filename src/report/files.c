// SPDX-License-Identifier: GPL-2.0
/*
 * report: the files to read (segments, directories of them, JSON lines)
 * and every request they hold, through the filters, to the parts.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blame/blame.h"
#include "blame/blame_json.h"
#include "records/cgroup.h"
#include "records/fname.h"
#include "records/output.h"
#include "records/recfmt.h"
#include "records/stages.h"
#include "lib/log.h"
#include "report/driver.h"
#include "report/internal.h"
#include "report/jsonl.h"
#include "records/reader.h"

static int add_file(struct report *rp, const char *path)
{
	char **n = realloc(rp->files, (size_t)(rp->nr_files + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	rp->files = n;
	n[rp->nr_files] = strdup(path);
	if (!n[rp->nr_files])
		return -ENOMEM;
	rp->nr_files++;
	return 0;
}

static int seg_name(const struct dirent *e)
{
	size_t n = strlen(e->d_name), s = strlen(RF_SEG_SUFFIX);

	return n > s && !strcmp(e->d_name + n - s, RF_SEG_SUFFIX);
}

/* A directory: its segment files, by name (by time). */
static int add_dir(struct report *rp, const char *dir)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, seg_name, alphasort), err = 0;
	char p[PATH_MAX];

	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, ents[i]->d_name);
		if (!err)
			err = add_file(rp, p);
		free(ents[i]);
	}
	free(ents);
	return err;
}

int rp_collect(struct report *rp)
{
	struct stat st;
	int err;

	for (int i = 0; i < rp->o.nr_paths; i++) {
		const char *p = rp->o.paths[i];

		if (stat(p, &st)) {
			it_err("report: cannot access '%s': %s", p, strerror(errno));
			return 2;
		}
		err = S_ISDIR(st.st_mode) ? add_dir(rp, p) : add_file(rp, p);
		if (err) {
			it_err("report: cannot read '%s': %s", p, strerror(-err));
			return 1;
		}
	}
	return 0;
}

/* The oldest open time among the segment headers (for relative --since/--until). */
void rp_find_start(struct report *rp)
{
	uint8_t b[RF_SEG_HDR_LEN];
	struct rf_seg_hdr h;

	for (int i = 0; i < rp->nr_files; i++) {
		int fd = open(rp->files[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			continue;
		if (read(fd, b, sizeof(b)) == (ssize_t)sizeof(b) &&
		    !rf_seg_hdr_get(b, sizeof(b), &h)) {
			if (!rp->rec_start_real || h.real_ns < rp->rec_start_real)
				rp->rec_start_real = h.real_ns;
			rp->blame_segs += !!(h.flags & RF_SEG_F_BLAME);
		}
		close(fd);
	}
	/* every file a segment of a run that recorded its blame: --blame by cgroup uses it */
	rp->blame_stored = rp->nr_files && rp->blame_segs == rp->nr_files &&
			   rp->o.by <= BLAME_BY_CGROUP;
}

/*
 * A matched request of a segment whose run recorded blame: it waits for its
 * line, under its first block request on a --blame victim device (-d).
 */
static void wait_blame(struct report *rp, const struct rr_reader *rr, const struct corr_req *r)
{
	const struct it_block_rec *b = r->blocks[0];
	int victim = 0;

	if (rr->seg.run_mono_ns != rp->run_mono_ns || rr->seg.pid != rp->run_pid) {
		/* another run: its ids start again */
		rp->stored_missing += st_count(rp->stored);
		st_free(rp->stored);
		rp->stored = st_new();
		rp->run_mono_ns = rr->seg.run_mono_ns;
		rp->run_pid = rr->seg.pid;
	}
	for (int i = 0; !victim && i < r->nr_blocks; i++)
		if (rp_victim_dev(rp, r->blocks[i]->dev)) {
			b = r->blocks[i];
			victim = 1;
		}
	if (!rp->stored ||
	    st_put(rp->stored, r->id, b->dev, stages_block_owner(b)->cgroup_id, victim))
		rp->oom = 1;
}

void rp_on_blame(void *ctx, const struct rr_reader *rr, const struct blame_line *l)
{
	struct report *rp = ctx;
	uint64_t cgroup_id;
	uint32_t dev;
	int victim;

	(void)rr;
	if (!rp->stored || !st_take(rp->stored, l->id, &dev, &cgroup_id, &victim))
		return; /* its request did not match, or was not read */
	if (rp->blame && rp->blame_stored && victim)
		rb_add_line(rp->blame, dev, cgroup_id, l);
	rp_blame_json(rp, l);
}

void rp_blame_json(struct report *rp, const struct blame_line *l)
{
	const char *path[BLAME_LINE_TOP] = { NULL };
	char keep[BLAME_LINE_TOP][CG_PATH_MAX];
	struct jw *j;
	size_t mark;

	j = rp->jout ? out_json_begin(rp->jout, &mark) : NULL;
	if (!j)
		return;
	for (int i = 0; i < l->nr && i < BLAME_LINE_TOP; i++) {
		const char *p = l->named & (1u << i) ? rp_cgroup_of(rp, l->cgroup_id[i]) : NULL;

		if (p) {
			snprintf(keep[i], sizeof(keep[i]), "%s", p);
			path[i] = keep[i];
		}
	}
	blame_json_line(j, l, path);
	out_json_end(rp->jout, mark);
}

/* A matched request's -j line, Perfetto slices and heatmap cell. */
void rp_outputs(struct report *rp, const struct rp_req *q)
{
	uint32_t dev;
	uint64_t ino;

	if (rp->jout)
		out_request(q->r, rp->jout);
	if (rp->pf)
		pf_add(rp->pf, q);
	if (rp->hm) {
		rp_req_task(q->r, &dev, &ino);
		hm_add(rp->hm, q, dev);
	}
}

/*
 * One request read back; real_off_ns: its clocks' CLOCK_REALTIME - CLOCK_MONOTONIC;
 * rr: its segment's reader (NULL: a JSON line).
 */
static void report_req(struct report *rp, const struct rf_req *rq, int64_t real_off_ns,
		       const struct rr_reader *rr)
{
	struct corr_req r;
	struct rp_req q = { .r = &r, .real_off_ns = real_off_ns };
	enum rp_filter f;
	uint64_t cg = 0, ino;
	uint32_t dev;

	rf_req_view(rq, &r);
	if (rp->bykey)
		cg = rp_req_task(&r, &dev, &ino)->cgroup_id;
	rf_req_span(&r, &q.start_ns, &q.end_ns);
	f = rp_matches(rp, &q);
	if (rp->blame)
		rb_add(rp->blame, &r, f == RP_F_NR ? rp_victim_dev : NULL, rp);
	if (rp->bykey)
		bk_add_blocks(rp->bykey, &r, f == RP_F_NR, cg);
	if (f != RP_F_NR) {
		rp->failed[f]++;
		return;
	}
	rp->matched++;
	if (!rp->first_ns || q.start_ns < rp->first_ns)
		rp->first_ns = q.start_ns;
	if (q.end_ns > rp->last_ns)
		rp->last_ns = q.end_ns;
	out_request(&r, rp->out);
	rp_outputs(rp, &q);
	if (rr && (rr->seg.flags & RF_SEG_F_BLAME) && r.nr_blocks &&
	    (rp->jout || (rp->blame && rp->blame_stored)))
		wait_blame(rp, rr, &r);
	uhists_request(&rp->kh, &r);
	if (rp->slowest)
		slowest_add(rp->slowest, &q);
	if (rp->bykey)
		bk_add(rp->bykey, &q, cg);
}

void rp_on_req(void *ctx, const struct rr_reader *rr, const struct rf_req *rq)
{
	report_req(ctx, rq, (int64_t)(rr->seg.real_ns - rr->seg.mono_ns), rr);
}

/* A JSON line has no wall clock: its times stay CLOCK_MONOTONIC (--since from boot). */
static void on_json_req(void *ctx, const struct rf_req *rq)
{
	report_req(ctx, rq, 0, NULL);
}

/* A joined host-mode path: drawn in the Perfetto view only. */
static void on_json_path(void *ctx, const struct rp_path *g)
{
	struct report *rp = ctx;

	if (rp->pf)
		pf_add_path(rp->pf, g);
}

void rp_note_dev(void *ctx, uint32_t dev, const char *name, const char *serial)
{
	struct rf_dev d = { .dev = dev };

	snprintf(d.name, sizeof(d.name), "%s", name);
	snprintf(d.serial, sizeof(d.serial), "%s", serial ? serial : "");
	rr_note_dev(&((struct report *)ctx)->rr, &d);
}

void rp_note_cgroup(void *ctx, uint64_t id, const char *path)
{
	rr_note_cgroup(&((struct report *)ctx)->rr, id, path);
}

void rp_note_fname(void *ctx, const struct fn_key *k, const char *file, const char *cfile)
{
	rr_note_fname(&((struct report *)ctx)->rr, k->ino, k->dev, k->bdev, file, cfile);
}

/* A file written by -j: its first non-blank byte opens a JSON object. */
static int is_json_lines(const char *b, size_t n)
{
	size_t i = 0;

	while (i < n && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r'))
		i++;
	return i < n && b[i] == '{';
}

/* Read one segment or JSON lines file (mapped). */
int rp_read_file(struct report *rp, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	struct stat st;
	void *m;

	if (fd < 0 || fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || !st.st_size) {
		rp->rr.st.bad_segments++;
		it_warn("report: %s: %s, skipped", path,
			S_ISREG(st.st_mode) ? "empty, not a segment" :
					      "not a regular file: not a segment");
		goto out;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	if (is_json_lines(m, (size_t)st.st_size)) {
		struct jl_devs devs = {
			.fn = rp_note_dev,
			.path = on_json_path,
			.cgroup = rp_note_cgroup,
			.file = rp_note_fname,
			.ctx = rp,
		};

		err = jl_read(m, (size_t)st.st_size, &devs, on_json_req, rp, &rp->jl);
	} else {
		err = rr_segment(&rp->rr, m, (size_t)st.st_size);
	}
	munmap(m, (size_t)st.st_size);
	if (err == -EBADMSG || err == -EPROTO) {
		it_warn("report: %s: %s, skipped", path,
			err == -EBADMSG ?
				"not an iotracer recording segment" :
				"recorded by an iotracer of another format or ABI version");
		err = 0;
	}
out:
	if (fd >= 0)
		close(fd);
	if (err)
		it_err("report: cannot read '%s': %s", path, strerror(-err));
	return err;
}
