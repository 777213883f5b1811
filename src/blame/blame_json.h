/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blame_json: the fields of the blame JSON lines (docs/json.md, "blame"), one
 * writer for report --blame's matrix lines and the daemon's per-request lines.
 */
#ifndef IT_BLAME_JSON_H
#define IT_BLAME_JSON_H

#include "blame/blame.h"
#include "lib/jsonw.h"
#include "records/recfmt.h" /* struct blame_line: a recording's entry too */

/* A wait and its parts (ns), as the lines carry them. */
struct blame_parts {
	double wait, own, unattr, self, others;
};

/*
 * key: the owner under by: {"cgroup_id","cgroup"} (no "cgroup" when NULL), {"pid","comm"},
 * {"comm"}; BLAME_BY_VM: a VM's {"vm","pid"} (cgroup: its name), else as by cgroup.
 */
void blame_json_owner(struct jw *j, const char *key, enum blame_by by, const struct blame_owner *o,
		      const char *cgroup);
/* "wait_ns", "own_ns", "unattributed_ns", "self_ns", "others_ns" */
void blame_json_parts(struct jw *j, const struct blame_parts *p);
/* One element of "culprits": {"who":{...},"ns"}; who NULL: {"other":true,"ns"}. */
void blame_json_culprit(struct jw *j, enum blame_by by, const struct blame_owner *who,
			const char *cgroup, double ns);
/*
 * A request's `blame` line (struct blame_line, records/recfmt.h: a recording's
 * entry too); name[i]: culprit i's cgroup path or VM name (NULL: none written).
 * _fields: its fields from "by" on, inside an object the caller opened.
 */
void blame_json_line(struct jw *j, const struct blame_line *l, const char *const name[]);
void blame_json_line_fields(struct jw *j, const struct blame_line *l, const char *const name[]);
/* The integer a line carries for ns. */
uint64_t blame_json_ns(double ns);
/* The blame_stats line's counters: "by", "requests", "split", "late", "truncated", "forced", "partial". */
void blame_json_stats(struct jw *j, enum blame_by by, const struct blame_stats *st, int partial);

#endif /* IT_BLAME_JSON_H */
