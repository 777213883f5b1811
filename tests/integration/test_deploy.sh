#!/usr/bin/env bash
# iotracer as a container (docs/deploy.md): the DaemonSet asks for exactly the privileges
# and mounts deploy/podman-run.sh uses, and a container run by that script with those
# privileges alone traces a fio run on the host's loop device and serves /metrics.
#   manifest      deploy/daemonset.yaml (parsed as YAML) against `podman-run.sh --print`:
#                 the same added capabilities (and ALL dropped), host PID namespace, host
#                 network, no seccomp filter, read-only root, the same host paths at the
#                 same places read-only (an option the comparison does not know fails it),
#                 the same IOTRACER_HOST_ROOT; plus the Prometheus scrape annotations and
#                 resource limits
#   image_build   `podman build` of deploy/Containerfile with the .deb (make deb), apt
#                 installing its Depends from Debian's archive, on a Debian 12 base: the
#                 docker.io image when podman's storage has it, else a rootfs mmdebstrap made
#                 from deb.debian.org (no container registry here), kept in IMAGE_CACHE
#                 (default /var/cache/iotracer-image, a one-time download like the lab's
#                 kernels; docs/deploy.md) and imported once; the image's iotracer
#                 --version is this build's. SKIP when neither can be had (no network)
#   run_traces    podman-run.sh runs the image just built, with the DaemonSet's own
#                 arguments (deploy/daemonset.yaml, its metrics port replaced by a free one)
#                 and those privileges only (without a built image: an image of the binary
#                 and the libraries `ldd` names, imported, -d loopN -l block); fio does N
#                 direct 4k reads of a loop device on the host; the container's /metrics
#                 iotracer_request_size_bytes_count{layer="block",device,op="read"} == fio's
#                 total_ios (less the completions it reports missed, as the other tests
#                 allow)
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin manifest image_build run_traces
it_require_all python3 curl
RUN=$IT_ROOT/deploy/podman-run.sh

# ---------------------------------------------------------------- the manifest
"$RUN" --print >"$IT_TMP/podman.opts" || fail_all "podman-run.sh --print failed"
python3 - "$IT_ROOT/deploy/daemonset.yaml" "$IT_TMP/podman.opts" >"$IT_TMP/manifest.out" 2>&1 <<'PY'
import sys, yaml
ds = yaml.safe_load(open(sys.argv[1]))
opts = [l.strip() for l in open(sys.argv[2]) if l.strip()]
spec = ds["spec"]["template"]["spec"]
ann = ds["spec"]["template"]["metadata"].get("annotations", {})
(c,) = spec["containers"]
sc = c["securityContext"]
bad = []
def same(what, a, b):
    if a != b:
        bad.append(f"{what}: manifest {sorted(a) if isinstance(a, set) else a} != podman {sorted(b) if isinstance(b, set) else b}")
same("capabilities added", set(sc["capabilities"]["add"]),
     {o.split("=", 1)[1] for o in opts if o.startswith("--cap-add=")})
same("capabilities dropped", [x.lower() for x in sc["capabilities"]["drop"]],
     [o.split("=", 1)[1] for o in opts if o.startswith("--cap-drop=")])
same("host PID", bool(spec.get("hostPID")), "--pid=host" in opts)
same("host network", bool(spec.get("hostNetwork")), "--network=host" in opts)
same("read-only root", bool(sc.get("readOnlyRootFilesystem")), "--read-only" in opts)
same("privileged", bool(sc.get("privileged")), "--privileged" in opts)
same("seccomp unconfined", (sc.get("seccompProfile") or {}).get("type") == "Unconfined",
     "--security-opt=seccomp=unconfined" in opts)
known = ("--cap-add=", "--cap-drop=", "--volume=", "--env=")
# podman alone masks /sys/dev/block (containerd and CRI-O do not): nothing to compare
podman_only = ("--security-opt=unmask=/sys/dev/block",)
left = [o for o in opts if not o.startswith(known) and o not in podman_only + (
        "--pid=host", "--network=host", "--read-only", "--privileged", "--security-opt=seccomp=unconfined")]
if left:
    bad.append(f"podman options the comparison does not know: {left}")
vols = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"]}
mm = {(vols[m["name"]], m["mountPath"], "ro" if m.get("readOnly") else "rw") for m in c["volumeMounts"]}
pm = {tuple(o.split("=", 1)[1].split(":")) for o in opts if o.startswith("--volume=")}
same("mounts", mm, pm)
env = {e["name"]: e["value"] for e in c.get("env", [])}
same("env", env, dict(o.split("=", 1)[1].split("=", 1) for o in opts if o.startswith("--env=")))
if ann.get("prometheus.io/scrape") != "true" or not ann.get("prometheus.io/port"):
    bad.append(f"scrape annotations: {ann}")
lim = c.get("resources", {}).get("limits", {})
if not lim.get("cpu") or not lim.get("memory"):
    bad.append(f"resource limits: {lim}")
print(f"{len(mm)} mounts, caps {sorted(sc['capabilities']['add'])}; " + "; ".join(bad))
sys.exit(1 if bad else 0)
PY
rc=$?
note "manifest: $(cat "$IT_TMP/manifest.out")"
check manifest "$(tr '\n' ' ' <"$IT_TMP/manifest.out")" test "$rc" = 0

# ---------------------------------------------------------------- podman
command -v podman >/dev/null || {
	skip_rest "podman not installed (make deps-test)"
	it_end
}
# this sandbox's quirks (tests/integration/test_podman.sh): podman's default rlimits
# cannot be set here, and crun refuses hybrid cgroup hosts (runc runs)
QUIRKS="--ulimit nofile=1024:1024 --ulimit nproc=4096:4096"
command -v runc >/dev/null && QUIRKS+=" --runtime runc"

# the package of this build (make deb: rebuilt only when the binary is newer)
make -s -C "$IT_ROOT" deb >"$IT_TMP/deb.out" 2>&1 || note "make deb: $(tail -n 2 "$IT_TMP/deb.out" | tr '\n' ' ')"
DEB=$(ls "$IT_ROOT"/build/iotracer_*.deb 2>/dev/null | head -n 1)
IMAGE_CACHE=${IMAGE_CACHE:-/var/cache/iotracer-image}

# A Debian 12 base for deploy/Containerfile: podman's docker.io image when it has one, else
# the cached mmdebstrap rootfs (made once: ~2 min), imported once under a tag naming the
# tarball's mtime (a new tarball is imported again). Sets BASE; returns 1 (WHY) if none.
base_image() {
	local tar=$IMAGE_CACHE/debian-bookworm-apt.tar tag
	BASE=docker.io/library/debian:bookworm-slim
	podman image exists "$BASE" && return 0
	if [[ ! -s $tar ]]; then
		command -v mmdebstrap >/dev/null || {
			WHY="no $BASE in podman's storage and no mmdebstrap (make deps-test)"
			return 1
		}
		mkdir -p "$IMAGE_CACHE" && chmod 0755 "$IMAGE_CACHE"
		note "making the base rootfs once: mmdebstrap bookworm -> $tar"
		if ! mmdebstrap --quiet --format=tar --variant=apt --include=ca-certificates \
			--skip=cleanup/apt/lists bookworm "$tar.tmp" http://deb.debian.org/debian \
			>"$IT_TMP/mmdebstrap.log" 2>&1; then
			rm -rf "$tar.tmp"
			WHY="mmdebstrap failed (no Debian archive reachable?): $(tail -n 2 "$IT_TMP/mmdebstrap.log" | tr '\n' ' ')"
			return 1
		fi
		mv -f "$tar.tmp" "$tar"
	fi
	BASE=localhost/iotracer-it-base:bookworm-$(stat -c %Y "$tar")
	podman image exists "$BASE" && return 0
	# an older tarball's import goes: one base image in podman's storage at a time
	podman images --format '{{.Repository}}:{{.Tag}}' | grep '^localhost/iotracer-it-base:' |
		xargs -r podman rmi -f >/dev/null 2>&1
	podman import -q "$tar" "$BASE" >"$IT_TMP/base.out" 2>&1 || {
		WHY="podman import of $tar: $(tail -n 1 "$IT_TMP/base.out")"
		return 1
	}
}

BUILT=""
if [[ -z $DEB ]]; then
	skip image_build "no build/iotracer_*.deb (run make deb)"
elif ! base_image; then
	skip image_build "$WHY"
else
	tag=localhost/iotracer-it-deb:$$
	if podman build -q --network=host --build-arg "BASE=$BASE" -f "$IT_ROOT/deploy/Containerfile" \
		-t "$tag" "$IT_ROOT/build" >"$IT_TMP/build.out" 2>&1; then
		_it_register podman "image $tag"
		v=$(podman run --rm $QUIRKS --entrypoint /usr/bin/iotracer "$tag" --version 2>&1 | head -n 1)
		want=$("$IOTRACER" --version 2>&1 | head -n 1)
		check image_build "on $BASE: iotracer --version in the image: $v (this build: $want)" \
			test -n "$v" -a "$v" = "$want"
		[[ $v == "$want" ]] && BUILT=$tag
	else
		fail image_build "podman build on $BASE: $(tail -n 3 "$IT_TMP/build.out" | tr '\n' ' ')"
	fi
fi

# without a built image: one of the binary and what ldd says it links
if [[ -z $BUILT ]]; then
	R=$IT_TMP/rootfs
	mkdir -p "$R/usr/bin" "$R/tmp" "$R/proc" "$R/sys" "$R/dev" "$R/host"
	cp "$IOTRACER" "$R/usr/bin/iotracer"
	for lib in $(ldd "$IOTRACER" | awk '/=>/ { print $3 } /^\t\/lib/ { print $1 }'); do
		mkdir -p "$R$(dirname "$lib")"
		cp -L "$lib" "$R$lib"
	done
	ln -s usr/lib "$R/lib" 2>/dev/null
	ln -s usr/lib64 "$R/lib64" 2>/dev/null
	[[ -d /usr/lib64 ]] || mkdir -p "$R/usr/lib64"
	tar -C "$R" -cf "$IT_TMP/rootfs.tar" . || fail_all "cannot pack the rootfs"
	IMG=localhost/iotracer-it-ldd:$$
	podman import -q "$IT_TMP/rootfs.tar" "$IMG" >"$IT_TMP/import.out" 2>&1 ||
		fail_all "podman import: $(tail -n 1 "$IT_TMP/import.out")"
	_it_register podman "image $IMG"
fi

dev=$(mk_loop 64 fill) || fail_all "cannot create a loop device"
name=$(devname "$dev")
wait_quiet "$dev" 5
PORT=$(free_port) || fail_all "no free TCP port"
CN=iotracer-it-deploy-$$
if [[ -n $BUILT ]]; then
	# the DaemonSet's arguments, its metrics port a free one (the image's entrypoint before them)
	mapfile -t DSARGS < <(python3 -c '
import sys, yaml
(c,) = yaml.safe_load(open(sys.argv[1]))["spec"]["template"]["spec"]["containers"]
for a in c["args"]:
    print(":" + sys.argv[2] if a.startswith(":") else a)' "$IT_ROOT/deploy/daemonset.yaml" "$PORT")
	note "the image $BUILT with the DaemonSet's arguments: ${DSARGS[*]}"
	PODMAN_OPTS="--name $CN $QUIRKS" "$RUN" "$BUILT" "${DSARGS[@]}" >"$IT_TMP/run.out" 2>&1
else
	PODMAN_OPTS="--name $CN $QUIRKS" "$RUN" "$IMG" /usr/bin/iotracer --no-live -q -d "$name" -l block \
		--metrics "127.0.0.1:$PORT" >"$IT_TMP/run.out" 2>&1
fi || {
	fail run_traces "podman-run.sh: $(tail -n 2 "$IT_TMP/run.out" | tr '\n' ' ')"
	it_end
}
_it_register podman "container $CN"
for ((i = 0; i < 150; i++)); do
	curl -sf --max-time 2 -o "$IT_TMP/m0.txt" "http://127.0.0.1:$PORT/metrics" && break
	[[ $(podman inspect -f '{{.State.Running}}' "$CN" 2>/dev/null) == true ]] || break
	sleep 0.2
done
if [[ ! -s $IT_TMP/m0.txt ]]; then
	fail run_traces "no /metrics from the container: $(podman logs "$CN" 2>&1 | tail -n 5 | tr '\n' ' ')"
	it_end
fi
sleep 1 # attached before /metrics is served; a second for good measure
NR=1500
fio --name=deploy --filename="$dev" --ioengine=psync --direct=1 --rw=randread --bs=4k \
	--size=32M --number_ios=$NR --randrepeat=0 --output-format=json --output="$IT_TMP/fio.json" \
	>/dev/null 2>&1 || fail_all "fio failed"
IOS=$(fio_read_ios "$IT_TMP/fio.json")
sel="layer=\"block\",device=\"$name\",op=\"read\""
for ((i = 0; i < 30; i++)); do
	sleep 0.5
	curl -sf --max-time 2 -o "$IT_TMP/m1.txt" "http://127.0.0.1:$PORT/metrics" || continue
	got=$(awk -v k="iotracer_request_size_bytes_count{$sel}" '$1 == k { print $2 }' "$IT_TMP/m1.txt")
	[[ ${got:-} == "$IOS" ]] && break
done
# completions not seen: still in flight (gauge) or already counted missed
missed=$(awk '/^iotracer_lost_requests_total\{layer="block",reason="missed"\}/ ||
	/^iotracer_inflight_requests\{layer="block"\}/ { s += $2 } END { print s + 0 }' "$IT_TMP/m1.txt")
note "container $CN: block reads on $name ${got:-absent}, fio total_ios $IOS, missed ${missed:-0}; logs: $(podman logs "$CN" 2>&1 | head -n 3 | tr '\n' ' ')"
[[ -n ${got:-} ]] || note "its /metrics ($(wc -l <"$IT_TMP/m1.txt" 2>/dev/null || echo no) lines): $(grep -E '^iotracer_(request_size_bytes_count|requests_total|hook_attached)' "$IT_TMP/m1.txt" 2>/dev/null | head -n 12 | tr '\n' ' ')"
accounted "${got:-0}" "$IOS" "${missed:-0}" 0
rc=$?
check run_traces "/metrics block reads ${got:-absent}, fio $IOS, missed ${missed:-0}" test "$rc" = 0
it_end
