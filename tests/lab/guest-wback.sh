# shellcheck shell=sh source-path=SCRIPTDIR
# Guest side of the writeback attribution test (runs as /lab/run.sh under
# busybox sh; the host side is tests/lab/test_wback.sh). Needs /lab/guest-lib.sh,
# /lab/iotracer (static) and an ext4 file system on /dev/vda (made on the host:
# the guest has no mkfs).
#
# 1. mounts cgroup2 on /cg, enables +io +memory for its children, makes
#    /cg/wa, /cg/wb (buffered writers) and /cg/wd (a direct writer), mounts
#    /dev/vda on /mnt;
# 2. starts `iotracer -q --no-live -j out.json -d vda` and waits until it attached;
# 3. copies each cgroup's io.stat (before), runs in each cgroup one dd:
#    wa 24 MiB buffered, wb 8 MiB buffered, wd 8 MiB O_DIRECT; then sync, and
#    io.stat again (after);
# 4. stops iotracer, sends out.json, iotracer.err, cg.txt (`cg NAME ID`: the
#    cgroup's id, its directory's inode), iostat.txt (`before|after NAME
#    io.stat-line`) and steps.txt back as one bundle.
# Exit status 0 when everything ran and iotracer exited 0, 1 otherwise.
set -u
# shellcheck source=guest-lib.sh # /lab/guest-lib.sh in the guest
. /lab/guest-lib.sh
guest_init /tmp/wback
CG=/cg

# in_cg NAME CMD...: CMD in cgroup NAME (a child shell moves itself, then execs)
in_cg() {
	_n=$1
	shift
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG/$_n" "$@"
}

iostat() { # WHEN
	for n in wa wb wd; do
		sed "s|^|$1 $n |" "$CG/$n/io.stat" >>"$W/iostat.txt"
		grep -q . "$CG/$n/io.stat" || echo "$1 $n" >>"$W/iostat.txt"
	done
}

setup() {
	mkdir -p "$CG" /mnt || return 1
	mount -t cgroup2 none "$CG" || { echo "no cgroup2 mount"; return 1; }
	echo "+io +memory" >"$CG/cgroup.subtree_control" || { echo "cannot enable +io +memory"; return 1; }
	for n in wa wb wd; do
		mkdir "$CG/$n" || return 1
		echo "cg $n $(stat -c %i "$CG/$n")" >>"$W/cg.txt"
	done
	mount -t ext4 /dev/vda /mnt || { echo "cannot mount ext4 on /dev/vda"; return 1; }
}

step start
: >"$W/cg.txt"
: >"$W/iostat.txt"
pid=""
if setup; then
	/lab/iotracer -q --no-live -j "$W/out.json" -d vda >"$W/iotracer.out" 2>"$W/iotracer.err" &
	pid=$!
	if wait_attached "$pid" "$W/out.json"; then
		step attached
		sync
		iostat before
		in_cg wa dd if=/dev/zero of=/mnt/a bs=1M count=24 2>/dev/null || rc=1
		in_cg wb dd if=/dev/zero of=/mnt/b bs=1M count=8 2>/dev/null || rc=1
		in_cg wd dd if=/dev/zero of=/mnt/d bs=1M count=8 oflag=direct 2>/dev/null || rc=1
		step written
		sync
		sleep 1
		iostat after
		step synced
	else
		echo "iotracer did not attach"
		rc=1
	fi
else
	rc=1
fi
stop_iotracer "$pid"
cat "$W/iostat.txt"
[ -s "$W/iotracer.err" ] && grep -iE 'error|fail|warn|abort|assert' "$W/iotracer.err" | head -n 5
send_bundle "$W" out.json iotracer.err cg.txt iostat.txt steps.txt
exit "$rc"
