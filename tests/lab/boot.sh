#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# boot.sh KVER GUEST_SCRIPT [OUTDIR]
#
# Boots the lab guest of kernel KVER (6.1, 6.12 or a full release fetched by
# fetch.sh) under TCG with one NVMe (/dev/nvme0n1), one virtio-scsi
# (/dev/sda) and one virtio-blk (/dev/vda) disk (fresh, zeroed, raw images of
# LAB_DISK_MB MiB), a virtio-serial port "lab.0" whose host end is a unix
# socket, and slirp networking. The guest runs GUEST_SCRIPT (busybox sh) as
# /lab/run.sh and powers off. The guest's output comes back on the serial
# console between ===LAB-BEGIN=== and ===LAB-END rc=N===.
#
# OUTDIR (default $LAB_DIR/runs/KVER) receives:
#   console.log  the whole serial console      guest.out  the script's output
#   dmesg.txt    guest dmesg at the end         qemu.err   QEMU's stderr
#   result       key=value: kver rc wall_s ready_s qemu_rc
# The guest script's output is also printed on stdout; progress on stderr.
#
# Exit: 0 script ran to its end marker and returned 0; 1 it ran to the end
# marker and returned non-zero; 2 no end marker (boot failure, panic,
# timeout); 3 cannot boot here (kernel not fetched, no QEMU): callers SKIP;
# 4 setup or usage error (bad arguments, initramfs build failed).
# QEMU always runs under `timeout` and is killed, and the temporary directory
# ($LAB_DIR/tmp/boot.*: disk images, sockets, initrd) removed, on any exit.
#
# Environment:
#   LAB_TIMEOUT=180        seconds before QEMU is killed
#   LAB_MEM=1G LAB_SMP=2   guest memory and vCPUs
#   LAB_DISK_MB=64         size of each disk image
#   LAB_NVME_IMG, LAB_SCSI_IMG, LAB_VBLK_IMG
#                          use this existing image instead of a fresh one (kept)
#   LAB_DRIVE_OPTS         appended to each -drive, e.g. ",cache=none,aio=native"
#   LAB_NETDEV_OPTS        appended to -netdev user, e.g.
#                          ",hostfwd=tcp:127.0.0.1:7000-10.0.2.15:7000"
#   LAB_NET=0              no virtio-net device
#   LAB_EXTRA=DIR          files copied to /lab in the guest
#   LAB_G_*                exported to the guest script under the same name
#   LAB_APPEND             extra kernel command line
#   LAB_QEMU_ARGS          extra QEMU arguments (word-split)
#   LAB_BZIMAGE=1          boot the bzImage even if a vmlinux was extracted
#   LAB_HOST_HOOK=CMD      run CMD (bash -c) on the host once QEMU started, in
#                          its own process group, killed when the guest is done;
#                          it sees LAB_QEMU_PID, LAB_SERIAL_SOCK, LAB_CONSOLE,
#                          LAB_RUN_DIR, LAB_OUTDIR, LAB_NVME_IMG, LAB_SCSI_IMG,
#                          LAB_VBLK_IMG
#   LAB_KEEP=1             keep the temporary directory (path printed)
#   LAB_INTERACTIVE=1      console on this terminal, a shell after the script
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

[[ $# -ge 2 && $# -le 3 ]] || { sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 4; }
series=$1
script=$2
[[ -f $script ]] || { lab_log "guest script $script not found"; exit 4; }
script=$(cd "$(dirname "$script")" && pwd)/$(basename "$script")

if ! kver=$(lab_resolve_kver "$series" 2>/dev/null); then
	lab_log "kernel $series not fetched (run tests/lab/fetch.sh $series)"
	exit 3
fi
kdir=$(lab_kdir "$kver")
[[ -f $kdir/.done ]] || { lab_log "kernel $kver not fetched (run tests/lab/fetch.sh)"; exit 3; }

outdir=${3:-$LAB_DIR/runs/$kver}
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

timeout_s=${LAB_TIMEOUT:-180}
mem=${LAB_MEM:-1G}
smp=${LAB_SMP:-2}
disk_mb=${LAB_DISK_MB:-64}

tmp=""
tpid=""
hookpid=""
t0=$(lab_now)

# shellcheck disable=SC2317 # invoked through the trap
cleanup() {
	local rc=$? p=""
	set +e # best effort from here on: every step must run
	trap - EXIT
	trap "" INT TERM HUP # a second signal must not cut the cleanup short (QEMU would live on)
	# Read QEMU's pid first: QEMU removes its pidfile when it exits.
	[[ -n $tmp && -s $tmp/qemu.pid ]] && p=$(cat "$tmp/qemu.pid" 2>/dev/null)
	if [[ -n $hookpid ]] && kill -0 "$hookpid" 2>/dev/null; then
		kill -TERM -- "-$hookpid" 2>/dev/null || kill -TERM "$hookpid" 2>/dev/null
	fi
	if [[ -n $tpid ]] && kill -0 "$tpid" 2>/dev/null; then
		kill -TERM "$tpid" 2>/dev/null # timeout passes it on to QEMU
	fi
	# Only if that pid is still our QEMU (its command line names our temp dir).
	if [[ -n $p && -r /proc/$p/cmdline ]] && tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$tmp/"; then
		kill -TERM "$p" 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.2
		done
		kill -KILL "$p" 2>/dev/null
	fi
	[[ -z $tpid ]] || wait "$tpid" 2>/dev/null
	[[ -z $hookpid ]] || wait "$hookpid" 2>/dev/null
	if [[ -n $tmp ]]; then
		if [[ ${LAB_KEEP:-0} == 1 ]]; then
			lab_log "kept $tmp"
		else
			rm -rf "$tmp"
		fi
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

mkdir -p "$LAB_DIR/tmp"
tmp=$(mktemp -d "$LAB_DIR/tmp/boot.XXXXXX")
sock=$tmp/ch.sock
[[ ${#sock} -lt 100 ]] || { lab_log "socket path too long ($sock): use a shorter LAB_DIR"; exit 3; }

# Kernel image: the extracted vmlinux (PVH entry) unless told otherwise.
kimg=$kdir/$(cat "$kdir/boot")
if [[ ${LAB_BZIMAGE:-0} == 1 || ! -f $kimg ]]; then
	kimg=$kdir/root/boot/vmlinuz-$kver
fi

# initrd = base cpio + per-boot overlay (guest script, LAB_EXTRA, env).
irc=0
base=$("$LAB_SRC/initramfs.sh" "$kver") || irc=$?
if [[ $irc -ne 0 ]]; then
	lab_log "initramfs build failed (rc $irc)"
	[[ $irc -eq 3 ]] && exit 3
	exit 4
fi
"$LAB_SRC/initramfs.sh" --overlay "$tmp/overlay.cpio" "$script"
cat "$base" "$tmp/overlay.cpio" >"$tmp/initrd.cpio"

# Disks.
img() { # NAME OVERRIDE
	if [[ -n $2 ]]; then
		[[ -f $2 ]] || { lab_log "disk image $2 does not exist"; exit 4; }
		printf '%s\n' "$2"
	else
		truncate -s "${disk_mb}M" "$tmp/$1.img"
		printf '%s\n' "$tmp/$1.img"
	fi
}
nvme_img=$(img nvme "${LAB_NVME_IMG:-}")
scsi_img=$(img scsi "${LAB_SCSI_IMG:-}")
vblk_img=$(img vblk "${LAB_VBLK_IMG:-}")
dopts=${LAB_DRIVE_OPTS:-}

# The machine per architecture: q35 (PVH boot of the vmlinux) or, for arm64, QEMU's
# virt board (the Image booted as it is, a PL011 UART console); same PCI devices.
if [[ $(lab_arch_of "$kver") == arm64 ]]; then
	qemu_bin=qemu-system-aarch64 machine=virt tty=ttyAMA0
else
	qemu_bin=qemu-system-x86_64 machine=q35 tty=ttyS0
fi
command -v "$qemu_bin" >/dev/null 2>&1 || { lab_log "no $qemu_bin (tests/lab/fetch.sh installs it)"; exit 3; }
append="console=$tty panic=-1 softlockup_panic=1 quiet lab.wait=/dev/nvme0n1,/dev/sda,/dev/vda ${LAB_APPEND:-}"
[[ ${LAB_INTERACTIVE:-0} == 1 ]] && append="$append lab.shell"

# shellcheck disable=SC2054 # commas belong to QEMU option values
qemu=("$qemu_bin"
	-name "lab-$kver" -machine "$machine" -accel tcg -cpu max -m "$mem" -smp "$smp"
	-nographic -no-reboot -pidfile "$tmp/qemu.pid"
	-kernel "$kimg" -initrd "$tmp/initrd.cpio" -append "$append"
	-drive "file=$nvme_img,if=none,id=n0,format=raw$dopts" -device nvme,drive=n0,serial=labnvme0
	-device virtio-scsi-pci,id=scsi0
	-drive "file=$scsi_img,if=none,id=s0,format=raw$dopts" -device scsi-hd,drive=s0,bus=scsi0.0,serial=labscsi0
	-drive "file=$vblk_img,if=none,id=v0,format=raw$dopts" -device virtio-blk-pci,drive=v0,serial=labvblk0
	-device virtio-serial-pci
	-chardev "socket,id=ch0,path=$sock,server=on,wait=off" -device virtserialport,chardev=ch0,name=lab.0)
if [[ ${LAB_NET:-1} == 1 ]]; then
	# shellcheck disable=SC2054
	qemu+=(-netdev "user,id=net0,restrict=off${LAB_NETDEV_OPTS:-}" -device virtio-net-pci,netdev=net0,romfile=)
fi
if [[ -n ${LAB_QEMU_ARGS:-} ]]; then
	# shellcheck disable=SC2206 # word splitting is the documented contract
	qemu+=(${LAB_QEMU_ARGS})
fi

if [[ ${LAB_INTERACTIVE:-0} == 1 ]]; then
	lab_log "interactive: $kver (Ctrl-A X quits QEMU)"
	timeout --foreground "${LAB_TIMEOUT:-3600}" "${qemu[@]}" || true
	exit 0
fi

console=$outdir/console.log
rm -f "$outdir/console.log" "$outdir/guest.out" "$outdir/dmesg.txt" "$outdir/qemu.err" "$outdir/result"
lab_log "booting $kver ($(basename "$kimg")), timeout ${timeout_s}s, output in $outdir"
tq=$(lab_now)
timeout -k 5 "$timeout_s" "${qemu[@]}" </dev/null >"$console" 2>"$outdir/qemu.err" &
tpid=$!

if [[ -n ${LAB_HOST_HOOK:-} ]]; then
	(
		export LAB_SERIAL_SOCK=$sock LAB_CONSOLE=$console LAB_RUN_DIR=$tmp LAB_OUTDIR=$outdir
		export LAB_NVME_IMG=$nvme_img LAB_SCSI_IMG=$scsi_img LAB_VBLK_IMG=$vblk_img LAB_KVER=$kver
		for _ in $(seq 100); do
			[[ -s $tmp/qemu.pid ]] && break
			sleep 0.05
		done
		LAB_QEMU_PID=$(cat "$tmp/qemu.pid" 2>/dev/null || true)
		export LAB_QEMU_PID
		exec setsid bash -c "$LAB_HOST_HOOK"
	) &
	hookpid=$!
fi

ready=""
while kill -0 "$tpid" 2>/dev/null; do
	if [[ -z $ready ]] && grep -q '===LAB-READY===' "$console" 2>/dev/null; then
		ready=$(lab_since "$tq")
		lab_log "guest ready after $ready s"
	fi
	sleep 0.1
done
qrc=0
wait "$tpid" || qrc=$?
tpid=""
wall=$(lab_since "$t0")

tr -d '\r' <"$console" >"$tmp/console.txt"
sed -n '/^===LAB-BEGIN===$/,/^===LAB-END rc=[0-9]*===$/p' "$tmp/console.txt" | sed '1d;$d' >"$outdir/guest.out"
sed -n '/^===LAB-DMESG===$/,$p' "$tmp/console.txt" | sed '1d' >"$outdir/dmesg.txt"
end=$(grep -E '^===LAB-END rc=[0-9]+===$' "$tmp/console.txt" | tail -n 1 || true)
[[ -z $ready ]] && grep -q '===LAB-READY===' "$tmp/console.txt" && ready=$(lab_since "$tq")

if [[ -n $end ]]; then
	grc=${end#===LAB-END rc=}
	grc=${grc%===}
	if [[ $grc == 0 ]]; then rc=0; else rc=1; fi
else
	grc=""
	rc=2
	if [[ $qrc == 124 || $qrc == 137 ]]; then
		lab_log "guest timed out after ${timeout_s}s (no end marker); see $console"
	else
		lab_log "guest ended without end marker (qemu rc $qrc); see $console and $outdir/qemu.err"
	fi
	grep -E 'Kernel panic|BUG:|soft lockup|Oops' "$tmp/console.txt" | head -n 5 >&2 || true
fi
{
	echo "kver=$kver"
	echo "rc=$rc"
	echo "guest_rc=$grc"
	echo "qemu_rc=$qrc"
	echo "wall_s=$wall"
	echo "ready_s=${ready:-}"
	echo "kernel=$(basename "$kimg")"
} >"$outdir/result"
cat "$outdir/guest.out"
lab_log "boot $kver: rc=$rc (guest rc ${grc:-none}, qemu rc $qrc), ready ${ready:-never} s, wall $wall s"
exit "$rc"
