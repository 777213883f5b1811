// SPDX-License-Identifier: GPL-2.0
/*
 * Output sinks: live per-request lines, JSON lines (docs/json.md), and
 * interval/final summaries with per-stage percentiles from the records
 * (computed in stages.c) and the in-kernel log2 histograms. Pure user
 * space: tested without BPF.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cgroup.h"
#include "core/container.h"
#include "core/cli.h"
#include "core/hist.h"
#include "lib/abi.h"
#include "lib/jsonw.h"
#include "core/output.h"
#include "core/stages.h"
#include "lib/parse.h"
#include "lib/log.h"

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
	int live_cgroup; /* live lines end with the cgroup path (--cgroup given) */
};

const char *out_fmt_offset(uint64_t offset, char *buf, size_t n)
{
	if (offset == CORR_NO_OFFSET)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%llu", (unsigned long long)offset);
	return buf;
}
/* dev_get() of a device not in out->devs: look it up, and keep it if it has a name. */
static __attribute__((noinline)) const struct out_dev *dev_lookup(struct it_out *out, uint32_t dev,
								  struct out_dev *tmp)
{
	struct out_dev *e;
	const char *name = out->dn ? out->dn->name(out->dn->ctx, dev) :
				     parse_dev_name_cached(dev, out->sysfs_root);
	size_t n;

	parse_fmt_devno(dev, tmp->devno, sizeof(tmp->devno));
	if (!name)
		name = tmp->devno;
	n = strlen(name);
	tmp->dev = dev;
	tmp->name = name;
	if (n >= sizeof(tmp->nbuf) || !strcmp(name, tmp->devno))
		return tmp; /* no name (yet): parse_dev_name_cached() looks again after a while */
	e = &out->devs[out->next_dev];
	out->next_dev = (out->next_dev + 1) % OUT_DEVS;
	e->dev = dev;
	e->uses = OUT_DEV_USES;
	memcpy(e->nbuf, name, n + 1);
	e->name = e->nbuf;
	memcpy(e->devno, tmp->devno, sizeof(e->devno));
	return e;
}

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
	return dev_lookup(out, dev, tmp);
}

static const char *dev_name(struct it_out *out, uint32_t dev, struct out_dev *tmp)
{
	return dev ? dev_get(out, dev, tmp)->name : "-";
}

struct it_out *out_new(const struct it_opts *o, FILE *text, FILE *json, uint64_t start_ns)
{
	struct it_out *out = calloc(1, sizeof(*out));

	if (!out)
		return NULL;
	out->text = text;
	out->json = json;
	out->sysfs_root = o->sysfs_root;
	out->start_ns = start_ns;
	out->live = o->live && !o->quiet;
	out->quiet = o->quiet;
	out_set_thinning(out, o->min_lat_ns, o->sample);
	out->live_cgroup = o->nr_cgroups > 0;
	/* a terminal still sees every line at once; so does the text stream if it is the same */
	if (json && json != text && fileno(json) >= 0 && !isatty(fileno(json))) {
		out->batch = 1;
		setvbuf(json, NULL, _IONBF, 0); /* batches are big: stdio would only copy */
	}
	jw_init(&out->w);
	return out;
}

/*
 * A failed JSON write (disk full, a file system gone read-only) does not stop
 * the tracing: the lines of that batch are counted lost, the first failure is
 * said once, later batches are tried again (space may come back), and the
 * exit status says output was lost (out_error). A line the failed write may
 * have cut is ended before the next batch, so the file stays one object a line.
 */
static void json_lost(struct it_out *out, uint32_t lines, int torn)
{
	int err = errno ? errno : EIO;

	if (!out->error)
		it_warn("--json: write failed: %s: tracing goes on, lost lines are counted "
			"(summary: output_lost)", strerror(err));
	out->error = -err;
	out->json_lost += lines;
	out->torn |= torn;
	clearerr(out->json);
}

/* Lines of a batch that a write cut after n of its bytes: the ones not ended. */
static uint32_t lines_cut(const char *data, size_t n, uint32_t lines)
{
	uint32_t done = 0;

	for (size_t i = 0; i < n; i++)
		done += data[i] == '\n';
	return lines - done;
}

/*
 * Write the first len bytes of the JSON lines in out->w (whole lines: len is
 * jw_len(), or where the line that failed began; lines of them) and empty it.
 * A batched stream is unbuffered (out_new), so fwrite()'s count is what
 * reached the file and the lines it cut are counted exactly.
 */
static void json_write(struct it_out *out, size_t len, uint32_t lines)
{
	struct jw *w = &out->w;
	size_t n;

	if (len) {
		errno = 0;
		if (out->torn && fputc('\n', out->json) == EOF) {
			json_lost(out, lines, 1);
		} else {
			out->torn = 0;
			n = fwrite(jw_data(w), 1, len, out->json);
			if (n != len)
				json_lost(out, lines_cut(jw_data(w), n, lines), n > 0);
			else if (fputc('\n', out->json) == EOF)
				json_lost(out, 1, 1);
		}
		out->json_started = 1;
	}
	jw_reset(w);
	out->batch_lines = 0;
}

/* After a line was added at mark: write the batch if it is due; now: write it anyway. */
static void json_line_done(struct it_out *out, size_t mark, int now)
{
	struct jw *w = &out->w;

	if (jw_error(w)) {
		out->error = -EIO;
		out->json_lost++;
		json_write(out, mark, out->batch_lines); /* the lines before this one */
		return;
	}
	out->batch_lines++;
	if (now || !out->batch || !out->json_started || jw_len(w) >= OUT_BATCH_BYTES)
		json_write(out, jw_len(w), out->batch_lines);
}

/* fflush() the JSON stream (a buffered one: a terminal, a memory stream). */
static void json_fflush(struct it_out *out)
{
	errno = 0;
	if (fflush(out->json))
		json_lost(out, 0, 1);
}

void out_flush(struct it_out *out)
{
	if (out->json && jw_len(&out->w)) {
		json_write(out, jw_len(&out->w), out->batch_lines);
		json_fflush(out);
	}
}

void out_free(struct it_out *out)
{
	if (!out)
		return;
	/* daemon.c frees out before it closes the file: the last lines go now */
	if (out->json && jw_len(&out->w)) {
		json_write(out, jw_len(&out->w), out->batch_lines);
		json_fflush(out);
	}
	stages_free(&out->stages);
	jw_free(&out->w);
	free(out);
}

void out_set_devnames(struct it_out *out, const struct out_devnames *dn)
{
	out->dn = dn;
	memset(out->devs, 0, sizeof(out->devs));
}

void out_set_cgroups(struct it_out *out, struct cg_cache *cg)
{
	out->cg = cg;
}

void out_set_names(struct it_out *out, struct ct_names *names)
{
	out->names = names;
}

uint64_t out_requests(const struct it_out *out)
{
	return out->requests;
}

int out_error(const struct it_out *out)
{
	return out->error ? out->error : out->stages.error;
}

uint64_t out_json_lost(const struct it_out *out)
{
	return out->json_lost;
}

/* ---- JSON request ---- */

/* The cgroup path of id: a recording's table, else the daemon's cache; NULL: unknown. */
static const char *cgroup_of(const struct it_out *out, uint64_t id)
{
	if (out->dn && out->dn->cgroup)
		return out->dn->cgroup(out->dn->ctx, id);
	return cg_path(out->cg, id);
}

/* The container, pod or machine of a cgroup path (docs/json.md): only the fields known. */
static void json_container(struct jw *w, struct ct_names *names, const char *cg)
{
	const char *rt, *qos;
	struct ct_full f;

	ct_describe(names, cg, &f);
	rt = ct_runtime_name(f.ci.runtime);
	qos = ct_qos_name(f.ci.qos);
	if (rt)
		jw_str(w, "runtime", rt);
	if (f.ci.id[0])
		jw_str(w, "container_id", f.ci.id);
	if (f.container || f.ci.name[0])
		jw_str(w, "container", f.container ? f.container : f.ci.name);
	if (f.ci.ns[0])
		jw_str(w, "containerd_namespace", f.ci.ns);
	if (f.ci.pod_uid[0])
		jw_str(w, "pod_uid", f.ci.pod_uid);
	if (f.pod) {
		jw_str(w, "pod", f.pod);
		jw_str(w, "namespace", f.pod_ns);
	}
	if (qos)
		jw_str(w, "qos", qos);
}

static void json_task(struct it_out *out, const struct it_task *t)
{
	struct jw *w = &out->w;
	const char *cg = cgroup_of(out, t->cgroup_id);

	jw_u64(w, "pid", t->pid);
	jw_u64(w, "tid", t->tid);
	jw_strn(w, "comm", t->comm, sizeof(t->comm));
	jw_u64(w, "cgroup_id", t->cgroup_id);
	if (cg) {
		jw_str(w, "cgroup", cg);
		json_container(w, out->names, cg);
	}
}

/* "dev" and "devno" (literal keys: the writer's fast path) */
static void json_dev(struct it_out *out, uint32_t dev)
{
	const struct out_dev *d;
	struct out_dev tmp;

	if (!dev)
		return;
	d = dev_get(out, dev, &tmp);
	jw_str(&out->w, "dev", d->name);
	jw_str(&out->w, "devno", d->devno);
}

/* The driver layer's view of a block request (docs/json.md: block[].driver). */
static void json_driver(struct it_out *out, const struct it_block_rec *b)
{
	struct jw *w = &out->w;
	const char *serial = out->dn ? out->dn->serial(out->dn->ctx, b->dev) :
				       parse_dev_serial_cached(b->dev, out->sysfs_root);

	jw_obj_begin(w, "driver");
	jw_str(w, "layer", abi_layer_name(b->drv_layer));
	if (b->drv_submit_ns)
		jw_u64(w, "submit_ns", b->drv_submit_ns);
	if (b->drv_kick_ns)
		jw_u64(w, "kick_ns", b->drv_kick_ns);
	if (b->drv_done_ns)
		jw_u64(w, "done_ns", b->drv_done_ns);
	if (b->drv_submit_ns && b->drv_done_ns >= b->drv_submit_ns)
		jw_u64(w, "drv_ns", b->drv_done_ns - b->drv_submit_ns);
	jw_u64(w, "qid", b->drv_qid);
	jw_u64(w, "tag", b->drv_tag);
	jw_u64(w, "opcode", b->drv_opcode);
	jw_i64(w, "status", b->drv_status);
	if (serial)
		jw_str(w, "serial", serial);
	jw_obj_end(w);
}

/*
 * An issued request's stages from getrq (g: its stamp, else Q) to the issue:
 * g2i and i2d, or one g2d when the insert is not hooked.
 */
static void json_to_issue(struct jw *w, const struct it_block_rec *b, uint64_t g)
{
	uint64_t i = (b->flags & IT_F_HAS_I) ? b->i_ns : g;

	if (b->flags & IT_F_NO_I) {
		if (b->flags & IT_F_HAS_G)
			jw_u64(w, "g2d_ns", b->d_ns - g);
		return;
	}
	/* i2d needs a start: the insert, else getrq (issued directly) */
	if (b->flags & IT_F_HAS_G)
		jw_u64(w, "g2i_ns", i - g);
	if (b->flags & (IT_F_HAS_G | IT_F_HAS_I))
		jw_u64(w, "i2d_ns", b->d_ns - i);
}

/* Why a write's page-cache bytes have no dirtier (IT_WB_* bit i: name i). */
static const char *const wb_why_names[] = { "not_noted", "redirtied", "many", "truncated" };

const char *out_wb_why_name(unsigned int bit)
{
	return bit < sizeof(wb_why_names) / sizeof(wb_why_names[0]) ? wb_why_names[bit] : NULL;
}

/* The cgroup as "<key>_id" and "<key>" (its path, where known). */
static void json_cgroup(struct it_out *out, const char *key, uint64_t id)
{
	const char *cg = cgroup_of(out, id);
	char name[32];

	snprintf(name, sizeof(name), "%s_id", key);
	jw_u64(&out->w, name, id);
	if (cg)
		jw_str(&out->w, key, cg);
}

/*
 * Who dirtied the pages a block write carries (docs/json.md: block[].dirty),
 * and the cgroup the kernel charged it to.
 */
static void json_wb(struct it_out *out, const struct it_block_rec *b)
{
	const struct it_wb *wb = &b->wb;
	struct jw *w = &out->w;
	char devno[24];

	if (wb->blkcg_id)
		json_cgroup(out, "blkcg", wb->blkcg_id);
	jw_obj_begin(w, "dirty");
	if (wb->dirtier.pid) {
		json_task(out, &wb->dirtier);
		jw_u64(w, "bytes", wb->bytes);
	}
	if (wb->other_pid) {
		jw_u64(w, "other_pid", wb->other_pid);
		jw_u64(w, "other_bytes", wb->other_bytes);
	}
	jw_u64(w, "unknown_bytes", wb->unknown_bytes);
	if (wb->unknown_why) {
		jw_arr_begin(w, "unknown");
		for (unsigned int i = 0; out_wb_why_name(i); i++)
			if (wb->unknown_why & (1u << i))
				jw_str(w, NULL, out_wb_why_name(i));
		jw_arr_end(w);
	}
	if (wb->dirty_first_ns) {
		jw_u64(w, "first_ns", wb->dirty_first_ns);
		jw_u64(w, "last_ns", wb->dirty_last_ns);
		if (wb->dirty_first_ns <= b->q_ns)
			jw_u64(w, "age_ns", b->q_ns - wb->dirty_first_ns);
		if (wb->dirty_last_ns && wb->dirty_last_ns <= b->q_ns)
			jw_u64(w, "age_min_ns", b->q_ns - wb->dirty_last_ns);
	}
	snprintf(devno, sizeof(devno), "%u:%u", IT_MAJOR(wb->file_dev), IT_MINOR(wb->file_dev));
	jw_str(w, "file_devno", devno);
	jw_obj_end(w);
}

static void json_block(struct it_out *out, const struct it_block_rec *b)
{
	struct jw *w = &out->w;
	uint64_t g = b->g_ns ? b->g_ns : b->q_ns;

	jw_obj_begin(w, NULL);
	json_dev(out, b->dev);
	jw_str(w, "op", abi_op_name(b->op));
	if (corr_blk_offset(b) != CORR_NO_OFFSET)
		jw_u64(w, "sector", b->sector);
	jw_u64(w, "nr_sectors", b->bytes / 512);
	jw_u64(w, "bytes", b->bytes);
	jw_u64(w, "ino", b->ino);
	jw_u64(w, "q_ns", b->q_ns);
	if (b->flags & IT_F_HAS_G)
		jw_u64(w, "q2g_ns", b->g_ns - b->q_ns);
	if (b->d_ns) {
		json_to_issue(w, b, g);
		jw_u64(w, "q2d_ns", b->d_ns - b->q_ns);
		jw_u64(w, "d2c_ns", b->c_ns - b->d_ns);
	}
	jw_u64(w, "q2c_ns", b->c_ns - b->q_ns);
	jw_u64(w, "c_ns", b->c_ns);
	jw_u64(w, "merged", b->nr_merged);
	jw_i64(w, "error", b->error);
	jw_str(w, "origin", abi_name(&abi_origins, b->origin));
	jw_u64(w, "pid", b->task.pid);
	jw_u64(w, "tid", b->task.tid);
	if (b->flags & IT_F_WB)
		json_wb(out, b);
	if (b->drv_layer)
		json_driver(out, b);
	jw_obj_end(w);
}

static void json_request(struct it_out *out, const struct corr_req *r, const struct req_view *v)
{
	struct jw *w = &out->w;
	size_t mark = jw_len(w);
	uint64_t ts = v->end_ns ? v->end_ns : v->start_ns;

	if (!mark)
		out->batch_ts = ts;
	jw_obj_begin(w, NULL);
	jw_str(w, "type", "request");
	jw_u64(w, "id", r->id);
	jw_str(w, "kind", v->kind);
	jw_u64(w, "ts_ns", v->start_ns);
	json_task(out, v->task);
	if (r->kind == CORR_SYSCALL)
		jw_str(w, "syscall", abi_name(&abi_syscalls, r->sys->sys));
	else if (r->kind == CORR_AIO)
		jw_str(w, "syscall", "io_submit");
	jw_str(w, "op", abi_op_name(v->op));
	json_dev(out, v->dev);
	jw_u64(w, "ino", v->ino);
	if (v->offset != CORR_NO_OFFSET)
		jw_u64(w, "offset", v->offset);
	jw_u64(w, "bytes", v->bytes);
	if (r->kind != CORR_AIO || r->aio.reaped)
		jw_i64(w, "ret", v->ret);
	if (v->end_ns)
		jw_u64(w, "lat_ns", lat_of(v));
	if (r->kind == CORR_SYSCALL) {
		const struct it_syscall_rec *s = r->sys;

		jw_obj_begin(w, "fs");
		jw_bool(w, "dio", !!(s->flags & IT_F_DIO));
		/* a write's new pages are no misses: the field is a read's (json.md) */
		if (v->op == IT_OP_READ)
			jw_u64(w, "cache_miss_pages", s->cache_miss_pages);
		if (s->vfs_ns)
			jw_u64(w, "vfs_ns", s->vfs_ns);
		if (s->first_q_ns && s->first_q_ns >= s->enter_ns)
			jw_u64(w, "pre_block_ns", s->first_q_ns - s->enter_ns);
		if (v->last_c && v->last_c <= s->exit_ns)
			jw_u64(w, "post_block_ns", s->exit_ns - v->last_c);
		jw_obj_end(w);
		if (s->flags & (IT_F_SCHED_CNT | IT_F_SCHED_SW)) {
			jw_obj_begin(w, "sched");
			if (s->flags & IT_F_SCHED_CNT) {
				jw_u64(w, "switches", s->nr_switches);
				jw_u64(w, "preempted", s->nr_preempt);
				jw_u64(w, "runq_ns", s->runq_ns);
			}
			if (s->flags & IT_F_SCHED_SW) {
				jw_u64(w, "offcpu_ns", s->offcpu_ns);
				jw_u64(w, "offcpu_blocked_ns", s->offcpu_blocked_ns);
			}
			if (s->waker_tid) {
				jw_u64(w, "waker_tid", s->waker_tid);
				jw_strn(w, "waker_comm", s->waker_comm, sizeof(s->waker_comm));
			}
			jw_obj_end(w);
		}
		jw_u64(w, "nr_bios", s->nr_bios);
		if (r->has_waited)
			wbsync_json(w, &r->waited);
	} else if (r->kind == CORR_URING) {
		jw_obj_begin(w, "uring");
		jw_u64(w, "user_data", r->uring->user_data);
		jw_u64(w, "opcode", r->uring->opcode);
		jw_i64(w, "res", r->uring->res);
		jw_u64(w, "submit_ns", r->uring->submit_ns);
		jw_u64(w, "complete_ns", r->uring->complete_ns);
		jw_obj_end(w);
	} else if (r->kind == CORR_AIO) {
		jw_obj_begin(w, "aio");
		jw_hex(w, "iocb", r->aio.iocb.iocb);
		jw_u64(w, "submit_ns", r->aio.submit_ns);
		if (r->aio.reaped) {
			jw_u64(w, "reap_ns", r->aio.reap_ns);
			jw_i64(w, "res", r->aio.res);
		}
		jw_obj_end(w);
	}
	if (r->kind == CORR_BLOCK && r->parent.valid) {
		jw_obj_begin(w, "parent");
		jw_u64(w, "id", r->parent.id);
		jw_u64(w, "tid", r->parent.tid);
		jw_u64(w, "seq", r->parent.seq);
		jw_obj_end(w);
	}
	jw_arr_begin(w, "block");
	for (int i = 0; i < r->nr_blocks; i++)
		json_block(out, r->blocks[i]);
	jw_arr_end(w);
	if (r->nr_blocks_dropped)
		jw_u64(w, "block_dropped", r->nr_blocks_dropped);
	jw_obj_end(w);
	json_line_done(out, mark, (int64_t)(ts - out->batch_ts) >= (int64_t)OUT_BATCH_AGE_NS);
}

/* ---- live line ---- */

static void live_line(struct it_out *out, const struct corr_req *r, const struct req_view *v)
{
	char lat[16] = "-", queue[16] = "-", devt[16] = "-", fs[16] = "-", runq[16] = "-", offs[24];
	struct out_dev tmp;
	const struct it_block_rec *b = r->nr_blocks ? r->blocks[0] : NULL;
	uint64_t rel = v->start_ns > out->start_ns ? v->start_ns - out->start_ns : 0;

	if (!out->header_done) {
		fprintf(out->text, "%-12s %-15s %-7s %-8s %-5s %-8s %12s %7s %9s %9s %9s %9s %9s%s\n",
			"TIME(s)", "COMM", "PID", "KIND", "OP", "DEV", "OFFSET", "BYTES", "LAT",
			"FS", "QUEUE", "DEVICE", "RUNQ", out->live_cgroup ? " CGROUP" : "");
		out->header_done = 1;
	}
	if (v->end_ns)
		parse_fmt_duration(lat_of(v), lat, sizeof(lat));
	if (b && b->d_ns) {
		parse_fmt_duration(b->d_ns - b->q_ns, queue, sizeof(queue));
		parse_fmt_duration(b->c_ns - b->d_ns, devt, sizeof(devt));
	}
	if (r->kind == CORR_SYSCALL) {
		uint64_t blk = v->last_c > v->first_q ? v->last_c - v->first_q : 0;
		uint64_t l = lat_of(v);

		parse_fmt_duration(l > blk ? l - blk : 0, fs, sizeof(fs));
		if (r->sys->flags & IT_F_SCHED_CNT)
			parse_fmt_duration(r->sys->runq_ns, runq, sizeof(runq));
	}
	fprintf(out->text, "%-12.6f %-15.15s %-7u %-8s %-5s %-8.8s %12s %7llu %9s %9s %9s %9s %9s",
		rel / 1e9, v->task->comm, v->task->pid, v->kind, abi_op_name(v->op),
		dev_name(out, v->dev, &tmp), out_fmt_offset(v->offset, offs, sizeof(offs)),
		(unsigned long long)v->bytes, lat, fs, queue, devt, runq);
	if (out->live_cgroup) {
		const char *cg = cgroup_of(out, v->task->cgroup_id);

		fprintf(out->text, " %s", cg ? cg : "?");
	}
	fputc('\n', out->text);
}

void out_request(const struct corr_req *r, void *ctx)
{
	struct it_out *out = ctx;
	struct req_view v;

	if (r->kind == CORR_BLOCK && !r->nr_blocks)
		return;
	make_view(r, &v);
	out->requests++;
	stages_request(&out->stages, r, &v);
	if (out->json)
		json_request(out, r, &v);
	if (out->live)
		live_line(out, r, &v);
}

const char *out_hook_st_name(unsigned int s)
{
	static const char *const names[OUT_HS_MAX] = { "attached", "off", "absent", "failed" };

	return s < OUT_HS_MAX ? names[s] : "?";
}

void out_attach(struct it_out *out, const char *layer, const char *hook, const char *method,
		unsigned int state, const char *reason)
{
	struct jw *w = &out->w;
	size_t mark = jw_len(w);
	int ok = state == OUT_HS_ATTACHED;

	if (!out->json)
		return;
	jw_obj_begin(w, NULL);
	jw_str(w, "type", "attach");
	jw_str(w, "layer", layer);
	jw_str(w, "hook", hook);
	jw_str(w, "method", method);
	jw_bool(w, "ok", ok);
	jw_str(w, "state", out_hook_st_name(state));
	if (!ok)
		jw_str(w, "reason", reason ? reason : "");
	else if (reason && *reason) /* what it gives up on this kernel */
		jw_str(w, "note", reason);
	jw_obj_end(w);
	json_line_done(out, mark, 1); /* with the requests before it, if any */
}

/* ---- summaries ---- */

const char *out_khist_layer(const struct it_hist_key *k)
{
	if (k->layer == IT_L_SYSCALL && k->kind == IT_HK_URING)
		return "io_uring";
	if (k->layer == IT_L_SYSCALL && k->kind == IT_HK_AIO)
		return "aio";
	return abi_layer_name(k->layer);
}

/* "bytes" and "bytes_per_sec" of a stage row that carries them (total, q2c). */
static void json_tput(struct jw *w, const struct tput *t)
{
	if (!t->first_ns)
		return;
	jw_u64(w, "bytes", t->bytes);
	jw_u64(w, "bytes_per_sec", (uint64_t)tput_rate(t));
}

/* What the node's names gave and missed (docs/cgroups.md, "Names from the node"). */
static void json_names(struct jw *w, const struct ct_names *names)
{
	struct ct_names_stats st;

	ct_names_stats(names, &st);
	jw_obj_begin(w, "container_names");
	jw_u64(w, "pods", st.pods);
	jw_u64(w, "containers", st.containers);
	jw_u64(w, "miss_pod", st.miss_pod);
	jw_u64(w, "miss_container", st.miss_container);
	jw_u64(w, "bad_entries", st.bad);
	jw_u64(w, "malformed_paths", st.malformed);
	jw_obj_end(w);
}

static void json_summary(struct it_out *out, const struct out_summary_in *in)
{
	struct jw *w = &out->w;
	size_t mark = jw_len(w);
	uint64_t total = 0;

	jw_obj_begin(w, NULL);
	jw_str(w, "type", "summary");
	jw_bool(w, "final", in->final);
	jw_u64(w, "elapsed_ns", in->elapsed_ns);
	jw_obj_begin(w, "records");
	jw_u64(w, "syscall", in->corr->records[IT_REC_SYSCALL]);
	jw_u64(w, "block", in->corr->records[IT_REC_BLOCK]);
	jw_u64(w, "io_uring", in->corr->records[IT_REC_URING]);
	jw_u64(w, "aio", in->corr->records[IT_REC_AIO]);
	jw_obj_end(w);
	jw_u64(w, "requests", out->requests);
	/* what thinned the records: then the histograms are the BPF side's (docs/json.md) */
	jw_u64(w, "min_latency_ns", out->min_lat_ns);
	jw_u64(w, "sample", out->sample > 1 ? out->sample : 1);
	jw_u64(w, "unjoined", in->corr->unjoined);
	jw_u64(w, "output_lost", out->json_lost);
	jw_u64(w, "malformed", in->corr->malformed);
	if (out->names)
		json_names(w, out->names);
	jw_obj_begin(w, "drops");
	for (int i = 0; i < IT_NR_DROPS; i++)
		total += in->drops[i];
	jw_u64(w, "total", total);
	for (int l = 0; l < IT_L_MAX; l++) {
		jw_obj_begin(w, abi_layer_name(l));
		for (int k = 0; k < IT_DROP_KINDS; k++)
			jw_u64(w, abi_name(&abi_drops, k), in->drops[l * IT_DROP_KINDS + k]);
		jw_obj_end(w);
	}
	jw_obj_end(w);
	jw_obj_begin(w, "skipped_runs");
	for (int l = 0; l < IT_L_MAX; l++)
		jw_u64(w, abi_layer_name(l), in->skipped ? in->skipped[l] : 0);
	jw_obj_end(w);
	if (in->counters) {
		/* page-cache pages: noted dirty, and looked up at writeback (docs/json.md) */
		jw_obj_begin(w, "writeback");
		jw_u64(w, "noted", in->counters[IT_CNT_WB_NOTED]);
		jw_u64(w, "found", in->counters[IT_CNT_WB_FOUND]);
		jw_u64(w, "unknown", in->counters[IT_CNT_WB_UNKNOWN]);
		jw_obj_end(w);
	}
	jw_u64(w, "lost", in->lost_samples);
	jw_arr_begin(w, "stages");
	for (int i = 0; i < out->stages.nr; i++) {
		const struct stage_stat *s = &out->stages.st[i];
		const struct lhist *h = in->final ? s->total : s->ival;

		if (!lhist_count(h))
			continue;
		jw_obj_begin(w, NULL);
		jw_str(w, "layer", s->layer);
		json_dev(out, s->dev);
		jw_str(w, "op", abi_op_name(s->op));
		jw_str(w, "stage", s->stage);
		jw_u64(w, "count", lhist_count(h));
		jw_u64(w, "p50_ns", lhist_percentile(h, 50));
		jw_u64(w, "p90_ns", lhist_percentile(h, 90));
		jw_u64(w, "p99_ns", lhist_percentile(h, 99));
		jw_u64(w, "max_ns", lhist_max(h));
		jw_u64(w, "mean_ns", (uint64_t)lhist_mean(h));
		json_tput(w, in->final ? &s->tp_total : &s->tp_ival);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_arr_begin(w, "hists");
	for (int i = 0; i < in->nr_khists; i++) {
		const struct out_khist *kh = &in->khists[i];

		for (int s = 0; s < IT_ST_MAX; s++) {
			const struct it_hist *h = &kh->val.st[s];

			if (!h->count)
				continue;
			jw_obj_begin(w, NULL);
			jw_str(w, "layer", out_khist_layer(&kh->key));
			json_dev(out, kh->key.dev);
			jw_str(w, "op", abi_op_name(kh->key.op));
			jw_str(w, "stage", abi_stage_name(s));
			jw_u64(w, "count", h->count);
			jw_u64(w, "sum_ns", h->sum_ns);
			jw_arr_begin(w, "buckets");
			for (int k = 0; k < IT_HIST_SLOTS; k++) {
				if (!h->slots[k])
					continue;
				jw_obj_begin(w, NULL);
				jw_u64(w, "lo_ns", k ? 1ull << k : 0);
				jw_u64(w, "hi_ns", log2h_hi(k));
				jw_u64(w, "count", h->slots[k]);
				jw_obj_end(w);
			}
			jw_arr_end(w);
			jw_obj_end(w);
		}
	}
	jw_arr_end(w);
	jw_obj_end(w);
	json_line_done(out, mark, 1); /* with the requests before it */
	json_fflush(out);
}

void out_set_thinning(struct it_out *out, uint64_t min_lat_ns, uint64_t sample)
{
	out->min_lat_ns = min_lat_ns;
	out->sample = sample;
}

/* With -m or --sample the stage table counts the recorded requests only: say so. */
static void text_thinning(const struct it_out *out, FILE *f)
{
	char d[32];

	if (!out->min_lat_ns && out->sample <= 1)
		return;
	fprintf(f, "  the stage table counts the recorded requests only:");
	if (out->min_lat_ns)
		fprintf(f, " those at least %s long (-m)%s",
			parse_fmt_duration(out->min_lat_ns, d, sizeof(d)),
			out->sample > 1 ? "," : "");
	if (out->sample > 1)
		fprintf(f, " 1 in %llu (--sample)", (unsigned long long)out->sample);
	fprintf(f, "; the histograms below count every request\n");
}

/* The BYTES and MB/s columns of a stage row (blank for stages without bytes), and its end. */
static void text_tput(FILE *f, const struct tput *t)
{
	if (t->first_ns)
		fprintf(f, " %10llu %9.2f\n", (unsigned long long)t->bytes, tput_rate(t) / 1e6);
	else
		fputc('\n', f);
}

static void text_summary(struct it_out *out, const struct out_summary_in *in)
{
	FILE *f = out->text;
	struct out_dev tmp;
	uint64_t drops = 0;
	char b50[16], b90[16], b99[16], bmax[16];

	for (int i = 0; i < IT_NR_DROPS; i++)
		drops += in->drops[i];
	fprintf(f, "\n=== %s summary after %.1fs: %llu %srequests, %llu unjoined, %llu dropped ===\n",
		in->final ? "final" : "interval", in->elapsed_ns / 1e9,
		(unsigned long long)out->requests,
		out->min_lat_ns || out->sample > 1 ? "recorded " : "",
		(unsigned long long)in->corr->unjoined, (unsigned long long)drops);
	text_thinning(out, f);
	if (out->json_lost)
		fprintf(f, "  output lost: %llu JSON lines (write failed)\n",
			(unsigned long long)out->json_lost);
	for (int l = 0; in->skipped && l < IT_L_MAX; l++)
		if (in->skipped[l])
			fprintf(f, "  %s: %llu program runs skipped by the kernel (nested)\n",
				abi_layer_name(l), (unsigned long long)in->skipped[l]);
	for (int l = 0; drops && l < IT_L_MAX; l++)
		for (int k = 0; k < IT_DROP_KINDS; k++)
			if (in->drops[l * IT_DROP_KINDS + k])
				fprintf(f, "  drops: %s %s %llu\n", abi_layer_name(l),
					abi_name(&abi_drops, k),
					(unsigned long long)in->drops[l * IT_DROP_KINDS + k]);
	fprintf(f, "%-9s %-8s %-6s %-7s %9s %9s %9s %9s %9s %10s %9s\n", "LAYER", "DEV", "OP",
		"STAGE", "COUNT", "P50", "P90", "P99", "MAX", "BYTES", "MB/s");
	for (int i = 0; i < out->stages.nr; i++) {
		const struct stage_stat *s = &out->stages.st[i];
		const struct lhist *h = in->final ? s->total : s->ival;

		if (!lhist_count(h))
			continue;
		fprintf(f, "%-9s %-8.8s %-6s %-7s %9llu %9s %9s %9s %9s", s->layer,
			dev_name(out, s->dev, &tmp), abi_op_name(s->op), s->stage,
			(unsigned long long)lhist_count(h),
			parse_fmt_duration(lhist_percentile(h, 50), b50, sizeof(b50)),
			parse_fmt_duration(lhist_percentile(h, 90), b90, sizeof(b90)),
			parse_fmt_duration(lhist_percentile(h, 99), b99, sizeof(b99)),
			parse_fmt_duration(lhist_max(h), bmax, sizeof(bmax)));
		text_tput(f, in->final ? &s->tp_total : &s->tp_ival);
	}
	if (!in->final)
		return;
	for (int i = 0; i < in->nr_khists; i++) {
		const struct out_khist *kh = &in->khists[i];

		for (int s = 0; s < IT_ST_MAX; s++) {
			char title[96];

			if (!kh->val.st[s].count)
				continue;
			snprintf(title, sizeof(title), "%s %s %s %s (all requests)",
				 out_khist_layer(&kh->key), dev_name(out, kh->key.dev, &tmp),
				 abi_op_name(kh->key.op), abi_stage_name(s));
			fputc('\n', f);
			log2h_print(f, &kh->val.st[s], title);
		}
	}
}

void out_summary(struct it_out *out, const struct out_summary_in *in)
{
	if (in->final)
		stages_fold(&out->stages); /* the final summary reports total */
	if (out->json)
		json_summary(out, in);
	if (out->text)
		text_summary(out, in);
	if (!in->final)
		stages_fold(&out->stages);
	fflush(out->text);
}
