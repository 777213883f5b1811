#!/usr/bin/env bash
# A bare machine: no tracefs mounted (no systemd automount: containers, minimal
# images). Each case runs the daemon in its own mount namespace (unshare -m), so
# the machine's mounts stay as they are.
# Oracles: fio's JSON (IO count), the attach report and stderr, exit statuses.
#   bare_mount    tracefs unmounted: the daemon mounts it (said at -v), attaches
#                 sys_enter/sys_exit and the 3 libaio syscall tracepoints (JSON attach
#                 lines), one syscall record per fio IO
#   bare_partial  a tracefs with only io_submit's events: a warning naming the
#                 syscall layer's libaio tracepoints on stderr even with -q, exit 0
#   bare_none     a tracefs with no syscall events: sys_enter/sys_exit attach through
#                 BTF (no tracefs needed), a warning that no libaio tracepoint did,
#                 exit 0, and read() records still written
#   asked_none    -l nvme where no NVMe driver is loaded: exit 1, error names nvme
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin bare_mount bare_partial bare_none asked_none
it_require_all

REAL=$IOTRACER
# events SUBSET...: copy the ids of these syscalls' tracepoints (read from a private
# tracefs) into $IT_TMP/events; libbpf attaches a tracepoint by that id.
fake_events() {
	local d=$IT_TMP/events
	rm -rf "$d" && mkdir -p "$d/syscalls"
	unshare -m sh -c 'mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
		for s in "$@"; do for k in enter exit; do
			e=sys_${k}_$s; mkdir -p "$0/syscalls/$e"
			cat "/sys/kernel/tracing/events/syscalls/$e/id" >"$0/syscalls/$e/id" || exit 1
		done; done' "$d" "$@"
}

# bare_wrapper MODE: $IT_TMP/iotracer-MODE runs iotracer in a new mount namespace
# where tracefs (and debugfs) are unmounted; MODE fake mounts a tmpfs holding
# $IT_TMP/events in their place. unshare and sh exec: the pid is iotracer's.
bare_wrapper() {
	local w=$IT_TMP/iotracer-$1
	cat >"$w" <<-EOS
		#!/bin/sh
		exec unshare -m sh -c '
		umount -l /sys/kernel/tracing 2>/dev/null; umount -l /sys/kernel/debug 2>/dev/null
		[ -e /sys/kernel/tracing/events ] && { echo "tracefs still mounted" >&2; exit 97; }
		if [ "$1" = fake ]; then
			mount -t tmpfs none /sys/kernel/tracing && cp -r "$IT_TMP/events" /sys/kernel/tracing/ || exit 98
		fi
		exec "\$0" "\$@"' "$REAL" "\$@"
	EOS
	chmod +x "$w"
	printf '%s\n' "$w"
}

dev=$(mk_loop 64 fill) || fail_all "cannot create a loop device"
name=$(devname "$dev")

# ---------------------------------------------------------------- bare_mount
IOTRACER=$(bare_wrapper bare)
wait_quiet "$dev" 3
if ! start_tracer -v -d "$name"; then
	fail bare_mount "$TRACER_WHY"
else
	fio_run "$IT_TMP/fio.json" --name=bare --filename="$dev" --ioengine=psync --direct=1 \
		--rw=randread --bs=4k --number_ios=500 --size=32M --randrepeat=0 --norandommap
	sleep 0.3
	stop_tracer
	ios=$(fio_read_ios "$IT_TMP/fio.json")
	n=$(jcount "$TRACER_JSON" '.kind == "syscall" and .op == "read" and .dev == $d and .pid == $p' \
		--arg d "$name" --argjson p "$FIO_PID")
	said=$(grep -c 'mounted tracefs' "$TRACER_ERR")
	sys=$(jq -s '[.[] | select(.type == "attach" and .layer == "syscall" and .method == "tp" and .ok)] | length' "$TRACER_JSON")
	raw=$(jq -s '[.[] | select(.type == "attach" and .hook == "sys_enter" and .ok)] | length' "$TRACER_JSON")
	note "fio $ios IOs, $n syscall records; sys_enter/sys_exit attached: $raw, libaio syscall tracepoints: $sys"
	if ((said != 1)); then
		fail bare_mount "no 'mounted tracefs' line at -v: $(head -c 300 "$TRACER_ERR" | tr '\n' ' ')"
	elif ((sys != 3 || raw != 1)); then
		fail bare_mount "sys_enter/sys_exit attached: $raw (want 1), libaio tracepoints: $sys of 3"
	else
		check bare_mount "$n syscall records for $ios fio IOs" test "$n" -eq "$ios" -a "$ios" -gt 0
	fi
fi

# ---------------------------------------------------------------- bare_partial
IOTRACER=$(bare_wrapper fake)
if ! fake_events io_submit; then
	skip bare_partial "cannot read syscall tracepoint ids (no syscall tracepoints?)"
	skip bare_none "cannot read syscall tracepoint ids (no syscall tracepoints?)"
else
	timeout 30 "$IOTRACER" -q --no-live -D 1s >"$IT_TMP/partial.out" 2>"$IT_TMP/partial.err"
	rc=$?
	warn=$(grep -c '^iotracer: warning: layer syscall: 1 of 3 libaio syscall tracepoints attached' \
		"$IT_TMP/partial.err")
	check bare_partial "exit $rc, stderr: $(head -c 300 "$IT_TMP/partial.err" | tr '\n' ' ')" \
		test "$rc" -eq 0 -a "$warn" -eq 1

	# ------------------------------------------------------------ bare_none
	fake_events # an empty syscalls/ group
	if ! start_tracer -d "$name"; then
		fail bare_none "$TRACER_WHY"
	else
		dd if="$dev" of=/dev/null bs=4k count=64 iflag=direct status=none
		sleep 0.3
		stop_tracer
		warn=$(grep -c '^iotracer: warning: layer syscall: 0 of 3 libaio syscall tracepoints attached' \
			"$TRACER_ERR")
		n=$(jcount "$TRACER_JSON" '.kind == "syscall" and .syscall == "read" and .dev == $d' \
			--arg d "$name")
		check bare_none "exit $TRACER_RC, $n read() records for dd's 64, stderr: $(head -c 300 "$TRACER_ERR" | tr '\n' ' ')" \
			test "$TRACER_RC" = 0 -a "$warn" -eq 1 -a "$n" -eq 64
	fi
fi

IOTRACER=$REAL
if have_tp nvme/nvme_setup_cmd; then
	skip asked_none "the nvme driver is loaded here: its layer attaches"
else
	timeout 30 "$IOTRACER" -q --no-live -l nvme -D 1s >"$IT_TMP/nvme.out" 2>"$IT_TMP/nvme.err"
	rc=$?
	err=$(grep -c '^iotracer: layer nvme: none of its hooks attached' "$IT_TMP/nvme.err")
	check asked_none "exit $rc, stderr: $(head -c 300 "$IT_TMP/nvme.err" | tr '\n' ' ')" \
		test "$rc" -eq 1 -a "$err" -eq 1
fi
it_end
