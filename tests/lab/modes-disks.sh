# shellcheck shell=bash
# The disk matrix of tests/lab/test_modes.sh (sourced): LAB_MODES_DISKS, a
# comma-separated list of FORMAT:AIO:BUS[:FLAG...], one extra disk each in the
# same guest boot:
#   FORMAT  raw       raw image file
#           blockdev  a loop device over a file, given to QEMU as a host block device
#           qcow2     qcow2 whose 64 KiB clusters were allocated in shuffled order
#           overlay   qcow2 overlay on a raw backing file, half of its clusters
#                     (shuffled) in the overlay, the rest read from the backing file
#   AIO     threads | native | io_uring   (cache=none)
#   BUS     virtio-blk | virtio-scsi | nvme
#   FLAG    iothread  an -object iothread for the device
#           mq        virtio-blk num-queues=2
#           wb        cache=writeback (with threads)
#           json      given as libvirt does: -blockdev JSON node chain
#                     (file/host_device node + format node), -device drive=NODE
#           sparse    (qcow2) only every other cluster allocated before boot: the
#                     guest's reads of the others are zeros QEMU serves with no
#                     host IO, which must come out unjoined as no_host_io
# Every 4 KiB block of every image holds its own guest offset (the host's
# ioload stamps them before boot; the guest's writes stamp the same): the
# oracle reads the host file a joined host IO names at the offset it names,
# and finds the guest offset of the request there, or the join was wrong.
# For qcow2 images, the offset is also checked against `qemu-img map` after
# the run.

MD_DEFAULT="qcow2:threads:virtio-blk,qcow2:native:virtio-blk:sparse,overlay:threads:virtio-blk,blockdev:native:virtio-scsi:iothread,raw:io_uring:virtio-blk,raw:threads:nvme"
# LAB_FULL=1 adds these. vda + the matrix must stay within the 16 serials a
# guest's link filter carries (LINK_FILTER_MAX): beyond, the guest names only the
# first 16 and the host stops tracing the others' files (found by this matrix,
# left to guest.c). The rest of the combinations: through LAB_MODES_DISKS.
MD_FULL="raw:threads:virtio-blk:wb,raw:native:virtio-blk,qcow2:native:virtio-blk,overlay:io_uring:virtio-blk,blockdev:threads:virtio-blk,qcow2:threads:virtio-blk:wb:json,raw:native:virtio-blk:iothread:mq,qcow2:native:virtio-scsi,qcow2:io_uring:nvme"
MD_MAX=15
MD_MB=32
md_specs=()  # one spec per disk
md_serial=() # labmx01 ...
md_img=()    # the file QEMU opens (a loop device for blockdev)
md_data=()   # for the oracle: ino:path of every file of the disk
md_loops=()  # loop devices to detach

# The list in force: LAB_MODES_DISKS, else the default set (+ the rest with LAB_FULL=1).
md_list() {
	if [[ -n ${LAB_MODES_DISKS+x} ]]; then
		printf '%s\n' "$LAB_MODES_DISKS"
	elif [[ ${LAB_FULL:-0} == 1 ]]; then
		printf '%s,%s\n' "$MD_DEFAULT" "$MD_FULL"
	else
		printf '%s\n' "$MD_DEFAULT"
	fi
}

# Check-name part of a spec: FORMAT_AIO_BUS[_FLAG...].
md_name() { tr ':' '_' <<<"$1"; }

# md_check_spec SPEC: empty when valid, else why.
md_check_spec() {
	local f a b x
	IFS=: read -r f a b x <<<"$1"
	[[ $f =~ ^(raw|blockdev|qcow2|overlay)$ ]] || { echo "format '$f' (raw|blockdev|qcow2|overlay)"; return; }
	[[ $a =~ ^(threads|native|io_uring)$ ]] || { echo "aio '$a' (threads|native|io_uring)"; return; }
	[[ $b =~ ^(virtio-blk|virtio-scsi|nvme)$ ]] || { echo "bus '$b' (virtio-blk|virtio-scsi|nvme)"; return; }
	for x in $(cut -d: -f4- <<<"$1" | tr ':' ' '); do
		[[ $x =~ ^(iothread|mq|wb|json|sparse)$ ]] || { echo "flag '$x' (iothread|mq|wb|json|sparse)"; return; }
	done
	[[ $f == qcow2 || :$1: != *:sparse:* ]] || echo "flag sparse (qcow2 only)"
}

# md_stamp FILE: a MD_MB MiB file whose 4 KiB blocks hold their offsets.
md_stamp() {
	truncate -s "${MD_MB}M" "$1" &&
		"$MD_IOLOAD" -d "$1" -n $((MD_MB * 256)) -b 4096 -m write >/dev/null
}

# md_qcow2_fill IMG SRC STEP: write every STEP-th 64 KiB cluster of SRC into
# IMG (qcow2), in shuffled order: the image's clusters are not in guest order.
md_qcow2_fill() {
	local img=$1 src=$2 step=$3 dir c args=()
	dir=$(mktemp -d "$MD_TMP/cl.XXXXXX")
	for c in $(seq 0 "$step" $((MD_MB * 16 - 1)) | shuf); do
		dd if="$src" of="$dir/$c" bs=64k skip="$c" count=1 status=none
		args+=(-c "write -q -s $dir/$c $((c * 65536)) 64k")
	done
	qemu-io -f qcow2 "${args[@]}" "$img" >/dev/null
	rm -rf "$dir"
}

ino_of() { stat -L -c %i "$1"; }

# md_make_one I SPEC: the images of disk I and its QEMU arguments (MD_ARGS).
md_make_one() {
	local i=$1 f a b flags s img base loop drv cache=none dev node fmt
	IFS=: read -r f a b _ <<<"$2"
	flags=:$(cut -d: -f4- <<<"$2"):
	s=$(printf 'labmx%02d' "$i")
	img=$MD_TMP/m$i
	case $f in
	raw)
		md_stamp "$img.raw" || return 1
		img=$img.raw
		md_data[i]="$(ino_of "$img"):$img"
		;;
	blockdev)
		md_stamp "$img.raw" || return 1
		loop=$(losetup -f --show "$img.raw") || return 1
		md_loops+=("$loop")
		md_data[i]="$(ino_of "$loop"):$img.raw"
		img=$loop
		;;
	qcow2)
		md_stamp "$img.src" || return 1
		qemu-img create -q -f qcow2 "$img.qcow2" "${MD_MB}M" || return 1
		md_qcow2_fill "$img.qcow2" "$img.src" "$([[ $flags == *:sparse:* ]] && echo 2 || echo 1)" || return 1
		rm -f "$img.src"
		img=$img.qcow2
		md_data[i]="$(ino_of "$img"):$img"
		;;
	overlay)
		base=$img.base.raw
		md_stamp "$base" || return 1
		qemu-img create -q -f qcow2 -b "$base" -F raw "$img.qcow2" || return 1
		md_qcow2_fill "$img.qcow2" "$base" 2 || return 1
		img=$img.qcow2
		md_data[i]="$(ino_of "$img"):$img $(ino_of "$base"):$base"
		;;
	esac
	md_serial[i]=$s
	md_img[i]=$img
	[[ $flags == *:wb:* ]] && cache=writeback
	fmt=raw
	[[ $f == qcow2 || $f == overlay ]] && fmt=qcow2
	if [[ $flags == *:json:* ]]; then
		# libvirt's shape: a protocol node, a format node on it, the device on the latter
		drv="file"
		[[ $f == blockdev ]] && drv=host_device
		MD_ARGS+=" -blockdev {\"driver\":\"$drv\",\"filename\":\"$img\",\"node-name\":\"mxf$i\",\"aio\":\"$a\",\"cache\":{\"direct\":$([[ $cache == none ]] && echo true || echo false),\"no-flush\":false},\"auto-read-only\":true,\"discard\":\"unmap\"}"
		MD_ARGS+=" -blockdev {\"node-name\":\"mxn$i\",\"read-only\":false,\"cache\":{\"direct\":$([[ $cache == none ]] && echo true || echo false),\"no-flush\":false},\"driver\":\"$fmt\",\"file\":\"mxf$i\"}"
		node=mxn$i
	else
		MD_ARGS+=" -drive file=$img,if=none,id=mx$i,format=$fmt,cache=$cache,aio=$a"
		node=mx$i
	fi
	local it=""
	if [[ $flags == *:iothread:* ]]; then
		MD_ARGS+=" -object iothread,id=mxio$i"
		it=",iothread=mxio$i"
	fi
	case $b in
	virtio-blk)
		dev="virtio-blk-pci,drive=$node,serial=$s$it"
		[[ $flags == *:mq:* ]] && dev+=",num-queues=2"
		MD_ARGS+=" -device $dev"
		;;
	virtio-scsi)
		MD_ARGS+=" -device virtio-scsi-pci,id=mxscsi$i$it -device scsi-hd,drive=$node,bus=mxscsi$i.0,serial=$s"
		;;
	nvme)
		MD_ARGS+=" -device nvme,drive=$node,serial=$s"
		;;
	esac
}

# md_make TMP: every disk of md_list; sets MD_ARGS, LAB_G_MDISKS. 1 on failure (MD_WHY).
# shellcheck disable=SC2034 # MD_WHY is read by test_modes.sh
md_make() {
	local i=0 spec why
	MD_TMP=$1
	MD_ARGS=""
	MD_IOLOAD=$MD_TMP/ioload-host
	cc -O2 -o "$MD_IOLOAD" "$LAB_SRC/ioload.c" 2>"$MD_TMP/ioload-cc.log" || {
		MD_WHY="cannot build the host's ioload: $(tail -n 1 "$MD_TMP/ioload-cc.log")"
		return 1
	}
	IFS=, read -r -a md_specs <<<"$(md_list)"
	if ((${#md_specs[@]} > MD_MAX)); then
		MD_WHY="LAB_MODES_DISKS: ${#md_specs[@]} disks, at most $MD_MAX (vda + them: the 16 serials of a guest's link filter)"
		return 1
	fi
	for spec in "${md_specs[@]}"; do
		i=$((i + 1))
		why=$(md_check_spec "$spec")
		[[ -z $why ]] || { MD_WHY="LAB_MODES_DISKS: '$spec': bad $why"; return 1; }
		md_make_one "$i" "$spec" || { MD_WHY="cannot make the images of '$spec'"; return 1; }
	done
	LAB_G_MDISKS="${md_serial[*]}"
	export LAB_G_MDISKS
}

md_cleanup() {
	local l
	for l in "${md_loops[@]}"; do losetup -d "$l" 2>/dev/null; done
	md_loops=()
}

# md_file_of I INO: the path of disk I's file with inode INO.
md_file_of() {
	local e
	for e in ${md_data[$1]}; do
		[[ ${e%%:*} == "$2" ]] && { printf '%s\n' "${e#*:}"; return; }
	done
}

# md_wrong I PATHS: joined paths of disk I whose first host IO's file does not
# hold the guest offset at the host offset (the data oracle), or, for qcow2,
# whose host offset is not where `qemu-img map` puts the guest offset. The
# wrong ones are listed in PATHS.wrong.
md_wrong() {
	local i=$1 paths=$2 bad=0 goff ino hoff exp file v map='[]' zero=0
	if [[ ${md_img[i]} == *.qcow2 ]]; then
		map=$(qemu-img map --output=json -U "${md_img[i]}" 2>/dev/null) || map='"none"'
	fi
	# a sparse disk's block never written whose cluster another write allocated
	# holds zeros: there qemu-img map alone says where the guest offset lives
	[[ :${md_specs[i - 1]}: == *:sparse:* ]] && zero=1
	: >"$paths.wrong"
	while read -r goff ino hoff exp; do
		file=$(md_file_of "$i" "$ino")
		v=$([[ -n $file ]] && od -An -t u8 -j "$hoff" -N 8 "$file" | tr -d ' ')
		if [[ -z $file || ($v != "$goff" && ($zero == 0 || $v != 0 || $exp == -)) ]] ||
			[[ $exp != - && $exp != "$hoff" ]]; then
			bad=$((bad + 1))
			echo "guest offset $goff: host file ${file:-(inode $ino unknown)} offset $hoff holds ${v:-?}, qemu-img map: $exp" >>"$paths.wrong"
		fi
	done < <(jq -r --argjson m "$map" 'select(.joined) | .offset as $g
		| (if ($m | type) != "array" then "none" elif ($m | length) == 0 then "-"
		   else ($m | map(select(.start <= $g and $g < .start + .length and .data))[0]
			 | if . then .offset + $g - .start else "none" end) end) as $e
		| "\($g) \(.host_io[0].ino) \(.host_io[0].offset) \($e)"' "$paths")
	echo "$bad"
}

# md_sparse_check NAME I PATHS M N J W REASONS: a sparse qcow2 disk. The reads
# of clusters still unallocated after the run (`qemu-img map`: the guest's
# writes all came before its reads of other blocks) had no host IO: each must
# be unjoined as no_host_io and nothing else unjoined; every joined one right;
# >= 97 % of the others joined.
md_sparse_check() {
	local name=$1 i=$2 paths=$3 m=$4 n=$5 j=$6 w=$7 reasons=$8 map zr bad other
	map=$(qemu-img map --output=json -U "${md_img[i]}" 2>/dev/null) || map='[]'
	# zero reads (unallocated at the end), and unjoined ones that are not such a read with no_host_io
	read -r zr bad < <(jq -s -r --argjson m "$map" '
		def alloc($g): any($m[]; .start <= $g and $g < .start + .length and .data);
		(map(select(.op == "read" and (alloc(.offset) | not))) | length) as $z
		| (map(select((.joined | not) and (.op != "read" or alloc(.offset) or .unjoined_reason != "no_host_io"))) | length) as $b
		| "\($z) \($b)"' "$paths")
	other=$((m - zr))
	pct=$(awk -v j="$j" -v n="$other" 'BEGIN { printf "%.1f", n ? 100 * j / n : 0 }')
	check "$name" "$([[ $m -gt 0 && $n == "$m" && $w == 0 && $zr -gt 0 && $bad == 0 ]] && awk -v p="$pct" 'BEGIN { exit !(p >= 97) }'; echo $?)" \
		"$j of $other guest requests with a host IO joined ($pct %), $w wrong; $zr reads of unallocated clusters, $bad unjoined otherwise; unjoined by reason $reasons; $n paths for $m ops"
	note "$name: $j of $m guest requests joined, $zr of them reads of unallocated clusters (no host IO), $w wrong, $((n - j)) unjoined by reason $reasons"
}

# md_checks T OUT: per disk lab_modes_T_<spec>_join. The guest's ops per disk
# are the `mload SERIAL {json}` lines of ioload.txt.
md_checks() {
	local t=$1 out=$2 i n m j w pct reasons name
	for i in "${!md_serial[@]}"; do
		name=${PFX}_${t}_$(md_name "${md_specs[i - 1]}")_join
		m=$(awk -v s="${md_serial[i]}" '$1 == "mload" && $2 == s' "$out/ioload.txt" | cut -d' ' -f3- | jq -s 'map(.ops) | add // 0')
		hostj "$out" "select(.type == \"path\" and .serial == \"${md_serial[i]}\")" |
			jq -s -c 'group_by([.session, .seq])[] | (map(select(.joined)) + .)[0]' >"$out/paths-${md_serial[i]}.txt"
		n=$(wc -l <"$out/paths-${md_serial[i]}.txt")
		j=$(jq -s 'map(select(.joined)) | length' "$out/paths-${md_serial[i]}.txt")
		w=$(md_wrong "$i" "$out/paths-${md_serial[i]}.txt")
		reasons=$(jq -s -c 'map(select(.joined | not) | .unjoined_reason) | group_by(.) | map({(.[0]): length}) | add // {}' "$out/paths-${md_serial[i]}.txt")
		pct=$(awk -v j="$j" -v n="$m" 'BEGIN { printf "%.1f", n ? 100 * j / n : 0 }')
		if [[ :${md_specs[i - 1]}: == *:sparse:* ]]; then
			md_sparse_check "$name" "$i" "$out/paths-${md_serial[i]}.txt" "$m" "$n" "$j" "$w" "$reasons"
			continue
		fi
		check "$name" "$([[ $m -gt 0 && $n == "$m" && $w == 0 ]] && awk -v p="$pct" 'BEGIN { exit !(p >= 97) }'; echo $?)" \
			"$j of $m guest requests joined ($pct %), $w wrong, $((n - j)) unjoined by reason $reasons; $n paths for $m ops"
		note "$name: $j of $m guest requests joined ($pct %), $w wrong, $((n - j)) unjoined by reason $reasons"
	done
}
