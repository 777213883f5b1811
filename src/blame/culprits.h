/* SPDX-License-Identifier: GPL-2.0 */
/*
 * culprits: `iotracer report --blame` (docs/blame.md): every block request read
 * goes to the blame engine (blame.h), or the recording's stored lines are summed
 * (--blame over a recording that kept them); the victims' splits add up into a
 * victim x culprit matrix per device, printed as text and as "blame" JSON lines.
 * report.c drives it; bykey.c takes the same names (struct rp_names).
 */
#ifndef IT_BLAME_CULPRITS_H
#define IT_BLAME_CULPRITS_H

#include <stdint.h>
#include <stdio.h>

struct corr_req;

struct rp_blame;
/* The recording's names of devices and cgroups. */
struct rp_names {
	const char *(*dev)(void *ctx, uint32_t dev);
	const char *(*cgroup)(void *ctx, uint64_t id); /* NULL: unknown */
	/* the pod of cgroup id: "namespace/name", else its UID; NULL: none (valid until the next call) */
	const char *(*pod)(void *ctx, uint64_t id);
	void *ctx;
};
/*
 * by: enum blame_by. stored: the matrix sums the recording's stored lines
 * (rb_add_line(); rb_add() then does nothing), not a split of its own.
 * NULL: out of memory.
 */
struct blame_line;
struct rp_blame *rb_new(int by, int stored);
/* A matched request's stored line: victim the owner (cgroup) of its block requests on dev. */
void rb_add_line(struct rp_blame *rb, uint32_t dev, uint64_t cgroup_id, const struct blame_line *l);
/* The sums of `lines` stored lines (a server's GROUP BY, docs/fleet.md): l's parts and culprits. */
void rb_add_sums(struct rp_blame *rb, uint32_t dev, uint64_t cgroup_id, const struct blame_line *l,
		 uint64_t lines);
/* Stored lines: matched requests with block requests whose line never came (rb_print's). */
void rb_set_missing(struct rp_blame *rb, uint64_t n);
/*
 * Every block request of every request read (culprits are never filtered);
 * victim(dev): whether r's block request on dev is a victim (NULL: none is).
 */
void rb_add(struct rp_blame *rb, const struct corr_req *r, int (*victim)(void *ctx, uint32_t dev),
	    void *ctx);
/* The matrix as text, and as "blame" JSON lines when json; 0 or -errno (json). */
int rb_print(struct rp_blame *rb, FILE *text, FILE *json, const struct rp_names *nm);
void rb_free(struct rp_blame *rb);

#endif /* IT_BLAME_CULPRITS_H */
