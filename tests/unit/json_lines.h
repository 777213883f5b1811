/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The -j lines of recorded requests, as out_request() writes them: the oracle
 * the record and sink round trips compare their read-back requests with.
 */
#ifndef IT_TEST_JSON_LINES_H
#define IT_TEST_JSON_LINES_H

#include <stdio.h>

#include "records/output.h"
#include "records/recfmt.h"
#include "service/cli.h"

/* n requests' lines; devices and cgroups named by dn, files by fn (NULL: none). Freed by the caller. */
static inline char *json_lines(struct rf_req *reqs, int n, size_t *len,
			       const struct out_devnames *dn, struct fn_cache *fn)
{
	struct it_opts o;
	struct it_out *out;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	cli_defaults(&o);
	o.live = 0;
	o.sysfs_root = "/nonexistent";
	out = f ? out_new(cli_out_config(&o, &(struct out_config){ 0 }), NULL, f, 0) : NULL;
	if (out && dn)
		out_set_devnames(out, dn);
	if (out && fn)
		out_set_fnames(out, fn);
	for (int i = 0; out && i < n; i++) {
		struct corr_req r;

		rf_req_view(&reqs[i], &r);
		out_request(&r, out);
	}
	out_free(out);
	if (f)
		fclose(f);
	return buf;
}

#endif
