#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# initramfs.sh KVER
#   Builds (or reuses) the base initramfs of kernel KVER (a series such as 6.1 /
#   6.12 that fetch.sh fetched, or a full release) and prints its path:
#   $LAB_DIR/initramfs/KVER.cpio, an uncompressed newc cpio (TCG decompresses
#   slowly). Contents:
#     /init                       tests/lab/init
#     /bin/busybox + applet links  from busybox-static
#     /bin/ioload                 tests/lab/ioload.c, gcc -static
#     /lib/modules/KVER/...       closure of the lab modules, .ko.xz/.ko.zst
#                                 decompressed (busybox insmod loads plain .ko),
#                                 depmod'ed (busybox modprobe works too)
#     /etc/lab/modules            insmod order (from `modprobe --show-depends`)
#   Rebuilt only when an input changed (script, init, busybox, ioload.c,
#   kernel, module list).
#
# initramfs.sh --overlay OUT GUEST_SCRIPT [EXTRA_DIR]
#   Builds the small per-boot cpio that boot.sh appends to the base one (the
#   kernel unpacks concatenated archives in order): /lab/run.sh = GUEST_SCRIPT,
#   EXTRA_DIR's files under /lab (default $LAB_EXTRA, e.g. a static iotracer),
#   and /lab/env exporting every host variable named LAB_G_* (same name).
#
# Environment: LAB_MODULES overrides the module list; LAB_MODULES_EXTRA adds to it.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

# Modules the lab guest loads, in this order (each after its own closure).
# Required ones must exist as module or builtin; the others are loaded when the
# kernel has them. The crc algorithms go first: on 6.1, crc-t10dif and
# crc64-rocksoft (t10-pi, needed by nvme-core and sd_mod) look their crypto
# algorithm up when they load.
MODS_REQUIRED="nvme virtio_pci virtio_blk sd_mod virtio_scsi virtio_console"
MODS_DEFAULT="crct10dif_generic crc64_rocksoft_generic $MODS_REQUIRED virtio_net vmw_vsock_virtio_transport vsock_loopback ext4"

tmp=""
cleanup() { [[ -z $tmp ]] || rm -rf "$tmp"; }
trap cleanup EXIT

mkcpio() { # DIR OUT
	local out=$2
	(cd "$1" && find . -mindepth 1 -print | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$out.part.$$"
	mv -f "$out.part.$$" "$out"
}

# Build tests/lab/ioload.c for ARCH into $LAB_DIR/bin/ioload (amd64) or
# $LAB_DIR/bin/ARCH/ioload if missing or stale.
build_ioload() {
	local arch=$1 src=$LAB_SRC/ioload.c bin=$LAB_DIR/bin/ioload cc
	cc=$(lab_cc_of "$arch")
	[[ $arch == amd64 ]] || bin=$LAB_DIR/bin/$arch/ioload
	if [[ ! -x $bin || $src -nt $bin ]]; then
		[[ $arch != amd64 ]] || lab_have_static_libc ||
			lab_unavail "no static libc (install libc6-dev) to build ioload"
		command -v "$cc" >/dev/null 2>&1 || lab_unavail "no $cc to build ioload (make deps-arm64)"
		mkdir -p "$(dirname "$bin")"
		"$cc" -static -O2 -Wall -Wextra -o "$bin.part.$$" "$src"
		mv -f "$bin.part.$$" "$bin"
	fi
	printf '%s\n' "$bin"
}

overlay() {
	local out=$1 script=$2 extra=${3:-${LAB_EXTRA:-}} v
	[[ -f $script ]] || lab_die "guest script $script not found"
	mkdir -p "$LAB_DIR/tmp"
	tmp=$(mktemp -d "$LAB_DIR/tmp/overlay.XXXXXX")
	mkdir -p "$tmp/lab"
	if [[ -n $extra ]]; then
		[[ -d $extra ]] || lab_die "LAB_EXTRA $extra is not a directory"
		cp -a "$extra/." "$tmp/lab/"
	fi
	install -m 0755 "$script" "$tmp/lab/run.sh"
	: >"$tmp/lab/env"
	while IFS= read -r v; do
		[[ -n $v ]] || continue
		printf "export %s='%s'\n" "$v" "$(printf '%s' "${!v}" | sed "s/'/'\\\\''/g")" >>"$tmp/lab/env"
	done < <(compgen -v LAB_G_ || true)
	mkcpio "$tmp" "$out"
}

base() {
	local kver kdir mroot bb ioload mods key keyfile out m line rel t0 n
	t0=$(lab_now)
	kver=$(lab_resolve_kver "$1")
	kdir=$(lab_kdir "$kver")
	[[ -f $kdir/.done ]] || lab_unavail "kernel $kver not fetched (run tests/lab/fetch.sh)"
	mroot=$kdir/root
	bb=$(lab_busybox "$(lab_arch_of "$kver")")
	[[ -x $bb ]] || lab_unavail "no busybox in the cache (run tests/lab/fetch.sh)"
	ioload=$(build_ioload "$(lab_arch_of "$kver")")
	mods=${LAB_MODULES:-$MODS_DEFAULT}
	mods="$mods ${LAB_MODULES_EXTRA:-}"

	out=$LAB_DIR/initramfs/$kver.cpio
	keyfile=$LAB_DIR/initramfs/$kver.key
	key=$({
		cat "$0" "$LAB_SRC/init" "$LAB_SRC/lib.sh"
		sha256sum "$bb" "$ioload"
		stat -c '%Y' "$kdir/.done"
		echo "$mods"
	} | sha256sum | cut -d' ' -f1)
	if [[ -f $out && -f $keyfile && $(cat "$keyfile") == "$key" ]]; then
		printf '%s\n' "$out"
		return 0
	fi

	mkdir -p "$LAB_DIR/initramfs" "$LAB_DIR/tmp"
	tmp=$(mktemp -d "$LAB_DIR/tmp/initramfs.XXXXXX")
	local r=$tmp/root
	mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,etc/lab,dev,proc,sys,tmp,run,root,lab,lib/modules/"$kver"}

	# busybox and its applets (another architecture's busybox cannot run here: the
	# applet list comes from this machine's, the same Debian busybox-static build)
	install -m 0755 "$bb" "$r/bin/busybox"
	while read -r line; do
		[[ -n $line && $line != bin/busybox ]] || continue
		[[ -e $r/$line ]] || ln -s /bin/busybox "$r/$line"
	done < <("$(lab_busybox amd64)" --list-full)
	install -m 0755 "$ioload" "$r/bin/ioload"
	install -m 0755 "$LAB_SRC/init" "$r/init"
	# The kernel opens /dev/console before /init runs (devtmpfs is not mounted yet).
	mknod -m 600 "$r/dev/console" c 5 1 2>/dev/null || true
	mknod -m 666 "$r/dev/null" c 1 3 2>/dev/null || true
	echo "root:x:0:0:root:/root:/bin/sh" >"$r/etc/passwd"
	echo "root:x:0:" >"$r/etc/group"

	# Module closure in load order, deduplicated.
	local order=() seen=" " builtin=" " missing_req=""
	for m in $mods; do
		local deps
		if ! deps=$(modprobe -C /dev/null -d "$mroot" -S "$kver" --show-depends "$m" 2>/dev/null); then
			if [[ " $MODS_REQUIRED " == *" $m "* ]]; then
				missing_req="$missing_req $m"
			else
				lab_log "$kver: no module $m (skipped)"
			fi
			continue
		fi
		while read -r line; do
			case $line in
			builtin\ *) builtin="$builtin${line#builtin } " ;;
			insmod\ *)
				rel=${line#insmod }
				rel=${rel%% *}
				rel=${rel#"$mroot/lib/modules/$kver/"}
				if [[ $seen != *" $rel "* ]]; then
					seen="$seen$rel "
					order+=("$rel")
				fi
				;;
			esac
		done <<<"$deps"
	done
	[[ -z $missing_req ]] || lab_die "$kver lacks required modules:$missing_req"

	: >"$r/etc/lab/modules"
	for rel in "${order[@]}"; do
		local src=$mroot/lib/modules/$kver/$rel dst plain
		plain=$rel
		case $rel in
		*.ko.xz) plain=${rel%.xz} ;;
		*.ko.zst) plain=${rel%.zst} ;;
		*.ko.gz) plain=${rel%.gz} ;;
		esac
		dst=$r/lib/modules/$kver/$plain
		mkdir -p "$(dirname "$dst")"
		case $rel in
		*.ko.xz) xz -dc "$src" >"$dst" ;;
		*.ko.zst) zstd -dcq "$src" -o "$dst" ;;
		*.ko.gz) gzip -dc "$src" >"$dst" ;;
		*) cp "$src" "$dst" ;;
		esac
		echo "$plain" >>"$r/etc/lab/modules"
	done
	for m in modules.builtin modules.builtin.modinfo modules.order; do
		[[ -f $mroot/lib/modules/$kver/$m ]] && cp "$mroot/lib/modules/$kver/$m" "$r/lib/modules/$kver/"
	done
	depmod -b "$r" "$kver"
	printf '%s\n' "$builtin" >"$r/etc/lab/builtin"

	mkcpio "$r" "$out"
	echo "$key" >"$keyfile"
	n=${#order[@]}
	lab_log "initramfs $kver: $n modules, $(du -h "$out" | cut -f1) in $(lab_since "$t0") s"
	printf '%s\n' "$out"
}

case ${1:-} in
--overlay)
	[[ $# -ge 3 && $# -le 4 ]] || lab_die "usage: $0 --overlay OUT GUEST_SCRIPT [EXTRA_DIR]"
	overlay "$2" "$3" "${4:-}"
	;;
"" | -h | --help)
	sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	[[ -n ${1:-} ]] || exit 2
	;;
*)
	[[ $# -eq 1 ]] || lab_die "usage: $0 KVER"
	base "$1"
	;;
esac
