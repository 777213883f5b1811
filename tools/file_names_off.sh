#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# This build's iotracer with the files' names off (--file-names 0: dev and inode
# only, after the bench's own options): the same-run baseline of what naming the
# files costs (issue 38; docs/bench.md, "File names"):
#
#   sudo ./iotracer bench --workloads ref-rand,max-psync \
#        --tracers none,iotracer,iotracer@tools/file_names_off.sh
#
# IOTRACER names another binary (default: the build next to this script).
exec "${IOTRACER:-$(dirname "$0")/../iotracer}" "$@" --file-names 0
