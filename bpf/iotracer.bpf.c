// SPDX-License-Identifier: GPL-2.0
/*
 * iotracer's BPF programs: one compilation unit, one object, one skeleton.
 * Each layer is a header (bpf/<layer>.bpf.h) so that all layers share the
 * maps of common.bpf.h without relying on cross-object map linking.
 */
#include "common.bpf.h"
#include "syscall.bpf.h"
#include "fs.bpf.h"
#include "sched.bpf.h"
#include "block.bpf.h"
#include "driver.bpf.h"
#include "qemu.bpf.h"

char LICENSE[] SEC("license") = "GPL";
