#!/usr/bin/env bash
# Host mode while a traced QEMU is killed: two real QEMUs (paused: -S, no guest runs),
# each with one raw virtio-blk disk (serials itqa and itqb), traced by one host daemon;
# QEMU A is SIGKILLed mid-run.
# Oracles: the daemon's BPF link fds (/proc/PID/fdinfo), what link_peer sent (known
# synthetic input), exit statuses.
#   uprobes     the host attached uprobes on both QEMUs (JSON attach lines, ok)
#   detached    within 3 s of A's death the daemon says so and holds fewer links, by
#               exactly A's uprobes
#   serves_b    a guest of QEMU B still gets its records written (guest_vreq) after A died
#   exit        SIGTERM -> exit 0
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin uprobes detached serves_b exit
require_root
require_cmd jq timeout truncate qemu-system-x86_64
require_iotracer
PEER=${LINK_PEER:-$IT_ROOT/build/link_peer}
[[ -x $PEER ]] || fail_all "$PEER not built (make tools)"

# qemu NAME: a paused QEMU with one 1 MiB raw virtio-blk disk of serial itqNAME
qemu() {
	truncate -s 1M "$IT_TMP/$1.img"
	bg_start "qemu.$1" qemu-system-x86_64 -S -machine q35 -accel tcg -m 64 -nodefaults \
		-display none -monitor none -serial none \
		-drive "file=$IT_TMP/$1.img,format=raw,if=none,id=d0" \
		-device "virtio-blk-pci,drive=d0,serial=itq$1"
}
qemu a
QA=$BG_PID
qemu b
QB=$BG_PID
sleep 1
proc_alive "$QA" && proc_alive "$QB" || fail_all "QEMU did not start: $(tail -c 300 "$IT_TMP"/qemu.*.out 2>/dev/null)"

port=$(free_port) || fail_all "no free TCP port"
if ! start_tracer --mode host --qemu-pid "$QA,$QB" --listen "tcp:127.0.0.1:$port"; then
	fail_rest "host daemon: $TRACER_WHY"
	it_end
fi
ups=$(jq -c 'select(.type == "attach" and .layer == "qemu" and .ok) | .hook' "$TRACER_JSON" | tr '\n' ' ')
na=$(grep -o "pid $QA" <<<"$ups" | wc -l)
nb=$(grep -o "pid $QB" <<<"$ups" | wc -l)
check uprobes "uprobes ok: $ups" test "$na" -gt 0 -a "$nb" -gt 0

l0=$(bpf_link_count "$TRACER_PID")
kill -KILL "$QA"
said=0
for ((i = 0; i < 30; i++)); do
	grep -q "qemu pid $QA exited: its $na uprobes detached" "$TRACER_ERR" && said=1 && break
	sleep 0.1
done
l1=$(bpf_link_count "$TRACER_PID")
note "links $l0 -> $l1 after QEMU A ($QA, $na uprobes) died; said: $said"
check detached "said $said, links $l0 -> $l1 (want -$na)" test "$said" = 1 -a "$((l0 - l1))" = "$na"

got=$(timeout 20 "$PEER" "tcp:127.0.0.1:$port" --name guestb --rec itqb:0:0:8 --rec itqb:1:8:8 2>>"$IT_TMP/peer.err")
prc=$?
sleep 0.3
if stop_tracer TERM; then pass exit; else fail exit "$TRACER_WHY"; fi
sectors=$(jq -r 'select(.type == "guest_vreq" and .serial == "itqb") | .sector' "$TRACER_JSON" | tr '\n' ' ')
exited=$(jq -r 'select(.type == "host_summary" and .final) | .qemu_exited' "$TRACER_JSON" | tail -n 1)
check serves_b "peer rc $prc ($got); guest_vreq sectors of itqb: '$sectors'; qemu_exited $exited" \
	test "$prc" = 0 -a "$sectors" = "0 8 " -a "$exited" = 1
it_end
