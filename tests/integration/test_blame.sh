#!/usr/bin/env bash
# Who slowed my IO (docs/blame.md): `iotracer report --blame` against an aggressor that is
# on and off at times the test chose (issue 27's oracle; ~70 s: two runs of 4 phases of
# BLAME_PHASE (6) s, 24 s; the schedule below in phases of 10 s for the reading).
# One loop device (direct IO, over a file on the root file system) with an ext4. Three
# cgroups of the machine's cgroup2 mount: V, A, B. Each fio process joins its cgroup
# before it execs; each has its own file:
#   V   4k random reads, QD1, direct, 500 IOPS, 40 s over 64 MiB (written)
#   A   1 MiB sequential writes, QD32, direct (libaio): one fio at 10-20 s, one at 30-40 s
#   B   the same at QD8: 30-40 s
# Run 2 is the same with A and B writing buffered (psync, 1 MiB) into their files on an
# ext4 of the device while a syncer in the test's own cgroup runs `sync -f` every 0.25 s:
# the flusher kworker writes their pages, and the records charge them to A and B (their
# block[].dirty): the blame must name A, not the kworker's cgroup.
# Oracles: each fio's own timing (its JSON's timestamp_ms, the end, minus job_runtime: the
# windows it really ran), the schedule the test chose, and A's and B's device time (the
# d2c_ns of their block requests in their own records). Windows are shrunk by 1 s each side.
#   direct_on      A alone on (10-20 s): >= 80 % of V's blamed wait (self + others) names A;
#                  30-40 s: >= 80 % names A or B
#   direct_off     0-10 s and 20-30 s: V's wait blamed on others <= 5 % of its wait
#   direct_split   30-40 s: A:B of V's blamed wait within 25 % of A:B of their device time
#   buffered_on, buffered_off, buffered_split: the same with A and B writing buffered
#   buffered_flusher  run 2: V's blame on A includes requests the flusher submitted (their
#                  block[].pid is not A's fio), so the charge came through block[].dirty
#   metrics_blame  run 1's tracer also runs --metrics --metrics-cgroup-depth 1 --blame: at
#                  the end, iotracer_blame_seconds_total of victim V names A and B for
#                  >= 80 % of V's blamed wait (iotracer_blame_wait_seconds_total self +
#                  others), A's within 3 % of the report's figure for the run; promtool
#                  check metrics passes (when promtool is there)
#   metrics_share  run 1's /metrics scraped by a real Prometheus (SKIP without one) with
#                  configs/iotracer-rules.yml: the dashboard's "who slows whom" panel ranks
#                  by the victim's share of its wait: its first series is a victim slowed
#                  by A, that victim not A (V, B, or the root cgroup's few requests: each
#                  light cgroup beside A is A's victim, and which ranks first by share
#                  depends on the run), V's top culprit in the rule's
#                  device:iotracer_blame_share:rate5m is A, and A's (its culprits and its
#                  self share, device:iotracer_blame_self_share) is not V: by seconds,
#                  the heavy A came first as a victim of B
#   report_json    each run's report: "blame" lines parse, own + unattributed + self + others
#                  == wait (within 0.1 %) for every victim
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin direct_on direct_off direct_split buffered_on buffered_off buffered_split \
	buffered_flusher report_json metrics_blame metrics_share
it_require_all fio jq findmnt mkfs.ext4 fallocate curl ss

mk_cgroups V A B
note "cgroups: V ${REL[V]}, A ${REL[A]}, B ${REL[B]}"
VIOPS=${BLAME_VIOPS:-500}
P=${BLAME_PHASE:-6} # s: off, A, off, A+B (windows shrunk by 1 s each side: 4 s, ~2000 of V's reads)

# fio_in CGROUP NAME OUT FIO-ARGS...: a fio process that joins CGROUP before it execs
declare -A FPID
fio_in() {
	local cg=$1 nm=$2 out=$3
	shift 3
	bg_start "fio.$nm" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" \
		fio --output-format=json --output="$out" --name="$nm" "$@"
	FPID[$nm]=$BG_PID
}

# fio_window OUT: "START END" of its job in ns of CLOCK_REALTIME: its end (timestamp_ms,
# written when the job ended) minus its job_runtime
fio_window() {
	jq -r '(.timestamp_ms * 1000000) as $e | "\($e - (.jobs[0].job_runtime * 1000000)) \($e)"' "$1"
}

# blame_window RUN TAG FROM_NS TO_NS: report --blame over the run's records for the victims
# that started in [FROM, TO) (CLOCK_REALTIME ns), JSON lines into $IT_TMP/RUN.TAG.json
blame_window() {
	local since until
	since=$(awk -v t="$3" 'BEGIN { printf "%.3f", t / 1e9 }')
	until=$(awk -v t="$4" 'BEGIN { printf "%.3f", t / 1e9 }')
	"$IOTRACER" report --blame -n 0 -d "$name" --since "$since" --until "$until" \
		-j "$IT_TMP/$1.$2.json" "$TRACE" >"$IT_TMP/$1.$2.txt" 2>&1
}

# victim_figures FILE: "WAIT SELF OTHERS A B" (ns) of victim V's blame line
victim_figures() {
	jq -r --arg v "${REL[V]}" --arg a "${REL[A]}" --arg b "${REL[B]}" '
		select(.type == "blame" and .victim.cgroup == $v) |
		[.wait_ns, .self_ns, .others_ns,
		 ([.culprits[] | select(.who.cgroup == $a) | .ns] | add // 0),
		 ([.culprits[] | select(.who.cgroup == $b) | .ns] | add // 0)] | @tsv' "$1"
}

# devtime FILE CGROUP: the d2c_ns of the cgroup's block requests on the device (its own
# records, as report -j wrote them for the window)
devtime() {
	jq -s --arg c "$2" --arg d "$devno" '
		[.[] | select(.type == "request" and .cgroup == $c) | .block[]? |
		 select(.devno == $d) | .d2c_ns // 0] | add // 0' "$1"
}

# metric NAME LABELS: the value of the sample with exactly these labels in the scrape
metric() { awk -v k="$1{$2}" '$1 == k { print $2 }' "$IT_TMP/scrape.txt"; }

# metrics_check: the live --blame of run 1 against fio's schedule and the report
metrics_check() {
	local lv="device=\"$name\",victim=\"${REL[V]}\"" ma mb ms mo ra share agree why
	ma=$(metric iotracer_blame_seconds_total "$lv,culprit=\"${REL[A]}\"")
	mb=$(metric iotracer_blame_seconds_total "$lv,culprit=\"${REL[B]}\"")
	ms=$(metric iotracer_blame_wait_seconds_total "$lv,part=\"self\"")
	mo=$(metric iotracer_blame_wait_seconds_total "$lv,part=\"others\"")
	read -r _ _ _ ra _ < <(victim_figures "$IT_TMP/direct.all.json")
	share=$(awk -v a="${ma:-0}" -v b="${mb:-0}" -v s="${ms:-0}" -v o="${mo:-0}" \
		'BEGIN { printf "%.3f", (s + o) ? (a + b) / (s + o) : 0 }')
	agree=$(awk -v m="${ma:-0}" -v r="${ra:-0}" 'BEGIN { printf "%.4f", r ? m * 1e9 / r : 0 }')
	note "blame metrics (live, whole run): V blamed on A ${ma:-none} s, B ${mb:-none} s, self ${ms:-none} s, others ${mo:-none} s: A+B share $share; A live / A report $agree"
	why="A+B share $share (want >= 0.8), live A / report A $agree (want 0.97 to 1.03)"
	if command -v promtool >/dev/null; then
		promtool check metrics <"$IT_TMP/scrape.txt" >"$IT_TMP/promtool.out" 2>&1 ||
			why+=", promtool: $(head -c 300 "$IT_TMP/promtool.out")"
	fi
	check metrics_blame "$why" awk -v s="$share" -v a="$agree" -v w="$why" \
		'BEGIN { exit !(s >= 0.8 && a >= 0.97 && a <= 1.03 && w !~ /promtool/) }'
}

# prom_start: a Prometheus of its own (loopback, temporary storage) scraping run 1's tracer
# every 1 s, with the shipped rules; PROM_PORT, or PROM_WHY when there is none
prom_start() {
	local i
	PROM_PORT="" PROM_WHY=""
	command -v prometheus >/dev/null || {
		PROM_WHY="no prometheus binary"
		return 1
	}
	PROM_PORT=$(free_port) || {
		PROM_WHY="no free TCP port"
		return 1
	}
	cat >"$IT_TMP/prometheus.yml" <<EOF
global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }
rule_files: ['$IT_ROOT/configs/iotracer-rules.yml']
scrape_configs:
  - job_name: iotracer
    static_configs: [{ targets: ['127.0.0.1:$PORT'] }]
EOF
	bg_start prometheus prometheus --config.file="$IT_TMP/prometheus.yml" \
		--storage.tsdb.path="$IT_TMP/tsdb" --web.listen-address="127.0.0.1:$PROM_PORT"
	for ((i = 0; i < 150; i++)); do
		curl -sf --max-time 1 "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null && return 0
		proc_alive "$BG_PID" || break
		sleep 0.2
	done
	PROM_WHY="prometheus not ready: $(tail -c 300 "$IT_TMP/prometheus.out")"
	PROM_PORT=""
	return 1
}

# prom_top EXPR: "VICTIM CULPRIT VALUE" of the instant query's largest series
prom_top() {
	curl -s --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
		jq -r '[.data.result[]? | {v: .metric.victim, c: .metric.culprit, x: (.value[1] | tonumber)}]
			| max_by(.x) // empty | "\(.v) \(.c) \(.x)"'
}

# share_check T_END: the panel and the rule, once Prometheus scraped and evaluated after T_END
share_check() {
	local t_end=$1 i ts ev s0="" expr panel vtop atop secs why pv pc vc ac
	if [[ -z $PROM_PORT ]]; then
		skip metrics_share "$PROM_WHY"
		return
	fi
	# the first scrape after T_END (S0, its own time: timestamp() of the selector), then
	# an evaluation of the rules more than 1 s after it. Before, the scrape time was that
	# of `up == 1`, the query's own, and the latest one: never 1 s before an evaluation
	# (whole seconds), so the loop ran out its 50 rounds, 13 s, every run.
	for ((i = 0; i < 50; i++)); do
		ts=$(curl -s --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode \
			'query=timestamp(up{job="iotracer"}) and up{job="iotracer"} == 1' |
			jq -r '.data.result[0].value[1] // 0')
		ev=$(curl -s --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/rules" | jq -r \
			'.data.groups[] | select(.name == "iotracer-recording") | .lastEvaluation
			| sub("\\.[0-9]*Z$"; "Z") | fromdate')
		[[ -z $s0 ]] && awk -v s="$ts" -v t="$t_end" 'BEGIN { exit !(s > t) }' && s0=$ts
		[[ -n $s0 ]] && awk -v s="$s0" -v e="${ev:-0}" 'BEGIN { exit !(e > s + 1) }' && break
		sleep 0.2
	done
	# the panel's query over the whole run, its variables matching anything
	expr=$(jq -r '.panels[] | select(.title | startswith("Who slows whom")) | .targets[0].expr' \
		"$IT_ROOT/configs/grafana-iotracer.json")
	expr=${expr//\$__rate_interval/2m}
	expr=$(sed -E 's/\$[a-z]+/.*/g' <<<"$expr")
	panel=$(prom_top "$expr")
	vtop=$(prom_top "device:iotracer_blame_share:rate5m{device=\"$name\",victim=\"${REL[V]}\"}")
	# A's culprits and A itself (its self share)
	atop=$(prom_top "device:iotracer_blame_share:rate5m{device=\"$name\",victim=\"${REL[A]}\"} or label_replace(device:iotracer_blame_self_share:rate5m{device=\"$name\",victim=\"${REL[A]}\"}, \"culprit\", \"\$1\", \"victim\", \"(.*)\")")
	secs=$(prom_top "sum by (victim, culprit) (iotracer_blame_seconds_total{device=\"$name\",victim=\"${REL[A]}\"})")
	why="panel's first (victim culprit share): ${panel:-none}; rule: V's top ${vtop:-none}, A's top ${atop:-none}; by seconds A's top ${secs:-none}"
	note "blame share: $why (V ${REL[V]}, A ${REL[A]})"
	read -r pv pc _ <<<"$panel"
	read -r _ vc _ <<<"$vtop"
	read -r _ ac _ <<<"$atop"
	if [[ -n ${pv:-} && ${pv:-} != "${REL[A]}" && ${pc:-} == "${REL[A]}" &&
		${vc:-} == "${REL[A]}" &&
		-n ${ac:-} && ${ac:-} != "${REL[V]}" ]]; then
		pass metrics_share
	else
		fail metrics_share "$why"
	fi
}

# run_blame RUN MODE: the 4-phase schedule, the tracer, the windows, the checks
run_blame() {
	local run=$1 mode=$2 j v0 v1 a10 a11 a20 a21 b0 b1
	local -a aargs bargs
	TRACE=$IT_TMP/$run.trace.json
	local -a targs=(-d "$name")
	# run 1 also serves the live side: /metrics with --blame
	[[ $mode == direct ]] && targs+=(--metrics "127.0.0.1:$PORT" --metrics-cgroup-depth 1 --blame)
	TRACER_JSON_PATH=$TRACE start_tracer "${targs[@]}" || fail_all "$run: $TRACER_WHY"
	if [[ $mode == direct ]]; then
		aargs=(--filename="$mnt/a.dat" --direct=1 --ioengine=libaio --iodepth=32 \
			--rw=write --bs=1M --size=256M --time_based)
		bargs=(--filename="$mnt/b.dat" --direct=1 --ioengine=libaio --iodepth=8 \
			--rw=write --bs=1M --size=256M --time_based)
	else
		aargs=(--filename="$mnt/a.dat" --ioengine=psync --rw=write --bs=1M --size=32M \
			--time_based)
		bargs=(--filename="$mnt/b.dat" --ioengine=psync --rw=write --bs=1M --size=16M \
			--time_based)
		bg_start syncer sh -c "while :; do sync -f '$mnt'; sleep 0.25; done"
		SYNCER=$BG_PID
	fi
	fio_in "${CG[V]}" v "$IT_TMP/$run.v.json" --filename="$mnt/v.dat" --direct=1 --readonly \
		--ioengine=psync --rw=randread --bs=4k --size=64M --rate_iops="$VIOPS" \
		--time_based --runtime=$((4 * P)) --randrepeat=0
	fio_in "${CG[A]}" a1 "$IT_TMP/$run.a1.json" "${aargs[@]}" --startdelay="$P" --runtime="$P"
	fio_in "${CG[A]}" a2 "$IT_TMP/$run.a2.json" "${aargs[@]}" --startdelay=$((3 * P)) --runtime="$P"
	fio_in "${CG[B]}" b "$IT_TMP/$run.b.json" "${bargs[@]}" --startdelay=$((3 * P)) --runtime="$P"
	for j in v a1 a2 b; do
		bg_wait "${FPID[$j]}" 90
		((BG_RC == 0)) || fail_all "$run: fio $j exited $BG_RC: $(tail -c 300 "$IT_TMP/fio.$j.out" | tr '\n' ' ')"
	done
	if [[ $mode == buffered ]]; then
		_it_kill "$SYNCER"
		_it_unregister pids "$SYNCER"
	fi
	sleep 1.5 # the last completions through the tracer's hold time
	if [[ $mode == direct ]]; then
		sleep 1.5 # past the live blame's 1 s horizon, and one more /metrics rebuild
		curl -s --max-time 5 -o "$IT_TMP/scrape.txt" "http://127.0.0.1:$PORT/metrics" ||
			note "cannot scrape /metrics"
		share_check "$(date +%s.%N)"
	fi
	stop_tracer TERM || fail_all "$run: tracer: $TRACER_WHY"
	read -r v0 v1 < <(fio_window "$IT_TMP/$run.v.json")
	read -r a10 a11 < <(fio_window "$IT_TMP/$run.a1.json")
	read -r a20 a21 < <(fio_window "$IT_TMP/$run.a2.json")
	read -r b0 b1 < <(fio_window "$IT_TMP/$run.b.json")
	note "$run: fio windows (s after V's start): A $(((a10 - v0) / 1000000))-$(((a11 - v0) / 1000000)) ms and $(((a20 - v0) / 1000000))-$(((a21 - v0) / 1000000)) ms, B $(((b0 - v0) / 1000000))-$(((b1 - v0) / 1000000)) ms, V 0-$(((v1 - v0) / 1000000)) ms"
	local S=1000000000 tag
	local -A rpid=()
	# the five reports read the same file, the tracer is stopped: side by side on the cores
	blame_window "$run" off1 $((v0 + S)) $((a10 - S)) &
	rpid[off1]=$!
	blame_window "$run" on_a $((a10 + S)) $((a11 - S)) &
	rpid[on_a]=$!
	blame_window "$run" off2 $((a11 + S)) $((a20 - S)) &
	rpid[off2]=$!
	blame_window "$run" both $((a20 + S)) $((a21 - S)) &
	rpid[both]=$!
	blame_window "$run" all "$v0" "$v1" &
	rpid[all]=$!
	for tag in "${!rpid[@]}"; do
		wait "${rpid[$tag]}" ||
			fail_all "$run: report $tag failed: $(head -c 300 "$IT_TMP/$run.$tag.txt")"
	done

	local bad="" w
	for w in off1 on_a off2 both all; do
		w=$(jq -r 'select(.type == "blame") |
			select((.wait_ns - .own_ns - .unattributed_ns - .self_ns - .others_ns |
				fabs) > .wait_ns * 0.001 + 2) | "\(.dev) \(.victim)"' \
			"$IT_TMP/$run.$w.json" 2>&1)
		[[ -z $w ]] || bad+="$w "
	done
	grep -q '"type":"blame"' "$IT_TMP/$run.on_a.json" || bad+="no blame line in the A window "
	REPORT_BAD+=${bad:+"$run: $bad"}

	local wait self oth fa fb
	read -r wait self oth fa fb < <(victim_figures "$IT_TMP/$run.on_a.json")
	local on_share both_share
	on_share=$(awk -v a="${fa:-0}" -v s="${self:-0}" -v o="${oth:-0}" 'BEGIN { printf "%.3f", (s + o) ? a / (s + o) : 0 }')
	note "blame $run A-on P-2P: V wait ${wait:-0} ns, blamed self ${self:-0} + others ${oth:-0}, A ${fa:-0}: A's share of the blamed $on_share"
	read -r wait self oth fa fb < <(victim_figures "$IT_TMP/$run.both.json")
	both_share=$(awk -v a="${fa:-0}" -v b="${fb:-0}" -v s="${self:-0}" -v o="${oth:-0}" 'BEGIN { printf "%.3f", (s + o) ? (a + b) / (s + o) : 0 }')
	note "blame $run A+B 3P-4P: V wait ${wait:-0} ns, blamed self ${self:-0} + others ${oth:-0}, A ${fa:-0}, B ${fb:-0}: A+B share $both_share"
	check "${mode}_on" "A-on share $on_share, A+B share $both_share (want >= 0.8 each)" \
		awk -v x="$on_share" -v y="$both_share" 'BEGIN { exit !(x >= 0.8 && y >= 0.8) }'

	local da db split
	da=$(devtime "$IT_TMP/$run.both.json" "${REL[A]}")
	db=$(devtime "$IT_TMP/$run.both.json" "${REL[B]}")
	split=$(awk -v a="${fa:-0}" -v b="${fb:-0}" -v da="$da" -v db="$db" 'BEGIN {
		if (!b || !db || !da) { print "nan"; exit }
		printf "%.3f", (a / b) / (da / db) }')
	note "blame $run 3P-4P: A:B blamed $(awk -v a="${fa:-0}" -v b="${fb:-0}" 'BEGIN { printf "%.2f", b ? a / b : 0 }'), A:B device time $da:$db ns = $(awk -v a="$da" -v b="$db" 'BEGIN { printf "%.2f", b ? a / b : 0 }'): ratio of ratios $split"
	check "${mode}_split" "ratio of the A:B blame to the A:B device time $split (want 0.75 to 1.25)" \
		awk -v x="$split" 'BEGIN { exit !(x != "nan" && x >= 0.75 && x <= 1.25) }'

	local offs="" ok=1 f
	for w in off1 off2; do
		read -r wait self oth fa fb < <(victim_figures "$IT_TMP/$run.$w.json")
		f=$(awk -v o="${oth:-0}" -v w="${wait:-0}" 'BEGIN { printf "%.4f", w ? o / w : 1 }')
		offs+="$w: others ${oth:-0} of wait ${wait:-0} = $f ($(jq -r --arg v "${REL[V]}" \
			'select(.type == "blame" and .victim.cgroup == $v) | [.culprits[] |
			"\(.who.cgroup // .who.cgroup_id) \(.ns)"] | join(", ")' "$IT_TMP/$run.$w.json")); "
		awk -v x="$f" 'BEGIN { exit !(x <= 0.05) }' || ok=0
	done
	note "blame $run A-off windows: $offs"
	check "${mode}_off" "$offs(want <= 0.05 each)" test "$ok" = 1

	if [[ $mode == direct ]]; then
		metrics_check
	fi
	if [[ $mode == buffered ]]; then
		local apids nfl
		apids="${FPID[a1]},${FPID[a2]}"
		nfl=$(jq -s --arg c "${REL[A]}" --arg d "$devno" --arg p "$apids" '
			($p | split(",") | map(tonumber)) as $ps |
			[.[] | select(.type == "request" and .cgroup == $c) | .block[]? |
			 select(.devno == $d and .dirty.pid != null and
				(.pid as $x | $ps | index($x) | not))] | length' "$IT_TMP/$run.on_a.json")
		note "blame $run: block writes charged to A in P-2P that the flusher (not A's fio) submitted: $nfl"
		check buffered_flusher "no block write of A's pages submitted by another task (flusher) in A's window" \
			test "${nfl:-0}" -gt 0
	fi
	note "report --blame screen, $run, the whole run:"
	sed -n '/^blame by/,$p' "$IT_TMP/$run.all.txt" | head -n 24 | sed "s/^/# $IT_NAME:   /"
}

REPORT_BAD=""
PORT=$(free_port) || fail_all "no free TCP port"
read -r dev mnt < <(mk_loop_fs 768) || true
[[ -n ${mnt:-} ]] || fail_all "cannot create the loop device and its ext4"
name=$(devname "$dev")
devno=$(devno_of "$dev")
dd if=/dev/urandom of="$mnt/v.dat" bs=1M count=64 oflag=direct status=none ||
	fail_all "cannot write V's file"
for f in a b; do
	fallocate -l 256M "$mnt/$f.dat" || fail_all "fallocate $f.dat"
done
sync -f "$mnt"
note "device $dev ($devno), ext4 at $mnt"
wait_quiet "$dev" 5
prom_start || note "no Prometheus: $PROM_WHY"
run_blame direct direct
# run 1's metadata (its unwritten extents made written) to the disk now, not in run 2
sync -f "$mnt"
# the syncer's syncfs would also send a cache flush each time (ext4 barriers): on a loop
# device an fsync of the backing file, a request of the syncer's on V's device all 40 s
mount -o remount,nobarrier "$mnt" || note "cannot remount $mnt nobarrier: the syncer's flushes stay"
wait_quiet "$dev" 10
run_blame buffered buffered
check report_json "${REPORT_BAD:-}" test -z "$REPORT_BAD"
it_end
