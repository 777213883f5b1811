#!/usr/bin/env bash
# unit_sandbox.sh UNIT HOSTDIR -- PROGRAM ARGS...: run PROGRAM the way systemd would run the
# service of UNIT (an installed iotracer.service), as far as that can be done without
# systemd as PID 1 (containers, this test machine), in a private mount namespace:
#   ProtectSystem=strict   every mount read-only but /dev, /proc, /sys and the paths below
#   ProtectControlGroups   /sys/fs/cgroup read-only
#   StateDirectory=X       /var/lib/X writable (HOSTDIR/state bound there, mode StateDirectoryMode)
#   LogsDirectory=X        /var/log/X writable (HOSTDIR/logs)
#   RuntimeDirectory=X     /run/X writable (HOSTDIR/run)
#   ReadWritePaths=        (those three only: what the shipped unit lists)
#   PrivateTmp=yes         a fresh /tmp and /var/tmp
#   UMask=                 the unit's
#   CapabilityBoundingSet, AmbientCapabilities, NoNewPrivileges: setpriv
# The config HOSTDIR/etc/iotracer.conf is at /run/iotracer-etc/iotracer.conf, read-only.
# Not emulated (seccomp and namespaces systemd sets up): SystemCallArchitectures,
# RestrictAddressFamilies, MemoryDenyWriteExecute, RestrictRealtime, RestrictSUIDSGID,
# ProtectClock, ProtectHostname, ProtectKernelLogs, ProtectKernelModules,
# RestrictNamespaces, LockPersonality: test_service.sh checks what the daemon does against
# them instead (its socket families, its memory maps).
set -u
unit=$1 host=$2
shift 3 # UNIT HOSTDIR --

val() { sed -n "s/^$1=//p" "$unit" | tail -n 1; }
state=$(val StateDirectory) logs=$(val LogsDirectory) run=$(val RuntimeDirectory)
umask_v=$(val UMask)
# the unit's capabilities this process can give (a container may lack some: then the
# service would not get them either)
have=$(capsh --decode="$(awk '/^CapBnd/ { print $2 }' /proc/self/status)" | cut -d= -f2 | tr ',' ' ')
capset() {
	local c out=""
	for c in $(val "$1" | tr 'A-Z' 'a-z'); do
		case " $have " in *" $c "*) out+=",+${c#cap_}" ;; esac
	done
	echo "${out#,}"
}
caps=$(capset CapabilityBoundingSet) amb=$(capset AmbientCapabilities)
mkdir -p "$host/state" "$host/logs" "$host/run" "$host/etc"
sm=$(val StateDirectoryMode)
[ -n "$sm" ] && chmod "$sm" "$host/state"

exec unshare -m --propagation private bash -c '
set -e
host=$1 state=$2 logs=$3 run=$4 um=$5 caps=$6 amb=$7
shift 7
# the writable directories, on tmpfs parents so that nothing of the machine is created
mount -t tmpfs -o mode=0755 tmpfs /var/lib && mkdir -p "/var/lib/$state" &&
	mount --bind "$host/state" "/var/lib/$state"
if [ -n "$logs" ]; then
	mount -t tmpfs -o mode=0755 tmpfs /var/log && mkdir -p "/var/log/$logs" &&
		mount --bind "$host/logs" "/var/log/$logs"
fi
mount -t tmpfs -o mode=0755 tmpfs /run && mkdir -p "/run/$run" /run/iotracer-etc &&
	mount --bind "$host/run" "/run/$run" && mount --bind "$host/etc" /run/iotracer-etc
# the program as the unit has it at a fixed path (/usr/bin): the checkout may be under
# /tmp or /var/tmp, which PrivateTmp hides below
mkdir -p /run/iotracer-bin && : >/run/iotracer-bin/prog &&
	mount --bind "$1" /run/iotracer-bin/prog
shift
rw="/var/lib/$state /run/$run"
[ -n "$logs" ] && rw="$rw /var/log/$logs"
# ProtectSystem=strict (+ ProtectControlGroups): everything else read-only
findmnt -rn -o TARGET | while read -r t; do
	t=$(printf "%b" "$t")
	case "$t" in
	/sys/fs/cgroup | /sys/fs/cgroup/*) ;;
	/dev | /dev/* | /proc | /proc/* | /sys | /sys/*) continue ;;
	esac
	case " $rw " in *" $t "*) continue ;; esac
	mount -o remount,bind,ro "$t" 2>/dev/null || true
done
mount -o remount,bind,ro /run/iotracer-etc
# PrivateTmp
mount -t tmpfs tmpfs /tmp && mount -t tmpfs tmpfs /var/tmp
umask "$um"
exec setpriv --no-new-privs --bounding-set=-all,"$caps" --inh-caps=-all,"$amb" \
	--ambient-caps=-all,"$amb" -- /run/iotracer-bin/prog "$@"
' sh "$host" "$state" "$logs" "$run" "${umask_v:-0022}" "$caps" "$amb" "$@"
