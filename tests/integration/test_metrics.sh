#!/usr/bin/env bash
# --metrics scraped by a real Prometheus while fio does psync direct 4k random reads
# on a loop device. Two tracers watch the same device: "rec" (default: every request
# leaves a record, the daemon builds the histograms from them) and "kern" (-m 10s: no
# records, the BPF side keeps the histograms; and --metrics-cgroup-depth 1, so that the
# dashboard's cgroup panels have series; the "rec" tracer has --metrics-cgroup-depth 1
# --blame, and a paced writer in a cgroup of its own writes beside fio, so that the "who
# slows whom" panel has series), so /metrics is checked in both modes; a
# third, "static", is the static build (the same HTTP server, no libcurl).
# Oracles: fio's JSON (total_ios, clat p99), promtool, Prometheus's HTTP API.
#   promtool    the exposition of the three tracers passes `promtool check metrics`
#   scrape      Prometheus scraped the 3 targets (up == 1) twice after fio ended
#   count_rec   iotracer_requests_total{layer="syscall",device=loopN,op="read"} == fio total_ios
#   count_kern  the same for the kernel-histogram tracer
#   p99_rec     histogram_quantile(0.99, ...) of the syscall read histogram lies in the log2
#               bucket [2^k, 2^(k+1)) ns holding fio's clat p99 (computed from fio's number;
#               the neighbour bucket too when fio's p99 is within 5 % of an edge)
#   p99_kern    the same for the kernel-histogram tracer
#   hook_alert  a fourth tracer, of every layer: the documented alert's series,
#               iotracer_hook_state{state="failed"} at 1, are none on this machine while
#               every hook has exactly one state series at 1 (as many as
#               iotracer_hook_attached series), each the state of its JSON attach line
#   grafana     every query of configs/grafana-iotracer.json is accepted by Prometheus and
#               returns data when the series it selects exist in the scrape (each selector
#               queried alone: a panel with data under it must show some); every label
#               it groups by or names in a legend is one /metrics has
#   blame_panel the "who slows whom" panel's query (rec tracer: --blame) returns a series
#               whose culprit is the writer's cgroup on loopN
#   rules       configs/iotracer-rules.yml loaded by this Prometheus: every rule evaluates
#               without error, the recorded p99 and request rate exist for loopN, and every
#               metric and label the rules name is in the tracers' /metrics text
#   port_in_use --metrics on the rec tracer's port: exit 1, one line naming --metrics
#   bad_addr    --metrics 9477 (no host part): exit 2, one line naming --metrics
#   count_static, p99_static  the same for the static build (make static: the same small
#               HTTP server, no --sink), a third tracer "static" like "rec"
#   exit        the three tracers exit 0 on SIGTERM
# shellcheck disable=SC2016,SC2119,SC2317 # PromQL/jq in single quotes; optional args; in_bucket via check
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin promtool port_in_use bad_addr scrape count_rec count_kern count_static p99_rec p99_kern \
	p99_static hook_alert grafana blame_panel rules exit
it_require_all curl prometheus promtool ss

NR_IOS=${METRICS_IOS:-8192} # 4k reads: one pass over a 32 MiB region

# prom_query EXPR: the first value of an instant query ("" if none).
prom_query() {
	curl -s --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/query" \
		--data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // empty'
}

# in_bucket Q_SECONDS LO_NS HI_NS: LO - 1 <= Q * 1e9 <= HI (a bucket's le is its last
# integer ns, so histogram_quantile() answers in (2^k - 1, 2^(k+1) - 1] ns).
in_bucket() {
	awk -v q="$1" -v lo="$2" -v hi="$3" 'BEGIN { v = q * 1e9; exit !(v >= lo - 1 && v <= hi) }'
}

dev=$(mk_loop 64 fill) || fail_all "cannot create a loop device"
name=$(devname "$dev")
note "device $dev"
wait_quiet "$dev" 5

PORT_REC=$(free_port) || fail_all "no free TCP port"
start_tracer -d "$name" -l syscall,block --metrics "127.0.0.1:$PORT_REC" \
	--metrics-cgroup-depth 1 --blame ||
	fail_all "rec tracer: $TRACER_WHY"
PID_REC=$TRACER_PID
PORT_KERN=$(free_port) || fail_all "no free TCP port"
start_tracer -d "$name" -l syscall,block -m 10s --metrics "127.0.0.1:$PORT_KERN" \
	--metrics-cgroup-depth 1 ||
	fail_all "kern tracer: $TRACER_WHY"
PID_KERN=$TRACER_PID
make -s -C "$IT_ROOT" build/iotracer.static >"$IT_TMP/static.log" 2>&1 ||
	fail_all "make build/iotracer.static: $(tail -c 300 "$IT_TMP/static.log")"
PORT_STATIC=$(free_port) || fail_all "no free TCP port"
IOTRACER=$IT_ROOT/build/iotracer.static start_tracer -d "$name" -l syscall,block \
	--metrics "127.0.0.1:$PORT_STATIC" || fail_all "static tracer: $TRACER_WHY"
PID_STATIC=$TRACER_PID
note "tracers: rec pid $PID_REC port $PORT_REC, kern pid $PID_KERN port $PORT_KERN, static pid $PID_STATIC port $PORT_STATIC"

# promtool on what each tracer serves
bad=""
for port in "$PORT_REC" "$PORT_KERN" "$PORT_STATIC"; do
	curl -s --max-time 5 -o "$IT_TMP/scrape.$port.txt" "http://127.0.0.1:$port/metrics" ||
		bad+="curl :$port failed; "
	out=$(promtool check metrics <"$IT_TMP/scrape.$port.txt" 2>&1) ||
		bad+=":$port: $(head -c 300 <<<"$out") "
done
check promtool "$bad" test -z "$bad"

# err_case NAME WANT_RC ARGS...: iotracer ARGS exits WANT_RC with one stderr line naming --metrics
err_case() {
	local name=$1 want=$2 rc err
	shift 2
	timeout 20 "$IOTRACER" -q -D 1s "$@" >/dev/null 2>"$IT_TMP/$name.err"
	rc=$?
	err=$(cat "$IT_TMP/$name.err")
	note "$name: iotracer $*: exit $rc, stderr: $err"
	check "$name" "exit $rc (want $want), stderr: $err" \
		test "$rc" = "$want" -a "$(wc -l <"$IT_TMP/$name.err")" = 1 -a "${err#iotracer: --metrics}" != "$err"
}
err_case port_in_use 1 --metrics "127.0.0.1:$PORT_REC"
err_case bad_addr 2 --metrics 9477

prom_count() {
	curl -s --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
		jq -r 'if .status == "success" then (.data.result | length | tostring) else "err: " + (.error // "no answer") end'
}

# Prometheus: its own instance, loopback only, temporary storage
PROM_PORT=$(free_port) || fail_all "no free TCP port"
cat >"$IT_TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: ['$IT_ROOT/configs/iotracer-rules.yml']
scrape_configs:
  - job_name: rec
    static_configs: [{ targets: ['127.0.0.1:$PORT_REC'] }]
  - job_name: kern
    static_configs: [{ targets: ['127.0.0.1:$PORT_KERN'] }]
  - job_name: static
    static_configs: [{ targets: ['127.0.0.1:$PORT_STATIC'] }]
EOF
bg_start prometheus prometheus --config.file="$IT_TMP/prometheus.yml" \
	--storage.tsdb.path="$IT_TMP/tsdb" --web.listen-address="127.0.0.1:$PROM_PORT"
PROM_PID=$BG_PID
for ((i = 0; i < 150; i++)); do
	curl -sf --max-time 1 "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null && break
	proc_alive "$PROM_PID" || fail_all "prometheus exited: $(tail -c 300 "$IT_TMP/prometheus.out")"
	sleep 0.2
done
((i < 150)) || fail_all "prometheus not ready within 30 s"
note "prometheus pid $PROM_PID on 127.0.0.1:$PROM_PORT"
# Ready is not scraping: its discovery hands the targets over up to 5 s later. The panel's
# rate() needs scrapes while blame grows, so fio starts once each target was scraped.
for ((i = 0; i < 100; i++)); do
	[[ $(prom_count 'up == 1') == 3 ]] && break
	sleep 0.2
done
((i < 100)) || fail_all "prometheus scraped not the 3 targets within 20 s"

# a paced writer in a cgroup of its own, on the last 16 MiB while fio reads: the culprit
# of the rec tracer's --blame series (the dashboard's "who slows whom" panel)
mk_cgroup || fail_all "cannot create the writer's cgroup"
bg_start writer sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CGROUP_DIR" \
	fio --name=writer --filename="$dev" --ioengine=psync --direct=1 --rw=write --bs=64k \
	--offset=48M --size=16M --rate=20m --time_based --runtime=120
WRITER_PID=$BG_PID
# 4 s at least: the panel's rate() needs two scrapes of texts rebuilt while blame grew
# (one pass over the region took ~1 s, one text: the series stood still, no rate)
fio_run "$IT_TMP/fio.json" --name=metrics --filename="$dev" --ioengine=psync --direct=1 \
	--rw=randread --bs=4k --size=$((NR_IOS * 4))k --randrepeat=0 --time_based --runtime=4
_it_kill "$WRITER_PID"
_it_unregister pids "$WRITER_PID"
((FIO_RC == 0)) || fail_all "fio failed (status $FIO_RC): $(tail -c 300 "$FIO_LOG" | tr '\n' ' ')"
t_end=$(date +%s.%N)
ios=$(fio_read_ios "$IT_TMP/fio.json")
p99=$(fio_read_pct "$IT_TMP/fio.json" 99.000000)
note "fio: total_ios $ios clat p99 $p99 ns"

# Two scrapes that saw a text built after fio ended: the text is rebuilt every 1 s,
# so wait for a scrape later than end + 1.1 s, then one more (2 s in all, + margin).
for ((i = 0; i < 100; i++)); do
	ts_rec=$(prom_query 'timestamp(up{job="rec"} == 1)')
	ts_kern=$(prom_query 'timestamp(up{job="kern"} == 1)')
	ts_static=$(prom_query 'timestamp(up{job="static"} == 1)')
	awk -v a="${ts_rec:-0}" -v b="${ts_kern:-0}" -v c="${ts_static:-0}" -v t="$t_end" \
		'BEGIN { exit !(a > t + 2.2 && b > t + 2.2 && c > t + 2.2) }' && break
	sleep 0.2
done
check scrape "no scrape of the 3 targets 2.2 s after fio ended (last: rec ${ts_rec:-none}, kern ${ts_kern:-none}, static ${ts_static:-none}, fio end $t_end)" \
	test "$i" -lt 100

# the log2 bucket of fio's p99, from fio's number alone
read -r k lo hi < <(awk -v p="$p99" 'BEGIN { k = int(log(p) / log(2)); lo = 2 ^ k;
	if (lo > p) { k--; lo /= 2 } else if (2 * lo <= p) { k++; lo *= 2 }
	printf "%d %.0f %.0f\n", k, lo, 2 * lo }')
alo=$lo ahi=$hi
awk -v p="$p99" -v lo="$lo" 'BEGIN { exit !(p < lo * 1.05) }' && alo=$((lo / 2))
awk -v p="$p99" -v hi="$hi" 'BEGIN { exit !(p * 1.05 > hi) }' && ahi=$((hi * 2))
note "fio p99 $p99 ns is in log2 bucket $k: [$lo, $hi) ns; accepted [$alo, $ahi] ns"

for job in rec kern static; do
	sel="job=\"$job\",layer=\"syscall\",device=\"$name\",op=\"read\""
	n=$(prom_query "iotracer_requests_total{$sel}")
	check "count_$job" "iotracer_requests_total{$sel} is ${n:-absent}, fio did $ios reads" \
		test "${n:-x}" = "$ios"
	q=$(prom_query "histogram_quantile(0.99, sum by (le) (iotracer_request_duration_seconds_bucket{$sel,stage=\"total\"}))")
	note "$job: requests $n, histogram_quantile(0.99) ${q:-none} s"
	check "p99_$job" "histogram_quantile(0.99) = ${q:-none} s, fio p99 $p99 ns: outside [$alo, $ahi] ns" \
		in_bucket "${q:-nan}" "$alo" "$ahi"
done

# hook states, on a tracer of every layer (the rec one hides the layers it was not asked
# for): the alert on failed, one state per hook, the same as the attach lines
hook_states() {
	local port f i fired nstate nhooks old mism
	port=$(free_port) || return 1
	start_tracer -d "$name" --metrics "127.0.0.1:$port" || {
		HOOK_WHY="all-layers tracer: $TRACER_WHY"
		return 1
	}
	f=$IT_TMP/scrape.all.txt
	for ((i = 0; i < 20; i++)); do
		curl -s --max-time 5 -o "$f" "http://127.0.0.1:$port/metrics" &&
			grep -q '^iotracer_hook_attached{' "$f" && break
		sleep 0.25
	done
	stop_tracer || note "all-layers tracer: $TRACER_WHY"
	fired=$(grep -c '^iotracer_hook_state{.*state="failed"} 1$' "$f")
	nstate=$(grep -c '^iotracer_hook_state{.*} 1$' "$f")
	nhooks=$(grep -c '^iotracer_hook_attached{' "$f")
	old=$(grep -c '^iotracer_hook_attached{.*} 0$' "$f")
	mism=$(comm -3 <(jq -r 'select(.type == "attach") | "\(.layer) \(.hook) \(.state)"' \
		"$TRACER_JSON" | sort) \
		<(awk -F'"' '/^iotracer_hook_state\{/ && $NF ~ / 1$/ { print $2, $4, $8 }' "$f" | sort) |
		tr '\n' ';')
	note "hooks: $nhooks, with a state at 1: $nstate, failed: $fired; the old alert (attached == 0) lists $old: $(grep '^iotracer_hook_state{.*} 1$' "$f" | grep -v 'state="attached"' | sed -E 's/.*hook="([^"]*)".*state="([^"]*)".*/\1=\2/' | tr '\n' ' ')"
	HOOK_WHY="failed $fired (want 0), $nstate states at 1 for $nhooks hooks, attach lines vs /metrics: ${mism:-same}"
	((fired == 0 && nhooks > 0 && nstate == nhooks)) && [[ -z $mism ]]
}
HOOK_WHY=""
if hook_states; then pass hook_alert; else fail hook_alert "$HOOK_WHY"; fi

# prom_count EXPR: how many series an instant query returns ("err: ..." if it fails).

# the dashboard's queries, with its variables set to match anything. A query that returns
# nothing is a failure when one of its selectors (metric{...}) alone returns series; a
# label it groups by (or a legend names) must be one the tracers serve (or job, instance).
scraped=$(curl -s --max-time 5 "http://127.0.0.1:$PORT_REC/metrics" "http://127.0.0.1:$PORT_KERN/metrics")
bad=""
while read -r l; do
	grep -qE "[{,]$l=\"" <<<"$scraped" || bad+="the dashboard groups by or shows label '$l', not in /metrics; "
done < <(jq -r '.panels[].targets[] | (.expr | scan("by \\(([^)]*)\\)") | .[0] | split(",") | .[]),
		((.legendFormat // "") | scan("\\{\\{ *([a-z_]+) *\\}\\}") | .[0])' \
	"$IT_ROOT/configs/grafana-iotracer.json" | tr -d ' ' | grep -vxE 'le|instance|job' | sort -u)
nq=0
nodata=""
while IFS= read -r expr; do
	expr=${expr//\$__rate_interval/1m}
	expr=$(sed -E 's/\$[a-z]+/.*/g' <<<"$expr")
	n=$(prom_count "$expr")
	nq=$((nq + 1))
	case $n in
	err:*) bad+="'$expr': $n; " ;;
	0)
		# a filter (hooks == 0, losses > 0) may rightly select nothing
		if grep -qE '(==|!=|>|<)' <<<"$expr"; then
			nodata+=" (filter) $(grep -oE '(iotracer|process)_[a-z_]+' <<<"$expr" | head -1)"
			continue
		fi
		while IFS= read -r sel; do
			ns=$(prom_count "$sel")
			[[ $ns == 0 ]] || bad+="'$expr': no data, but $sel has $ns series; "
		done < <(grep -oE '(iotracer|process)_[a-z_]+(\{[^}]*\})?' <<<"$expr" | sort -u)
		nodata+=" $(grep -oE '(iotracer|process)_[a-z_]+' <<<"$expr" | head -1)"
		;;
	*) ;;
	esac
done < <(jq -r '.panels[].targets[].expr' "$IT_ROOT/configs/grafana-iotracer.json")
note "grafana: $nq queries, no data (none of their series scraped here, or a filter):${nodata:- none}"
check grafana "${bad:-no queries in the dashboard}" test -z "$bad" -a "$nq" -gt 0

# the "who slows whom" panel answers: fio's reads slowed by the writer's cgroup
wcg=${CGROUP_DIR#"$(findmnt -n -t cgroup2 -o TARGET | head -n 1)"}
expr=$(jq -r '.panels[] | select(.title | startswith("Who slows whom")) | .targets[0].expr' \
	"$IT_ROOT/configs/grafana-iotracer.json")
expr=${expr//\$__rate_interval/1m}
expr=$(sed -E 's/\$[a-z]+/.*/g' <<<"$expr")
got=$(curl -s --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$expr" |
	jq -r --arg w "$wcg" '[.data.result[]? | select(.metric.culprit == $w and .metric.device == "'"$name"'")] | length')
note "blame panel: $(prom_count "$expr") series, $got with culprit $wcg on $name"
check blame_panel "the panel's query has no series with culprit $wcg (the writer's cgroup) on $name" \
	test "${got:-0}" -gt 0

# the rules in this Prometheus, and their names in the tracers' text. A recorded rate needs
# two samples of its input and then an evaluation: the scrapes at ts_* (>= 2.2 s after fio
# ended) each follow one that already held every fio request, so wait for the recording
# group's first evaluation more than a second after the last of them.
ts_max=$(printf '%s\n' "$ts_rec" "$ts_kern" "$ts_static" | sort -g | tail -1)
for ((i = 0; i < 50; i++)); do
	ev=$(curl -s --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/rules" | jq -r \
		'.data.groups[] | select(.name == "iotracer-recording") | .lastEvaluation | sub("\\.[0-9]*Z$"; "Z") | fromdate')
	awk -v e="${ev:-0}" -v t="$ts_max" 'BEGIN { exit !(e > t + 1) }' && break
	sleep 0.2
done
note "recording rules last evaluated at ${ev:-never}, last scrape $ts_max"
bad=$(curl -s --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/rules" |
	jq -r '[.data.groups[].rules[]] | if length == 0 then "no rules loaded" else
		(.[] | select(.health != "ok") | "\(.name): \(.health) \(.lastError // "")") end' | tr '\n' ' ')
[[ -z ${bad// /} ]] && bad=""
for q in "device:iotracer_request_duration_seconds:p99_5m{device=\"$name\",layer=\"syscall\",op=\"read\",stage=\"total\"}" \
	"device:iotracer_requests:rate5m{device=\"$name\",layer=\"syscall\",op=\"read\"}"; do
	n=$(prom_count "$q")
	[[ $n == 3 ]] || bad+="$q: $n series (want 3: rec, kern, static): $(curl -s --max-time 5 \
		"http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$q" |
		jq -c '[.data.result[] | .metric.job + "=" + .value[1]]'); "
done
while read -r m; do
	grep -qE "^# TYPE $m " <<<"$scraped" || bad+="rules name $m, not in /metrics; "
done < <(grep -oE '(^|[^:a-z_])iotracer_[a-z_]+' "$IT_ROOT/configs/iotracer-rules.yml" |
	grep -oE 'iotracer_[a-z_]+' | sed -E 's/_(bucket|sum|count)$//' | sort -u)
while read -r l; do
	grep -qE "[{,]$l=\"" <<<"$scraped" || bad+="rules use label $l, not in /metrics; "
done < <(grep -oE '\b(device|op|layer|stage|reason|state|hook)\b' "$IT_ROOT/configs/iotracer-rules.yml" |
	sort -u)
note "rules: $(curl -s --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/rules" | jq -r '[.data.groups[].rules[]] | length') loaded"
check rules "$bad" test -z "$bad"

why=""
TRACER_PID=$PID_REC
stop_tracer || why+="rec: $TRACER_WHY "
TRACER_PID=$PID_KERN
stop_tracer || why+="kern: $TRACER_WHY "
TRACER_PID=$PID_STATIC
stop_tracer || why+="static: $TRACER_WHY"
check exit "$why" test -z "$why"

it_end
