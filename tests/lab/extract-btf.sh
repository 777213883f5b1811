#!/bin/bash
# extract-btf.sh IMAGE OUT
#   Cuts the kernel's own BTF (what /sys/kernel/btf/vmlinux shows at run time) out
#   of a kernel image that is not an ELF file, such as Debian's arm64 vmlinuz (a
#   raw, possibly gzip-compressed Image; the package's System.map is a stub). The
#   .BTF section is loaded with the kernel, so the blob is in the Image as is:
#   the first BTF header (magic 0xeb9f, version 1, 24-byte header) whose type
#   section is over 1 MB, cut to hdr_len + max(type_off + type_len, str_off +
#   str_len). `bpftool btf dump file OUT format c` makes a vmlinux.h of it.
#   Exit 0 when OUT holds a blob bpftool can read, 1 otherwise.
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 IMAGE OUT" >&2; exit 2; }
img=$1 out=$2
tmp=""
trap '[[ -z $tmp ]] || rm -f "$tmp"' EXIT
if [[ $(head -c 2 "$img" | od -An -tx1 | tr -d ' ') == 1f8b ]]; then
	tmp=$(mktemp)
	gzip -dc "$img" >"$tmp"
	img=$tmp
fi
u32() { od -An -tu4 -j "$1" -N 4 "$img" | tr -d ' '; } # little-endian host and image
while read -r off; do
	hl=$(u32 $((off + 4)))
	to=$(u32 $((off + 8)))
	tl=$(u32 $((off + 12)))
	so=$(u32 $((off + 16)))
	sl=$(u32 $((off + 20)))
	[[ $hl == 24 && $tl -gt 1000000 ]] || continue
	end=$((to + tl > so + sl ? to + tl : so + sl))
	dd if="$img" of="$out" bs=1M iflag=skip_bytes,count_bytes skip="$off" count=$((hl + end)) status=none
	if bpftool btf dump file "$out" >/dev/null 2>&1; then
		echo "extract-btf: $out from offset $off ($((hl + end)) bytes)" >&2
		exit 0
	fi
done < <(LC_ALL=C grep -obUaP '\x9f\xeb\x01\x00\x18\x00\x00\x00' "$img" | cut -d: -f1)
rm -f "$out"
exit 1
