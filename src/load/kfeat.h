/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What this kernel offers the loader: its BTF (vmlinux and modules: tracepoint
 * signatures, functions, struct members), tracefs events, kernel symbols, and
 * what its BPF side accepts (fentry, kprobes, helpers and map types newer than
 * some kernels iotracer runs on). Probed once per start; loader.c decides.
 */
#ifndef IT_KFEAT_H
#define IT_KFEAT_H

struct btf;

#define IT_MAX_MOD_BTF 256

struct it_probe {
	struct btf *vmlinux;
	struct btf *mods[IT_MAX_MOD_BTF]; /* module BTFs, loaded on first need */
	int nr_mods;
	int mods_loaded;
	int fentry_err; /* 0: fentry works; else -errno */
	int kprobe_ok;
	char tracefs[64];
	char tracefs_why[128]; /* why there is none */
	/* BPF features of tracing programs, probed with libbpf (1: the kernel has it) */
	int task_btf; /* bpf_get_current_task_btf() (5.11) */
	int task_storage; /* task local storage map and helper (tracing: 5.12) */
	int loop; /* bpf_loop() (5.17) */
	int task_regs; /* bpf_task_pt_regs() (5.15): the file IO hooks read the syscall's number */
	int xchg; /* BPF atomics with fetch, xchg (5.12): else the compat object */
	/*
	 * BTF objects can be listed by id (CAP_SYS_ADMIN): libbpf's CO-RE then
	 * reaches module types. Without it (a DaemonSet's CAP_BPF+CAP_PERFMON),
	 * relocations are against vmlinux alone and module types read as absent.
	 */
	int btf_ids;
	unsigned int hz; /* CONFIG_HZ (jiffies per second); 0: not known */
	char **ksyms; /* text symbols of /proc/kallsyms, sorted; loaded on first need */
	int nr_ksyms;
	int ksyms_loaded;
};

void it_probe_kernel(struct it_probe *p);
/* Why fentry cannot be used here (p->fentry_err != 0), as text. */
const char *it_fentry_why(const struct it_probe *p);
void it_probe_free(struct it_probe *p);

/* Parameters of a btf_trace_<tp> typedef's prototype (incl. the leading ctx); -1 if none. */
int it_btf_func_params(const struct btf *btf, const char *typedef_name);
/* The same, in vmlinux or a module. */
int it_tp_params(struct it_probe *p, const char *typedef_name);
/*
 * Argument i (0 = the first tracepoint argument, after the hidden ctx) of
 * btf_trace_<tp> in vmlinux: -1 no such typedef or argument, 0 not a pointer,
 * 1 a void pointer, 2 a pointer to something else.
 */
int it_tp_arg_ptr(const struct it_probe *p, const char *typedef_name, int i);
/* Does struct `name` have a top-level member `member` in this BTF? */
int it_btf_struct_has(const struct btf *btf, const char *name, const char *member);
/* Is the first parameter of kernel function `name` a pointer to a struct? */
int it_func_arg0_struct_ptr(struct it_probe *p, const char *name);
/* A struct of that name in the BTF of vmlinux or a module? */
int it_btf_type_exists(struct it_probe *p, const char *name);
/* A (non-inlined) kernel function of that name in the BTF of vmlinux or a module? */
int it_func_exists(struct it_probe *p, const char *name);
/*
 * A text symbol of that name in /proc/kallsyms: a kprobe target even where the
 * BTF lacks it (a module's function on a kernel without module BTF).
 */
int it_ksym_exists(struct it_probe *p, const char *name);
int it_tracefs_event_exists(const struct it_probe *p, const char *group, const char *name);

#endif /* IT_KFEAT_H */
