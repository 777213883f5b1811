# shellcheck shell=sh
# Helpers of the guest scripts (busybox sh; guest-drivers.sh, guest-modes.sh),
# in the guest as /lab/guest-lib.sh: the host side puts it in LAB_EXTRA
# (guest_extra in harness.sh).

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
