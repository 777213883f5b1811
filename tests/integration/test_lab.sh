#!/usr/bin/env bash
# The QEMU lab's driver layers test (nvme, scsi, virtio on Debian 11's 5.10 and
# Debian 12's 6.1 and 6.12 guests) as part of `make test`: runs
# tests/lab/test_drivers.sh and passes its PASS/FAIL/SKIP lines
# (lab_<kernel>_<disk>_<check>, see that script) and notes through. SKIP
# lab_drivers when LAB=0 is set, when not root, or when qemu-system-x86_64 is
# still missing after tests/lab/fetch.sh (which installs it with apt). A kernel
# that cannot be fetched is SKIPped by test_drivers.sh.
#
# Takes 80-125 s warm for the four boots (5.10, 6.1, 6.12+guest, 6.12+kprobe: 16-33 s
# each, 6.12+guest up to ~55 s with its host daemon, plus the host column), 91-106 s in
# an empty LAB_DIR with the download cache full (tests/lab/fetch.sh: a fresh clone on
# a machine that fetched before), ~170 s with both empty (downloads); boots
# that hang cost LAB_TIMEOUT (90 s) each, and the runner's IT_TIMEOUT (300 s)
# ends a run where more than two hang (every check not reported then FAILs).
#
# Environment: LAB=0 (skip), LAB_KERNELS (default "5.10 6.1 6.12+guest 6.12+kprobe"),
# LAB_FULL=1 (below), and what tests/lab/test_drivers.sh reads (LAB_DRV_COUNT,
# LAB_TIMEOUT, LAB_DIR, ...).
#
# The same script, as test_lab_modes.sh (a symlink), runs tests/lab/test_modes.sh
# instead: host and guest modes over virtio-serial and tcp, 2 boots of 6.12.
# As test_lab_btt.sh (a symlink) it runs tests/lab/test_btt.sh: iotracer's Q2C and
# D2C against blktrace + btt on the same requests, 1 boot of 6.12 (~50 s).
# As test_lab_wback.sh (a symlink) it runs tests/lab/test_wback.sh: writeback bytes
# per cgroup against the guest's io.stat (cgroup v2 with +io +memory), 1 boot of 6.12.
# As test_lab_blame.sh (a symlink) it runs tests/lab/test_blame_host.sh: host mode's
# --blame, an aggressor guest named as the culprit of a victim guest's requests on one
# host loop device, 2 guests booted side by side (~60 s).
# As test_lab_stacks.sh (a symlink) it runs tests/lab/test_stacks.sh: the storage stacks
# (partition, dm-linear, dm-crypt, LVM on dm-crypt, md raid1, raid5) in one boot of 6.1
# and one of 6.12 (5.10 too with LAB_FULL=1).
# As test_lab_fileio.sh (a symlink) it runs tests/lab/test_fileio.sh on 6.12 (fentry;
# LAB_FIO_KERNELS): the syscall layer's file path, no program for non-file calls, and
# the tax with and without iotracer (`# tax` notes), 1 boot (~55 s under TCG).
#
# LAB_FULL=1 adds the 6.12 boot with kprobes forced (6.12+kprobe: the kprobe method where
# fentry works; 5.10's boot runs the kprobe method in make test) and the arm64 guest (Debian 12's 6.1 arm64 kernel, QEMU virt under
# TCG: ~50 s to the driver test; on a machine without the arm64 toolchain
# fetch.sh runs `make deps-arm64`, which adds the arm64 dpkg architecture) and
# runs the modes test on 5.10 (~65 s) and on arm64 (~130 s) too: tests/run.sh then
# gives each script 900 s, not 300 (the 2026-11-29 run hit 300 s in test_lab_modes
# before the arm64 guest had booted).
set -u
here=$(cd "$(dirname "$0")" && pwd)
case $(basename "$0") in
test_lab_modes.sh) target=test_modes.sh name=lab_modes ;;
test_lab_btt.sh) target=test_btt.sh name=lab_btt ;;
test_lab_wback.sh) target=test_wback.sh name=lab_wback ;;
test_lab_blame.sh) target=test_blame_host.sh name=lab_blame_host ;;
test_lab_stacks.sh) target=test_stacks.sh name=lab_stacks ;;
test_lab_fileio.sh)
	target=test_fileio.sh name=lab_fileio
	export LAB_FIO_KERNELS=${LAB_FIO_KERNELS:-6.12}
	;;
*) target=test_drivers.sh name=lab_drivers ;;
esac
lab=$here/../lab
# shellcheck source=/dev/null # tests/lab/lib.sh, resolved at run time
. "$lab/lib.sh"

skip() {
	printf 'SKIP %s: %s\n' "$name" "$1"
	exit 0
}

[[ ${LAB:-1} == 0 ]] && skip "LAB=0 in the environment"
# host mode's --blame over two guests: a configuration (~50 s) LAB_FULL=1 runs
[[ $target == test_blame_host.sh && ${LAB_FULL:-0} != 1 ]] &&
	skip "host mode's blame over two guests runs with LAB_FULL=1 (~50 s; make test's 25 min)"
[[ $(id -u) == 0 ]] || skip "needs root (fetch.sh installs QEMU with apt; the host column runs iotracer)"

# A TERM/INT from the runner's timeout goes to the whole process group, so the
# child has it too and is cleaning up (killing QEMU): let it finish; forward
# the signal only if it is still running 10 s later (we alone were signalled).
# shellcheck disable=SC2317 # invoked through the traps
stop() {
	trap '' INT TERM HUP
	local i
	if [[ -n $LAB_CHILD ]]; then
		for ((i = 0; i < 100; i++)); do
			kill -0 "$LAB_CHILD" 2>/dev/null || break
			sleep 0.1
		done
		kill -TERM "$LAB_CHILD" 2>/dev/null
		wait "$LAB_CHILD" 2>/dev/null
	fi
	exit "$1"
}
trap 'stop 130' INT
trap 'stop 143' TERM
trap 'stop 129' HUP

if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
	log=$(mktemp "${TMPDIR:-/tmp}/iotracer-lab-fetch.XXXXXX") || skip "mktemp failed"
	frc=0
	# shellcheck disable=SC2086 # space separated list
	lab_step "$lab/fetch.sh" ${LAB_KERNELS:-} >/dev/null 2>"$log" || frc=$?
	why=$(grep -E 'unavailable:|error:' "$log" | tail -n 1 | sed 's/^\[lab\] //')
	rm -f "$log"
	command -v qemu-system-x86_64 >/dev/null 2>&1 ||
		skip "qemu-system-x86_64 not available after tests/lab/fetch.sh (rc $frc${why:+: $why})"
fi

t0=$(date +%s)
rc=0
if [[ ${LAB_FULL:-0} == 1 && -z ${LAB_KERNELS:-} ]]; then
	export LAB_KERNELS="$LAB_DRIVERS_DEFAULT 6.12+kprobe 6.1-arm64"
fi
lab_step "$lab/$target" 2>&1 || rc=$?
if [[ $target == test_modes.sh && ${LAB_FULL:-0} == 1 ]]; then
	LAB_MODES_KERNEL=5.10 lab_step "$lab/$target" 2>&1 || rc=$?
	LAB_MODES_KERNEL=6.1-arm64 lab_step "$lab/$target" 2>&1 || rc=$?
fi
printf '# lab: %s took %d s (rc %d)\n' "$target" "$(($(date +%s) - t0))" "$rc"
exit "$rc"
