# shellcheck shell=sh disable=SC2034 # W, rc, stop_rc: read by the sourcing scripts
# Helpers of the guest scripts (busybox sh; guest-drivers.sh, guest-modes.sh,
# guest-btt.sh),
# in the guest as /lab/guest-lib.sh: the host side puts it in LAB_EXTRA
# (guest_extra in harness.sh).

# guest_init DIR: the work directory W = DIR with empty ioload.txt and
# steps.txt; rc=0 (the script's exit status so far).
guest_init() {
	W=$1
	mkdir -p "$W"
	: >"$W/ioload.txt"
	: >"$W/steps.txt"
	rc=0
}

# step NAME: `step NAME UPTIME_S` on the console and in $W/steps.txt.
step() { echo "step $1 $(cut -d' ' -f1 /proc/uptime)" | tee -a "$W/steps.txt"; }

# stop_pid PID WHAT: SIGTERM, SIGKILL if still there after 30 s (says so);
# stop_rc = its exit status.
stop_pid() {
	kill -TERM "$1" 2>/dev/null
	_i=0
	while kill -0 "$1" 2>/dev/null && [ "$_i" -lt 150 ]; do
		sleep 0.2
		_i=$((_i + 1))
	done
	if kill -0 "$1" 2>/dev/null; then
		echo "$2 did not exit within 30 s of SIGTERM: SIGKILL"
		kill -KILL "$1" 2>/dev/null
	fi
	wait "$1"
	stop_rc=$?
}

# stop_iotracer PID: stop_pid, then `iotracer_rc N` for the host (rc=1 when not 0) and
# `step stopped`; nothing but the step when PID is empty (it never started)
stop_iotracer() {
	if [ -n "$1" ]; then
		stop_pid "$1" iotracer
		echo "iotracer_rc $stop_rc"
		[ "$stop_rc" -eq 0 ] || rc=1
	fi
	step stopped
}

# send_bundle DIR FILE...: the files (missing ones as empty) as one base64
# tar.gz on the console between ===DRV-BUNDLE=== <bytes> <md5> and
# ===DRV-BUNDLE-END=== (unbundle in harness.sh reads it back).
send_bundle() {
	_d=$1
	shift
	for _f in "$@"; do [ -f "$_d/$_f" ] || : >"$_d/$_f"; done
	tar -C "$_d" -czf /tmp/bundle.tgz "$@"
	echo "===DRV-BUNDLE=== $(wc -c </tmp/bundle.tgz) $(md5sum </tmp/bundle.tgz | cut -d' ' -f1)"
	base64 /tmp/bundle.tgz
	echo "===DRV-BUNDLE-END==="
}

# wait_attached PID JSON: until iotracer PID has written its attach lines to
# JSON (they come in one burst once every hook has been tried) and their number
# stopped changing for 0.4 s; 60 s at most. Prints `attach_lines N`; status 0
# when attached, 1 when iotracer exited first (says so) or the time ran out.
wait_attached() {
	_n=0
	_prev=-1
	_stable=0
	_i=0
	_att=1
	while [ "$_i" -lt 300 ]; do
		if ! kill -0 "$1" 2>/dev/null; then
			echo "iotracer exited before attaching"
			break
		fi
		_n=$(grep -c '"type":"attach"' "$2" 2>/dev/null)
		_n=${_n:-0}
		if [ "$_n" -gt 0 ] && [ "$_n" -eq "$_prev" ]; then
			_stable=$((_stable + 1))
		else
			_stable=0
		fi
		_prev=$_n
		if [ "$_stable" -ge 2 ]; then
			_att=0
			break
		fi
		sleep 0.2
		_i=$((_i + 1))
	done
	echo "attach_lines $_n"
	return "$_att"
}
