# shellcheck shell=bash
# Common helpers for the QEMU lab scripts (sourced, not executed).
#
# Environment:
#   LAB_DIR      cache directory (default: <repo>/build/lab)
#   LAB_CACHE    download cache of fetch.sh, shared by clones (default: $LAB_CACHE_SYSTEM
#                when root, else LAB_DIR)
#   LAB_VERBOSE  1 = echo more progress to stderr

LAB_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_REPO=$(cd "$LAB_SRC/../.." && pwd)
LAB_DIR=${LAB_DIR:-$LAB_REPO/build/lab}
mkdir -p "$LAB_DIR"
LAB_DIR=$(cd "$LAB_DIR" && pwd)
export LAB_DIR
# shellcheck disable=SC2034 # read by fetch.sh
LAB_CACHE_SYSTEM=/var/cache/iotracer-lab

# Default guest kernel series, in the order the lab runs them.
# shellcheck disable=SC2034 # used by the scripts that source this file
LAB_SERIES_DEFAULT="5.10 6.1 6.12"
# test_drivers.sh's boots: the default kernels, 6.12 in guest mode, and 6.12 with kprobes
# shellcheck disable=SC2034 # read by test_drivers.sh and tests/integration/test_lab.sh
LAB_DRIVERS_DEFAULT="5.10 6.1 6.12+guest" # LAB_FULL=1 adds 6.12+kprobe (forced kprobes) and 6.1-arm64

# Series this machine's apt sources do not carry, and the Debian suite that has
# them: fetch.sh reads that suite through a private apt configuration under
# $LAB_DIR/apt-SUITE (the machine's /etc/apt is never changed).
LAB_SERIES_SUITES="5.10:bullseye 6.1-arm64:bookworm"
LAB_APT_MIRROR=${LAB_APT_MIRROR:-http://deb.debian.org/debian}
LAB_APT_KEYRING=${LAB_APT_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}

# The Debian suite of SERIES if it needs a private apt configuration, else nothing.
lab_suite_of() {
	local pair
	for pair in $LAB_SERIES_SUITES; do
		[[ ${pair%%:*} == "$1" ]] && printf '%s\n' "${pair#*:}"
	done
	return 0
}

lab_log() { printf '[lab] %s\n' "$*" >&2; }
lab_die() { printf '[lab] error: %s\n' "$*" >&2; exit 1; }
# Something the lab needs cannot be had here: exit 3, which callers report as SKIP.
lab_unavail() { printf '[lab] unavailable: %s\n' "$*" >&2; exit 3; }

# Nanoseconds since the epoch; elapsed seconds (3 decimals) since a stamp.
lab_now() { date +%s%N; }
lab_since() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }

# True when KVER looks like a full Debian kernel release (6.1.0-56-amd64,
# 6.12.117+deb12-amd64, 6.1.0-50-arm64), false for a series alias (6.1, 6.12,
# 6.1-arm64).
lab_is_full_kver() { [[ $1 =~ ^[0-9]+\.[0-9]+\.[0-9]+.*-(amd64|arm64)$ ]]; }

# Debian architecture of a series or release: *-arm64 is arm64 (a QEMU virt
# machine under TCG, docs/lab.md "arm64"), anything else amd64.
lab_arch_of() { if [[ $1 == *-arm64 ]]; then echo arm64; else echo amd64; fi; }

# Static busybox of an architecture (fetch.sh puts it there).
lab_busybox() {
	if [[ $1 == arm64 ]]; then
		printf '%s\n' "$LAB_DIR/busybox-arm64/bin/busybox"
	else
		printf '%s\n' "$LAB_DIR/busybox/bin/busybox"
	fi
}

# Series alias of a full kernel release: 6.1.0-56-amd64 -> 6.1, 6.12.117+deb12-amd64 -> 6.12,
# 5.10.0-32-amd64 -> 5.10, 6.1.0-50-arm64 -> 6.1-arm64.
lab_series_of() {
	local k=$1 sfx=""
	lab_is_full_kver "$k" || { printf '%s\n' "$k"; return 0; }
	[[ $(lab_arch_of "$k") == arm64 ]] && sfx=-arm64
	[[ $k =~ ^([0-9]+)\.([0-9]+)\. ]]
	printf '%s.%s%s\n' "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "$sfx"
}

# Resolve a series alias (6.1) or a full release to the full release that
# fetch.sh recorded in the cache. Fails if it was never fetched.
lab_resolve_kver() {
	local k=$1 f
	if lab_is_full_kver "$k"; then
		printf '%s\n' "$k"
		return 0
	fi
	f=$LAB_DIR/kernels/$k.kver
	[[ -s $f ]] || lab_unavail "kernel series $k not fetched yet (run tests/lab/fetch.sh $k)"
	cat "$f"
}

# Directory of one fetched kernel: root/ (dpkg -x), vmlinux (if extracted), boot (path to boot image).
lab_kdir() { printf '%s/kernels/%s\n' "$LAB_DIR" "$1"; }

# Host tools the lab needs: "command:package" pairs.
LAB_TOOLS="qemu-system-x86_64:qemu-system-x86 qemu-img:qemu-utils cpio:cpio xz:xz-utils depmod:kmod modprobe:kmod dpkg-deb:dpkg gcc:gcc timeout:coreutils zstd:zstd"
# More for arm64 guests: `make deps-arm64` installs them (it adds the arm64 dpkg
# architecture for the cross build's static libraries).
# shellcheck disable=SC2034 # used by fetch.sh
LAB_TOOLS_ARM64="qemu-system-aarch64 aarch64-linux-gnu-gcc"

# C compiler building static guest programs (ioload) for an architecture.
lab_cc_of() { if [[ $1 == arm64 ]]; then echo aarch64-linux-gnu-gcc; else echo gcc; fi; }

# Prints the packages of the missing tools (empty if all present).
lab_missing_pkgs() {
	local pair cmd pkg out=""
	for pair in $LAB_TOOLS; do
		cmd=${pair%%:*}
		pkg=${pair#*:}
		if command -v "$cmd" >/dev/null 2>&1 || [[ -x /sbin/$cmd || -x /usr/sbin/$cmd ]]; then
			continue
		fi
		[[ " $out " == *" $pkg "* ]] || out="$out $pkg"
	done
	# gcc -static needs libc.a (libc6-dev, only a Recommends of gcc).
	lab_have_static_libc || out="$out libc6-dev"
	printf '%s\n' "${out# }"
}

# The static C library is needed for `gcc -static` (libc6-dev ships libc.a).
lab_have_static_libc() {
	local a
	a=$(gcc -print-file-name=libc.a 2>/dev/null) || return 1
	[[ $a == /* && -f $a ]]
}

# lab_step CMD...: run a step in the background and wait for it, so that a TERM/INT
# sent to the calling script alone (a test runner's timeout) can be forwarded to it
# (its pid is in LAB_CHILD while it runs): boot.sh then kills its QEMU and cleans up.
LAB_CHILD=""
lab_step() {
	"$@" &
	LAB_CHILD=$!
	local rc=0
	wait "$LAB_CHILD" || rc=$?
	LAB_CHILD=""
	return "$rc"
}
