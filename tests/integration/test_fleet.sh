#!/usr/bin/env bash
# A fleet in ClickHouse (docs/fleet.md): two clickhouse-server processes of the test's own on
# 127.0.0.1 (Debian's 18.16), each a shard with its local tables (deploy/clickhouse/schema.sql),
# a Distributed table over both (distributed.sql), and two daemons, hosts a and b, each
# tracing its own loop device with --blame and --record and shipping to the Distributed table
# of one shard (--sink, as user iotracer with a 0600 password file). Oracles: fio's IO
# counts, and the two hosts' own recordings read by `iotracer report`.
#   ddl        both DDL files run on both servers
#   counts     SELECT count() per host through the Distributed table (FINAL) == each fio's
#              IO count, exactly
#   shards     both shards hold rows of both hosts (the sharding key spreads each host)
#   summary    report --from the cluster: the stage table (COUNT P50 P90 P99 MAX BYTES MB/s)
#              == report of the two recordings together, row for row
#   hists      ... and the same log2 histograms
#   slowest    ... and the same -n 20 slowest requests (with where their time went)
#   json       report --from -j: the same request and blame lines, byte for byte, as from the
#              recordings
#   blame      report --from --blame (the daemons' stored lines, summed by the server) == the
#              report --blame of the recordings (their stored lines)
#   filters    --host a: host a's fio count; -c fio -d, -m 1ms, --since/--until: the
#              recordings' counts
#   views      --perfetto: as many request slices, --heatmap: as many requests drawn
#   files      report --from --by file: the recordings' tables of files (the cluster's names
#              have their host before them); -f by a name's pattern: the recordings' count
#   cgroups    each fio ran in a cgroup of the test's own: report --by cgroup of the
#              recordings has a row per fio with its IO count and bytes (fio's total_ios,
#              io_bytes), and report --from --by cgroup the same table; --by pod --blame
#              --host a: host a's requests in the row "(no pod)" (fio's count), the same
#              tables as over its recording
#   stacks     what this machine cannot trace (no dm or md): build/sink_fixture writes the
#              same synthetic requests (an upper bio of dm-0 and its members, a partition's
#              requests, lost members, write-back with a driver's stamps) into a recording
#              and, as host fixture, into the cluster: report --from --host fixture gives
#              the recording's stage table, histograms (the members' apart), -n 20 slowest
#              and -j lines
#   queries    docs/fleet.md's three SQL queries run on the cluster (18.16); the bytes per
#              file of each host sum to its recording's block requests' bytes
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/clickhouse.sh
. "$(dirname "$0")/clickhouse.sh"

it_begin ddl counts shards summary hists slowest json blame filters views files cgroups stacks \
	queries
it_require_all curl
ch_require
DDL=$IT_ROOT/deploy/clickhouse

ch_ports s1 || fail_all "no free TCP ports"
ch_ports s2 || fail_all "no free TCP ports"
for s in s1 s2; do
	ch_start "$s" "${CH_TCP[s1]}" "${CH_TCP[s2]}" || fail_all "cannot start clickhouse-server $s"
done
ddl_ok=1
for s in s1 s2; do
	ch_ddl "$s" "$DDL/schema.sql" || ddl_ok=0
	ch_ddl "$s" "$DDL/distributed.sql" || ddl_ok=0
done
check ddl "schema.sql and distributed.sql on two 18.16 servers ($(ch_q s1 'SELECT version()'))" \
	test "$ddl_ok" = 1
((ddl_ok)) || fail_all "no tables"

# ---------------------------------------------------------------- two hosts
NIOS=${FLEET_IOS:-4000}
declare -A DEV
for h in a b; do
	DEV[$h]=$(mk_loop 96 fill) || fail_all "cannot create a loop device"
done
s=1
for h in a b; do
	wait_quiet "${DEV[$h]}" 5
	url="clickhouse://iotracer@127.0.0.1:${CH_HTTP[s$s]}/iotracer.fleet"
	tr_start "$h" -d "$(devname "${DEV[$h]}")" --name "$h" --blame --record "$IT_TMP/rec-$h" \
		--sink "$url" --sink-auth "$CH_PWFILE" --sink-spill "$IT_TMP/spill-$h"
	s=$((s + 1))
done
tr_attached a b || fail_all "$TR_WHY"
declare -A FPID FJSON FCG
CG_ROOT=$(findmnt -n -t cgroup2 -o TARGET 2>/dev/null | head -n 1)
for h in a b; do # each fio in a cgroup of its own (the cgroups check), where cgroup2 is
	mk_cgroup && FCG[$h]=$CGROUP_DIR
done
for h in a b; do
	FJSON[$h]=$IT_TMP/fio-$h.json
	FIO_CGROUP=${FCG[$h]:-} fio_start "${FJSON[$h]}" --name="fleet-$h" --filename="${DEV[$h]}" --ioengine=psync --direct=1 \
		--rw=randrw --rwmixread=70 --bs=4k --number_ios="$NIOS" --rate_iops=2000,800 \
		--randrepeat=0 --norandommap --size=90M
	FPID[$h]=$FIO_PID
done
for h in a b; do
	FIO_PID=${FPID[$h]} FIO_OUT=${FJSON[$h]}
	fio_wait 120 || fail_all "fio $h failed"
done
sleep 0.3
tr_stop a b
for h in a b; do
	((TR_RC[$h] == 0)) || fail_all "host $h exited ${TR_RC[$h]}: $(tail -c 300 "${TR_ERR[$h]}")"
	note "host $h: $(grep '^sink:' "${TR_OUT[$h]}")"
done
declare -A IOS FBYTES
for h in a b; do
	IOS[$h]=$(jq -r '[.jobs[] | .read.total_ios + .write.total_ios] | add' "${FJSON[$h]}")
	FBYTES[$h]=$(jq -r '[.jobs[] | .read.io_bytes + .write.io_bytes] | add' "${FJSON[$h]}")
done

# counts: the Distributed table sends a shard's rows on within ~0.1 s (its queue): poll
got=""
for ((i = 0; i < 50; i++)); do
	got=$(ch_q s1 "SELECT host, count() FROM iotracer.fleet FINAL GROUP BY host ORDER BY host" |
		tr '\t\n' '= ')
	[[ $got == "a=${IOS[a]} b=${IOS[b]} " ]] && break
	sleep 0.2
done
check counts "per host through the Distributed table: $got(fio: a=${IOS[a]} b=${IOS[b]})" \
	test "$got" = "a=${IOS[a]} b=${IOS[b]} "
# the blame lines the daemons sent, forwarded to their shards as well (the same queue)
bsent=$(grep -h '^sink:' "${TR_OUT[a]}" "${TR_OUT[b]}" | sed -n 's/.* \([0-9]*\) sent; [0-9]* retries.*/\1/p' |
	awk '{ s += $1 } END { print s + 0 }')
for ((i = 0; i < 50; i++)); do
	bgot=$(ch_q s1 "SELECT count() FROM iotracer.fleet_blame FINAL")
	[[ $bgot == "$bsent" ]] && break
	sleep 0.2
done
note "blame lines through the Distributed table: $bgot, the daemons sent $bsent"
sh=""
for s in s1 s2; do
	sh+="$s: $(ch_q "$s" 'SELECT host, count() FROM iotracer.requests GROUP BY host ORDER BY host' |
		tr '\t\n' '= ') "
done
check shards "$sh" grep -Eq '^s1: a=[1-9][0-9]* b=[1-9][0-9]* +s2: a=[1-9][0-9]* b=[1-9]' <<<"$sh"

# ---------------------------------------------------------------- report --from vs the recordings
FROM=(--from "clickhouse://iotracer@127.0.0.1:${CH_HTTP[s2]}/iotracer.fleet" --auth "$CH_PWFILE")
RECS=("$IT_TMP/rec-a" "$IT_TMP/rec-b")
rep() { # rep NAME ARGS...: report of the recordings (NAME.rec) and of the cluster (NAME.ch)
	local n=$1
	shift
	"$IOTRACER" report "$@" "${RECS[@]}" >"$IT_TMP/$n.rec" 2>"$IT_TMP/$n.rec.err"
	"$IOTRACER" report "$@" "${FROM[@]}" >"$IT_TMP/$n.ch" 2>"$IT_TMP/$n.ch.err"
}
same() { # same CHECK NAME FILTER: the filtered outputs are equal and not empty
	"$3" "$IT_TMP/$2.rec" >"$IT_TMP/$2.rec.f"
	"$3" "$IT_TMP/$2.ch" >"$IT_TMP/$2.ch.f"
	if [[ -s $IT_TMP/$2.rec.f ]] && cmp -s "$IT_TMP/$2.rec.f" "$IT_TMP/$2.ch.f"; then
		pass "$1" "$(wc -l <"$IT_TMP/$2.rec.f") lines"
	else
		fail "$1" "$(wc -l <"$IT_TMP/$2.rec.f") lines from the recordings; differ: $(diff "$IT_TMP/$2.rec.f" "$IT_TMP/$2.ch.f" | head -4 | cut -c1-160 | tr '\n' '|') $(head -c 300 "$IT_TMP/$2.ch.err")"
	fi
}
# shellcheck disable=SC2317 # called through same()
rows() { grep -E '^(syscall|block|io_uring|aio|stack|virtio) +[^ ]+ +[^ ]+ +[^ ]+ +[0-9]+ ' "$1" | sort; }
# the histograms, each a block of lines, in the order of their titles
# shellcheck disable=SC2317 # called through same()
hists() { awk '/\(all [a-z ]*requests\)$/ { t = $0 } t && NF { print t " | " $0 } !NF { t = "" }' "$1" | sort; }
# the slowest requests without their wall-clock time (the recordings' segments and the sink
# read CLOCK_REALTIME - CLOCK_MONOTONIC at different instants: the same stamp, µs apart)
# shellcheck disable=SC2317 # called through same()
slowest() { sed -n '/slowest requests ===$/,$p' "$1" | awk '{ if ($2 ~ /Z$/) $2 = "T"; print }' | sort; }
rep all -n 20
"$IOTRACER" report -n 0 --json "$IT_TMP/all.rec.json" "${RECS[@]}" >/dev/null 2>&1
"$IOTRACER" report -n 0 --json "$IT_TMP/all.ch.json" "${FROM[@]}" >/dev/null 2>&1
same summary all rows
same hists all hists
same slowest all slowest
sort "$IT_TMP/all.rec.json" >"$IT_TMP/j.rec"
sort "$IT_TMP/all.ch.json" >"$IT_TMP/j.ch"
nj=$(grep -c '"type":"request"' "$IT_TMP/j.rec")
nb=$(grep -c '"type":"blame"' "$IT_TMP/j.rec")
if ((nj == IOS[a] + IOS[b] && nb > 0)) && cmp -s "$IT_TMP/j.rec" "$IT_TMP/j.ch"; then
	pass json "$nj request lines, $nb blame lines"
else
	fail json "$nj request and $nb blame lines from the recordings (fio: $((IOS[a] + IOS[b]))), $(wc -l <"$IT_TMP/j.ch") lines from the cluster; first difference: $(diff "$IT_TMP/j.rec" "$IT_TMP/j.ch" | head -2 | cut -c1-200 | tr '\n' '|')"
fi

# shellcheck disable=SC2317 # called through same()
matrix() { sed -n "/^blame by /,\$p" "$1"; }
rep blame -n 0 --blame
same blame blame matrix

# filters: the same counts over the cluster as over the recordings
count() { "$IOTRACER" report -n 0 --json - "$@" 2>/dev/null | grep -c '"type":"request"'; }
c_host=$(count "${FROM[@]}" --host a)
c_fio=$(count "${FROM[@]}" -c fio -d "$(devname "${DEV[b]}")")
r_fio=$(count "${RECS[@]}" -c fio -d "$(devname "${DEV[b]}")")
c_m=$(count "${FROM[@]}" -m 1ms)
r_m=$(count "${RECS[@]}" -m 1ms)
since=$(sed -n 's/.*started \([^;]*\);.*/\1/p' "$IT_TMP/all.rec" | head -n 1)
t=$(($(date -u -d "$since" +%s) + 3))
c_t=$(count "${FROM[@]}" --since "$t")/$(count "${FROM[@]}" --until "$t")
r_t=$(count "${RECS[@]}" --since "$t")/$(count "${RECS[@]}" --until "$t")
check filters "--host a $c_host (fio ${IOS[a]}); -c fio -d b's $c_fio/$r_fio; -m 1ms $c_m/$r_m; since/until $t: $c_t / $r_t (cluster/recordings)" \
	test "$c_host" = "${IOS[a]}" -a "$c_fio" = "$r_fio" -a "$c_fio" -gt 0 -a "$c_m" = "$r_m" -a "$c_t" = "$r_t"

# views: the same requests drawn
rep views -n 0 --perfetto "$IT_TMP/pf.x" --heatmap "$IT_TMP/hm.x"
"$IOTRACER" report -n 0 --perfetto "$IT_TMP/pf.rec" --heatmap "$IT_TMP/hm.rec" "${RECS[@]}" >/dev/null 2>&1
"$IOTRACER" report -n 0 --perfetto "$IT_TMP/pf.ch" --heatmap "$IT_TMP/hm.ch" "${FROM[@]}" >/dev/null 2>&1
slices() { jq '[.traceEvents[] | select(.ph == "X" and .cat == "io")] | length' "$1" 2>/dev/null; }
cells() { grep -o 'data-count="[0-9]*"' "$1" 2>/dev/null | tr -dc '0-9\n' | awk '{ s += $1 } END { print s + 0 }'; }
p1=$(slices "$IT_TMP/pf.rec") p2=$(slices "$IT_TMP/pf.ch") h1=$(cells "$IT_TMP/hm.rec") h2=$(cells "$IT_TMP/hm.ch")
check views "perfetto io slices $p2 (recordings $p1), heatmap requests $h2 (recordings $h1)" \
	test -n "$p1" -a "$p1" = "$p2" -a "$h1" = "$h2" -a "$h1" -gt 0

# files: the same tables of files; -f by name (a pattern: no inode to match) and by path
rep files -n 5 --by file
rep files_blame -n 5 --by file --blame
# shellcheck disable=SC2317 # called through same()
files() { sed -n '/^files (--by file)/,$p' "$1" | sed -E 's# [ab]:/# /#'; }
pat="${DEV[b]%?}[${DEV[b]: -1}]"
c_f=$(count "${FROM[@]}" -f "$pat")/$(count "${FROM[@]}" -f "${DEV[a]}")
r_f=$(count "${RECS[@]}" -f "$pat")/$(count "${RECS[@]}" -f "${DEV[a]}")
note "files: $(files "$IT_TMP/files_blame.ch" | tr '\n' '|')"
note "files: $(files "$IT_TMP/files_blame.rec" | tr '\n' '|')"
if [[ $c_f == "${IOS[b]}/${IOS[a]}" && $c_f == "$r_f" ]]; then
	same files files files
else
	fail files "-f $pat / -f ${DEV[a]}: $c_f over the cluster, $r_f over the recordings (fio: ${IOS[b]}/${IOS[a]})"
fi

# cgroups: a row per fio's cgroup with fio's figures, the same table over the cluster
if [[ -z ${FCG[a]:-} || -z ${FCG[b]:-} ]]; then
	skip cgroups "no cgroup2 mount to make the fios' cgroups in"
else
	rep cgroups -n 5 --by cgroup
	# shellcheck disable=SC2317 # called through same()
	cgroups() { sed -n '/^cgroups (--by cgroup)/,$p' "$1" | sed -E 's# [ab]:/# /#'; }
	"$IOTRACER" report -n 5 --by pod --blame "$IT_TMP/rec-a" >"$IT_TMP/pods.rec" 2>&1
	"$IOTRACER" report -n 5 --by pod --blame --host a "${FROM[@]}" >"$IT_TMP/pods.ch" 2>&1
	# shellcheck disable=SC2317 # called through same()
	pods() { sed -n '/^pods (--by pod)/,$p' "$1"; }
	got="$(report_row "$IT_TMP/cgroups.rec" cgroup "${FCG[a]#"$CG_ROOT"}")/$(report_row "$IT_TMP/cgroups.rec" cgroup "${FCG[b]#"$CG_ROOT"}")"
	got+=" pod $(report_row "$IT_TMP/pods.rec" pod "(no pod)")/$(report_row "$IT_TMP/pods.ch" pod "(no pod)")"
	want="${IOS[a]} ${FBYTES[a]}/${IOS[b]} ${FBYTES[b]} pod ${IOS[a]} ${FBYTES[a]}/${IOS[a]} ${FBYTES[a]}"
	note "cgroups: $(cgroups "$IT_TMP/cgroups.ch" | tr '\n' '|')"
	pods "$IT_TMP/pods.rec" >"$IT_TMP/pods.rec.f"
	pods "$IT_TMP/pods.ch" >"$IT_TMP/pods.ch.f"
	if [[ $got == "$want" ]] && ! cmp -s "$IT_TMP/pods.rec.f" "$IT_TMP/pods.ch.f"; then
		fail cgroups "--by pod --blame tables differ: $(diff "$IT_TMP/pods.rec.f" "$IT_TMP/pods.ch.f" | head -4 | tr '\n' '|')"
	elif [[ $got == "$want" ]]; then
		same cgroups cgroups cgroups
	else
		fail cgroups "rows (reqs bytes) of a's/b's cgroup, (no pod) of a over its recording/the cluster: $got; fio: $want; $(head -c 200 "$IT_TMP/cgroups.rec.err")"
	fi
fi

# stacks: the fixture's requests, recorded and shipped (after the checks of hosts a and b)
FIXTURE=$IT_ROOT/build/sink_fixture
NFIX=3000
if [[ ! -x $FIXTURE ]]; then
	fail stacks "$FIXTURE is not built (make tools)"
elif ! "$FIXTURE" "clickhouse://iotracer@127.0.0.1:${CH_HTTP[s1]}/iotracer.fleet" \
	"$IT_TMP/rec-fix" "$NFIX" "$CH_PWFILE" >"$IT_TMP/fix.out" 2>&1; then
	fail stacks "sink_fixture: $(tail -c 300 "$IT_TMP/fix.out")"
else
	for ((i = 0; i < 50; i++)); do
		[[ $(ch_q s1 "SELECT count() FROM iotracer.fleet FINAL WHERE host = 'fixture'") == "$NFIX" ]] && break
		sleep 0.2
	done
	FIX=(--from "clickhouse://iotracer@127.0.0.1:${CH_HTTP[s2]}/iotracer.fleet" --auth "$CH_PWFILE" --host fixture)
	"$IOTRACER" report -n 20 "$IT_TMP/rec-fix" >"$IT_TMP/fix.rec" 2>&1
	"$IOTRACER" report -n 20 "${FIX[@]}" >"$IT_TMP/fix.ch" 2>&1
	"$IOTRACER" report -n 0 -j - "$IT_TMP/rec-fix" 2>/dev/null | sort >"$IT_TMP/fixj.rec"
	"$IOTRACER" report -n 0 -j - "${FIX[@]}" 2>/dev/null | sort >"$IT_TMP/fixj.ch"
	bad=""
	for f in rows hists slowest; do
		"$f" "$IT_TMP/fix.rec" >"$IT_TMP/fix.$f.rec"
		"$f" "$IT_TMP/fix.ch" >"$IT_TMP/fix.$f.ch"
		[[ -s $IT_TMP/fix.$f.rec ]] && cmp -s "$IT_TMP/fix.$f.rec" "$IT_TMP/fix.$f.ch" ||
			bad+="$f: $(diff "$IT_TMP/fix.$f.rec" "$IT_TMP/fix.$f.ch" | head -3 | cut -c1-120 | tr '\n' '|') "
	done
	cmp -s "$IT_TMP/fixj.rec" "$IT_TMP/fixj.ch" || bad+="json: $(diff "$IT_TMP/fixj.rec" "$IT_TMP/fixj.ch" | head -2 | cut -c1-200 | tr '\n' '|')"
	nst=$(grep -c '^stack ' "$IT_TMP/fix.rows.rec")
	nmem=$(grep -c 'all member requests' "$IT_TMP/fix.rec")
	nj=$(grep -c '"role":"member"' "$IT_TMP/fixj.rec")
	check stacks "$NFIX requests; $nst stack rows, $nmem member histograms, $nj lines with members; ${bad:-the same}" \
		test -z "$bad" -a "$nst" -gt 0 -a "$nmem" -gt 0 -a "$(wc -l <"$IT_TMP/fixj.ch")" = "$NFIX"
fi

# queries: the documentation's, as written
awk '/^```sql$/ { q = 1; n++; next } /^```$/ { q = 0 } q { print > ("'"$IT_TMP"'/q" n ".sql") }' \
	"$IT_ROOT/docs/fleet.md"
qbad="" qn=0
for f in "$IT_TMP"/q*.sql; do
	grep -q '^SELECT' "$f" || continue # not the DDL blocks
	qn=$((qn + 1))
	ch_q s1 "$(cat "$f")" >"$f.out" 2>&1
	grep -q '^Code:' "$f.out" && qbad+="$(basename "$f"): $(head -c 200 "$f.out") "
done
fbytes=$(ch_q s1 "$(grep -l 'ARRAY JOIN block' "$IT_TMP"/q*.sql | head -n 1 | xargs cat)" |
	awk -F '\t' '{ b[$1] += $5 } END { printf "a=%d b=%d", b["a"], b["b"] }')
# the same sum from each host's recording (fio's bytes, less block requests whose completion
# no program saw: drops.block.missed, docs/hooks.md)
want=$(for h in a b; do
	"$IOTRACER" report -n 0 --json - "$IT_TMP/rec-$h" 2>/dev/null |
		jq -rs --arg h "$h" '"\($h)=" + ([.[] | select(.type == "request") | .block[] |
			select(.file != null) | .bytes] | add | tostring)'
done | tr '\n' ' ' | sed 's/ $//')
check queries "$qn queries from docs/fleet.md: ${qbad:-all ran}; bytes per file summed: $fbytes (the recordings: $want; fio: a=$((IOS[a] * 4096)) b=$((IOS[b] * 4096)))" \
	test "$qn" = 3 -a -z "$qbad" -a "$fbytes" = "$want"
it_end
