// SPDX-License-Identifier: GPL-2.0
/*
 * output: the interval and final summaries, text and JSON (per-stage
 * percentiles from stages.c, the kernel's histograms, drops, thinning).
 */

#include <stdio.h>
#include <string.h>

#include "records/container.h"
#include "records/hist.h"
#include "records/output.h"
#include "records/output_int.h"
#include "records/stages.h"
#include "lib/abi.h"
#include "lib/jsonw.h"
#include "lib/parse.h"

const char *out_khist_layer(const struct it_hist_key *k)
{
	if (k->layer == IT_L_SYSCALL && k->kind == IT_HK_URING)
		return "io_uring";
	if (k->layer == IT_L_SYSCALL && k->kind == IT_HK_AIO)
		return "aio";
	return abi_layer_name(k->layer);
}

const char *out_khist_role(const struct it_hist_key *k)
{
	if (k->layer == IT_L_STACK)
		return "upper";
	if (k->layer == IT_L_BLOCK && k->kind == IT_HK_MEMBER)
		return "member";
	return NULL;
}

/* "bytes" and "bytes_per_sec" of a stage row that carries them (total, q2c). */
static void json_tput(struct jw *w, const struct tput *t)
{
	if (!t->first_ns)
		return;
	jw_u64(w, "bytes", t->bytes);
	jw_u64(w, "bytes_per_sec", (uint64_t)stages_tput_rate(t));
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

/* File names: the BPF side's counts and the cache's (docs/json.md, "summary"). */
static void json_fnames(struct jw *w, const struct out_summary_in *in)
{
	const struct out_fnames *f = in->fnames;

	jw_obj_begin(w, "file_names");
	if (in->counters) {
		jw_u64(w, "named", in->counters[IT_CNT_NAMES]);
		jw_u64(w, "map_full", in->counters[IT_CNT_NAME_FULL]);
		jw_u64(w, "lost", in->counters[IT_CNT_NAME_LOST]);
	}
	jw_u64(w, "entries", f->entries);
	jw_u64(w, "hits", f->hits);
	jw_u64(w, "misses", f->misses);
	jw_u64(w, "evicted", f->evicted);
	jw_u64(w, "forgotten", f->forgotten);
	jw_u64(w, "no_mount", f->no_mount);
	jw_u64(w, "container", f->container);
	jw_u64(w, "container_gone", f->container_gone);
	jw_u64(w, "bad", f->bad);
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
	jw_u64(w, "block_apart", out->blocks_apart);
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
		/* the stack layer: upper bios followed and ended, pieces found, owners not */
		jw_obj_begin(w, "stack");
		jw_u64(w, "uppers", in->counters[IT_CNT_STK_UPPER]);
		jw_u64(w, "uppers_done", in->counters[IT_CNT_STK_UPPER_DONE]);
		jw_u64(w, "remaps", in->counters[IT_CNT_STK_REMAP]);
		jw_u64(w, "no_upper", in->counters[IT_CNT_STK_NO_UPPER]);
		jw_u64(w, "splits", in->counters[IT_CNT_STK_SPLIT]);
		jw_u64(w, "same_sector", in->counters[IT_CNT_STK_SAME]);
		jw_obj_end(w);
	}
	if (in->fnames)
		json_fnames(w, in);
	jw_u64(w, "lost", in->lost_samples);
	jw_arr_begin(w, "stages");
	for (int i = 0; i < out->stages.nr; i++) {
		const struct stage_stat *s = &out->stages.st[i];
		const struct lhist *h = in->final ? s->total : s->ival;

		if (!lhist_count(h))
			continue;
		jw_obj_begin(w, NULL);
		jw_str(w, "layer", s->layer);
		out_json_dev(out, s->dev);
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
			if (out_khist_role(&kh->key))
				jw_str(w, "role", out_khist_role(&kh->key));
			out_json_dev(out, kh->key.dev);
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
	out_json_line_done(out, mark, 1); /* with the requests before it */
	out_json_fflush(out);
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
		fprintf(f, " %10llu %9.2f\n", (unsigned long long)t->bytes,
			stages_tput_rate(t) / 1e6);
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
	fprintf(f,
		"\n=== %s summary after %.1fs: %llu %srequests, %llu unjoined, %llu dropped ===\n",
		in->final ? "final" : "interval", in->elapsed_ns / 1e9,
		(unsigned long long)out->requests,
		out->min_lat_ns || out->sample > 1 ? "recorded " : "",
		(unsigned long long)in->corr->unjoined, (unsigned long long)drops);
	text_thinning(out, f);
	if (out->blocks_apart)
		fprintf(f,
			"  %llu block requests written apart: past the %d a request lists, each "
			"is a block request whose parent is that request (block_apart)\n",
			(unsigned long long)out->blocks_apart, CORR_MAX_BLOCKS);
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
	if (in->fnames && in->counters &&
	    (in->fnames->misses || in->counters[IT_CNT_NAME_FULL] ||
	     in->counters[IT_CNT_NAME_LOST]))
		fprintf(f,
			"  file names: %llu named, %llu not named (--file-names full), %llu lost "
			"(ring full), %llu lookups missed\n",
			(unsigned long long)in->counters[IT_CNT_NAMES],
			(unsigned long long)in->counters[IT_CNT_NAME_FULL],
			(unsigned long long)in->counters[IT_CNT_NAME_LOST],
			(unsigned long long)in->fnames->misses);
	fprintf(f, "%-9s %-8s %-6s %-7s %9s %9s %9s %9s %9s %10s %9s\n", "LAYER", "DEV", "OP",
		"STAGE", "COUNT", "P50", "P90", "P99", "MAX", "BYTES", "MB/s");
	for (int i = 0; i < out->stages.nr; i++) {
		const struct stage_stat *s = &out->stages.st[i];
		const struct lhist *h = in->final ? s->total : s->ival;

		if (!lhist_count(h))
			continue;
		fprintf(f, "%-9s %-8.8s %-6s %-7s %9llu %9s %9s %9s %9s", s->layer,
			out_dev_name(out, s->dev, &tmp), abi_op_name(s->op), s->stage,
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
			snprintf(title, sizeof(title), "%s %s %s %s (all %srequests)",
				 out_khist_layer(&kh->key), out_dev_name(out, kh->key.dev, &tmp),
				 abi_op_name(kh->key.op), abi_stage_name(s),
				 kh->key.kind == IT_HK_MEMBER ? "member " : "");
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
