// SPDX-License-Identifier: GPL-2.0
/*
 * iotracer's BPF programs: one compilation unit, one object, one skeleton.
 * Each layer is a header (bpf/<layer>.bpf.h) so that all layers share the
 * maps of maps.bpf.h without relying on cross-object map linking. The
 * layers' order is the programs' order in the object.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "syscall.bpf.h"
#include "percall.bpf.h"
#include "uring.bpf.h"
#include "fileio.bpf.h"
#include "fs.bpf.h"
#include "sched.bpf.h"
#include "block.bpf.h"
#include "driver.bpf.h"
#include "qemu.bpf.h"

char LICENSE[] SEC("license") = "GPL";
