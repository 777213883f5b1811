/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loader: the BPF side up and down. Probe the kernel (kfeat), pick per hook
 * the cheapest method that works here (ld_hook_defs[] in hooktab.c; docs/hooks.md),
 * autoload only those programs, set the rodata knobs and filters, load,
 * attach, and keep a per-hook report of what attached and why not. Also
 * the record buffers' sizes and mappings, and the programs' run statistics.
 */
#ifndef IT_LOADER_H
#define IT_LOADER_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include "records/output.h"
#include "iotracer.h"

struct iotracer_bpf;
struct bpf_link;
struct bpf_object;
struct ring_buffer;
struct recbuf;

/*
 * Attach methods, cheapest first: a hook takes the first that works here, so
 * the tracer attaches only what the chosen layers need, each the cheapest way.
 */
enum it_method {
	IT_M_NONE = 0,
	IT_M_TP_BTF,
	IT_M_RAW_TP,
	IT_M_TP,
	IT_M_FENTRY,
	IT_M_KPROBE,
	IT_M_TASK, /* no program: task_struct counters read by the syscall hooks */
	IT_M_HASH, /* no program: per-thread state in a hash by thread id (no task storage) */
	IT_M_MAX,
};

#define IT_HOOK_PROGS 2 /* entry + exit (fentry/fexit, kprobe/kretprobe, enter/exit) */

struct it_hook_state {
	const struct it_hook_def *def;
	int layer; /* enum it_layer */
	const char *name; /* hook name for reports */
	enum it_method method; /* chosen; IT_M_NONE when not attachable */
	int ok; /* attached */
	int off; /* not attached by choice (an option turns it on) */
	int kernel_has; /* no method, but the kernel has the tracepoint (BTF): counts as tried */
	int load_failed; /* its programs did not load and no other method could */
	int other_path; /* of the syscall layer's ways, one not in use (not reported) */
	char reason[160]; /* why not; for an attached hook, what it gives up here (or "") */
	struct bpf_link *links[IT_HOOK_PROGS];
};

struct it_loader {
	struct iotracer_bpf *skel;
	struct it_hook_state *hooks;
	int nr_hooks;
	uint32_t layers_on; /* layers with at least one hook attached */
	uint32_t layers_want; /* layers asked for (it_loader_load) */
	uint32_t self_tgid;
	int path; /* the syscall layer's way (loader_int.h IT_PATH_*: file, raw pair, per-syscall) */
	int kern_hists; /* the BPF side keeps the histograms (else: build them from records) */
	int wb_mode; /* enum it_wbmode: --writeback as it runs here (it_loader_load) */
	/* record buffers (size_buffers in loader.c) */
	int ncpu; /* possible CPUs */
	uint32_t slot_shift; /* log2(slots per CPU); 0: ring buffer only */
	uint64_t ring_bytes; /* the shared ring buffer */
	void *slots_mem, *pos_mem; /* mmap'd by it_loader_map_slots() */
	size_t slots_len, pos_len;
	/* the counters and histograms, read from these mappings (mapped.c) */
	uint32_t hist_shift; /* log2 of the histograms' indices */
	uint32_t agg_shift; /* log2 of the block aggregation's indices */
	void *counts_mem, *hkeys_mem, *hists_mem, *anames_mem, *agg_mem;
	size_t counts_len, hkeys_len, hists_len, anames_len, agg_len;
};

/*
 * The programs a caller attaches itself, no hook of the table (ld_mode_prog_of):
 * host mode's QEMU uprobes and mode_host_* (bpf/qemu.bpf.h), guest mode's
 * mode_guest_* (bpf/gpa.bpf.h).
 */
enum ld_progs { LD_PROGS_NONE = 0, LD_PROGS_GUEST, LD_PROGS_HOST };

/*
 * What the loader is asked for: the run's options that reach the BPF side (the
 * service fills them from its own: cli_ld_config) and what the caller does
 * with it (the daemon's mode, top). The lists point into the caller's storage,
 * read during the call only.
 */
struct ld_config {
	uint32_t layers; /* 1u << IT_L_*; 0 = all that attach */
	int verbose; /* -v: libbpf's and the verifier's logs */
	uint64_t ring_size; /* bytes, power of two */
	int file_names; /* files named at most (0: no names) */
	const char *syscall_hooks; /* auto (NULL), raw or percall */
	const char *writeback; /* off, files or pages (NULL: pages) */
	int sched_switch; /* the sched layer from the switch/wakeup hooks too */
	int block_insert; /* the block layer from the insert hook too (I stamp) */
	int keep_all_blocks; /* every block request leaves a record, even under -m (--blame) */
	/* what the caller wants of the BPF side */
	uint8_t agg_keys; /* IT_AGG_*: what the in-kernel aggregation keys by; 0: off */
	int want_iovecs; /* the syscalls' iovecs (host mode's join by buffer address) */
	enum ld_progs mode_progs; /* the caller's own programs, autoloaded (it attaches them) */
	int files_by_caller; /* the caller fills map files (host mode: its disks' images) */
	/* the filters (it_filters_apply, at start and in place on reload) */
	const uint32_t *pids; /* tgids, no duplicates */
	int nr_pids;
	char comm[IT_COMM_LEN];
	int has_comm;
	char *const *cgroups; /* directories or hierarchy paths */
	int nr_cgroups; /* at most IT_MAX_CGROUPS */
	const uint32_t *devs; /* kernel dev_t (IT_MKDEV), no duplicates */
	int nr_devs; /* at most IT_MAX_DEVS */
	const char *file_path; /* the file or directory traced; NULL: all */
	uint64_t min_lat_ns;
	uint64_t sample; /* 1 = all */
	/* the filters' errors name --cgroup and -f so: the option, or the config file's line */
	char where_cgroup[PATH_MAX + 32], where_file[PATH_MAX + 32];
};

const char *it_method_name(enum it_method m);

/* A hook's state (enum out_hook_st, records/output.h). */
enum out_hook_st it_hook_state_of(const struct it_hook_state *h);

/*
 * The hook table against an opened (not loaded) BPF object: every program it
 * names is in obj, and every program of obj but the QEMU uprobes is named by
 * exactly one hook. 0, or -EINVAL with what is wrong in why (a build defect:
 * a misspelt name would otherwise never be autoloaded, silently).
 */
int it_loader_check_hooks(const struct bpf_object *obj, char *why, size_t n);

/* Open, probe, configure, load, attach. Returns 0 or -errno (message printed). */
int it_loader_start(struct it_loader *ld, const struct ld_config *o, FILE *err);
/*
 * The two halves of it_loader_start: everything up to and with the filters
 * (programs loaded, nothing attached), then the attach. A re-attach loads the
 * new set while the old one still traces. 0 or -errno (message printed).
 */
int it_loader_load(struct it_loader *ld, const struct ld_config *o, FILE *err);
int it_loader_attach(struct it_loader *ld, const struct ld_config *o, FILE *err);
/*
 * Set the filters of o on the loaded programs (filters.h it_filters_apply: at
 * start and in place on reload) and note whether the kernel keeps the
 * histograms (ld->kern_hists). 0 or -errno (one line to err).
 */
int it_loader_filters(struct it_loader *ld, const struct ld_config *o, FILE *err);
/* Hook i is not worth reporting (layer off, or another name of it attached). */
int it_loader_hook_hidden(const struct it_loader *ld, int i);
/*
 * mmap the per-CPU record buffers (struct it_slot_pos, include/iotracer.h);
 * both NULL when they are off. Unmapped by it_loader_stop(). 0 or -errno.
 */
int it_loader_map_slots(struct it_loader *ld, void **slots, void **pos);
/*
 * The record path: the ring buffer (its records copied into recs:
 * recbuf_ring_record) and the per-CPU buffers mapped into recs (recbuf.h), for the daemon and `top
 * --blame`. 0 or -errno (one line said); *rb freed by the caller.
 */
int it_loader_records(struct it_loader *ld, struct ring_buffer **rb, struct recbuf *recs);
/*
 * Detach every hook, in parallel (a tracepoint detach waits for a grace
 * period); maps and programs stay until it_loader_stop(). Idempotent.
 */
void it_loader_detach(struct it_loader *ld);
/* Print the attach report (text). */
void it_loader_report(const struct it_loader *ld, FILE *f);
/*
 * Program runs the kernel skipped because the program was already running
 * on that CPU (bpf_prog_info.recursion_misses), summed per layer.
 */
void it_loader_skipped(const struct it_loader *ld, uint64_t skipped[IT_L_MAX]);
/* Per-program run counts and times (kernel.bpf_stats_enabled=1), recursion misses. */
void it_loader_prog_stats(const struct it_loader *ld, FILE *f);
/* Sum of run_cnt / run_time_ns over the loaded programs (bpf_stats_enabled). */
void it_loader_run_totals(const struct it_loader *ld, uint64_t *runs, uint64_t *ns);
/*
 * The attached side's drop and event counters (either may be NULL), summed
 * over CPUs from their mapping: no syscall.
 */
void it_loader_counts(const struct it_loader *ld, uint64_t *drops, uint64_t *counters);
/* Each histogram the BPF side keeps, summed over CPUs, from the mappings: no syscall. */
typedef void (*it_loader_hist_fn)(void *ctx, const struct it_hist_key *key,
				  const struct it_hist_val *val);
int it_loader_hists(const struct it_loader *ld, it_loader_hist_fn fn, void *ctx);
/* Destroy links and the skeleton; safe on a partly started loader. */
void it_loader_stop(struct it_loader *ld);

#endif /* IT_LOADER_H */
