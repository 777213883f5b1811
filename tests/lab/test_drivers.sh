#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# test_drivers.sh [SERIES[+METHOD]...]   (default: $LAB_KERNELS or "5.10 6.1 6.12+guest"; LAB_FULL: + 6.12+kprobe)
#   SERIES+METHOD boots SERIES with IOTRACER_PREFER=METHOD in the guest (kprobe: the
#   kprobe variants of every fentry hook get their coverage)
#   SERIES+guest runs the guest's iotracer in guest mode (--mode guest --link
#   serial:lab.0) and tests/lab/host-modes-hook.sh (MODES_HOST_LINK=serial) runs
#   `iotracer --mode host` on the lab's QEMU here, dialing that port (host1.json):
#   the same checks, plus per disk
#   lab_<k>_<disk>_vreq   the host received one guest_vreq per ioload op of the
#                         disk (reads + writes), each with the disk's serial
#                         as QEMU's command line gives it (labnvme0, labscsi0,
#                         labvblk0) and its bus (nvme, scsi, virtio-blk); the
#                         guest's final link summary counts as many on that bus,
#                         none dropped or waiting
#
# The driver layers test (nvme, scsi and virtio records under the block
# layer): for each guest kernel, boot the lab guest with tests/lab/guest-drivers.sh, which runs a static iotracer
# (`-q --no-live -j out.json -d nvme0n1,sda,vda`) around ioload randread +
# randwrite (LAB_DRV_COUNT ops each, 4 KiB, O_DIRECT) on the three disks and
# sends back out.json, iotracer's stderr and ioload's JSON lines as one base64
# tar.gz on the console. The host then checks, per kernel:
#   lab_<k>_run           the guest ran to its end marker, iotracer attached and
#                         exited 0, the bundle arrived intact, the JSON parses
#   lab_<k>_attach        the driver hooks attached: nvme_setup_cmd,
#                         nvme_complete_rq, scsi_dispatch_cmd_start,
#                         scsi_dispatch_cmd_done, virtio_queue_rq,
#                         virtqueue_notify, virtblk_done or virtblk_request_done
# and per disk (nvme0n1 -> nvme, sda -> scsi, vda -> virtio):
#   lab_<k>_<disk>_count  block requests (read + write) in the JSON == ioload ops
#   lab_<k>_<disk>_joined >= 99 % of them carry "driver":{"layer": <its driver>}
#   lab_<k>_<disk>_stages every block request: ts <= q <= d <= c <= ts + lat,
#                         q2c <= lat; with a driver object: q <= submit <= done
#                         <= c and submit <= kick <= done when kick is there
#   lab_<k>_<disk>_own    the disk's final q2c histogram counts ioload's ops
#                         exactly: no request of iotracer's own (reading a
#                         virtio-blk serial sends a GET_ID request: iotracer reads
#                         them before attaching)
# then prints the portability matrix (layer/hook x kernel: method:ok) with a
# column for this host (`iotracer -D 200ms --no-live -j`, needs root).
#
# Output: `PASS name`, `FAIL name: why`, `SKIP name: reason` (a kernel whose
# package or QEMU cannot be had here: SKIP, never PASS) and `# ...` notes.
# Exit 1 if anything FAILed. Files: $LAB_DIR/runs/drivers-<k>/ (boot.sh's
# console.log guest.out dmesg.txt result, plus out.json iotracer.err
# ioload.txt steps.txt blocks.txt attach.txt) and $LAB_DIR/runs/drivers-matrix.txt.
#
# The guest binary is $LAB_DIR/iotracer-static: the objects of ./iotracer
# (build/*.o) linked with -static; relinked when ./iotracer or an object is
# newer (`make iotracer` first if they are missing).
#
# Environment: IOTRACER (default <repo>/iotracer), LAB_KERNELS, LAB_DRV_COUNT
# (300 ops per ioload run), LAB_DRV_SETTLE (1 s after attach), LAB_TIMEOUT
# (per boot, default 90 s here), LAB_DRV_HOST=0 (no host column), and what
# boot.sh reads.
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"

IOTRACER=${IOTRACER:-$LAB_REPO/iotracer}
STATIC=$LAB_DIR/iotracer-static # -arm64 for arm64 guests (harness.sh build_static)
DISKS="nvme0n1 sda vda"
CHECKS="count joined stages own"
export LAB_TIMEOUT=${LAB_TIMEOUT:-90}
export LAB_G_DRV_COUNT=${LAB_DRV_COUNT:-300}
export LAB_G_DRV_SETTLE=${LAB_DRV_SETTLE:-1}
export LAB_G_DRV_BS=4096
export LAB_G_DRV_DISKS=$DISKS
if [[ $# -eq 0 ]]; then
	# shellcheck disable=SC2086 # space separated list
	# 6.12 in guest mode: the standalone checks hold there too (guest mode is the
	# standalone daemon plus the link), and the link's own come without a boot more
	set -- ${LAB_KERNELS:-$LAB_DRIVERS_DEFAULT}
fi

driver_of() {
	case $1 in
	nvme*) echo nvme ;;
	sd*) echo scsi ;;
	vd*) echo virtio ;;
	*) echo "?" ;;
	esac
}
# All check names of kernel K.
names_of() {
	local d c
	echo "lab_$1_run lab_$1_attach"
	for d in $DISKS; do
		for c in $CHECKS; do echo "lab_$1_${d}_$c"; done
		[[ $1 == *+guest ]] && echo "lab_$1_${d}_vreq"
	done
}
# The serial QEMU gives each disk (boot.sh) and the bus a guest record names.
serial_of() {
	case $1 in
	nvme*) echo labnvme0 ;;
	sd*) echo labscsi0 ;;
	vd*) echo labvblk0 ;;
	esac
}
bus_of() {
	case $1 in
	nvme*) echo nvme ;;
	sd*) echo scsi ;;
	vd*) echo virtio-blk ;;
	esac
}

# lab_<k>_<disk>_vreq (SERIES+guest): what the host received of the disk's requests.
check_vreq() { # K DISK OPS OUTDIR
	local k=$1 d=$2 ops=$3 out=$4 ser bus n nser nbus nrw fin gbus gdrop gwait key
	ser=$(serial_of "$d")
	bus=$(bus_of "$d")
	if [[ ! -s $out/host1.json ]]; then
		report FAIL "lab_${k}_${d}_vreq" "no host1.json from the host daemon ($(head -c 200 "$out/host1.err" 2>/dev/null | tr '\n' ' '))"
		return
	fi
	read -r n nser nbus nrw < <(jq -R -r 'fromjson? | select(.type == "guest_vreq")
		| [.serial, .bus, (.op <= 1)] | @tsv' "$out/host1.json" | awk -F'\t' -v s="$ser" -v b="$bus" '
		$1 == s { n++; if ($2 == b) nb++; if ($3 == "true") rw++ }
		$2 == b { nbus++ }
		END { printf "%d %d %d %d\n", n, nbus, nb, rw }')
	# the guest's last link summary: counts per bus
	case $bus in virtio-blk) key=virtio_blk ;; *) key=$bus ;; esac
	fin=$(jq -R -c 'fromjson? | select(.type == "link" and .mode == "guest")' "$out/out.json" | tail -n 1)
	gbus=$(jq -r --arg k "$key" '.[$k] // "-"' <<<"$fin" 2>/dev/null)
	gdrop=$(jq -r '.dropped // "-"' <<<"$fin" 2>/dev/null)
	gwait=$(jq -r '.waiting // "-"' <<<"$fin" 2>/dev/null)
	note "lab_${k}_$d: host got $n guest_vreq with serial $ser ($nrw read/write, $nbus on bus $bus); guest summary: $key ${gbus:-?}, dropped ${gdrop:-?}, waiting ${gwait:-?}, kick_suppressed $(jq -r '.kick_suppressed // "-"' <<<"$fin" 2>/dev/null), kick_stale $(jq -r '.kick_stale // "-"' <<<"$fin" 2>/dev/null), no_serial $(jq -r '.no_serial // "-"' <<<"$fin" 2>/dev/null)"
	if ((nrw != ops || nser != n || n != ops)); then
		report FAIL "lab_${k}_${d}_vreq" "host got $n records with serial $ser ($nrw read/write, $nser on bus $bus), ioload did $ops ops"
	elif [[ $gbus != "$ops" || $gdrop != 0 || $gwait != 0 ]]; then
		report FAIL "lab_${k}_${d}_vreq" "guest link summary: $key $gbus (want $ops), dropped $gdrop, waiting $gwait"
	else
		report PASS "lab_${k}_${d}_vreq"
	fi
}
# verdict_all K VERDICT WHY: report every check of kernel K not reported yet.
verdict_all() {
	local n
	for n in $(names_of "$1"); do
		[[ -n ${done_names[$n]:-} ]] && continue
		done_names[$n]=1
		if [[ $2 == SKIP ]]; then skip "$n" "$3"; else fail "$n" "$3"; fi
	done
}

# Interrupted (a test runner's timeout): every check not reported yet FAILs.
# shellcheck disable=SC2317 # invoked through the traps
on_signal() {
	trap '' INT TERM HUP
	local k
	for k in "${KERNELS[@]}"; do verdict_all "$k" FAIL "interrupted by SIG$1 (timeout?)"; done
	exit "$2"
}
KERNELS=("$@")
install_traps cleanup
mkdir -p "$LAB_DIR/tmp" "$LAB_DIR/runs"
tmp=$(mktemp -d "$LAB_DIR/tmp/drivers.XXXXXX") || {
	tmp=""
	for k in "$@"; do verdict_all "$k" FAIL "mktemp failed"; done
	exit 1
}

# ------------------------------------------------------------ the matrix
# Rows of $tmp/matrix.in: COLUMN<TAB>LAYER<TAB>HOOK<TAB>METHOD<TAB>OK<TAB>REASON
matrix_add() { # COLUMN ATTACH_JSONL
	jq -r --arg c "$1" 'select(.type == "attach") |
		[$c, .layer, .hook, (.method // "-"), (if .ok then "ok" else "no" end), (.reason // "")] | @tsv' \
		"$2" >>"$tmp/matrix.in" 2>/dev/null
}

host_column() {
	local label h
	h=$(uname -r)
	label="$(lab_series_of "$h")(host)"
	if [[ ${LAB_DRV_HOST:-1} == 0 ]]; then
		return 0
	fi
	if [[ $(id -u) != 0 ]]; then
		note "host column: not root, no host attach report"
		return 0
	fi
	if [[ ! -x $IOTRACER ]]; then
		note "host column: $IOTRACER missing"
		return 0
	fi
	if step /dev/null "$tmp/host.err" timeout -k 5 20 "$IOTRACER" -D 200ms --no-live -j "$tmp/host.json"; then
		matrix_add "$label" "$tmp/host.json"
		HOST_LABEL=$label
	else
		note "host column: iotracer -D 200ms failed: $(tail -c 300 "$tmp/host.err" | tr '\n' ' ')"
	fi
}

print_matrix() {
	local f=$LAB_DIR/runs/drivers-matrix.txt cols=() c
	[[ -s $tmp/matrix.in ]] || {
		note "matrix: no attach lines from any kernel"
		return 0
	}
	[[ -n ${HOST_LABEL:-} ]] && cols+=("$HOST_LABEL")
	while read -r c; do cols+=("$c"); done < <(printf '%s\n' "${MATRIX_COLS[@]}" | sort -Vr)
	awk -F'\t' -v cols="${cols[*]}" '
		BEGIN {
			nc = split(cols, col, " ")
			split("syscall fs sched block nvme scsi virtio qemu", lo, " ")
			for (i in lo) rank[lo[i]] = i
		}
		{
			key = $2 "\t" $3
			if (!(key in seen)) { seen[key] = ++nk; keys[nk] = key; lay[nk] = $2 }
			k = $1 SUBSEP key
			if (!(k in meth)) meth[k] = $4
			else if (meth[k] != $4) meth[k] = meth[k] "/" $4
			tot[k]++
			if ($5 == "ok") ok[k]++
			if ($5 != "ok" && $6 != "") why[$1 "  " $2 "/" $3] = $6
		}
		END {
			# order: layer rank, then first appearance
			for (i = 1; i <= nk; i++) ord[i] = i
			for (i = 2; i <= nk; i++) for (j = i; j > 1; j--) {
				a = ord[j - 1]; b = ord[j]
				ra = (lay[a] in rank) ? rank[lay[a]] : 99; rb = (lay[b] in rank) ? rank[lay[b]] : 99
				if (ra > rb || (ra == rb && a > b)) { ord[j - 1] = b; ord[j] = a } else break
			}
			line = sprintf("%-8s %-30s", "LAYER", "HOOK")
			for (c = 1; c <= nc; c++) line = line sprintf(" %-14s", col[c])
			print line
			for (i = 1; i <= nk; i++) {
				key = keys[ord[i]]
				split(key, kk, "\t")
				line = sprintf("%-8s %-30s", kk[1], kk[2])
				for (c = 1; c <= nc; c++) {
					k = col[c] SUBSEP key
					if (!(k in tot)) cell = "."
					else if (ok[k] == tot[k]) cell = meth[k] ":ok"
					else if (ok[k] + 0 == 0) cell = meth[k] ":no"
					else cell = meth[k] ":" ok[k] "/" tot[k]
					line = line sprintf(" %-14s", cell)
				}
				print line
			}
			n = 0
			for (w in why) wl[++n] = w
			for (i = 2; i <= n; i++) for (j = i; j > 1 && wl[j - 1] > wl[j]; j--) { t = wl[j]; wl[j] = wl[j - 1]; wl[j - 1] = t }
			for (i = 1; i <= n; i++) print "not attached: " wl[i] ": " why[wl[i]]
			print "cells: METHOD:ok | METHOD:no (not attached) | METHOD:N/M (N of M ok) | . (no attach line)"
		}' "$tmp/matrix.in" >"$f"
	note "portability matrix (also in $f):"
	sed 's/^/#   /' "$f"
}

# ------------------------------------------------------------ one kernel
# One line per block request of the trace, fields (absent: -):
#   dev op driver.layer kind ts_ns lat_ns q_ns d_ns c_ns submit_ns done_ns kick_ns
# ts/lat are the request's; d = q + q2d_ns.
# shellcheck disable=SC2016 # jq program
JQ_EXTRACT='select(.type == "request") as $r
	| (if ($r.block | type) == "array" then $r.block[] elif $r.kind == "block" then $r else empty end)
	| [.dev, .op, (.driver.layer // "-"), $r.kind, ($r.ts_ns // "-"), ($r.lat_ns // "-"),
	   (.q_ns // "-"), (if .q2d_ns != null and .q_ns != null then .q_ns + .q2d_ns else "-" end),
	   (.c_ns // "-"), (.driver.submit_ns // "-"), (.driver.done_ns // "-"), (.driver.kick_ns // "-")]
	| map(tostring) | join(" ")'

# Per-disk verdicts from blocks.txt: prints
#   n nread nwrite joined other_layer violations mean_q2c_ns mean_drv_ns mean_kick_ns example...
disk_stats() { # BLOCKS DEV DRIVER
	awk -v dev="$2" -v want="$3" '
		function bad(why) { if (!b) b = why }
		$1 == dev && ($2 == "read" || $2 == "write") {
			n++
			if ($2 == "read") nr++; else nw++
			if ($3 == want) j++
			else if ($3 != "-") other++
			b = ""
			ts = $5; lat = $6; q = $7; d = $8; c = $9; s = $10; e = $11; k = $12
			if (q == "-" || c == "-") bad("no queue or completion stamp")
			else {
				if (d == "-") bad("never issued (no q2d)")
				else if (d < q) bad("issue " d " before queue " q)
				else if (d > c) bad("issue " d " after completion " c)
				if (c < q) bad("completion " c " before queue " q)
				if (lat == "-" || ts == "-") bad("request has no ts_ns/lat_ns")
				else {
					if (c - q > lat) bad("q2c " (c - q) " > request total " lat)
					if (q < ts) bad("queued " q " before the request started " ts)
					if (c > ts + lat) bad("completed " c " after the request ended " (ts + lat))
				}
				if (s != "-" || e != "-") {
					if (s == "-" || e == "-") bad("driver stamps incomplete (submit " s ", done " e ")")
					else {
						if (s < q) bad("driver submit " s " before block queue " q)
						if (e > c) bad("driver done " e " after block completion " c)
						if (s > e) bad("driver submit " s " after driver done " e)
						if (e >= s) { ds += e - s; dn++ }
					}
				}
				if (k != "-") {
					if (s == "-" || e == "-") bad("kick " k " without driver submit/done")
					else if (k < s || k > e) bad("kick " k " outside submit " s " .. done " e)
					else { ks += k - s; kn++ }
				}
				if (c >= q) { qs += c - q; qn++ }
			}
			if (b != "") { nb++; if (!ex) ex = $2 " q_ns=" q ": " b }
		}
		END {
			printf "%d %d %d %d %d %d %.0f %s %s %s\n", n, nr, nw, j, other, nb,
				qn ? qs / qn : 0, dn ? sprintf("%.0f", ds / dn) : "-",
				kn ? sprintf("%.0f", ks / kn) : "-", ex
		}' "$1"
}

us() { [[ $1 == - ]] && { echo "-"; return; }; awk -v v="$1" 'BEGIN { printf "%.0fus", v / 1000 }'; }

one() {
	local s=$1 out t0 tf frc=0 brc=0 reason why="" g w n
	out=$LAB_DIR/runs/drivers-$s
	rm -rf "$out"
	mkdir -p "$out"
	t0=$(lab_now)

	local series=${s%%+*}
	LAB_EXTRA=$tmp/extra-$(lab_arch_of "$series")
	export LAB_EXTRA
	export LAB_G_PREFER="" LAB_G_DRV_MODE=""
	[[ $s == *+* ]] && LAB_G_PREFER=${s#*+}
	if [[ $LAB_G_PREFER == guest ]]; then
		LAB_G_PREFER="" LAB_G_DRV_MODE=guest
		export IOTRACER LAB_HOST_HOOK=$LAB_SRC/host-modes-hook.sh MODES_HOST_LINK=serial
	else
		unset LAB_HOST_HOOK
	fi
	step "$out/fetch.out" "$out/fetch.log" "$LAB_SRC/fetch.sh" "$series" || frc=$?
	tf=$(lab_since "$t0")
	if [[ $frc -ne 0 ]]; then
		reason=$(grep -E 'unavailable:|error:' "$out/fetch.log" | tail -n 1 | sed 's/^\[lab\] //')
		if [[ $frc -eq 3 ]]; then
			verdict_all "$s" SKIP "${reason:-kernel $s cannot be fetched here}"
		else
			verdict_all "$s" FAIL "fetch.sh $s failed (rc $frc): ${reason:-see $out/fetch.log}"
		fi
		return 0
	fi

	step /dev/null "$out/boot.log" "$LAB_SRC/boot.sh" "$series" "$LAB_SRC/guest-drivers.sh" "$out" || brc=$?
	# A boot that failed for a fault outside iotracer (harness.sh boot_fault: QEMU's own
	# crash before the guest was ready, the guest's int3 oops or soft lockup at a
	# half-patched jump label under TCG, a guest kernel that died before our script
	# began) boots once more, said in a `# retried:` note (the crashed console kept as
	# console.retried.log). Any other failure is never retried, nor is a second crash.
	if ((brc == 2)) && retry_boot "lab_$s" "$out" 1; then
		mv -f "$out/console.log" "$out/console.retried.log" 2>/dev/null
		brc=0
		step /dev/null "$out/boot.log" "$LAB_SRC/boot.sh" "$series" "$LAB_SRC/guest-drivers.sh" "$out" || brc=$?
	fi
	if [[ $brc -eq 3 ]]; then
		reason=$(grep -v '^\[lab\] boot' "$out/boot.log" | tail -n 1 | sed 's/^\[lab\] //')
		verdict_all "$s" SKIP "${reason:-cannot boot here}"
		return 0
	fi
	g=$out/guest.out
	local kver ready wall steps
	kver=$(sed -n 's/^kver=//p' "$out/result" 2>/dev/null)
	ready=$(sed -n 's/^ready_s=//p' "$out/result" 2>/dev/null)
	wall=$(sed -n 's/^wall_s=//p' "$out/result" 2>/dev/null)
	case $brc in
	0 | 1) ;;
	2)
		why="boot failed: $(boot_failure "$out"); last guest step: $(tr -d '\r' <"$out/console.log" 2>/dev/null | grep -E '^step ' | tail -n 1 | cut -d' ' -f2)"
		;;
	*) why="boot.sh failed (rc $brc): $(tail -n 1 "$out/boot.log" | sed 's/^\[lab\] //')" ;;
	esac
	if [[ -n $why ]]; then
		verdict_all "$s" FAIL "$why"
		note "lab_$s: kernel ${kver:-?} fetch ${tf}s boot-wall ${wall:-?}s; see $out/console.log"
		return 0
	fi

	# The bundle: out.json iotracer.err ioload.txt steps.txt.
	local bundle_ok=1
	unbundle "$g" "$out" || bundle_ok=0
	steps=$(awk '$1 == "step" { t[$2] = $3 } END {
		if ("start" in t && "attached" in t) printf "attach %.1fs ", t["attached"] - t["start"]
		if ("load_start" in t && "load_end" in t) printf "load %.1fs ", t["load_end"] - t["load_start"]
		if ("load_end" in t && "stopped" in t) printf "stop %.1fs", t["stopped"] - t["load_end"] }' "$g" | sed 's/ $//')
	note "lab_$s: kernel ${kver:-?}: fetch ${tf}s, ready ${ready:-?}s, ${steps:+$steps, }boot-wall ${wall:-?}s, bundle $(grep -m 1 '^===DRV-BUNDLE=== ' "$g" | cut -d' ' -f2) bytes"

	# lab_<k>_run
	why=""
	((bundle_ok)) || why="$BUNDLE_WHY;"
	local trc nattach
	trc=$(sed -n 's/^iotracer_rc //p' "$g")
	nattach=$(sed -n 's/^attach_lines //p' "$g")
	if grep -q '^iotracer did not attach' "$g"; then
		why="$why iotracer did not attach (attach lines: ${nattach:-?}$([[ -s $out/iotracer.err ]] && printf '; stderr: %s' "$(head -n 3 "$out/iotracer.err" | tr '\n' ' ' | cut -c1-300)"));"
	fi
	[[ $trc == 0 ]] || why="$why iotracer exited with status ${trc:-?};"
	[[ $brc == 0 ]] || why="$why guest script exited non-zero;"
	# Lines that do not parse (a crash can truncate the last one) are counted
	# against the run check and left out of the others.
	local json_ok=0 nl ngood
	if [[ -s $out/out.json ]] && jq -R -c 'fromjson? | select(type == "object")' "$out/out.json" >"$tmp/clean.json" 2>"$tmp/jq.err" &&
		jq -c 'select(.type == "attach")' "$tmp/clean.json" >"$out/attach.txt" 2>>"$tmp/jq.err" &&
		jq -r "$JQ_EXTRACT" "$tmp/clean.json" >"$out/blocks.txt" 2>>"$tmp/jq.err"; then
		json_ok=1
		nl=$(wc -l <"$out/out.json")
		ngood=$(wc -l <"$tmp/clean.json")
		((nl == ngood)) || why="$why $((nl - ngood)) of $nl lines of out.json are not JSON objects;"
	else
		why="$why out.json missing or unreadable ($(head -c 200 "$tmp/jq.err" 2>/dev/null | tr '\n' ' '));"
	fi
	if [[ -s $out/iotracer.err ]] && grep -qiE 'error|fail|abort|assert|sanitizer' "$out/iotracer.err"; then
		note "lab_$s: iotracer stderr: $(grep -iE 'error|fail|abort|assert|sanitizer' "$out/iotracer.err" | head -n 3 | tr '\n' ' ')"
	fi
	if [[ -z $why ]]; then report PASS "lab_${s}_run"; else report FAIL "lab_${s}_run" "${why# }"; fi
	if ((!json_ok)); then
		verdict_all "$s" FAIL "no usable trace (see lab_${s}_run)"
		return 0
	fi
	matrix_add "$s" "$out/attach.txt"
	MATRIX_COLS+=("$s")

	# lab_<k>_attach: the driver hooks of the contract attached.
	why=""
	local h
	for h in nvme:nvme_setup_cmd nvme:nvme_complete_rq scsi:scsi_dispatch_cmd_start \
		scsi:scsi_dispatch_cmd_done virtio:virtio_queue_rq virtio:virtqueue_notify \
		virtio:virtblk_done+virtblk_request_done; do
		n=$(jq -r --arg l "${h%%:*}" --arg hs "${h#*:}" \
			'select(.layer == $l and .ok == true and (.hook as $x | $hs | split("+") | index($x) != null)) | .hook' \
			"$out/attach.txt" | wc -l)
		((n > 0)) || why="$why ${h#*:}"
	done
	if [[ -z $why ]]; then
		report PASS "lab_${s}_attach"
	else
		report FAIL "lab_${s}_attach" "not attached (or no attach line):${why} ($(grep -c . "$out/attach.txt") attach lines, layers: $(jq -r .layer "$out/attach.txt" | sort -u | tr '\n' ' '))"
	fi

	# Per disk.
	local d drv v e ops opsr opsw errs st nb nr nw jn other nbad q2c dmean kmean ex hist pct
	for d in $DISKS; do
		drv=$(driver_of "$d")
		ops=0 errs=0 opsr="" opsw=""
		while read -r w; do
			[[ -n $w ]] || continue
			w=${w#ioload "$d" }
			v=$(jnum "$w" ops)
			[[ $v =~ ^[0-9]+$ ]] || continue
			ops=$((ops + v))
			e=$(jnum "$w" errors)
			errs=$((errs + ${e:-0}))
			case $w in
			*'"mode":"randread"'*) opsr=$v ;;
			*'"mode":"randwrite"'*) opsw=$v ;;
			esac
		done < <(grep "^ioload $d {" "$g")
		st=$(disk_stats "$out/blocks.txt" "$d" "$drv")
		read -r nb nr nw jn other nbad q2c dmean kmean ex <<<"$st"
		hist=$(jq -r --arg d "$d" 'select(.type == "summary" and .final == true)
			| [.hists[]? | select(.layer == "block" and .dev == $d and .stage == "q2c") | .count] | add // "-"' \
			"$tmp/clean.json" | tail -n 1)
		pct=$(awk -v a="$jn" -v b="$nb" 'BEGIN { if (b == 0) print "0.0"; else printf "%.1f", 100 * a / b }')
		note "lab_${s}_$d: ioload ops ${ops} (randread ${opsr:-?}, randwrite ${opsw:-?}, errors $errs); traced ${nb} (read $nr, write $nw; q2c histogram count ${hist:-?}); driver $drv on $jn (${pct} %), other layer $other; mean q2c $(us "$q2c"), submit->done $(us "$dmean"), submit->kick $(us "$kmean"); stage violations $nbad"

		# count
		if [[ -z $opsr || -z $opsw ]]; then
			report FAIL "lab_${s}_${d}_count" "no ioload result for $d (see $g)"
		elif ((nb == ops)); then
			report PASS "lab_${s}_${d}_count"
		else
			report FAIL "lab_${s}_${d}_count" "$nb block requests (read $nr, write $nw) in the trace, ioload did $ops ops (read $opsr, write $opsw)"
		fi
		# joined
		if ((nb == 0)); then
			report FAIL "lab_${s}_${d}_joined" "no block requests on $d in the trace"
		elif ((jn * 100 >= nb * 99)); then
			report PASS "lab_${s}_${d}_joined"
		else
			report FAIL "lab_${s}_${d}_joined" "driver layer $drv on $jn of $nb block requests (${pct} %, need >= 99 %)$( ((other > 0)) && echo ", $other carry another layer")"
		fi
		# stages
		if ((nb == 0)); then
			report FAIL "lab_${s}_${d}_stages" "no block requests on $d in the trace"
		elif ((nbad == 0)); then
			report PASS "lab_${s}_${d}_stages"
		else
			report FAIL "lab_${s}_${d}_stages" "$nbad of $nb block requests break the stage order, e.g. $ex"
		fi
		# own: every request the block layer saw on the disk was ioload's
		if [[ $hist == "$ops" ]]; then
			report PASS "lab_${s}_${d}_own"
		else
			report FAIL "lab_${s}_${d}_own" "the final q2c histogram counts ${hist:-no} requests on $d, ioload did $ops ops; other ops traced: $(awk -v d="$d" '$1 == d && $2 != "read" && $2 != "write" { n[$2]++ } END { for (k in n) printf "%s %d ", k, n[k] }' "$out/blocks.txt")"
		fi
		[[ $s == *+guest ]] && check_vreq "$s" "$d" "$ops" "$out"
	done
	note "lab_$s: total $(lab_since "$t0")s; files in $out"
}

# ------------------------------------------------------------ main
t_all=$(lab_now)
MATRIX_COLS=()
HOST_LABEL=""
: >"$tmp/matrix.in"
BUILD_WHY=""
# One static build per guest architecture (arm64: cross-built, make static-arm64).
unbuilt=" "
for arch in $(for k in "$@"; do lab_arch_of "${k%%+*}"; done | sort -u); do
	if ! build_static "$arch"; then
		unbuilt="$unbuilt$arch "
		for k in "$@"; do
			[[ $(lab_arch_of "${k%%+*}") == "$arch" ]] && verdict_all "$k" FAIL "$BUILD_WHY"
		done
		continue
	fi
	guest_extra "$tmp/extra-$arch" "$arch"
done

for k in "$@"; do
	[[ $unbuilt == *" $(lab_arch_of "${k%%+*}") "* ]] || one "$k"
done
host_column
print_matrix
note "lab drivers: $* done in $(lab_since "$t_all")s"
retries_verdict lab_drivers_retries
exit "$failed"
