#!/usr/bin/env bash
# Kubernetes' cgroup trees and docker's naming without a kubelet or dockerd: cgroup
# directories with their exact names (systemd and cgroupfs drivers) on the machine's own
# cgroup2 mount, and the kubelet's and docker's name sources as a fixture tree below
# IOTRACER_HOST_ROOT (docs/cgroups.md). A dd in each container cgroup reads a traced loop
# device. Oracles: the ids, UIDs and names the test wrote; dd's "N+0 records in".
#   systemd_pod   /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice/
#                 cri-containerd-<id>.scope: dd's N read records all carry runtime containerd,
#                 that id, the UID with '-', qos burstable, and the pod, namespace and
#                 container names of /var/log/pods and /var/log/containers
#   cgroupfs_pod  /kubepods/besteffort/pod<uid>/<id>: runtime kubepods, qos besteffort, names
#   docker_name   /docker/<id> and var/lib/docker/containers/<id>/config.v2.json: runtime
#                 docker, the container's name
#   vanished_pod  a guaranteed pod whose /var/log/pods entry is removed after the tracer read
#                 it: its records keep the UID, carry no pod name, and the final summary
#                 counts the misses (container_names.miss_pod > 0)
#   malformed     /docker/<12 hex digits>: runtime docker, no container_id, counted in
#                 container_names.malformed_paths
#   by_pod        report --by pod of the tracer's JSON lines: the rows shop/cart-7d9f,
#                 batch/nightly-x2 and (pod 3's name gone) pod 3's UID have their dd's
#                 reads (count and 4 KiB each); "(no pod)" the lines without a pod_uid (jq),
#                 the docker dds' reads among them
#   job_series    a Job's pod (systemd driver, besteffort) reads the device and is gone at
#                 once, as the kubelet removes it: its container and pod cgroups and its log
#                 entries. A tracer as the service runs (no -j, --profile always-on,
#                 --metrics-cgroup-depth 4 --metrics-containers) still has its series at
#                 the next scrape: the container's cgroup path, container, pod and
#                 namespace names, and dd's reads (less completions counted missed)
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin systemd_pod cgroupfs_pod docker_name vanished_pod malformed by_pod job_series
it_require_all findmnt dd curl
NR=${KUBEPODS_IOS:-500}

CG=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
[[ -n $CG && -d $CG ]] || skip_all "no cgroup2 mount on this machine"
for d in kubepods.slice kubepods docker; do
	[[ -e $CG/$d ]] && skip_all "$CG/$d exists (a real kubelet or dockerd): not touching it"
done

UID1=5d0c3e2a-1b4f-4a6e-9c8d-7e6f5a4b3c21 # systemd driver, burstable
UID2=8a7b6c5d-4e3f-4210-9fed-cba987654321 # cgroupfs, besteffort
UID3=0f1e2d3c-4b5a-4697-8877-665544332211 # cgroupfs, guaranteed; its log dir vanishes
UID6=6b5a4c3d-2e1f-4a0b-9c8d-1f2e3d4c5b6a # systemd, besteffort: a Job's pod, gone after its IO
ID1=$(printf 'a%.0s' {1..64})
ID2=$(printf '%064x' 0x5eed2)
ID3=$(printf '%064x' 0xd0c3e7)
ID4=$(printf '%064x' 0x9a55)
# mkcg REL: the cgroup and each missing level, registered for removal (deepest first)
mkcg() {
	local p=$CG part
	for part in ${1//\// }; do
		p+=/$part
		[[ -d $p ]] && continue
		mkdir "$p" || return 1
		_it_register cgroups "$p"
	done
}
P1=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID1//-/_}.slice/cri-containerd-$ID1.scope
P2=/kubepods/besteffort/pod$UID2/$ID2
P3=/kubepods/pod$UID3/$ID4
P4=/docker/$ID3
P5=/docker/0123456789ab
ID6=$(printf '%064x' 0x10b6)
P6=/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${UID6//-/_}.slice/cri-containerd-$ID6.scope
for p in "$P1" "$P2" "$P3" "$P4" "$P5" "$P6"; do mkcg "$p" || fail_all "cannot create $CG$p"; done

H=$IT_TMP/host
mkdir -p "$H/var/log/pods/shop_cart-7d9f_$UID1/redis" "$H/var/log/pods/batch_nightly-x2_$UID2/job" \
	"$H/var/log/pods/gone_ghost-1_$UID3/app" "$H/var/log/containers" "$H/var/lib/docker/containers/$ID3"
mkdir -p "$H/var/log/pods/batch_report-28_$UID6/main"
touch "$H/var/log/containers/cart-7d9f_shop_redis-$ID1.log" \
	"$H/var/log/containers/nightly-x2_batch_job-$ID2.log" \
	"$H/var/log/containers/report-28_batch_main-$ID6.log"
printf '{"ID":"%s","Name":"/web-frontend","State":{"Running":true}}' "$ID3" \
	>"$H/var/lib/docker/containers/$ID3/config.v2.json"
export IOTRACER_HOST_ROOT=$H

dev=$(mk_loop 64 fill) || fail_all "cannot create a loop device"
name=$(devname "$dev")
wait_quiet "$dev" 5
PORT=$(free_port) || fail_all "no free TCP port"
TRACER_JSON_PATH=none start_tracer -d "$name" --profile always-on --metrics "127.0.0.1:$PORT" \
	--metrics-cgroup-depth 4 --metrics-containers || fail_all "metrics tracer: $TRACER_WHY"
MPID=$TRACER_PID
start_tracer -d "$name" -l syscall,block || fail_all "tracer: $TRACER_WHY"

# pod 3's directory vanishes after the tracer read the sources (the kubelet removed it)
rm -rf "$H/var/log/pods/gone_ghost-1_$UID3"
declare -A DDPID DDN
k=0
for p in "$P1" "$P2" "$P3" "$P4" "$P5"; do
	k=$((k + 1))
	sh -c 'echo $$ >"$0/cgroup.procs" && echo $$ >"$1" && exec dd if="$2" of=/dev/null bs=4k count="$3" skip="$4" iflag=direct' \
		"$CG$p" "$IT_TMP/dd.$k.pid" "$dev" "$NR" $((k * 1000)) 2>"$IT_TMP/dd.$k.err" ||
		fail_all "dd in $p: $(tr '\n' ' ' <"$IT_TMP/dd.$k.err")"
	DDPID[$k]=$(cat "$IT_TMP/dd.$k.pid")
	DDN[$k]=$(sed -n 's/^\([0-9]*\)+0 records in$/\1/p' "$IT_TMP/dd.$k.err")
done
stop_tracer || fail_all "tracer: $TRACER_WHY"
tracer_summary || fail_all "no final summary"

# the Job's pod: its dd, then the kubelet removes it (cgroups, log directory and link)
r0=$(blk_reads "$dev")
sh -c 'echo $$ >"$0/cgroup.procs" && exec dd if="$1" of=/dev/null bs=4k count="$2" skip=7000 iflag=direct' \
	"$CG$P6" "$dev" "$NR" 2>"$IT_TMP/dd.job.err" || fail_all "dd in $P6: $(tr '\n' ' ' <"$IT_TMP/dd.job.err")"
rmdir "$CG$P6" "$CG${P6%/*}" || fail_all "cannot remove the Job's cgroups"
rm -rf "$H/var/log/pods/batch_report-28_$UID6" "$H/var/log/containers/report-28_batch_main-$ID6.log"
JN=$(sed -n 's/^\([0-9]*\)+0 records in$/\1/p' "$IT_TMP/dd.job.err")
wait_quiet "$dev" 5 >/dev/null
sleep 1.2 # one /metrics rebuild after the pod is gone
curl -s --max-time 5 -o "$IT_TMP/job.prom" "http://127.0.0.1:$PORT/metrics" || note "cannot scrape"
rj=$(($(blk_reads "$dev") - r0))
TRACER_PID=$MPID
stop_tracer || note "metrics tracer: $TRACER_WHY"

# fields K: the container fields of dd K's read records, counted by distinct value
fields() {
	jq -r --argjson p "${DDPID[$1]}" --arg d "$name" \
		'select(.type == "request" and .kind == "syscall" and .op == "read" and .pid == $p and .dev == $d)
		 | [.runtime, .container_id, .container, .pod_uid, .pod, .namespace, .qos] | map(. // "-") | join(" ")' \
		"$TRACER_JSON" | sort | uniq -c | sed 's/^ *//' | tr '\n' ';'
}
want() { printf '%s %s;' "${DDN[$1]}" "$2"; }
ck() { # CHECK K WANT-FIELDS
	local got w
	got=$(fields "$2")
	w=$(want "$2" "$3")
	note "$1: dd pid ${DDPID[$2]} read ${DDN[$2]}: $got"
	check "$1" "got '$got', want '$w'" test "$got" = "$w"
}
ck systemd_pod 1 "containerd $ID1 redis $UID1 cart-7d9f shop burstable"
ck cgroupfs_pod 2 "kubepods $ID2 job $UID2 nightly-x2 batch besteffort"
ck docker_name 4 "docker $ID3 web-frontend - - - -"
stats=$(jq -c '.container_names' "$SUMMARY")
note "summary container_names: $stats"
got=$(fields 3)
w=$(want 3 "kubepods $ID4 - $UID3 - - guaranteed")
check vanished_pod "got '$got', want '$w'; $stats" \
	test "$got" = "$w" -a "$(jq '.container_names.miss_pod' "$SUMMARY")" -gt 0
got=$(fields 5)
w=$(want 5 "docker - - - - - -")
check malformed "got '$got', want '$w'; $stats" \
	test "$got" = "$w" -a "$(jq '.container_names.malformed_paths' "$SUMMARY")" -gt 0
# by_pod: the per-pod table of the same JSON lines
"$IOTRACER" report -n 20 --by pod "$TRACER_JSON" >"$IT_TMP/pods.txt" 2>"$IT_TMP/pods.err"
np=$(jq -rs '[.[] | select(.type == "request" and .pod_uid == null)] | "\(length) \(map(.bytes) | add)"' "$TRACER_JSON")
got="" want=""
for kv in "1 shop/cart-7d9f" "2 batch/nightly-x2" "3 $UID3"; do
	got+="$(report_row "$IT_TMP/pods.txt" pod "${kv#* }");"
	want+="${DDN[${kv%% *}]} $((DDN[${kv%% *}] * 4096));"
done
got+="$(report_row "$IT_TMP/pods.txt" pod "(no pod)")"
want+=$np
check by_pod "rows shop/cart-7d9f;batch/nightly-x2;pod 3;(no pod): '$got', want '$want' (docker dds $((DDN[4] + DDN[5]))); $(head -c 200 "$IT_TMP/pods.err")" \
	test "$got" = "$want" -a "${np% *}" -ge $((DDN[4] + DDN[5]))

want="iotracer_cgroup_requests_total{cgroup=\"$P6\",device=\"$name\",op=\"read\",container=\"main\",pod=\"report-28\",namespace=\"batch\"}"
jv=$(awk -v k="$want" '$1 == k { print $2 }' "$IT_TMP/job.prom")
jm=$(awk '$1 == "iotracer_lost_requests_total{layer=\"block\",reason=\"missed\"}" ||
	$1 == "iotracer_inflight_requests{layer=\"block\"}" { s += $2 } END { print s + 0 }' "$IT_TMP/job.prom")
note "the Job's pod after it is gone: ${jv:-no series} (dd $JN, stat $rj, missed $jm); its device's series: $(grep "^iotracer_cgroup_requests_total{.*device=\"$name\"" "$IT_TMP/job.prom" | grep -v "$ID1\|$ID2\|$ID3\|$ID4\|/docker/" | tr '\n' ' ')"
check job_series "series $want: ${jv:-none}, dd read $JN, missed $jm" \
	eval '[[ -n $jv ]] && ((jv <= JN && jv + jm >= JN))'
it_end
