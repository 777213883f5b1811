#!/usr/bin/env bash
# --sink's libcurl is loaded at --sink only (src/sink/curldl.c, dlopen): a daemon without
# --sink never maps it, and a broken libcurl fails --sink at start with one line.
# Oracles: /proc/PID/maps, the exit status and stderr. The broken libcurl is the system's
# own file covered by an empty one in a private mount namespace (unshare -m, mount --bind):
# the dynamic loader finds it where it always does and refuses it ("file too short").
# A libcurl missing altogether takes the same path (dlopen's NULL, dlerror's text) with
# another text; it is not made here: LD_LIBRARY_PATH can shadow the system's library but
# not remove it, and hiding the whole library directory would hide libc too.
#   no_curl       a daemon without --sink (always-on, attached): its maps name no libcurl
#                 (before: libcurl and its ~20 libraries, mapped at exec)
#   curl_mapped   a daemon with --sink (an address nothing answers, no spill): its maps
#                 name libcurl.so.4 (the same oracle sees the library when it is loaded)
#   broken_lib    --sink in the namespace: exit 1 and one stderr line, "iotracer: --sink:
#                 cannot load libcurl.so.4: " and the loader's reason
#   broken_conf   the same through the config file's [sink] sink key: the line names
#                 FILE:LINE: sink
#   broken_report `iotracer report --from` in the namespace: exit 1, one line "iotracer:
#                 report: --from: cannot load libcurl.so.4: ..."
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin no_curl curl_mapped broken_lib broken_conf broken_report
require_root
require_cmd unshare mount losetup ss
require_iotracer

lib=$(ldconfig -p | awk '$1 == "libcurl.so.4" && $NF ~ /^\// { print $NF; exit }')
[[ -n $lib ]] || skip_all "no libcurl.so.4 in ldconfig's cache (make deps installs libcurl4)"
lib=$(realpath "$lib")
: >"$IT_TMP/empty.so"
# iotracer in a private mount namespace whose libcurl is an empty file
broken=$IT_TMP/iotracer_broken
cat >"$broken" <<EOF
#!/bin/sh
exec unshare -m --propagation private sh -c 'mount --bind "\$0" "\$1" && shift && exec "\$@"' \\
	"$IT_TMP/empty.so" "$lib" "$IOTRACER" "\$@"
EOF
chmod +x "$broken"

dev=$(mk_loop 16) || fail_all "cannot create a loop device"
port=$(free_port) || fail_all "no free port"
url=clickhouse://127.0.0.1:$port/iotracer.requests # nothing listens there

# maps_libs PID: the shared objects PID maps, one a line
maps_libs() { awk '$6 ~ /\.so/ { n = split($6, p, "/"); print p[n] }' "/proc/$1/maps" | sort -u; }

# both daemons at once (two loads in parallel): B with --sink in the background, A
# without it through start_tracer (attached); B loaded libcurl before its BPF side
bg_start sink "$IOTRACER" -q --no-live -j /dev/null --profile always-on -l block \
	-d "$(devname "$dev")" --sink "$url" --sink-spill none
pid_b=$BG_PID
start_tracer --profile always-on -l block -d "$(devname "$dev")"
ok_a=$?
if ((ok_a == 0)); then
	libs=$(maps_libs "$TRACER_PID" | tr '\n' ' ')
	note "without --sink: maps $libs"
	check no_curl "libcurl mapped without --sink: $libs" test -z "$(grep -o 'libcurl[^ ]*' <<<"$libs")"
	stop_tracer || note "$TRACER_WHY"
else
	fail no_curl "no daemon without --sink: $TRACER_WHY"
fi
for ((i = 0; i < 100; i++)); do
	grep -q ' started: ' "$IT_TMP/sink.out" && break
	proc_alive "$pid_b" || break
	sleep 0.1
done
if grep -q ' started: ' "$IT_TMP/sink.out" && proc_alive "$pid_b"; then
	libs=$(maps_libs "$pid_b" | tr '\n' ' ')
	note "with --sink: maps $libs"
	check curl_mapped "no libcurl.so.4 mapped with --sink: $libs" grep -q 'libcurl\.so\.4' <<<"$libs"
else
	fail curl_mapped "no daemon with --sink: $(head -c 300 "$IT_TMP/sink.out" | tr '\n' ' ')"
fi
_it_kill "$pid_b"
_it_unregister pids "$pid_b"

# refused CHECK WANT ARGS...: iotracer ARGS in the namespace with libcurl broken exits 1
# with one stderr line that starts with WANT
refused() {
	local name=$1 want=$2 rc msg
	shift 2
	"$broken" "$@" >/dev/null 2>"$IT_TMP/$name.err" </dev/null
	rc=$?
	msg=$(cat "$IT_TMP/$name.err")
	note "$name: exit $rc: $msg"
	check "$name" "exit $rc (want 1), stderr: $msg (want one line: $want...)" \
		test "$rc" -eq 1 -a "$(grep -c '' "$IT_TMP/$name.err")" -eq 1 -a \
		"$(grep -c "^$want" "$IT_TMP/$name.err")" -eq 1
}

refused broken_lib "iotracer: --sink: cannot load libcurl\.so\.4: " \
	-q --no-live -l block -d "$(devname "$dev")" --sink "$url" -D 1s
printf '[sink]\n# nothing answers there\nsink = %s\n' "$url" >"$IT_TMP/sink.conf"
refused broken_conf "iotracer: $IT_TMP/sink\.conf:3: sink: cannot load libcurl\.so\.4: " \
	--config "$IT_TMP/sink.conf" -q --no-live -l block -d "$(devname "$dev")" -D 1s
refused broken_report "iotracer: report: --from: cannot load libcurl\.so\.4: " report --from "$url"
it_end
