# shellcheck shell=sh source-path=SCRIPTDIR
# Guest side of the file path test (runs as /lab/run.sh under busybox sh; the
# host side is tests/lab/test_fileio.sh). Needs /lab/guest-lib.sh,
# /lab/iotracer (static) and /lab/taxload (tests/lab/taxload.c, static).
#
# 1. notax: kernel.bpf_stats_enabled=1; `iotracer -q --no-live -j out.json`
#    (full records, every device); LAB_G_FIO_NOTAX rounds of getppid and of
#    write+read on a pipe, a UNIX socketpair and an eventfd, each `taxload -c`:
#    the run counts of every BPF program right before and after its loop, in
#    the loop's process (no exec or file IO in between: its output is written
#    at its exit); then LAB_G_FIO_FILE rounds of pwrite+pread of a file on a
#    fresh tmpfs, as `taxfile` (a copy of taxload: its own comm) (runs.txt).
#    Then LAB_G_FIO_EXT4 rounds of pwrite + fsync + pread on ext4 (mke2fs on
#    vda), and as many of io_submit + io_getevents of a pread there (taxload
#    -m aio). Their output goes to pipes until all are done: no file IO of the test,
#    nor records for iotracer to write, while they run.
# 2. tax: per tracer (full: the default profile, step 1's iotracer still
#    attached, none, always-on: `--profile always-on`, raw: always-on with
#    --syscall-hooks raw, the raw_syscalls pair), one attach, 2 s and a warm-up of a fifth of
#    LAB_G_FIO_TAX rounds each, then LAB_G_FIO_ROUNDS rounds (raw: one) of
#    taxload syscall, pipe and socket (LAB_G_FIO_TAX rounds each): `tax ROUND
#    TRACER JSON` lines, and `taxcpu ROUND TRACER TICKS`, the tracer's own CPU
#    time over the round's three. An attach and a detach cost ~12 s under TCG
#    and a round's loops under 1 s: the rounds share the tracer's attach (a
#    round a tracer, 7 attaches, took 113 s; an attach each 56 s; with
#    step 1's iotracer as the full one, 2 attaches, 35 s).
# Everything comes back as one bundle (guest-lib.sh send_bundle).
# Exit 0 when every iotracer attached and exited 0 and no loop failed.
set -u
# shellcheck source=guest-lib.sh # /lab/guest-lib.sh in the guest
. /lab/guest-lib.sh
notax=${LAB_G_FIO_NOTAX:-20000}
nfile=${LAB_G_FIO_FILE:-500}
next4=${LAB_G_FIO_EXT4:-200}
ntax=${LAB_G_FIO_TAX:-50000}
rounds=${LAB_G_FIO_ROUNDS:-3}
taxstep=${LAB_G_FIO_TAXSTEP:-1}
guest_init /tmp/fio
# LAB_G_PREFER=kprobe: the kprobe variants of the file path
export IOTRACER_PREFER="${LAB_G_PREFER:-}"

mkdir -p /mnt/t && mount -t tmpfs tmpfs /mnt/t || rc=1
echo 1 >/proc/sys/kernel/bpf_stats_enabled || rc=1
cp /lab/taxload /tmp/taxfile

# start_tracer OUT [ARGS...]: iotracer in the background (pid), waited for.
start_tracer() {
	_o=$1
	shift
	_t0=$(cut -d' ' -f1 /proc/uptime)
	/lab/iotracer -q --no-live -j "$_o" "$@" >/dev/null 2>>"$W/iotracer.err" &
	pid=$!
	if ! wait_attached "$pid" "$_o"; then
		echo "iotracer did not attach"
		rc=1
		return 1
	fi
	# start -> attach lines stable (wait_attached polls every 0.2 s, 0.4 s stable)
	echo "attach_s ${t:-notax}: $(awk -v a="$_t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }')"
	sleep 0.5
}
stop_tracer() {
	_t0=$(cut -d' ' -f1 /proc/uptime)
	stop_pid "$pid" iotracer
	echo "stop_s ${t:-notax}: $(awk -v a="$_t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }')"
	echo "iotracer_rc $stop_rc"
	[ "$stop_rc" -eq 0 ] || rc=1
}

step start
if start_tracer "$W/out.json"; then
	step attached
	sleep 1 # the records of the attach wait's own reads of out.json are written
	# each loop's output goes to a pipe, kept here and written after the loops
	runs=$(for m in syscall pipe socket eventfd; do
		/lab/taxload -c -m $m -n "$notax" || echo "loop_failed $m"
	done)
	fruns=$(/tmp/taxfile -c -m file -n "$nfile" -f /mnt/t/f || echo "loop_failed file")
	# ext4 on vda (busybox's mke2fs makes ext2; the ext4 driver mounts it):
	# its own methods, generic_file_read_iter nested in its buffered read,
	# fsync through vfs_fsync_range
	eruns=""
	aruns=""
	if mke2fs -F /dev/vda >/dev/null 2>&1 && mkdir -p /mnt/e &&
		mount -t ext4 /dev/vda /mnt/e; then
		eruns=$(/tmp/taxfile -c -y -m file -n "$next4" -f /mnt/e/f || echo "loop_failed ext4")
		aruns=$(/tmp/taxfile -c -m aio -n "$next4" -f /mnt/e/a || echo "loop_failed aio")
		echo "ext4_ino $(stat -c %i /mnt/e/f)" >>"$W/ioload.txt"
	else
		echo "ext4_unavailable" >>"$W/ioload.txt"
	fi
	step notax_done
	printf '%s\n%s\n%s\n%s\n' "$runs" "$fruns" "$eruns" "$aruns" >"$W/runs.txt"
	grep loop_failed "$W/runs.txt" >>"$W/ioload.txt" && rc=1
	echo "file_ino $(stat -c %i /mnt/t/f)" >>"$W/ioload.txt"
	# kept attached: it is the tax's full tracer (the default profile)
	notax_pid=$pid
fi

# cpu_ticks: the tracer's user + system CPU time so far (clock ticks; 0 without one)
cpu_ticks() {
	if [ -n "$pid" ]; then awk '{ print $14 + $15 }' "/proc/$pid/stat"; else echo 0; fi
}

# tax: every tracer attached once, its rounds of the same loops back to back
taxout=""
# full first: the tracer of step 1, still attached; the raw pair last and for one
# round: its attach and detach flip the syscall tracepoints' static key, where
# QEMU's TCG sometimes oopses (docs/lab.md)
tracers="full none always-on raw"
if [ "$taxstep" != 1 ]; then
	# no tax rounds: step 1's tracer stops here
	tracers=""
	pid=${notax_pid:-}
	[ -n "$pid" ] && stop_tracer
fi
for t in $tracers; do
	case $t in
	none) pid="" ;;
	always-on) start_tracer /tmp/tax.json --profile always-on || continue ;;
	full)
		pid=${notax_pid:-}
		[ -n "$pid" ] || continue
		;;
	raw) start_tracer /tmp/tax.json --profile always-on --syscall-hooks raw || continue ;;
	esac
	# settle: a detach or attach just before patched kernel text, which TCG
	# translates again on the next run; a warm-up loop each takes that cost
	sleep 2
	for m in syscall pipe socket; do
		/lab/taxload -m $m -n $((ntax / 5)) >/dev/null || rc=1
	done
	n=$rounds
	[ "$t" = raw ] && n=1
	for r in $(seq 1 "$n"); do
		c0=$(cpu_ticks)
		for m in syscall pipe socket; do
			out=$(/lab/taxload -m $m -n "$ntax") || rc=1
			taxout="$taxout
tax $r $t $out" # written at the end: no file IO between the loops
		done
		taxout="$taxout
taxcpu $r $t $(($(cpu_ticks) - c0))"
	done
	[ -n "$pid" ] && stop_tracer
	rm -f /tmp/tax.json
done
step stopped
echo "$taxout" | grep '^tax' >"$W/tax.txt"
cat "$W/tax.txt"
send_bundle "$W" out.json iotracer.err ioload.txt steps.txt runs.txt tax.txt
exit "$rc"
