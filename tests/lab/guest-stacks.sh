# shellcheck shell=sh source-path=SCRIPTDIR
# Guest side of the stacks test (runs as /lab/run.sh under busybox sh; the host
# side is tests/lab/test_stacks.sh). Needs /lab/guest-lib.sh, /lab/iotracer
# (static), and Debian's dmsetup, mdadm and fio with their loader and
# libraries in /lab (the guest has no glibc: they run through
# /lab/ld-linux-x86-64.so.2), from LAB_EXTRA.
#
# Disks: nvme0n1 (an MBR partition 1, made on the host), sda, vda, and the five
# extra virtio disks of serials labstk1..labstk5 (64 MiB each). The stacks,
# each made before iotracer starts:
#   part    nvme0n1p1                          a partition
#   lin     dm-linear: sda [0, 16M) + vda [0, 16M)   (what LVM makes)
#   crypt   dm-crypt aes-xts-plain64 (a test key) over sda [16M, 48M)
#   lvc     dm-linear over dm-crypt (crypt2) over vda [16M, 48M): LVM on dm-crypt
#   r1      md raid1 over labstk1 + labstk2 (--assume-clean, no bitmap)
#   r5      md raid5 over labstk3..labstk5, 512 KiB chunks (mdadm's default;
#           --assume-clean): the runs' reads cross no chunk (6.1's raid5
#           splits such a read without a block_split event)
# LAB_G_STK_SETUPS (all of them) chooses.
#
# Then `iotracer -q --no-live -j out.json` (every device), and per setup, between
# `step S_start` and `step S_end`, fio on its top device: direct randread
# and randwrite (LAB_G_STK_IOS 4 KiB ops each), buffered write (8 KiB in 4 KiB,
# end_fsync) and buffered read (32 KiB, the cache dropped first): small, so that
# no request holds more block requests than a record lists (16).
# Each device's /sys/block stat before and after each setup's runs goes to
# stat.txt (`S before|after NAME MAJ:MIN fields...`). The bundle: out.json,
# iotracer.err, fio-S-RUN.json, stat.txt, devs.txt (`NAME MAJ:MIN`),
# steps.txt.
# Then the cost (BPF stats on, bpftool's sums of every program's runs and run
# time): fio's direct randread on bare sda (past the stacks' ranges) and on
# dm-linear over it, twice each, in cost.txt (`cost NAME IOS RUNS0 NS0 RUNS1 NS1`).
# Exit status 0 when every stack was made and every run went, 1 otherwise.
set -u
# shellcheck source=guest-lib.sh # /lab/guest-lib.sh in the guest
. /lab/guest-lib.sh
guest_init /tmp/stk
ios=${LAB_G_STK_IOS:-100}
setups=${LAB_G_STK_SETUPS:-part lin crypt lvc r1 r5}
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
export DM_DISABLE_UDEV=1

run() { /lab/ld-linux-x86-64.so.2 --library-path /lab "/lab/$@"; }
# fio through a copy of the loader named fio: its threads' comm is fio
mkdir -p /tmp/fiobin && cp /lab/ld-linux-x86-64.so.2 /tmp/fiobin/fio
fio() { /tmp/fiobin/fio --library-path /lab /lab/fio "$@"; }
dm() { run dmsetup "$@"; }

# by_serial SERIAL: the virtio disk with that serial
by_serial() {
	for _s in /sys/block/vd*/serial; do
		[ "$(cat "$_s" 2>/dev/null)" = "$1" ] && basename "$(dirname "$_s")" && return 0
	done
	return 1
}

# mknodes: device nodes for dm/md devices (no udev): /dev/mapper/NAME and /dev/mdN exist?
dev_of() { # NAME -> /dev node of a dm NAME or mdN
	case $1 in
	md*) echo "/dev/$1" ;;
	*) echo "/dev/mapper/$1" ;;
	esac
}

make_stack() { # SETUP: its top device in $top; status 1 when it could not be made
	case $1 in
	part)
		[ -b /dev/nvme0n1p1 ] || { echo "no /dev/nvme0n1p1"; return 1; }
		top=/dev/nvme0n1p1
		;;
	lin)
		printf '0 32768 linear /dev/sda 0\n32768 32768 linear /dev/vda 0\n' | dm create lin || return 1
		top=/dev/mapper/lin
		;;
	crypt)
		dm create crypt --table "0 65536 crypt aes-xts-plain64 $KEY 0 /dev/sda 32768" || return 1
		top=/dev/mapper/crypt
		;;
	lvc)
		dm create crypt2 --table "0 65536 crypt aes-xts-plain64 $KEY 0 /dev/vda 32768" || return 1
		dm create lvc --table "0 65536 linear /dev/mapper/crypt2 0" || return 1
		top=/dev/mapper/lvc
		;;
	r1)
		run mdadm --create /dev/md1 --run --level=1 --raid-devices=2 --assume-clean \
			--bitmap=none --metadata=1.2 "/dev/$(by_serial labstk1)" \
			"/dev/$(by_serial labstk2)" || return 1
		top=/dev/md1
		;;
	r5)
		run mdadm --create /dev/md5 --run --level=5 --raid-devices=3 --chunk=512 \
			--assume-clean --bitmap=none --metadata=1.2 "/dev/$(by_serial labstk3)" \
			"/dev/$(by_serial labstk4)" "/dev/$(by_serial labstk5)" || return 1
		top=/dev/md5
		;;
	esac
	echo "stack $1 $top" >>"$W/devs.txt"
}

# stats SETUP WHEN: every disk's and partition's and stacked device's stat
stats() {
	for _d in /sys/block/*; do
		_n=$(basename "$_d")
		case $_n in loop* | ram*) continue ;; esac
		echo "$1 $2 $_n $(cat "$_d/dev") $(cat "$_d/stat")" >>"$W/stat.txt"
		for _p in "$_d/$_n"p* "$_d/$_n"[0-9]*; do
			[ -f "$_p/stat" ] || continue
			echo "$1 $2 $(basename "$_p") $(cat "$_p/dev") $(cat "$_p/stat")" >>"$W/stat.txt"
		done
	done
}

fio_run() { # SETUP RUN ARGS...
	_s=$1
	_r=$2
	shift 2
	if ! fio --name="$_s-$_r" --filename="$top" --ioengine=psync --output-format=json \
		--output="$W/fio-$_s-$_r.json" "$@" >>"$W/fio.err" 2>&1; then
		echo "fio $_s $_r failed: $(tail -n 2 "$W/fio.err")"
		rc=1
	fi
}

# cost_sum: the run count and run time of every BPF program (bpftool, stats on)
cost_sum() {
	run bpftool prog show -j 2>/dev/null | tr ',{}' '\n\n\n' |
		awk -F: '$1 ~ /"run_cnt"/ { r += $2 } $1 ~ /"run_time_ns"/ { t += $2 } END { print r + 0, t + 0 }'
}

# cost_run NAME DEV OFFSET: BPF runs and ns over fio's direct randread on DEV
cost_run() {
	_c0=$(cost_sum)
	fio --name="cost-$1" --filename="$2" --ioengine=psync --direct=1 --rw=randread --bs=4k \
		--offset="$3" --size=8M --number_ios="$ios" --output-format=json \
		--output="$W/fio-cost-$1.json" >>"$W/fio.err" 2>&1 || rc=1
	echo "cost $1 $ios $_c0 $(cost_sum)" | tee -a "$W/cost.txt"
}

step start
: >"$W/cost.txt"
: >"$W/stat.txt"
: >"$W/devs.txt"
: >"$W/fio.err"
made=""
for s in $setups; do
	if make_stack "$s"; then made="$made $s"; else echo "cannot make $s" && rc=1; fi
done
# device nodes and names of every block device, for the host's checks
for d in /sys/block/* /sys/block/*/*[0-9]; do
	[ -f "$d/dev" ] || continue
	echo "dev $(basename "$d") $(cat "$d/dev") $(cat "$d/dm/name" 2>/dev/null)" >>"$W/devs.txt"
done
pid=""
/lab/iotracer -q --no-live -l syscall,fs,sched,block,stack -j "$W/out.json" >"$W/iotracer.out" 2>"$W/iotracer.err" &
pid=$!
if wait_attached "$pid" "$W/out.json"; then
	step attached
	for s in $made; do
		top=$(awk -v s="$s" '$1 == "stack" && $2 == s { print $3 }' "$W/devs.txt")
		sync
		stats "$s" before
		step "${s}_start"
		fio_run "$s" dr --direct=1 --rw=randread --bs=4k --size=8M --number_ios="$ios"
		fio_run "$s" dw --direct=1 --rw=randwrite --bs=4k --size=8M --number_ios="$ios"
		fio_run "$s" bw --rw=write --bs=4k --size=8k --end_fsync=1
		echo 3 >/proc/sys/vm/drop_caches
		fio_run "$s" br --rw=read --bs=4k --size=32k --invalidate=1
		sleep 0.3
		step "${s}_end"
		stats "$s" after
	done
	# the cost: bare sda (past the stacks' ranges) against dm-linear on it, twice each
	if [ -n "${LAB_G_STK_COST:-1}" ] && echo 1 >/proc/sys/kernel/bpf_stats_enabled &&
		[ -b /dev/mapper/lin ]; then
		for r in 1 2; do
			cost_run "bare$r" /dev/sda 48M
			cost_run "lin$r" /dev/mapper/lin 0
		done
		echo 0 >/proc/sys/kernel/bpf_stats_enabled
		step cost_end
	fi
else
	echo "iotracer did not attach"
	rc=1
fi
if [ -n "$pid" ]; then
	stop_pid "$pid" iotracer
	echo "iotracer_rc $stop_rc"
	[ "$stop_rc" -eq 0 ] || rc=1
fi
step stopped
[ -s "$W/iotracer.err" ] && grep -iE 'error|fail|warn|abort|assert|stack' "$W/iotracer.err" | head -n 12
# shellcheck disable=SC2046 # one word per file name
send_bundle "$W" out.json iotracer.err stat.txt devs.txt steps.txt fio.err cost.txt \
	$(cd "$W" && ls fio-*.json 2>/dev/null)
exit "$rc"
