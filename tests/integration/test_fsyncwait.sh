#!/usr/bin/env bash
# An fsync names the writeback it waited for without issuing it (issue 26, item 4;
# src/records/wbsync.c): the write requests of its file that another task (here `sync`, as
# the flusher would) had in flight when the fsync began, in the fsync's "waited" field.
# A dd writes 64 MiB buffered into a file on ext4 on a loop device (loopY, traced) whose
# backing device is another loop device (loopX) throttled to 32 MiB/s for writes (cgroup
# v1 blkio at the root: loopY's requests stay in flight while loopX's IO waits; SKIP
# without it); `sync -f` starts writing the file out; 0.3 s after loopY has writes in
# flight (/sys/block/loopY/inflight), dd's input ends and dd fsyncs (conv=fsync) while
# sync's requests are in flight.
# Oracles: the kernel's in-flight count at the fsync's start, /sys/block/loopN/stat (every
# write request of the device is in the records), and the block records themselves joined
# by jq: the write requests of the file (ino from stat) of no traced request (kind block:
# sync's), queued before the fsync's enter and completed after it (and before its exit:
# it waits for them).
#   inflight    the kernel had write requests in flight on the device when dd's input ended
#   complete    write requests in the JSON == the /sys/block writes delta (none missing
#               from the join below)
#   waited_n    the fsync's waited.n > 0 and == the requests of that window
#   waited_b    its waited.bytes == their bytes, and waited.ids are theirs
#   drops       drops.total == 0
# shellcheck disable=SC2016,SC2154 # jq programs in single quotes; fds set by writer_feed
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin inflight complete waited_n waited_b drops
it_require_all mkfs.ext4 dd sync mkfifo stat

THROTTLE=/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device
[[ -w $THROTTLE ]] || skip_all "no cgroup v1 blkio throttle ($THROTTLE): no way to keep writes in flight"
low=$(mk_loop 512) || fail_all "cannot create a loop device"
dev=$(losetup -f --show --direct-io=on "$low") || fail_all "cannot stack a loop device on $low"
_it_register loops "$dev"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$dev" >/dev/null 2>&1 || fail_all "mkfs.ext4 $dev failed"
mnt=$(mktemp -d "$IT_TMP/mnt.XXXXXX") && _it_register mounts "$mnt" &&
	mount -t ext4 -o noatime "$dev" "$mnt" || fail_all "cannot mount $dev"
name=$(devname "$dev")
lowno=$(devno_of "$low")
# the throttle off again before the exit trap's umount and detach
trap 'rc=$?; echo "$lowno 0" >"$THROTTLE" 2>/dev/null; (exit $rc); _it_on_exit' EXIT
echo "$lowno $((32 << 20))" >"$THROTTLE" || fail_all "cannot throttle $low ($lowno)"
wait_quiet "$dev" 5

start_tracer -d "$name" || fail_all "$TRACER_WHY"
w0=$(blk_writes "$dev")
writer_start wf "$mnt/f" conv=fsync && fpid=$W_PID || fail_all "cannot start the writer"
writer_feed wf "$fpid" 64 ffd || fail_all "the writer did not write 64 MiB"
ino=$(stat -c %i "$mnt/f")
# without the fifo's write end (an fd of this shell): dd's EOF must not wait for sync's exit
sync -f "$mnt/f" {ffd}>&- >"$IT_TMP/sync.out" 2>&1 &
spid=$!
_it_register pids "$spid"
inflight=0
for ((i = 0; i < 200; i++)); do
	read -r _ inflight <"/sys/block/$name/inflight"
	((inflight > 0)) && break
	sleep 0.005
done
sleep 0.3
read -r _ inflight <"/sys/block/$name/inflight"
exec {ffd}>&- # EOF: dd fsyncs while sync's requests are in flight
bg_wait "$fpid" 60 || note "the writer exited $BG_RC"
bg_wait "$spid" 60 || note "sync exited $BG_RC"
wait_quiet "$dev" 5
w1=$(blk_writes "$dev")
stop_tracer || note "${TRACER_WHY:-}"
tracer_summary || fail_all "no final summary in the JSON output"
J=$TRACER_JSON
check inflight "write requests in flight on $name when the fsync began: $inflight" test "$inflight" -gt 0

nw=$(jblocks "$J" 'true' '.op == "write" and .dev == $d' --arg d "$name")
check complete "$nw write requests in the JSON, /sys/block/$name/stat says $((w1 - w0))" \
	test "$nw" = "$((w1 - w0))"

# the fsync (dd's, of the file), and the window join over the other requests
fs=$(jq -c --argjson p "$fpid" --argjson i "$ino" 'select(.type == "request" and .kind == "syscall"
	and .pid == $p and .syscall == "fsync" and .ino == $i)' "$J" | tail -n 1)
[[ -n $fs ]] || fail_all "no fsync of dd ($fpid) on inode $ino in the JSON"
read -r enter leave fid wn wb wids < <(jq -r '[.ts_ns, .ts_ns + .lat_ns, .id, .waited.n // -1, .waited.bytes // -1,
	(.waited.ids // [] | sort | map(tostring) | join(","))] | @tsv' <<<"$fs")
# the window: ids of the requests holding them; waited.ids holds the 16 newest (by id:
# ids are given in emission order, which for these is completion order)
read -r jn jb jids < <(jq -rn --argjson e "$enter" --argjson x "$leave" --argjson i "$ino" --arg d "$name" "$JQ_BLOCKS"'
	[inputs | select(.type == "request" and .kind == "block") | .id as $id | blocks
	| select(.op == "write" and .dev == $d and .ino == $i and (.origin == "writeback" or .origin == "none")
		and .q_ns < $e and .c_ns >= $e and .c_ns <= $x) | {id: $id, b: .bytes}]
	| [length, (map(.b) | add // 0), (map(.id) | sort | .[-16:] | map(tostring) | join(","))] | @tsv' "$J")
note "fsync $fid enter $enter: waited n=$wn bytes=$wb ids=[$wids]; the window: $jn requests, $jb bytes"
note "writes of inode $ino by kind/origin, queue and completion (ms from the fsync's enter): $(jq -rn \
	--argjson e "$enter" --argjson i "$ino" "$JQ_BLOCKS"'[inputs | select(.type == "request") | .kind as $k
	| blocks | select(.op == "write" and .ino == $i) | {k: "\($k)/\(.origin)", q: .q_ns, c: .c_ns}]
	| group_by(.k) | map("\(.[0].k)=\(length) [\((map(.q) | min) - $e | ./1e6 | floor), \((map(.c) | max) - $e
	| ./1e6 | floor)]") | join(" ")' "$J")"
check waited_n "the fsync's waited.n $wn, requests of its file in flight at its enter $jn" \
	eval '((jn > 0 && wn == jn))'
check waited_b "waited.bytes $wb vs $jb; ids [$wids] vs [$jids]" \
	eval '((wb == jb)) && [[ $wids == "$jids" ]]'
d=$(real_drops "$SUMMARY")
check drops "records lost (ringbuf+inflight+hist) $d" test "$d" = 0

it_end
