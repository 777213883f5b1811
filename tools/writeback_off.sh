#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# This build's iotracer with the writeback attribution off (--writeback off, after
# the bench's own options, so it wins over --profile): the same-run baseline of
# the writeback attribution's cost (docs/bench.md, "Thirteenth round"):
#
#   sudo ./iotracer bench --workloads ref-bufwrite \
#        --tracers none,iotracer-alwayson,iotracer-alwayson@tools/writeback_off.sh
#
# IOTRACER names another binary (default: the build next to this script).
exec "${IOTRACER:-$(dirname "$0")/../iotracer}" "$@" --writeback off
