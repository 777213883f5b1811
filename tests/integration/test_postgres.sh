#!/usr/bin/env bash
# PostgreSQL's buffered data-file writes followed to the disk (issue 26, the third oracle):
# a cluster (Debian's postgresql) runs as the postgres user with its data directory on ext4
# on a loop device; pgbench -i, then the trace: a ~10 s pgbench run and a CHECKPOINT, so
# that the checkpointer, the bgwriter and the backends' dirtied pages are written out.
# The cluster's own sync_file_range writeback is off (*_flush_after = 0), and for the run the
# flusher writes pages dirty for 1 s (vm.dirty_expire_centisecs = 100, restored by the exit
# trap): the bgwriter's and backends' pages go to the disk in a kworker, as they do under a
# long run with the defaults.
# Oracles: the data directory's inodes (find -printf %i, not iotracer), and the cluster's
# processes: the postmaster and its children from /proc (sampled every 0.2 s through the
# run, with autovacuum off so that no short-lived worker escapes the sampling).
#   named_pg    every block write of a data-directory file names a cluster process as its
#               owner: dirty.pid (and dirty.other_pid) when its pages were dirtied in the
#               trace, else its submitter (a backend's own fdatasync)
#   no_kworker  no block write of a data-directory file is owned by a kworker (the flusher
#               or a writeback worker writing the checkpointer's pages)
#   dirtied     the writes submitted by another task than a cluster process (the flusher,
#               jbd2, sync) exist and all carry a dirtier: the case this oracle is about
#   unknown     the bytes of data-file writes whose dirtier was not noted (dirtied before
#               the trace, or the note evicted: reason not_noted or redirtied) are under 1 %
#               (a third dirtier in one request, reason many, is a postgres process too:
#               the record names two; counted in the notes)
#   drops       drops.total == 0
#   wal_files   (issue 38) `report --by file` of the run's recording names WAL segment files
#               ($PGDATA/pg_wal/<24 hex digits>)
#   relations   ... and the files of pgbench's four tables, as pg_relation_filepath() gives
#               them (below $PGDATA)
# shellcheck disable=SC2015,SC2016,SC2154 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin named_pg no_kworker dirtied unknown drops wal_files relations
it_require_all mkfs.ext4 runuser find sync

have_tp writeback/writeback_dirty_folio || have_tp writeback/writeback_dirty_page ||
	skip_all "no writeback_dirty_folio/page tracepoint: no dirtier to note"
PGBIN=$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)
[[ -n $PGBIN && -x $PGBIN/initdb && -x $PGBIN/pg_ctl && -x $PGBIN/pgbench && -x $PGBIN/psql ]] ||
	skip_all "PostgreSQL not installed (/usr/lib/postgresql/*/bin: initdb, pg_ctl, pgbench, psql; make deps-test)"
id postgres >/dev/null 2>&1 || skip_all "no postgres user (Debian's postgresql-common makes it)"

# as_pg CMD...: a command of the cluster's, as the postgres user
as_pg() { runuser -u postgres -- "$@"; }

PGDATA="" SOCK="" PGPORT=""
# pg_stop: the cluster down before the exit trap's umount (its files are on the mount)
pg_stop() {
	[[ -n $PGDATA && -f $PGDATA/postmaster.pid ]] || return 0
	as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -m immediate -w -t 20 stop >/dev/null 2>&1 ||
		note "cleanup: pg_ctl stop failed"
}
EXPIRE=/proc/sys/vm/dirty_expire_centisecs WBACK=/proc/sys/vm/dirty_writeback_centisecs
EXPIRE0=$(<"$EXPIRE") WBACK0=$(<"$WBACK")
restore_vm() { echo "$EXPIRE0" >"$EXPIRE"; echo "$WBACK0" >"$WBACK"; }
trap 'rc=$?; pg_stop; restore_vm; (exit $rc); _it_on_exit' EXIT

read -r dev mnt < <(mk_loop_fs 512) || true
if [[ -z ${mnt:-} ]] || ! mountpoint -q "$mnt"; then
	fail_all "cannot create/mount ext4 on a loop device"
fi
name=$(devname "$dev")
chmod 0711 "$IT_TMP" "$mnt" # the postgres user reaches its directories
# the socket and the log beside, off the traced disk, in a directory of the postgres user's
PGDATA=$mnt/pgdata SOCK=$IT_TMP/run
mkdir -p "$PGDATA" "$SOCK" && chown postgres: "$PGDATA" "$SOCK" && chmod 0700 "$PGDATA" ||
	fail_all "cannot make the data directory"
PGPORT=$(free_port) || fail_all "no free port"

if ! as_pg "$PGBIN/initdb" -D "$PGDATA" -A trust -U postgres --no-sync >"$IT_TMP/initdb.out" 2>&1; then
	skip_all "initdb failed: $(tail -c 200 "$IT_TMP/initdb.out" | tr '\n' ' ')"
fi
# no TCP (a unix socket only), no autovacuum (its workers come and go between two
# samples of the cluster's processes), a small shared_buffers (the checkpoint writes more)
PGOPTS="-k $SOCK -p $PGPORT -c listen_addresses= -c autovacuum=off -c shared_buffers=16MB"
PGOPTS+=" -c checkpoint_flush_after=0 -c bgwriter_flush_after=0 -c backend_flush_after=0"
if ! as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -w -t 30 -l "$SOCK/pg.log" -o "$PGOPTS" start \
	>"$IT_TMP/pg_ctl.out" 2>&1; then
	PGDATA="" # nothing to stop
	skip_all "the cluster did not start: $(tail -c 200 "$SOCK/pg.log" 2>/dev/null | tr '\n' ' ')"
fi
PM=$(head -n 1 "$PGDATA/postmaster.pid")
note "postmaster $PM on $SOCK port $PGPORT, data on $dev ($mnt)"
psql_c() { as_pg "$PGBIN/psql" -h "$SOCK" -p "$PGPORT" -XAtq -d postgres -c "$1"; }
pgbench() { as_pg "$PGBIN/pgbench" -h "$SOCK" -p "$PGPORT" "$@" postgres; }

pgbench -i -q -s 8 >"$IT_TMP/pgbench-i.out" 2>&1 || fail_all "pgbench -i failed: $(tail -c 200 "$IT_TMP/pgbench-i.out")"
# what -i dirtied is on the disk before the trace: no page of the run is older than it
psql_c CHECKPOINT || fail_all "CHECKPOINT failed"
sync -f "$PGDATA"

# cluster_pids: the postmaster and its children now
cluster_pids() {
	echo "$PM"
	tr ' ' '\n' <"/proc/$PM/task/$PM/children" 2>/dev/null | grep .
}

start_tracer -d "$name" --record "$IT_TMP/rec" || fail_all "$TRACER_WHY"
echo 100 >"$EXPIRE" && echo 50 >"$WBACK" || fail_all "cannot set vm.dirty_expire_centisecs"
cluster_pids >"$IT_TMP/pids"
bg_start pgbench pgbench -c 4 -j 2 -T 10 -n
BENCH=$BG_PID
while proc_alive "$BENCH"; do
	cluster_pids >>"$IT_TMP/pids"
	sleep 0.2
done
bg_wait "$BENCH" 5 || fail_all "pgbench failed (status $BG_RC): $(tail -c 200 "$IT_TMP/pgbench.out")"
note "pgbench: $(grep -E '^(number of transactions actually processed|tps)' "$IT_TMP/pgbench.out" | tr '\n' ' ')"
cluster_pids >>"$IT_TMP/pids"
sleep 2 # the flusher's turn at what the run dirtied last
psql_c CHECKPOINT || fail_all "CHECKPOINT failed"
cluster_pids >>"$IT_TMP/pids"
sync -f "$PGDATA"
wait_quiet "$dev" 5
find "$PGDATA" -xdev -printf '%i\n' | sort -un >"$IT_TMP/inodes"
for t in pgbench_accounts pgbench_branches pgbench_tellers pgbench_history; do
	psql_c "SELECT pg_relation_filepath('$t')"
done >"$IT_TMP/relations" || fail_all "pg_relation_filepath failed"
stop_tracer || note "${TRACER_WHY:-}"
tracer_summary || fail_all "no final summary in the JSON output"
J=$TRACER_JSON
sort -un "$IT_TMP/pids" -o "$IT_TMP/pids"
note "$(wc -l <"$IT_TMP/pids") cluster pids, $(wc -l <"$IT_TMP/inodes") data-directory inodes"

# the block writes of data-directory files: submitter, its syscall, owner, dirtier
pids=$(jq -Rn '[inputs | tonumber]' "$IT_TMP/pids")
inos=$(jq -Rn '[inputs | {key: ., value: true}] | from_entries' "$IT_TMP/inodes")
jq -c --arg d "$name" --argjson pids "$pids" --argjson inos "$inos" "$JQ_BLOCKS"'
	select(.type == "request") | . as $r | blocks
	| select(.op == "write" and .dev == $d and $inos[(.ino // 0) | tostring])
	| (.dirty.pid // null) as $dp
	| {sub: .pid, bytes, dp: $dp, op: (.dirty.other_pid // null), kind: $r.kind,
	   unk: (.dirty.unknown_bytes // 0), why: (.dirty.unknown // null),
	   lost: (if ((.dirty.unknown // []) - ["many"]) == [] then 0 else (.dirty.unknown_bytes // 0) end),
	   owner: ($dp // .pid), owncomm: (.dirty.comm // $r.comm)}
	| .pg = ((.owner | IN($pids[])) and (.op == null or (.op | IN($pids[]))))' "$J" >"$IT_TMP/writes"
read -r n bad kw flush flushnamed bytes unk lost < <(jq -rs --argjson pids "$pids" '[length,
	(map(select(.pg | not)) | length), (map(select(.owncomm | startswith("kworker"))) | length),
	(map(select(.sub | IN($pids[]) | not)) | length),
	(map(select((.sub | IN($pids[]) | not) and .dp != null)) | length),
	(map(.bytes) | add // 0), (map(.unk) | add // 0), (map(.lost) | add // 0)] | @tsv' "$IT_TMP/writes")
note "$n block writes of data-directory files ($bytes bytes): $flush submitted outside the cluster ($flushnamed with a dirtier), $unk bytes of unknown dirtier, $lost of them not noted"
note "owners: $(jq -rs 'group_by(.owncomm) | map("\(.[0].owncomm)=\(length)") | join(" ")' "$IT_TMP/writes")"
note "by kind and whether the submitter is the cluster's: $(jq -rs --argjson pids "$pids" 'group_by([.kind,
	(.sub | IN($pids[]))]) | map("\(.[0].kind)/\(if .[0].sub | IN($pids[]) then "cluster" else "other" end)=\(length)")
	| join(" ")' "$IT_TMP/writes")"
note "unknown reasons: $(jq -rs 'map(select(.unk > 0)) | group_by(.why) | map("\(.[0].why | tojson)=\(length)") | join(" ")' "$IT_TMP/writes")"
((bad > 0)) && note "not a cluster process's: $(jq -rcs 'map(select(.pg | not)) | .[:5]' "$IT_TMP/writes")"
[[ ${n:-0} -gt 0 ]] || fail_all "no block write of a data-directory file was recorded"

check named_pg "$bad of $n data-file block writes not owned by a cluster process" test "$bad" = 0
check no_kworker "$kw of $n data-file block writes owned by a kworker" test "$kw" = 0
check dirtied "$flush data-file block writes submitted outside the cluster, $flushnamed of them with a dirtier" \
	eval '((flush > 0 && flushnamed == flush))'
check unknown "$lost of $bytes bytes with a dirtier not noted (want < 1 %)" \
	eval '((lost * 100 < bytes))'
d=$(real_drops "$SUMMARY")
check drops "records lost (ringbuf+inflight+hist) $d" test "$d" = 0

# the files of the run by name (issue 38): its recording, every file of the data directory
"$IOTRACER" report --by file -n 1000 "$IT_TMP/rec" >"$IT_TMP/byfile.txt" 2>"$IT_TMP/byfile.err" ||
	note "report --by file failed: $(head -c 200 "$IT_TMP/byfile.err")"
sed -n '/^top .* files by bytes/,/^$/p' "$IT_TMP/byfile.txt" | awk 'NR > 2 { print $NF }' |
	sort -u >"$IT_TMP/byfile.names"
nwal=$(grep -cE "^$PGDATA/pg_wal/[0-9A-F]{24}\$" "$IT_TMP/byfile.names")
note "report --by file: $(wc -l <"$IT_TMP/byfile.names") files, $nwal WAL segments; top 3:"
sed -n '/^top .* files by bytes/,/^$/p' "$IT_TMP/byfile.txt" | sed -n '2,5p' | while read -r l; do note "  $l"; done
check wal_files "$nwal WAL segment files named in report --by file" test "$nwal" -gt 0
missing=""
while read -r rel; do
	grep -qxF "$PGDATA/$rel" "$IT_TMP/byfile.names" || missing+=" $rel"
done <"$IT_TMP/relations"
check relations "pgbench's tables ($(tr '\n' ' ' <"$IT_TMP/relations")) named; missing:${missing:- none}" \
	test -z "$missing"

it_end
