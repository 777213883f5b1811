# shellcheck shell=sh source-path=SCRIPTDIR
# Guest side of the blktrace/btt comparison (runs as /lab/run.sh under busybox
# sh; the host side is tests/lab/test_btt.sh). Needs /lab/guest-lib.sh,
# /lab/iotracer (static) and Debian's /lab/blktrace with its loader and
# libraries (/lab/ld-linux-x86-64.so.2, libc.so.6, libpthread.so.0: the guest
# has no glibc, so blktrace runs through the loader), all from LAB_EXTRA.
#
# 1. starts `blktrace -d /dev/vda -D /tmp/btt/bt -o vda` (per-CPU binary files
#    in tmpfs) and waits until its per-CPU threads hold the relay files open
#    (blktrace starts the trace right after that), then starts
#    `iotracer -q --no-live -j out.json -d vda` (the default profile) and
#    waits until it attached (wait_attached); LAB_G_BTT_ORDER=iotracer starts
#    them the other way round (which one runs first on each tracepoint);
# 2. runs the loads, each between `step P_load_start` and `step P_load_end`:
#      qd1  ioload randread then randwrite, LAB_G_BTT_COUNT ops each, 4 KiB
#           O_DIRECT, seed 42, below sector LAB_G_BTT_SPLIT (65536: the
#           first half of the 64 MiB vda)
#      qdN  LAB_G_BTT_QD ioload processes at once (queue depth up to N), each
#           in its own slice of the second half, randread then randwrite,
#           LAB_G_BTT_COUNT / N ops each (seeds 101...)
#    The loads use disjoint halves of the disk so the host can tell the
#    requests of each apart by sector; every ioload process is QD1 in its
#    own slice, so one (op, sector) is never in flight twice.
# 3. stops iotracer, then blktrace (SIGTERM, SIGKILL after 30 s; blktrace then
#    stops the trace, drains the buffers and prints its event and drop counts);
# 4. sends out.json, iotracer.err, ioload.txt, steps.txt, blktrace.out
#    (blktrace's stdout+stderr) and bt/vda.blktrace.CPU back as one bundle
#    (send_bundle).
# Plain lines before the bundle: `step NAME UPTIME_S`, `attach_lines N`,
# `ioload P JSON` (the oracle of the op counts), `iotracer_rc N`,
# `blktrace_rc N`, blktrace's counts.
# Exit status: 0 when both tracers ran and exited 0 and every ioload run had no
# error; 1 otherwise (the bundle is sent in every case).
set -u
# shellcheck source=guest-lib.sh # /lab/guest-lib.sh in the guest
. /lab/guest-lib.sh
count=${LAB_G_BTT_COUNT:-600}
qd=${LAB_G_BTT_QD:-4}
guest_init /tmp/btt
ncpu=$(grep -c '^processor' /proc/cpuinfo)
half=$((${LAB_G_BTT_SPLIT:-65536} * 512)) # bytes: qd1 below, qdN above (64 MiB disk)

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

load_qd1() {
	for m in randread randwrite; do
		run_ioload qd1 -n "$count" -m "$m" -s 42 -o 0 -S "$half"
	done
}

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
		for w in $pids; do wait "$w" || rc=1; done
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

# start_blktrace: blktrace in the background (bpid); status 1 if it did not start
start_blktrace() {
	mkdir -p "$W/bt"
	/lab/ld-linux-x86-64.so.2 --library-path /lab /lab/blktrace -d /dev/vda \
		-D "$W/bt" -o vda >"$W/blktrace.out" 2>&1 &
	bpid=$!
	# blktrace sets the trace up (its tracepoint probes are registered then),
	# starts one thread per CPU, each opens its relay file
	# (/sys/kernel/debug/block/vda/traceN), and once all of them run it starts
	# the trace (BLKTRACESTART): wait for the open files, then one poll tick
	# more. The host's count check proves nothing was missed.
	i=0
	while [ "$(relays "$bpid")" -lt "$ncpu" ]; do
		if ! kill -0 "$bpid" 2>/dev/null || [ "$i" -ge 150 ]; then
			echo "blktrace did not start: $(head -c 300 "$W/blktrace.out")"
			return 1
		fi
		sleep 0.2
		i=$((i + 1))
	done
	sleep 0.2
	step blktrace_started
}

start_iotracer() {
	/lab/iotracer -q --no-live -j "$W/out.json" -d vda >"$W/iotracer.out" 2>"$W/iotracer.err" &
	pid=$!
	wait_attached "$pid" "$W/out.json" || { echo "iotracer did not attach"; return 1; }
	step attached
}

# Both tracers stamp on the same tracepoints; the one attached first runs
# first there, and the other's clock reads come after its run. blktrace first
# (the default): iotracer's stamps are late by blktrace's probe, the same code
# at Q, D and C; iotracer first: blktrace's are late by iotracer's programs,
# which differ per tracepoint (docs/lab.md, the btt test).
step start
bpid=""
pid=""
started=""
if [ "${LAB_G_BTT_ORDER:-blktrace}" = iotracer ]; then
	start_iotracer && start_blktrace && started=1
else
	start_blktrace && start_iotracer && started=1
fi
if [ -n "$started" ]; then
	for p in qd1 "qd$qd"; do
		step "${p}_load_start"
		if [ "$p" = qd1 ]; then load_qd1; else load_qdn; fi
		step "${p}_load_end"
	done
else
	rc=1
fi
for t in iotracer blktrace; do
	if [ "$t" = iotracer ]; then p=$pid; else p=$bpid; fi
	[ -n "$p" ] || continue
	stop_pid "$p" "$t"
	echo "${t}_rc $stop_rc"
	[ "$stop_rc" -eq 0 ] || rc=1
done
step stopped
cat "$W/blktrace.out"
[ -s "$W/iotracer.err" ] && grep -iE 'error|fail|warn|abort|assert' "$W/iotracer.err" | head -n 5

# shellcheck disable=SC2046 # one word per file name (no spaces in them)
send_bundle "$W" out.json iotracer.err ioload.txt steps.txt \
	blktrace.out $(cd "$W" && ls bt/vda.blktrace.* 2>/dev/null)
exit "$rc"
