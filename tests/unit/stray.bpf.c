// SPDX-License-Identifier: GPL-2.0
/*
 * A program no hook of the loader's table names, linked into a copy of the
 * real object (Makefile: build/unit/stray.linked.o): test_loader checks that
 * the table check refuses it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("raw_tp/sys_enter")
int raw_stray(void *ctx)
{
	return 0;
}
