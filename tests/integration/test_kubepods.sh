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
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin systemd_pod cgroupfs_pod docker_name vanished_pod malformed
it_require_all findmnt dd
NR=${KUBEPODS_IOS:-500}

CG=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
[[ -n $CG && -d $CG ]] || skip_all "no cgroup2 mount on this machine"
for d in kubepods.slice kubepods docker; do
	[[ -e $CG/$d ]] && skip_all "$CG/$d exists (a real kubelet or dockerd): not touching it"
done

UID1=5d0c3e2a-1b4f-4a6e-9c8d-7e6f5a4b3c21 # systemd driver, burstable
UID2=8a7b6c5d-4e3f-4210-9fed-cba987654321 # cgroupfs, besteffort
UID3=0f1e2d3c-4b5a-4697-8877-665544332211 # cgroupfs, guaranteed; its log dir vanishes
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
for p in "$P1" "$P2" "$P3" "$P4" "$P5"; do mkcg "$p" || fail_all "cannot create $CG$p"; done

H=$IT_TMP/host
mkdir -p "$H/var/log/pods/shop_cart-7d9f_$UID1/redis" "$H/var/log/pods/batch_nightly-x2_$UID2/job" \
	"$H/var/log/pods/gone_ghost-1_$UID3/app" "$H/var/log/containers" "$H/var/lib/docker/containers/$ID3"
touch "$H/var/log/containers/cart-7d9f_shop_redis-$ID1.log" \
	"$H/var/log/containers/nightly-x2_batch_job-$ID2.log"
printf '{"ID":"%s","Name":"/web-frontend","State":{"Running":true}}' "$ID3" \
	>"$H/var/lib/docker/containers/$ID3/config.v2.json"
export IOTRACER_HOST_ROOT=$H

dev=$(mk_loop 64 fill) || fail_all "cannot create a loop device"
name=$(devname "$dev")
wait_quiet "$dev" 5
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
it_end
