#!/usr/bin/env bash
# The stack layer on this host: a partition (a loop device with an MBR, its
# partition added with partx; this kernel has no device mapper or md: those are
# tests/lab/test_stacks.sh's). One fio run on loopNp1: direct randread and
# randwrite, and a buffered write with fsync, traced with -d loopN,loopNp1.
#   fio       every pread64/pwrite64 of fio on loopNp1 (fio's own count) has its
#             request on loopN, named a partition's (block[].stack: upper loopNp1,
#             how partition, chain "loopNp1 -> loopN"), at the partition's sector
#             (upper_sector = sector - the partition's start from sysfs)
#   stat      the summary's histograms: loopNp1 (layer stack, role upper) read +
#             write q2c == its /sys/block stat delta (reads + writes), loopN (layer
#             block) read + write + sync q2c + missed == its delta (reads, writes,
#             flushes); its histograms of the partition's requests say role member
#   filter    -d loopNp1 alone: the same fio ops have their requests on loopN
# shellcheck disable=SC2016,SC2119 # jq programs in single quotes; optional args
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin start fio stat filter
it_require_all fio partx

IOS=${STACKS_IOS:-200}
dev=$(mk_loop 64 fill) || fail_all "cannot create a loop device"
name=$(devname "$dev")
# the MBR: partition 1, type 83, from sector 2048, 65536 sectors
printf '\x00\x00\x00\x00\x83\x00\x00\x00\x00\x08\x00\x00\x00\x00\x01\x00' |
	dd of="$dev" bs=1 seek=446 conv=notrunc status=none
printf '\x55\xaa' | dd of="$dev" bs=1 seek=510 conv=notrunc status=none
blockdev --flushbufs "$dev"
partx -a "$dev" 2>"$IT_TMP/partx.err" || partx -u "$dev" 2>>"$IT_TMP/partx.err"
part=${dev}p1
for ((i = 0; i < 50; i++)); do [[ -b $part ]] && break; sleep 0.1; done
[[ -b $part ]] || fail_all "no $part after partx -a: $(head -c 200 "$IT_TMP/partx.err")"
pname=$(devname "$part")
start=$(cat "/sys/class/block/$pname/start")
note "device $dev, partition $part from sector $start"

# rw and flushes of a device, partitions too (/sys/class/block/NAME/stat)
stat_of() { awk '{ print $1 + $5, ($16 == "" ? 0 : $16) }' "/sys/class/block/$1/stat"; }

# one run: fio's three jobs on the partition under a tracer started with ARGS
run_fio() {
	local out=$1
	wait_quiet "$dev" 5 >/dev/null
	start_tracer "${@:2}" || return 1
	S0=$(stat_of "$name") P0=$(stat_of "$pname")
	fio_run "$out.dr" --name=dr --filename="$part" --direct=1 --rw=randread --bs=4k \
		--size=16m --number_ios="$IOS" --ioengine=psync >/dev/null
	fio_run "$out.dw" --name=dw --filename="$part" --direct=1 --rw=randwrite --bs=4k \
		--size=16m --number_ios="$IOS" --ioengine=psync >/dev/null
	fio_run "$out.bw" --name=bw --filename="$part" --rw=write --bs=4k --size=16k \
		--end_fsync=1 --ioengine=psync >/dev/null
	wait_quiet "$dev" 5 >/dev/null
	S1=$(stat_of "$name") P1=$(stat_of "$pname")
	stop_tracer && tracer_summary
}

if ! run_fio "$IT_TMP/fio1" -d "$name,$pname"; then
	fail_all "${TRACER_WHY:-no final summary}"
fi
pass start

want=$(($(jq '.jobs[0].read.total_ios' "$IT_TMP/fio1.dr") + $(jq '.jobs[0].write.total_ios' "$IT_TMP/fio1.dw")))
read -r got good < <(jq -rn --arg p "$pname" --arg d "$name" --argjson st "$start" '
	[inputs | select(.type == "request" and .kind == "syscall" and .dev == $p and .fs.dio
		and (.syscall == "pread64" or .syscall == "pwrite64"))]
	| [length, ([.[] | select(any(.block[]?; .dev == $d and .stack.upper == $p
		and .stack.how == "partition" and .stack.upper_sector == .sector - $st
		and .stack.chain == "\($p) -> \($d)"))] | length)] | "\(.[0]) \(.[1])"' "$TRACER_JSON")
note "fio direct ops $want; iotracer's on $pname: $got, $good with their partition request on $name"
check fio "fio did $want direct ops on $pname, iotracer has $got records, $good with a partition request on $name" \
	test "$want" -gt 0 -a "$got" = "$want" -a "$good" = "$want"

# histograms: the partition's (stack layer) and the disk's (block layer, + missed)
read -r s0 f0 <<<"$S0"
read -r s1 f1 <<<"$S1"
read -r p0 _ <<<"$P0"
read -r p1 _ <<<"$P1"
hp=$(($(hist_count "$SUMMARY" stack "$pname" read q2c || echo 0) + $(hist_count "$SUMMARY" stack "$pname" write q2c || echo 0)))
hd=$((${hd:-0} + $(hist_count "$SUMMARY" block "$name" read q2c || echo 0) + $(hist_count "$SUMMARY" block "$name" write q2c || echo 0)))
hs=$(hist_count "$SUMMARY" block "$name" sync q2c)
m=$(jq -r '.drops.block.missed // 0' "$SUMMARY")
roles=$(jq -r --arg p "$pname" --arg d "$name" '[.hists[] | select((.dev == $p or .dev == $d) and (.layer == "block" or .layer == "stack") and (.op == "read" or .op == "write")) | "\(.dev):\(.role // "-")"] | unique | join(" ")' "$SUMMARY")
note "$pname: stat $((p1 - p0)), hists $hp; $name: stat $((s1 - s0)) + flushes $((f1 - f0)), hists $hd + sync ${hs:-0} + missed $m; roles $roles"
check stat "$pname stat $((p1 - p0)) vs hists $hp; $name stat $((s1 - s0))+$((f1 - f0)) vs hists $hd+${hs:-0}+missed $m; roles $roles" \
	test "$hp" = "$((p1 - p0))" -a "$((hd + ${hs:-0} + m))" = "$((s1 - s0 + f1 - f0))" -a \
	"$roles" = "$name:member $pname:upper"

# -d on the partition alone: its requests on the disk are in
if ! run_fio "$IT_TMP/fio2" -d "$pname"; then
	fail filter "${TRACER_WHY:-no final summary}"
else
	want=$(($(jq '.jobs[0].read.total_ios' "$IT_TMP/fio2.dr") + $(jq '.jobs[0].write.total_ios' "$IT_TMP/fio2.dw")))
	got=$(jblocks "$TRACER_JSON" '.kind == "syscall" and .fs.dio and .dev == $p' \
		'.dev == $d and .stack.upper == $p' --arg p "$pname" --arg d "$name")
	note "-d $pname: fio direct ops $want, their requests on $name: $got"
	check filter "-d $pname: $got requests on $name for $want direct ops" test "$got" = "$want"
fi
it_end
