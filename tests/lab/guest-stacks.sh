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
# Then `iotracer -q --no-live -l syscall,fs,sched,block,stack --syscall-hooks raw
# --blame -j out.json` (every device; no driver layer and the raw syscall pair: the
# driver hooks and the file path's probing (kallsyms) only slow the attach under
# TCG), blktrace started before it on lin's and crypt's devices, and per
# setup, between `step S_start` and `step S_end`, one fio with four jobs on its
# top device: direct randread and randwrite (LAB_G_STK_IOS 4 KiB ops each),
# buffered write (8 KiB in 4 KiB, end_fsync) and buffered read (32 KiB, the
# cache invalidated first): small, so that no request holds more block requests
# than a record lists (16).
# Each device's /sys/block stat before and after each setup's runs goes to
# stat.txt (`S before|after NAME MAJ:MIN fields...`). The bundle: out.json,
# iotracer.err, fio-S.json, stat.txt, devs.txt (`NAME MAJ:MIN`),
# steps.txt.
# Then the cost (BPF stats on, bpftool's sums of every program's runs and run
# time): fio's direct randread on bare sda (past the stacks' ranges) and on
# dm-linear over it, in cost.txt (`cost NAME IOS RUNS0 NS0 RUNS1 NS1`).
# Exit status 0 when every stack was made and every run went, 1 otherwise.
set -u
# shellcheck source=guest-lib.sh # /lab/guest-lib.sh in the guest
. /lab/guest-lib.sh
guest_init /tmp/stk
ios=${LAB_G_STK_IOS:-100}
setups=${LAB_G_STK_SETUPS:-part lin crypt lvc r1 r5}
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
export DM_DISABLE_UDEV=1

run() {
	_p=$1
	shift
	/lab/ld-linux-x86-64.so.2 --library-path /lab "/lab/$_p" "$@"
}
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

# fio_setup SETUP: fio's four jobs on $top, one after the other (stonewall),
# one JSON (jobs[] in that order: dr, dw, bw, br)
fio_setup() {
	if ! fio --output-format=json --output="$W/fio-$1.json" --filename="$top" \
		--ioengine=psync --bs=4k --size=8M \
		--name=dr --direct=1 --rw=randread --number_ios="$ios" \
		--name=dw --stonewall --direct=1 --rw=randwrite --number_ios="$ios" \
		--name=bw --stonewall --rw=write --size=8k --end_fsync=1 \
		--name=br --stonewall --rw=read --size=32k --invalidate=1 >>"$W/fio.err" 2>&1; then
		echo "fio $1 failed: $(tail -n 2 "$W/fio.err")"
		rc=1
	fi
}

# cost_sum: the run count and run time of the block and stack layers' BPF programs
# (bpftool, stats on; names cut to 15 characters: btf_block_bio_q, btf_block_rq_co...).
# The syscall layer's runs are the same for both devices (and with the raw pair, every
# syscall of the guest's: fio's start, bpftool's own), so they stay out.
cost_sum() {
	run bpftool prog show -j 2>/dev/null | tr ',{}' '\n' | awk -F: '
		$1 ~ /"name"/ { cur = $2 }
		cur ~ /block|bio/ && $1 ~ /"run_cnt"/ { r += $2 }
		cur ~ /block|bio/ && $1 ~ /"run_time_ns"/ { t += $2 }
		END { print r + 0, t + 0 }'
}

# cost_run NAME DEV OFFSET: BPF runs and ns over fio's direct randread on DEV
cost_run() {
	_c0=$(cost_sum)
	fio --name="cost-$1" --filename="$2" --ioengine=psync --direct=1 --rw=randread --bs=4k \
		--offset="$3" --size=8M --number_ios="$ios" --output-format=json \
		--output="$W/fio-cost-$1.json" >>"$W/fio.err" 2>&1 || rc=1
	echo "cost $1 $ios $_c0 $(cost_sum)" | tee -a "$W/cost.txt"
}

# blktrace (the btt oracle of the stack stages) on lin's and crypt's devices, from
# before iotracer's start to the end of crypt's runs: per-CPU binary files in bt-bt/
bpid=""
# relays_open PID: blktrace's relay files (/sys/kernel/debug/block/DEV/traceN) PID holds open
relays_open() {
	_c=0
	for _f in /proc/"$1"/fd/*; do
		case $(readlink "$_f" 2>/dev/null) in */trace[0-9]*) _c=$((_c + 1)) ;; esac
	done
	echo "$_c"
}
bt_start() { # SETUP DEV...
	_s=$1
	shift
	mkdir -p "$W/bt-$_s"
	_args=""
	for _d in "$@"; do _args="$_args -d $_d"; done
	# shellcheck disable=SC2086 # one word per option and device (no spaces in them)
	/lab/ld-linux-x86-64.so.2 --library-path /lab /lab/blktrace -D "$W/bt-$_s" $_args \
		>"$W/blktrace-$_s.out" 2>&1 &
	bpid=$!
	# started once every per-CPU thread holds its relay file open (guest-btt.sh)
	_want=$(($# * $(grep -c '^processor' /proc/cpuinfo)))
	_i=0
	while [ "$(relays_open "$bpid")" -lt "$_want" ]; do
		if ! kill -0 "$bpid" 2>/dev/null || [ "$_i" -ge 150 ]; then
			echo "blktrace did not start: $(head -c 300 "$W/blktrace-$_s.out")"
			bpid=""
			rc=1
			return 1
		fi
		sleep 0.2
		_i=$((_i + 1))
	done
	sleep 0.2
}
bt_stop() {
	[ -n "$bpid" ] || return 0
	stop_pid "$bpid" blktrace
	echo "blktrace_rc $stop_rc"
	[ "$stop_rc" -eq 0 ] || rc=1
	bpid=""
}

# LAB_G_STK_SHOW=1 (the closing note's screens, not in make test): `iotracer top -b`
# over the raid5 run, and a recording of the whole run for `iotracer report`
tpid=""
top_start() {
	[ "${LAB_G_STK_SHOW:-0}" = 1 ] || return 0
	/lab/iotracer top -b -i 3s -d md5,vdd,vde,vdf >"$W/top.txt" 2>&1 &
	tpid=$!
	_i=0
	while ! grep -q '^iotracer top' "$W/top.txt" && [ "$_i" -lt 300 ]; do
		sleep 0.2
		_i=$((_i + 1))
	done
}
top_stop() {
	[ -n "$tpid" ] || return 0
	sleep 3
	kill -INT "$tpid"
	wait "$tpid"
}

# the cgroups phase (on the dm-crypt setup): a writer in /cg/wr and a reader in
# /cg/rd on /dev/mapper/crypt at once; each cgroup's io.stat before and after
# (iostat.txt: `before|after NAME io.stat-line`), their ids (cg.txt)
CG=/cg
cg_setup() {
	mkdir -p "$CG" && mount -t cgroup2 none "$CG" &&
		echo "+io +memory" >"$CG/cgroup.subtree_control" && mkdir "$CG/rd" "$CG/wr" || return 1
	for n in rd wr; do echo "cg $n $(stat -c %i "$CG/$n")" >>"$W/cg.txt"; done
}
cg_iostat() {
	for n in rd wr; do sed "s|^|$1 $n |" "$CG/$n/io.stat" >>"$W/iostat.txt"; done
}
# cg_fio CG NAME ARGS...: fio in cgroup CG (its shell moves itself, then execs)
cg_fio() {
	_g=$1
	_n=$2
	shift 2
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG/$_g" /tmp/fiobin/fio \
		--library-path /lab /lab/fio --name="$_n" --filename=/dev/mapper/crypt \
		--ioengine=psync --direct=1 --bs=4k --size=8M --output-format=json \
		--output="$W/fio-cg-$_n.json" "$@" >>"$W/fio.err" 2>&1
}
cg_run() {
	[ -b /dev/mapper/crypt ] || return 0
	cg_setup || { echo "cannot make the cgroups"; rc=1; return 1; }
	sync
	cg_iostat before
	step cg_start
	# the writer runs 4 s; the reader starts once the writer's IO shows in its io.stat
	cg_fio wr wr --rw=randwrite --numjobs=2 --offset=8M --time_based --runtime=4s &
	_w=$!
	_i=0
	while ! grep -q 'wbytes=[1-9]' "$CG/wr/io.stat" && [ "$_i" -lt 100 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	cg_fio rd rd --rw=randread --number_ios="$ios" || rc=1
	wait "$_w" || rc=1
	sleep 0.3
	step cg_end
	cg_iostat after
}

step start
: >"$W/cg.txt"
: >"$W/iostat.txt"
: >"$W/top.txt"
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
# blktrace first, so that its probes run before iotracer's on each tracepoint (as
# guest-btt.sh): on lin's and crypt's devices, until crypt's runs are over
btdevs=""
[ -b /dev/mapper/lin ] && btdevs="/dev/mapper/lin /dev/vda"
[ -b /dev/mapper/crypt ] && btdevs="$btdevs /dev/mapper/crypt"
# shellcheck disable=SC2086 # one word per device
[ -n "$btdevs" ] && bt_start bt $btdevs /dev/sda && step bt_started
rec=""
[ "${LAB_G_STK_SHOW:-0}" = 1 ] && mkdir -p "$W/rec" && rec="--record $W/rec"
# shellcheck disable=SC2086 # $rec: empty, or the option and its directory
/lab/iotracer -q --no-live -l syscall,fs,sched,block,stack --syscall-hooks raw --blame \
	-j "$W/out.json" $rec \
	>"$W/iotracer.out" 2>"$W/iotracer.err" &
pid=$!
if wait_attached "$pid" "$W/out.json"; then
	step attached
	for s in $made; do
		top=$(awk -v s="$s" '$1 == "stack" && $2 == s { print $3 }' "$W/devs.txt")
		sync
		[ "$s" = r5 ] && top_start
		stats "$s" before
		step "${s}_start"
		fio_setup "$s"
		sleep 0.3
		step "${s}_end"
		stats "$s" after
		# blktrace ends with crypt's runs, or lin's without crypt
		if [ "$s" = crypt ] || { [ "$s" = lin ] && [ ! -b /dev/mapper/crypt ]; }; then
			bt_stop
		fi
		[ "$s" = r5 ] && top_stop
	done
	case " $made " in *" crypt "*) cg_run ;; esac
	# the cost: bare sda (past the stacks' ranges) against dm-linear on it, twice each
	if [ -n "${LAB_G_STK_COST:-1}" ] && echo 1 >/proc/sys/kernel/bpf_stats_enabled &&
		[ -b /dev/mapper/lin ]; then
		cost_run bare /dev/sda 48M
		cost_run lin /dev/mapper/lin 0
		echo 0 >/proc/sys/kernel/bpf_stats_enabled
		step cost_end
	fi
else
	echo "iotracer did not attach"
	rc=1
fi
stop_iotracer "$pid"
[ -s "$W/iotracer.err" ] && grep -iE 'error|fail|warn|abort|assert|stack' "$W/iotracer.err" | head -n 12
# shellcheck disable=SC2046 # one word per file name
send_bundle "$W" out.json iotracer.err stat.txt devs.txt steps.txt fio.err cost.txt top.txt \
	cg.txt iostat.txt blktrace-bt.out \
	$(cd "$W" && ls bt-*/* 2>/dev/null) \
	$(cd "$W" && ls rec/* 2>/dev/null) \
	$(cd "$W" && ls fio-*.json 2>/dev/null)
exit "$rc"
