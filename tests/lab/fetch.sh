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
# private apt configuration in $LAB_DIR/apt-bullseye: sources.list, lists/,
# cache/; `apt-get update` there when its lists are missing or a day old); a
# full release such as 6.1.0-56-amd64 pins one. Prints "SERIES KVER" per
# kernel on stdout.
#
# Exit codes: 0 ok; 3 = cannot be had here (no apt, no package, no network):
# callers turn that into SKIP.
#
# Cache ($LAB_DIR):
#   debs/                    downloaded .deb files
#   apt-SUITE/               private apt configuration of a series the
#                            machine's sources lack (lab_suite_of in lib.sh)
#   busybox/bin/busybox      from busybox-static
#   kernels/SERIES.kver      full release chosen for SERIES
#   kernels/KVER/root/       dpkg -x of the kernel package (+ depmod output)
#   kernels/KVER/vmlinux     uncompressed kernel (absent if extraction failed)
#   kernels/KVER/boot        path of the image to boot (vmlinux or vmlinuz)
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
	dir=$LAB_DIR/apt-$suite
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

# Package name of the newest installable kernel image of SERIES (empty if none).
pick_pkg() {
	local series=$1 re p cand arch
	arch=$(lab_arch_of "$series")
	series=${series%-arm64}
	re="^linux-image-${series//./\\.}(\\.0-[0-9]+|\\.[0-9]+\\+deb[0-9]+)-$arch-unsigned\$"
	command -v apt-cache >/dev/null 2>&1 || return 0
	while read -r p; do
		cand=$(apt-cache "${APT_OPTS[@]}" policy "$p" 2>/dev/null | awk '/Candidate:/ { print $2 }')
		if [[ -n $cand && $cand != "(none)" ]]; then
			printf '%s\n' "$p"
			return 0
		fi
	done < <(apt-cache "${APT_OPTS[@]}" pkgnames "linux-image-$series" 2>/dev/null | grep -E "$re" | sort -Vr)
}

# apt-get download PKG (of ARCH, default amd64) into debs/ unless a .deb of it is
# already there; prints its path.
download() {
	local pkg=$1 arch=${2:-amd64} deb
	mkdir -p "$LAB_DIR/debs"
	deb=$(find "$LAB_DIR/debs" -maxdepth 1 -name "${pkg}_*_$arch.deb" -print | sort -V | tail -n 1)
	if [[ -z $deb ]]; then
		lab_log "apt-get download $pkg ($arch)"
		(cd "$LAB_DIR/debs" && apt-get "${APT_OPTS[@]}" download -qq -o APT::Sandbox::User=root "$pkg" >&2) ||
			lab_unavail "apt-get download $pkg failed"
		deb=$(find "$LAB_DIR/debs" -maxdepth 1 -name "${pkg}_*_$arch.deb" -print | sort -V | tail -n 1)
		[[ -n $deb ]] || lab_unavail "apt-get download $pkg left no .deb"
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
	local series=$1 pkg kver kdir deb tmp vmlinuz arch
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
	fi
	kdir=$(lab_kdir "$kver")
	if [[ ! -f $kdir/.done ]]; then
		local t0
		t0=$(lab_now)
		if ! deb=$(download "$pkg" "$arch"); then
			# e.g. offline with a newer ABI in the apt lists: keep using the cached kernel.
			use_cached "$series" || lab_unavail "cannot download $pkg"
			return 0
		fi
		rm -rf "$kdir"
		mkdir -p "$LAB_DIR/kernels"
		tmp=$(mktemp -d "$LAB_DIR/kernels/.x.XXXXXX")
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
		mv "$tmp" "$kdir"
		lab_log "kernel $kver ready in $(lab_since "$t0") s"
	fi
	printf '%s\n' "$kver" >"$LAB_DIR/kernels/$series.kver"
	printf '%s %s\n' "$series" "$kver"
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
