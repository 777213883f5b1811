#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A/B the BPF cost per IO of two (or more) iotracer binaries, side by side.
#
# Every binary traces the same fio run at the same time (so machine noise hits
# them alike), with BPF run-time statistics on (kernel.bpf_stats_enabled=1,
# the previous value is restored at exit). Each binary prints its per-program
# run_cnt / run_time_ns at exit (-v); this script divides by fio's IO count.
# Programs attached later on a tracepoint run after the earlier ones and find
# the kernel's cache lines warm: with --swap the attach order is reversed in a
# second round and the two rounds are summed.
#
#   sudo tools/bpf_ab.sh --bin base=/tmp/iotracer-base --bin new=./iotracer \
#        [--workload psync|uring|bufwrite|buffered] [--runtime 5] [--layers block] [--swap]
#
# Needs root, fio, jq, a loop device over /dev/shm (made here, removed at exit).

set -uo pipefail

PROG=${0##*/}

usage() {
	cat <<EOF
usage: $PROG --bin NAME=PATH --bin NAME=PATH... [options]

A/B the BPF cost per IO of iotracer binaries tracing the same fio run.

  --bin NAME=PATH        an iotracer binary to compare (repeatable, required)
  --workload psync|uring|bufwrite|buffered
                         psync QD1 or io_uring QD32 random direct reads (default psync),
                         bench's ref-bufwrite: psync buffered random writes at
                         4000 IOPS, an fsync every 64 (what writeback attribution costs),
                         or bench's ref-buffered: psync buffered random reads at 12000
                         IOPS and writes at 250, two jobs
  --runtime N            seconds of fio per round (default 5)
  --layers LIST          passed to the tracers as -l LIST (default: all layers)
  --swap                 second round in reversed attach order, rounds summed
  --size SIZE            size of the RAM-backed loop device (default 256M)
  -h, --help             this help

Needs root, fio and jq. Prints ns/IO (runs/IO, ns/run) per BPF program.
EOF
}

die() { # die RC MESSAGE: one line on stderr
	printf '%s: %s\n' "$PROG" "$2" >&2
	exit "$1"
}

# ---------------------------------------------------------------- options

names=() paths=()
workload=psync runtime=5 layers='' swap=0 size=256M

need_arg() { [[ $# -ge 2 ]] || die 2 "option $1 needs an argument (see --help)"; }

while [[ $# -gt 0 ]]; do
	opt=$1
	if [[ $opt == --*=* ]]; then # --opt=value -> --opt value
		set -- "${opt%%=*}" "${opt#*=}" "${@:2}"
		opt=$1
	fi
	case $opt in
	--bin)
		need_arg "$@"
		[[ $2 == ?*=?* ]] || die 2 "--bin wants NAME=PATH, got '$2'"
		names+=("${2%%=*}")
		paths+=("${2#*=}")
		shift 2
		;;
	--workload) need_arg "$@"; workload=$2; shift 2 ;;
	--runtime) need_arg "$@"; runtime=$2; shift 2 ;;
	--layers) need_arg "$@"; layers=$2; shift 2 ;;
	--size) need_arg "$@"; size=$2; shift 2 ;;
	--swap) swap=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) die 2 "unknown argument '$opt' (see --help)" ;;
	esac
done

[[ ${#names[@]} -gt 0 ]] || die 2 "at least one --bin NAME=PATH is required (see --help)"
# fio's jobs (what comes before the first --name applies to every job)
case $workload in
psync) fio_jobs=(--name=ab --ioengine=psync --iodepth=1 --direct=1 --rw=randread) ;;
uring) fio_jobs=(--name=ab --ioengine=io_uring --iodepth=32 --direct=1 --rw=randread) ;;
bufwrite) fio_jobs=(--name=ab --ioengine=psync --iodepth=1 --direct=0 --rw=randwrite
	--rate_iops=4000 --fsync=64) ;;
buffered) fio_jobs=(--ioengine=psync --direct=0 --name=randread --rw=randread --rate_iops=12000
	--name=randwrite --rw=randwrite --rate_iops=250) ;;
*) die 2 "--workload must be psync, uring, bufwrite or buffered, got '$workload'" ;;
esac
[[ $runtime =~ ^[0-9]+$ && $runtime -gt 0 ]] || die 2 "--runtime wants a positive number of seconds, got '$runtime'"
for i in "${!names[@]}"; do
	n=${names[i]}
	[[ $n =~ ^[A-Za-z0-9_.+-]+$ ]] || die 2 "--bin name '$n': use letters, digits, _ . + -"
	for ((j = 0; j < i; j++)); do
		[[ ${names[j]} != "$n" ]] || die 2 "--bin name '$n' given twice"
	done
	[[ -f ${paths[i]} && -x ${paths[i]} ]] || die 2 "--bin $n: '${paths[i]}' is not an executable file"
done

[[ $EUID -eq 0 ]] || die 1 "needs root (BPF, loop device, sysctl): run it with sudo"
for c in fio jq losetup sysctl; do
	command -v "$c" >/dev/null || die 1 "needs $c, not found in PATH"
done

# ---------------------------------------------------------------- cleanup

tmp='' dev='' stats_prev='' fio_pid=''
tracer_pids=()

alive() { kill -0 "$1" 2>/dev/null; }

# stop_tracers: SIGINT to every tracer still running, SIGKILL after 30 s
stop_tracers() {
	local pid end
	for pid in "${tracer_pids[@]}"; do
		alive "$pid" && kill -INT "$pid" 2>/dev/null
	done
	end=$((SECONDS + 30))
	for pid in "${tracer_pids[@]}"; do
		while alive "$pid" && ((SECONDS < end)); do
			sleep 0.1
		done
		if alive "$pid"; then
			printf '%s: tracer %s ignored SIGINT for 30 s, killing it\n' "$PROG" "$pid" >&2
			kill -KILL "$pid" 2>/dev/null
		fi
		wait "$pid" 2>/dev/null
	done
	tracer_pids=()
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -n $fio_pid ]] && alive "$fio_pid"; then
		kill -TERM "$fio_pid" 2>/dev/null
		wait "$fio_pid" 2>/dev/null
	fi
	stop_tracers
	[[ -n $dev ]] && losetup -d "$dev"
	[[ -n $stats_prev ]] && sysctl -qw kernel.bpf_stats_enabled="$stats_prev"
	[[ -n $tmp ]] && rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- setup

tmp=$(mktemp -d /tmp/iotracer-ab.XXXXXX) || die 1 "mktemp failed"
# shellcheck source=tools/ramloop.sh
. "$(dirname "$0")/ramloop.sh"
ramloop "$size" "$tmp" || die 1 "$RAMLOOP_WHY"
dev=$RAMLOOP_DEV

stats_prev=$(sysctl -n kernel.bpf_stats_enabled) || die 1 "cannot read kernel.bpf_stats_enabled"
sysctl -qw kernel.bpf_stats_enabled=1 || die 1 "cannot set kernel.bpf_stats_enabled=1"

# ---------------------------------------------------------------- rounds

# bpf_prog_fds PID: how many BPF programs the process holds
bpf_prog_fds() {
	find "/proc/$1/fd" -mindepth 1 -lname 'anon_inode:bpf-prog' -printf . 2>/dev/null | wc -c
}

# wait_attached PID NAME: until its bpf-prog fd count is stable and non-zero for 1 s
wait_attached() {
	local pid=$1 name=$2 cur last=-1 stable=0 end=$((SECONDS + 30))
	while ((SECONDS < end)); do
		sleep 0.1
		alive "$pid" || die 1 "tracer $name exited early: $(tail -n1 "$tmp/$name.err")"
		cur=$(bpf_prog_fds "$pid")
		if ((cur > 0 && cur == last)); then
			stable=$((stable + 1))
		else
			stable=0
		fi
		last=$cur
		((stable >= 10)) && return 0
	done
	die 1 "tracer $name did not attach within 30 s"
}

# parse_stats FILE: "prog runs ns" lines from the -v table in a tracer's stderr
parse_stats() {
	awk '
		/^PROGRAM / { on = 1; next }
		on && NF == 5 && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ && $5 ~ /^[0-9]+$/ {
			if (!($1 in runs)) order[n++] = $1
			runs[$1] = $2; ns[$1] = $3
		}
		END { for (i = 0; i < n; i++) print order[i], runs[order[i]], ns[order[i]] }
	' "$1"
}

results=$tmp/results # lines: NAME PROG RUNS NS
ios_total=0
: >"$results"

# one_round INDEX...: attach the binaries in that order, run fio, collect stats
one_round() {
	local i name ios iops label='' cmd
	for i in "$@"; do
		name=${names[i]}
		label+="${label:+, }'$name'"
		cmd=("${paths[i]}" -v -q --no-live -j /dev/null -d "$dev")
		[[ -n $layers ]] && cmd+=(-l "$layers")
		# a subshell so the tracer does not inherit SIGINT ignored (no job control)
		(
			trap - INT QUIT
			exec "${cmd[@]}"
		) >/dev/null 2>"$tmp/$name.err" &
		tracer_pids+=($!)
		wait_attached "$!" "$name"
	done

	fio --filename="$dev" --bs=4k --time_based --runtime="$runtime" --output-format=json \
		--output="$tmp/fio.json" "${fio_jobs[@]}" 2>"$tmp/fio.err" &
	fio_pid=$!
	wait "$fio_pid" || die 1 "fio failed: $(tail -n1 "$tmp/fio.err")"
	fio_pid=
	ios='' iops=''
	read -r ios iops < <(jq -r '[.jobs[] | .read.total_ios + .write.total_ios] as $n |
		[.jobs[] | .read.iops + .write.iops] as $r | "\($n | add) \($r | add)"' \
		"$tmp/fio.json" 2>/dev/null)
	[[ $ios =~ ^[0-9]+$ ]] || die 1 "cannot read total_ios / iops from fio's JSON"

	stop_tracers
	for i in "$@"; do
		name=${names[i]}
		parse_stats "$tmp/$name.err" >"$tmp/$name.stats"
		[[ -s $tmp/$name.stats ]] ||
			die 1 "tracer $name printed no per-program table: $(tail -n1 "$tmp/$name.err")"
		sed "s/^/$name /" "$tmp/$name.stats" >>"$results"
	done
	ios_total=$((ios_total + ios))
	printf 'round [%s]: %s IOs, %.0f IOPS\n' "$label" "$ios" "$iops"
}

idx=("${!names[@]}")
one_round "${idx[@]}"
if ((swap)); then
	rev=()
	for ((i = ${#idx[@]} - 1; i >= 0; i--)); do rev+=("${idx[i]}"); done
	one_round "${rev[@]}"
fi
((ios_total > 0)) || die 1 "fio did no IO"

# ---------------------------------------------------------------- table

awk -v names="${names[*]}" -v ios="$ios_total" -v title="$workload ${layers:-all layers}" '
	{ c[$1, $2] += $3; t[$1, $2] += $4; sum[$1] += $4; if ($3) seen[$2] = 1 }
	END {
		nn = split(names, nm, " ")
		np = 0
		for (p in seen) {
			key = 0
			for (k = 1; k <= nn; k++) if (t[nm[k], p] > key) key = t[nm[k], p]
			# insertion sort: largest total first, then by name
			for (j = np; j > 0 && (mx[pr[j]] < key || (mx[pr[j]] == key && pr[j] > p)); j--)
				pr[j + 1] = pr[j]
			pr[j + 1] = p; mx[p] = key; np++
		}
		print title ": ns/IO (runs/IO, ns/run)"
		printf "%-34s", "program"
		for (k = 1; k <= nn; k++) printf "%26s", nm[k]
		printf "\n"
		for (j = 1; j <= np; j++) {
			p = pr[j]
			printf "%-34s", p
			for (k = 1; k <= nn; k++) {
				cc = c[nm[k], p]; tt = t[nm[k], p]
				printf "%26s", sprintf("%7.1f (%5.2f,%5.0f)", tt / ios, cc / ios, cc ? tt / cc : 0)
			}
			printf "\n"
		}
		printf "%-34s", "TOTAL ns/IO"
		for (k = 1; k <= nn; k++) printf "%26.1f", sum[nm[k]] / ios
		printf "\n"
	}
' "$results"
