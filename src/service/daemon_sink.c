// SPDX-License-Identifier: GPL-2.0
/*
 * daemon_sink: --sink in the daemon (docs/fleet.md): the sink opened with the
 * run's options, fed each written request and blame line, and its line in the
 * summaries and its families in /metrics.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "service/daemon_int.h"
#include "blame/dblame.h"
#include "lib/jsonw.h"
#include "lib/log.h"
#include "records/output.h"
#include "records/metrics.h"
#include "sink/curldl.h"
#include "sink/sink.h"

static void on_blame_line(void *ctx, const struct blame_line *l)
{
	sink_blame(ctx, l);
}

/*
 * --sink's libcurl, loaded before the BPF side (a daemon without --sink never
 * maps it): 0, or -ELIBACC after one line naming the library and why.
 */
int daemon_sink_load(struct daemon *d)
{
	char who[PATH_MAX + 32], why[300];

	if (!d->o->sink_url || !sink_curl_load(why, sizeof(why)))
		return 0;
	it_err("%s: %s", cli_where(d->o, "sink", who, sizeof(who)), why);
	return -ELIBACC;
}

int daemon_sink_open(struct daemon *d, struct fn_cache *fn)
{
	const struct it_opts *o = d->o;
	char who[PATH_MAX + 32];
	struct sink_opts so = {
		.url = o->sink_url,
		.auth = o->sink_auth,
		.ca_file = o->sink_ca,
		.spill_dir = o->sink_spill ? o->sink_spill : SK_DEF_SPILL,
		.spill_max = o->sink_spill_max,
		.queue_max = o->sink_queue,
		.host = o->name,
		.timeout_ms = (long)(o->sink_timeout_ns / 1000000),
		.compress = o->sink_compress,
		.sysfs_root = o->sysfs_root,
		.start_ns = d->start_ns,
		.who = cli_where(o, "sink", who, sizeof(who)),
	};

	if (!o->sink_url)
		return 0;
	if (!strcmp(so.spill_dir, "none"))
		so.spill_dir = NULL;
	d->sink = sink_open(&so, d->cg, d->names);
	if (!d->sink)
		return -EINVAL;
	if (fn)
		sink_set_fnames(d->sink, fn);
	/* host mode's lines are by VM: the recording keeps none, the sink takes them */
	if (d->blame)
		dblame_set_line_fn(d->blame, on_blame_line, d->sink);
	return 0;
}

/* The end: what is left goes to the server or the spill; -EIO when rows were dropped. */
int daemon_sink_finish(struct daemon *d)
{
	uint64_t lost = d->sink ? sink_finish(d->sink) : 0;

	if (!lost)
		return 0;
	it_err("--sink: %llu rows were dropped (counted by reason in the summary and in "
	       "iotracer_sink_dropped_rows_total)",
	       (unsigned long long)lost);
	return -EIO;
}

/* A summary's `sink` JSON line (docs/json.md): the counters of the summary's text line. */
static void sink_json(struct daemon *d, int final)
{
	struct sink_stats st;
	size_t mark;
	struct jw *j = out_json_begin(d->out, &mark);

	if (!j)
		return;
	sink_stats(d->sink, &st);
	jw_obj_begin(j, NULL);
	jw_str(j, "type", "sink");
	jw_bool(j, "final", final);
	jw_u64(j, "requests", st.rows);
	jw_u64(j, "sent", st.sent);
	jw_u64(j, "queued", st.queue_rows);
	jw_u64(j, "spilled", st.spilled);
	jw_u64(j, "replayed", st.replayed);
	jw_u64(j, "blame_lines", st.blame_rows);
	jw_u64(j, "blame_sent", st.blame_sent);
	jw_obj_begin(j, "dropped");
	for (int i = 0; i < SK_DROP_NR; i++)
		jw_u64(j, sink_drop_name(i), st.dropped[i]);
	jw_obj_end(j);
	jw_obj_begin(j, "retries");
	for (int i = 0; i < SK_RETRY_NR; i++)
		jw_u64(j, sink_retry_name(i), st.retries[i]);
	jw_obj_end(j);
	jw_str(j, "scheme", st.scheme);
	jw_obj_end(j);
	out_json_end(d->out, mark);
}

void daemon_sink_summary(struct daemon *d, int final)
{
	if (!d->sink)
		return;
	if (d->text)
		sink_summary(d->sink, d->text);
	if (d->json)
		sink_json(d, final);
}

/* One sample of iotracer_sink_rows_total. */
static void rows_sample(FILE *f, const char *table, const char *state, uint64_t v)
{
	const struct metrics_label l[] = { { "table", table }, { "state", state } };

	metrics_sample_u64(f, "iotracer_sink_rows_total", l, 2, v);
}

/* The iotracer_sink_* families (docs/metrics.md). */
void daemon_sink_metrics(struct daemon *d, FILE *f)
{
	struct metrics_label l;
	struct sink_stats st;

	if (!d->sink)
		return;
	sink_stats(d->sink, &st);
	metrics_family(f, "iotracer_sink_rows_total", "counter",
		       "Requests (table requests) and blame lines (table blame) by what became "
		       "of them: handed to the sink, sent, spilled to disk, replayed from it.");
	rows_sample(f, "requests", "handed", st.rows);
	rows_sample(f, "requests", "sent", st.sent);
	rows_sample(f, "requests", "spilled", st.spilled);
	rows_sample(f, "requests", "replayed", st.replayed);
	rows_sample(f, "blame", "handed", st.blame_rows);
	rows_sample(f, "blame", "sent", st.blame_sent);
	metrics_family(f, "iotracer_sink_dropped_rows_total", "counter",
		       "Rows the sink could not keep, by reason.");
	l.name = "reason";
	for (int i = 0; i < SK_DROP_NR; i++) {
		l.value = sink_drop_name(i);
		metrics_sample_u64(f, "iotracer_sink_dropped_rows_total", &l, 1, st.dropped[i]);
	}
	metrics_family(f, "iotracer_sink_retries_total", "counter",
		       "Requests to the server sent again, by why the attempt failed.");
	for (int i = 0; i < SK_RETRY_NR; i++) {
		l.value = sink_retry_name(i);
		metrics_sample_u64(f, "iotracer_sink_retries_total", &l, 1, st.retries[i]);
	}
	metrics_single(f, "iotracer_sink_batches_total", "counter", "Batches the server took.",
		       st.batches);
	metrics_single(f, "iotracer_sink_sent_bytes_total", "counter",
		       "Their bytes, as sent (compressed).", st.bytes);
	metrics_single(f, "iotracer_sink_queue_rows", "gauge", "Rows waiting in memory.",
		       st.queue_rows);
	metrics_single(f, "iotracer_sink_queue_bytes", "gauge", "Their bytes.", st.queue_bytes);
	metrics_single(f, "iotracer_sink_spill_bytes", "gauge", "Bytes in the spill directory.",
		       st.spill_bytes);
	metrics_single(f, "iotracer_sink_up", "gauge",
		       "1 when the last request to the server got a 200.", (uint64_t)st.up);
}
