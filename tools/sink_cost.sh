#!/usr/bin/env bash
# The daemon's cost per IO with --sink against -j FILE, over a fixed number of fio IOs
# (docs/bench.md, "The sink"): a check to steer by on a busy machine, where the bench's
# ns/IO of a timed run are not comparable. Each run starts the daemon on a RAM-backed loop
# device, waits until it has attached, runs fio for N IOs, waits until the daemon has
# written (-j) and sent (--sink) every request, and counts from before fio to then (the
# daemon's start and exit are not counted): the CPU time of all its threads
# (/proc/PID/task/*/schedstat, ns), or with -c its instructions in user space under
# callgrind (exact whatever else runs; the kernel's part, write() or send(), not counted).
# Modes run alternately, RUNS times each; one line per run, then min-max and the median.
#
#   sudo tools/sink_cost.sh [-c] [-n IOS] [-r RUNS] [-w max-psync|ref-rand] [-p PERFDIR] \
#        URL MODE...
#   URL   a clickhouse:// URL (tools/clickhouse_local.sh start DIR prints one)
#   MODE  json (-j FILE), sink (--sink URL), or NAME=ARGS: the daemon with ARGS (words;
#         @URL is the URL, @JSON a -j file, @SPILL a spill directory), e.g.
#         'gz=--sink @URL --sink-spill @SPILL --sink-compress gzip'
#   -c    instructions under valgrind --tool=callgrind (fio's rates a quarter of the
#         workload's, max-psync 3000 IOPS: the daemon runs ~50 times slower)
#   -p    also perf record -g the daemon's runs into PERFDIR/MODE.RUN.data
#   IOTRACER_BIN  the iotracer to run (default: ./iotracer next to tools/)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${IOTRACER_BIN:-$here/iotracer}
ios=200000 runs=5 wl=max-psync perfdir="" callgrind=0
while getopts cn:r:w:p: o; do
	case $o in
	c) callgrind=1 ;;
	n) ios=$OPTARG ;;
	r) runs=$OPTARG ;;
	w) wl=$OPTARG ;;
	p) perfdir=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if (($# < 2)); then
	sed -n '12,22p' "$0" >&2
	exit 2
fi
url=$1
shift
hp=${url#clickhouse://}
hp=${hp#*@}
http=http://${hp%%/*}
table=${hp#*/}
# under callgrind the daemon runs ~50 times slower: fio's rates a quarter of the workload's
div=$((callgrind ? 4 : 1))
case $wl in
max-psync)
	fio_args=(--name=randread --rw=randread "--number_ios=$ios")
	((callgrind)) && fio_args+=(--rate_iops=3000)
	;;
ref-rand) # ref-rand's two jobs (src/bench/workload.c), the same mix of IOs
	w=$((ios / 49))
	fio_args=(--name=randread --rw=randread "--rate_iops=$((12000 / div))"
		"--number_ios=$((ios - w))" --name=randwrite --rw=randwrite
		"--rate_iops=$((250 / div))" "--number_ios=$w")
	;;
*)
	echo "$0: bad value '$wl' for -w (expected max-psync, ref-rand)" >&2
	exit 2
	;;
esac

tmp=$(mktemp -d /dev/shm/sink_cost.XXXXXX)
dev="" pid=""
cleanup() {
	[[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	[[ -n $dev ]] && losetup -d "$dev"
	[[ -n ${KEEP:-} ]] || rm -rf "$tmp"
}
trap cleanup EXIT
truncate -s 1G "$tmp/loop.img"
dd if=/dev/zero of="$tmp/loop.img" bs=1M count=1024 conv=notrunc status=none
dev=$(losetup -f --show "$tmp/loop.img")

# The CPU ns of every thread of $1 so far.
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d", s }'; }
# The CPU ns of $1's main thread so far (the one that drains the records and makes the rows).
main_ns() { awk '{ printf "%d", $1 }' /proc/"$1"/task/"$1"/schedstat; }
# The BPF links $1 holds.
links() { find /proc/"$1"/fd -lname 'anon_inode:bpf_link' 2>/dev/null | wc -l; }

# Wait until $pid holds BPF links whose number has not changed for 1 s.
wait_attached() {
	local last=-1 n stable=0 i
	for ((i = 0; i < 300; i++)); do
		sleep 0.2
		kill -0 "$pid" 2>/dev/null || return 1
		n=$(links "$pid")
		if ((n > 0 && n == last)); then
			((++stable >= 5)) && return 0
		else
			stable=0
		fi
		last=$n
	done
	return 1
}

# The rows the daemon has written (-j: its lines) or sent (--sink: the table's), so far.
rows_out() {
	local spec=$1
	if [[ $spec == *--sink* ]]; then
		# the server's count, not the daemon's /metrics: a scrape costs the daemon
		curl -sf "$http/" --data-binary "SELECT count() FROM $table" || echo 0
	elif [[ $spec == *@JSON* ]]; then
		grep -c '"kind"' "$tmp/trace.json" || true
	else
		cpu_ns "$pid"
	fi
}

# Wait until the daemon wrote (-j) or sent (--sink) a row per IO (n: fio's), or its count
# (without either: its CPU time) has not moved for 3 s (records lost to a full ring buffer).
wait_done() {
	local spec=$1 n=$2 i c last=-1000000000 still=0 tol=1
	[[ $spec == *--sink* || $spec == *@JSON* ]] || tol=1000000 # CPU ns: 1 ms in 0.3 s
	for ((i = 0; i < 400; i++)); do
		sleep 0.3
		c=$(rows_out "$spec")
		((tol == 1 && c >= n)) && break
		if ((c - last < tol)); then
			((++still >= 10)) && break
		else
			still=0
		fi
		last=$c
	done
	ROWS=$c
}

# ", N rows short": the run's rows fewer than fio's IOs (records the daemon lost).
lost() {
	if [[ $1 == *--sink* || $1 == *@JSON* ]] && ((ROWS < $2)); then
		printf ', %d rows short' "$(($2 - ROWS))"
	fi
}

declare -A res
ROWS=0
one() {
	local name=$1 r=$2 spec=$3 args=() a c0 c1 m0 m1 n v rss cg=() perf=""
	for a in $spec; do
		a=${a//@URL/$url}
		a=${a//@JSON/$tmp/trace.json}
		args+=("${a//@SPILL/$tmp/spill}")
	done
	if ((callgrind)); then
		cg=(valgrind -q --tool=callgrind --instr-atstart=no "--callgrind-out-file=$tmp/cg.out")
	fi
	"${cg[@]}" "$bin" -q --no-live -d "$dev" "${args[@]}" \
		>"$tmp/out" 2>"$tmp/err" &
	pid=$!
	wait_attached || {
		echo "$name: the daemon did not attach: $(head -c 300 "$tmp/err")" >&2
		exit 1
	}
	if [[ -n $perfdir ]]; then
		perf record -q -F 8000 -p "$pid" -o "$perfdir/$name.$r.data" 2>/dev/null &
		perf=$!
		sleep 0.5
	fi
	((callgrind)) && callgrind_control -i on "$pid" >/dev/null
	c0=$(cpu_ns "$pid")
	m0=$(main_ns "$pid")
	fio --output-format=json --output="$tmp/fio.json" --filename="$dev" --ioengine=psync \
		--bs=4k --direct=1 --group_reporting=0 "${fio_args[@]}" >/dev/null
	n=$(jq '[.jobs[] | .read.total_ios + .write.total_ios] | add' "$tmp/fio.json")
	wait_done "$spec" "$n"
	c1=$(cpu_ns "$pid")
	m1=$(main_ns "$pid")
	rss=$(awk '/^RssAnon:/ { print $2 }' "/proc/$pid/status")
	((callgrind)) && callgrind_control -i off "$pid" >/dev/null
	if [[ -n $perf ]]; then
		kill -INT "$perf"
		wait "$perf" 2>/dev/null || true
	fi
	kill -INT "$pid"
	wait "$pid" 2>/dev/null || echo "$name: the daemon exited with status $?: $(tail -c 300 "$tmp/err")" >&2
	pid=""
	rm -f "$tmp/trace.json"
	# an empty table for the next run: the server's merges of the last one's parts out of it
	if [[ $spec == *--sink* ]]; then
		curl -sf "$http/" --data-binary "TRUNCATE TABLE $table" >/dev/null
	fi
	if ((callgrind)); then
		v=$(cat "$tmp"/cg.out* | awk '/^totals:/ { s += $2 } END { printf "%d", s }')
		res[$name]+="$((v / n)) "
		printf '%-10s run %d: %d IOs, daemon %d instructions/IO%s\n' "$name" "$r" "$n" \
			"$((v / n))" "$(lost "$spec" "$n")"
		return
	fi
	res[$name]+="$(((c1 - c0) / n)) "
	printf '%-10s run %d: %d IOs, daemon %d ns/IO (main thread %d, others %d), RssAnon %d KiB%s\n' \
		"$name" "$r" "$n" "$(((c1 - c0) / n))" "$(((m1 - m0) / n))" \
		"$(((c1 - c0 - m1 + m0) / n))" "$rss" "$(lost "$spec" "$n")"
}

modes=()
declare -A specs
for m in "$@"; do
	case $m in
	json) specs[json]="-j @JSON" ;;
	sink) specs[sink]="--sink @URL --sink-spill @SPILL" ;;
	*=*) specs[${m%%=*}]=${m#*=} ;;
	*)
		echo "$0: bad mode '$m' (expected json, sink, NAME=ARGS)" >&2
		exit 2
		;;
	esac
	modes+=("${m%%=*}")
done
for ((r = 1; r <= runs; r++)); do
	for m in "${modes[@]}"; do
		one "$m" "$r" "${specs[$m]}"
	done
done
unit="CPU ns/IO (all threads)"
((callgrind)) && unit="instructions/IO (user space, all threads; fio's rates /$div)"
echo "== $wl, $ios IOs a run, daemon $unit: min-max, median"
for m in "${modes[@]}"; do
	# shellcheck disable=SC2086
	printf '%s\n' ${res[$m]} | sort -n | awk -v m="$m" '{ v[NR] = $1 } END {
		printf "%-10s %d-%d, median %d (%d runs)\n", m, v[1], v[NR], v[int((NR + 1) / 2)], NR }'
done
