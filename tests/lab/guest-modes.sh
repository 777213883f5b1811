# shellcheck shell=sh source-path=SCRIPTDIR
# Guest side of the host/guest modes test (runs as /lab/run.sh under busybox
# sh; the host side is tests/lab/test_modes.sh, which runs `iotracer --mode
# host` on this guest's QEMU). Needs /lab/iotracer (static, via LAB_EXTRA).
#
# LAB_G_LINK: the guest's --link address (serial:lab.0 or tcp:10.0.2.2:PORT).
# LAB_G_COUNT: ioload ops per run (default 150).
# LAB_G_MDISKS: serials of the disk matrix (tests/lab/modes-disks.sh), traced
#   by daemon #1 too; LAB_G_MCOUNT ioload ops per run on each (default 100).
# LAB_G_OLD_GUEST=1: the guest daemons send no buffer addresses (IOTRACER_TEST_NO_GPA),
#   as a guest iotracer before the address path did.
#
# Phase 0 (LAB_G_COST=1): the cost, LAB_G_CCOUNT ioload randreads on vda in
#   each of: base (nothing traced); standalone (a standalone iotracer on vda
#   here, and one on QEMU's image on the host); uprobe (guest daemon #1, the
#   host daemon with --qemu-uprobes always); address (guest daemon #1, host
#   daemon #1 on the address path, after warm-up reads it calibrates on,
#   LAB_G_WARM at a time until the host says GO-address). Each between
#   `LAB-MARK cost-PHASE-begin/end` marks the host hook stamps
#   (host-modes-hook.sh), after a second of nothing between
#   `cost-PHASE-idle` and `-begin` (the idle rates the notes subtract); lines
#   `cost PHASE {json}`. LAB_G_STANDALONE=0: no standalone phase (its two tracers'
#   attach, ~13 s of a TCG boot, for notes only: test_modes.sh runs it with LAB_FULL=1).
#   The host
#   says when a tracer of its own is ready by writing GO-WORD at the start of
#   the NVMe disk (outside the guest daemon's filter), which this script polls.
# Phase 1: guest daemon #1 (`--mode guest -d vda`: the filter names vda only,
#   and the matrix disks), randread + randwrite on vda, randwrite on nvme0n1 (a
#   disk outside the filter); on each matrix disk randwrite, randread of the
#   same blocks (seed 11) and randread of others (seed 12), each printed as
#   `mload SERIAL {ioload json}`; wait for the acks, then SIGKILL it.
# Phase 2: guest daemon #2, randread on vda; once every record is acked, print
#   `LAB-MARK restart-host` (the host side SIGKILLs and restarts its daemon on
#   seeing it), wait until the link is up again (the new host daemon attached),
#   randwrite on vda, randread on nvme0n1, SIGTERM daemon #2.
# Then: /lab/test_link (if present) for AF_VSOCK over vsock_loopback, and one
# base64 tar.gz bundle of g1.json g2.json *.err ioload.txt steps.txt vsock.txt
# on the console (===DRV-BUNDLE=== ... ===DRV-BUNDLE-END===, as guest-drivers.sh).
set -u
# shellcheck source=guest-lib.sh # /lab/guest-lib.sh in the guest
. /lab/guest-lib.sh
link=${LAB_G_LINK:-serial:lab.0}
count=${LAB_G_COUNT:-150}
mcount=${LAB_G_MCOUNT:-100}
guest_init /tmp/modes
: >"$W/vsock.txt"

# start N DEVS: guest daemon number N on DEVS; waits for its attach lines (60 s at most).
# dev_of_serial SERIAL: the block device whose serial it is (virtio-blk: serial;
# NVMe: device/serial; SCSI: VPD page 0x80).
dev_of_serial() {
	for _b in /sys/block/*; do
		for _f in "$_b/serial" "$_b/device/serial" "$_b/device/vpd_pg80"; do
			[ -r "$_f" ] && grep -q "$1" "$_f" 2>/dev/null && { echo "${_b##*/}"; return 0; }
		done
	done
	return 1
}

# The test's own disks by serial too: with more NVMe disks (the matrix) the
# kernel may name another controller nvme0 (probing is asynchronous).
VDA=$(dev_of_serial labvblk0) || VDA=vda
NVME=$(dev_of_serial labnvme0) || NVME=nvme0n1
echo "vda is /dev/$VDA, nvme0n1 is /dev/$NVME"
mdevs=""
for s in ${LAB_G_MDISKS:-}; do
	i=0
	while ! d=$(dev_of_serial "$s") && [ "$i" -lt 50 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	[ -n "$d" ] || { echo "no disk with serial $s"; rc=1; continue; }
	echo "disk $s is /dev/$d"
	mdevs="$mdevs $s:$d"
done
devs=$VDA
for m in $mdevs; do devs="$devs,${m#*:}"; done

start() {
	# not -q: its link lines ("link: peer N (...): up: ...") on stderr are what
	# wait_up watches. LAB_G_OLD_GUEST=1: as an older guest iotracer, no buffer addresses.
	[ "${LAB_G_OLD_GUEST:-0}" = 1 ] && export IOTRACER_TEST_NO_GPA=1
	/lab/iotracer --mode guest --link "$link" -d "$2" --no-live -i 1s \
		-j "$W/g$1.json" >"$W/g$1.out" 2>"$W/g$1.err" &
	gpid=$!
	i=0
	while [ "$i" -lt 300 ]; do
		kill -0 "$gpid" 2>/dev/null || { echo "guest daemon $1 exited early"; rc=1; return; }
		grep -q '"type":"attach"' "$W/g$1.json" 2>/dev/null && break
		sleep 0.2
		i=$((i + 1))
	done
	sleep 1
	step "guest$1_attached"
}

# ups_of N: link-up lines guest daemon N logged so far.
ups_of() { grep -c '): up: ' "$W/g$1.err" 2>/dev/null; }

# wait_up N UPS: until guest daemon N logged more than UPS link-up lines (90 s at most).
wait_up() {
	i=0
	while [ "$(ups_of "$1")" -le "$2" ] && [ "$i" -lt 450 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	[ "$i" -lt 450 ] || { echo "guest daemon $1: the link did not come back up"; rc=1; }
}

# wait_acked N VREQS: until a link line of guest daemon N (written every second)
# says at least VREQS virtio requests and none waiting for an ack (30 s at most).
wait_acked() {
	i=0
	while [ "$i" -lt 150 ]; do
		l=$(grep '"type":"link"' "$W/g$1.json" 2>/dev/null | tail -n 1)
		v=$(echo "$l" | sed -n 's/.*"virtio_requests":\([0-9]*\).*/\1/p')
		w=$(echo "$l" | sed -n 's/.*"waiting":\([0-9]*\).*/\1/p')
		[ -n "$v" ] && [ "$v" -ge "$2" ] && [ "$w" = 0 ] && return 0
		sleep 0.2
		i=$((i + 1))
	done
	echo "guest daemon $1: records not acked within 30 s"
}

load() { # vda|nvme0n1 MODE SEED (the test's disk by its usual name, found by serial)
	_d=$VDA
	[ "$1" = nvme0n1 ] && _d=$NVME
	out=$(ioload -d "/dev/$_d" -n "$count" -b 4096 -m "$2" -s "$3" 2>&1) || rc=1
	echo "ioload $1 $out" | tee -a "$W/ioload.txt"
}

mload() { # SERIAL DEV MODE SEED
	out=$(ioload -d "/dev/$2" -n "$mcount" -b 4096 -m "$3" -s "$4" 2>&1) || rc=1
	echo "mload $1 $out" | tee -a "$W/ioload.txt"
}

cost() { # PHASE SEED [COUNT]
	echo "LAB-MARK cost-$1-idle"
	sleep 1
	echo "LAB-MARK cost-$1-begin"
	sleep 0.5
	out=$(ioload -d "/dev/$VDA" -n "${3:-$ccount}" -b 4096 -m randread -s "$2" 2>&1) || rc=1
	echo "cost $1 $out" | tee -a "$W/ioload.txt"
	echo "LAB-MARK cost-$1-end"
	sleep 0.5
}

# go_seen WORD: the host wrote GO-WORD at the start of the NVMe disk
go_seen() {
	dd if="/dev/$NVME" bs=4096 count=1 iflag=direct 2>/dev/null | head -c 16 | grep -q "GO-$1"
}

# await_go WORD: until go_seen WORD (60 s at most)
await_go() {
	i=0
	while [ "$i" -lt 300 ]; do
		go_seen "$1" && return 0
		sleep 0.2
		i=$((i + 1))
	done
	echo "no GO-$1 from the host within 60 s"
	rc=1
}

ccount=${LAB_G_CCOUNT:-600}
# hist_fill: reads on vda until host daemon #1 has joined paths over LAB_G_HIST (10) s of
# guest time since hist_t0, so its VM's clock bounds are carried over the pause before
# guest daemon 2 (a drift fit needs 5 s of history, docs/modes.md "The address path");
# with less the VM re-checks with its uprobes, and that raced the next load (docs/testing.md)
hist_fill() {
	i=0
	while [ "$i" -lt 400 ] && awk -v a="$hist_t0" -v b="$(cut -d' ' -f1 /proc/uptime)" \
		-v s="${LAB_G_HIST:-10}" 'BEGIN { exit !(b - a < s) }'; do
		out=$(ioload -d "/dev/$VDA" -n 50 -b 4096 -m randread -s "$((200 + i))" 2>&1) || rc=1
		echo "cost hist $out" | tee -a "$W/ioload.txt"
		i=$((i + 1))
	done
}
if [ "${LAB_G_COST:-0}" = 1 ]; then
	cost base 21
	if [ "${LAB_G_STANDALONE:-1}" = 1 ]; then
		/lab/iotracer -d "$VDA" -q --no-live -j "$W/gs.json" >"$W/gs.out" 2>"$W/gs.err" &
		gspid=$!
		wait_attached "$gspid" "$W/gs.json" >/dev/null || rc=1
		echo "LAB-MARK start-standalone"
		await_go standalone
		cost standalone 22
		stop_pid "$gspid" "standalone guest daemon"
	fi
	start 1 "$devs"
	echo "LAB-MARK start-uprobe"
	wait_up 1 0 # the host daemon (the uprobe path) traces QEMU
	cost uprobe 23
	wait_acked 1 "$ccount"
	ups=$(ups_of 1)
	hist_t0=$(cut -d' ' -f1 /proc/uptime)
	echo "LAB-MARK start-host"
	wait_up 1 "$ups" # host daemon #1, calibrating its address path
	# reads until it says its VM is on the address path (a steady load: the VM's clock
	# bounds stay fresh up to the measured phase), LAB_G_WARM at a time, 60 s at most
	i=0
	while [ "$i" -lt 100 ]; do
		out=$(ioload -d "/dev/$VDA" -n "${LAB_G_WARM:-50}" -b 4096 -m randread -s "$((20 + i))" 2>&1) || rc=1
		echo "cost warmup $out" | tee -a "$W/ioload.txt"
		go_seen address && break
		i=$((i + 1))
	done
	go_seen address || { echo "no GO-address from the host"; rc=1; }
	cost address 24
else
	hist_t0=$(cut -d' ' -f1 /proc/uptime)
	start 1 "$devs"
fi
hist_fill
# vda requests guest daemon #1 streamed in the cost phases
cvda=$(awk '$1 == "cost" && $2 != "base" && $2 != "standalone"' "$W/ioload.txt" |
	sed -n 's/.*"ops":\([0-9]*\).*/\1/p' | awk '{s += $1} END {print s + 0}')
load vda randread 1
load vda randwrite 2
load nvme0n1 randwrite 3
nm=0
for m in $mdevs; do
	mload "${m%%:*}" "${m#*:}" randwrite 11
	mload "${m%%:*}" "${m#*:}" randread 11
	mload "${m%%:*}" "${m#*:}" randread 12
	nm=$((nm + 3 * mcount))
done
[ "$nm" = 0 ] || wait_acked 1 $((2 * count + nm + cvda))
sleep 2 # > one drain tick + a round trip: everything acked
step guest1_kill
kill -KILL "$gpid" 2>/dev/null
wait "$gpid" 2>/dev/null

start 2 "$VDA"
load vda randread 4
# The host daemon is killed on the mark: first every record of these reads
# acked (the host wrote them), and a second for it to join them to QEMU's IO.
wait_acked 2 "$count"
sleep 1
ups=$(ups_of 2)
echo "LAB-MARK restart-host"
step host_restart_asked
# The new host daemon listens (or dials the serial socket) only once it has
# attached: a new link-up line means it traces QEMU again. A fixed sleep lost
# the next reads whenever the restart took longer (a loaded machine).
wait_up 2 "$ups"
step host_back
load vda randwrite 5
load nvme0n1 randread 6
sleep 2
step guest2_stop
stop_pid "$gpid" "guest daemon 2"
echo "guest2_rc $stop_rc"

if [ -x /lab/test_link ]; then
	modprobe vsock_loopback 2>/dev/null
	/lab/test_link 2>/dev/null | grep -i vsock >"$W/vsock.txt"
	cat "$W/vsock.txt"
fi

send_bundle "$W" g1.json g2.json g1.err g2.err ioload.txt steps.txt vsock.txt
exit "$rc"
