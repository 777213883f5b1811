#!/usr/bin/env bash
# Buffered IO on ext4 over a loop device, traced with -d loopN.
# Oracles: the file sizes, `stat -c %i`, the pids of the dd processes,
# /sys/block/loopN/stat deltas around each phase, and a witness of the device's
# completions (lib.sh witness_*: a tracefs instance recording block:block_rq_complete,
# with markers at the phase boundaries) for those no BPF program sees.
#   miss_records  after drop_caches, the reader's read syscalls report fs.cache_miss_pages > 0
#   miss_pages    sum of the reader's cache_miss_pages = file pages (64 MiB / 4 KiB) ±5 %
#   read_attrib   block read requests attributed to the reader pid (block[] of its syscalls,
#                 or kind=block with its pid) ≤ the reads-completed delta of its phase, and
#                 the shortfall (reads completed, no record) ≤ the witnessed reads of that
#                 phase completed in softirq on top of a thread of pid 1 (docs/hooks.md,
#                 "Completions no program sees") and ≤ drops.block.missed: a shortfall
#                 the witness does not explain fails; one with no witness (tracefs not
#                 mounted) skips, and none passes without it
#   cache_hit     a second read of the cached file: no miss pages, no block children
#   fsync_req     the writer's fsync is a request with op sync
#   fsync_blocks  that fsync request has block write children (the writeback it waited for)
#   write_ino     block write requests carrying the written file's inode hold its 16 MiB
#   block_hist    hists block/loopN read+write+sync q2c counts + drops.block.missed =
#                 /sys/block reads+writes+flushes deltas over the traced window, exactly,
#                 no op above its delta; and the missed ≤ the witnessed completions in
#                 softirq on top of a thread of pid 1, the witness itself having seen
#                 exactly the stat's completions (a miss it does not explain fails; with
#                 missed > 0 and no witness: skip)
#   drops         drops.total == 0
#   exit          SIGTERM -> exit 0 with a final summary
# shellcheck disable=SC2016,SC2119,SC2317 # jq programs in single quotes; optional args; checks run via check
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin start miss_records miss_pages read_attrib cache_hit fsync_req fsync_blocks write_ino \
	block_hist drops exit
it_require_all mkfs.ext4 dd stat

READ_MB=64
WRITE_MB=16

# explained N SOFT MISSED: N (≥ 0; SOFT -1: no witness) requests completed without a record of ours are all
# completions the witness saw in softirq on a thread of pid 1 (SOFT) that iotracer
# counted as missed (MISSED): N ≤ SOFT and N ≤ MISSED.
explained() { (($1 == 0 || ($1 > 0 && $1 <= $2 && $1 <= $3))); }
# blocks_exact: hists + missed = the stat's reads + writes + flushes, no op above its
# stat, and the missed explained by a witness that saw exactly the stat's completions.
blocks_exact() {
	((hr + hw + hs + m == dr + dw + df && hr <= dr && hw <= dw && hs <= df)) &&
		{ ((m == 0)) || { explained "$m" "$wit_soft" "$m" && ((wit_all == dr + dw + df)); }; }
}

read -r dev mnt < <(mk_loop_fs 256) || true
if [[ -z ${mnt:-} ]] || ! mountpoint -q "$mnt"; then
	fail_all "cannot create/mount ext4 on a loop device"
fi
name=$(devname "$dev")
note "device $dev mounted on $mnt"

dd if=/dev/zero of="$mnt/data" bs=1M count="$READ_MB" conv=fsync status=none ||
	fail_all "cannot write $mnt/data"
drop_caches
wait_quiet "$dev"

start_tracer -d "$name" || fail_all "$TRACER_WHY"
pass start
# the device is quiet: the witness, started now and stopped after the tracer, sees
# every completion of the tracer's window
witness_start "$dev" 1024 || note "no witness: $WITNESS_WHY"
read -r r_start w_start f_start < <(blk_rwf "$dev")

# phase 1: cold buffered sequential read
r0=$(blk_reads "$dev")
witness_mark reader
gated_start reader "$IT_TMP/go1" dd if="$mnt/data" of=/dev/null bs=128k status=none
rpid=$BG_PID
touch "$IT_TMP/go1"
bg_wait "$rpid" 60 || note "reader dd exited $BG_RC"
r1=$(blk_reads "$dev")
witness_mark reader_end
rdelta=$((r1 - r0))

# phase 2: read again, all from the page cache
gated_start reader2 "$IT_TMP/go2" dd if="$mnt/data" of=/dev/null bs=128k status=none
r2pid=$BG_PID
touch "$IT_TMP/go2"
bg_wait "$r2pid" 60 || note "second reader dd exited $BG_RC"
r2=$(blk_reads "$dev")
r2delta=$((r2 - r1))

# phase 3: buffered write + fsync (dd conv=fsync: one fsync at the end)
gated_start writer "$IT_TMP/go3" dd if=/dev/zero of="$mnt/wfile" bs=64k \
	count=$((WRITE_MB * 16)) conv=fsync status=none
wpid=$BG_PID
touch "$IT_TMP/go3"
bg_wait "$wpid" 60 || note "writer dd exited $BG_RC"
ino=$(stat -c %i "$mnt/wfile")

wait_quiet "$dev" 5 # nothing in flight at the end of the window
read -r r_end w_end f_end < <(blk_rwf "$dev")
if stop_tracer && tracer_summary; then
	pass exit
else
	fail exit "${TRACER_WHY:-no final summary}"
	tracer_summary || fail_all "no final summary in the JSON output"
fi
J=$TRACER_JSON
m=$(jq -r '.drops.block.missed // 0' "$SUMMARY")
if [[ -n ${WITNESS:-} ]] && witness_stop; then
	read -r wit_all wit_soft _ < <(witness_count)
	read -r wit_r wit_rsoft _ < <(witness_count reader reader_end R)
	note "witness: $wit_all completions ($wit_soft in softirq on a thread of pid 1), reader phase $wit_r reads ($wit_rsoft so); missed $m"
else
	wit_all=-1 wit_soft=-1 wit_rsoft=-1 # none: explains nothing
	note "no witness: $WITNESS_WHY"
fi
note "reader $rpid (reads +$rdelta), reader2 $r2pid (reads +$r2delta), writer $wpid (ino $ino)"

# --- cold read
nmiss=$(jcount "$J" '.kind == "syscall" and .pid == $p and .op == "read" and (.fs.cache_miss_pages // 0) > 0' \
	--argjson p "$rpid")
nrec=$(jcount "$J" '.kind == "syscall" and .pid == $p and .op == "read"' --argjson p "$rpid")
note "reader: $nrec read records, $nmiss with cache_miss_pages > 0"
check miss_records "no read syscall of the reader reports fs.cache_miss_pages > 0 ($nrec records)" \
	test "$nmiss" -gt 0

pages=$(jsum "$J" 'select(.kind == "syscall" and .pid == $p) | .fs.cache_miss_pages' --argjson p "$rpid")
want=$((READ_MB * 256))
note "reader: sum of cache_miss_pages $pages, file pages $want"
check miss_pages "sum of cache_miss_pages $pages vs $want file pages ($(pct_of "$pages" "$want") %)" \
	within_pct "$pages" "$want" 5

attr=$(jblocks "$J" '.pid == $p' '.dev == $d and .op == "read"' --argjson p "$rpid" --arg d "$name")
note "block reads on $name attributed to the reader: $attr, reads completed in its phase: $rdelta"
short=$((rdelta - attr))
why="$attr block reads attributed to the reader pid $rpid, /sys/block delta $rdelta, short $short; witnessed in softirq on pid 1: $wit_rsoft; missed $m"
if ((rdelta == 0)); then
	fail read_attrib "the cold read caused no block reads (drop_caches failed?)"
elif ((short > 0 && wit_rsoft < 0)); then
	skip read_attrib "$why: a shortfall and no witness to explain it ($WITNESS_WHY)"
else
	check read_attrib "$why" explained "$short" "$wit_rsoft" "$m"
fi

# --- warm read
n2=$(jcount "$J" '.kind == "syscall" and .pid == $p and .op == "read"' --argjson p "$r2pid")
m2=$(jsum "$J" 'select(.kind == "syscall" and .pid == $p) | .fs.cache_miss_pages' --argjson p "$r2pid")
b2=$(jblocks "$J" '.pid == $p' 'true' --argjson p "$r2pid")
note "reader2: $n2 read records, cache_miss_pages sum $m2, block requests $b2"
if ((r2delta != 0)); then
	skip cache_hit "the second read still caused $r2delta block reads (page cache evicted?)"
else
	check cache_hit "cached read: $n2 records, cache_miss_pages sum $m2, $b2 block requests (want >0, 0, 0)" \
		test "$n2" -gt 0 -a "$m2" = 0 -a "$b2" = 0
fi

# --- fsync
nf=$(jcount "$J" '.kind == "syscall" and .pid == $p and .op == "sync" and .syscall == "fsync"' --argjson p "$wpid")
check fsync_req "writer $wpid: $nf requests with syscall fsync and op sync (want 1)" test "$nf" -eq 1
fb=$(jblocks "$J" '.kind == "syscall" and .pid == $p and .syscall == "fsync"' '.op == "write"' --argjson p "$wpid")
note "block write children of the fsync: $fb"
check fsync_blocks "the fsync request has $fb block write children" test "$fb" -gt 0

wb=$(jq -n --argjson i "$ino" --arg d "$name" "$JQ_BLOCKS"'
	reduce (inputs | select(.type == "request") | . as $r | blocks
		| select(.op == "write" and .dev == $d and ((.ino // $r.ino) == $i))) as $b
		(0; . + ($b.bytes // 0))' "$J")
wantb=$((WRITE_MB * 1048576))
note "bytes of block writes with ino $ino: $wb (file size $wantb)"
check write_ino "block writes attributed to inode $ino total $wb bytes, the file has $wantb" \
	awk -v a="$wb" -v w="$wantb" 'BEGIN { exit !(a >= 0.99 * w && a <= 1.01 * w) }'

# --- in-kernel histograms against /sys/block/stat over the traced window
hr=$(hist_count "$SUMMARY" block "$name" read q2c)
hw=$(hist_count "$SUMMARY" block "$name" write q2c)
hs=$(hist_count "$SUMMARY" block "$name" sync q2c)
hr=${hr:-0} hw=${hw:-0} hs=${hs:-0}
dr=$((r_end - r_start)) dw=$((w_end - w_start)) df=$((f_end - f_start))
why="hists read/write/sync $hr/$hw/$hs + missed $m vs /sys/block +$dr/+$dw/+$df; witness saw $wit_all, $wit_soft in softirq on pid 1"
note "$why"
if ((m > 0 && wit_soft < 0)); then
	skip block_hist "$why: $m missed and no witness to explain them ($WITNESS_WHY)"
else
	check block_hist "$why" blocks_exact
fi

d=$(real_drops "$SUMMARY")
check drops "records lost (ringbuf+inflight+hist) $d" test "$d" = 0

it_end
