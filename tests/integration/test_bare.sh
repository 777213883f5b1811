#!/usr/bin/env bash
# A bare machine: no tracefs mounted (no systemd automount: containers, minimal
# images). Each case runs the daemon in its own mount namespace (unshare -m), so
# the machine's mounts stay as they are.
# Oracles: fio's JSON (IO count), the attach report and stderr, exit statuses.
#   bare_mount    tracefs unmounted: the daemon mounts it (said at -v; the fs layer's
#                 page-cache tracepoint and the per-syscall tracepoints need it), the
#                 syscall layer attaches on those (syscalls/pread64 and syscalls/io_submit:
#                 JSON attach lines), one syscall record per fio IO
#   bare_partial  a tracefs with no event at all (a tmpfs in its place): the fs layer's
#                 mm_filemap_add_to_page_cache, which the kernel has (BTF), cannot
#                 attach: a warning naming the fs layer on stderr even with -q, exit 0
#   bare_failed   same run: its JSON attach line says state "failed" (there, wanted, could
#                 not attach: what the documented alert is on)
#   bare_none     same run: the syscall layer attaches anyway (raw tracepoints need no
#                 tracefs): one read() record per block read of a dd (64)
#   asked_none    -l nvme where no NVMe driver is loaded: exit 1, error names nvme
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin bare_mount bare_partial bare_failed bare_none asked_none
it_require_all

REAL=$IOTRACER

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
	sys=$(jq -s '[.[] | select(.type == "attach" and .layer == "syscall" and .ok and
		(.hook == "syscalls/pread64" or .hook == "syscalls/io_submit"))] | length' "$TRACER_JSON")
	note "fio $ios IOs, $n syscall records; syscalls/pread64 and syscalls/io_submit attached: $sys of 2"
	if ((said != 1)); then
		fail bare_mount "no 'mounted tracefs' line at -v: $(head -c 300 "$TRACER_ERR" | tr '\n' ' ')"
	elif ((sys != 2)); then
		fail bare_mount "syscalls/pread64 and syscalls/io_submit attached: $sys of 2"
	else
		check bare_mount "$n syscall records for $ios fio IOs" test "$n" -eq "$ios" -a "$ios" -gt 0
	fi
fi

# ---------------------------------------------------------------- bare_partial
IOTRACER=$(bare_wrapper fake)
rm -rf "$IT_TMP/events" && mkdir -p "$IT_TMP/events" # a tracefs with no event at all
if ! start_tracer -d "$name"; then
	fail bare_partial "$TRACER_WHY"
	fail bare_failed "$TRACER_WHY"
	fail bare_none "$TRACER_WHY"
else
	dd if="$dev" of=/dev/null bs=4k count=64 iflag=direct status=none
	sleep 0.3
	stop_tracer
	warn=$(grep -c '^iotracer: warning: layer fs: [0-9]* of [0-9]* hooks attached (no tracepoint filemap/mm_filemap_add_to_page_cache)' \
		"$TRACER_ERR")
	check bare_partial "exit $TRACER_RC, stderr: $(head -c 300 "$TRACER_ERR" | tr '\n' ' ')" \
		test "$TRACER_RC" = 0 -a "$warn" -eq 1
	st=$(jq -r 'select(.type == "attach" and .hook == "mm_filemap_add_to_page_cache") | .state' \
		"$TRACER_JSON")
	check bare_failed "the page-cache hook's attach line has state '${st:-none}', want failed (the kernel has it)" \
		test "$st" = failed
	n=$(jcount "$TRACER_JSON" '.kind == "syscall" and .syscall == "read" and .dev == $d' \
		--arg d "$name")
	check bare_none "$n read() records for dd's 64" test "$n" -eq 64
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
