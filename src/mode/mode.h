/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mode: what guest and host mode add to the standalone daemon's event loop.
 * The daemon calls these at fixed points; a NULL member is skipped.
 */
#ifndef IT_MODE_H
#define IT_MODE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct it_opts;
struct it_loader;
struct it_out;
struct corr_req;

struct mode_env {
	const struct it_opts *o;
	struct it_loader *ld;
	struct it_out *out;
	FILE *json; /* JSON lines sink or NULL */
	FILE *text; /* human output */
};

struct mode_ops {
	const char *name;
	/* before the BPF load: adjust a copy of the options (host: QEMU pids) */
	int (*prepare)(struct it_opts *o, FILE *err);
	/* after load and attach; returns the state or NULL (message printed) */
	void *(*start)(const struct mode_env *env);
	/* an fd to add to the daemon's epoll (-1: none) */
	int (*epoll_fd)(void *m);
	/* a ring buffer record corr does not know; 1 if consumed */
	int (*record)(void *m, const void *data, size_t size);
	/* a finished request (after out_request) */
	void (*request)(void *m, const struct corr_req *r);
	/* the epoll fd was readable, or the drain timer fired (now: CLOCK_MONOTONIC) */
	void (*run)(void *m, uint64_t now_ns);
	/* a reload changed the filters in place (d->o has the new ones): guest re-sends its filter */
	void (*reload)(void *m);
	/* periodic and final summary lines */
	void (*summary)(void *m, int final);
	/*
	 * --metrics: append this mode's families to the /metrics text being built
	 * (core/metrics.h helpers), on the event loop, about once a second
	 */
	void (*metrics)(void *m, FILE *f);
	/* shut down: flush, close links, detach, free */
	void (*stop)(void *m);
};

extern const struct mode_ops guest_mode_ops;
extern const struct mode_ops host_mode_ops;

#endif /* IT_MODE_H */
