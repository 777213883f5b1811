#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The daemon's own instructions per IO, counted by callgrind: whatever else the
# machine runs, the same binary and fio job give the same count within ~1 %
# (its drains' fixed work moves with timing). Each binary traces a fixed fio job
# on a RAM-backed loop device of its own, under valgrind --tool=callgrind; the
# count is zeroed once the programs are attached (callgrind_control -z), so
# what is counted is the drains of that job's records: correlation, statistics,
# the JSON lines (-j). Where perf stat has no instructions event (this VM), this
# is the load-independent figure of the daemon's side (docs/bench.md, "File names"):
#
#   sudo tools/daemon_instr.sh --bin names=./iotracer --bin off=tools/file_names_off.sh
#
# Needs root, fio, jq, valgrind (callgrind_control), a loop device over /dev/shm
# (made here, removed at exit).

set -uo pipefail

PROG=${0##*/}

usage() {
	cat <<EOF
usage: $PROG --bin NAME=PATH... [options]

The daemon's instructions per IO (callgrind) of iotracer binaries, one after another.

  --bin NAME=PATH     an iotracer binary, or a wrapper that execs one (repeatable, required)
  --shape psync|ref   psync: 4 KiB random direct reads, QD1 (max-psync's);
                      ref: the same reads and random writes at 1/48 of them (ref-rand's)
                      (default psync)
  --ios N             IOs of the fio job (default 20000)
  --rate IOPS         fio's read rate (default 3000: what the daemon keeps up with under
                      valgrind without losing records)
  --runs N            rounds, every binary once a round (default 5)
  -h, --help          this help

Prints each run, then per binary the min and max of its instructions per IO.
EOF
}

die() { # die RC MESSAGE: one line on stderr
	printf '%s: %s\n' "$PROG" "$2" >&2
	exit "$1"
}

names=() paths=()
shape=psync ios=20000 rate=3000 runs=5

need_arg() { [[ $# -ge 2 ]] || die 2 "option $1 needs an argument (see --help)"; }
posint() { [[ $2 =~ ^[0-9]+$ && $2 -gt 0 ]] || die 2 "$1 wants a positive number, got '$2'"; }

while [[ $# -gt 0 ]]; do
	case $1 in
	--bin)
		need_arg "$@"
		[[ $2 == ?*=?* ]] || die 2 "--bin wants NAME=PATH, got '$2'"
		names+=("${2%%=*}")
		paths+=("${2#*=}")
		shift 2
		;;
	--shape) need_arg "$@"; shape=$2; shift 2 ;;
	--ios) need_arg "$@"; posint "$1" "$2"; ios=$2; shift 2 ;;
	--rate) need_arg "$@"; posint "$1" "$2"; rate=$2; shift 2 ;;
	--runs) need_arg "$@"; posint "$1" "$2"; runs=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) die 2 "unknown argument '$1' (see --help)" ;;
	esac
done

[[ ${#names[@]} -gt 0 ]] || die 2 "at least one --bin NAME=PATH is required (see --help)"
[[ $shape == psync || $shape == ref ]] || die 2 "--shape must be psync or ref, got '$shape'"
for i in "${!paths[@]}"; do
	[[ -f ${paths[i]} && -x ${paths[i]} ]] ||
		die 2 "--bin ${names[i]}: '${paths[i]}' is not an executable file"
done
[[ $EUID -eq 0 ]] || die 1 "needs root (BPF, loop device): run it with sudo"
for c in fio jq losetup valgrind callgrind_control; do
	command -v "$c" >/dev/null || die 1 "needs $c, not found in PATH"
done

tmp='' dev='' pid=''

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
		kill -INT "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	[[ -n $dev ]] && losetup -d "$dev"
	[[ -n $tmp ]] && rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

tmp=$(mktemp -d /tmp/iotracer-instr.XXXXXX) || die 1 "mktemp failed"
# shellcheck source=tools/ramloop.sh
. "$(dirname "$0")/ramloop.sh"
ramloop 256M "$tmp" || die 1 "$RAMLOOP_WHY"
dev=$RAMLOOP_DEV

# one NAME PATH: the daemon under callgrind over the fio job; prints instructions per IO
one() {
	local name=$1 path=$2 json=$tmp/$1.json cg=$tmp/$1.cg i ir n
	local job=(--filename="$dev" --ioengine=psync --bs=4k --direct=1 --output-format=json)

	rm -f "$json" "$cg"*
	(
		trap - INT QUIT
		exec valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$cg" \
			"$path" -q --no-live -j "$json" -d "${dev#/dev/}"
	) >/dev/null 2>"$tmp/$name.err" &
	pid=$!
	for ((i = 0; i < 1200; i++)); do # the attach lines are written once every hook is
		grep -q '"type":"attach"' "$json" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || die 1 "$name exited early: $(tail -n1 "$tmp/$name.err")"
		sleep 0.1
	done
	# a warm-up job first: what the first records cost once (the file's name, the
	# device's, the cgroup's, the tables' first growth) is not the per-IO figure
	fio "${job[@]}" --name=warm --rw=randread --number_ios=2000 --rate_iops="$rate" \
		>/dev/null 2>"$tmp/fio.err" || die 1 "fio failed: $(tail -n1 "$tmp/fio.err")"
	sleep 3
	callgrind_control -z "$pid" >/dev/null 2>&1 || die 1 "callgrind_control -z $name failed"
	if [[ $shape == psync ]]; then
		job+=(--name=r --rw=randread --number_ios="$ios" --rate_iops="$rate")
	else
		job+=(--name=r --rw=randread --number_ios="$ios" --rate_iops="$rate"
		      --name=w --rw=randwrite --number_ios=$((ios / 48)) --rate_iops=$((rate / 48)))
	fi
	fio "${job[@]}" >"$tmp/fio.json" 2>"$tmp/fio.err" || die 1 "fio failed: $(tail -n1 "$tmp/fio.err")"
	sleep 3 # the last records drained
	kill -INT "$pid"
	wait "$pid"
	pid=''
	# the daemon's profile: the last one written (a wrapper's shell wrote one at its exec)
	ir=$(grep -h '^totals:' "$cg" | awk '{ s = $2 } END { print s + 0 }')
	n=$(jq '[.jobs[] | .read.total_ios + .write.total_ios] | add' "$tmp/fio.json")
	[[ $n -gt 0 && $ir -gt 0 ]] || die 1 "$name: no count (fio IOs $n, instructions $ir)"
	echo $((ir / n))
}

declare -A lo hi
for ((r = 1; r <= runs; r++)); do
	for i in "${!names[@]}"; do
		v=$(one "${names[i]}" "${paths[i]}") || exit 1
		printf 'run %d %-12s %s instructions/IO\n' "$r" "${names[i]}" "$v"
		n=${names[i]}
		[[ -z ${lo[$n]:-} || $v -lt ${lo[$n]} ]] && lo[$n]=$v
		[[ -z ${hi[$n]:-} || $v -gt ${hi[$n]} ]] && hi[$n]=$v
	done
done
printf '%s, %s IOs at %s IOPS, %s runs: instructions/IO min-max\n' "$shape" "$ios" "$rate" "$runs"
for n in "${names[@]}"; do
	printf '  %-12s %s-%s\n' "$n" "${lo[$n]}" "${hi[$n]}"
done
