/* SPDX-License-Identifier: GPL-2.0 */
/*
 * daemon: the tracer's event loop (docs/architecture.md, "Data flow"): load
 * and attach, drain the record buffers into requests and outputs, summaries
 * and /metrics on timers, SIGHUP reloads (docs/config.md), SIGINT/SIGTERM
 * stops. A mode (guest, host: docs/modes.md) plugs into fixed points of the
 * loop through struct mode_ops; the modes themselves live above (src/mode),
 * and the caller hands their table in.
 */
#ifndef IT_DAEMON_H
#define IT_DAEMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct it_opts;
struct it_loader;
struct ld_config;
struct it_out;
struct corr_req;
struct dblame;

struct mode_env {
	const struct it_opts *o;
	struct it_loader *ld;
	struct it_out *out;
	FILE *json; /* JSON lines sink or NULL */
	FILE *text; /* human output */
};

/* What a mode adds to the loop: called at fixed points; a NULL member is skipped. */
struct mode_ops {
	const char *name;
	/* before the BPF load: adjust a copy of the options (host: QEMU pids) */
	int (*prepare)(struct it_opts *o, FILE *err);
	/*
	 * what the mode wants of the BPF side (load/loader.h), at each load and filter
	 * change: its own programs, the syscalls' iovecs, the files map its own (host)
	 */
	void (*ld_config)(struct ld_config *c);
	/* after load and attach; returns the state or NULL (message printed) */
	void *(*start)(const struct mode_env *env);
	/* an fd to add to the daemon's epoll (-1: none) */
	int (*epoll_fd)(void *m);
	/* a ring buffer record corr does not know; 1 if consumed */
	int (*record)(void *m, const void *data, size_t size);
	/* --blame: the daemon's engine, after start (host: owners are VMs); 0 or -errno */
	int (*blame)(void *m, struct dblame *b);
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
	 * (records/metrics.h helpers), on the event loop, about once a second
	 */
	void (*metrics)(void *m, FILE *f);
	/* shut down: flush, close links, detach, free */
	void (*stop)(void *m);
};

/*
 * Trace until signalled or --duration. modes: the modes by enum it_mode
 * (IT_MODE_HOST + 1 entries; a NULL entry: the plain daemon, standalone).
 * Returns the exit status.
 */
int daemon_run(const struct it_opts *o, const struct mode_ops *const modes[]);

#endif /* IT_DAEMON_H */
