// SPDX-License-Identifier: GPL-2.0
/*
 * Output sinks: live per-request lines, JSON lines (docs/json.md), and
 * interval/final summaries with per-stage percentiles from the records
 * (computed in stages.c) and the in-kernel log2 histograms. Pure user
 * space: tested without BPF. Here the sinks, the live line and the attach
 * lines; a request's JSON line is output_json.c's, the summaries
 * output_summary.c's, the device names and the JSON batches outfmt.c's
 * (output_int.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "records/cgroup.h"
#include "records/container.h"
#include "records/hist.h"
#include "lib/abi.h"
#include "lib/jsonw.h"
#include "records/output.h"
#include "records/output_int.h"
#include "records/stages.h"
#include "lib/parse.h"
#include "lib/log.h"

const char *out_fmt_offset(uint64_t offset, char *buf, size_t n)
{
	if (offset == CORR_NO_OFFSET)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%llu", (unsigned long long)offset);
	return buf;
}
struct it_out *out_new(const struct out_config *o, FILE *text, FILE *json, uint64_t start_ns)
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
	out->live_cgroup = o->live_cgroup;
	/* a terminal still sees every line at once; so does the text stream if it is the same */
	if (json && json != text && fileno(json) >= 0 && !isatty(fileno(json))) {
		out->batch = 1;
		setvbuf(json, NULL, _IONBF, 0); /* batches are big: stdio would only copy */
	}
	jw_init(&out->w);
	return out;
}

struct jw *out_json_begin(struct it_out *out, size_t *mark)
{
	if (!out->json)
		return NULL;
	*mark = jw_len(&out->w);
	return &out->w;
}

void out_json_end(struct it_out *out, size_t mark)
{
	out_json_line_done(out, mark, 0);
}

void out_flush(struct it_out *out)
{
	if (out->json && jw_len(&out->w)) {
		out_json_write(out, jw_len(&out->w), out->batch_lines);
		out_json_fflush(out);
	}
}

void out_free(struct it_out *out)
{
	if (!out)
		return;
	/* daemon.c frees out before it closes the file: the last lines go now */
	if (out->json && jw_len(&out->w)) {
		out_json_write(out, jw_len(&out->w), out->batch_lines);
		out_json_fflush(out);
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

struct stages *out_stages(struct it_out *out, uint64_t requests)
{
	out->requests += requests;
	return &out->stages;
}

void out_set_fnames(struct it_out *out, struct fn_cache *fn)
{
	out->fn = fn;
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

/* ---- live line ---- */

static void live_line(struct it_out *out, const struct corr_req *r, const struct req_view *v)
{
	char lat[16] = "-", queue[16] = "-", devt[16] = "-", fs[16] = "-", runq[16] = "-", offs[24];
	struct out_dev tmp;
	const struct it_block_rec *b = r->nr_blocks ? r->blocks[0] : NULL;
	uint64_t rel = v->start_ns > out->start_ns ? v->start_ns - out->start_ns : 0;

	if (!out->header_done) {
		fprintf(out->text,
			"%-12s %-15s %-7s %-8s %-5s %-8s %12s %7s %9s %9s %9s %9s %9s%s\n",
			"TIME(s)", "COMM", "PID", "KIND", "OP", "DEV", "OFFSET", "BYTES", "LAT",
			"FS", "QUEUE", "DEVICE", "RUNQ", out->live_cgroup ? " CGROUP" : "");
		out->header_done = 1;
	}
	if (v->end_ns)
		parse_fmt_duration(stages_lat_of(v), lat, sizeof(lat));
	if (b && b->d_ns) {
		parse_fmt_duration(b->d_ns - b->q_ns, queue, sizeof(queue));
		parse_fmt_duration(b->c_ns - b->d_ns, devt, sizeof(devt));
	}
	if (r->kind == CORR_SYSCALL) {
		uint64_t blk = v->last_c > v->first_q ? v->last_c - v->first_q : 0;
		uint64_t l = stages_lat_of(v);

		parse_fmt_duration(l > blk ? l - blk : 0, fs, sizeof(fs));
		if (r->sys->flags & IT_F_SCHED_CNT)
			parse_fmt_duration(r->sys->runq_ns, runq, sizeof(runq));
	}
	fprintf(out->text, "%-12.6f %-15.15s %-7u %-8s %-5s %-8.8s %12s %7llu %9s %9s %9s %9s %9s",
		rel / 1e9, v->task->comm, v->task->pid, v->kind, abi_op_name(v->op),
		out_dev_name(out, v->dev, &tmp), out_fmt_offset(v->offset, offs, sizeof(offs)),
		(unsigned long long)v->bytes, lat, fs, queue, devt, runq);
	if (out->live_cgroup) {
		const char *cg = out_cgroup_of(out, v->task->cgroup_id);

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
	stages_make_view(r, &v);
	out->requests++;
	out->blocks_apart += (uint64_t)r->nr_blocks_apart;
	stages_request(&out->stages, r, &v);
	if (out->json)
		out_json_request(out, r, &v);
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
	out_json_line_done(out, mark, 1); /* with the requests before it, if any */
}
