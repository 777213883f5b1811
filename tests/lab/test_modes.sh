#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# test_modes.sh [TRANSPORT...]   (default: "serial"; LAB_FULL=1: "serial tcp")
#
# Host and guest modes (records joined across the VM link): boot the lab guest (LAB_MODES_KERNEL, default
# 6.12) with tests/lab/guest-modes.sh while tests/lab/host-modes-hook.sh runs
# `iotracer --mode host --qemu-pid <the lab's QEMU>` here. The link is the
# virtio-serial port (host dials QEMU's chardev socket) or tcp over slirp
# (host listens on 127.0.0.1:PORT, guest dials 10.0.2.2:PORT). QEMU runs with
# cache=none (host O_DIRECT preadv/pwritev of the image per guest request) on
# data-filled raw images this script owns. Checks per transport T:
#   lab_modes_T_run        guest ran, bundle intact, both host daemons wrote JSON
#   lab_modes_T_records    every guest virtio request on vda (ioload's ops: the
#                          oracle) reached the host exactly once per (session,
#                          seq), seqs 1..N without holes, across a guest SIGKILL
#                          and a host SIGKILL + restart
#   lab_modes_T_join       >= 97 % of them joined to a QEMU host IO (by the guest
#                          buffer QEMU passed through: docs/modes.md)
#   lab_modes_T_offsets    each joined write: the image at that offset holds the
#                          offset (ioload writes it into each block): the host IO
#                          really was at that place of the disk
#   lab_modes_T_order      every joined path ordered in host time within the
#                          measured clock uncertainty
#   lab_modes_T_filter     the guest filter names vda only: zero host records on
#                          the NVMe disk's image (which the guest also loaded),
#                          > 0 on vda's
#   lab_modes_T_reconnect  guest daemon #2 got every record acked (after the host
#                          restart), none dropped; both host daemons saw it
# On the first transport's boot (every transport's with LAB_MODES_MATRIX_ALL=1,
# default LAB_FULL: the others' on the uprobe path), the disk matrix
# (tests/lab/modes-disks.sh, LAB_MODES_DISKS): per disk lab_modes_T_<FORMAT>_<AIO>_<BUS>[_FLAG]_join, >= 97 %
# of the guest's requests on it joined, none wrong by the data oracle (the file
# and offset the joined host IO names hold the request's guest offset; qcow2:
# also where `qemu-img map` puts it); lab_modes_T_metrics (host daemon #2's
# /metrics: promtool-valid, every unjoined reason, none above its final
# summary); lab_modes_T_address (the host daemons joined by the guests'
# buffer addresses: the VM calibrated and went to the address path, its
# blk_aio uprobes detached, and in the cost's address phase the uprobe
# programs ran 0 times: bpf_stats); lab_modes_T_stages (host daemon #2 runs with
# --qemu-stages: its address-path joins still get QEMU's notify, the notify stages);
# lab_modes_kvm (KVM's interrupt
# tracepoints attached where the kvm module is loaded: SKIP without it;
# nothing fires under TCG); and the `# hostcost` notes: guest IOPS, host CPU
# per guest IO (QEMU's and the tracer's threads) and uprobe hits per guest IO
# with nothing traced, a standalone tracer on QEMU (LAB_MODES_STANDALONE=1, on
# with LAB_FULL=1: notes only, and its two tracers' attach cost the boot ~13 s
# under TCG), the uprobe path and the address path, on the same boot. That
# transport's host daemons are on the address path (the default); on the
# others the guest daemons send no buffer
# addresses (LAB_G_OLD_GUEST=1: as an older guest iotracer) and the host (the default
# too) keeps the VM on the uprobe path, lab_modes_T_uprobes: the VM pinned to its
# uprobes (said, counted), every join by QEMU's submit.
# and lab_modes_vsock: AF_VSOCK over the guest's vsock_loopback (the unit test
# binary test_link, static, run in the guest; SKIP when the guest has no vsock).
# Notes: the full-path stage table (p50/p99), clock offset and uncertainty,
# uprobe hits per guest IO and the host daemon's CPU.
#
# Environment: LAB_MODES_KERNEL, LAB_MODES_COUNT (ops per ioload run, 150),
# LAB_MODES_DISKS (the matrix; default tests/lab/modes-disks.sh's MD_DEFAULT, with
# LAB_FULL=1 also MD_FULL; empty: none), LAB_MODES_MCOUNT (ops per run on a matrix
# disk, 100), LAB_MODES_STANDALONE (the cost's standalone phase, default LAB_FULL),
# LAB_MODES_MATRIX_ALL (the matrix on every transport's boot, default LAB_FULL),
# LAB_TIMEOUT (per boot, default 150 s; + 45 s per matrix disk), and what boot.sh reads.
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"
# shellcheck source=modes-disks.sh
. "$(dirname "$0")/modes-disks.sh"

IOTRACER=${IOTRACER:-$LAB_REPO/iotracer}
STATIC=$LAB_DIR/iotracer-static
SERIES=${LAB_MODES_KERNEL:-6.12}
# Check names and run directories: lab_modes_T_* and runs/modes-T on the default
# kernel, lab_modes_K_T_* and runs/modes-K-T on another one (K = LAB_MODES_KERNEL).
if [[ $SERIES == 6.12 ]]; then PFX=lab_modes RUNS=modes; else PFX=lab_modes_$SERIES RUNS=modes-$SERIES; fi
CHECKS="run records join offsets order filter reconnect"
TIMEOUT0=${LAB_TIMEOUT:-150}
export LAB_G_MCOUNT=${LAB_MODES_MCOUNT:-100}
export LAB_G_COUNT=${LAB_MODES_COUNT:-150}
# the cost's standalone phase (notes only) with LAB_FULL=1
export LAB_G_STANDALONE=${LAB_MODES_STANDALONE:-${LAB_FULL:-0}}
export MODES_STANDALONE=$LAB_G_STANDALONE
COST_PHASES="base uprobe address"
[[ $LAB_G_STANDALONE == 1 ]] && COST_PHASES="base standalone uprobe address"
# the disk matrix on every transport's boot, the uprobe path's too (the other
# transports' guests are older ones): LAB_MODES_MATRIX_ALL, default LAB_FULL
MATRIX_ALL=${LAB_MODES_MATRIX_ALL:-${LAB_FULL:-0}}
# tcp (slirp) with LAB_FULL=1: the link code is one over every transport (test_link*)
[[ $# -eq 0 ]] && { if [[ ${LAB_FULL:-0} == 1 ]]; then set -- serial tcp; else set -- serial; fi; }
TRANSPORTS=("$@")

# matrix_on T: does transport T's boot carry the disk matrix? (the first one's;
# every one's with MATRIX_ALL)
matrix_on() {
	[[ -n $(md_list) ]] && [[ $1 == "${TRANSPORTS[0]}" || $MATRIX_ALL == 1 ]]
}

# names_of T: the checks of transport T (the first one also carries vsock, metrics and
# the disk matrix; the others the matrix with MATRIX_ALL).
names_of() {
	local c spec
	for c in $CHECKS; do echo "${PFX}_${1}_$c"; done
	if [[ $1 != "${TRANSPORTS[0]}" ]]; then
		echo "${PFX}_${1}_uprobes"
	else
		echo "${PFX}_vsock"
		echo "${PFX}_kvm"
		echo "${PFX}_${1}_metrics"
		echo "${PFX}_${1}_address"
		echo "${PFX}_${1}_stages"
	fi
	matrix_on "$1" || return 0
	IFS=, read -r -a md_specs <<<"$(md_list)"
	for spec in "${md_specs[@]}"; do echo "${PFX}_${1}_$(md_name "$spec")_join"; done
}
all_names() {
	local t
	for t in "${TRANSPORTS[@]}"; do names_of "$t"; done
}
# verdict_rest VERDICT WHY [T]: every check not reported yet (of transport T only).
verdict_rest() {
	local n
	for n in $(if [[ -n ${3:-} ]]; then names_of "$3"; else all_names; fi); do
		[[ -n ${done_names[$n]:-} ]] || report "$1" "$n" "$2"
	done
}
on_signal() {
	trap '' INT TERM HUP
	verdict_rest FAIL "interrupted by SIG$1 (timeout?)"
	exit "$2"
}
stats_pid=""
# On exit: let go of the BPF statistics fd, then harness.sh's cleanup with our exit status.
modes_exit() {
	local rc=$?
	[[ -n $stats_pid ]] && kill "$stats_pid" 2>/dev/null
	md_cleanup
	(exit "$rc")
	cleanup
}
install_traps modes_exit

mkdir -p "$LAB_DIR/tmp" "$LAB_DIR/runs"
tmp=$(mktemp -d "$LAB_DIR/tmp/modes.XXXXXX") || {
	tmp=""
	verdict_rest FAIL "mktemp failed"
	exit 1
}

# A verdict from a condition: check NAME COND_STATUS WHY
check() {
	if [[ $2 == 0 ]]; then report PASS "$1"; else report FAIL "$1" "$3"; fi
}

# All JSON lines of both host daemons of run dir $1 matching jq filter $2 (none
# of type request: the callers want paths, guest records and summaries).
# Daemon #1 is SIGKILLed: its last line may be cut short; skip such lines. The
# lines are parsed once into $1/host.jsonl (the host JSON is 14 MB with the disk
# matrix, ~0.7 s a parse, and there are a dozen calls after the boot).
hostj() {
	[[ -s $1/host.jsonl ]] || cat "$1"/host[012].json 2>/dev/null |
		jq -cR 'fromjson? | select(.type != "request")' >"$1/host.jsonl"
	jq -c "$2" "$1/host.jsonl"
}

# A join below the bar (seen once: daemon #2 with 0 syscall and 0 block records,
# its 150 guest requests unjoined for no_host_io, its text summary's histograms
# full): per host daemon, what its final summary counted and whether -m/--sample
# thinned its records, and where each unjoined request was; the run directory is
# kept as runs/modes-T.failed (the next run overwrites runs/modes-T).
join_evidence() {
	local out=$1 t=$2 i s
	for i in 1 2; do
		for s in 'select(.type == "summary" and .final) | {records, requests, min_latency_ns, sample, unjoined, lost, malformed, drops: .drops.total}' \
			'select(.type == "host_summary" and .final) | {unjoined_by_reason, host_unjoined_by_reason, uprobe_aio, guest_requests}'; do
			s=$(jq -c "$s" "$out/host$i.json" 2>/dev/null | tail -n 1)
			[[ -n $s ]] && note "${PFX}_$t join evidence, host daemon #$i: $s"
		done
		# the text summary's header, its -m/--sample line, each histogram's count
		awk '/^=== final/ || /counts the recorded requests only/ { printf "%s; ", $0 }
			/\(all requests\)$/ { if (h != "") printf "%s %d; ", h, n; h = $0; n = 0; next }
			h != "" && / : / { split($0, a, " : "); n += a[2] + 0 }
			END { if (h != "") printf "%s %d", h, n }' "$out/host$i.out" 2>/dev/null |
			sed "s/^/# ${PFX}_$t join evidence, host daemon #$i text: /; s/\$/\n/"
	done
	jq -r 'select(.joined | not) | "\(.session) \(.unjoined_reason // "?")"' "$out/paths.txt" | sort | uniq -c |
		sed "s/^/# ${PFX}_$t join evidence, unjoined (count, guest session, reason): /"
	rm -rf "$out.failed"
	cp -a "$out" "$out.failed" && note "${PFX}_$t: run directory kept as $out.failed"
}

# Stage table of the joined paths (one of each session+seq).
stage_notes() {
	local out=$1 t=$2
	hostj "$out" 'select(.type == "path" and .joined)' |
		jq -s -r 'unique_by([.session, .seq]) as $p
		| ($p[0].stages_ns | keys_unsorted)[] as $k
		| [$p[] | .stages_ns[$k] // empty] | sort as $v
		| select($v | length > 0)
		| "\($k) n=\($v | length) p50=\($v[(($v | length) * 0.5 | floor)]) p99=\($v[((($v | length) * 0.99) | floor)])"' |
		while read -r line; do note "${PFX}_$t stage $line ns"; done
}

# The cost phases of guest-modes.sh (LAB_G_COST=1, host-modes-hook.sh MODES_COST=1):
# per phase (base: nothing traced; standalone: iotracer -p QEMU on the image;
# uprobe: host mode, --qemu-uprobes always; address: host mode, address path)
# guest IOPS, and per guest IO the CPU of QEMU's threads and of the tracer's
# (schedstat), their sum, and the runs of the QEMU uprobe programs (bpf_stats);
# then the same per guest IO less what QEMU's and the tracer's threads spend
# idle (their rates over the second of nothing before the phase, times the
# phase's length: the phase includes the guest's half-second wait for the
# host's first stamp), as `marginal`.
# Printed as `# hostcost` notes (timings under TCG and other tenants: the lead
# reruns them on a quiet machine); *COST_HITS gets the address phase's uprobe
# runs and the uprobe phase's, "-" when not measured.
COST_HITS=""
cost_notes() {
	local out=$1 t=$2 ph ops el line
	COST_HITS="- -"
	local -a phs
	read -r -a phs <<<"$COST_PHASES"
	if [[ $(grep -c '^cost-' "$out/cost.txt" 2>/dev/null) != $((3 * ${#phs[@]})) ]]; then
		note "hostcost ${PFX}_$t: not measured (marks: $(cut -d' ' -f1 "$out/cost.txt" 2>/dev/null | tr '\n' ' '))"
		return
	fi
	for ph in "${phs[@]}"; do
		line=$(awk -v p="$ph" '$1 == "cost" && $2 == p' "$out/ioload.txt" | cut -d' ' -f3-)
		ops=$(jq -r '.ops // 0' <<<"${line:-{\}}")
		el=$(jq -r '.elapsed_ns // 0' <<<"${line:-{\}}")
		echo "$ph $ops $el"
	done >"$out/cost.ops"
	awk -v phases="$COST_PHASES" 'NR == FNR { ops[$1] = $2; el[$1] = $3; next }
		{ split($1, m, "-"); ph = m[2]; w = m[3]
		  for (i = 2; i <= 7; i++) v[ph, w, i] = $i }
		END {
			n = split(phases, P, " ")
			for (k = 1; k <= n; k++) {
				p = P[k]; o = ops[p]
				if (!o) { printf "%s: no ops\n", p; continue }
				q = (v[p, "end", 5] - v[p, "begin", 5]) / o / 1000
				d = (v[p, "end", 6] - v[p, "begin", 6]) / o / 1000
				h = (v[p, "end", 7] - v[p, "begin", 7]) / o
				sum[p] = q + d
				printf "%s: %d ops, %.0f IOPS; per guest IO: QEMU %.1f us + tracer %.1f us = %.1f us, uprobe hits %.3f", p, o, o / (el[p] / 1e9), q, d, q + d, h
				if (p != "base" && sum["base"]) printf "; %+.1f us over untraced", q + d - sum["base"]
				if ((p == "uprobe" || p == "address") && sum["standalone"])
					printf "; %+.1f %% of standalone", 100 * (q + d - sum["standalone"]) / sum["standalone"]
				printf "\n"
				# idle rates (ns of CPU a ns) over the idle second, times the phase
				t = v[p, "end", 2] - v[p, "begin", 2]
				ti = v[p, "begin", 2] - v[p, "idle", 2]
				if (ti <= 0) continue
				mq = (v[p, "end", 5] - v[p, "begin", 5] - t * (v[p, "begin", 5] - v[p, "idle", 5]) / ti) / o / 1000
				md = (v[p, "end", 6] - v[p, "begin", 6] - t * (v[p, "begin", 6] - v[p, "idle", 6]) / ti) / o / 1000
				msum[p] = mq + md
				printf "%s marginal: per guest IO over idle: QEMU %.1f us + tracer %.1f us = %.1f us (idle %.2f s: QEMU %.1f ms/s, tracer %.2f ms/s)", p, mq, md, mq + md, ti / 1e9, (v[p, "begin", 5] - v[p, "idle", 5]) / ti * 1000, (v[p, "begin", 6] - v[p, "idle", 6]) / ti * 1000
				if ((p == "uprobe" || p == "address") && msum["standalone"])
					printf "; %+.1f %% of standalone", 100 * (mq + md - msum["standalone"]) / msum["standalone"]
				printf "\n"
			}
		}' "$out/cost.ops" "$out/cost.txt" | while read -r line; do note "hostcost ${PFX}_$t $line"; done
	COST_HITS="$(awk '$1 ~ /^cost-address-/ { a[$1] = $7 } END { print a["cost-address-end"] - a["cost-address-begin"] }' "$out/cost.txt") $(awk '$1 ~ /^cost-uprobe-/ { a[$1] = $7 } END { print a["cost-uprobe-end"] - a["cost-uprobe-begin"] }' "$out/cost.txt")"
}

# lab_modes_T_address (the first transport: its host daemons on the address
# path): daemon #2's final summary has its VM on the address path after a
# calibration, daemon #1 detached its blk_aio uprobes for it, and the cost's
# address phase ran the uprobe programs 0 times while its uprobe phase ran
# them (the kernel's bpf_stats: the counting works). Also the per-boot note of
# uprobe hits per guest IO and the VM's counts.
address_check() {
	local out=$1 t=$2 fin det why=""
	fin=$(jq -c 'select(.type == "host_summary" and .final)' "$out/host2.json" 2>/dev/null | tail -n 1)
	det=$(jq -r 'select(.type == "attach" and (.hook | startswith("blk_aio_")) and .state == "off") | .hook' "$out/host1.json" 2>/dev/null | wc -l)
	jq -e '.vms[0].path == "address" and .vms[0].calibrations >= 1' <<<"$fin" >/dev/null 2>&1 ||
		why="daemon #2's VM not on the address path: $(jq -c '.vms' <<<"$fin" 2>/dev/null | head -c 300);"
	((det >= 2)) || why="$why daemon #1 detached $det blk_aio uprobes (want 2);"
	read -r ha hu <<<"$COST_HITS"
	[[ $ha == 0 && $hu != - && $hu -gt 0 ]] ||
		why="$why uprobe runs in the cost's address phase $ha (want 0), uprobe phase $hu (want > 0);"
	check "${PFX}_${t}_address" "$([[ -z $why ]]; echo $?)" "$why"
	note "hostcost ${PFX}_$t uprobe hits per guest IO (bpf_stats runs, whole boot, daemon #2): $(jq -r '"\(.uprobe_runs_per_guest_io // "-") (\(.uprobe_runs // "-") runs, \(.guest_requests) guest IOs); joined by \(.joined_by_key)"' <<<"$fin" 2>/dev/null)"
	note "hostcost ${PFX}_$t VM (daemon #2): $(jq -c '.vms[0] | del(.pid)' <<<"$fin" 2>/dev/null)"
}

# lab_modes_T_stages: host daemon #2 (--qemu-stages) kept the notify uprobes on the
# address path: at least half of its joins by address have QEMU's notify stamp (the
# uprobe path had it on 90 % of its joins in the lab: NVMe has none, batches some).
stages_check() {
	local out=$1 t=$2 n s
	n=$(jq -s 'map(select(.type == "path" and .key == "address")) | length' "$out/host2.json" 2>/dev/null)
	s=$(jq -s 'map(select(.type == "path" and .key == "address" and .t.qemu_notify)) | length' "$out/host2.json" 2>/dev/null)
	check "${PFX}_${t}_stages" "$([[ ${n:-0} -gt 0 && $((2 * ${s:-0})) -ge $n ]]; echo $?)" \
		"daemon #2 (--qemu-stages): ${s:-?} of ${n:-?} joins by address with QEMU's notify"
}

# lab_modes_kvm: host daemon #1's attach lines for KVM's interrupt tracepoints.
kvm_check() {
	local out=$1 st
	st=$(jq -r 'select(.type == "attach" and .hook == "kvm_msi_set_irq") | "\(.state) \(.reason // "")"' "$out/host1.json" 2>/dev/null | head -n 1)
	case $st in
	attached*) report PASS "${PFX}_kvm" ;;
	absent*) report SKIP "${PFX}_kvm" "${st#absent }" ;;
	*) report FAIL "${PFX}_kvm" "kvm_msi_set_irq: ${st:-no attach line}" ;;
	esac
}

# lab_modes_T_uprobes (the other transports: guests without addresses): daemon #2
# kept the VM on its uprobes for them (pinned, counted, said on stderr), every
# joined path by QEMU's submit (the uprobe path as before issue 41).
uprobes_check() {
	local out=$1 t=$2 fin
	fin=$(jq -c 'select(.type == "host_summary" and .final)' "$out/host2.json" 2>/dev/null | tail -n 1)
	check "${PFX}_${t}_uprobes" "$(jq -e '.joined > 0 and .joined_by_key.address == 0 and .joined_by_key.uprobe == .joined and .vms[0].path == "uprobe" and .vms[0].pinned >= 1' <<<"$fin" >/dev/null 2>&1 && grep -q 'sends no buffer addresses' "$out/host2.err"; echo $?)" \
		"daemon #2: $(jq -c '{joined, joined_by_key, vms}' <<<"$fin" 2>/dev/null | head -c 300); said: $(grep -c 'sends no buffer addresses' "$out/host2.err" 2>/dev/null)"
	note "hostcost ${PFX}_$t uprobe hits per guest IO (bpf_stats runs, whole boot, daemon #2): $(jq -r '"\(.uprobe_runs_per_guest_io // "-") (\(.uprobe_runs // "-") runs, \(.guest_requests) guest IOs)"' <<<"$fin" 2>/dev/null)"
}

# lab_modes_T_metrics: host daemon #2's /metrics just before its SIGTERM is
# valid exposition text (promtool), has the unjoined counters of every reason,
# and counts no more than its final summary.
metrics_check() {
	local out=$1 t=$2 f=$1/metrics2.txt fin lint r want why=""
	fin=$(jq -c 'select(.type == "host_summary" and .final)' "$out/host2.json" 2>/dev/null | tail -n 1)
	lint=$(promtool check metrics <"$f" 2>&1) || why="promtool: $(head -c 300 <<<"$lint")"
	[[ -s $f && -n $fin ]] || why="no metrics scraped or no final summary"
	for r in no_disk no_qemu_submit merged no_host_io partial no_address unmapped clock; do
		want=$(jq -r ".unjoined_by_reason.$r" <<<"$fin")
		awk -v r="$r" -v w="$want" '$1 == "iotracer_unjoined_requests_total{reason=\"" r "\"}" { f = 1; if ($2 > w) exit 1 } END { exit !f }' "$f" ||
			why="$why iotracer_unjoined_requests_total{reason=\"$r\"} missing or above the summary's $want;"
	done
	for r in not_guest_buffer unclaimed; do
		grep -q "^iotracer_host_unjoined_io_total{reason=\"$r\"} " "$f" || why="$why iotracer_host_unjoined_io_total{reason=\"$r\"} missing;"
	done
	check "${PFX}_${t}_metrics" "$([[ -z $why ]]; echo $?)" "$why"
}

# Host records on the image with inode $3 written after the first host_filter
# line of JSON file $1 in which the disk with inode $2 is not traced.
after_filter() {
	jq -rR --argjson off "$2" --argjson ino "$3" 'fromjson? | if .type == "host_filter" then
			(if any(.disks[]; .ino == $off and (.traced | not)) then "F" else empty end)
		elif .type == "request" and .ino == $ino then "R" else empty end' "$1" |
		sed -n '/^F$/,$p' | grep -c '^R$'
}

one() {
	local t=$1 out brc=0 attempt port g n_ops n_uniq holes joined pct bad inv nv nn w i sess2
	out=$LAB_DIR/runs/$RUNS-$t
	rm -rf "$out"
	mkdir -p "$out"
	# data-filled images: host reads really reach the host disk
	head -c 64M /dev/zero >"$tmp/vblk.img" && head -c 64M /dev/zero >"$tmp/nvme.img" || {
		verdict_rest FAIL "cannot create disk images in $tmp" "$t"
		return
	}
	export LAB_VBLK_IMG=$tmp/vblk.img LAB_NVME_IMG=$tmp/nvme.img LAB_DRIVE_OPTS=",cache=none"
	export LAB_EXTRA=$tmp/extra IOTRACER
	# the disk matrix rides on the first transport's boot (every one's with MATRIX_ALL)
	export LAB_QEMU_ARGS="" LAB_G_MDISKS="" LAB_TIMEOUT=$TIMEOUT0 LAB_G_COST=0 MODES_COST=0 MODES_METRICS=""
	# the other transports' guests as older ones: their VM on the uprobe path
	export MODES_HOST_OPTS="" LAB_G_OLD_GUEST=1
	# so do the cost measurement, the host's /metrics, and the address path
	export MODES_HOST2_OPTS=""
	[[ $t == "${TRANSPORTS[0]}" ]] && LAB_G_COST=1 MODES_COST=1 MODES_METRICS=$((20000 + RANDOM % 20000)) LAB_G_OLD_GUEST=0 MODES_HOST2_OPTS=--qemu-stages
	if matrix_on "$t"; then
		md_cleanup # an earlier transport's loop devices: its images are stamped again
		if ! md_make "$tmp"; then
			verdict_rest FAIL "$MD_WHY" "$t"
			return
		fi
		LAB_QEMU_ARGS=$MD_ARGS
		LAB_TIMEOUT=$((TIMEOUT0 + 45 * ${#md_serial[@]}))
	fi
	if [[ $t == tcp ]]; then
		port=$((20000 + RANDOM % 20000))
		export MODES_HOST_LINK="--listen tcp:127.0.0.1:$port" LAB_G_LINK="tcp:10.0.2.2:$port"
	else
		export MODES_HOST_LINK=serial LAB_G_LINK="serial:lab.0" # the hook knows the socket
	fi
	export LAB_HOST_HOOK="exec \"$LAB_SRC/host-modes-hook.sh\""
	# A boot that failed for a fault outside iotracer (harness.sh boot_fault: QEMU's own
	# crash, the guest's int3 oops or soft lockup at a half-patched jump label under
	# TCG) runs the whole case once more, said in a `# retried:` note (its console kept
	# as runs/modes-T.retried-console.log). A second crash, or any other one, fails.
	for attempt in 1 2; do
		brc=0
		step /dev/null "$out/boot.log" "$LAB_SRC/boot.sh" "$SERIES" "$LAB_SRC/guest-modes.sh" "$out" || brc=$?
		for ((i = 0; i < 100; i++)); do [[ -f $out/host.done ]] && break; sleep 0.2; done
		((brc == 2)) && retry_boot "${PFX}_$t" "$out" "$attempt" || break
		mv -f "$out/console.log" "$LAB_DIR/runs/$RUNS-$t.retried-console.log"
		rm -rf "$out"
		mkdir -p "$out"
		head -c 64M /dev/zero >"$tmp/vblk.img" && head -c 64M /dev/zero >"$tmp/nvme.img"
	done
	g=$out/guest.out
	if [[ $brc == 3 ]]; then
		verdict_rest SKIP "$(tail -n 1 "$out/boot.log" | sed 's/^\[lab\] //')"
		return
	fi
	if [[ $brc == 2 ]]; then
		verdict_rest FAIL "boot failed: $(boot_failure "$out")" "$t"
		return
	fi
	if ! unbundle "$g" "$out"; then
		report FAIL "${PFX}_${t}_run" "guest rc $brc: $BUNDLE_WHY; see $out/console.log"
		verdict_rest FAIL "nothing to check: ${PFX}_${t}_run failed (guest rc $brc: $BUNDLE_WHY)" "$t"
		return
	fi
	if [[ ! -s $out/host1.json || ! -s $out/host2.json ]]; then
		report FAIL "${PFX}_${t}_run" "host daemon JSON missing: $(tail -c 300 "$out"/host1.err "$out"/host2.err 2>/dev/null | tr '\n' ' ')"
		verdict_rest FAIL "nothing to check: ${PFX}_${t}_run failed (host daemon JSON missing)" "$t"
		return
	fi
	report PASS "${PFX}_${t}_run"

	# records: unique (session, seq) == ioload's ops on vda; no holes per session
	n_ops=$(awk '($1 == "ioload" && $2 == "vda") || ($1 == "cost" && $2 != "base" && $2 != "standalone")' "$out/ioload.txt" | cut -d' ' -f3- | jq -s 'map(.ops) | add')
	hostj "$out" 'select(.type == "guest_vreq" and .serial == "labvblk0") | [.session, .seq]' | sort -u >"$out/vreqs.txt"
	n_uniq=$(wc -l <"$out/vreqs.txt")
	holes=$(jq -s -r 'group_by(.[0])[] | (map(.[1]) | max) - length' "$out/vreqs.txt" | awk '{s += $1} END {print s + 0}')
	check "${PFX}_${t}_records" "$([[ $n_uniq == "$n_ops" && $holes == 0 ]]; echo $?)" \
		"host got $n_uniq distinct guest records, ioload did $n_ops ops on vda, $holes missing seqs"

	hostj "$out" 'select(.type == "path" and .serial == "labvblk0")' | jq -s -c 'group_by([.session, .seq])[] | (map(select(.joined)) + .)[0]' >"$out/paths.txt"
	joined=$(jq -s 'map(select(.joined)) | length' "$out/paths.txt")
	pct=$(awk -v j="$joined" -v n="$n_ops" 'BEGIN { printf "%.1f", n ? 100 * j / n : 0 }')
	check "${PFX}_${t}_join" "$(awk -v p="$pct" 'BEGIN { exit !(p >= 97) }'; echo $?)" \
		"$joined of $n_ops guest requests joined ($pct %)"
	note "${PFX}_$t: $joined of $n_ops guest virtio requests joined ($pct %)"
	awk -v p="$pct" 'BEGIN { exit !(p < 97) }' && join_evidence "$out" "$t"

	bad=0
	w=0
	while read -r off; do
		w=$((w + 1))
		[[ $(od -An -t u8 -j "$off" -N 8 "$tmp/vblk.img" | tr -d ' ') == "$off" ]] || bad=$((bad + 1))
	done < <(jq -r 'select(.joined and .op == "write") | .offset' "$out/paths.txt")
	check "${PFX}_${t}_offsets" "$([[ $w -gt 0 && $bad == 0 ]]; echo $?)" \
		"$bad of $w joined writes: the image at the offset does not hold it"

	inv=$(jq -s 'map(select(.joined and (.order_ok | not))) | length' "$out/paths.txt")
	check "${PFX}_${t}_order" "$([[ $joined -gt 0 && $inv == 0 ]]; echo $?)" \
		"$inv of $joined joined paths out of order beyond the clock uncertainty: $(jq -c -s 'map(select(.joined and (.order_ok | not)))[0] | {order_bad_at, clock_uncert_ns, t}' "$out/paths.txt" | head -c 400)"

	# records after the guest's filter reached each host daemon (before it, the
	# host traces every disk of the QEMU: the guest kernel's boot-time reads)
	local ivb inv_n
	ivb=$(stat -c %i "$tmp/vblk.img")
	inv_n=$(stat -c %i "$tmp/nvme.img")
	nv=0
	nn=0
	for f in "$out"/host1.json "$out"/host2.json; do
		nv=$((nv + $(after_filter "$f" "$inv_n" "$ivb")))
		nn=$((nn + $(after_filter "$f" "$inv_n" "$inv_n")))
	done
	check "${PFX}_${t}_filter" "$([[ $nv -gt 0 && $nn == 0 ]]; echo $?)" \
		"host records after the guest filter: vda image $nv, nvme image $nn (want > 0 and 0)"

	local fin
	fin=$(jq -c 'select(.type == "link" and .final)' "$out/g2.json" 2>/dev/null | tail -n 1)
	sess2=$(hostj "$out" 'select(.type == "guest_vreq") | .session' | sort | uniq -c | wc -l)
	check "${PFX}_${t}_reconnect" "$(jq -e '.virtio_requests > 0 and .acked == .virtio_requests and .dropped == 0 and .waiting == 0' <<<"$fin" >/dev/null 2>&1 && [[ $sess2 -ge 2 ]] && grep -q guest_vreq "$out/host2.json"; echo $?)" \
		"guest #2 final: ${fin:-none}; guest sessions seen by the host: $sess2"

	[[ -n $LAB_G_MDISKS ]] && md_checks "$t" "$out"
	if [[ $t == "${TRANSPORTS[0]}" ]]; then
		cost_notes "$out" "$t"
		address_check "$out" "$t"
		stages_check "$out" "$t"
		kvm_check "$out"
	else
		uprobes_check "$out" "$t"
	fi
	[[ -n $MODES_METRICS ]] && metrics_check "$out" "$t"
	stage_notes "$out" "$t"
	hostj "$out" 'select(.type == "host_summary" and .final) | {uprobe_hits_per_qemu_io, uprobe_hits_per_guest_io, unjoined_by_reason, host_unjoined_by_reason, uprobe_aio, uprobe_notify, guest_requests, daemon_cpu_pct, bpf_ns, peers}' |
		tail -n 1 | sed "s/^/# ${PFX}_$t host summary (daemon #2): /"
	grep -h 'iotracer: ' "$out"/host1.err "$out"/host2.err 2>/dev/null | grep -v '^qemu' | head -n 8 | sed "s/^/# ${PFX}_$t host: /"
	if [[ $t == "${TRANSPORTS[0]}" ]]; then
		if grep -q '^PASS' "$out/vsock.txt" 2>/dev/null; then
			report PASS "${PFX}_vsock"
		elif grep -q '^FAIL' "$out/vsock.txt" 2>/dev/null; then
			report FAIL "${PFX}_vsock" "$(grep -m1 '^FAIL' "$out/vsock.txt")"
		else
			report SKIP "${PFX}_vsock" "$(grep -m1 . "$out/vsock.txt" 2>/dev/null || echo 'no vsock test output from the guest')"
		fi
	fi
}

ARCH=$(lab_arch_of "$SERIES")
if ! build_static "$ARCH"; then
	verdict_rest FAIL "${BUILD_WHY:-static build failed}"
	exit 1
fi
guest_extra "$tmp/extra" "$ARCH"
# the link unit test, static and without sanitizers, for AF_VSOCK in the guest
tl=$LAB_REPO/build/test_link.static
[[ $ARCH == amd64 ]] || tl=$LAB_REPO/build/$ARCH/test_link.static
cp "$tl" "$tmp/extra/test_link" 2>"$tmp/test_link.log" ||
	note "lab_modes: test_link not built for the guest: $(tail -n 2 "$tmp/test_link.log" | tr '\n' ' ')"
# BPF run-time statistics (the host daemon's bpf_ns) by a BPF_ENABLE_STATS fd held for
# the test's life, never the sysctl: a killed test cannot leave them on.
"$LAB_REPO/build/bpf_stats_hold" >/dev/null 2>"$tmp/stats.log" &
stats_pid=$!
step /dev/null "$tmp/fetch.log" "$LAB_SRC/fetch.sh" "$SERIES"
frc=$?
if ((frc == 3)); then
	verdict_rest SKIP "kernel $SERIES cannot be fetched here: $(grep -E 'unavailable:' "$tmp/fetch.log" | tail -n 1)"
	exit 0
elif ((frc != 0)); then
	verdict_rest FAIL "fetch.sh $SERIES failed (rc $frc)"
	exit 1
fi
for t in "${TRANSPORTS[@]}"; do
	t0=$(lab_now)
	one "$t"
	note "${PFX}_$t: took $(lab_since "$t0") s"
done
verdict_rest FAIL "not reported (bug in test_modes.sh)"
retries_verdict "${PFX}_retries"
exit "$failed"
