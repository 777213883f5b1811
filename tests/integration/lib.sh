# shellcheck shell=bash
# shellcheck disable=SC2034 # globals set here are read by the test scripts
# Helpers for the integration tests (sourced by tests/integration/test_*.sh).
#
# A test script:
#   . "$(dirname "$0")/lib.sh"
#   it_begin check_a check_b ...      # declare every check, make the temp dir, set traps
#   require_root; require_iotracer    # SKIP / FAIL every declared check and exit if unmet
#   ...  pass check_a / fail check_b "why" / skip check_c "why"
#   it_end                            # exit 1 if any FAIL, else 0
#
# Output protocol (read by tests/run.sh): `PASS <test>.<check>`,
# `FAIL <test>.<check>: <why>`, `SKIP <test>.<check>: <why>`; other lines are notes.
# A declared check that was never reported (the script died, was interrupted or timed
# out) is reported as FAIL by the exit trap.
#
# Everything the test creates is registered and removed by the exit trap, even when
# the test fails or is interrupted: background processes, mounts, loop devices, the
# temp dir. Registries are files in the temp dir, so helpers also work inside $(...).
#
# Environment: IOTRACER (binary, default <repo>/iotracer), IT_KEEP=1 (keep the temp dir
# for debugging; loop devices and mounts are still removed), IT_VERBOSE=1 (more notes).

IT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
IOTRACER=${IOTRACER:-$IT_ROOT/iotracer}
IT_NAME=$(basename "$0" .sh)
IT_NAME=${IT_NAME#test_}
IT_TMP=""
IT_FAILS=0
IT_CHECKS=()
declare -A IT_REPORTED=()
IT_CLEANED=0
IT_SEQ=0

# ---------------------------------------------------------------- protocol lines

# Print one protocol line for check NAME (prefixed with the test name), once.
_it_report() {
	local verdict=$1 name=$2 why=${3:-}
	if [[ -n ${IT_REPORTED[$name]:-} ]]; then
		note "(check $name already reported ${IT_REPORTED[$name]}, ignoring $verdict)"
		return 0
	fi
	IT_REPORTED[$name]=$verdict
	why=${why//$'\n'/ }
	case $verdict in
	PASS) printf 'PASS %s.%s\n' "$IT_NAME" "$name" ;;
	FAIL)
		IT_FAILS=$((IT_FAILS + 1))
		printf 'FAIL %s.%s: %s\n' "$IT_NAME" "$name" "$why"
		;;
	SKIP) printf 'SKIP %s.%s: %s\n' "$IT_NAME" "$name" "$why" ;;
	esac
}
pass() { _it_report PASS "$1" "${2:-}"; }
fail() { _it_report FAIL "$1" "${2:-no reason given}"; }
skip() { _it_report SKIP "$1" "${2:-no reason given}"; }
note() { printf '# %s: %s\n' "$IT_NAME" "$*"; }
vnote() { [[ ${IT_VERBOSE:-0} == 1 ]] && note "$@"; return 0; }

# check NAME WHY-IF-FALSE COMMAND...: PASS if COMMAND succeeds, else FAIL with WHY.
check() {
	local name=$1 why=$2
	shift 2
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}

# Report every declared check not reported yet as VERDICT (SKIP/FAIL) with WHY.
_it_report_rest() {
	local verdict=$1 why=$2 c
	for c in "${IT_CHECKS[@]}"; do
		[[ -n ${IT_REPORTED[$c]:-} ]] || _it_report "$verdict" "$c" "$why"
	done
}
skip_rest() { _it_report_rest SKIP "$1"; }
fail_rest() { _it_report_rest FAIL "$1"; }
# Skip everything not reported yet and end the script.
skip_all() {
	skip_rest "$1"
	it_end
}
# Fail everything not reported yet (setup failed) and end the script.
fail_all() {
	fail_rest "$1"
	it_end
}

# ---------------------------------------------------------------- setup / cleanup

it_begin() {
	IT_CHECKS=("$@")
	IT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/iotracer-it-$IT_NAME.XXXXXX") || {
		IT_TMP=""
		fail_all "mktemp -d failed"
	}
	: >"$IT_TMP/.pids"
	: >"$IT_TMP/.mounts"
	: >"$IT_TMP/.loops"
	: >"$IT_TMP/.cgroups"
	: >"$IT_TMP/.tracefs"
	trap _it_on_exit EXIT
	trap '_it_on_signal INT 130' INT
	trap '_it_on_signal TERM 143' TERM
	trap '_it_on_signal HUP 129' HUP
}

it_end() {
	if ((IT_FAILS > 0)); then exit 1; fi
	exit 0
}

_it_on_signal() {
	trap '' INT TERM HUP
	note "interrupted by SIG$1, cleaning up"
	fail_rest "interrupted by SIG$1 (timeout?)"
	exit "$2"
}

_it_on_exit() {
	local rc=$?
	trap '' INT TERM HUP
	local before=$IT_FAILS
	fail_rest "not reached: the script ended early (exit status $rc)"
	it_cleanup
	if ((IT_FAILS > before)) || ((rc == 0 && IT_FAILS > 0)); then rc=1; fi
	exit "$rc"
}

_it_register() { [[ -n $IT_TMP && -d $IT_TMP ]] && printf '%s\n' "$2" >>"$IT_TMP/.$1"; }
_it_unregister() {
	local f=$IT_TMP/.$1
	[[ -f $f ]] || return 0
	grep -vxF -- "$2" "$f" >"$f.new"
	mv -f "$f.new" "$f"
}

# True if PID exists and is not a zombie.
proc_alive() {
	local st
	[[ -r /proc/$1/stat ]] || return 1
	st=$(sed -e 's/^.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ -n $st && ${st:0:1} != Z ]]
}

# Kill PID: SIGTERM, up to 5 s, then SIGKILL; reap it if it is our child.
_it_kill() {
	local pid=$1 i
	proc_alive "$pid" || {
		wait "$pid" 2>/dev/null
		return 0
	}
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		proc_alive "$pid" || break
		sleep 0.1
	done
	proc_alive "$pid" && kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

it_cleanup() {
	((IT_CLEANED)) && return 0
	IT_CLEANED=1
	[[ -n $IT_TMP && -d $IT_TMP ]] || return 0
	local p m l
	# processes first (newest first), then mounts, then loop devices
	if [[ -s $IT_TMP/.pids ]]; then
		while read -r p; do
			[[ -n $p ]] && _it_kill "$p"
		done < <(tac "$IT_TMP/.pids")
	fi
	# podman containers and images a test made (tests/integration/test_podman.sh): they
	# hold loop devices and cgroups
	if [[ -s $IT_TMP/.podman ]]; then
		while read -r m; do
			case $m in
			container\ *) podman rm -f -t 0 "${m#container }" >/dev/null 2>&1 ;;
			image\ *) podman rmi -f "${m#image }" >/dev/null 2>&1 ;;
			esac || note "cleanup: cannot remove podman $m"
		done < <(tac "$IT_TMP/.podman")
	fi
	if [[ -s $IT_TMP/.tracefs ]]; then
		while read -r m; do
			[[ -n $m && -d $m ]] || continue
			echo 0 >"$m/tracing_on" 2>/dev/null
			rmdir "$m" 2>/dev/null || note "cleanup: cannot remove the tracefs instance $m"
		done < <(tac "$IT_TMP/.tracefs")
	fi
	if [[ -s $IT_TMP/.cgroups ]]; then
		while read -r m; do
			[[ -n $m && -d $m ]] && { rmdir "$m" 2>/dev/null || note "cleanup: cannot remove cgroup $m"; }
		done < <(tac "$IT_TMP/.cgroups")
	fi
	if [[ -s $IT_TMP/.mounts ]]; then
		while read -r m; do
			[[ -n $m ]] || continue
			mountpoint -q "$m" || continue
			umount "$m" 2>/dev/null || {
				sleep 0.5
				umount "$m" 2>/dev/null
			} || umount -l "$m" 2>/dev/null || note "cleanup: cannot umount $m"
		done < <(tac "$IT_TMP/.mounts")
	fi
	if [[ -s $IT_TMP/.loops ]]; then
		while read -r l; do
			[[ -n $l ]] || continue
			losetup -d "$l" 2>/dev/null || {
				sleep 0.5
				losetup -d "$l" 2>/dev/null
			} || note "cleanup: cannot detach $l"
		done < <(tac "$IT_TMP/.loops")
	fi
	if [[ ${IT_KEEP:-0} == 1 ]]; then
		note "kept $IT_TMP"
	else
		rm -rf "$IT_TMP"
	fi
}

# ---------------------------------------------------------------- requirements

require_root() {
	[[ $(id -u) == 0 ]] || skip_all "needs root (BPF, loop devices)"
}

# require_cmd CMD...: skip the whole test if a command is missing.
require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip_all "command '$c' not installed (make deps)"
	done
}

require_iotracer() {
	[[ -x $IOTRACER ]] || fail_all "iotracer binary $IOTRACER not built (run make)"
}

# have_tp GROUP/EVENT: the kernel has this tracepoint. Looked up in a private
# mount namespace with its own tracefs: the tests leave the machine as a user's
# is (the daemon mounts tracefs itself where nothing did).
have_tp() {
	unshare -m sh -c 'mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
		test -d "/sys/kernel/tracing/events/$1"' sh "$1"
}

# The usual preamble: root, tools, binary.
it_require_all() {
	require_root
	require_cmd fio jq losetup timeout unshare "$@"
	require_iotracer
}

# ---------------------------------------------------------------- devices

# mk_loop SIZE_MB [fill]: a loop device (direct IO) over a file in the temp dir;
# sparse unless "fill" (then zeros are written, so reads reach the backing disk).
# Prints /dev/loopN. The device is detached by the exit trap.
mk_loop() {
	local mb=$1 mode=${2:-sparse} img dev
	IT_SEQ=$((IT_SEQ + 1))
	img=$(mktemp "$IT_TMP/loop.XXXXXX.img") || return 1
	if [[ $mode == fill ]]; then
		dd if=/dev/zero of="$img" bs=1M count="$mb" oflag=direct status=none || return 1
	else
		truncate -s "${mb}M" "$img" || return 1
	fi
	dev=$(losetup -f --show --direct-io=on "$img") || return 1
	_it_register loops "$dev"
	[[ -b $dev ]] || return 1
	printf '%s\n' "$dev"
}

# mk_loop_fs SIZE_MB: a loop device with a fresh ext4 mounted in the temp dir.
# Prints "/dev/loopN MOUNTPOINT".
mk_loop_fs() {
	local dev mnt
	dev=$(mk_loop "$1") || return 1
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$dev" >/dev/null 2>&1 || return 1
	mnt=$(mktemp -d "$IT_TMP/mnt.XXXXXX") || return 1
	_it_register mounts "$mnt"
	# noatime: reads must not dirty inodes; no_prefetch_block_bitmaps: no reads from the
	# ext4lazyinit thread after mount (both would disturb the block counts)
	mount -t ext4 -o noatime,no_prefetch_block_bitmaps "$dev" "$mnt" ||
		mount -t ext4 -o noatime "$dev" "$mnt" || return 1
	printf '%s %s\n' "$dev" "$mnt"
}

# devname /dev/loop3 -> loop3
devname() { basename "$1"; }
# devno_of /dev/loop3 -> 7:3
devno_of() { lsblk -dno MAJ:MIN "$1" 2>/dev/null | tr -d ' '; }

# blk_stat DEV FIELD: field of /sys/block/DEV/stat (1 = reads completed,
# 5 = writes completed, 2/6 = merged).
blk_stat() {
	local n
	n=$(devname "$1")
	awk -v f="$2" '{ print $f }' "/sys/block/$n/stat"
}
blk_reads() { blk_stat "$1" 1; }
blk_writes() { blk_stat "$1" 5; }
# blk_rwf DEV: "READS WRITES FLUSHES" completed (fields 1, 5, 16; flushes absent before 5.5: 0)
blk_rwf() { awk '{ print $1, $5, ($16 == "" ? 0 : $16) }' "/sys/block/$(devname "$1")/stat"; }

# wait_quiet DEV [MAX_S]: wait until /sys/block/DEV/stat has not changed for 1 s
# (at most MAX_S, default 10). Returns 1 if the device never went quiet.
wait_quiet() {
	local n a b i
	n=$(devname "$1")
	a=$(cat "/sys/block/$n/stat")
	for ((i = 0; i < ${2:-10}; i++)); do
		sleep 1
		b=$(cat "/sys/block/$n/stat")
		[[ $a == "$b" ]] && return 0
		a=$b
	done
	note "$n did not go quiet in ${2:-10} s"
	return 1
}

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# ---------------------------------------------------------------- background processes

# bg_start NAME CMD...: run CMD in the background (output in $IT_TMP/NAME.out),
# registered for cleanup. Sets BG_PID. Must not be called inside $(...).
bg_start() {
	local name=$1
	shift
	"$@" >"$IT_TMP/$name.out" 2>&1 &
	BG_PID=$!
	_it_register pids "$BG_PID"
}

# gated_start NAME GATE CMD...: like bg_start, but CMD is exec'ed only once the file
# GATE exists, so its pid (BG_PID) is known before it does any IO.
gated_start() {
	local name=$1 gate=$2
	shift 2
	(
		while [[ ! -e $gate ]]; do sleep 0.02; done
		exec "$@"
	) >"$IT_TMP/$name.out" 2>&1 &
	BG_PID=$!
	_it_register pids "$BG_PID"
}

# bg_wait PID [TIMEOUT_S]: wait for a background process; sets BG_RC (124 on
# timeout, after killing it). Returns BG_RC.
bg_wait() {
	local pid=$1 t=${2:-120} i
	for ((i = 0; i < t * 10; i++)); do
		proc_alive "$pid" || break
		sleep 0.1
	done
	if proc_alive "$pid"; then
		_it_kill "$pid"
		BG_RC=124
	else
		wait "$pid" 2>/dev/null
		BG_RC=$?
	fi
	_it_unregister pids "$pid"
	return "$BG_RC"
}

# ---------------------------------------------------------------- buffered writers

# writer_start NAME FILE [DD-FLAGS...]: a dd writing FILE from a fifo, started (pid in
# W_PID) before any byte flows, so that /proc/PID/io can be read after its writes.
writer_start() {
	local name=$1 file=$2
	shift 2
	mkfifo "$IT_TMP/$name.fifo" || return 1
	bg_start "$name" dd if="$IT_TMP/$name.fifo" of="$file" bs=1M iflag=fullblock status=none "$@"
	W_PID=$BG_PID
}

# writer_feed NAME PID MB FD-VAR: write MB MiB into the fifo through a new fd kept open
# (its number in FD-VAR), and wait until dd has written them all (wchar).
writer_feed() {
	local name=$1 pid=$2 mb=$3 i
	exec {WFD}>"$IT_TMP/$name.fifo" || return 1
	printf -v "$4" '%s' "$WFD"
	head -c "$((mb << 20))" /dev/zero >&"$WFD" || return 1
	for ((i = 0; i < 300; i++)); do
		(($(io_field "$pid" wchar) >= mb << 20)) && return 0
		sleep 0.1
	done
	return 1
}

# io_field PID FIELD: a field of /proc/PID/io (0 when gone)
io_field() { awk -v f="$2:" '$1 == f { print $2; found = 1 } END { if (!found) print 0 }' "/proc/$1/io" 2>/dev/null || echo 0; }

# ---------------------------------------------------------------- the tracer

# bpf_fd_ids PID: the BPF links ("l<link id>") and programs ("p<prog id>") that PID
# holds as file descriptors (from /proc/PID/fdinfo: this bpftool shows no owner pids).
bpf_fd_ids() {
	local pid=$1 fds
	mapfile -t fds < <(find "/proc/$pid/fd" -lname 'anon_inode:bpf_link' -printf "/proc/$pid/fdinfo/%f\n" \
		-o -lname 'anon_inode:bpf-prog' -printf "/proc/$pid/fdinfo/%f\n" 2>/dev/null)
	((${#fds[@]})) || return 0
	awk '/^link_id:/ { print "l" $2 } /^prog_id:/ { print "p" $2 }' "${fds[@]}" 2>/dev/null | sort -u
}
# Number of BPF links PID holds.
bpf_link_count() { bpf_fd_ids "$1" | grep -c '^l'; }
# bpf_ids_alive IDS: which of these ids ("l<n>"/"p<n>", one per line) still exist
# system-wide (bpftool), space separated.
bpf_ids_alive() {
	local all
	all=$({
		bpftool -j link list 2>/dev/null | jq -r '.[].id' | sed 's/^/l/'
		bpftool -j prog list 2>/dev/null | jq -r '.[].id' | sed 's/^/p/'
	} | sort -u)
	comm -12 <(printf '%s\n' "$1" | sort -u) <(printf '%s\n' "$all") | tr '\n' ' ' | sed 's/ $//'
}

# start_tracer ARGS...: run $IOTRACER -j FILE --no-live -q ARGS in the background
# (TRACER_JSON_PATH=none: without -j, as the service runs) and wait until it has attached: it holds BPF link fds (/proc/PID/fdinfo) and their
# number is the same at two looks 0.2 s apart after it printed its start line (written once
# everything is attached and set up, even under -q), or, without that line, has not changed
# for 1 s. Sets TRACER_PID, TRACER_JSON, TRACER_ERR (stderr
# file), TRACER_WHY (reason on failure). Returns 1 if it died or did not attach in 20 s.
# Must not be called inside $(...) (stop_tracer needs the pid as a child).
start_tracer() {
	IT_SEQ=$((IT_SEQ + 1))
	TRACER_JSON=${TRACER_JSON_PATH:-$IT_TMP/trace.$IT_SEQ.json} # /dev/null: a long run
	TRACER_ERR=$IT_TMP/trace.$IT_SEQ.err
	TRACER_OUT=$IT_TMP/trace.$IT_SEQ.out
	TRACER_WHY=""
	TRACER_RC=""
	local jargs=(-j "$TRACER_JSON")
	[[ $TRACER_JSON == none ]] && jargs=() # the service's way: no records written
	vnote "start: iotracer ${jargs[*]} --no-live -q $*"
	"$IOTRACER" "${jargs[@]}" --no-live -q "$@" >"$TRACER_OUT" 2>"$TRACER_ERR" &
	TRACER_PID=$!
	_it_register pids "$TRACER_PID"
	local i n last=-2 stable=0 started=0
	for ((i = 0; i < 200; i++)); do
		sleep 0.1
		if ! proc_alive "$TRACER_PID"; then
			wait "$TRACER_PID" 2>/dev/null
			TRACER_RC=$?
			_it_unregister pids "$TRACER_PID"
			TRACER_WHY="iotracer exited with status $TRACER_RC before attaching: $(head -c 300 "$TRACER_ERR" | tr '\n' ' ')"
			return 1
		fi
		((i % 2)) && continue # look every 0.2 s
		# the start line first, then the links: a count taken after the line was there
		grep -q ' started: layers ' "$TRACER_ERR" 2>/dev/null && started=$((started + 1))
		n=$(bpf_link_count "$TRACER_PID")
		if ((n > 0 && n == last)); then
			stable=$((stable + 1))
		else
			stable=0
		fi
		last=$n
		# after the start line: two counts that agree (anything attaching right after it)
		if ((stable >= 5 || (started >= 2 && stable >= 1))); then
			vnote "iotracer $TRACER_PID attached: $n links"
			TRACER_LINKS=$n
			return 0
		fi
	done
	TRACER_WHY="iotracer did not attach within 20 s (links seen: $last)"
	_it_kill "$TRACER_PID"
	_it_unregister pids "$TRACER_PID"
	return 1
}

# top_batch_start ARGS...: `iotracer top -b ARGS` in the background (TOP_PID, its output in
# $IT_TMP/top.batch.out), once it printed its first line (10 s at most).
top_batch_start() {
	local i
	bg_start top.batch "$IOTRACER" top -b "$@"
	TOP_PID=$BG_PID
	for ((i = 0; i < 100; i++)); do
		grep -q '^iotracer top' "$IT_TMP/top.batch.out" 2>/dev/null && break
		sleep 0.2
	done
}

# stop_tracer [SIGNAL]: signal the tracer (TERM), wait up to 20 s, reap it.
# Sets TRACER_RC and TRACER_WHY; returns 0 if it exited with status 0.
stop_tracer() {
	local sig=${1:-TERM} i
	TRACER_WHY=""
	if [[ -z ${TRACER_PID:-} ]]; then
		TRACER_WHY="no tracer running"
		return 1
	fi
	kill "-$sig" "$TRACER_PID" 2>/dev/null
	for ((i = 0; i < 200; i++)); do
		proc_alive "$TRACER_PID" || break
		sleep 0.1
	done
	if proc_alive "$TRACER_PID"; then
		kill -KILL "$TRACER_PID" 2>/dev/null
		wait "$TRACER_PID" 2>/dev/null
		TRACER_RC=timeout
		TRACER_WHY="iotracer did not exit within 20 s of SIG$sig (killed)"
	else
		wait "$TRACER_PID" 2>/dev/null
		TRACER_RC=$?
		((TRACER_RC == 0)) || TRACER_WHY="iotracer exited with status $TRACER_RC after SIG$sig: $(tail -c 300 "$TRACER_ERR" | tr '\n' ' ')"
	fi
	_it_unregister pids "$TRACER_PID"
	[[ $TRACER_RC == 0 ]]
}

# tracer_save NAME / tracer_load NAME: keep the running tracer's TRACER_PID, TRACER_JSON,
# TRACER_ERR and TRACER_OUT under NAME, and make NAME's the current ones again (for
# stop_tracer, tracer_summary): two tracers on one workload (test_writeback's profiles).
tracer_save() {
	local v n
	for v in PID JSON ERR OUT; do
		n=TRACER_$v
		printf -v "TS_${1}_$v" '%s' "${!n:-}"
	done
}
tracer_load() {
	local v n
	for v in PID JSON ERR OUT; do
		n=TS_${1}_$v
		printf -v "TRACER_$v" '%s' "${!n:-}"
	done
}

# stop_tracers NAME...: stop the tracers saved under NAME... (tracer_save), each one's
# final summary into $IT_TMP/summary.NAME.json (fail_all without one)
stop_tracers() {
	local t
	for t in "$@"; do
		tracer_load "$t"
		stop_tracer || note "${TRACER_WHY:-}"
		tracer_summary || fail_all "no final summary in the JSON output of tracer $t"
		cp "$SUMMARY" "$IT_TMP/summary.$t.json"
	done
}

# tracer_summary [JSON]: the last final summary object of the run (compact), written to
# $IT_TMP/summary.json too (SUMMARY). Returns 1 if there is none or the file is not JSON.
tracer_summary() {
	local f=${1:-$TRACER_JSON}
	SUMMARY=$IT_TMP/summary.$IT_SEQ.json
	jq -c 'select(.type == "summary" and .final == true)' "$f" 2>/dev/null | tail -n 1 >"$SUMMARY"
	[[ -s $SUMMARY ]]
}

# json_lines_ok [JSON]: every line is a JSON object with a "type". Sets JSON_WHY.
json_lines_ok() {
	local f=${1:-$TRACER_JSON} bad
	JSON_WHY=""
	[[ -s $f ]] || {
		JSON_WHY="$f is empty"
		return 1
	}
	if ! bad=$(jq -R -r 'fromjson? // "BAD" | if type == "object" and has("type") then empty else "BAD" end' "$f" 2>&1 | wc -l); then
		JSON_WHY="jq failed"
		return 1
	fi
	((bad == 0)) || {
		JSON_WHY="$bad lines are not JSON objects with a type"
		return 1
	}
}

# ---------------------------------------------------------------- jq helpers

# jq over the request objects of a trace: jreq JSON FILTER [jq args...] prints the
# FILTER result for every request object.
jreq() {
	local f=$1 filter=$2
	shift 2
	jq -c "$@" "select(.type == \"request\") | $filter" "$f"
}

# jcount JSON SELECT [jq args...]: number of request objects for which SELECT is true.
jcount() {
	local f=$1 sel=$2
	shift 2
	jq -n "$@" "reduce (inputs | select(.type == \"request\") | select($sel)) as \$r (0; . + 1)" "$f"
}

# jsum JSON EXPR [jq args...]: sum of the numeric EXPR over all request objects.
jsum() {
	local f=$1 expr=$2
	shift 2
	jq -n "$@" "reduce (inputs | select(.type == \"request\") | ($expr) // 0) as \$v (0; . + \$v)" "$f"
}

# Block requests of a request object as a stream, for both shapes: the children in
# block[], or (kind "block" without block[]) the object itself.
# shellcheck disable=SC2016 # jq program text
JQ_BLOCKS='def blocks: if (.block | type) == "array" then .block[] elif .kind == "block" then . else empty end;'

# jblocks JSON SELECT-REQ SELECT-BLOCK [jq args...]: number of block requests matching
# SELECT-BLOCK in requests matching SELECT-REQ.
jblocks() {
	local f=$1 selr=$2 selb=$3
	shift 3
	jq -n "$@" "$JQ_BLOCKS reduce (inputs | select(.type == \"request\") | select($selr) | blocks | select($selb)) as \$b (0; . + 1)" "$f"
}

# sum_field SUMMARY ARRAY FIELD layer dev op stage: FIELD of the matching entry in the
# summary's stages[] or hists[] (empty if none).
sum_field() {
	local s=$1 arr=$2 field=$3
	jq -r --arg l "$4" --arg d "$5" --arg o "$6" --arg st "$7" --arg fld "$field" \
		"[.${arr}[]? | select(.layer == \$l and .dev == \$d and .op == \$o and .stage == \$st) | .[\$fld]] | if length == 0 then empty else add end" "$s"
}
hist_count() { sum_field "$1" hists count "$2" "$3" "$4" "$5"; }
stage_val() { sum_field "$1" stages "$6" "$2" "$3" "$4" "$5"; }

# report_row FILE KIND NAME: "REQS BYTES" of NAME's row in the table "top N KINDs by bytes"
# of `iotracer report --by KIND` saved in FILE; nothing when it has none.
report_row() {
	awk -v t="^top [0-9]+ $2s by bytes:\$" -v n="$3" '
		$0 ~ t { on = 1; getline; k = /BLAMED/ ? 6 : 4; next }
		on && !NF { exit }
		on { r = $1 " " $2; for (i = 0; i < k; i++) sub(/^ *[^ ]+ /, ""); sub(/^ +/, ""); if ($0 == n) print r }' "$1"
}

# fio_val FIO_JSON JQ: a value from fio's JSON output.
fio_val() { jq -r "$2" "$1"; }
fio_read_ios() { jq -r '[.jobs[].read.total_ios] | add' "$1"; }
fio_read_pct() { jq -r --arg p "$2" '.jobs[0].read.clat_ns.percentile[$p]' "$1"; }

# fio_run OUT ARGS...: fio in the background with --thread (its IO threads share the
# fio process id, so FIO_PID is the tgid iotracer reports), JSON to OUT; waits for it.
# Sets FIO_PID and FIO_RC; returns FIO_RC.
fio_run() {
	local out=$1
	shift
	fio_start "$out" "$@"
	fio_wait 180
}
# fio_start OUT ARGS...: fio_run's fio, not waited for; FIO_CGROUP=DIR: the fio process joins
# cgroup DIR before it execs (its IO threads with it).
fio_start() {
	local out=$1
	shift
	FIO_OUT=$out
	set -- fio --thread --output-format=json --output="$out" "$@"
	[[ -n ${FIO_CGROUP:-} ]] && set -- sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$FIO_CGROUP" "$@"
	bg_start "fio.$IT_SEQ" "$@"
	FIO_PID=$BG_PID
	FIO_LOG=$IT_TMP/fio.$IT_SEQ.out
	IT_SEQ=$((IT_SEQ + 1))
}
fio_wait() {
	bg_wait "$FIO_PID" "${1:-180}"
	FIO_RC=$BG_RC
	if ((FIO_RC != 0)); then
		note "fio exited $FIO_RC: $(tail -c 400 "$FIO_LOG" | tr '\n' ' ')"
	elif ! jq -e '.jobs | length > 0' "$FIO_OUT" >/dev/null 2>&1; then
		note "fio wrote no usable JSON to $FIO_OUT"
		FIO_RC=99
	fi
	return "$FIO_RC"
}

# free_port: a TCP port no socket of this network namespace uses in any state
# (listening, connected, TIME_WAIT: `ss -a`), picked below the kernel's ephemeral range
# (net.ipv4.ip_local_port_range), where the kernel hands out the local ports of
# connections (the scrapes of earlier tests, whose TIME_WAIT sockets hold a port for
# 60 s): random start in [10000, low bound), then upwards. Whoever binds it may still
# lose a race to another program: a caller that must hold the port checks its bind.
free_port() {
	local lo=10000 hi p i
	read -r hi _ </proc/sys/net/ipv4/ip_local_port_range || hi=32768
	((hi - lo >= 1000)) || lo=1024
	((hi - lo >= 200)) || {
		echo "free_port: ephemeral range starts at $hi: no room below it" >&2
		return 1
	}
	p=$((lo + RANDOM % (hi - lo - 200)))
	for ((i = 0; i < 200; i++, p++)); do
		[[ -z $(ss -Htan "sport = :$p") ]] && {
			echo "$p"
			return 0
		}
	done
	return 1
}

# ---------------------------------------------------------------- arithmetic

# within_pct A B PCT: |A - B| <= PCT % of B (B > 0).
within_pct() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * p / 100) }'; }
# pct_of A B: A as a percentage of B, 1 decimal.
pct_of() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "inf"; else printf "%.1f", 100 * a / b }'; }
# is_int X
is_int() { [[ $1 =~ ^-?[0-9]+$ ]]; }

# accounted COUNT DELTA MISSED SLACK: block requests seen (COUNT) against the kernel's own
# count (DELTA, /sys/block stat): never more; the shortfall is explained by completions
# iotracer reports as missed (drops.block.missed) plus up to SLACK requests still in flight
# at exit, and stays under 0.5 % (at least 1). See docs/hooks.md, "Nested completions".
accounted() {
	local c=$1 d=$2 m=$3 s=$4
	[[ $c =~ ^[0-9]+$ && $d =~ ^[0-9]+$ && $m =~ ^[0-9]+$ ]] || return 1
	((c <= d)) || return 1
	((d - c <= m + s)) || return 1
	((d - c <= (d / 200 > 1 ? d / 200 : 1)))
}

# real_drops SUMMARY: records lost (ring buffer, full maps) over all layers; missed
# completions are checked by `accounted` instead.
real_drops() {
	jq -r '[.drops | to_entries[] | select(.value | type == "object") | .value
		| (.ringbuf // 0) + (.inflight // 0) + (.hist // 0)] | add // "missing"' "$1"
}

# accounted_pair C1 D1 C2 D2 MISSED SLACK: both pairs accounted (for use inside check).
accounted_pair() {
	accounted "$1" "$2" "$5" "$6" && accounted "$3" "$4" "$5" "$6"
}

# ---------------------------------------------------------------- completion witness
# An oracle for completions no BPF program sees (docs/hooks.md, "Completions no program
# sees": on some kernels block completions run in BLOCK softirq on top of a thread of
# pid 1 run no BPF program, while ftrace's own probe on the tracepoint records them): a
# private tracefs instance with block:block_rq_complete filtered to one device,
# independent of iotracer. It needs tracefs mounted (the daemon mounts it where nothing
# did, so start it after start_tracer on a quiet device); it mounts nothing itself.
#   witness_start DEV [KB]  a new instance (KB per CPU of ring buffer, default 4096)
#   witness_mark NAME       a marker line in its trace (phase boundaries)
#   witness_stop            stop, keep the trace in $WITNESS_TRACE, remove the instance
#   witness_count [FROM [TO [RWBS]]]  "TOTAL PID1SOFT BYTES" over the events after marker FROM
#                           and before marker TO ("" = start/end) whose rwbs matches the
#                           regex RWBS (default: any): completions, and those of them in
#                           softirq context (flags column) on top of a thread of pid 1
#                           (its tgid column, or a tid of /proc/1/task at start or stop);
#                           a request is counted once (not again at the end of its flush
#                           sequence), so TOTAL = the stat's reads + writes + flushes;
#                           BYTES: the sectors × 512 of the PID1SOFT ones
# The exit trap removes an instance left behind.

# tracefs_root: where tracefs is mounted now (from /proc/mounts), else return 1.
tracefs_root() {
	local r
	r=$(awk '$3 == "tracefs" && !t { t = $2 } $3 == "debugfs" && !d { d = $2 "/tracing" }
		END { print (t ? t : d) }' /proc/mounts)
	[[ -n $r && -d $r/instances ]] && printf '%s\n' "$r"
}

_witness_tids() { ls /proc/1/task >>"$IT_TMP/witness.tids" 2>/dev/null; }

witness_start() {
	local root mm ev w
	WITNESS="" WITNESS_WHY="" WITNESS_TRACE=$IT_TMP/witness.trace
	root=$(tracefs_root) || {
		WITNESS_WHY="tracefs is not mounted (no instances dir in /proc/mounts' tracefs/debugfs)"
		return 1
	}
	[[ -d $root/events/block/block_rq_complete ]] || {
		WITNESS_WHY="no block:block_rq_complete in $root"
		return 1
	}
	mm=$(devno_of "$1")
	[[ $mm =~ ^([0-9]+):([0-9]+)$ ]] || {
		WITNESS_WHY="no device number for $1"
		return 1
	}
	w=$root/instances/iotracer-it-$IT_NAME-$$-$IT_SEQ
	IT_SEQ=$((IT_SEQ + 1))
	mkdir "$w" 2>/dev/null || {
		WITNESS_WHY="cannot create the tracefs instance $w"
		return 1
	}
	_it_register tracefs "$w"
	ev=$w/events/block/block_rq_complete
	# kernel dev_t: major << 20 | minor
	if ! { echo "${2:-4096}" >"$w/buffer_size_kb" && echo 1 >"$w/options/record-tgid" &&
		echo "dev == $((BASH_REMATCH[1] << 20 | BASH_REMATCH[2]))" >"$ev/filter" &&
		echo - >"$IT_TMP/witness.tids" && _witness_tids && echo 1 >"$ev/enable"; } 2>/dev/null; then
		WITNESS_WHY="cannot set up the tracefs instance $w"
		rmdir "$w" && _it_unregister tracefs "$w"
		return 1
	fi
	WITNESS=$w
}

witness_mark() { [[ -n ${WITNESS:-} ]] && echo "it-mark $1" >"$WITNESS/trace_marker"; }

# witness_stop: returns 1 (WITNESS_WHY) when the ring buffer lost events.
witness_stop() {
	local w=${WITNESS:-} lost
	[[ -n $w && -d $w ]] || {
		WITNESS_WHY="no witness running"
		return 1
	}
	echo 0 >"$w/tracing_on"
	_witness_tids
	cat "$w/trace" >"$WITNESS_TRACE"
	echo 0 >"$w/events/block/block_rq_complete/enable"
	rmdir "$w" && _it_unregister tracefs "$w"
	WITNESS=""
	# "# entries-in-buffer/entries-written: N/M": M > N means overwritten events
	lost=$(awk '/entries-in-buffer\/entries-written:/ { split($3, a, "/"); print a[2] - a[1]; exit }' "$WITNESS_TRACE")
	[[ ${lost:-x} == 0 ]] || {
		WITNESS_WHY="the witness's ring buffer lost ${lost:-?} events"
		return 1
	}
}

witness_count() {
	awk -v from="${1:-}" -v to="${2:-}" -v ops="${3:-.}" '
		NR == FNR { pid1[$1] = 1; next }
		/^#/ { next }
		/: tracing_mark_write: it-mark / {
			m = $0
			sub(/.*: tracing_mark_write: it-mark /, "", m)
			if (m == from) on = 1
			if (to != "" && m == to) off = 1
			next
		}
		off || (from != "" && !on) { next }
		{
			e = index($0, ": block_rq_complete: ")
			if (!e) next
			tail = substr($0, e + 21)
			split(tail, tf, " ")
			if (tf[2] !~ ops) next
			# "+ 0" on a request that is not a flush: the end of a flush sequence
			# (PREFLUSH/FUA) of a request whose data completion was traced already
			if (match(tail, / \+ 0 /) && tf[2] ~ /^F?[WDRN]/) next
			head = substr($0, 1, e)
			if (!match(head, /-[0-9]+ +(\( *[0-9-]+\) +)?\[[0-9]+\] +[^ ]+ /)) next
			ctx = substr(head, RSTART + 1, RLENGTH - 2)
			tid = ctx
			sub(/ .*/, "", tid)
			n = split(ctx, cf, " ")
			flags = cf[n]
			tgid = ""
			if (match(ctx, /\( *[0-9-]+\)/)) {
				tgid = substr(ctx, RSTART + 1, RLENGTH - 2)
				gsub(/ /, "", tgid)
			}
			total++
			if (substr(flags, 3, 1) != "s" || !(tgid == "1" || (tid in pid1))) next
			soft++
			if (match(tail, / \+ [0-9]+ /))
				softb += substr(tail, RSTART + 3, RLENGTH - 4) * 512
		}
		END { printf "%d %d %d\n", total, soft, softb }
	' "$IT_TMP/witness.tids" "$WITNESS_TRACE"
}

# mk_cgroup: a new cgroup v2 directory (removed at cleanup); sets CGROUP_DIR.
# Returns 1 when there is no cgroup2 mount.
mk_cgroup() {
	local root
	root=$(findmnt -n -t cgroup2 -o TARGET 2>/dev/null | head -n 1)
	[[ -n $root && -d $root ]] || return 1
	CGROUP_DIR=$root/iotracer-it-$$-$RANDOM
	mkdir "$CGROUP_DIR" || return 1
	_it_register cgroups "$CGROUP_DIR"
}

# mk_cgroups NAME...: a cgroup (mk_cgroup) per NAME: CG[NAME] its directory, REL[NAME]
# its path in the hierarchy, CG_ROOT the cgroup2 mount. Skips the script when there is
# no cgroup2 mount; fails it when a cgroup cannot be made.
mk_cgroups() {
	local c
	CG_ROOT=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
	[[ -n $CG_ROOT ]] || skip_all "no cgroup2 mount on this machine"
	declare -gA CG REL
	for c in "$@"; do
		mk_cgroup || fail_all "cannot create cgroup $c"
		CG[$c]=$CGROUP_DIR
		REL[$c]=${CGROUP_DIR#"$CG_ROOT"}
	done
}

# record_paced_reads JOB NIOS RATE: a filled 128 MiB loop device, a tracer recording it
# (-d loopN --record $IT_TMP/rec) while fio job JOB does NIOS direct 4k random reads at
# RATE IOPS into $IT_TMP/fio.json; the tracer is stopped after fio. Sets dev, name, rec
# (and FIO_PID); fails every check left when a step fails.
record_paced_reads() {
	dev=$(mk_loop 128 fill) || fail_all "cannot create a loop device"
	name=$(devname "$dev")
	note "device $dev"
	rec=$IT_TMP/rec
	wait_quiet "$dev" 5
	start_tracer -d "$name" --record "$rec" || fail_all "$TRACER_WHY"
	fio_run "$IT_TMP/fio.json" --name="$1" --filename="$dev" --ioengine=psync --direct=1 \
		--rw=randread --bs=4k --number_ios="$2" --rate_iops="$3" --randrepeat=0 \
		--norandommap --size=120M
	sleep 0.3
	stop_tracer || fail_all "$TRACER_WHY"
	((FIO_RC == 0)) || fail_all "fio failed (status $FIO_RC)"
}
