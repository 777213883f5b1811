#!/usr/bin/env bash
# Containers by name with a real runtime (docs/cgroups.md, "Containers and pods"): podman
# runs two containers of a local image (imported from a busybox-static rootfs tarball, no
# registry), each reading a traced loop device with dd. One tracer (-j, --record) watches.
# Oracles: `podman inspect` (each container's id and name), dd's own "N+0 records in".
#   records_c1      the read syscall records with container_id = c1's id (podman inspect)
#                   number dd's records in, and every one says runtime "podman"
#   records_c2      ... c2's
#   names           every one of those records carries its container's name as podman
#                   inspect prints it (.Name): from podman's containers.json
#   report_ids      iotracer report of the recording: the records with c1's container_id
#                   number dd's (ids decoded from the recorded cgroup paths)
#   report_name     iotracer report --container <c2's name>: dd's number of read records,
#                   all c2's (the name from this host's podman state)
#   container_file  (issue 38) a container (c3) writes a file of its own file system: its
#                   write records name the host's path, podman inspect's MergedDir and the
#                   file, and (container_file) the path the container gave
#   short_lived     three `podman run --rm` containers, one after the other, read 1000
#                   blocks and exit,
#                   under a tracer as the service runs (no -j, --profile always-on,
#                   --metrics-cgroup-depth 2 --metrics-containers): after they are gone,
#                   each has its series named by its name (podman run --name) and its id
#                   (--cidfile), none is cgroup="other", each one's reads are in its series
#                   or missed, and all series + missed (lost, or still in flight) = the
#                   /sys/block reads delta (issue 37)
#   first_record    a -j tracer beside it: every read record of each (the first included)
#                   carries its container's name
#   top_containers  `iotracer top -b --group container` while two more containers (t1, t2)
#                   read a loop device each: the totals' row of each container, labelled
#                   podman/<its name>, counts the block reads of its device in
#                   /sys/block/DEV/stat over the run (less completions top reports missed)
# A host where podman cannot run a container (crun refuses hybrid cgroup hosts; runc is
# tried next) SKIPs every check with podman's own error.
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin records_c1 records_c2 names report_ids report_name container_file short_lived \
	first_record top_containers
it_require_all podman busybox
NR=${PODMAN_IOS:-2000} # 4k reads per container

# a rootfs of busybox-static alone: dd, sh and cat are its applets
BB=$(command -v busybox)
ldd "$BB" >/dev/null 2>&1 && skip_all "$BB is dynamically linked (install busybox-static)"
mkdir -p "$IT_TMP/rootfs/bin" "$IT_TMP/rootfs/dev" "$IT_TMP/rootfs/proc" "$IT_TMP/rootfs/sys"
cp "$BB" "$IT_TMP/rootfs/bin/busybox"
for a in sh dd cat sleep true; do ln -s busybox "$IT_TMP/rootfs/bin/$a"; done
tar -C "$IT_TMP/rootfs" -cf "$IT_TMP/rootfs.tar" . || fail_all "cannot pack the rootfs"
IMAGE=localhost/iotracer-it-busybox:$$
podman import -q "$IT_TMP/rootfs.tar" "$IMAGE" >"$IT_TMP/import.out" 2>&1 ||
	skip_all "podman import: $(tail -n 1 "$IT_TMP/import.out")"
_it_register podman "image $IMAGE"

# Podman's default RLIMIT_NOFILE/NPROC (1048576, the caller's own) cannot be set where the
# runtime runs without CAP_SYS_RESOURCE (this sandbox): modest fixed limits.
RUN_OPTS=(--network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096)
RUNTIME=()
why=""
for rt in "" runc; do
	opts=()
	[[ -n $rt ]] && opts=(--runtime "$rt")
	if podman "${opts[@]}" run --rm "${RUN_OPTS[@]}" "$IMAGE" /bin/true >"$IT_TMP/probe.out" 2>&1; then
		RUNTIME=("${opts[@]}")
		why=""
		break
	fi
	why+="${rt:-default runtime}: $(tail -n 1 "$IT_TMP/probe.out"); "
done
[[ -z $why ]] || skip_all "podman cannot run a container here: $why"
note "podman ${RUNTIME[*]:-(default runtime)}, cgroup manager $(podman info --format '{{.Host.CgroupManager}}')"

dev=$(mk_loop 64 fill) || fail_all "cannot create a loop device"
name=$(devname "$dev")
wait_quiet "$dev" 5
REC=$IT_TMP/rec
start_tracer -d "$name" -l syscall,block --record "$REC" || fail_all "tracer: $TRACER_WHY"

# c1 and c2 at once, each NR reads of its own 8 MiB of the device, through the device node
declare -A ID CNAME DDN
for c in c1 c2; do
	cn=it-pods-$c-$$
	skip=0
	[[ $c == c2 ]] && skip=$((8 * 256))
	podman "${RUNTIME[@]}" create "${RUN_OPTS[@]}" --name "$cn" --device "$dev:/dev/xvdt" "$IMAGE" \
		dd if=/dev/xvdt of=/dev/null bs=4k count="$NR" skip="$skip" >"$IT_TMP/create.$c" 2>&1 ||
		fail_all "podman create $c: $(tail -n 1 "$IT_TMP/create.$c")"
	_it_register podman "container $cn"
	ID[$c]=$(podman inspect --format '{{.Id}}' "$cn")
	CNAME[$c]=$(podman inspect --format '{{.Name}}' "$cn")
done
for c in c1 c2; do
	podman start "it-pods-$c-$$" >/dev/null 2>&1 || fail_all "podman start $c"
done
for c in c1 c2; do
	rc=$(timeout 60 podman wait "it-pods-$c-$$")
	podman logs "it-pods-$c-$$" >"$IT_TMP/dd.$c" 2>&1
	DDN[$c]=$(sed -n 's/^\([0-9]*\)+0 records in$/\1/p' "$IT_TMP/dd.$c")
	[[ $rc == 0 && -n ${DDN[$c]} ]] || fail_all "dd in $c exited ${rc:-?}: $(tr '\n' ' ' <"$IT_TMP/dd.$c")"
	note "$c: id ${ID[$c]} name ${CNAME[$c]}, dd read ${DDN[$c]} blocks"
done
stop_tracer || fail_all "tracer: $TRACER_WHY"

sel='.type == "request" and .kind == "syscall" and .op == "read" and .dev == $d and .container_id == $id'
bad_names=""
for c in c1 c2; do
	n=$(jcount "$TRACER_JSON" "$sel" --arg d "$name" --arg id "${ID[$c]}")
	rt=$(jq -r --arg d "$name" --arg id "${ID[$c]}" "select($sel) | .runtime" "$TRACER_JSON" |
		sort | uniq -c | tr '\n' ' ')
	note "$c: $n read records with its container_id (dd ${DDN[$c]}), runtimes: $rt"
	check "records_$c" "$n records with container_id ${ID[$c]}, dd read ${DDN[$c]}; runtimes $rt" \
		test "$n" = "${DDN[$c]}" -a "$rt" = "$(printf '%7d podman ' "$n")"
	nn=$(jq -r --arg d "$name" --arg id "${ID[$c]}" "select($sel) | .container // \"(none)\"" \
		"$TRACER_JSON" | sort | uniq -c | tr '\n' ' ')
	note "$c: names in its records: $nn (podman inspect: ${CNAME[$c]})"
	[[ $nn == "$(printf '%7d %s ' "$n" "${CNAME[$c]}")" ]] || bad_names+="$c: $nn, want ${CNAME[$c]}; "
done
check names "$bad_names" test -z "$bad_names"

r=$("$IOTRACER" report "$REC" -n 0 -j - 2>"$IT_TMP/report.err" |
	jq -n --arg d "$name" --arg id "${ID[c1]}" \
		'reduce (inputs | select(.type == "request" and .kind == "syscall" and .op == "read" and .dev == $d and .container_id == $id and .runtime == "podman")) as $r (0; . + 1)')
check report_ids "report: $r records of c1 (dd ${DDN[c1]}); $(head -c 200 "$IT_TMP/report.err")" \
	test "$r" = "${DDN[c1]}"
rn=$("$IOTRACER" report "$REC" -n 0 -j - --container "${CNAME[c2]}" 2>"$IT_TMP/report2.err" |
	jq -rn --arg d "$name" '[inputs | select(.type == "request" and .kind == "syscall" and .op == "read" and .dev == $d) | .container_id] | "\(length) \(unique | join(","))"')
check report_name "report --container ${CNAME[c2]}: '$rn', want '${DDN[c2]} ${ID[c2]}'; $(head -c 200 "$IT_TMP/report2.err")" \
	test "$rn" = "${DDN[c2]} ${ID[c2]}"

# ---------------------------------------------------------------- a container's own file
# (the container lives on a second after dd: a task of its namespace for its mount table)
c3=it-pods-c3-$$
podman "${RUNTIME[@]}" create "${RUN_OPTS[@]}" --name "$c3" "$IMAGE" sh -c \
	'mkdir -p /data && dd if=/dev/zero of=/data/out.dat bs=4k count=64 conv=fsync && sleep 1' \
	>"$IT_TMP/create.c3" 2>&1 || fail_all "podman create c3: $(tail -n 1 "$IT_TMP/create.c3")"
_it_register podman "container $c3"
start_tracer -l syscall -c dd || fail_all "tracer: $TRACER_WHY"
podman start "$c3" >/dev/null 2>&1 || fail_all "podman start c3"
MERGED=$(podman inspect --format '{{.GraphDriver.Data.MergedDir}}' "$c3") # while mounted
rc=$(timeout 60 podman wait "$c3")
ID3=$(podman inspect --format '{{.Id}}' "$c3")
stop_tracer || note "tracer: $TRACER_WHY"
fc=$(jq -r --arg id "$ID3" 'select(.type == "request" and .op == "write" and .container_id == $id) |
	"\(.file) | \(.container_file)"' "$TRACER_JSON" | sort | uniq -c | tr '\n' ' ')
note "c3 (exit ${rc:-?}, merged $MERGED): $fc"
check container_file "c3's writes: $fc; want 64 of $MERGED/data/out.dat | /data/out.dat" \
	test "$fc" = "$(printf '%7d %s | %s ' 64 "$MERGED/data/out.dat" /data/out.dat)"

# ---------------------------------------------------------------- short-lived containers
# The service's way (no -j, --profile always-on: no record of a fast request reaches the
# daemon) and a -j tracer beside it, while three `podman run --rm` containers, one after
# the other, read the device and exit (issue 37): each must keep its name in /metrics
# after its cgroup is gone, and its first record must carry its name.
PORT=$(free_port) || fail_all "no free TCP port"
TRACER_JSON_PATH=none start_tracer -d "$name" --profile always-on --metrics "127.0.0.1:$PORT" \
	--metrics-cgroup-depth 2 --metrics-containers || fail_all "metrics tracer: $TRACER_WHY"
MPID=$TRACER_PID
start_tracer -d "$name" -l syscall,block || fail_all "tracer: $TRACER_WHY"
JPID=$TRACER_PID JSON2=$TRACER_JSON
r0=$(blk_reads "$dev")
# one after the other, as an operator runs them: the next one starts within a second of
# the last lookup of the node's names
for c in s1 s2 s3; do
	podman "${RUNTIME[@]}" run --rm "${RUN_OPTS[@]}" --name "it-sl-$c-$$" --cidfile "$IT_TMP/cid.$c" \
		--device "$dev:/dev/xvdt" "$IMAGE" dd if=/dev/xvdt of=/dev/null bs=4k count=1000 \
		skip=$((${c#s} * 2000)) iflag=direct >"$IT_TMP/run.$c.out" 2>&1 ||
		fail_all "podman run $c: $(tail -c 300 "$IT_TMP/run.$c.out")"
	DDN[$c]=$(sed -n 's/^\([0-9]*\)+0 records in$/\1/p' "$IT_TMP/run.$c.out")
	ID[$c]=$(cat "$IT_TMP/cid.$c")
done
wait_quiet "$dev" 5 >/dev/null
r1=$(blk_reads "$dev")
sleep 1.2 # one /metrics rebuild after the last completion
curl -s --max-time 5 -o "$IT_TMP/short.prom" "http://127.0.0.1:$PORT/metrics" ||
	note "cannot scrape the metrics tracer"
TRACER_PID=$MPID
stop_tracer || note "metrics tracer: $TRACER_WHY"
TRACER_PID=$JPID
stop_tracer || note "tracer: $TRACER_WHY"
# completions no program saw (docs/hooks.md): counted lost, or still in the in-flight gauge
# until they age out; the device is quiet, so the gauge holds only those
missed=$(awk '$1 == "iotracer_lost_requests_total{layer=\"block\",reason=\"missed\"}" ||
	$1 == "iotracer_inflight_requests{layer=\"block\"}" { s += $2; n++ } END { if (n == 2) print s }' \
	"$IT_TMP/short.prom")
got="" bad="" sum=0
for c in s1 s2 s3; do
	# its series: container="<its name>", the cgroup label holding its id
	v=$(awk -v d="$name" -v n="it-sl-$c-$$" -v id="${ID[$c]}" -F'[{}]' \
		'$1 == "iotracer_cgroup_requests_total" && index($2, "device=\"" d "\",op=\"read\"") &&
		index($2, "container=\"" n "\"") && index($2, id) { split($3, a, " "); s += a[1] } END { print s + 0 }' \
		"$IT_TMP/short.prom")
	got+="$c (dd ${DDN[$c]}): $v; "
	sum=$((sum + v))
	((v > 0 && v <= ${DDN[$c]:-0})) || bad=1
done
other=$(grep -c "^iotracer_cgroup_requests_total{cgroup=\"other\",device=\"$name\"" "$IT_TMP/short.prom")
# every series of the device: the containers' and any other reader's (none expected)
all=$(awk -v d="$name" -F'[{}]' '$1 == "iotracer_cgroup_requests_total" &&
	index($2, "device=\"" d "\",op=\"read\"") { split($3, a, " "); s += a[1] } END { print s + 0 }' \
	"$IT_TMP/short.prom")
note "short-lived containers in /metrics: $got other series: $other, all series $all, missed ${missed:-?}, /sys/block reads $((r1 - r0)): $(grep "^iotracer_cgroup_requests_total{.*device=\"$name\"" "$IT_TMP/short.prom" | grep -v it-sl- | tr '\n' ' ')"
# each container's reads are in its series or missed; all series + missed = the stat
check short_lived "$got cgroup=other series on $name: $other; all series $all; missed ${missed:-none}; stat reads $((r1 - r0))" \
	eval '[[ -z $bad && $other == 0 && -n $missed ]] && ((sum + missed >= 3000 && all + missed == r1 - r0))'
bad_first=""
for c in s1 s2 s3; do
	nn=$(jq -r --arg d "$name" --arg id "${ID[$c]}" "select($sel) | .container // \"(none)\"" \
		"$JSON2" | sort | uniq -c | tr '\n' ' ')
	[[ $nn == "$(printf '%7d %s ' "${DDN[$c]}" "it-sl-$c-$$")" ]] || bad_first+="$c: $nn, want ${DDN[$c]} it-sl-$c-$$; "
done
check first_record "${bad_first}" test -z "$bad_first"

# ---------------------------------------------------------------- top per container
devA=$(mk_loop 64 fill) || fail_all "cannot create a loop device"
devB=$(mk_loop 64 fill) || fail_all "cannot create a loop device"
nA=$(devname "$devA") nB=$(devname "$devB")
wait_quiet "$devA" 5
wait_quiet "$devB" 5
for t in t1:"$devA":8 t2:"$devB":12; do # then 2 s alive: top names it at a tick
	IFS=: read -r c d n <<<"$t"
	podman "${RUNTIME[@]}" create "${RUN_OPTS[@]}" --name "it-pods-$c-$$" --device "$d:/dev/xvdt" "$IMAGE" \
		sh -c "i=0; while [ \$i -lt $n ]; do dd if=/dev/xvdt of=/dev/null bs=4k count=1000 iflag=direct 2>/dev/null; i=\$((i + 1)); done; sleep 2" \
		>"$IT_TMP/create.$c" 2>&1 || fail_all "podman create $c: $(tail -n 1 "$IT_TMP/create.$c")"
	_it_register podman "container it-pods-$c-$$"
done
rA0=$(blk_reads "$devA") rB0=$(blk_reads "$devB")
bg_start top "$IOTRACER" top -b -i 1s -n 60 --group container -d "$nA,$nB"
TOP_PID=$BG_PID
sleep 2 # attached (top prints its first table after a second)
podman start "it-pods-t1-$$" "it-pods-t2-$$" >/dev/null 2>&1 || fail_all "podman start t1 t2"
timeout 60 podman wait "it-pods-t1-$$" "it-pods-t2-$$" >/dev/null 2>&1
sleep 1.5
kill -INT "$TOP_PID"
bg_wait "$TOP_PID" 20
rA=$(($(blk_reads "$devA") - rA0)) rB=$(($(blk_reads "$devB") - rB0))
out=$IT_TMP/top.out
# the busiest interval's table, for the notes (and the issue's closing note)
awk '/^iotracer top - / { if (n > best) { best = n; keep = buf }; buf = ""; n = 0 }
	{ buf = buf $0 "\n"; if ($NF ~ /^podman\//) n++ }
	END { if (n > best) keep = buf; printf "%s", keep }' "$out" >"$IT_TMP/top.screen"
while IFS= read -r l; do note "screen: $l"; done <"$IT_TMP/top.screen"
tot=$(grep -A 100 '^TOTAL' "$out")
missed=$(sed -n 's/.*issued \([0-9]*\), seen completing \([0-9]*\).*/\1 \2/p' <<<"$tot")
m=$((${missed% *} - ${missed#* }))
got="" bad=""
GOT=0 WANT=0
for t in t1:"$nA":"$rA" t2:"$nB":"$rB"; do
	IFS=: read -r c d want <<<"$t"
	cn=$(podman inspect --format '{{.Name}}' "it-pods-$c-$$")
	# columns by the totals header's names (per container: no PID and COMM columns)
	ios=$(awk -v l="podman/$cn" -v d="$d" '$0 ~ / DEV +OP +IOS / { for (i = 1; i <= NF; i++) h[$i] = i; g = 1; next }
		g && $g == l && $h["DEV"] == d && $h["OP"] == "read" { s += $h["IOS"] } END { print s + 0 }' <<<"$tot")
	got+="$c podman/$cn on $d: $ios (stat $want); "
	GOT=$((GOT + ios)) WANT=$((WANT + want))
	((ios <= want && want > 0)) || bad=1
done
note "top totals: $got missed $m"
accounted "$GOT" "$WANT" "$m" 0 || bad=1
check top_containers "$got; missed $m; totals: $(head -c 300 <<<"$tot" | tr '\n' '|')" test -z "$bad"
it_end
