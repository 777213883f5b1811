/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blame: who held the device while a block request waited (docs/blame.md).
 *
 * Feed every completed block request of a device (blame_add(), roughly in
 * completion order); once the stream's time (the largest completion seen, on
 * any device) has passed a request's completion + horizon, its wait is split
 * and handed to the callback:
 *   - queue wait [Q, D): each instant split 1/n over the n requests then in
 *     device service [D, C); an instant with none in service is unattributed
 *     (scheduler, plug, throttle: nothing of the device's held it);
 *   - device time [D, C): each instant split 1/n over the n in service, the
 *     request itself included; its own share is its service, not blame.
 * A share held by a request of the same owner (the key blame_new() was
 * given: cgroup, pid or comm) is "self", kept apart from the others'.
 *
 * What it cannot see: a device's internal queueing (n counts the requests the
 * block layer dispatched, not how the device orders them), a throttle, and
 * any request the filters did not record. Requests that complete after a
 * request they overlapped was resolved are counted late (their share of that
 * request's wait is missing, never guessed).
 *
 * Pure user space. Not thread safe.
 */
#ifndef IT_BLAME_H
#define IT_BLAME_H

#include <stddef.h>
#include <stdint.h>

#include "iotracer.h"

/* What victims and culprits are. */
enum blame_by {
	BLAME_BY_CGROUP,
	BLAME_BY_PID,
	BLAME_BY_COMM,
	/*
	 * host mode (the daemon's --blame, docs/blame.md): owner.pid is the QEMU
	 * of a VM's requests, one owner per VM; 0 for any other request, owned
	 * by its cgroup as under BLAME_BY_CGROUP
	 */
	BLAME_BY_VM,
};

/* Who a request is charged to: the dirtier of page-cache writes, else the submitter. */
struct blame_owner {
	uint64_t cgroup_id;
	uint32_t pid;
	char comm[IT_COMM_LEN];
};

/*
 * No task known: a block request the kernel issued on its own (the flush
 * machinery's requests without bios carry no submitter), named "(no task)".
 */
#define BLAME_NO_TASK "(no task)"
static inline int blame_owner_none(const struct blame_owner *o)
{
	return !o->pid && !o->cgroup_id && !o->comm[0];
}

/* One completed block request. */
struct blame_in {
	uint32_t dev;
	int victim; /* 0: only a culprit (a filter left it out of the victims) */
	uint64_t q_ns; /* queued (or inserted, or dispatched: the first stamp known) */
	uint64_t d_ns; /* dispatched to the driver; 0: never (all its wait is queue) */
	uint64_t c_ns; /* completed */
	struct blame_owner owner;
	uint64_t tag; /* the caller's, handed back */
};

/* A culprit's share of one request's wait (ns, fractional: 1/n splits). */
struct blame_share {
	struct blame_owner who;
	double ns;
};

/* One request's wait, split. own + unattr + self + others == c - q. */
struct blame_res {
	const struct blame_in *r;
	double own_ns; /* its own share of its device time */
	double unattr_ns; /* queue time with nothing in service */
	double self_ns; /* held by requests of the same owner */
	double others_ns; /* held by the culprits below */
	const struct blame_share *culprits; /* others by owner, largest first */
	int nr_culprits;
};

typedef void (*blame_fn)(const struct blame_res *res, void *ctx);

struct blame_stats {
	uint64_t added; /* requests fed */
	uint64_t bad; /* fed with c < q, or no completion: ignored */
	uint64_t resolved; /* victims split and handed to the callback */
	uint64_t late; /* arrived after a request they overlapped was resolved */
	uint64_t truncated; /* victims whose wait began before the kept history: not split */
	uint64_t forced; /* resolved before the horizon: the device's cap was reached */
};

/* The default horizon (live), and the device cap of blame_new(..., 0, ...). */
#define BLAME_DEF_HORIZON_NS 1000000000ULL
#define BLAME_DEF_CAP 65536

struct blame;

/*
 * horizon_ns: how long after a request's completion it waits for the requests
 * that overlapped it to arrive. cap: requests kept per device (0: default).
 * NULL on allocation failure.
 */
struct blame *blame_new(enum blame_by by, uint64_t horizon_ns, size_t cap, blame_fn fn, void *ctx);
/*
 * A block record as the engine's input: its stamps, device, owner (the dirtier
 * first: records/stages.h stages_block_owner); victim 0: a culprit only (an
 * upper bio is never a victim either). The daemon, top and report feed it so.
 */
void blame_in_block(struct blame_in *in, const struct it_block_rec *b, int victim);
/* One completed request; the callback may run for earlier ones. 0 or -ENOMEM. */
int blame_add(struct blame *b, const struct blame_in *in);
/*
 * The stream's time is at least now (the records' clock): a live source calls it
 * while idle, so that the last requests are split once the horizon has passed.
 */
void blame_tick(struct blame *b, uint64_t now);
/* The stream ended: resolve every request still waiting, with what arrived. */
void blame_flush(struct blame *b);
const struct blame_stats *blame_get_stats(const struct blame *b);
/*
 * The stream's time: every request fed with c_ns + horizon <= it has been
 * split (or counted truncated) by now.
 */
uint64_t blame_now(const struct blame *b);
void blame_free(struct blame *b);

/*
 * *p (an array of *alloc elements of size bytes) grown to hold need (doubling,
 * from 16). 0 or -ENOMEM (*p kept).
 */
int blame_grow(void **p, size_t *alloc, size_t need, size_t size);

/* Same owner under b's key. */
int blame_same(enum blame_by by, const struct blame_owner *a, const struct blame_owner *o);
/* --by NAME ("cgroup", "pid", "comm"; not "vm"): its enum blame_by, or -1. */
int blame_by_of(const char *name);
const char *blame_by_name(enum blame_by by);

#endif /* IT_BLAME_H */
