#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Whole-system profile at the reference load (docs/bench.md, "Where the rest of the
# added CPU goes"): 12 000 psync randread + 250 randwrite IOPS, direct 4k, on a loop
# device over a file in /var/tmp; `perf record -a -g -e cpu-clock` for 10 s, once
# without a tracer (OUT/none.data) and once with the given iotracer command line
# (OUT/TAG.data; -d is added). Then a table of samples grouped by what they are, in
# % of one core (tools/profile_groups.awk). Needs root, fio, linux-perf, a quiet machine.
#
#   sudo tools/profile_ref.sh OUT TAG iotracer [OPTIONS...]
set -euo pipefail

(($# >= 3)) || { echo "usage: $0 OUT TAG IOTRACER [OPTIONS...]" >&2; exit 2; }
out=$1 tag=$2
shift 2
mkdir -p "$out"
img=$(mktemp /var/tmp/iotracer-profile.XXXXXX)
fallocate -l 1G "$img"
dev=$(losetup -f --show --direct-io=on "$img")
tpid=
cleanup() {
	[[ -n $tpid ]] && kill -TERM "$tpid" 2>/dev/null && wait "$tpid" 2>/dev/null
	losetup -d "$dev"
	rm -f "$img"
}
trap cleanup EXIT
dd if=/dev/urandom of="$dev" bs=1M count=1024 oflag=direct status=none

record() {
	local job=(--filename="$dev" --ioengine=psync --direct=1 --bs=4k --runtime=12 --time_based
		--randrepeat=0 --norandommap)
	fio --output-format=json --output="$out/$1.fio.json" \
		--name=r "${job[@]}" --rw=randread --rate_iops=12000 \
		--name=w "${job[@]}" --rw=randwrite --rate_iops=250 &
	local f=$!
	sleep 1
	perf record -q -a -g -e cpu-clock -F 4999 -o "$out/$1.data" -- sleep 10 2>/dev/null
	wait "$f"
	perf report -i "$out/$1.data" --no-children --sort dso,sym -n --stdio -g none 2>/dev/null |
		awk '!/^#/ && NF >= 4 && $1 ~ /%/ { n = $2; $1 = ""; $2 = ""; sub(/^ +/, ""); print n "\t" $0 }' \
			>"$out/$1.tsv"
	echo "== $1 (% of one core)"
	awk -v ncpu="$(nproc)" -f "$(dirname "$0")/profile_groups.awk" "$out/$1.tsv" | sort
}

record none
"$@" -d "$(basename "$dev")" >/dev/null 2>&1 &
tpid=$!
sleep 3
record "$tag"
