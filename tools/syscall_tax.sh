#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What a tracer costs every syscall of the system, traced or not (docs/bench.md,
# "What the raw pair costs every other syscall"): `perf bench syscall basic`
# (getppid) with no tracer, then with each iotracer build attached (all layers),
# alternated ROUNDS times. Needs root, linux-perf and a quiet machine.
#
#   sudo tools/syscall_tax.sh [--rounds N] BINARY...
set -uo pipefail

rounds=5
[[ ${1:-} == --rounds ]] && { rounds=$2; shift 2; }
(($# >= 1)) || { echo "usage: $0 [--rounds N] BINARY..." >&2; exit 2; }
ns_per_call() { perf bench syscall basic -l 5000000 2>&1 | awk '/usecs\/op/ { print $1 * 1000 }'; }
for ((i = 0; i < rounds; i++)); do
	echo "none ns/op $(ns_per_call)"
	for b in "$@"; do
		"$b" -q --no-live -j /dev/null >/dev/null 2>&1 &
		p=$!
		sleep 3
		echo "$b ns/op $(ns_per_call)"
		kill -TERM "$p"
		wait "$p"
	done
done
