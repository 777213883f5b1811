/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loader internals shared by loader.c (load, attach, detach), hooktab.c (the
 * table of hooks), methods.c (a method per hook, autoload) and hookreport.c
 * (the attach report, the layer checks, the programs' statistics). Not for
 * other modules: they use loader.h.
 */
#ifndef IT_LOADER_INT_H
#define IT_LOADER_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "load/kfeat.h"
#include "load/loader.h"

struct bpf_program;
struct bpf_map;

/*
 * A hook: one kernel event, with the program names implementing it per
 * method (NULL: no such variant). Entry/exit pairs are attached together.
 */
struct it_hook_def {
	int layer;
	const char *name; /* tracepoint or function name */
	const char *tp_group; /* tracefs group for `tp` */
	const char *progs[IT_M_MAX][IT_HOOK_PROGS];
	const char *alt; /* hooks with the same alt are one event under different names */
	int arg0_struct; /* fentry reads arg 0, which older verifiers allow for struct pointers only */
	int arg0_typed; /* tp_btf reads through arg 0: only where it is not a void * */
	int task_counters; /* IT_M_TASK: the task_struct member `name` read in place, no program */
	int thread_state; /* no program: where the per-thread state lives (report only) */
	const char *prog_array; /* no link: its program goes into this map (a tail call target) */
	const char *label; /* the report's name, when not the tracepoint's */
	const char *reads_type; /* a module struct its programs read fields of, if they can */
	int sched_switch; /* attached only with --sched-switch */
	int block_insert; /* attached only with --block-insert */
	int every_record; /* feeds only records: not attached when records are of slow requests only */
	int nested_complete; /* the second completion program (rodata nested_hooked) */
	int wb; /* IT_WB_HOOK_*: a hook of the writeback attribution (--writeback) */
	unsigned int needs; /* IT_NEED_*: BPF features its programs use */
	int path; /* IT_PATH_*: one of the syscall layer's ways (0: every way) */
	int shows_path; /* of the other path, still reported (off, saying why) */
	int target; /* its programs name no function: the loader binds them to `name` */
	int sys_fn; /* `name` is a syscall: the function is IT_SYS_FN_PREFIX + name */
};

/*
 * The syscall layer's ways (docs/hooks.md "The tax", --syscall-hooks): where
 * fentry or kprobes work and bpf_task_pt_regs reads the syscall's number, the
 * file systems' and block devices' methods, which only file IO runs; else the
 * raw_syscalls pair, which every syscall of the system runs, or the
 * per-syscall tracepoints of the traced syscalls.
 */
#define IT_PATH_RAW 1
#define IT_PATH_FILE 2
#define IT_PATH_PERCALL 3

/* The syscall functions of this architecture (one place: libaio, io_uring_enter). */
#if defined(__x86_64__)
#define IT_SYS_FN_PREFIX "__x64_sys_"
#elif defined(__aarch64__)
#define IT_SYS_FN_PREFIX "__arm64_sys_"
#else
#error "iotracer: the syscall functions' prefix of this architecture is not known"
#endif

/* struct it_hook_def.wb: attached under these --writeback modes */
#define IT_WB_HOOK_ANY 1 /* files and pages: who dirtied a page */
#define IT_WB_HOOK_PAGES 2 /* pages: the walk of a write request's pages */

/* Threads the per-thread state hash holds where there is no task storage. */
#define IT_TSTATE_HASH_ENTRIES 16384

/* BPF features a hook's programs need beyond what every supported kernel has. */
#define IT_NEED_LOOP 1u /* bpf_loop() (5.17): the libaio exits and the writeback walk use it */

/* hooktab.c: the table, NR_HOOKS entries */
extern const struct it_hook_def ld_hook_defs[];
extern const int ld_nr_hook_defs;
#define NR_HOOKS ld_nr_hook_defs

/* Whose own program prog is (no hook of the table: a caller attaches it), else LD_PROGS_NONE. */
enum ld_progs ld_mode_prog_of(const struct bpf_program *prog);
/* The kernel function a fentry/kprobe hook attaches to. */
const char *ld_hook_fn(const struct it_hook_def *d, char *buf, size_t n);

/* methods.c */
/* Can `method` implement hook `d` here? If not, say why in `why`. */
int ld_method_usable(struct it_probe *p, const struct it_hook_def *d, enum it_method m, char *why,
		     size_t n);
/* The method of every hook (ld->hooks), from the probe and the options. */
void ld_choose_methods(struct it_loader *ld, struct it_probe *p, const struct ld_config *o,
		       uint32_t layers, enum it_method prefer);
/* --writeback as it can run here (enum it_wbmode), from the options and the probe. */
int ld_choose_wb_mode(const struct ld_config *o, const struct it_probe *p, uint32_t layers);
struct bpf_program *ld_prog_by_name(struct it_loader *ld, const char *name);
/* Autoload exactly the programs of the chosen methods. */
void ld_set_autoload(struct it_loader *ld, const struct ld_config *o);

/* mapped.c: the maps read from mappings (before load: their sizes; after: the mappings). */
void *ld_map_mmap(const struct bpf_map *map, size_t *len);
int ld_mapped_size(struct it_loader *ld, const struct ld_config *o);
int ld_mapped_open(struct it_loader *ld);
void ld_mapped_close(struct it_loader *ld);

/* hookreport.c: each asked layer attached something (else an error), or all it tried (else a warning). */
int ld_check_layers(const struct it_loader *ld, const struct ld_config *o, uint32_t layers,
		    FILE *err);

#endif /* IT_LOADER_INT_H */
