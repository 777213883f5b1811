# shellcheck shell=sh
# Guest side of the blktrace/btt comparison (runs as /lab/run.sh under busybox
# sh; the host side is tests/lab/test_btt.sh). Needs /lab/guest-lib.sh,
# /lab/iotracer (static) and Debian's /lab/blktrace with its loader and
# libraries (/lab/ld-linux-x86-64.so.2, libc.so.6, libpthread.so.0: the guest
# has no glibc, so blktrace runs through the loader), all from LAB_EXTRA.
#
# 1. starts `iotracer -q --no-live -j out.json -d vda` (the default profile)
#    and waits until it attached (wait_attached);
# 2. per phase, starts `blktrace -d /dev/vda -D /tmp/btt/PHASE -o vda` (per-CPU
#    binary files in tmpfs), waits until its per-CPU threads hold the relay
#    files open (blktrace starts the trace right after that), runs the
#    phase's load, stops blktrace (SIGTERM: it stops the trace, drains the
#    buffers and prints its event and drop counts):
#      qd1  ioload randread then randwrite, LAB_G_BTT_COUNT ops each, 4 KiB
#           O_DIRECT, seed 42, below sector LAB_G_BTT_SPLIT (65536: the
#           first half of the 64 MiB vda)
#      qdN  LAB_G_BTT_QD ioload processes at once (queue depth up to N), each
#           in its own slice of the second half, randread then randwrite,
#           LAB_G_BTT_COUNT / N ops each (seeds 101...)
#    The phases use disjoint halves of the disk so the host can tell
#    iotracer's records apart by sector; every ioload process is QD1 in its
#    own slice, so one (op, sector) is never in flight twice.
# 3. stops iotracer (SIGTERM, SIGKILL after 30 s);
# 4. sends out.json, iotracer.err, ioload.txt, steps.txt, the blktrace
#    outputs PHASE/vda.blktrace.CPU and PHASE.bt (blktrace's stdout+stderr)
#    back as one bundle (send_bundle).
# Plain lines before the bundle: `step NAME UPTIME_S`, `attach_lines N`,
# `ioload PHASE JSON` (the oracle of the op counts), `blktrace PHASE rc N`,
# `iotracer_rc N`.
# Exit status: 0 when both tracers ran and exited 0 and every ioload run had no
# error; 1 otherwise (the bundle is sent in every case).
set -u
. /lab/guest-lib.sh
count=${LAB_G_BTT_COUNT:-300}
qd=${LAB_G_BTT_QD:-4}
W=/tmp/btt
mkdir -p "$W"
: >"$W/ioload.txt"
: >"$W/steps.txt"
rc=0
ncpu=$(grep -c '^processor' /proc/cpuinfo)
half=$((${LAB_G_BTT_SPLIT:-65536} * 512)) # bytes: qd1 below, qdN above (64 MiB disk)

step() { echo "step $1 $(cut -d' ' -f1 /proc/uptime)" | tee -a "$W/steps.txt"; }

# shellcheck disable=SC2317 # the loads are called through phase's second argument
# run_ioload PHASE ARGS...: one run, its JSON line kept as the oracle; its
# exit status
run_ioload() {
	_p=$1
	shift
	_o=$(ioload -d /dev/vda -b 4096 "$@" 2>&1)
	_r=$?
	echo "ioload $_p $_o" | tee -a "$W/ioload.txt"
	[ "$_r" -eq 0 ] || rc=1
	return "$_r"
}

# shellcheck disable=SC2317
load_qd1() {
	for m in randread randwrite; do
		run_ioload qd1 -n "$count" -m "$m" -s 42 -o 0 -S "$half"
	done
}

# shellcheck disable=SC2317
load_qdn() {
	slice=$((half / qd / 4096 * 4096))
	for m in randread randwrite; do
		pids=""
		j=0
		while [ "$j" -lt "$qd" ]; do
			run_ioload "qd$qd" -n "$((count / qd))" -m "$m" -s "$((101 + j))" \
				-o "$((half + j * slice))" -S "$slice" &
			pids="$pids $!"
			j=$((j + 1))
		done
		for p in $pids; do wait "$p" || rc=1; done
	done
}

# relays PID: the relay files of vda's trace (traceN) process PID holds open
relays() {
	_c=0
	for _f in /proc/"$1"/fd/*; do
		case $(readlink "$_f" 2>/dev/null) in */block/vda/trace*) _c=$((_c + 1)) ;; esac
	done
	echo "$_c"
}

# phase NAME LOADFN: blktrace around one load
phase() {
	mkdir -p "$W/$1"
	/lab/ld-linux-x86-64.so.2 --library-path /lab /lab/blktrace -d /dev/vda \
		-D "$W/$1" -o vda >"$W/$1.bt" 2>&1 &
	bpid=$!
	# blktrace sets the trace up, starts one thread per CPU, each opens its
	# relay file (/sys/kernel/debug/block/vda/traceN), and once all of them
	# run it starts the trace (BLKTRACESTART): wait for the open files, then
	# one poll tick more. The host's count check proves nothing was missed.
	i=0
	while [ "$(relays "$bpid")" -lt "$ncpu" ]; do
		if ! kill -0 "$bpid" 2>/dev/null || [ "$i" -ge 150 ]; then
			echo "blktrace $1 did not start: $(head -c 300 "$W/$1.bt")"
			rc=1
			stop_pid "$bpid" blktrace
			return
		fi
		sleep 0.2
		i=$((i + 1))
	done
	sleep 0.2
	step "$1_load_start"
	$2
	step "$1_load_end"
	stop_pid "$bpid" blktrace
	# shellcheck disable=SC2154 # stop_rc: set by stop_pid (guest-lib.sh)
	echo "blktrace $1 rc $stop_rc"
	[ "$stop_rc" -eq 0 ] || rc=1
	cat "$W/$1.bt"
}

step start
/lab/iotracer -q --no-live -j "$W/out.json" -d vda >"$W/iotracer.out" 2>"$W/iotracer.err" &
pid=$!
if wait_attached "$pid" "$W/out.json"; then
	step attached
	phase qd1 load_qd1
	phase "qd$qd" load_qdn
else
	echo "iotracer did not attach"
	rc=1
fi
stop_pid "$pid" iotracer
echo "iotracer_rc $stop_rc"
[ "$stop_rc" -eq 0 ] || rc=1
step stopped
[ -s "$W/iotracer.err" ] && grep -iE 'error|fail|warn|abort|assert' "$W/iotracer.err" | head -n 5

# shellcheck disable=SC2046 # one word per file name (no spaces in them)
send_bundle "$W" out.json iotracer.err ioload.txt steps.txt \
	$(cd "$W" && ls qd*.bt qd*/vda.blktrace.* 2>/dev/null)
exit "$rc"
