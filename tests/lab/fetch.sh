#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# fetch.sh [SERIES...]   (default: 5.10 6.1 6.12)
#
# Idempotent. Installs the host tools the lab needs if missing (qemu-system-x86,
# qemu-utils, cpio, xz-utils, kmod), downloads (never installs) the Debian kernel
# image package of each series and busybox-static with `apt-get download`,
# unpacks them into the cache with `dpkg -x`, runs `depmod -b`, and extracts the
# uncompressed vmlinux for a fast PVH boot.
#
# SERIES is 6.1 (-> linux-image-6.1.0-N-amd64-unsigned, highest ABI N apt knows),
# 6.12 (-> linux-image-6.12.N+debV-amd64-unsigned) or 5.10 (Debian 11's
# linux-image-5.10.0-N-amd64-unsigned, from the bullseye suite, read through a
# private apt configuration in $LAB_CACHE/apt-bullseye: sources.list, lists/,
# cache/; `apt-get update` there when its lists are missing or a day old); a
# full release such as 6.1.0-56-amd64 pins one. Prints "SERIES KVER" per
# kernel on stdout.
#
# Exit codes: 0 ok; 3 = cannot be had here (no apt, no package, no network):
# callers turn that into SKIP.
#
# Download cache ($LAB_CACHE, lib.sh: /var/cache/iotracer-lab for root, the
# way apt keeps /var/cache/apt, so a fresh clone downloads nothing; else
# $LAB_DIR), shared by every clone, written under its flock (.lock):
#   debs/                    downloaded .deb files (a series' older ABIs are
#                            removed when a newer one is downloaded)
#   apt-SUITE/               private apt configuration of a series the
#                            machine's sources lack (lab_suite_of in lib.sh)
#   kernels/KVER/root/       dpkg -x of the kernel package (+ depmod output)
#   kernels/KVER/vmlinux     uncompressed kernel (absent if extraction failed)
#   kernels/KVER/boot        path of the image to boot (vmlinux or vmlinuz)
# Cache ($LAB_DIR, the clone's build/lab):
#   busybox/bin/busybox      from busybox-static
#   kernels/SERIES.kver      full release chosen for SERIES
#   kernels/KVER             a symbolic link to $LAB_CACHE/kernels/KVER (or,
#                            as a clone's cache kept it before, that directory)
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

ensure_tools() {
	local missing
	missing=$(lab_missing_pkgs)
	[[ -z $missing ]] && return 0
	[[ $(id -u) -eq 0 ]] || lab_unavail "missing packages ($missing) and not root to install them"
	command -v apt-get >/dev/null 2>&1 || lab_unavail "missing packages ($missing) and no apt-get"
	lab_log "installing:$missing"
	# shellcheck disable=SC2086 # word splitting of the package list is intended
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >&2; then
		apt-get update -qq >&2 || true
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >&2 ||
			lab_unavail "apt-get install$missing failed"
	fi
	missing=$(lab_missing_pkgs)
	[[ -z $missing ]] || lab_unavail "still missing after install: $missing"
}

# arm64 guests: QEMU's aarch64 system emulator and the cross toolchain with the
# arm64 static libraries (make deps-arm64: multiarch, changes dpkg's architectures).
ensure_tools_arm64() {
	local t missing=""
	for t in $LAB_TOOLS_ARM64; do
		command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
	done
	[[ -z $missing ]] && return 0
	[[ $(id -u) -eq 0 ]] || lab_unavail "missing$missing for arm64 guests and not root to run make deps-arm64"
	lab_log "missing$missing: make deps-arm64"
	make -C "$LAB_REPO" -s deps-arm64 >&2 || lab_unavail "make deps-arm64 failed"
}

# apt options of SERIES: none (the machine's sources), or a private configuration
# reading only SERIES's suite (lib.sh lab_suite_of), whose lists are refreshed
# when missing or older than a day. Sets the array APT_OPTS.
APT_OPTS=()
apt_setup() {
	local suite dir arch
	APT_OPTS=()
	suite=$(lab_suite_of "$1")
	arch=$(lab_arch_of "$1")
	[[ -n $suite ]] || return 0
	[[ -r $LAB_APT_KEYRING ]] || lab_unavail "no $LAB_APT_KEYRING (debian-archive-keyring) to check $suite"
	dir=$LAB_CACHE/apt-$suite
	[[ $arch == amd64 ]] || dir=$dir-$arch
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
	printf 'deb [signed-by=%s] %s %s main\n' "$LAB_APT_KEYRING" "$LAB_APT_MIRROR" "$suite" \
		>"$dir/sources.list"
	APT_OPTS=(-o "Dir::Etc::sourcelist=$dir/sources.list" -o Dir::Etc::sourceparts=-
		  -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache")
	# another architecture's packages: only that one (the machine's dpkg is not asked)
	[[ $arch == amd64 ]] || APT_OPTS+=(-o "APT::Architecture=$arch" -o "APT::Architectures=$arch")
	if [[ -z $(find "$dir/lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 -print -quit) ]]; then
		lab_log "apt-get update ($suite, private lists in $dir)"
		apt-get "${APT_OPTS[@]}" -qq -o APT::Sandbox::User=root update >&2 ||
			lab_log "apt-get update of $suite failed: using the lists there are"
	fi
}

# The package names of SERIES's kernel images (a regular expression).
pkg_re() {
	local series=${1%-arm64} arch
	arch=$(lab_arch_of "$1")
	printf '%s\n' "^linux-image-${series//./\\.}(\\.0-[0-9]+|\\.[0-9]+\\+deb[0-9]+)-$arch-unsigned\$"
}

# Package name of the newest installable kernel image of SERIES (empty if none).
pick_pkg() {
	local series=$1 re p cand
	re=$(pkg_re "$series")
	series=${series%-arm64}
	command -v apt-cache >/dev/null 2>&1 || return 0
	while read -r p; do
		cand=$(apt-cache "${APT_OPTS[@]}" policy "$p" 2>/dev/null | awk '/Candidate:/ { print $2 }')
		if [[ -n $cand && $cand != "(none)" ]]; then
			printf '%s\n' "$p"
			return 0
		fi
	done < <(apt-cache "${APT_OPTS[@]}" pkgnames "linux-image-$series" 2>/dev/null | grep -E "$re" | sort -Vr)
}

# The download cache is shared by every clone on the machine: one fetch.sh at a
# time uses it (apt-get update of a private suite, downloads, pruning), from
# main's call to the exit (the lock of a cached fetch is held for well under a
# second).
cache_lock() {
	local fd
	if [[ -z ${LAB_CACHE:-} ]]; then
		LAB_CACHE=$LAB_DIR
		[[ $(id -u) -eq 0 ]] && mkdir -p "$LAB_CACHE_SYSTEM" 2>/dev/null && LAB_CACHE=$LAB_CACHE_SYSTEM
	fi
	mkdir -p "$LAB_CACHE" || lab_die "cannot create the download cache $LAB_CACHE (LAB_CACHE)"
	exec {fd}>>"$LAB_CACHE/.lock" || lab_die "cannot open $LAB_CACHE/.lock"
	flock "$fd" || lab_die "cannot lock $LAB_CACHE/.lock"
}

# The newest .deb of PKG (of ARCH) in DIR, if any.
find_deb() { find "$3" -maxdepth 1 -name "${1}_*_$2.deb" -print 2>/dev/null | sort -V | tail -n 1; }

# apt-get download PKG (of ARCH, default amd64) into $LAB_CACHE/debs unless a
# .deb of it is already there (or in $LAB_DIR/debs, where a clone's cache kept
# them before); prints its path. With RE, other .debs whose package name
# matches RE (the series' older ABIs) are removed after a download.
download() {
	local pkg=$1 arch=${2:-amd64} re=${3:-} deb d old
	mkdir -p "$LAB_CACHE/debs"
	deb=$(find_deb "$pkg" "$arch" "$LAB_CACHE/debs")
	[[ -n $deb ]] || deb=$(find_deb "$pkg" "$arch" "$LAB_DIR/debs")
	if [[ -z $deb ]]; then
		lab_log "apt-get download $pkg ($arch) into $LAB_CACHE/debs"
		(cd "$LAB_CACHE/debs" && apt-get "${APT_OPTS[@]}" download -qq -o APT::Sandbox::User=root "$pkg" >&2) ||
			lab_unavail "apt-get download $pkg failed"
		deb=$(find_deb "$pkg" "$arch" "$LAB_CACHE/debs")
		[[ -n $deb ]] || lab_unavail "apt-get download $pkg left no .deb"
		if [[ -n $re ]]; then
			for d in "$LAB_CACHE"/debs/*_"$arch".deb; do
				old=$(basename "$d")
				old=${old%%_*}
				[[ $d != "$deb" && $old != "$pkg" && $old =~ $re ]] || continue
				lab_log "removing $(basename "$d") and its extraction from the download cache (superseded by $pkg)"
				rm -f "$d"
				old=${old#linux-image-}
				rm -rf "${LAB_CACHE:?}/kernels/${old%-unsigned}"
			done
		fi
	fi
	printf '%s\n' "$deb"
}

# busybox-static of ARCH (APT_OPTS set for that architecture).
fetch_busybox() {
	local arch=${1:-amd64} bb deb tmp
	bb=$(lab_busybox "$arch")
	[[ -x $bb ]] && return 0
	deb=$(download busybox-static "$arch")
	tmp=$(mktemp -d "$LAB_DIR/busybox.XXXXXX")
	tmpdirs+=("$tmp")
	dpkg -x "$deb" "$tmp"
	[[ -x $tmp/bin/busybox ]] || { rm -rf "$tmp"; lab_die "busybox-static has no bin/busybox"; }
	mkdir -p "$(dirname "$bb")"
	mv -f "$tmp/bin/busybox" "$bb"
	rm -rf "$tmp"
}

# The kernel fetch.sh recorded for SERIES earlier, if it is complete.
use_cached() {
	local series=$1 kver
	[[ -s $LAB_DIR/kernels/$series.kver ]] || return 1
	kver=$(cat "$LAB_DIR/kernels/$series.kver")
	[[ -f $(lab_kdir "$kver")/.done ]] || return 1
	lab_log "using cached kernel $kver for $series"
	printf '%s %s\n' "$series" "$kver"
}

fetch_kernel() {
	local series=$1 pkg kver kdir ckdir deb tmp vmlinuz arch re=""
	arch=$(lab_arch_of "$series")
	apt_setup "$(lab_series_of "$series")"
	if [[ $arch == arm64 ]]; then
		ensure_tools_arm64
		fetch_busybox arm64
	fi
	if lab_is_full_kver "$series"; then
		kver=$series
		pkg=linux-image-$kver-unsigned
		series=$(lab_series_of "$kver")
	else
		pkg=$(pick_pkg "$series")
		if [[ -z $pkg ]]; then
			use_cached "$series" || lab_unavail "no linux-image-${series%-arm64}*-$arch-unsigned package known to apt"
			return 0
		fi
		kver=${pkg#linux-image-}
		kver=${kver%-unsigned}
		re=$(pkg_re "$series")
	fi
	kdir=$(lab_kdir "$kver")
	# extracted once per machine into the download cache; the clone's kernels/KVER
	# is a symbolic link to it (the same directory when LAB_CACHE is LAB_DIR)
	ckdir=$LAB_CACHE/kernels/$kver
	if [[ ! -f $kdir/.done && -f $ckdir/.done ]]; then
		lab_log "kernel $kver from the download cache $LAB_CACHE"
		link_kernel "$ckdir" "$kdir"
	elif [[ ! -f $kdir/.done ]]; then
		local t0
		t0=$(lab_now)
		if ! deb=$(download "$pkg" "$arch" "$re"); then
			# e.g. offline with a newer ABI in the apt lists: keep using the cached kernel.
			use_cached "$series" || lab_unavail "cannot download $pkg"
			return 0
		fi
		rm -rf "$ckdir"
		mkdir -p "$LAB_CACHE/kernels"
		tmp=$(mktemp -d "$LAB_CACHE/kernels/.x.XXXXXX")
		tmpdirs+=("$tmp")
		lab_log "dpkg -x $(basename "$deb")"
		dpkg -x "$deb" "$tmp/root"
		vmlinuz=$tmp/root/boot/vmlinuz-$kver
		[[ -f $vmlinuz ]] || { rm -rf "$tmp"; lab_die "$deb has no boot/vmlinuz-$kver"; }
		[[ -d $tmp/root/lib/modules/$kver ]] || { rm -rf "$tmp"; lab_die "$deb has no lib/modules/$kver"; }
		# iotracer is CO-RE: a kernel without BTF is of no use to the lab.
		grep -qx 'CONFIG_DEBUG_INFO_BTF=y' "$tmp/root/boot/config-$kver" ||
			{ rm -rf "$tmp"; lab_unavail "$kver has no CONFIG_DEBUG_INFO_BTF"; }
		grep -qx 'CONFIG_DEBUG_INFO_BTF_MODULES=y' "$tmp/root/boot/config-$kver" ||
			lab_log "$kver has no module BTF (CONFIG_DEBUG_INFO_BTF_MODULES, 5.11+)"
		depmod -b "$tmp/root" "$kver"
		if [[ $arch == arm64 ]]; then
			# QEMU boots the arm64 Image as it is; its BTF (vmlinux/arm64/vmlinux.h) is cut out
			echo "root/boot/vmlinuz-$kver" >"$tmp/boot"
			"$LAB_SRC/extract-btf.sh" "$vmlinuz" "$tmp/btf" || lab_log "no BTF found in $kver's Image"
		elif "$LAB_SRC/extract-vmlinux.sh" "$vmlinuz" "$tmp/vmlinux"; then
			echo "vmlinux" >"$tmp/boot"
		else
			lab_log "vmlinux extraction failed for $kver: booting the bzImage (slower)"
			echo "root/boot/vmlinuz-$kver" >"$tmp/boot"
		fi
		touch "$tmp/.done"
		mv "$tmp" "$ckdir"
		link_kernel "$ckdir" "$kdir"
		lab_log "kernel $kver ready in $(lab_since "$t0") s"
	fi
	printf '%s\n' "$kver" >"$LAB_DIR/kernels/$series.kver"
	printf '%s %s\n' "$series" "$kver"
}

# link_kernel CACHED KDIR: the clone's kernels/KVER points at the cache's
link_kernel() {
	[[ $1 == "$2" ]] && return 0
	mkdir -p "$(dirname "$2")"
	rm -rf "$2"
	ln -s "$1" "$2"
}

# Partial extractions are removed on any exit.
tmpdirs=()
cleanup() {
	local d
	for d in "${tmpdirs[@]}"; do
		[[ -e $d ]] && rm -rf "$d"
	done
	return 0
}
trap cleanup EXIT

main() {
	local t0 s
	t0=$(lab_now)
	ensure_tools
	cache_lock
	APT_OPTS=()
	fetch_busybox
	# shellcheck disable=SC2086 # the default list is space separated
	[[ $# -gt 0 ]] || set -- $LAB_SERIES_DEFAULT
	for s in "$@"; do
		fetch_kernel "$s"
	done
	lab_log "fetch done in $(lab_since "$t0") s"
}

main "$@"
