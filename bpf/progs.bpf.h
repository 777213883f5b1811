/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Program-generating macros: one hook written once becomes the pair of
 * programs that attach it two ways, the preferred BTF-typed one and its
 * fallback (tp_btf / raw_tp, fentry / kprobe, fexit / kretprobe). The
 * loader autoloads one program of each pair (src/load/methods.c). Each use
 * says in a comment the program names it makes, so that grep finds the
 * names src/load/hooktab.c's hook table spells out; the loader checks at
 * open that the two agree (it_loader_check_hooks, test_loader).
 */
#ifndef IT_PROGS_BPF_H
#define IT_PROGS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/*
 * A tracepoint hook as two programs, tp_btf (preferred) and raw_tp (the
 * fallback), named btf_<name> and raw_<name>; the loader autoloads one.
 * `call` sees `u64 *ctx` and `it_btf` (true in the tp_btf program: its
 * pointer arguments can be read with IT_RD).
 */
#define IT_TP_PAIR(tp, name, call)         \
	SEC("tp_btf/" #tp)                 \
	int btf_##name(u64 *ctx)           \
	{                                  \
		const bool it_btf = true;  \
		(void)it_btf;              \
		return call;               \
	}                                  \
	SEC("raw_tp/" #tp)                 \
	int raw_##name(u64 *ctx)           \
	{                                  \
		const bool it_btf = false; \
		(void)it_btf;              \
		return call;               \
	}
#define IT_TP_BOTH(tp, call) IT_TP_PAIR(tp, tp, call)

/*
 * A kernel function hook as fentry (preferred) and kprobe programs,
 * fentry_<fn> / kprobe_<fn>, or for its return fexit_<fn> / kretprobe_<fn>.
 * Arguments as in BPF_PROG / BPF_KPROBE.
 */
#define IT_FN_ENTRY(fn, call, args...)      \
	SEC("fentry/" #fn)                  \
	int BPF_PROG(fentry_##fn, ##args)   \
	{                                   \
		return call;                \
	}                                   \
	SEC("kprobe/" #fn)                  \
	int BPF_KPROBE(kprobe_##fn, ##args) \
	{                                   \
		return call;                \
	}
#define IT_FN_EXIT(fn, call)              \
	SEC("fexit/" #fn)                 \
	int BPF_PROG(fexit_##fn)          \
	{                                 \
		return call;              \
	}                                 \
	SEC("kretprobe/" #fn)             \
	int BPF_KRETPROBE(kretprobe_##fn) \
	{                                 \
		return call;              \
	}

#endif /* IT_PROGS_BPF_H */
