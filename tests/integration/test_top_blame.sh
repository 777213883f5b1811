#!/usr/bin/env bash
# `iotracer top --blame` (docs/top.md "Blame"): the BLAMED% and CULPRIT columns against an
# aggressor that is on and off at times the test chose (~30 s).
# One loop device (direct IO, filled, no file system), two cgroups of the machine's cgroup2
# mount; each fio joins its cgroup before it execs:
#   V   4k random reads, QD1, direct, 500 IOPS, 19 s, over the first 64 MiB
#   A   1 MiB sequential writes, QD32, direct (libaio), over the last 128 MiB: at 5-11 s
# `iotracer top -b --blame --group cgroup -d LOOP -i 1s` runs through it; each table is
# stamped with the wall clock as it arrives. Oracles: fio's own timing (its JSON's
# timestamp_ms, the end, minus job_runtime) and the schedule: A's cgroup is the only other
# one on the device. A table at t holds the splits of the requests that completed in about
# [t - 2.1 s, t - 1 s] (the interval, 1 s late: the horizon), so a table counts as
#   on   when that window is inside A's run (0.5 s after its start): V's row must name A's
#        cgroup with BLAMED% >= 80
#   off  when it is inside V's run with A not started or stopped 0.3 s before: V's row names
#        no culprit, or one with BLAMED% < 5
#   top_blame_on      every "on" table (at least 2)
#   top_blame_off     every "off" table (at least 2, before and after A)
#   top_blame_totals  the -b TOTAL table: V's read row names A with BLAMED% >= 80 over the
#                     whole run (its wait with A off is not blamed), and the blame line is there
#   bad_blame_pid     --blame -p PID: exit 2, one line naming --blame (a task filter would
#                     hide the culprits)
# shellcheck disable=SC2016 # awk programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin top_blame_on top_blame_off top_blame_totals bad_blame_pid
it_require_all fio jq findmnt

"$IOTRACER" top --blame -p $$ >/dev/null 2>"$IT_TMP/bad.err"
rc=$?
err=$(cat "$IT_TMP/bad.err")
check bad_blame_pid "exit $rc (want 2), stderr: $err" \
	test "$rc" = 2 -a "$(wc -l <"$IT_TMP/bad.err")" = 1 -a "${err#iotracer: top: --blame:}" != "$err"

mk_cgroups V A
note "cgroups: V ${REL[V]}, A ${REL[A]}"

dev=$(mk_loop 256 fill) || fail_all "cannot create a loop device"
name=$(devname "$dev")
wait_quiet "$dev" 5

# top, each table's title line preceded by "@<wall clock, s>"
bg_start top.blame bash -c '"$0" top -b --blame --group cgroup -d "$1" -i 1s -n 23 |
	while IFS= read -r l; do
		[[ $l == "iotracer top - "* ]] && printf "@%s\n" "$EPOCHREALTIME"
		printf "%s\n" "$l"
	done' "$IOTRACER" "$name"
TOP_PID=$BG_PID
for ((i = 0; i < 100; i++)); do
	grep -q '^iotracer top' "$IT_TMP/top.blame.out" 2>/dev/null && break
	sleep 0.2
done
grep -q '^iotracer top' "$IT_TMP/top.blame.out" ||
	fail_all "top printed no table in 20 s: $(head -c 300 "$IT_TMP/top.blame.out")"

# fio_in CGROUP NAME FIO-ARGS...: a fio process that joins CGROUP before it execs
declare -A FPID
fio_in() {
	local cg=$1 nm=$2
	shift 2
	bg_start "fio.$nm" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" \
		fio --output-format=json --output="$IT_TMP/fio.$nm.json" --name="$nm" \
		--filename="$dev" "$@"
	FPID[$nm]=$BG_PID
}
fio_in "${CG[V]}" v --direct=1 --ioengine=psync --rw=randread --bs=4k --size=64M \
	--rate_iops=500 --time_based --runtime=19 --randrepeat=0
fio_in "${CG[A]}" a --direct=1 --ioengine=libaio --iodepth=32 --rw=write --bs=1M \
	--offset=128M --size=128M --time_based --startdelay=5 --runtime=6
for j in v a; do
	bg_wait "${FPID[$j]}" 60
	((BG_RC == 0)) || fail_all "fio $j exited $BG_RC: $(tail -c 300 "$IT_TMP/fio.$j.out" | tr '\n' ' ')"
done
bg_wait "$TOP_PID" 30
((BG_RC == 0)) || fail_all "top exited $BG_RC: $(tail -c 300 "$IT_TMP/top.blame.out" | tr '\n' ' ')"

# fio_window NAME: "START END" of its job in s of the wall clock
fio_window() {
	jq -r '(.timestamp_ms / 1000) as $e | "\($e - (.jobs[0].job_runtime / 1000)) \($e)"' \
		"$IT_TMP/fio.$1.json"
}
read -r v0 v1 < <(fio_window v)
read -r a0 a1 < <(fio_window a)
note "fio windows (s after V's start): A $(awk -v a="$a0" -v b="$a1" -v v="$v0" 'BEGIN { printf "%.2f-%.2f", a - v, b - v }'), V 0-$(awk -v a="$v1" -v v="$v0" 'BEGIN { printf "%.2f", a - v }')"

# each table: "T CLASS BLAMED CULPRIT" for V's read row (CLASS on, off or -)
awk -v v="${REL[V]}" -v v0="$v0" -v v1="$v1" -v a0="$a0" -v a1="$a1" '
	function out() {
		if (t == "")
			return
		lo = t - 2.1; hi = t - 1
		cls = "-"
		if (lo >= a0 + 0.5 && hi <= a1)
			cls = "on"
		else if (lo >= v0 + 0.5 && hi <= v1 && (hi <= a0 - 0.2 || lo >= a1 + 0.3))
			cls = "off"
		printf "%.2f %s %s %s\n", t - v0, cls, pct, cul
		if (cls == "on" && !shown++)
			printf "%s", table >screen
	}
	/^@/ { out(); t = substr($0, 2); pct = "none"; cul = "none"; table = ""; next }
	/^TOTAL/ { out(); t = ""; exit }
	NF { table = table $0 "\n" }
	$2 == "read" && $NF == v { pct = $9; cul = $10 }
	END { out() }' screen="$IT_TMP/screen.txt" "$IT_TMP/top.blame.out" >"$IT_TMP/tables.txt"
note "top --blame screen, the first table with A on:"
sed "s/^/# $IT_NAME:   /" "$IT_TMP/screen.txt" 2>/dev/null
note "tables (s after V's start, class, V's BLAMED% and CULPRIT): $(tr '\n' ';' <"$IT_TMP/tables.txt")"

non=$(awk '$2 == "on"' "$IT_TMP/tables.txt" | wc -l)
bad_on=$(awk -v a="${REL[A]}" '$2 == "on" && !($4 == a && $3 + 0 >= 80) { printf "%s ", $0 }' "$IT_TMP/tables.txt")
check top_blame_on "$non tables with A on (want >= 2), failing: ${bad_on:-none}" \
	test "$non" -ge 2 -a -z "$bad_on"

noff_before=$(awk -v a="$a0" -v v="$v0" '$2 == "off" && $1 < a - v' "$IT_TMP/tables.txt" | wc -l)
noff_after=$(awk -v a="$a1" -v v="$v0" '$2 == "off" && $1 > a - v' "$IT_TMP/tables.txt" | wc -l)
bad_off=$(awk '$2 == "off" && !($4 == "-" || $4 == "none" || $3 + 0 < 5) { printf "%s ", $0 }' "$IT_TMP/tables.txt")
check top_blame_off "$noff_before tables before A, $noff_after after (want >= 1 each), failing: ${bad_off:-none}" \
	test "$noff_before" -ge 1 -a "$noff_after" -ge 1 -a -z "$bad_off"

sed -n '/^TOTAL/,$p' "$IT_TMP/top.blame.out" >"$IT_TMP/totals.txt"
tot=$(awk -v v="${REL[V]}" '$1 == v && $3 == "read" { print $6, $7 }' "$IT_TMP/totals.txt")
bline=$(grep -c '^blame (docs/blame.md): ' "$IT_TMP/totals.txt")
note "TOTAL table: $(tr '\n' ';' <"$IT_TMP/totals.txt")"
check top_blame_totals "V's read row: BLAMED% and CULPRIT '${tot:-none}' (want >= 80, ${REL[A]}), blame lines $bline" \
	awk -v t="$tot" -v a="${REL[A]}" -v b="$bline" \
	'BEGIN { split(t, f, " "); exit !(f[1] + 0 >= 80 && f[2] == a && b == 1) }'
it_end
