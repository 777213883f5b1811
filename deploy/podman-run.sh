#!/bin/sh
# iotracer as a container on one host, with the privileges docs/deploy.md explains (the
# same as deploy/daemonset.yaml's: tests/integration/test_deploy.sh checks they match).
#
#   deploy/podman-run.sh IMAGE [IOTRACER ARGS...]    run it (detached, named iotracer)
#   deploy/podman-run.sh --print                    the podman options, one a line
#
# PODMAN_OPTS: more podman options (e.g. --name, --runtime); a host path of the name
# sources that does not exist is left out (a host without a kubelet, docker or podman).
set -eu

# the privileges: host PID namespace, four capabilities, no seccomp filter (the runtimes'
# default profiles allow bpf() and perf_event_open() to CAP_SYS_ADMIN alone), the node's
# network (/metrics), /sys/dev/block unmasked (podman masks it: device names)
opts="--pid=host --network=host --cap-drop=all --cap-add=BPF --cap-add=PERFMON
--cap-add=SYS_RESOURCE --cap-add=DAC_READ_SEARCH --security-opt=seccomp=unconfined --read-only
--security-opt=unmask=/sys/dev/block --env=IOTRACER_HOST_ROOT=/host"
# the mounts: kernel BTF, tracefs, cgroup v2, and the name sources below /host (read-only)
mounts="/sys/kernel/btf:/sys/kernel/btf:ro
/sys/kernel/tracing:/sys/kernel/tracing:ro
/sys/fs/cgroup:/sys/fs/cgroup:ro
/var/log/pods:/host/var/log/pods:ro
/var/log/containers:/host/var/log/containers:ro
/var/lib/docker/containers:/host/var/lib/docker/containers:ro
/var/lib/containers/storage/overlay-containers:/host/var/lib/containers/storage/overlay-containers:ro"

if [ "${1:-}" = --print ]; then
	for o in $opts; do echo "$o"; done
	for m in $mounts; do echo "--volume=$m"; done
	exit 0
fi
[ $# -ge 1 ] || { echo "usage: $0 IMAGE [IOTRACER ARGS...] | --print" >&2; exit 2; }
image=$1
shift
vols=""
for m in $mounts; do
	[ -e "${m%%:*}" ] && vols="$vols --volume=$m"
done
# shellcheck disable=SC2086 # word splitting of the option lists is wanted
exec podman run -d ${PODMAN_OPTS:-} $opts $vols "$image" "$@"
