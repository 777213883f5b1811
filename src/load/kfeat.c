// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel probing for the loader (see kfeat.h): BTF lookups, tracefs (mounted
 * where nothing did), fentry and kprobe support, BPF helpers and map types,
 * kallsyms.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "load/kfeat.h"
#include "load/khz.h"
#include "lib/log.h"

int it_btf_func_params(const struct btf *btf, const char *typedef_name)
{
	const struct btf_type *t;
	int id;

	if (!btf)
		return -1;
	id = btf__find_by_name_kind(btf, typedef_name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return -1;
	t = btf__type_by_id(btf, id);
	t = btf__type_by_id(btf, t->type); /* pointer */
	if (!t || !btf_is_ptr(t))
		return -1;
	t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_func_proto(t))
		return -1;
	return btf_vlen(t);
}

int it_btf_struct_has(const struct btf *btf, const char *name, const char *member)
{
	int id = btf ? btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT) : -1;
	const struct btf_type *t = id >= 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_member *m = t ? btf_members(t) : NULL;

	for (int i = 0; t && i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member))
			return 1;
	return 0;
}

/* Module BTFs (split on vmlinux): where driver tracepoints and functions live. */
static void load_module_btfs(struct it_probe *p)
{
	struct dirent *e;
	DIR *dir;

	if (p->mods_loaded || !p->vmlinux)
		return;
	p->mods_loaded = 1;
	dir = opendir("/sys/kernel/btf");
	if (!dir)
		return;
	while ((e = readdir(dir)) && p->nr_mods < IT_MAX_MOD_BTF) {
		char path[300];
		struct btf *b;

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "vmlinux"))
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/btf/%s", e->d_name);
		b = btf__parse_split(path, p->vmlinux);
		if (b)
			p->mods[p->nr_mods++] = b;
	}
	closedir(dir);
}

/* Parameters of a tracepoint's btf_trace_ typedef, in vmlinux or a module; -1 if none. */
int it_tp_params(struct it_probe *p, const char *typedef_name)
{
	int n = it_btf_func_params(p->vmlinux, typedef_name);

	if (n >= 0)
		return n;
	load_module_btfs(p);
	for (int i = 0; i < p->nr_mods && n < 0; i++)
		n = it_btf_func_params(p->mods[i], typedef_name);
	return n;
}

/* Is the first parameter of kernel function `name` a pointer to a struct? */
int it_func_arg0_struct_ptr(struct it_probe *p, const char *name)
{
	for (int i = -1; i < p->nr_mods; i++) {
		const struct btf *b = i < 0 ? p->vmlinux : p->mods[i];
		const struct btf_type *t;
		int id = b ? btf__find_by_name_kind(b, name, BTF_KIND_FUNC) : -1;

		if (id < 0)
			continue;
		t = btf__type_by_id(b, btf__type_by_id(b, id)->type); /* FUNC_PROTO */
		if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 1)
			return 0;
		t = btf__type_by_id(b, btf_params(t)[0].type);
		while (t && (btf_is_mod(t) || btf_is_typedef(t)))
			t = btf__type_by_id(b, t->type);
		if (!t || !btf_is_ptr(t))
			return 0;
		t = btf__type_by_id(b, t->type);
		while (t && (btf_is_mod(t) || btf_is_typedef(t)))
			t = btf__type_by_id(b, t->type);
		return t && btf_is_composite(t);
	}
	return 0;
}

/* A BTF type of that name and kind in vmlinux or a module? */
static int btf_has_any(struct it_probe *p, const char *name, int kind)
{
	if (p->vmlinux && btf__find_by_name_kind(p->vmlinux, name, kind) >= 0)
		return 1;
	load_module_btfs(p);
	for (int i = 0; i < p->nr_mods; i++)
		if (btf__find_by_name_kind(p->mods[i], name, kind) >= 0)
			return 1;
	return 0;
}

/* Is there a (non-inlined) kernel function of that name, in vmlinux or a module? */
int it_func_exists(struct it_probe *p, const char *name)
{
	return btf_has_any(p, name, BTF_KIND_FUNC);
}

void it_probe_free(struct it_probe *p)
{
	for (int i = 0; i < p->nr_mods; i++)
		btf__free(p->mods[i]);
	btf__free(p->vmlinux);
	for (int i = 0; i < p->nr_ksyms; i++)
		free(p->ksyms[i]);
	free(p->ksyms);
}

int it_tracefs_event_exists(const struct it_probe *p, const char *group, const char *name)
{
	char path[256];

	if (!p->tracefs[0])
		return 0;
	if (group) {
		snprintf(path, sizeof(path), "%s/events/%s/%s", p->tracefs, group, name);
		return access(path, F_OK) == 0;
	}
	return 0;
}

/* A minimal fentry program: does this kernel let us load and attach one? */
static int probe_fentry(const struct btf *btf)
{
	struct bpf_insn insns[2] = {
		{ .code = 0xb7 /* BPF_ALU64 | BPF_MOV | BPF_K */, .dst_reg = 0, .imm = 0 },
		{ .code = 0x95 /* BPF_JMP | BPF_EXIT */ },
	};
	int id, fd, lfd, err = 0;

	id = btf ? btf__find_by_name_kind(btf, "vfs_read", BTF_KIND_FUNC) : -1;
	if (id < 0)
		return -ENOENT;
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY,
		    .attach_btf_id = id);
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "it_probe", "GPL", insns, 2, &opts);
	if (fd < 0)
		return -errno;
	lfd = bpf_link_create(fd, 0, BPF_TRACE_FENTRY, NULL);
	if (lfd < 0)
		err = -errno;
	else
		close(lfd);
	close(fd);
	return err;
}

/* The tracefs roots libbpf and we look in, newest first. */
static const char *const tracefs_roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

static int tracefs_find(struct it_probe *p)
{
	for (size_t i = 0; i < sizeof(tracefs_roots) / sizeof(tracefs_roots[0]); i++) {
		char path[128];

		snprintf(path, sizeof(path), "%s/events", tracefs_roots[i]);
		if (access(path, F_OK) == 0) {
			snprintf(p->tracefs, sizeof(p->tracefs), "%s", tracefs_roots[i]);
			return 1;
		}
	}
	return 0;
}

/*
 * Classic tracepoints are found and attached through tracefs (libbpf reads the
 * event id there). Where nothing mounted it (no systemd automount: containers,
 * minimal images), mount it as perf and bpftrace do: tracefs first, then
 * debugfs, whose tracing/ directory is tracefs on older kernels.
 */
static void tracefs_ensure(struct it_probe *p)
{
	int err;

	if (tracefs_find(p))
		return;
	if (!mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) && tracefs_find(p)) {
		it_debug("mounted tracefs on /sys/kernel/tracing");
		return;
	}
	err = errno;
	if (!mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) && tracefs_find(p)) {
		it_debug("mounted debugfs on /sys/kernel/debug (for tracing/)");
		return;
	}
	snprintf(p->tracefs_why, sizeof(p->tracefs_why),
		 "tracefs not mounted, and mounting it "
		 "on /sys/kernel/tracing failed: %s",
		 strerror(err));
	it_debug("%s", p->tracefs_why);
}

/*
 * Helpers and map types some supported kernels lack, asked of the kernel
 * itself (libbpf loads a tiny program / creates a map): tracepoint programs
 * stand for all tracing types, which share one helper table
 * (bpf_tracing_func_proto). Task storage needs both the map type (5.11, LSM)
 * and the helper in tracing programs (5.12).
 */
/* Does the verifier take an xchg (BPF_ATOMIC | BPF_XCHG, 5.12)? A 6-instruction program. */
static int probe_xchg(void)
{
	struct bpf_insn insns[] = {
		{ .code = 0xb7 /* BPF_ALU64 | BPF_MOV | BPF_K */, .dst_reg = 1, .imm = 0 },
		{ .code = 0x7b /* BPF_STX | BPF_MEM | BPF_DW */,
		  .dst_reg = 10,
		  .src_reg = 1,
		  .off = -8 },
		{ .code = 0xb7, .dst_reg = 2, .imm = 1 },
		{ .code = 0xdb /* BPF_STX | BPF_ATOMIC | BPF_DW */,
		  .dst_reg = 10,
		  .src_reg = 2,
		  .off = -8,
		  .imm = 0xe1 /* BPF_XCHG */ },
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 },
		{ .code = 0x95 /* BPF_JMP | BPF_EXIT */ },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "it_xchg", "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static void probe_bpf_features(struct it_probe *p)
{
	p->task_btf = libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT,
					      BPF_FUNC_get_current_task_btf, NULL) > 0;
	p->task_storage = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) > 0 &&
			  libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT,
						  BPF_FUNC_task_storage_get, NULL) > 0;
	p->loop = libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_loop, NULL) > 0;
	p->task_regs = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_task_pt_regs, NULL) >
		       0;
	p->xchg = probe_xchg();
	it_debug("kernel BPF features: bpf_get_current_task_btf %s, task storage %s, bpf_loop %s, "
		 "bpf_task_pt_regs %s, xchg %s",
		 p->task_btf ? "yes" : "no", p->task_storage ? "yes" : "no", p->loop ? "yes" : "no",
		 p->task_regs ? "yes" : "no", p->xchg ? "yes" : "no");
}

/* Why fentry cannot be used: the kernel's ENOTSUPP (524) has no strerror text. */
const char *it_fentry_why(const struct it_probe *p)
{
	if (p->fentry_err == -524)
		return "not supported here (no BPF trampoline)";
	return strerror(-p->fentry_err);
}

/* Can this process list BTF objects by id (libbpf's way to module BTFs)? */
static int probe_btf_ids(void)
{
	__u32 id = 0;

	if (!bpf_btf_get_next_id(0, &id) || errno == ENOENT)
		return 1;
	it_debug("BTF ids not listable (%s): CO-RE against vmlinux only", strerror(errno));
	return 0;
}

void it_probe_kernel(struct it_probe *p)
{
	memset(p, 0, sizeof(*p));
	p->vmlinux = btf__load_vmlinux_btf();
	tracefs_ensure(p);
	p->fentry_err = probe_fentry(p->vmlinux);
	p->kprobe_ok = access("/sys/bus/event_source/devices/kprobe/type", F_OK) == 0;
	it_debug("fentry %s, kprobes %s", p->fentry_err ? it_fentry_why(p) : "ok",
		 p->kprobe_ok ? "ok" : "no");
	probe_bpf_features(p);
	p->btf_ids = probe_btf_ids();
	p->hz = khz_kernel();
	it_debug("kernel HZ %u%s", p->hz, p->hz ? "" : ": not known, no per-file dirty age");
}

/* Argument i of a tracepoint's prototype: see kfeat.h. */
int it_tp_arg_ptr(const struct it_probe *p, const char *typedef_name, int i)
{
	const struct btf *b = p->vmlinux;
	const struct btf_type *t;
	int id = b ? btf__find_by_name_kind(b, typedef_name, BTF_KIND_TYPEDEF) : -1;

	if (id < 0)
		return -1;
	t = btf__type_by_id(b, btf__type_by_id(b, id)->type); /* pointer */
	t = t && btf_is_ptr(t) ? btf__type_by_id(b, t->type) : NULL;
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) < i + 2)
		return -1;
	t = btf__type_by_id(b, btf_params(t)[i + 1].type);
	while (t && (btf_is_mod(t) || btf_is_typedef(t)))
		t = btf__type_by_id(b, t->type);
	if (!t || !btf_is_ptr(t))
		return 0;
	return t->type == 0 ? 1 : 2;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Text symbols (t/T) of /proc/kallsyms, sorted, once. */
static void load_ksyms(struct it_probe *p)
{
	char line[512], name[256], type;
	int cap = 0;
	FILE *f;

	p->ksyms_loaded = 1;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char **n;

		if (sscanf(line, "%*s %c %255s", &type, name) != 2 || (type != 't' && type != 'T'))
			continue;
		if (p->nr_ksyms == cap) {
			cap = cap ? cap * 2 : 4096;
			n = realloc(p->ksyms, cap * sizeof(*n));
			if (!n)
				break;
			p->ksyms = n;
		}
		p->ksyms[p->nr_ksyms] = strdup(name);
		if (p->ksyms[p->nr_ksyms])
			p->nr_ksyms++;
	}
	fclose(f);
	qsort(p->ksyms, p->nr_ksyms, sizeof(*p->ksyms), cmp_str);
}

int it_ksym_exists(struct it_probe *p, const char *name)
{
	if (!p->ksyms_loaded)
		load_ksyms(p);
	return p->nr_ksyms && bsearch(&name, p->ksyms, p->nr_ksyms, sizeof(*p->ksyms), cmp_str);
}

/* A struct of that name in the BTF of vmlinux or a module? */
int it_btf_type_exists(struct it_probe *p, const char *name)
{
	return btf_has_any(p, name, BTF_KIND_STRUCT);
}
