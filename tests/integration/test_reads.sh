#!/usr/bin/env bash
# Reads keep their reader (issue 26, item 6): readahead that completes after the read
# syscall returned, and the reads of memory-mapped page faults, are the reader's, not a
# kworker's or nobody's. ext4 on a loop device, caches dropped; two python3 readers print
# their own /proc/self/io after reading.
# Oracles: each reader's pid and its /proc/PID/io read_bytes (the bytes the kernel counted
# as read from storage for the task, at submission), the files' inodes (stat), and a
# tracefs witness of the device's completions.
#   ra_bytes    a reader read(2)s a 64 MiB file in 16 KiB calls: the block reads naming it
#               (block[].pid), plus the bytes of the reads a witness saw complete where no
#               BPF program runs (lib.sh witness_*, docs/hooks.md "Completions no program
#               sees"), hold its read_bytes within 2 %; short with no witness: SKIP
#   ra_late     some of its block reads completed after their syscall had returned (kind
#               block with a parent: the readahead the call started and did not wait
#               for), each names the reader and its parent syscall is the reader's
#   ra_only     every block read of that file's inode names the reader
#   mmap_bytes  a reader mmaps a 32 MiB file and touches a byte of each page (page faults,
#               no read syscall): the block reads naming it (+ the witnessed unseen) hold
#               its read_bytes within 2 %
#   mmap_only   every block read of that file's inode names the mmap reader
#   drops       drops.total == 0
# shellcheck disable=SC2016 # jq and python programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin ra_bytes ra_late ra_only mmap_bytes mmap_only drops
it_require_all mkfs.ext4 dd python3 stat

read -r dev mnt < <(mk_loop_fs 256) || true
if [[ -z ${mnt:-} ]] || ! mountpoint -q "$mnt"; then
	fail_all "cannot create/mount ext4 on a loop device"
fi
name=$(devname "$dev")
dd if=/dev/urandom of="$mnt/f" bs=1M count=64 status=none || fail_all "cannot write $mnt/f"
dd if=/dev/urandom of="$mnt/m" bs=1M count=32 status=none || fail_all "cannot write $mnt/m"
ino_f=$(stat -c %i "$mnt/f") ino_m=$(stat -c %i "$mnt/m")
drop_caches
# python's own files back in the cache: its read_bytes are then the test files' only
python3 -c 'import mmap, os, sys' || fail_all "python3 does not run"
wait_quiet "$dev" 5

# python3 readers: print "pid read_bytes" of themselves when done
READ_PY='import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
while os.read(fd, 16384):
    pass
io = dict(l.split(": ") for l in open("/proc/self/io").read().splitlines())
print(os.getpid(), io["read_bytes"])'
MMAP_PY='import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
s = 0
for off in range(0, len(m), 4096):
    s += m[off]
io = dict(l.split(": ") for l in open("/proc/self/io").read().splitlines())
print(os.getpid(), io["read_bytes"])'

start_tracer -d "$name" || fail_all "$TRACER_WHY"
witness_start "$dev" 1024 || note "no witness: $WITNESS_WHY"
read -r rpid rbytes < <(python3 -c "$READ_PY" "$mnt/f") || fail_all "the read(2) reader failed"
wait_quiet "$dev" 5
witness_mark mmap
read -r mpid mbytes < <(python3 -c "$MMAP_PY" "$mnt/m") || fail_all "the mmap reader failed"
wait_quiet "$dev" 5
stop_tracer || note "${TRACER_WHY:-}"
tracer_summary || fail_all "no final summary in the JSON output"
J=$TRACER_JSON
note "reader $rpid read_bytes $rbytes; mmap reader $mpid read_bytes $mbytes"
# the bytes of the reads no program saw complete, per reader's phase (-1: no witness)
wr=-1 wm=-1
if [[ -n ${WITNESS:-} ]] && witness_stop; then
	read -r _ nr wr < <(witness_count "" mmap R)
	read -r _ nm wm < <(witness_count mmap "" R)
	note "witness: reads in softirq on a thread of pid 1 (no program sees them): reader $nr" \
		"($wr bytes), mmap reader $nm ($wm bytes); missed $(jq -r '.drops.block.missed // 0' "$SUMMARY")"
else
	note "no witness: $WITNESS_WHY"
fi

# bytes_check NAME WHAT GOT WANT WITNESSED: GOT + WITNESSED (the reads no program saw
# complete) within 2 % of WANT; a shortfall with no witness (-1) is a SKIP
bytes_check() {
	local why="block reads naming $2: $3 bytes + $5 witnessed unseen, its read_bytes $4"
	if ((${5} < 0)) && ! within_pct "$3" "$4" 2; then
		skip "$1" "$why: short and no witness to explain it ($WITNESS_WHY)"
	else
		check "$1" "$why" within_pct $(($3 + (${5} < 0 ? 0 : ${5}))) "$4" 2
	fi
}

# block reads: bytes naming PID (block[].pid); reads of inode INO not naming PID
named() { jq -n --argjson p "$1" "$JQ_BLOCKS"'reduce (inputs | select(.type == "request") | blocks
	| select(.op == "read" and .pid == $p)) as $b (0; . + $b.bytes)' "$J"; }
others() { jq -n --argjson p "$1" --argjson i "$2" "$JQ_BLOCKS"'reduce (inputs | select(.type == "request")
	| blocks | select(.op == "read" and .ino == $i and .pid != $p)) as $b (0; . + 1)' "$J"; }

got=$(named "$rpid")
note "block reads naming reader $rpid: $got bytes"
# what a short count leaves behind (an intermittent 2.5 MiB short in CI, not found yet):
# the summary's losses and the block reads by (pid, ino, kind) that do not name the reader
if ! within_pct "$got" "$rbytes" 2; then
	note "summary: $(jq -c '{lost, output_lost, unjoined, block_apart, drops: .drops.total, records}' "$SUMMARY")"
	note "block reads not naming the reader: $(jq -nc --argjson p "$rpid" "$JQ_BLOCKS"'[inputs
		| select(.type == "request") | . as $r | blocks | select(.op == "read" and .pid != $p)
		| {pid, ino, kind: $r.kind, bytes}] | group_by([.pid, .ino, .kind])
		| map({pid: .[0].pid, ino: .[0].ino, kind: .[0].kind, n: length, bytes: (map(.bytes) | add)})' "$J")"
fi
bytes_check ra_bytes "reader $rpid" "$got" "$rbytes" "$wr"
read -r nlate nlate_ok < <(jq -rn --argjson p "$rpid" '[inputs | select(.type == "request"
	and .kind == "block" and .parent != null and .op == "read" and .ino == $i)
	| (.pid == $p and .block[0].pid == $p and .parent.tid == $p)] | [length, map(select(.)) | length] | @tsv' \
	--argjson i "$ino_f" "$J")
note "reader: $nlate block reads completed after their syscall returned, $nlate_ok naming it and its syscall"
if ((nlate == 0)); then
	skip ra_late "no readahead of the reader completed after its syscall returned in this run"
else
	check ra_late "$nlate_ok of $nlate late readahead requests name reader $rpid and its syscall" \
		test "$nlate_ok" = "$nlate"
fi
n=$(others "$rpid" "$ino_f")
check ra_only "$n block reads of inode $ino_f name another task than reader $rpid" test "$n" = 0

got=$(named "$mpid")
note "block reads naming mmap reader $mpid: $got bytes"
bytes_check mmap_bytes "mmap reader $mpid" "$got" "$mbytes" "$wm"
n=$(others "$mpid" "$ino_m")
check mmap_only "$n block reads of inode $ino_m name another task than mmap reader $mpid" test "$n" = 0

d=$(real_drops "$SUMMARY")
check drops "records lost (ringbuf+inflight+hist) $d" test "$d" = 0

it_end
