#!/usr/bin/env bash
# The host↔guest link lets no one in (docs/link.md, "Authentication", "Scope"): a real
# host-mode daemon on a stand-in QEMU (a shell whose command line carries two raw
# -drive/-device disks, serials itvd0 and itvd1, 1 MiB images), and build/link_peer (a
# guest end of the link without BPF) playing a local intruder and genuine guests.
# Oracles: what link_peer sent (known synthetic input), the images' sizes, exit statuses.
#   cli_key_mode     --link-key FILE of mode 0644: exit 2, one stderr line naming --link-key
#   cli_listen       --listen tcp:0.0.0.0:PORT without --link-key: exit 2, names --link-key
#   junk_filter      keyless loopback host (it warns so at start): a FILTER of 16 junk
#                    serials leaves itvd0 traced (no host_filter line with "traced":false
#                    for it), counted (16)
#   junk_records     records with op 86 at sector 4.4e18, past the image's end, of no disk:
#                    acked, never written as guest_vreq, counted as malformed (3)
#   good_records     a genuine guest's 3 records (the last 8 sectors included) are written
#                    as guest_vreq lines with their sectors; its filter (itvd0) stops the
#                    tracing of itvd1 (positive control for junk_filter)
#   key_refused      keyed host: a peer without the key and one with another key are not
#                    let up (refused, counted); none of their records written
#   key_ok           keyed host: a peer with the same key gets its record through
#   quiet_warned     a guest daemon (--mode guest -q) without the key: the keyed host refuses
#                    it, and under -q both still say so: the guest a warning naming its
#                    link, the host one naming the refusal (issue 37: -q hid them)
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin cli_key_mode cli_listen junk_filter junk_records good_records key_refused key_ok \
	quiet_warned
require_root
require_cmd jq timeout truncate
require_iotracer
PEER=${LINK_PEER:-$IT_ROOT/build/link_peer}
[[ -x $PEER ]] || fail_all "$PEER not built (make tools)"

# ------------------------------------------------------------------ command line
head -c 32 /dev/urandom >"$IT_TMP/key"
head -c 32 /dev/urandom >"$IT_TMP/other.key"
chmod 600 "$IT_TMP/key" "$IT_TMP/other.key"
cp "$IT_TMP/key" "$IT_TMP/open.key"
chmod 644 "$IT_TMP/open.key"
# one-line error naming the option, exit 2: runs before anything is loaded
cli_err() { # CHECK ARGS...
	local check=$1 rc
	shift
	timeout 20 "$IOTRACER" "$@" >"$IT_TMP/$check.out" 2>"$IT_TMP/$check.err"
	rc=$?
	check "$check" "rc $rc, stderr: $(head -c 300 "$IT_TMP/$check.err")" \
		test "$rc" = 2 -a "$(wc -l <"$IT_TMP/$check.err")" = 1 -a \
		"$(grep -c -- '--link-key' "$IT_TMP/$check.err")" = 1
}
cli_err cli_key_mode --mode host --link-key "$IT_TMP/open.key"
cli_err cli_listen --mode host --listen "tcp:0.0.0.0:$((20000 + RANDOM % 20000))"

# ------------------------------------------------------------------ a stand-in QEMU
truncate -s 1M "$IT_TMP/d0.img" "$IT_TMP/d1.img"
bg_start fakeqemu bash -c 'sleep 300; :' qemu-fake \
	-drive "file=$IT_TMP/d0.img,format=raw,if=none,id=d0" -device virtio-blk-pci,drive=d0,serial=itvd0 \
	-drive "file=$IT_TMP/d1.img,format=raw,if=none,id=d1" -device virtio-blk-pci,drive=d1,serial=itvd1
FAKE=$BG_PID

# host_lines JSON JQ: the values jq selects from the daemon's JSON lines
host_lines() { jq -c "$2" "$1" 2>/dev/null; }
final_summary() { host_lines "$1" 'select(.type == "host_summary" and .final)' | tail -n 1; }
# traced JSON SERIAL: the "traced" values of SERIAL in every host_filter line, in order
traced() { host_lines "$1" "select(.type == \"host_filter\") | .disks[] | select(.serial == \"$2\") | .traced" | tr '\n' ' '; }
peer() { timeout 20 "$PEER" "$@" 2>>"$IT_TMP/peer.err"; }

# ------------------------------------------------------------------ keyless loopback
port=$((20000 + RANDOM % 20000))
if ! start_tracer --mode host --qemu-pid "$FAKE" --listen "tcp:127.0.0.1:$port"; then
	fail_rest "host daemon: $TRACER_WHY"
	it_end
fi
junk=$(printf 'junk%02d,' $(seq 0 15))
intruder=$(peer "tcp:127.0.0.1:$port" --name intruder --filter "${junk%,}" \
	--rec junk:86:4400000000000000000:8 --rec itvd0:0:2045:8 --rec nodisk:0:0:8)
irc=$?
sleep 0.3
t0=$(traced "$TRACER_JSON" itvd0)
v0=$(host_lines "$TRACER_JSON" 'select(.type == "guest_vreq")' | wc -l)
good=$(peer "tcp:127.0.0.1:$port" --name good --filter itvd0 \
	--rec itvd0:0:0:8 --rec itvd0:1:8:8 --rec itvd0:0:2040:8)
grc=$?
sleep 0.3
stop_tracer TERM || note "host daemon: $TRACER_WHY"
sum=$(final_summary "$TRACER_JSON")
note "intruder: $intruder (rc $irc); good guest: $good (rc $grc)"
note "host: $(jq -c '{refused, records_malformed, filter_ignored, records_rx, peers}' <<<"$sum" 2>/dev/null)"
warned=$(grep -c 'without --link-key: any local process may connect' "$TRACER_ERR")
check junk_filter "itvd0 traced after the intruder: '$t0'; keyless warning lines: $warned; summary: $(head -c 300 <<<"$sum")" \
	test -n "$t0" -a "${t0//true /}" = "" -a "$(jq -r .filter_ignored <<<"$sum" 2>/dev/null)" = 16 -a "$warned" = 1
check junk_records "intruder rc $irc ($intruder), guest_vreq lines after it: $v0, summary: $(head -c 300 <<<"$sum")" \
	test "$irc" = 0 -a "$v0" = 0 -a "$(jq -r .records_malformed <<<"$sum" 2>/dev/null)" = 3
sectors=$(host_lines "$TRACER_JSON" 'select(.type == "guest_vreq" and .serial == "itvd0") | .sector' | tr '\n' ' ')
t1=$(traced "$TRACER_JSON" itvd1)
check good_records "good guest rc $grc ($good); guest_vreq sectors: '$sectors'; itvd1 traced: '$t1'" \
	test "$grc" = 0 -a "$sectors" = "0 8 2040 " -a "$(awk '{print $NF}' <<<"$t1")" = false

# ------------------------------------------------------------------ keyed host
port=$((20000 + RANDOM % 20000))
if ! start_tracer --mode host --qemu-pid "$FAKE" --listen "tcp:127.0.0.1:$port" --link-key "$IT_TMP/key"; then
	fail key_refused "host daemon: $TRACER_WHY"
	fail key_ok "host daemon: $TRACER_WHY"
	fail quiet_warned "host daemon: $TRACER_WHY"
	it_end
fi
nokey=$(peer "tcp:127.0.0.1:$port" --name nokey --rec itvd0:0:16:8 --ms 1500)
nrc=$?
wrong=$(peer "tcp:127.0.0.1:$port" --name wrong --key "$IT_TMP/other.key" --rec itvd0:0:24:8 --ms 1500)
wrc=$?
right=$(peer "tcp:127.0.0.1:$port" --name right --key "$IT_TMP/key" --rec itvd0:0:32:8)
rrc=$?
# a real guest daemon under -q, without the key: the host refuses it; both say so
timeout -k 5 30 "$IOTRACER" --mode guest -q --no-live --link "tcp:127.0.0.1:$port" -D 4s \
	>/dev/null 2>"$IT_TMP/guest.err" </dev/null
grc=$?
sleep 0.3
stop_tracer TERM || note "host daemon: $TRACER_WHY"
sum=$(final_summary "$TRACER_JSON")
sectors=$(host_lines "$TRACER_JSON" 'select(.type == "guest_vreq") | .sector' | tr '\n' ' ')
note "no key: $nokey (rc $nrc); other key: $wrong (rc $wrc); same key: $right (rc $rrc); refused $(jq -r .refused <<<"$sum" 2>/dev/null)"
check key_refused "no key rc $nrc ($nokey), other key rc $wrc ($wrong); guest_vreq sectors '$sectors'; summary refused $(jq -r .refused <<<"$sum" 2>/dev/null)" \
	test "$nrc" = 1 -a "$wrc" = 1 -a "$(jq -r .up <<<"$nokey")$(jq -r .up <<<"$wrong")" = 00 -a \
	"$(jq -r '.refused >= 2' <<<"$sum" 2>/dev/null)" = true
check key_ok "same key rc $rrc ($right); guest_vreq sectors '$sectors'" \
	test "$rrc" = 0 -a "$sectors" = "32 "
gw=$(grep -c "warning: link: tcp:127.0.0.1:$port: " "$IT_TMP/guest.err")
hw=$(grep -c "warning: link: peer .*refused: peer has no link key" "$TRACER_ERR")
note "guest -q (exit $grc): $(head -c 300 "$IT_TMP/guest.err" | tr '\n' '|'); host -q: $(grep refused "$TRACER_ERR" | head -c 300 | tr '\n' '|')"
check quiet_warned "guest -q without the key: exit $grc, its warnings about the link $gw (want >= 1); the host's -q warnings of the refusal $hw (want >= 1)" \
	test "$grc" = 0 -a "$gw" -ge 1 -a "$hw" -ge 1
it_end
