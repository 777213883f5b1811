#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# test_blame_host.sh: issue 27's host-mode oracle (docs/blame.md, "Host mode"): two
# guests whose disk images are files on ONE host loop device (an ext4 of our own on
# a loop device with direct IO), QEMU cache=none so their IO reaches it directly.
#
# - the aggressor A (QEMU -name guest=blame-aggr, tests/lab/guest-blame-aggr.sh, no
#   iotracer in it): waits for "GO" in its disk's first 4 KiB, then 1 MiB
#   sequential O_DIRECT writes from 8 processes (host queue depth 8) for
#   LAB_BH_AGG_S seconds;
# - the victim V (the lab's usual QEMU, -name lab-KVER, tests/lab/guest-blame-host.sh):
#   a guest daemon linked to the host one, 4k random reads, QD 1, O_DIRECT for
#   LAB_BH_DUR seconds;
# - the host daemon (tests/lab/host-blame-hook.sh): `iotracer --mode host --blame`
#   on both QEMUs; it writes "GO" LAB_BH_PRE_S seconds into V's load.
#
# A's window, in host time, is from the host daemon's own records of A's QEMU: the
# first and last of its writes (start, end). V's joined requests (path lines)
# carry the split of their host block requests (host_blame). Checks:
#   lab_blame_host_run     both guests ran, the host daemon wrote paths with host_blame
#   lab_blame_host_window  V's joined requests whose host block request lies inside
#                          A's window: >= 50 of them, and A's VM (by its name,
#                          blame-aggr) carries >= 80 % of their blamed wait (self +
#                          others), summed
#   lab_blame_host_off     V's joined requests outside it (ended before it, or queued
#                          0.5 s after it): >= 50, and <= 5 % of their wait blamed on
#                          others
# The figures go out as `# blame host ...` notes.
#
# SKIP (never PASS) when the kernel cannot be fetched or booted, or without
# losetup / mkfs.ext4. Files: $LAB_DIR/runs/blame-host/ (V's boot, host.json) and
# runs/blame-host/aggr (A's boot).
# Environment: LAB_BLAME_KERNEL (6.12), LAB_BH_DUR (20 s), LAB_BH_PRE_S (6 s),
# LAB_BH_AGG_S (6 s), LAB_TIMEOUT (per boot, 120 s), and what boot.sh reads.
# shellcheck disable=SC2016 # jq expressions in single quotes
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"

SERIES=${LAB_BLAME_KERNEL:-6.12}
STATIC=$LAB_DIR/iotracer-static
IOTRACER=${IOTRACER:-$LAB_REPO/iotracer}
export LAB_TIMEOUT=${LAB_TIMEOUT:-120}
PFX=lab_blame_host
NAMES="${PFX}_run ${PFX}_window ${PFX}_off"
AGG_NAME=blame-aggr
loopdev="" mnt="" abpid=""

# On exit: A's boot (boot.sh kills its QEMU on TERM), the mount, the loop device,
# then harness.sh's cleanup (V's boot, the temp dir) with our exit status.
# shellcheck disable=SC2317 # invoked through the traps
bh_exit() {
	local rc=$?
	trap '' INT TERM HUP
	if [[ -n $abpid ]]; then
		kill -TERM "$abpid" 2>/dev/null
		wait "$abpid" 2>/dev/null
	fi
	[[ -n $mnt ]] && mountpoint -q "$mnt" && umount "$mnt"
	[[ -n $loopdev ]] && losetup -d "$loopdev"
	(exit "$rc")
	cleanup
}
install_traps bh_exit
new_tmp blame-host || {
	rest FAIL "cannot make a temp dir in $LAB_DIR/tmp"
	exit 1
}
out=$LAB_DIR/runs/blame-host
t0=$(lab_now)
for c in losetup mkfs.ext4 jq pgrep; do
	command -v "$c" >/dev/null 2>&1 || { rest SKIP "no $c here"; exit 0; }
done
fetch_series "$SERIES"
export LAB_EXTRA=$tmp/extra
if ! build_static amd64 || ! guest_extra "$LAB_EXTRA"; then
	rest FAIL "${BUILD_WHY:-cannot put iotracer in $LAB_EXTRA}"
	exit 1
fi

# One host device for both images: an ext4 on a loop device (direct IO to its file).
mnt=$tmp/mnt
mkdir -p "$mnt"
if ! truncate -s 192M "$tmp/fs.img" || ! loopdev=$(losetup -f --show --direct-io=on "$tmp/fs.img") ||
	! mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$loopdev" >"$tmp/mkfs.log" 2>&1 ||
	! mount -o nobarrier "$loopdev" "$mnt" ||
	! head -c 64M /dev/zero >"$mnt/v.img" || ! head -c 64M /dev/zero >"$mnt/a.img" || ! sync -f "$mnt"; then
	rest FAIL "cannot make the shared host device: $(tail -n 2 "$tmp/mkfs.log" 2>/dev/null | tr '\n' ' ')"
	exit 1
fi
note "$PFX: both images on $loopdev (ext4, $tmp/fs.img)"
rm -rf "$out"
mkdir -p "$out/aggr"

# A: its own boot beside V's, no host hook, no network, named by -name.
env -u LAB_EXTRA -u LAB_HOST_HOOK LAB_VBLK_IMG="$mnt/a.img" LAB_DRIVE_OPTS=",cache=none" LAB_NET=0 \
	LAB_QEMU_ARGS="-name guest=$AGG_NAME" LAB_G_AGG_S="${LAB_BH_AGG_S:-6}" LAB_G_QD=8 \
	LAB_G_WAIT=$((LAB_TIMEOUT - 10)) \
	"$LAB_SRC/boot.sh" "$SERIES" "$LAB_SRC/guest-blame-aggr.sh" "$out/aggr" >/dev/null 2>"$out/aggr-boot.log" &
abpid=$!

# V: the lab's QEMU with the host daemon as its hook.
export LAB_VBLK_IMG=$mnt/v.img LAB_DRIVE_OPTS=",cache=none" IOTRACER \
	LAB_G_DUR=${LAB_BH_DUR:-20} BH_A_IMG=$mnt/a.img BH_PRE_S=${LAB_BH_PRE_S:-6}
export LAB_HOST_HOOK="exec \"$LAB_SRC/host-blame-hook.sh\""
brc=0
step /dev/null "$out/boot.log" "$LAB_SRC/boot.sh" "$SERIES" "$LAB_SRC/guest-blame-host.sh" "$out" || brc=$?
for ((i = 0; i < 100; i++)); do [[ -f $out/host.done ]] && break; sleep 0.2; done
arc=0
wait "$abpid" || arc=$?
abpid=""
g=$out/guest.out
note "$PFX: kernel $kver; V boot rc $brc, wall $(sed -n 's/^wall_s=//p' "$out/result" 2>/dev/null)s; A boot rc $arc, wall $(sed -n 's/^wall_s=//p' "$out/aggr/result" 2>/dev/null)s"
if ((brc == 3 || arc == 3)); then
	rest SKIP "$(tail -n 1 "$out/boot.log" "$out/aggr-boot.log" | grep '^\[lab\]' | tail -n 1 | sed 's/^\[lab\] //')"
	exit 0
fi

hj=$out/host.json
apid=$(cat "$out/aggr.pid" 2>/dev/null)
why=""
((brc == 0)) || why="V's boot failed (rc $brc: $(boot_failure "$out")); "
((arc == 0)) || why="${why}A's boot failed (rc $arc); "
grep -q '^aggr start' "$out/aggr/guest.out" 2>/dev/null || why="${why}A never started writing ($(tail -n 1 "$out/aggr/guest.out" 2>/dev/null)); "
grep -q '^guest_rc 0$' "$g" 2>/dev/null || why="${why}V's guest daemon: $(grep -m1 '^guest_rc' "$g" 2>/dev/null || echo 'no exit status'); "
[[ $apid =~ ^[0-9]+$ ]] || why="${why}A's QEMU not found by the hook; "
[[ -s $hj ]] || why="${why}no host JSON ($(tail -c 300 "$out/host.err" 2>/dev/null | tr '\n' ' ')); "
# A's window: its writes on the host (it writes nothing else; the guest's block layer
# may split its 1 MiB writes), start of the first to end of the last
win=""
[[ -z $why ]] && win=$(jq -rsR --argjson a "$apid" '[split("\n")[] | fromjson? | select(.type == "request" and .pid == $a and .op == "write")]
	| select(length > 0) | "\(map(.ts_ns) | min) \(map(.ts_ns + .lat_ns) | max) \(length)"' "$hj")
[[ -z $why && -z $win ]] && why="no write of A's QEMU (pid $apid) in the host records; "
npaths=$(jq -cR 'fromjson? | select(.type == "path" and .joined and .host_blame)' "$hj" 2>/dev/null | wc -l)
[[ -z $why && $npaths == 0 ]] && why="no joined path with host_blame in the host JSON; "
if [[ -n $why ]]; then
	rest FAIL "$why"
	exit 1
fi
report PASS "${PFX}_run"
read -r ws we wn <<<"$win"
note "blame host: A ($AGG_NAME, QEMU $apid) made $wn host writes in [$ws, $we] ns ($(((we - ws) / 1000000)) ms); $npaths of V's paths carry host_blame, $(jq -cR 'fromjson? | select(.type == "path" and .host_blame_missing)' "$hj" | wc -l) without (host_blame_missing); host summary: $(jq -cR 'fromjson? | select(.type == "host_summary" and .final) | {guest_requests, joined, host_blame}' "$hj" | tail -n 1)"

# Per side of the window: requests, wait, self + others, A's share, others, A first.
# Inside: the host block request queued and completed within [ws, we]; outside:
# completed before ws, or queued 0.5 s after we.
jq -rsR --argjson ws "$ws" --argjson we "$we" --arg a "$AGG_NAME" '
	[split("\n")[] | fromjson? | select(.type == "path" and .joined and .host_blame)
	 | {q: (.t.host_block_q // .t.host_sys_enter), c: (.t.host_block_c // .t.host_sys_exit), b: .host_blame}
	 | select(.q != null and .c != null)
	 | .side = (if .q >= $ws and .c <= $we then "in" elif .c < $ws or .q > $we + 500000000 then "out" else "edge" end)]
	| group_by(.side)[] | {side: .[0].side, n: length,
		wait: (map(.b.wait_ns) | add), own: (map(.b.own_ns) | add),
		blamed: (map(.b.self_ns + .b.others_ns) | add), others: (map(.b.others_ns) | add),
		a: (map([.b.culprits[] | select(.who.vm == $a) | .ns] | add // 0) | add),
		a_first: (map(select((.b.culprits[0].who.vm // "") == $a)) | length)}
	| "\(.side) \(.n) \(.wait) \(.own) \(.blamed) \(.others) \(.a) \(.a_first)"' "$hj" >"$out/sides.txt"
declare -A S
while read -r side n wait own blamed others a afirst; do
	S[$side]="$n $wait $own $blamed $others $a $afirst"
	note "blame host $side A's window: $n requests, wait $((wait / 1000000)) ms, own $((own / 1000000)) ms, blamed $((blamed / 1000000)) ms, others $((others / 1000000)) ms, on $AGG_NAME $((a / 1000000)) ms; $AGG_NAME first in $afirst"
done <"$out/sides.txt"
read -r n _ _ blamed _ a afirst <<<"${S[in]:-0 0 0 0 0 0 0}"
share=$(awk -v a="$a" -v b="$blamed" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')
note "blame host window: $AGG_NAME's share of V's blamed wait $share over $n requests ($afirst name it first)"
check_window=$(awk -v n="$n" -v s="$share" 'BEGIN { exit !(n >= 50 && s != "" && s + 0 >= 0.80) }'; echo $?)
if ((check_window == 0)); then report PASS "${PFX}_window"; else report FAIL "${PFX}_window" "$n of V's requests inside A's window (want >= 50), $AGG_NAME's share of their blamed wait $share (want >= 0.80)"; fi
read -r n wait _ _ others _ _ <<<"${S[out]:-0 0 0 0 0 0 0}"
frac=$(awk -v o="$others" -v w="$wait" 'BEGIN { printf "%.4f", (w > 0 ? o / w : 1) }')
note "blame host off: others' share of V's wait $frac over $n requests outside A's window"
if awk -v n="$n" -v f="$frac" 'BEGIN { exit !(n >= 50 && f != "" && f + 0 <= 0.05) }'; then report PASS "${PFX}_off"; else report FAIL "${PFX}_off" "$n of V's requests outside A's window (want >= 50), others' share of their wait $frac (want <= 0.05)"; fi
note "$PFX: took $(lab_since "$t0") s"
exit "$failed"
