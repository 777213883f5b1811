#!/usr/bin/env bash
# The shipped unit and config together: the daemon starts under the unit's sandbox with
# the shipped config, and with each key of it uncommented (docs/service.md). systemd is
# not PID 1 on every test machine: tests/tools/unit_sandbox.sh emulates the unit's file
# system, umask and capability settings in a private mount namespace; the seccomp-based
# settings (RestrictAddressFamilies, MemoryDenyWriteExecute) are checked against what the
# running daemon does instead.
# Oracles: exit statuses, the files it wrote (stat), ss (its sockets' families),
# /proc/PID/maps, systemd-analyze security --offline.
#   shipped       the shipped config, its metrics port made free: -D 3 under the sandbox
#                 exits 0, and its recording is in /var/lib/iotracer: dir 0750, files 0600
#   start_line    ... with -q (ExecStart's) its stderr (the journal) has one start line:
#                 the version of --version, the layers attached, the metrics address and
#                 the recording directory; the unit sends stdout (the summaries) to the
#                 journal too
#   key_NAME      one per key of the shipped config, uncommented (values naming this
#                 machine's things made real: a loop device, a cgroup, a live pid):
#                 starts under the sandbox and exits 0 after -D 2 (SERVICE_JOBS, 4, of
#                 these runs at a time: each its own sandbox, state dir and port)
#   families      the daemon under the sandbox with --metrics: every socket it holds is
#                 of a family RestrictAddressFamilies= allows
#   wx_maps       ... and none of its memory maps is writable and executable
#                 (MemoryDenyWriteExecute=yes)
#   exposure      systemd-analyze security --offline: exposure below 6.0 (before issue 23);
#                 no placeholder URL in Documentation=
# Keys of [link] other than mode and name need a peer or a QEMU (test_link_auth.sh,
# test_host_qemu.sh): SKIP here with that reason.
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

CONF_SRC=$IT_ROOT/configs/iotracer.conf
mapfile -t KEYS < <(sed -n 's/^#\{0,1\}\([a-z][a-z-]*\) = .*/\1/p' "$CONF_SRC")
names=(shipped start_line)
for k in "${KEYS[@]}"; do names+=("key_$k"); done
names+=(families wx_maps exposure)
it_begin "${names[@]}"
it_require_all
require_cmd unshare setpriv capsh findmnt systemd-analyze ss

pfx=$IT_TMP/prefix
make -s -C "$IT_ROOT" install PREFIX="$pfx" SYSCONFDIR="$pfx/etc" >"$IT_TMP/install.log" 2>&1 ||
	fail_all "make install failed: $(tail -c 300 "$IT_TMP/install.log" | tr '\n' ' ')"
UNIT=$pfx/lib/systemd/system/iotracer.service
SANDBOX=$IT_ROOT/tests/tools/unit_sandbox.sh
# ExecStart's arguments after the binary, with the config where the sandbox puts it
read -r -a EXEC_ARGS < <(sed -n 's/^ExecStart=[^ ]* //p' "$UNIT" |
	sed 's|--config [^ ]*|--config /run/iotracer-etc/iotracer.conf|')
note "ExecStart arguments: ${EXEC_ARGS[*]}"

dev=$(mk_loop 32) || fail_all "cannot create a loop device"
mk_cgroup || CGROUP_DIR=""
sleep 600 &
LIVE=$!
_it_register pids "$LIVE"

# in_sandbox HOSTDIR ARGS...: the daemon as the unit runs it, plus ARGS
in_sandbox() {
	local host=$1
	shift
	timeout -k 5 60 "$SANDBOX" "$UNIT" "$host" -- "$IOTRACER" "${EXEC_ARGS[@]}" "$@"
}

# conf HOSTDIR SED...: the shipped config with the metrics port made free, edited by SED;
# a port no earlier conf took (the key runs below share the time they hold it)
PORTS_TAKEN=" "
conf() {
	local host=$1 port i
	shift
	mkdir -p "$host/etc"
	for ((i = 0; i < 20; i++)); do
		port=$(free_port) || return 1
		[[ $PORTS_TAKEN == *" $port "* ]] || break
	done
	PORTS_TAKEN+="$port "
	sed -e "s/^metrics = .*/metrics = 127.0.0.1:$port/" "$@" "$CONF_SRC" >"$host/etc/iotracer.conf"
}

# ---------------------------------------------------------------- shipped
h=$IT_TMP/shipped
conf "$h"
in_sandbox "$h" -D 3s >"$IT_TMP/shipped.out" 2>"$IT_TMP/shipped.err"
rc=$?
segs=$(find "$h/state" -name '*.itrec' | wc -l)
modes=$(stat -c '%a' "$h/state"/* 2>/dev/null | sort -u | tr '\n' ' ')
note "shipped config under the sandbox: exit $rc, $segs segments, state dir $(stat -c %a "$h/state"), files $modes"
check shipped "exit $rc ($(head -c 300 "$IT_TMP/shipped.err" | tr '\n' ' ')), $segs segments, dir $(stat -c %a "$h/state"), files $modes" \
	test "$rc" -eq 0 -a "$segs" -ge 1 -a "$(stat -c %a "$h/state")" = 750 -a "$modes" = "600 "

ver=$("$IOTRACER" --version | sed 's/^iotracer //')
port=$(sed -n 's/^metrics = //p' "$h/etc/iotracer.conf")
sl=$(grep -c ' started: ' "$IT_TMP/shipped.err")
want="iotracer: $ver started: layers syscall,fs,sched,block,stack ("
got=$(grep ' started: ' "$IT_TMP/shipped.err" | head -n 1)
so=$(sed -n 's/^StandardOutput=//p' "$UNIT")
check start_line "$sl start lines: '$got' (want one: '${want}N hooks attached); metrics http://$port/metrics; recording /var/lib/iotracer'), StandardOutput=$so" \
	test "$sl" -eq 1 -a "$so" = journal -a "${got%% hooks attached*}" != "$got" -a \
	"${got#"$want"}" != "$got" -a "${got##*; metrics http://$port/metrics; recording /var/lib/iotracer}" = ""

# ---------------------------------------------------------------- each key
# value_for KEY: a value that names a real thing here ("" keeps the example's)
value_for() {
	case $1 in
	pid) echo "$LIVE" ;;
	dev) devname "$dev" ;;
	cgroup) echo "$CGROUP_DIR" ;;
	file) echo /var/lib/iotracer ;;
	duration) echo 1h ;; # the command line's -D 2 is over it
	*) echo "" ;;
	esac
}
# Each key's run is its own daemon, sandbox, state dir and port: SERVICE_JOBS (8) of
# them at a time, each with its whole -D 2s; checked in key order once all ended.
jobs=${SERVICE_JOBS:-8}
running=0
ran=() kpids=()
for k in "${KEYS[@]}"; do
	case $k in
	link | listen | qemu-pid | link-key | qemu-uprobes | qemu-stages)
		skip "key_$k" "needs a peer or a QEMU, host mode (test_link_auth.sh, test_host_qemu.sh, the lab's test_modes.sh)"
		continue
		;;
	cgroup)
		[[ -n $CGROUP_DIR ]] || {
			skip "key_$k" "no cgroup v2 here"
			continue
		}
		;;
	esac
	v=$(value_for "$k")
	h=$IT_TMP/key-$k
	if [[ -n $v ]]; then
		conf "$h" -e "s|^#\{0,1\}$k = .*|$k = $v|"
	else
		conf "$h" -e "s|^#$k = |$k = |"
	fi
	{
		in_sandbox "$h" -D 2s >"$IT_TMP/key-$k.out" 2>"$IT_TMP/key-$k.err"
		echo $? >"$IT_TMP/key-$k.rc"
	} &
	_it_register pids "$!"
	kpids+=("$!")
	ran+=("$k")
	if ((++running >= jobs)); then
		wait -n
		running=$((running - 1))
	fi
done
wait "${kpids[@]}" # (not LIVE)
for p in "${kpids[@]}"; do _it_unregister pids "$p"; done
for k in "${ran[@]}"; do
	line=$(grep "^$k = " "$IT_TMP/key-$k/etc/iotracer.conf")
	rc=$(cat "$IT_TMP/key-$k.rc" 2>/dev/null || echo none)
	vnote "$line: exit $rc"
	check "key_$k" "'$line' under the sandbox: exit $rc: $(head -c 300 "$IT_TMP/key-$k.err" | tr '\n' ' ')" \
		test "$rc" = 0
done

# ---------------------------------------------------------------- families, wx_maps
h=$IT_TMP/running
conf "$h"
in_sandbox "$h" -D 20s >"$IT_TMP/running.out" 2>"$IT_TMP/running.err" &
spid=$!
_it_register pids "$spid"
dpid=""
for ((i = 0; i < 100; i++)); do
	# the sandbox runs the program at the unit's fixed path (unit_sandbox.sh)
	dpid=$(pgrep -n -f "^/run/iotracer-bin/prog ${EXEC_ARGS[0]}" || true)
	[[ -n $dpid ]] && (($(bpf_link_count "$dpid") > 0)) && break
	sleep 0.1
done
allowed=$(sed -n 's/^RestrictAddressFamilies=//p' "$UNIT")
if [[ -z $dpid ]]; then
	fail families "the daemon did not start under the sandbox: $(head -c 300 "$IT_TMP/running.err")"
	fail wx_maps "the daemon did not start"
else
	# ss's netids of the daemon's sockets -> address families
	fams=$(ss -a -p -A all 2>/dev/null | awk -v p="pid=$dpid," 'index($0, p) { print $1 }' | sort -u |
		sed 's/^u_.*/AF_UNIX/; s/^\(tcp\|udp\)$/AF_INET/; s/^v_.*/AF_VSOCK/; s/^nl$/AF_NETLINK/; s/^p_.*/AF_PACKET/' | sort -u)
	bad=""
	for f in $fams; do
		[[ " $allowed " == *" $f "* || ($f == AF_INET && " $allowed " == *" AF_INET6 "*) ]] || bad+="$f "
	done
	note "daemon $dpid under the sandbox: socket families $(echo "$fams" | tr '\n' ' '); allowed: $allowed"
	check families "families outside RestrictAddressFamilies=$allowed: $bad" test -n "$fams" -a -z "$bad"
	wx=$(awk '$2 ~ /w.x/' "/proc/$dpid/maps" | wc -l)
	check wx_maps "$wx maps writable and executable: $(awk '$2 ~ /w.x/' "/proc/$dpid/maps" | head -n 3 | tr '\n' ' ')" \
		test "$wx" -eq 0
fi
kill "$spid" 2>/dev/null
[[ -n $dpid ]] && kill "$dpid" 2>/dev/null
wait "$spid" 2>/dev/null
_it_unregister pids "$spid"

# ---------------------------------------------------------------- exposure
score=$(systemd-analyze security --offline=yes "$UNIT" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
docs=$(sed -n 's/^Documentation=//p' "$UNIT")
note "systemd-analyze security --offline: exposure ${score:-none}; Documentation=$docs"
check exposure "exposure ${score:-none} (want < 6.0), Documentation=$docs" \
	awk -v s="${score:-99}" -v d="$docs" 'BEGIN { exit !(s < 6.0 && d !~ /example\.invalid|https?:/) }'

kill "$LIVE" 2>/dev/null
it_end
