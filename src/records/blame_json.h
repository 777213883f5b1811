/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blame_json: the fields of the blame JSON lines (docs/json.md, "blame"), one
 * writer for report --blame's matrix lines and the daemon's per-request lines.
 */
#ifndef IT_BLAME_JSON_H
#define IT_BLAME_JSON_H

#include "records/blame.h"
#include "lib/jsonw.h"

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
 * A request's `blame` line (the daemon's --blame -j, a recording's RF_E_BLAME
 * entry, host mode's host_blame): its block requests' parts and first
 * BLAME_LINE_TOP culprits, as the integers the line carries, so that the line
 * read back from a recording is the bytes the daemon wrote. A recording keeps
 * by cgroup only (by and pid zero when read back).
 */
#define BLAME_LINE_TOP 3
struct blame_line {
	uint64_t id; /* the request's */
	uint64_t requests; /* its block requests */
	uint64_t wait_ns, own_ns, unattr_ns, self_ns, others_ns;
	enum blame_by by; /* BLAME_BY_CGROUP, or BLAME_BY_VM (host mode) */
	int nr; /* culprits named, at most BLAME_LINE_TOP, the largest first */
	uint64_t cgroup_id[BLAME_LINE_TOP];
	uint32_t pid[BLAME_LINE_TOP]; /* BLAME_BY_VM: the VM's QEMU; 0: a cgroup */
	uint64_t ns[BLAME_LINE_TOP];
	unsigned int named; /* bit i: the writer knew culprit i's cgroup path */
	uint64_t other_ns; /* the culprits after them; 0: no "other" element */
};
/*
 * The line; name[i]: culprit i's cgroup path or VM name (NULL: none written).
 * _fields: its fields from "by" on, inside an object the caller opened.
 */
void blame_json_line(struct jw *j, const struct blame_line *l, const char *const name[]);
void blame_json_line_fields(struct jw *j, const struct blame_line *l, const char *const name[]);
/* The integer a line carries for ns. */
uint64_t blame_json_ns(double ns);
/* The blame_stats line's counters: "by", "requests", "split", "late", "truncated", "forced", "partial". */
void blame_json_stats(struct jw *j, enum blame_by by, const struct blame_stats *st, int partial);

#endif /* IT_BLAME_JSON_H */
