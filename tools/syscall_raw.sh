#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# This build's iotracer on the raw_syscalls pair (--syscall-hooks raw, after the
# bench's own options), the default on tracepoint-only kernels before issue 36:
# the other syscall set side by side with the per-syscall tracepoints of auto
# (docs/bench.md, "Thirteenth round"):
#
#   sudo ./iotracer bench --preset tax \
#        --tracers none,iotracer-alwayson,iotracer-alwayson@tools/syscall_raw.sh,floor-raw,floor-percall
#
# IOTRACER names another binary (default: the build next to this script).
exec "${IOTRACER:-$(dirname "$0")/../iotracer}" "$@" --syscall-hooks raw
