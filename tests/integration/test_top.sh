#!/usr/bin/env bash
# `iotracer top`: the live view in a real terminal (tmux) and the batch tables, against two
# fio processes reading one loop device at different fixed rates (psync, direct, 4k).
# Oracles: fio's JSON (each job's pid-level read iops and total_ios), the keys the test
# sends, the bad values it passes.
#   screen_rows   tmux capture-pane: a row per fio process (its pid, comm fio, the device,
#                 op read)
#   screen_iops   ... each row's IOPS within 15 % of its fio job's read iops (fio's mean over
#                 the run; both are rate-limited, so steady)
#   key_cgroup    after 'c': the title says per cgroup and the header has no PID column
#   key_sort      after 'b': the title says sort bytes; after 'q': top exits 0
#   batch_totals  -b: the final totals per fio pid <= its total_ios, and their sum short of
#                 fio's only by the completions the totals line reports unseen (lib.sh
#                 accounted); bytes == 4096 x ios
#   bad_sort      --sort nosuch: exit 2, one line naming --sort
#   bad_pid       -p 999999 (no such process): exit 2, one line naming --pid, as the daemon
#   title_kept    tmux 160x8, ten fio reader processes: the screen's first line is still the
#                 title, and a "... N more rows" line says the cut
#   width80       tmux 80x24, the same readers: every line of the screen is a whole row (a
#                 pid first) or the title, header or cut line: nothing wrapped
#   blame80       tmux 80x24, `top --blame -C`: the header ends with CGROUP (the rows' key
#                 stays; CULPRIT is cut and AVG goes first), the readers' row ends with
#                 their cgroup, the title is cut between its parts (not to "blame 1") and
#                 says "1 row", not "1 rows"; no line wraps (issue 37)
#   pipe          top -n 2 into a pipe, without -b: no escape byte, and the batch's totals
#   cgroup_totals top -b -C: the totals table has no PID or COMM column
#   batch_aligned the -b totals table's columns start where its header's do
#   syscall_tax   the programs the kernel lists for top's BPF fds (bpftool): none of the
#                 syscall layer's (sys_enter/sys_exit) by default, they are there with
#                 --group file (direct IO's files; every syscall pays them on this host)
# shellcheck disable=SC2016,SC2119 # jq programs in single quotes; optional args
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin screen_rows screen_iops key_cgroup key_sort batch_totals bad_sort bad_pid title_kept \
	width80 blame80 pipe cgroup_totals batch_aligned syscall_tax
it_require_all tmux

RATE_A=${TOP_RATE_A:-150}
RATE_B=${TOP_RATE_B:-300}

dev=$(mk_loop 64 fill) || fail_all "cannot create a loop device"
name=$(devname "$dev")
wait_quiet "$dev" 5

"$IOTRACER" top --sort nosuch >/dev/null 2>"$IT_TMP/bad.err"
rc=$?
err=$(cat "$IT_TMP/bad.err")
check bad_sort "exit $rc (want 2), stderr: $err" \
	test "$rc" = 2 -a "$(wc -l <"$IT_TMP/bad.err")" = 1 -a "${err#iotracer: top: --sort}" != "$err"

timeout 10 "$IOTRACER" top -p 999999 >/dev/null 2>"$IT_TMP/badpid.err"
rc=$?
err=$(cat "$IT_TMP/badpid.err")
check bad_pid "exit $rc (want 2), stderr: $err" \
	test "$rc" = 2 -a "$(wc -l <"$IT_TMP/badpid.err")" = 1 -a "${err#*--pid}" != "$err"

"$IOTRACER" top -n 2 -i 200ms -d "$name" 2>"$IT_TMP/pipe.err" | cat >"$IT_TMP/pipe.out"
rc=${PIPESTATUS[0]}
esc=$(tr -cd '\033' <"$IT_TMP/pipe.out" | wc -c)
check pipe "exit $rc, $esc escape bytes, totals $(grep -c '^TOTAL' "$IT_TMP/pipe.out"): $(head -c 200 "$IT_TMP/pipe.err")" \
	test "$rc" = 0 -a "$esc" = 0 -a "$(grep -c '^TOTAL' "$IT_TMP/pipe.out")" = 1
"$IOTRACER" top -b -C -n 1 -i 200ms -d "$name" >"$IT_TMP/cg.out" 2>&1
rc=$?
cghead=$(grep -A1 '^TOTAL' "$IT_TMP/cg.out" | tail -1)
check cgroup_totals "exit $rc, header '$cghead'" test "$rc" = 0 -a "$cghead" = "CGROUP DEV OP IOS BYTES"

# top_progs ARGS...: the names of the BPF programs a running top holds (the kernel's list)
top_progs() {
	local pid ids
	"$IOTRACER" top -b -n 4 -i 300ms -d "$name" "$@" >/dev/null 2>&1 &
	pid=$!
	# loaded and attached: the same nonempty set of programs twice, 200 ms apart
	local prev=""
	for _ in $(seq 50); do
		ids=$(bpf_fd_ids "$pid" | sed -n 's/^p//p')
		[[ -n $ids && $ids == "$prev" ]] && break
		prev=$ids
		sleep 0.2
	done
	for i in $ids; do bpftool -j prog show id "$i" 2>/dev/null | jq -r .name; done | sort | tr '\n' ' '
	wait "$pid" 2>/dev/null
}
plain=$(top_progs)
byfile=$(top_progs --group file)
check syscall_tax "default: $plain; --group file: $byfile" \
	test -n "$plain" -a "${plain/sys_e/}" = "$plain" -a "${byfile/sys_enter/}" != "$byfile"

# fio_job NAME RATE ARGS...: a rate-limited 4k direct reader of the device (own process)
fio_job() {
	local n=$1 r=$2
	shift 2
	bg_start "fio.$n" fio --thread --output-format=json --output="$IT_TMP/fio.$n.json" --name="$n" \
		--filename="$dev" --ioengine=psync --direct=1 --rw=randread --bs=4k \
		--rate_iops="$r" --randrepeat=0 "$@"
	FIO_PID_OF[$n]=$BG_PID
}
declare -A FIO_PID_OF
fio_done() { # NAME: wait for it, 0 if its JSON is there
	bg_wait "${FIO_PID_OF[$1]}" 120
	((BG_RC == 0)) && jq -e '.jobs | length > 0' "$IT_TMP/fio.$1.json" >/dev/null 2>&1
}
# the process of a job: with --thread its IO thread is in the fio process itself
job_pid() { printf '%s\n' "${FIO_PID_OF[$1]}"; }

# ---------------------------------------------------------------- the screen
SOCK=$IT_TMP/tmux.sock
tm() { tmux -S "$SOCK" "$@"; }
tm new-session -d -s top -x 160 -y 40 \
	"$IOTRACER top -d $name -i 1s; echo \"exit=\$?\" >$IT_TMP/top.rc; sleep 30" ||
	fail_all "tmux cannot start"
_it_register pids "$(tm display -p '#{pid}')"
for ((i = 0; i < 100; i++)); do # attached: the first table is on the screen
	tm capture-pane -p -t top | grep -q '^iotracer top' && break
	sleep 0.2
done
((i < 100)) || fail_all "top drew nothing in 20 s: $(tm capture-pane -p -t top | head -5 | tr '\n' ' ')"

fio_job a "$RATE_A" --runtime=8 --time_based
fio_job b "$RATE_B" --runtime=8 --time_based
sleep 5 # a few intervals of both at their rates
tm capture-pane -p -t top >"$IT_TMP/screen.txt"
tm send-keys -t top c
sleep 0.5
tm capture-pane -p -t top >"$IT_TMP/screen.cgroup.txt"
tm send-keys -t top b
sleep 0.5
tm capture-pane -p -t top >"$IT_TMP/screen.bytes.txt"
tm send-keys -t top q
{ fio_done a && fio_done b; } || fail_all "fio failed: $(tail -c 300 "$IT_TMP/fio.a.out" "$IT_TMP/fio.b.out" | tr '\n' ' ')"
for ((i = 0; i < 50; i++)); do [[ -s $IT_TMP/top.rc ]] && break; sleep 0.1; done
sed 's/^/# screen: /' "$IT_TMP/screen.txt" | grep -v '^# screen: $'

bad_rows="" bad_iops=""
for j in a b; do
	pid=$(job_pid "$j")
	want=$(jq -r '.jobs[0].read.iops' "$IT_TMP/fio.$j.json")
	row=$(awk -v p="$pid" '$1 == p' "$IT_TMP/screen.txt")
	read -r _ comm rdev op iops _ <<<"$row"
	note "fio $j pid $pid: fio iops $want; top row: ${row:-none}"
	[[ -n $row && $comm == fio && $rdev == "$name" && $op == read ]] || bad_rows+="$j(pid $pid): '${row:-none}' "
	within_pct "${iops:-0}" "$want" 15 || bad_iops+="$j: top ${iops:-none} fio $want; "
done
check screen_rows "rows: $bad_rows" test -z "$bad_rows"
check screen_iops "$bad_iops" test -z "$bad_iops"
head -n 2 "$IT_TMP/screen.cgroup.txt" | sed 's/^/# after c: /'
check key_cgroup "after c: $(head -n 2 "$IT_TMP/screen.cgroup.txt" | tr '\n' '|')" \
	sh -c 'head -n 1 "$1" | grep -q "per cgroup" && sed -n 2p "$1" | grep -q "^DEV "' sh "$IT_TMP/screen.cgroup.txt"
check key_sort "after b: $(head -n 1 "$IT_TMP/screen.bytes.txt"); after q: $(cat "$IT_TMP/top.rc" 2>/dev/null)" \
	sh -c 'head -n 1 "$1" | grep -q "sort bytes" && grep -q "^exit=0$" "$2"' sh "$IT_TMP/screen.bytes.txt" "$IT_TMP/top.rc"
tm kill-server 2>/dev/null

# ---------------------------------------------------------------- small terminals
# ten reader processes (fio forks its jobs without --thread): ten rows
bg_start "fio.many" fio --output-format=json --output="$IT_TMP/fio.many.json" --name=many \
	--numjobs=10 --filename="$dev" --ioengine=psync --direct=1 --rw=randread --bs=4k \
	--rate_iops=20 --randrepeat=0 --runtime=6 --time_based
MANY_PID=$BG_PID
tm new-session -d -s small -x 160 -y 8 "$IOTRACER top -d $name -i 1s; sleep 30" ||
	fail_all "tmux cannot start"
_it_register pids "$(tm display -p -t small '#{pid}')"
tm new-session -d -s narrow -x 80 -y 24 "$IOTRACER top -d $name -i 1s; sleep 30" ||
	fail_all "tmux cannot start"
_it_register pids "$(tm display -p -t narrow '#{pid}')"
tm new-session -d -s blame -x 80 -y 24 "$IOTRACER top --blame -C -d $name -i 1s; sleep 30" ||
	fail_all "tmux cannot start"
_it_register pids "$(tm display -p -t blame '#{pid}')"
sleep 4.5
tm capture-pane -p -t small >"$IT_TMP/screen.small.txt"
tm capture-pane -p -t narrow >"$IT_TMP/screen.narrow.txt"
tm capture-pane -p -t blame >"$IT_TMP/screen.blame.txt"
tm send-keys -t small q
tm send-keys -t narrow q
tm send-keys -t blame q
sed 's/^/# 160x8: /' "$IT_TMP/screen.small.txt"
sed 's/^/# 80x24: /' "$IT_TMP/screen.narrow.txt" | grep -v '^# 80x24: $'
check title_kept "160x8: $(head -n 2 "$IT_TMP/screen.small.txt" | tr '\n' '|')" \
	sh -c 'head -n 1 "$1" | grep -q "^iotracer top" && grep -q "^\.\.\. [0-9]* more rows" "$1"' \
	sh "$IT_TMP/screen.small.txt"
# after the title and the header: rows (a pid first) or the cut line
bad=$(awk 'NR > 2 && NF && !/^ *[0-9]+ / && !/^\.\.\. [0-9]+ more rows$/' "$IT_TMP/screen.narrow.txt")
nrows=$(awk 'NR > 2 && /^ *[0-9]+ /' "$IT_TMP/screen.narrow.txt" | wc -l)
check width80 "$nrows rows; not a row: $(head -n 3 <<<"$bad" | tr '\n' '|')" \
	test -z "$bad" -a "$nrows" -ge 10 -a "$(head -c 12 "$IT_TMP/screen.narrow.txt")" = "iotracer top"
sed 's/^/# 80x24 --blame -C: /' "$IT_TMP/screen.blame.txt" | grep -v ': $'
# per cgroup the key column stays: the header ends with CGROUP, the readers' row with their
# cgroup's path; the title is cut between whole parts; no line wraps
read -r head_last < <(sed -n 2p "$IT_TMP/screen.blame.txt" | awk '{ print $NF }')
title_end=$(head -n 1 "$IT_TMP/screen.blame.txt" | sed 's/.*  //')
cgrow=$(awk -v c="$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)" 'NR > 2 && $NF == c' \
	"$IT_TMP/screen.blame.txt" | wc -l)
wide=$(awk 'length($0) > 79' "$IT_TMP/screen.blame.txt" | wc -l)
check blame80 "header's last column '${head_last:-}', title's last part '$title_end', rows of the readers' cgroup $cgrow, lines over 79 columns $wide" \
	eval '[[ $head_last == CGROUP && $title_end =~ ^(1\ row|(0|[2-9]|[1-9][0-9]+)\ rows|blame\ 1s\ late|\[q\ quit,\ s\ sort,\ c\ grouping\])$ ]] && ((cgrow > 0 && wide == 0))'
tm kill-server 2>/dev/null
bg_wait "$MANY_PID" 60

# ---------------------------------------------------------------- batch
top_batch_start -i 500ms -d "$name"
fio_job c "$RATE_A" --number_ios=600 --size=16M
fio_job d "$RATE_B" --number_ios=1200 --size=16M --offset=16M
{ fio_done c && fio_done d; } || fail_all "fio failed: $(tail -c 300 "$IT_TMP/fio.c.out" "$IT_TMP/fio.d.out" | tr '\n' ' ')"
sleep 1
kill -INT "$TOP_PID"
bg_wait "$TOP_PID" 20
tot=$(grep -A 100 '^TOTAL' "$IT_TMP/top.batch.out")
note "batch (exit $BG_RC): $(tr '\n' '|' <<<"$tot")"
read -r issued seen < <(sed -n 's/.*issued \([0-9]*\), seen completing \([0-9]*\).*/\1 \2/p' <<<"$tot")
missed=$((${issued:-0} - ${seen:-0}))
bad="" got_all=0 want_all=0
for j in c d; do
	pid=$(job_pid "$j")
	want=$(jq -r '.jobs[0].read.total_ios' "$IT_TMP/fio.$j.json")
	read -r _ _ _ _ _ ios bytes < <(awk -v p="$pid" '$1 == p && $5 == "read"' <<<"$tot")
	got_all=$((got_all + ${ios:-0})) want_all=$((want_all + want))
	is_int "${ios:-x}" && ((ios <= want)) && [[ $bytes == $((4096 * ios)) ]] ||
		bad+="$j (pid $pid): ios ${ios:-none} bytes ${bytes:-none}, fio $want; "
done
# the device's sum: short of fio's only by the unseen completions, under 0.5 % (lib.sh)
accounted "$got_all" "$want_all" "$missed" 0 || bad+="sum $got_all of $want_all; "
check batch_totals "${bad}unseen completions $missed, exit $BG_RC" test -z "$bad" -a "$BG_RC" = 0
# each column of a row starts where the header's column does (after a blank)
bad=$(tail -n +2 <<<"$tot" | awk 'NR == 1 { for (i = 2; i <= length($0); i++)
		if (substr($0, i - 1, 1) == " " && substr($0, i, 1) != " ") s[++n] = i; next }
	{ for (k = 1; k <= n; k++) if (substr($0, s[k] - 1, 1) != " " || substr($0, s[k], 1) == " ") {
		print; break } }')
check batch_aligned "not aligned with '$(sed -n 2p <<<"$tot")': $(head -n 2 <<<"$bad" | tr '\n' '|')" \
	test -z "$bad" -a "$(wc -l <<<"$tot")" -ge 3
it_end
