#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# test_btt.sh: iotracer's block stages against blktrace + btt on the same
# requests (issue 21: "Q2C and D2C means within 3 % on the same requests").
#
# This host has no debugfs and no blktrace; the lab guest has both. One boot of
# LAB_BTT_KERNEL (6.12) runs tests/lab/guest-btt.sh: Debian's blktrace (the
# host's binary, run through the host's loader and libc) and then a static
# iotracer (`-q --no-live -j out.json -d vda`, the default profile) trace two
# loads: qd1 (ioload randread + randwrite, LAB_BTT_COUNT ops each, QD1, 4 KiB
# O_DIRECT, below sector 65536) and qdN (LAB_BTT_QD ioload processes at once
# in slices above it). blktrace's per-CPU binary files come back in the
# bundle; blkparse and btt run here, btt once per load over the load's time
# window (-t/-T), the load's requests told apart by sector.
#
# Per load P (qd1, qd4):
#   lab_btt_<k>_P_match  every request is on both sides, nothing lost: btt's
#                        Q2C and D2C counts == the complete read/write
#                        requests blkparse lists (Q, D, C seen) == iotracer's
#                        block records in the load's sectors == ioload's ops,
#                        all paired by (op, sector, n-th occurrence), none
#                        incomplete, merged or split, blktrace dropped 0
#                        events, iotracer dropped 0 block records; and the
#                        list's means are btt's (to 2 ns: the parser's check)
#   lab_btt_<k>_P_q2c    mean Q2C of iotracer's records within 3 % of btt's
#   lab_btt_<k>_P_d2c    the same for D2C
#   lab_btt_<k>_P_stamps per request, no iotracer stamp (Q, D, C) more than
#                        10 us before blktrace's of the same event (each less
#                        the median difference: the clocks' origins and the
#                        usual time between the two probes). blktrace runs
#                        first on each tracepoint, so iotracer's stamp can only
#                        come later; an earlier one is not that event's (stale,
#                        or another hook's)
# and lab_btt_<k>_run (the guest ran, both tracers started and exited 0, the
# bundle arrived). Durations only: blktrace's times are relative to its start,
# iotracer's are the monotonic clock. Notes per load: the means, and the
# per-request |iotracer - blktrace| of Q2C, Q2D and D2C (max, p99, mean);
# per run: the requests of other kinds (no sectors) each side saw.
#
# SKIP (never PASS) when blkparse/btt/blktrace are not installed here
# (`apt-get install blktrace`, in the Makefile's deps-test), when the kernel
# cannot be fetched or booted, or when its config lacks CONFIG_BLK_DEV_IO_TRACE.
# Files: $LAB_DIR/runs/btt-<k>/ (boot.sh's, the bundle with bt/ = blktrace's
# files, bt.txt = blkparse's events, bt.req = its requests, P.req = those of
# load P, P.btt.avg = btt's averages, iot.txt = iotracer's block records,
# P.pairs = the pairs).
#
# Environment: LAB_BTT_KERNEL (6.12), LAB_BTT_COUNT (600), LAB_BTT_QD (4),
# LAB_BTT_TOL (3: percent), LAB_BTT_ORDER=iotracer (attach iotracer first, so
# its programs run before blktrace's probes: docs/lab.md), LAB_TIMEOUT
# (120 s), and what boot.sh reads.
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"

SERIES=${LAB_BTT_KERNEL:-6.12}
STATIC=$LAB_DIR/iotracer-static
TOL=${LAB_BTT_TOL:-3}
export LAB_TIMEOUT=${LAB_TIMEOUT:-120}
export LAB_G_BTT_COUNT=${LAB_BTT_COUNT:-600}
export LAB_G_BTT_QD=${LAB_BTT_QD:-4}
export LAB_G_BTT_ORDER=${LAB_BTT_ORDER:-blktrace}
ORDER_SIGN=1 # iotracer's stamps come after blktrace's (see stamp_devs)
[[ $LAB_G_BTT_ORDER == iotracer ]] && ORDER_SIGN=-1
export LAB_G_BTT_SPLIT=65536 # sector: qd1 below, qdN above (LAB_DISK_MB 64)
export LAB_DISK_MB=64
unset LAB_HOST_HOOK
PFX=lab_btt_$SERIES
PHASES="qd1 qd$LAB_G_BTT_QD"
NAMES="${PFX}_run"
for p in $PHASES; do NAMES="$NAMES ${PFX}_${p}_match ${PFX}_${p}_q2c ${PFX}_${p}_d2c ${PFX}_${p}_stamps"; done

lab_begin btt
out=$LAB_DIR/runs/btt-$SERIES
t0=$(lab_now)

# blktrace for the guest: the host's binary with its loader and libraries
# (the guest has no glibc); blkparse and btt run here.
guest_blktrace() { # DIR
	local bt lib
	bt=$(command -v blktrace || echo /usr/sbin/blktrace)
	cp "$bt" "$1/blktrace" || return 1
	for lib in $(ldd "$bt" | grep -oE '/[^ ]+\.so[^ ]*'); do
		cp -L "$lib" "$1/$(basename "$lib")" || return 1
	done
	[[ -f $1/ld-linux-x86-64.so.2 && -f $1/libc.so.6 ]]
}

for t in blkparse btt blktrace; do
	command -v "$t" >/dev/null 2>&1 || [[ -x /usr/sbin/$t ]] || {
		rest SKIP "$t not installed here (apt-get install blktrace; make deps-test)"
		exit 0
	}
done
[[ $(lab_arch_of "$SERIES") == amd64 ]] || {
	rest SKIP "$SERIES: the guest runs this host's amd64 blktrace"
	exit 0
}
fetch_series "$SERIES"
if ! grep -qx 'CONFIG_BLK_DEV_IO_TRACE=y' "$(lab_kdir "$kver")/root/boot/config-$kver" 2>/dev/null; then
	rest SKIP "$kver: no CONFIG_BLK_DEV_IO_TRACE=y in its config (no blktrace in the guest)"
	exit 0
fi
if ! build_static amd64; then
	rest FAIL "$BUILD_WHY"
	exit 1
fi
export LAB_EXTRA=$tmp/extra
if ! guest_extra "$LAB_EXTRA" || ! guest_blktrace "$LAB_EXTRA"; then
	rest FAIL "cannot put iotracer, blktrace and its libraries in $LAB_EXTRA"
	exit 1
fi

# ------------------------------------------------------------ the boot
boot_once_more "$SERIES" "$LAB_SRC/guest-btt.sh" "$out"
loads=""
for p in $PHASES; do
	loads="$loads, $p load $(awk -v p="$p" '$1 == "step" { t[$2] = $3 } END { printf "%.1fs", t[p "_load_end"] - t[p "_load_start"] }' "$g" 2>/dev/null)"
done
note "$PFX: kernel $kver, ready $(sed -n 's/^ready_s=//p' "$out/result" 2>/dev/null)s, boot wall $(sed -n 's/^wall_s=//p' "$out/result" 2>/dev/null)s$loads"
boot_why
grep -q '^blktrace did not start' "$g" && why="${why}$(grep -m1 '^blktrace did not start' "$g"); "
grep -q '^blktrace_rc 0$' "$g" || why="${why}blktrace exited with status $(sed -n 's/^blktrace_rc //p' "$g"); "
((brc == 1)) && why="${why}guest script exited non-zero (an ioload error?); "
if [[ -n $why ]]; then
	rest FAIL "${why%; } (see $out/console.log)"
	exit 1
fi
report PASS "${PFX}_run"

# ------------------------------------------------------------ the comparison
# iotracer: one line per block request on vda: op sector nr_sectors q q2d d2c q2c
jq -R -r 'fromjson? | select(.type == "request") | .block[]? | select(.dev == "vda")
	| [.op, .sector, .nr_sectors, .q_ns, .q2d_ns, .d2c_ns, .q2c_ns] | map(tostring) | join(" ")' \
	"$out/out.json" >"$out/iot.txt"
# requests of other ops (no sectors: not in either side's read/write set): said, not checked
note "$PFX: iotracer's other block records on vda over the whole run: $(awk '$1 != "read" && $1 != "write" { n[$1 " " $3 " sectors"]++ } END { for (k in n) printf "%s (%d) ", k, n[k] }' "$out/iot.txt")"
iot_drops=$(jq -R -r 'fromjson? | select(.type == "summary" and .final) | [.drops.block.ringbuf, .drops.block.inflight, .drops.block.missed // 0] | add' "$out/out.json" | tail -n 1)

# blkparse's events -> lines
#   req OP SECTOR NR Q2C_NS Q2D_NS D2C_NS Q_NS  a read/write request with Q, D and C
#   inc OP SECTOR NR                           one missing its Q, D or C
#   merge ACTION OP SECTOR                      merge, split, requeue or bounce event
#   other RWBS                                  a completed request of another kind
#                                               (flush, discard, a driver's own: no sectors)
# (times relative to blktrace's start; OP read or write).
# shellcheck disable=SC2016 # awk program
BLK_REQS='
function ns(s, n) { return s * 1e9 + n }
function opn(o) { return o == "R" ? "read" : "write" }
{ op = substr($2, 1, 1) }
$1 ~ /^[QDC]$/ {
	if ((op != "R" && op != "W") || $4 == 0) {
		if ($1 == "C") print "other", $2
		next
	}
	k = opn(op) " " $3 " " $4; t = ns($5, $6)
	if ($1 == "Q") { if (k in q) print "inc", k; q[k] = t; delete d[k] }
	else if ($1 == "D") d[k] = t
	else if ((k in q) && (k in d)) {
		printf "req %s %.0f %.0f %.0f %.0f\n", k, t - q[k], d[k] - q[k], t - d[k], q[k]
		delete q[k]; delete d[k]
	} else print "inc", k
	next
}
$1 ~ /^[MFXRB]$/ && (op == "R" || op == "W") { print "merge", $1, opn(op), $3 }
END { for (k in q) print "inc", k }'

# Pairs by (op, sector, n-th occurrence in queue order): the requests of a
# load from both sides (the phase's req lines, then iot.txt) -> pairs
#   q2c_bt q2c_it q2d_bt q2d_it d2c_bt d2c_it offQ offD offC op sector
# (offX: iotracer's stamp X minus blktrace's, its clock origin included) and a
# last line "# iot N blk M pairs P unpaired_iot U unpaired_blk V incomplete_iot I".
# shellcheck disable=SC2016 # awk program
PAIR='
FNR == 1 { f++ }
f == 1 && $1 == "req" { key = $2 " " $3 " " $4; blk[key, ++nb[key]] = $5 " " $6 " " $7 " " $8; nblk++; next }
f == 2 {
	if (lo ? $2 >= sect : $2 < sect) next
	if ($1 != "read" && $1 != "write") next
	niot++
	if ($4 == "null" || $5 == "null" || $6 == "null" || $7 == "null") { incit++; next }
	key = $1 " " $2 " " $3
	it[key, ++ni[key]] = $7 " " $5 " " $6 " " $4
}
END {
	for (key in ni) for (j = 1; j <= ni[key]; j++) {
		split(it[key, j], a, " ")
		if (j > nb[key]) { ui++; continue }
		split(blk[key, j], b, " ")
		split(key, k, " ")
		printf "%s %s %s %s %s %s %.0f %.0f %.0f %s %s\n", b[1], a[1], b[2], a[2], b[3], a[3],
			a[4] - b[4], a[4] + a[2] - b[4] - b[2], a[4] + a[1] - b[4] - b[1], k[1], k[2]
		np++
	}
	for (key in nb) if (nb[key] > ni[key] + 0) ub += nb[key] - ni[key]
	printf "# iot %d blk %d pairs %d unpaired_iot %d unpaired_blk %d incomplete_iot %d\n", niot, nblk, np, ui, ub, incit
}'

# stamp_devs PAIRS COL: the deviation of one stamp per pair, offX less its
# median (the clocks' origins and the usual time between the two probes),
# signed so that > 0 is the stamp of the tracer that runs second on the
# tracepoint coming later than usual (something ran in between: an interrupt,
# the vCPU descheduled), < 0 iotracer's stamp coming before the event blktrace
# saw (with blktrace first it cannot, unless iotracer's stamp is not that
# event's: a stale or a wrong one). Prints
#   "min_us max_us late early worst_early"  (late: > 20 us, early: < -10 us)
stamp_devs() {
	awk -v c="$2" '!/^#/ { print $c, $10, $11 }' "$1" | sort -n |
		awk -v sg="$ORDER_SIGN" '{ v[NR] = $1; w[NR] = $2 " " $3 }
		END {
			if (!NR) { print "0 0 0 0 -"; exit }
			m = v[int((NR + 1) / 2)]; mn = 1e18; mx = -1e18
			for (i = 1; i <= NR; i++) {
				d = sg * (v[i] - m)
				if (d < mn) { mn = d; ex = w[i] }
				if (d > mx) mx = d
				if (d > 20000) late++
				if (d < -10000) early++
			}
			printf "%.1f %.1f %d %d %s:%.1fus\n", mn / 1000, mx / 1000, late, early, ex, mn / 1000
		}' | sed 's/ \([a-z]*\) \([0-9]*\):/ \1@\2:/'
}
# iotracer's q order of one key is its record order only if we sort: iot.txt sorted by q_ns
sort -k4,4n "$out/iot.txt" -o "$out/iot.txt"

# pct A B: 100 * (A - B) / B, 2 decimals
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.2f", b ? 100 * (a - b) / b : 0 }'; }
us() { awk -v v="$1" 'BEGIN { printf "%.1fus", v / 1000 }'; }
# diffstats COL_BT COL_IT < pairs: "max p99 mean" of |it - bt| in ns
diffstats() {
	awk -v a="$1" -v b="$2" '!/^#/ { d = $b - $a; print (d < 0 ? -d : d) }' | sort -n |
		awk '{ v[NR] = $1; s += $1 } END { if (!NR) { print "0 0 0"; exit } i = int(NR * 0.99 + 0.999); printf "%.0f %.0f %.0f\n", v[NR], v[i], s / NR }'
}
# btt's average of a stage (the "All Devices" block; btt calls Q2C Q2Cdm when
# the requests have no insert event, i.e. were issued directly): "avg_ns n"
btt_avg() { # FILE STAGE
	awk -v s="$2" '$1 == s || $1 == s "dm" { printf "%.0f %d\n", $3 * 1e9, $5; exit }' "$1"
}

if ! blkparse -q -i vda -D "$out/bt" -f '%a %d %S %n %T %t\n' -o "$out/bt.txt" >"$tmp/blkparse.log" 2>&1 ||
	! blkparse -q -i vda -D "$out/bt" -O -d "$tmp/bt.bin" >>"$tmp/blkparse.log" 2>&1 ||
	! awk "$BLK_REQS" "$out/bt.txt" >"$out/bt.req"; then
	rest FAIL "blkparse failed on the trace: $(tail -n 2 "$tmp/blkparse.log" | tr '\n' ' ')"
	exit 1
fi
dropped=$(sed -n 's/.*Total:.*(dropped \([0-9]*\)).*/\1/p' "$out/blktrace.out" | head -n 1)
note "$PFX: blktrace: $(grep -m1 'Total:' "$out/blktrace.out" | tr -s ' '); other requests completed (no sectors): $(awk '$1 == "other" { n[$2]++ } END { for (k in n) printf "%s (%d) ", k, n[k] }' "$out/bt.req")"

lo=1
for p in $PHASES; do
	# the load's lines of bt.req (by sector), and btt over its time window
	awk -v sect="$LAB_G_BTT_SPLIT" -v lo="$lo" '{ s = $1 == "merge" ? $4 : $3 }
		($1 == "req" || $1 == "inc" || $1 == "merge") && (lo ? s < sect : s >= sect)' "$out/bt.req" >"$out/$p.req"
	read -r w0 w1 < <(awk '$1 == "req" { if (!n++ || $8 < a) a = $8; if ($8 + $5 > b) b = $8 + $5 }
		END { printf "%.9f %.9f\n", (a > 1000 ? a - 1000 : 0) / 1e9, (b + 1000) / 1e9 }' "$out/$p.req")
	(cd "$tmp" && btt -i bt.bin -t "$w0" -T "$w1" -o "$out/$p.btt") >"$tmp/btt.log" 2>&1 # it writes *_fp.dat files into its cwd
	if [[ ! -s $out/$p.btt.avg ]]; then
		why="btt failed on the $p window ($w0 .. $w1 s): $(tail -n 2 "$tmp/btt.log" | tr '\n' ' ')"
		for c in match q2c d2c stamps; do report FAIL "${PFX}_${p}_$c" "$why"; done
		lo=0
		continue
	fi
	awk -v sect="$LAB_G_BTT_SPLIT" -v lo="$lo" "$PAIR" "$out/$p.req" "$out/iot.txt" >"$out/$p.pairs"
	lo=0
	inc=$(grep -c '^inc ' "$out/$p.req")
	merges=$(grep -c '^merge ' "$out/$p.req")
	read -r _ _ niot _ nblk _ np _ ui _ ub _ incit < <(tail -n 1 "$out/$p.pairs")
	read -r bq2c nq2c < <(btt_avg "$out/$p.btt.avg" Q2C)
	read -r bd2c nd2c < <(btt_avg "$out/$p.btt.avg" D2C)
	ops=$(grep "^ioload $p " "$out/ioload.txt" | cut -d' ' -f3- | jq -s 'map(.ops) | add // 0')
	errs=$(grep "^ioload $p " "$out/ioload.txt" | cut -d' ' -f3- | jq -s 'map(.errors) | add // 0')
	# means over the pairs: blkparse's (the parser's check against btt) and iotracer's
	read -r mq2c_b mq2c_i mq2d_b mq2d_i md2c_b md2c_i < <(awk '!/^#/ { for (i = 1; i <= 6; i++) s[i] += $i; n++ }
		END { for (i = 1; i <= 6; i++) printf "%.0f ", n ? s[i] / n : 0; print "" }' "$out/$p.pairs")
	read -r xq pq aq < <(diffstats 1 2 <"$out/$p.pairs")
	read -r xg pg ag < <(diffstats 3 4 <"$out/$p.pairs")
	read -r xd pd ad < <(diffstats 5 6 <"$out/$p.pairs")
	note "$PFX $p: ioload ops $ops (errors $errs); btt ($w0 .. $w1 s) Q2C n $nq2c, D2C n $nd2c; blkparse read/write requests $nblk (incomplete $inc, merge/split/requeue events $merges; blktrace dropped ${dropped:-?}); iotracer records $niot (no stages $incit; block drops ${iot_drops:-?}); paired $np, unpaired iotracer $ui, blktrace $ub"
	note "$PFX $p: Q2C mean btt $(us "$bq2c") iotracer $(us "$mq2c_i") ($(pct "$mq2c_i" "$bq2c") %); D2C mean btt $(us "$bd2c") iotracer $(us "$md2c_i") ($(pct "$md2c_i" "$bd2c") %); Q2D mean blkparse $(us "$mq2d_b") iotracer $(us "$mq2d_i")"
	note "$PFX $p: per request |iotracer - blktrace|: Q2C max $(us "$xq") p99 $(us "$pq") mean $(us "$aq"); Q2D max $(us "$xg") p99 $(us "$pg") mean $(us "$ag"); D2C max $(us "$xd") p99 $(us "$pd") mean $(us "$ad"); the per-request list's means against btt's: Q2C $(pct "$mq2c_b" "$bq2c") %, D2C $(pct "$md2c_b" "$bd2c") %"

	# match: one request set on both sides, nothing lost, and btt read as we read it
	why=""
	((ops > 0 && errs == 0)) || why="${why}ioload ops $ops errors $errs; "
	[[ $dropped == 0 ]] || why="${why}blktrace dropped ${dropped:-?} events; "
	[[ $iot_drops == 0 ]] || why="${why}iotracer dropped ${iot_drops:-?} block records; "
	((nblk == ops && niot == ops && np == ops && ui == 0 && ub == 0 && incit == 0 && inc == 0 && merges == 0)) ||
		why="${why}ioload $ops ops, blkparse $nblk complete requests ($inc incomplete, $merges merge/split/requeue events), iotracer $niot records ($incit without stages), $np paired, unpaired: iotracer $ui, blktrace $ub; "
	[[ $nq2c == "$nblk" && $nd2c == "$nblk" ]] || why="${why}btt counts Q2C $nq2c D2C $nd2c, blkparse lists $nblk requests; "
	awk -v a="$mq2c_b" -v b="$bq2c" -v c="$md2c_b" -v d="$bd2c" 'BEGIN { exit !((a - b) ^ 2 <= 4 && (c - d) ^ 2 <= 4) }' ||
		why="${why}the per-request means (Q2C $mq2c_b, D2C $md2c_b ns) are not btt's ($bq2c, $bd2c ns); "
	if [[ -z $why ]]; then report PASS "${PFX}_${p}_match"; else report FAIL "${PFX}_${p}_match" "${why%; }"; fi
	# stamps: per request, no iotracer stamp before blktrace's of the same event
	why=""
	sn=""
	for c in Q:7 D:8 C:9; do
		read -r mn mx late early ex < <(stamp_devs "$out/$p.pairs" "${c#*:}")
		sn="$sn; ${c%%:*} ${mn}..${mx}us, $late over 20us late"
		((early == 0)) || why="${why}${c%%:*}: $early stamps more than 10 us before blktrace's (usual offset removed), the worst $ex; "
	done
	note "$PFX $p: iotracer's stamp - blktrace's, less the median (the tracer that runs second: > 0 = later than usual)${sn}"
	if ((np == 0)); then
		report FAIL "${PFX}_${p}_stamps" "no paired requests"
	elif [[ -z $why ]]; then
		report PASS "${PFX}_${p}_stamps"
	else
		report FAIL "${PFX}_${p}_stamps" "${why%; }"
	fi
	# means within TOL % of btt's
	for c in q2c:"$mq2c_i":"$bq2c" d2c:"$md2c_i":"$bd2c"; do
		IFS=: read -r st mi mb <<<"$c"
		if ((np == 0 || mb == 0)); then
			report FAIL "${PFX}_${p}_$st" "no paired requests"
		elif awk -v a="$mi" -v b="$mb" -v t="$TOL" 'BEGIN { d = (a - b) / b; exit !(d <= t / 100 && d >= -t / 100) }'; then
			report PASS "${PFX}_${p}_$st"
		else
			report FAIL "${PFX}_${p}_$st" "mean ${st^^} over $np requests: iotracer $(us "$mi"), btt $(us "$mb") ($(pct "$mi" "$mb") %, allowed ±$TOL %)"
		fi
	done
done
rest FAIL "not reported (bug in test_btt.sh)"
note "$PFX: took $(lab_since "$t0")s; files in $out"
retries_verdict "${PFX}_retries"
exit "$failed"
