#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# run.sh [SERIES...]   (default: $LAB_KERNELS or "5.10 6.1 6.12")
#
# The lab smoke test: for each guest kernel series, fetch (cached), build the
# initramfs (cached), boot the guest with tests/lab/guest-smoke.sh and check
# what came back: the script reached its end marker; tracepoint groups nvme,
# scsi and block exist; /sys/kernel/btf/vmlinux exists; kprobe_events exists;
# and on each of the three disks (nvme0n1, sda, vda) ioload's randwrite and
# randread JSON report ops == LAB_COUNT and errors == 0.
#
# Prints one line per kernel for the test runner:
#   PASS lab_boot_<series>
#   FAIL lab_boot_<series>: <why>
#   SKIP lab_boot_<series>: <reason>     (no QEMU, no kernel package, ...)
# plus "# ..." detail lines (timings, tracepoints, hookable symbols).
# Exit 0 unless something FAILed. Outputs: $LAB_DIR/runs/<series>/.
#
# Environment: LAB_DIR, LAB_KERNELS, LAB_COUNT (256 ops per ioload run),
# LAB_BS (4096), and everything boot.sh reads (LAB_TIMEOUT, LAB_EXTRA, ...).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

count=${LAB_COUNT:-256}
bs=${LAB_BS:-4096}
# Passed to the guest script (boot.sh exports LAB_G_* into the guest).
export LAB_G_COUNT=$count LAB_G_BS=$bs
if [[ $# -eq 0 ]]; then
	# shellcheck disable=SC2086 # space separated list
	set -- ${LAB_KERNELS:-$LAB_SERIES_DEFAULT}
fi

failed=0
say() { printf '%s\n' "$*"; }

# shellcheck disable=SC2317 # invoked through the trap
stop() {
	trap '' INT TERM # let the child's own cleanup finish
	[[ -z $LAB_CHILD ]] || { kill -TERM "$LAB_CHILD" 2>/dev/null || true; wait "$LAB_CHILD" 2>/dev/null || true; }
	exit "$1"
}
trap 'stop 130' INT
trap 'stop 143' TERM

# Value of an integer field in a flat JSON line.
jnum() { sed -n "s/.*\"$2\":\\(-\\{0,1\\}[0-9][0-9]*\\).*/\\1/p" <<<"$1"; }

one() {
	local s=$1 name=lab_boot_$1 out t0 tf ti frc=0 irc=0 brc=0 reason why="" line
	out=$LAB_DIR/runs/$s
	mkdir -p "$out"
	t0=$(lab_now)

	# 1. fetch (tools, busybox, kernel): exit 3 means not available here.
	lab_step "$LAB_SRC/fetch.sh" "$s" >"$out/fetch.out" 2>"$out/fetch.log" || frc=$?
	tf=$(lab_since "$t0")
	if [[ $frc -ne 0 ]]; then
		reason=$(grep -E 'unavailable:|error:' "$out/fetch.log" | tail -n 1 | sed 's/^\[lab\] //')
		if [[ $frc -eq 3 ]]; then
			say "SKIP $name: ${reason:-fetch unavailable}"
		else
			say "FAIL $name: fetch failed (rc $frc): ${reason:-see $out/fetch.log}"
			failed=1
		fi
		return 0
	fi

	# 2. initramfs (boot.sh would build it too; done here to time it).
	t1=$(lab_now)
	lab_step "$LAB_SRC/initramfs.sh" "$s" >/dev/null 2>"$out/initramfs.log" || irc=$?
	ti=$(lab_since "$t1")
	if [[ $irc -ne 0 ]]; then
		reason=$(grep -E 'unavailable:|error:' "$out/initramfs.log" | tail -n 1 | sed 's/^\[lab\] //')
		if [[ $irc -eq 3 ]]; then
			say "SKIP $name: ${reason:-initramfs prerequisites unavailable}"
		else
			say "FAIL $name: initramfs build failed (rc $irc): ${reason:-see $out/initramfs.log}"
			failed=1
		fi
		return 0
	fi

	# 3. boot with the smoke script.
	lab_step "$LAB_SRC/boot.sh" "$s" "$LAB_SRC/guest-smoke.sh" "$out" \
		>/dev/null 2>"$out/boot.log" || brc=$?
	if [[ $brc -eq 3 ]]; then
		reason=$(grep -v '^\[lab\] boot' "$out/boot.log" | tail -n 1 | sed 's/^\[lab\] //')
		say "SKIP $name: ${reason:-cannot boot here}"
		return 0
	fi
	local g=$out/guest.out ready wall
	ready=$(sed -n 's/^ready_s=//p' "$out/result" 2>/dev/null || true)
	wall=$(sed -n 's/^wall_s=//p' "$out/result" 2>/dev/null || true)
	say "# $name: kernel $(sed -n 's/^kver=//p' "$out/result" 2>/dev/null) fetch ${tf}s initramfs ${ti}s ready ${ready:-?}s boot-wall ${wall:-?}s total $(lab_since "$t0")s"

	case $brc in
	0 | 1) ;;
	2) why="guest did not reach its end marker ($(tail -n 1 "$out/boot.log" | sed 's/^\[lab\] //'))" ;;
	*) why="boot.sh failed (rc $brc): $(tail -n 1 "$out/boot.log" | sed 's/^\[lab\] //')" ;;
	esac

	if [[ -z $why ]]; then
		local grp
		for grp in nvme scsi block; do
			line=$(grep "^tp $grp " "$g" || true)
			say "# $name: ${line:-tp $grp ?}"
			[[ $line == "tp $grp yes"* ]] || why="$why tracepoint group $grp missing;"
		done
		grep -q '^btf vmlinux yes' "$g" || why="$why no /sys/kernel/btf/vmlinux;"
		grep -q '^kprobe_events yes' "$g" || why="$why no kprobe_events;"
		say "# $name: $(grep -E '^(btf|kprobe|vsock)' "$g" | tr '\n' ' ')"
		say "# $name: hookable: $(awk '$1 == "sym" && $3 != "-" { printf "%s%s ", $2, ($4 == "-" ? "(no-ftrace)" : "") }' "$g")"
		say "# $name: absent: $(awk '$1 == "sym" && $3 == "-" { printf "%s ", $2; n++ } END { if (!n) printf "none" }' "$g")"
		local d m j ops errs
		for d in /dev/nvme0n1 /dev/sda /dev/vda; do
			for m in randwrite randread; do
				j=$(grep "^ioload $d {.*\"mode\":\"$m\"" "$g" | head -n 1 || true)
				j=${j#ioload "$d" }
				if [[ -z $j ]]; then
					why="$why no ioload $m result for $d;"
					continue
				fi
				ops=$(jnum "$j" ops)
				errs=$(jnum "$j" errors)
				say "# $name: ioload $d $m ops=$ops errors=$errs elapsed_ns=$(jnum "$j" elapsed_ns)"
				[[ $ops == "$count" ]] || why="$why $d $m ops $ops != $count;"
				[[ $errs == 0 ]] || why="$why $d $m errors $errs;"
			done
		done
		[[ $brc -eq 0 || -n $why ]] || why="guest script exited non-zero"
	fi

	if [[ -z $why ]]; then
		say "PASS $name"
	else
		say "FAIL $name: ${why# }"
		failed=1
	fi
}

t_all=$(lab_now)
for s in "$@"; do
	one "$s"
done
say "# lab: $* done in $(lab_since "$t_all")s"
exit "$failed"
