// SPDX-License-Identifier: GPL-2.0
/*
 * blame_json: the fields of the blame JSON lines (blame_json.h).
 */
#include <string.h>

#include "blame/blame_json.h"

uint64_t blame_json_ns(double ns)
{
	return ns > 0 ? (uint64_t)(ns + 0.5) : 0;
}

#define ns_of blame_json_ns

void blame_json_owner(struct jw *j, const char *key, enum blame_by by, const struct blame_owner *o,
		      const char *cgroup)
{
	jw_obj_begin(j, key);
	if (by == BLAME_BY_VM && o->pid) {
		/* cgroup: the VM's name here */
		jw_str(j, "vm", cgroup ? cgroup : "");
		jw_u64(j, "pid", o->pid);
	} else if (by == BLAME_BY_CGROUP || by == BLAME_BY_VM) {
		jw_u64(j, "cgroup_id", o->cgroup_id);
		if (cgroup)
			jw_str(j, "cgroup", cgroup);
	} else {
		if (by == BLAME_BY_PID)
			jw_u64(j, "pid", o->pid);
		jw_strn(j, "comm", o->comm, IT_COMM_LEN);
	}
	jw_obj_end(j);
}

void blame_json_parts(struct jw *j, const struct blame_parts *p)
{
	jw_u64(j, "wait_ns", ns_of(p->wait));
	jw_u64(j, "own_ns", ns_of(p->own));
	jw_u64(j, "unattributed_ns", ns_of(p->unattr));
	jw_u64(j, "self_ns", ns_of(p->self));
	jw_u64(j, "others_ns", ns_of(p->others));
}

void blame_json_culprit(struct jw *j, enum blame_by by, const struct blame_owner *who,
			const char *cgroup, double ns)
{
	jw_obj_begin(j, NULL);
	if (who)
		blame_json_owner(j, "who", by, who, cgroup);
	else
		jw_bool(j, "other", 1);
	jw_u64(j, "ns", ns_of(ns));
	jw_obj_end(j);
}

void blame_json_stats(struct jw *j, enum blame_by by, const struct blame_stats *st, int partial)
{
	jw_str(j, "by", blame_by_name(by));
	jw_u64(j, "requests", st->added);
	jw_u64(j, "split", st->resolved);
	jw_u64(j, "late", st->late);
	jw_u64(j, "truncated", st->truncated);
	jw_u64(j, "forced", st->forced);
	jw_bool(j, "partial", partial);
}

void blame_json_line_fields(struct jw *j, const struct blame_line *l, const char *const name[])
{
	struct blame_parts p = { (double)l->wait_ns, (double)l->own_ns, (double)l->unattr_ns,
				 (double)l->self_ns, (double)l->others_ns };
	struct blame_owner who;

	memset(&who, 0, sizeof(who));
	jw_str(j, "by", blame_by_name(l->by));
	jw_u64(j, "requests", l->requests);
	blame_json_parts(j, &p);
	jw_arr_begin(j, "culprits");
	for (int i = 0; i < l->nr && i < BLAME_LINE_TOP; i++) {
		who.cgroup_id = l->cgroup_id[i];
		who.pid = l->pid[i];
		blame_json_culprit(j, l->by, &who, name[i], (double)l->ns[i]);
	}
	if (l->other_ns)
		blame_json_culprit(j, l->by, NULL, NULL, (double)l->other_ns);
	jw_arr_end(j);
}

void blame_json_line(struct jw *j, const struct blame_line *l, const char *const name[])
{
	jw_obj_begin(j, NULL);
	jw_str(j, "type", "blame");
	jw_u64(j, "id", l->id);
	blame_json_line_fields(j, l, name);
	jw_obj_end(j);
}
