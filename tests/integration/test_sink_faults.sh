#!/usr/bin/env bash
# --sink when ClickHouse is down, slow, full or wrong (docs/fleet.md, "Nothing lost"). One fio
# job paced at 400 IOPS for 25 s on a loop device, traced by eight daemons at once (-d on that
# device, each with its own -j file, --sink-timeout 2s), each shipping somewhere else; Debian's
# clickhouse-server run by the test (tests/integration/clickhouse.sh). Oracles: fio's IO
# count, the server's own count, the daemons' counters and the spill directories read back.
#   faults      the server is killed 2 s into the run and restarted 10 s later, then
#               SIGSTOPed for 10 s: after the run the table holds every fio IO once (FINAL),
#               and /metrics shows the spill and the replay (rows spilled and replayed > 0; the
#               final summary's JSON sink line the same), and retries counted by reason
#               (connect while it was down, timeout while stopped); every row names fio's
#               file, the spilled and replayed ones too (the spill keeps the names)
#   spill_full  a server that never answers and a 64K spill: drops counted (spill_full), and
#               requests handed = the requests in the spill directory + the drops; a spill on
#               a full filesystem (128K tmpfs): drops counted (spill_error); never silent: both
#               exit with status 1 and a line saying the rows were dropped
#   bad_url     a malformed address: one line naming it, exit status 2
#   bad_input   a wrong password (reason auth), a missing table (reason table) and a server
#               answering HTTP 500 (reason http_5xx): one warning line each naming the cause,
#               retries counted by that reason, and the daemon goes on tracing (its -j lines
#               hold every fio IO)
#   tls         a server on HTTPS only (self-signed certificate): --sink-ca FILE sends every
#               IO over https (the server's count); without it, the certificate is refused
#               (reason tls), said once
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/clickhouse.sh
. "$(dirname "$0")/clickhouse.sh"

it_begin faults spill_full bad_url bad_input tls
it_require_all curl python3 openssl
ch_require
DDL=$IT_ROOT/deploy/clickhouse

# bad_url first: no server needed
"$IOTRACER" --sink "clickhouse://127.0.0.1/iotracer.requests" -D 1s >"$IT_TMP/badurl.out" 2>&1
rc=$?
msg=$(cat "$IT_TMP/badurl.out")
check bad_url "exit $rc: $msg" test "$rc" = 2 -a "$(wc -l <"$IT_TMP/badurl.out")" = 1 \
	-a -n "$(grep -F -- '--sink' <<<"$msg" | grep -F 'no port')"

ch_start main || fail_all "cannot start clickhouse-server"
ch_https tls || fail_all "cannot make a certificate"
ch_start tls || fail_all "cannot start the HTTPS clickhouse-server"
ch_ddl main "$DDL/schema.sql" || fail_all "DDL failed"
ch_ddl tls "$DDL/schema.sql" || fail_all "DDL failed"
# a server answering 500 to everything
P500=$(free_port) || fail_all "no free port"
bg_start http500 python3 -c '
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def answer(self):
        n = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(n)
        self.send_response(500); self.send_header("Content-Length", "5"); self.end_headers()
        self.wfile.write(b"boom\n")
    do_GET = do_POST = answer
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()' "$P500"
DEAD=$(free_port) || fail_all "no free port" # nothing listens there
mkdir -p "$IT_TMP/tiny"
mount -t tmpfs -o size=128k tmpfs "$IT_TMP/tiny" || fail_all "cannot mount a tmpfs"
_it_register mounts "$IT_TMP/tiny"
printf 'not-the-password\n' >"$IT_TMP/bad.pw" && chmod 600 "$IT_TMP/bad.pw"

dev=$(mk_loop 64 fill) || fail_all "cannot create a loop device"
name=$(devname "$dev")
wait_quiet "$dev" 5
MPORT=$(free_port) || fail_all "no free port"
u() { echo "clickhouse://iotracer@127.0.0.1:$1/iotracer.$2"; }
declare -A ARGS=(
	[main]="--sink $(u "${CH_HTTP[main]}" requests) --sink-queue 64K --metrics 127.0.0.1:$MPORT"
	[full]="--sink $(u "$DEAD" requests) --sink-queue 64K --sink-spill-max 64K"
	[enospc]="--sink $(u "$DEAD" requests) --sink-queue 64K"
	[pw]="--sink $(u "${CH_HTTP[main]}" requests)"
	[table]="--sink $(u "${CH_HTTP[main]}" nope)"
	[e500]="--sink $(u "$P500" requests)"
	[tls]="--sink $(u "${CH_HTTPS[tls]}" requests) --sink-ca $CH_CA"
	[noca]="--sink $(u "${CH_HTTPS[tls]}" requests)"
)
DAEMONS=(main full enospc pw table e500 tls noca)
for d in "${DAEMONS[@]}"; do
	spill=$IT_TMP/spill-$d
	[[ $d == enospc ]] && spill=$IT_TMP/tiny/spill
	auth=$CH_PWFILE
	[[ $d == pw ]] && auth=$IT_TMP/bad.pw
	# shellcheck disable=SC2086 # the options, split
	tr_start "$d" -d "$name" -l syscall,block --name "$d" ${ARGS[$d]} --sink-auth "$auth" \
		--sink-spill "$spill" --sink-timeout 2s
done
tr_attached "${DAEMONS[@]}" || fail_all "$TR_WHY"

metric() { curl -s --max-time 2 "http://127.0.0.1:$MPORT/metrics" | awk -v k="$1" '$1 == k { print $2 }'; }
fio_start "$IT_TMP/fio.json" --name=faults --filename="$dev" --ioengine=psync --direct=1 \
	--rw=randrw --rwmixread=80 --bs=4k --rate_iops=320,80 --time_based --runtime=25s \
	--randrepeat=0 --norandommap --size=60M
t0=$(date +%s%N)
at() { # at SECONDS: sleep until that long after t0
	local ns=$((t0 + $1 * 1000000000 - $(date +%s%N)))
	((ns > 0)) && sleep "$(awk -v n="$ns" 'BEGIN { printf "%.3f", n / 1e9 }')"
}
at 2
ch_kill main
note "server killed at 2 s; $(metric 'iotracer_sink_rows_total{table="requests",state="sent"}') rows sent by then"
at 12
ch_restart main || fail_all "cannot restart the server"
note "restarted at 12 s; spilled so far $(metric 'iotracer_sink_rows_total{table="requests",state="spilled"}')"
at 14
ch_signal main STOP
at 24
ch_signal main CONT
note "stopped from 14 s to 24 s"
fio_wait 60 || fail_all "fio failed"
IOS=$(jq -r '[.jobs[] | .read.total_ios + .write.total_ios] | add' "$IT_TMP/fio.json")
# the main daemon: until its queue and spill are empty (the replay), 30 s at most
for ((i = 0; i < 150; i++)); do
	q=$(metric iotracer_sink_queue_rows) sp=$(metric iotracer_sink_spill_bytes)
	[[ $q == 0 && $sp == 0 ]] && break
	sleep 0.2
done
curl -s --max-time 2 "http://127.0.0.1:$MPORT/metrics" | grep '^iotracer_sink' >"$IT_TMP/main.metrics"
tr_stop "${DAEMONS[@]}"
note "exit status: $(for d in "${DAEMONS[@]}"; do printf '%s %s, ' "$d" "${TR_RC[$d]}"; done)"
for d in main pw table e500 tls noca; do # rows dropped: status 1 (full, enospc)
	((TR_RC[$d] == 0)) || note "daemon $d exited ${TR_RC[$d]}: $(tail -c 300 "${TR_ERR[$d]}" | tr '\n' ' ')"
done
m() { awk -v k="$1" '$1 == k { print $2 }' "$IT_TMP/main.metrics"; }
spilled=$(m 'iotracer_sink_rows_total{table="requests",state="spilled"}')
replayed=$(m 'iotracer_sink_rows_total{table="requests",state="replayed"}')
r_conn=$(m 'iotracer_sink_retries_total{reason="connect"}')
r_time=$(m 'iotracer_sink_retries_total{reason="timeout"}')
final=$(ch_q main "SELECT count() FROM iotracer.requests FINAL WHERE host = 'main'")
raw=$(ch_q main "SELECT count() FROM iotracer.requests WHERE host = 'main'")
named=$(ch_q main "SELECT count() FROM iotracer.requests FINAL WHERE host = 'main' AND file = '$dev'")
note "main: $(grep '^sink:' "${TR_OUT[main]}")"
# the final summary's JSON line says the same (docs/json.md, "sink")
js=$(jq -r 'select(.type == "sink" and .final) | "\(.spilled) \(.replayed)"' "${TR_JSON[main]}" 2>/dev/null)
check faults "fio $IOS IOs; the table: $final (FINAL), $raw rows, $named naming $dev; spilled $spilled, replayed $replayed (the JSON sink line: $js), retries connect $r_conn timeout $r_time" \
	test "$final" = "$IOS" -a "$named" = "$IOS" -a "${spilled:-0}" -gt 0 -a "${replayed:-0}" -gt 0 \
	-a "$js" = "$spilled $replayed" -a "${r_conn:-0}" -gt 0 -a "${r_time:-0}" -gt 0

# spill_full: handed = in the spill directory + dropped, drops counted
sinkline() { grep '^sink:' "${TR_OUT[$1]}"; }
field() { sed -n "s/.* \([0-9]*\) $2.*/\1/p" <<<"$1" | head -n 1; }
spilled_in() {
	local n=0
	[[ -d $1 ]] && n=$("$IOTRACER" report -n 0 --json - "$1" 2>/dev/null | grep -c '"type":"request"')
	echo "$n"
}
fl=$(sinkline full) el=$(sinkline enospc)
f_hand=$(field "$fl" requests,) f_drop=$(sed -n 's/.*dropped spill_full \([0-9]*\).*/\1/p' <<<"$fl")
f_in=$(spilled_in "$IT_TMP/spill-full")
e_hand=$(field "$el" requests,) e_drop=$(sed -n 's/.*dropped spill_error \([0-9]*\).*/\1/p' <<<"$el")
e_in=$(spilled_in "$IT_TMP/tiny/spill")
exits="full ${TR_RC[full]}, enospc ${TR_RC[enospc]}: $(cat "${TR_ERR[full]}" "${TR_ERR[enospc]}" | grep -c 'rows were dropped') lines"
check spill_full "exit status $exits; 64K spill: $f_hand handed = $f_in spilled + ${f_drop:-none} dropped (spill_full); full tmpfs: $e_hand handed = $e_in spilled + ${e_drop:-none} dropped (spill_error)" \
	test "${f_drop:-0}" -gt 0 -a "$((f_in + ${f_drop:-0}))" = "$f_hand" -a "$f_hand" = "$IOS" \
	-a "${e_drop:-0}" -gt 0 -a "$((e_in + ${e_drop:-0}))" = "$e_hand" -a "$e_hand" = "$IOS" \
	-a "${TR_RC[full]}" = 1 -a "${TR_RC[enospc]}" = 1

# bad_input: one warning naming the cause, retries counted, tracing on
bad=""
for d in pw:auth:'Wrong password' table:table:'iotracer.nope' e500:http_5xx:'HTTP 500'; do
	IFS=: read -r dn reason what <<<"$d"
	n_warn=$(grep -c "warning: --sink: .*$what.*reason=\"$reason\"" "${TR_ERR[$dn]}")
	n_ret=$(sed -n "s/.*retries $reason \([0-9]*\).*/\1/p" <<<"$(sinkline "$dn")")
	n_req=$(grep -c '"type":"request"' "${TR_JSON[$dn]}")
	note "$dn: $n_warn warning(s) '$(grep -m1 'warning: --sink' "${TR_ERR[$dn]}" | cut -c1-200)'; retries $reason ${n_ret:-0}; $n_req requests traced"
	[[ $n_warn == 1 && ${n_ret:-0} -gt 0 && $n_req == "$IOS" ]] || bad+="$dn "
done
check bad_input "daemons whose cause was not said once, counted, or that stopped tracing: ${bad:-none}" \
	test -z "$bad"

# tls
tl=$(sinkline tls)
t_count=$(ch_q tls "SELECT count() FROM iotracer.requests WHERE host = 'tls'")
n_warn=$(grep -c 'warning: --sink: .*reason="tls"' "${TR_ERR[noca]}")
note "tls: $tl; noca: $(grep -m1 'warning: --sink' "${TR_ERR[noca]}" | cut -c1-200)"
check tls "with --sink-ca: $t_count rows over $(grep -o '(https)\|(http)' <<<"$tl" | head -n 1) (fio $IOS); without: $n_warn tls warning" \
	test "$t_count" = "$IOS" -a -n "$(grep -F '(https)' <<<"$tl")" -a "$n_warn" = 1
it_end
