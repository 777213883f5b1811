#!/usr/bin/env bash
# Stage arithmetic of every request record, over a mixed workload on ext4 on a loop
# device (buffered writes + fsync, cold buffered reads, psync/io_uring/libaio direct
# reads), traced with -d loopN. The oracle is the definition of the stages: they are
# parts of the request, so none can be negative or longer than the whole.
#   coverage     the run produced records of every shape checked below (not vacuous)
#   nonneg       every *_ns value is >= 0; every duration is < 1000 s (no u64 wrap)
#   within_lat   fs.pre_block_ns, fs.post_block_ns, sched.offcpu_ns, sched.runq_ns <= lat_ns;
#                offcpu_blocked_ns <= offcpu_ns; pre_block + post_block <= lat_ns
#   block_parts  every block request: q2g, g2i, i2d (or g2d), d2c each <= q2c, their sum <= q2c
#   sync_blocks  syscalls that wait for their IO (direct IO, fsync): every block child is
#                queued at/after ts_ns, completes by ts_ns + lat_ns, q2c <= lat_ns, and
#                pre_block + (last completion - first queue) + post_block <= lat_ns
#   async_lat    io_uring/aio: submit <= complete/reap and lat_ns <= that interval
# STAGES_JSON=FILE evaluates FILE (a trace from an earlier run, e.g. with IT_KEEP=1)
# instead of running the workload: a way to see each check fail on a doctored trace.
# shellcheck disable=SC2016,SC2119 # jq programs in single quotes; optional args
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin start exit coverage nonneg within_lat block_parts sync_blocks async_lat
it_require_all dd mkfs.ext4

run_workload() {
	read -r dev mnt < <(mk_loop_fs 256) || true
	if [[ -z ${mnt:-} ]] || ! mountpoint -q "$mnt"; then
		fail_all "cannot create/mount ext4 on a loop device"
	fi
	name=$(devname "$dev")
	note "device $dev on $mnt"
	wait_quiet "$dev" 5

	# --sched-switch: off-CPU time from the switch hooks as well as the counters
	start_tracer -d "$name" --sched-switch || fail_all "$TRACER_WHY"
	pass start

	f=$mnt/data
	dd if=/dev/urandom of="$f" bs=1M count=32 conv=fsync status=none || note "dd write failed"
	drop_caches
	dd if="$f" of=/dev/null bs=128k status=none || note "dd read failed"
	fio_run "$IT_TMP/fio.psync.json" --name=psync --filename="$f" --size=32M --ioengine=psync \
		--direct=1 --rw=randread --bs=4k --runtime=2 --time_based --rate_iops=2000 ||
		note "fio psync failed"
	have_uring=0
	if fio --enghelp=io_uring >/dev/null 2>&1 && have_tp io_uring/io_uring_complete; then
		fio_run "$IT_TMP/fio.uring.json" --name=uring --filename="$f" --size=32M --ioengine=io_uring \
			--iodepth=8 --direct=1 --rw=randread --bs=4k --runtime=2 --time_based --rate_iops=2000 &&
			have_uring=1
	fi
	have_aio=0
	if fio --enghelp=libaio >/dev/null 2>&1; then
		fio_run "$IT_TMP/fio.aio.json" --name=aio --filename="$f" --size=32M --ioengine=libaio \
			--iodepth=8 --direct=1 --rw=randread --bs=4k --runtime=2 --time_based --rate_iops=2000 &&
			have_aio=1
	fi
	sleep 0.3
	if stop_tracer && tracer_summary; then
		pass exit
	else
		fail exit "${TRACER_WHY:-no final summary in the JSON output}"
	fi
}

if [[ -n ${STAGES_JSON:-} ]]; then
	# evaluate an existing trace (to try the checks on a doctored file)
	TRACER_JSON=$STAGES_JSON
	skip start "STAGES_JSON given: no tracer run"
	skip exit "STAGES_JSON given: no tracer run"
	have_uring=1 have_aio=1
else
	run_workload
fi

# One pass over the records: per category, how many were checked and the first few
# offending request ids.
res=$(jq -n -c '
def durkeys: ["lat_ns", "pre_block_ns", "post_block_ns", "offcpu_ns", "offcpu_blocked_ns", "runq_ns",
	"q2g_ns", "g2i_ns", "i2d_ns", "g2d_ns", "d2c_ns", "q2c_ns"];
def cend: (.c_ns // (if .q_ns and .q2c_ns then .q_ns + .q2c_ns else null end));
def add_cat($name; $checked; bad; $id): # bad: evaluated only when $checked
	.[$name].n += (if $checked then 1 else 0 end)
	| if $checked and bad then .[$name].bad += 1 | .[$name].ids += [$id] else . end;
reduce (inputs | select(.type == "request")) as $r ({};
	($r.lat_ns) as $lat
	| ([$r | paths(type == "number") as $p | {k: ($p[-1] | tostring), v: getpath($p)}
		| select(.k | endswith("_ns"))]) as $nums
	| add_cat("nonneg"; true;
		any($nums[]; .v < 0 or ((.k as $k | durkeys | index($k)) != null and .v >= 1e12)); $r.id)
	| add_cat("within_lat"; ($r.fs != null or $r.sched != null);
		(($r.fs.pre_block_ns // 0) > $lat) or (($r.fs.post_block_ns // 0) > $lat)
		or (($r.sched.offcpu_ns // 0) > $lat) or (($r.sched.runq_ns // 0) > $lat)
		or (($r.sched.offcpu_blocked_ns // 0) > ($r.sched.offcpu_ns // 0))
		or ((($r.fs.pre_block_ns // 0) + ($r.fs.post_block_ns // 0)) > $lat); $r.id)
	| reduce ($r.block // [])[] as $b (.;
		add_cat("block_parts"; $b.q2c_ns != null;
			([$b.q2g_ns, $b.g2i_ns, $b.i2d_ns, $b.g2d_ns, $b.d2c_ns] | map(select(. != null))) as $parts
			| any($parts[]; . > $b.q2c_ns) or (($parts | add // 0) > $b.q2c_ns); $r.id))
	| (($r.kind == "syscall") and (($r.fs.dio // false) or $r.op == "sync")
		and (($r.block // []) | length) > 0) as $sync
	| add_cat("sync_blocks"; $sync;
		[$r.block[] | cend] as $cs | [$r.block[] | .q_ns] as $qs
		| any($cs[], $qs[], $r.ts_ns, $lat; . == null)
		or any($r.block[]; .q_ns < $r.ts_ns or cend > $r.ts_ns + $lat or (.q2c_ns // 0) > $lat)
		or (($r.fs.pre_block_ns // 0) + ($cs | max) - ($qs | min) + ($r.fs.post_block_ns // 0) > $lat);
		$r.id)
	| (if $r.kind == "io_uring" then [$r.uring.submit_ns, $r.uring.complete_ns]
	   elif $r.kind == "aio" then [$r.aio.submit_ns, $r.aio.reap_ns] else null end) as $w
	| add_cat("async_lat"; $w != null;
		($w[0] == null or $w[1] == null or $w[0] > $w[1] or $lat > $w[1] - $w[0]); $r.id)
	| .fsrecs += (if $r.fs.pre_block_ns != null then 1 else 0 end)
	| .offcpu += (if ($r.sched.offcpu_ns // 0) > 0 then 1 else 0 end)
	| .runq += (if $r.sched.runq_ns != null and $r.sched.switches != null then 1 else 0 end)
)' "$TRACER_JSON")
if [[ -z $res ]] || ! jq -e 'type == "object"' >/dev/null 2>&1 <<<"$res"; then
	fail_all "could not evaluate the records with jq (see the error above)"
fi
note "per category {n: checked, bad: violations}: $(jq -c 'with_entries(if (.value | type) == "object" then .value |= {n, bad} else . end)' <<<"$res")"

cat_n() { jq -r --arg c "$1" '.[$c].n // 0' <<<"$res"; }
cat_bad() { jq -r --arg c "$1" '.[$c].bad // 0' <<<"$res"; }
cat_ids() { jq -r --arg c "$1" '(.[$c].ids // [])[:5] | map(tostring) | join(",")' <<<"$res"; }

# coverage: the shapes the bounds are about must exist
missing=""
(($(cat_n nonneg) > 0)) || missing+=" requests"
(($(cat_n block_parts) > 0)) || missing+=" block-children"
(($(cat_n sync_blocks) > 0)) || missing+=" direct/fsync-syscalls-with-block-children"
(($(jq -r '.fsrecs // 0' <<<"$res") > 0)) || missing+=" fs.pre_block_ns"
(($(jq -r '.offcpu // 0' <<<"$res") > 0)) || missing+=" sched.offcpu_ns>0"
(($(jq -r '.runq // 0' <<<"$res") > 0)) || missing+=" sched.runq_ns"
((have_uring + have_aio == 0)) || (($(cat_n async_lat) > 0)) || missing+=" io_uring/aio-requests"
check coverage "no records with:$missing" test -z "$missing"

for c in nonneg within_lat block_parts sync_blocks; do
	n=$(cat_n "$c")
	b=$(cat_bad "$c")
	if ((n == 0)); then
		fail "$c" "nothing to check (no records of this shape)"
	else
		# what a violation looked like (an intermittent within_lat, request id 3, is not
		# found yet: docs/testing.md): the offending records' kind, times and stages
		((b == 0)) || note "$c violators: $(jq -c --argjson ids "[$(cat_ids "$c")]" \
			'select(.type == "request" and ((.id as $i | $ids | index($i)) != null))
			| {id, kind, op, pid, ts_ns, lat_ns, ret, fs, sched, block: [(.block // [])[]
			| {q_ns, q2c_ns, c_ns, d2c_ns}]}' "$TRACER_JSON" | head -c 3000)"
		check "$c" "$b of $n violate it (request ids: $(cat_ids "$c"))" test "$b" -eq 0
	fi
done
if ((have_uring + have_aio == 0)); then
	skip async_lat "fio could run neither io_uring nor libaio here"
else
	n=$(cat_n async_lat)
	b=$(cat_bad async_lat)
	if ((n == 0)); then
		fail async_lat "no io_uring/aio request records although fio ran them"
	else
		check async_lat "$b of $n io_uring/aio requests violate it (ids: $(cat_ids async_lat))" test "$b" -eq 0
	fi
fi

it_end
