// SPDX-License-Identifier: GPL-2.0
/*
 * report_svg: --svg FILE, the overhead chart: added CPU of the rate-limited
 * workloads, IOPS lost on the unthrottled ones, BPF run time per IO, the tax
 * on calls no tracer traces; one bar per (workload, tracer) at the median
 * with a min-max whisker (svg.c draws).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/internal.h"
#include "bench/svg.h"

int bench_write_svg(const struct bench *b, const char *path)
{
	struct svg_bar *bars[4];
	struct svg_panel pan[4];
	char *labels, *doc;
	int nb[4] = { 0 }, np = 0, nl = 0, ret;
	size_t max = (size_t)NR_WLS * b->ntr + 1;
	static const char *const titles[4] = {
		"Added whole-system CPU, % per core (rate-limited workloads; bar = median, whisker = min-max)",
		"IOPS lost, % of the no-tracer IOPS (unthrottled workloads)",
		"BPF run time per IO, ns (bpf_stats runs)",
		"Tax: ns added per op, % of the no-tracer ns (getppid, pipe and socket write+read)",
	};

	labels = calloc(max * 4, 48);
	for (int i = 0; i < 4; i++)
		bars[i] = calloc(max, sizeof(struct svg_bar));
	if (!labels || !bars[0] || !bars[1] || !bars[2] || !bars[3]) {
		ret = -ENOMEM;
		goto out;
	}
	for (int wl = 0; wl < NR_WLS; wl++) {
		if (!b->wl_sel[wl])
			continue;
		for (int tr = 0; tr < b->ntr; tr++) {
			struct agg a;
			struct svg_bar *x;
			char *lab = labels + (size_t)48 * nl++;

			if (!b->wl_tr[wl][tr] || tr == b->none || !b->tr[tr].avail)
				continue;
			bench_aggregate(b, wl, tr, &a);
			snprintf(lab, 48, "%s", b->tr[tr].name);
			if (bench_wls[wl].metric == M_TAX) {
				x = &bars[3][nb[3]++];
				*x = (struct svg_bar){
					bench_wls[wl].name,	     lab,
					100 * (a.tax_ratio.med - 1), 100 * (a.tax_ratio.min - 1),
					100 * (a.tax_ratio.max - 1), tr
				};
				continue;
			}
			if (bench_wls[wl].metric == M_CPU) {
				x = &bars[0][nb[0]++];
				*x = (struct svg_bar){ bench_wls[wl].name, lab,		a.added.med,
						       a.added.min,	   a.added.max, tr };
			} else {
				x = &bars[1][nb[1]++];
				*x = (struct svg_bar){
					bench_wls[wl].name,	 lab,
					100 * (1 - a.ratio.med), 100 * (1 - a.ratio.max),
					100 * (1 - a.ratio.min), tr
				};
			}
			if (!isnan(a.bpf_ns_io.med)) {
				x = &bars[2][nb[2]++];
				*x = (struct svg_bar){
					bench_wls[wl].name, lab, a.bpf_ns_io.med, NAN, NAN, tr
				};
			}
		}
	}
	for (int i = 0; i < 4; i++) {
		if (!nb[i])
			continue;
		pan[np] = (struct svg_panel){ titles[i], bars[i], nb[i], NAN, NULL };
		if (i == 0) {
			pan[np].limit = 0.5;
			pan[np].limit_label = "target 0.5 %/core";
		} else if (i == 1) {
			pan[np].limit = 5;
			pan[np].limit_label = "target: psync <= 5 %, io_uring <= 10 %";
		} else if (i == 2) {
			pan[np].limit = 1500;
			pan[np].limit_label = "target 1500 ns (all layers)";
		} else {
			pan[np].limit = 20;
			pan[np].limit_label =
				"always-on targets: +35 % getppid, +60 % pipe, +20 % socket";
		}
		np++;
	}
	doc = bench_svg_chart("iotracer bench: tracer overhead under fio", pan, np);
	if (!doc) {
		ret = -ENOMEM;
		goto out;
	}
	ret = procfs_write_file(path, doc, strlen(doc));
	free(doc);
out:
	free(labels);
	for (int i = 0; i < 4; i++)
		free(bars[i]);
	return ret;
}
