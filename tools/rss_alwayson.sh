#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# RssAnon and VmRSS of the always-on daemon (`--profile always-on -d DEV`), idle and
# under fio, RUNS times per binary: docs/bench.md, "What the daemon's libraries cost".
# Memory, not time: valid on a loaded machine. Needs root; makes its own loop device
# over a file in a temporary directory and removes it.
#
#   sudo tools/rss_alwayson.sh [-n RUNS] [-m] [-o OPTION]... BINARY...
#
# -o passes one more word to every daemon (e.g. -o --sink -o clickhouse://...); -m adds --metrics on a free loopback port, scraped once a second (as the bench's
# iotracer-alwayson). Each run: the daemon started, 3 s idle (figure "idle"), then
# 4 s of fio's psync 4k random direct reads and writes, a process each (as the bench's
# ref-rand, unthrottled; figure "load", read while fio runs), then SIGTERM. Prints one line a run, then min-max per binary.
set -uo pipefail

RUNS=5 METRICS=0 EXTRA=()
while (($#)); do
	case $1 in
	-n) RUNS=$2; shift 2 ;;
	-m) METRICS=1; shift ;;
	-o) EXTRA+=("$2"); shift 2 ;;
	-*) echo "usage: $0 [-n RUNS] [-m] [-o OPTION]... BINARY..." >&2; exit 2 ;;
	*) break ;;
	esac
done
(($#)) || { echo "usage: $0 [-n RUNS] [-m] [-o OPTION]... BINARY..." >&2; exit 2; }

dir=$(mktemp -d) dev="" tpid="" spid="" fpid=""
cleanup() {
	[[ -n $fpid ]] && kill "$fpid" 2>/dev/null && wait "$fpid" 2>/dev/null
	[[ -n $spid ]] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	[[ -n $tpid ]] && kill "$tpid" 2>/dev/null && wait "$tpid" 2>/dev/null
	[[ -n $dev ]] && losetup -d "$dev"
	rm -rf "$dir"
}
trap cleanup EXIT
truncate -s 256M "$dir/disk"
dev=$(losetup -f --show "$dir/disk") || exit 1

status() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
free_port() {
	local p
	for ((p = 20000 + RANDOM % 20000; ; p++)); do
		ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return; }
	done
}

# one run of binary $1: "idle_anon idle_rss load_anon load_rss" into LINE, or nothing
one_run() {
	local opts=(--profile always-on -d "${dev#/dev/}" -q --no-live -j /dev/null) port i
	if ((METRICS)); then
		port=$(free_port)
		opts+=(--metrics "127.0.0.1:$port")
	fi
	: >"$dir/err" # before the start: the daemon's own open races with the first grep
	"$1" "${opts[@]}" "${EXTRA[@]}" >/dev/null 2>>"$dir/err" &
	tpid=$!
	for ((i = 0; i < 300; i++)); do
		grep -q ' started: ' "$dir/err" && break
		kill -0 "$tpid" 2>/dev/null || break
		sleep 0.1
	done
	LINE=""
	grep -q ' started: ' "$dir/err" || { cat "$dir/err" >&2; tpid=""; return; }
	if ((METRICS)); then
		(while :; do curl -s -o /dev/null "http://127.0.0.1:$port/metrics"; sleep 1; done) &
		spid=$!
	fi
	sleep 3
	local ia ir
	ia=$(status "$tpid" RssAnon) ir=$(status "$tpid" VmRSS)
	fio --filename="$dev" --bs=4k --direct=1 --ioengine=psync --runtime=4 --time_based \
		--name=r --rw=randread --name=w --rw=randwrite >/dev/null 2>&1 &
	fpid=$!
	sleep 3.5
	LINE="$ia $ir $(status "$tpid" RssAnon) $(status "$tpid" VmRSS)"
	wait "$fpid"; fpid=""
	[[ -n $spid ]] && { kill "$spid"; wait "$spid" 2>/dev/null; spid=""; }
	kill "$tpid"; wait "$tpid"; tpid=""
}

for b in "$@"; do
	file="$dir/runs"
	: >"$file"
	for ((r = 1; r <= RUNS; r++)); do
		one_run "$b"
		[[ -n $LINE ]] || { echo "$b: run $r failed" >&2; continue; }
		echo "$LINE" >>"$file"
		read -r ia ir la lr <<<"$LINE"
		echo "$b run $r: idle RssAnon $ia VmRSS $ir KiB; load RssAnon $la VmRSS $lr KiB"
	done
	awk -v b="$b" -v m="$METRICS" 'NR == 1 { for (i = 1; i <= 4; i++) lo[i] = hi[i] = $i }
		{ for (i = 1; i <= 4; i++) { if ($i < lo[i]) lo[i] = $i; if ($i > hi[i]) hi[i] = $i } }
		END { if (NR) printf "%s%s: %d runs: idle RssAnon %d-%d VmRSS %d-%d; load RssAnon %d-%d VmRSS %d-%d KiB\n",
			b, m ? " (--metrics)" : "", NR, lo[1], hi[1], lo[2], hi[2], lo[3], hi[3], lo[4], hi[4] }' "$file"
done
