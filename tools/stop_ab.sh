#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Stop and start time of two iotracer builds, alternated (docs/bench.md, "Stop and
# start"): SIGTERM -> exit after 4 s of tracing, and a whole `-D 100ms` run (load,
# attach, detach). All layers, -j /dev/null. Needs root and a quiet machine.
#
#   sudo tools/stop_ab.sh A_BINARY B_BINARY [PAIRS]
set -uo pipefail

(($# >= 2)) || { echo "usage: $0 A_BINARY B_BINARY [PAIRS]" >&2; exit 2; }
ms() { echo $((($2 - $1) / 1000000)); }
for ((i = 0; i < ${3:-5}; i++)); do
	for b in "$1" "$2"; do
		"$b" -q --no-live -j /dev/null >/dev/null 2>&1 &
		p=$!
		sleep 4
		t0=$(date +%s%N)
		kill -TERM "$p"
		wait "$p"
		t1=$(date +%s%N)
		"$b" -q --no-live -j /dev/null -D 100ms >/dev/null 2>&1
		t2=$(date +%s%N)
		echo "$b stop_ms=$(ms "$t0" "$t1") run100ms_ms=$(ms "$t1" "$t2")"
	done
done
