#!/usr/bin/env bash
# An fsync of more block requests than a record lists (issue 37, item 1): every block
# request is counted in the stage table, its bytes and the recording; the fsync's record
# lists 16 and says how many it left to records of their own (block_apart, docs/json.md).
# ext4 on a loop device whose max_sectors_kb is 4, so that every 4 KiB page is one write
# request; dd writes N pages buffered and fsyncs (conv=fsync) for N = 16, 17, 200 and 2000,
# one file each, under one daemon (-j and --record).
# Oracles: /sys/block/loopN/stat (writes completed, sectors written) over the run, and N
# (dd's page count: the fsync's write requests).
#   fsync_N    the fsync's record: its write requests (listed and apart) == N, nr_bios ==
#              block[] + block_apart, block[] <= 16, and exactly block_apart records of kind
#              block name it as their parent (an fsync may also read a metadata block: a
#              bio of its own, in nr_bios; seen 1 run in 5 on the first file)
#   stages     the summary's block write q2c count and bytes == the stat deltas
#   json       block write requests in the JSON (listed or apart) == the writes delta
#   apart      summary block_apart == the sum of N + reads - 16 over the fsyncs; drops 0
#   report     `iotracer report` of the recording: the summary's block write count and
#              bytes
# Where a completion ran where no BPF program does (docs/hooks.md, "Completions no program
# sees"; counted in drops.block.missed), each count may be short by those and the bytes by
# 4 KiB each, never more.
# shellcheck disable=SC2016,SC2119,SC2317 # jq programs in single quotes; optional args; short via eval
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

SIZES=(16 17 200 2000)
checks=()
for n in "${SIZES[@]}"; do checks+=("fsync_$n"); done
it_begin "${checks[@]}" stages json apart report
it_require_all mkfs.ext4 dd

# 4 KiB blocks (mkfs picks 1 KiB under 512 MiB): a page is one block, never split
dev=$(mk_loop 128) || fail_all "cannot create a loop device"
mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 "$dev" >/dev/null 2>&1 ||
	fail_all "mkfs.ext4 $dev failed"
mnt=$(mktemp -d "$IT_TMP/mnt.XXXXXX") || fail_all "mktemp failed"
_it_register mounts "$mnt"
mount -t ext4 -o noatime "$dev" "$mnt" || fail_all "cannot mount $dev"
name=$(devname "$dev")
# the limit outlives the binding (a loop device stays, and the next test or helper that
# binds it would get 4 KiB requests): put it back before the exit trap detaches it
MSK=/sys/block/$name/queue/max_sectors_kb
msk0=$(cat "$MSK")
trap 'rc=$?; echo "$msk0" >"$MSK" 2>/dev/null; (exit $rc); _it_on_exit' EXIT
echo 4 >"$MSK" || skip_all "cannot set $MSK to 4"
wait_quiet "$dev" 5 >/dev/null

rec=$IT_TMP/rec
start_tracer -d "$name" --record "$rec" || fail_all "$TRACER_WHY"
read -r w0 s0 < <(awk '{ print $5, $7 }' "/sys/block/$name/stat")
for n in "${SIZES[@]}"; do
	dd if=/dev/zero of="$mnt/f$n" bs=4k count="$n" conv=fsync status=none ||
		fail_all "dd of $n pages failed"
done
wait_quiet "$dev" 5 >/dev/null # the journal's commits are counted too
read -r w1 s1 < <(awk '{ print $5, $7 }' "/sys/block/$name/stat")
stop_tracer || note "${TRACER_WHY:-}"
tracer_summary || fail_all "no final summary in the JSON output"
J=$TRACER_JSON
dw=$((w1 - w0)) db=$(((s1 - s0) * 512))
# completions no program saw (docs/hooks.md): counted, and each request is 4 KiB at most
m=$(jq -r '.drops.block.missed // 0' "$SUMMARY")
note "/sys/block/$name/stat: $dw writes, $db bytes; completions missed (counted): $m"
# short COUNT WANT SLACK: COUNT <= WANT and short of it by SLACK at most
short() { (($1 <= $2 && $2 - $1 <= $3)); }

apart_sum=0
for n in "${SIZES[@]}"; do
	ino=$(stat -c %i "$mnt/f$n")
	read -r id bios listed apart lw < <(jq -r --argjson i "$ino" 'select(.type == "request"
		and .kind == "syscall" and .syscall == "fsync" and .ino == $i)
		| [.id, .nr_bios, (.block | length), (.block_apart // 0),
		   ([.block[] | select(.op == "write")] | length)] | @tsv' "$J" | tail -n 1)
	if [[ -z ${id:-} ]]; then
		fail "fsync_$n" "no fsync record of inode $ino"
		continue
	fi
	kids=$(jcount "$J" '.kind == "block" and .parent.id == $p' --argjson p "$id")
	kw=$(jcount "$J" '.kind == "block" and .parent.id == $p and .op == "write"' --argjson p "$id")
	# the fsync may read a block of metadata too (the inode table's, when not cached):
	# a bio of its own, so nr_bios is N writes plus those reads
	reads=$((listed + kids - lw - kw))
	apart_sum=$((apart_sum + (n + reads > 16 ? n + reads - 16 : 0)))
	check "fsync_$n" "fsync $id: nr_bios $bios, $listed listed ($lw writes) + block_apart $apart, $kids records with it as parent ($kw writes) (N $n, missed $m)" \
		eval '((bios == listed + apart && listed <= 16 && kids == apart)) && short $((lw + kw)) "$n" "$m"'
done

sw=$(stage_val "$SUMMARY" block "$name" write q2c count)
sb=$(stage_val "$SUMMARY" block "$name" write q2c bytes)
check stages "summary: block write q2c count ${sw:-none}, bytes ${sb:-none} (missed $m)" \
	eval 'short "${sw:-0}" "$dw" "$m" && short "${sb:-0}" "$db" $((m * 4096))'
jw=$(jblocks "$J" 'true' '.op == "write" and .dev == $d' --arg d "$name")
check json "$jw block write requests in the JSON (missed $m)" short "$jw" "$dw" "$m"
sa=$(jq -r '.block_apart // "none"' "$SUMMARY")
d=$(real_drops "$SUMMARY")
check apart "summary block_apart $sa (the fsyncs: $apart_sum, missed $m), drops $d" \
	eval '[[ $d == 0 ]] && short "${sa//none/-1}" "$apart_sum" "$m"'

# the text summary's row: LAYER DEV OP STAGE COUNT P50 P90 P99 MAX BYTES MB/s
"$IOTRACER" report "$rec" >"$IT_TMP/report.out" 2>&1 ||
	note "report exited $?: $(tail -c 300 "$IT_TMP/report.out")"
read -r rw rb < <(awk -v d="$name" '$1 == "block" && $2 == d && $3 == "write" && $4 == "q2c" {
	print $5, $10 }' "$IT_TMP/report.out")
check report "report of the recording: block write q2c count ${rw:-none}, bytes ${rb:-none} (missed $m)" \
	eval '[[ $rw == "$sw" && $rb == "$sb" ]] && short "${rw:-0}" "$dw" "$m"'

it_end
