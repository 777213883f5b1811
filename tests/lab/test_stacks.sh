#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# test_stacks.sh: one request through the storage stacks servers run (issue 42):
# a partition, dm-linear over two disks, dm-crypt, LVM (dm-linear) on dm-crypt,
# md raid1 and md raid5 over 3 disks, in one boot per kernel (LAB_STK_KERNELS,
# "6.12"; 6.1 and 5.10 under LAB_FULL). The guest script (guest-stacks.sh) makes
# the stacks with Debian's dmsetup and mdadm, runs one iotracer over all of them
# and fio on each stack's top device: direct randread and randwrite, buffered
# write (fsync at its end) and buffered read. Checks per kernel K and setup S:
#
#   lab_stk_K_run       the guest ran, every stack was made, iotracer attached
#                       and exited 0, the bundle arrived
#   lab_stk_K_S_fio     fio's own counts: as many pread64/pwrite64 records on
#                       the top device as fio's direct ops, each with a block
#                       request on a disk below it (a member: block[].stack)
#   lab_stk_K_S_owner   0 member requests of S's runs owned by anything but fio
#                       (no kcryptd, dmcrypt_write, raid5d, md or kworker)
#   lab_stk_K_iostat, lab_stk_K_blame   the cgroups phase on dm-crypt (check_cgroups)
#   lab_stk_K_S_q2r, lab_stk_K_S_d2c    S = lin, crypt: blktrace on the stacks'
#                       devices, started before iotracer; in S's window (blktrace's clock
#                       set to iotracer's by the first queue on the top device), per request
#                       paired by (op, sector, occurrence), none unpaired, the means of
#                       the upper bios' queue -> remap and of their members' D2C
#                       within LAB_STK_TOL (3) % of blktrace's (check_btt)
#   lab_stk_K_S_stat    per device of the stack (the top, each level between,
#                       each disk and partition): iotracer's read and write
#                       requests (upper bios for dm/md: the kernel counts its
#                       bios) completed in S's window == the /sys/block stat
#                       delta (reads + writes completed; a flush is a write
#                       there and a sync request here)
#
# SKIP (never PASS) when the kernel cannot be fetched or booted, or dmsetup,
# mdadm or fio are not installed here (make deps-test). Files:
# $LAB_DIR/runs/stacks-<k>/. Environment: LAB_STK_KERNELS, LAB_STK_SETUPS,
# LAB_STK_IOS (100), LAB_TIMEOUT (240 s), and what boot.sh reads.
# shellcheck disable=SC2016 # jq expressions in single quotes
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"

KERNELS=${LAB_STK_KERNELS:-6.12} # 6.1 (md_io_acct, 5.14-6.4) and 5.10 with LAB_FULL=1
[[ ${LAB_FULL:-0} == 1 ]] && KERNELS=${LAB_STK_KERNELS:-5.10 6.1 6.12}
[[ $# -gt 0 ]] && KERNELS=$*
SETUPS=${LAB_STK_SETUPS:-part lin crypt lvc r1 r5}
export LAB_G_STK_SETUPS=$SETUPS
export LAB_G_STK_IOS=${LAB_STK_IOS:-100}
export LAB_TIMEOUT=${LAB_TIMEOUT:-240}
export LAB_DISK_MB=64
STK_TOL=${LAB_STK_TOL:-3}
export LAB_MODULES_EXTRA="dm-mod dm-crypt xts ecb aes_generic raid1 raid456"
unset LAB_HOST_HOOK
STATIC=$LAB_DIR/iotracer-static
NAMES=""
for k in $KERNELS; do
	NAMES="$NAMES lab_stk_${k}_run"
	[[ " $SETUPS " == *" crypt "* ]] && NAMES="$NAMES lab_stk_${k}_iostat lab_stk_${k}_blame"
	for s in lin crypt; do [[ " $SETUPS " == *" $s "* ]] && NAMES="$NAMES lab_stk_${k}_${s}_q2r lab_stk_${k}_${s}_d2c"; done
	for s in $SETUPS; do NAMES="$NAMES lab_stk_${k}_${s}_fio lab_stk_${k}_${s}_owner lab_stk_${k}_${s}_stat"; done
done

lab_begin stacks
t0=$(lab_now)

# guest_tool DIR PROG: PROG with the libraries ldd names and their loader
guest_tool() {
	local bin lib
	bin=$(command -v "$2" || echo "/usr/sbin/$2")
	[[ -x $bin ]] || return 1
	cp "$bin" "$1/$2" || return 1
	for lib in $(ldd "$bin" | grep -oE '/[^ ]+\.so[^ ]*'); do
		[[ -f $1/$(basename "$lib") ]] || cp -L "$lib" "$1/$(basename "$lib")" || return 1
	done
}

# the MBR of nvme0n1: partition 1 of type 83 at sector 2048, 65536 sectors
mbr_image() { # FILE
	local le
	truncate -s "${LAB_DISK_MB}M" "$1" || return 1
	le=$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' 0 8 0 0 0 0 1 0)
	{
		printf '\x00\x00\x00\x00\x83\x00\x00\x00'
		printf '%b' "$le"
	} | dd of="$1" bs=1 seek=446 conv=notrunc status=none &&
		printf '\x55\xaa' | dd of="$1" bs=1 seek=510 conv=notrunc status=none
}

for t in dmsetup mdadm fio blktrace blkparse; do
	command -v "$t" >/dev/null 2>&1 || [[ -x /usr/sbin/$t ]] || {
		rest SKIP "$t not installed here (make deps-test)"
		exit 0
	}
done
if ! build_static amd64; then
	rest FAIL "$BUILD_WHY"
	exit 1
fi
export LAB_EXTRA=$tmp/extra
if ! guest_extra "$LAB_EXTRA" || ! guest_tool "$LAB_EXTRA" dmsetup ||
	! guest_tool "$LAB_EXTRA" mdadm || ! guest_tool "$LAB_EXTRA" fio ||
	! guest_tool "$LAB_EXTRA" bpftool || ! guest_tool "$LAB_EXTRA" blktrace; then
	rest FAIL "cannot put iotracer, dmsetup, mdadm, fio, bpftool and their libraries in $LAB_EXTRA"
	exit 1
fi
export LAB_NVME_IMG=$tmp/nvme.img
if ! mbr_image "$LAB_NVME_IMG"; then
	rest FAIL "cannot make the partitioned nvme image"
	exit 1
fi
qargs=""
for i in 1 2 3 4 5; do
	truncate -s "${LAB_DISK_MB}M" "$tmp/x$i.img"
	qargs="$qargs -drive file=$tmp/x$i.img,if=none,id=x$i,format=raw -device virtio-blk-pci,drive=x$i,serial=labstk$i"
done
export LAB_QEMU_ARGS="${LAB_QEMU_ARGS:-}$qargs"

# ------------------------------------------------------------ the checks of one boot
# One pass of jq over out.json (it is read once: a pass costs ~0.5 s under load) into
# $out/t.tsv, tab separated:
#   R id kind syscall comm cgroup_id dev ts_ns dio members   a request (members: its
#                                                         block requests from a stack)
#   B id comm cgroup_id dev devno op sector nr_sectors bytes q_ns c_ns d2c_ns role how
#     upper q2r_ns                                        one of its block requests
#   L id others_ns culprits (cgroup_id:ns,...) root_ns    the daemon's blame line
#   A note                                                the remap hook's attach note
# (- or -1: absent)
extract() {
	jq -rn 'inputs
		| if .type == "request" then . as $r
			| ([.block[]? | select(.stack.role == "member")] | length) as $m
			| ([ "R", .id, .kind, (.syscall // "-"), .comm, .cgroup_id, (.dev // "-"), .ts_ns,
			     (if .fs.dio then 1 else 0 end), $m ] | map(tostring) | join("\t")),
			  (.block[]? | [ "B", $r.id, $r.comm, $r.cgroup_id, .dev, .devno, .op, (.sector // -1),
			     .nr_sectors, .bytes, .q_ns, .c_ns, (.d2c_ns // -1), (.stack.role // "-"),
			     (.stack.how // "-"), (.stack.upper // "-"), (.stack.q2r_ns // -1) ]
			     | map(tostring) | join("\t"))
		  elif .type == "blame" and .id != null then
			[ "L", .id, .others_ns, ([.culprits[]? | "\(.who.cgroup_id // 0):\(.ns)"] | join(",")),
			  ([.culprits[]? | select(.who.cgroup == "/") | .ns] | add // 0) ] | map(tostring) | join("\t")
		  elif .type == "attach" and .hook == "block_bio_remap" then "A\t\(.note // .reason // "")"
		  else empty end' "$out/out.json" >"$out/t.tsv"
}

# window S: "start end" of setup S's runs in ns (guest uptime = CLOCK_MONOTONIC)
window() {
	awk -v s="$1" '$1 == "step" && $2 == s "_start" { a = $3 } $1 == "step" && $2 == s "_end" { b = $3 }
		END { printf "%.0f %.0f\n", a * 1e9, b * 1e9 }' "$out/steps.txt"
}

# top_of S: the name of setup S's top device (dm-N for /dev/mapper/NAME)
top_of() {
	local top
	top=$(awk -v s="$1" '$1 == "stack" && $2 == s { print $3 }' "$out/devs.txt")
	awk -v n="${top##*/}" '$1 == "dev" && ($2 == n || $4 == n) { print $2; exit }' "$out/devs.txt"
}

# not_followed S: why this kernel's stacks do not tell setup S's owners (the
# remap hook's attach note, docs/hooks.md "The stack layer"), or nothing
not_followed() {
	local why
	why=$(awk -F'\t' '$1 == "A" { print $2; exit }' "$out/t.tsv")
	case $1 in
	crypt | lvc) [[ $why == *dm-crypt* ]] && echo "$why" ;;
	r5) [[ $why == *raid5* ]] && echo "$why" ;;
	esac
}

check_setup() { # K S
	local k=$1 s=$2 pfx=lab_stk_$1_$2 top a b want got bad line nf names
	top=$(top_of "$s")
	read -r a b < <(window "$s")
	# fio: direct ops of dr and dw
	want=$(jq '[.jobs[] | select(.jobname == "dr" or .jobname == "dw") | .read.total_ios, .write.total_ios] | add' "$out/fio-$s.json" 2>/dev/null || echo 0)
	read -r got bad < <(awk -F'\t' -v top="$top" -v a="$a" -v b="$b" '$1 == "R" && $3 == "syscall" &&
		$7 == top && $5 == "fio" && ($4 == "pread64" || $4 == "pwrite64") && $8 >= a && $8 <= b && $9 == 1 {
			n++; if (!$10) x++ } END { print n + 0, x + 0 }' "$out/t.tsv")
	note "$pfx: fio direct ops $want, iotracer's $got on $top, $bad of them without a member request"
	nf=$(not_followed "$s")
	if [[ -n $nf ]]; then
		report SKIP "${pfx}_fio" "$kver: $nf"
		report SKIP "${pfx}_owner" "$kver: $nf"
		check_stat "$k" "$s" "$a" "$b"
		return
	fi
	if ((want > 0 && got == want && bad == 0)); then report PASS "${pfx}_fio"; else
		report FAIL "${pfx}_fio" "fio did $want direct ops on $top, iotracer has $got syscall records, $bad without a member request"; fi
	# owners of the member requests in the window: the requests holding them
	line=$(awk -F'\t' -v a="$a" -v b="$b" '$1 == "B" && $14 == "member" && $12 >= a && $12 <= b {
			n++; if ($3 != "fio") { x++; c[$3] = 1 } }
		END { s = ""; for (k in c) s = s (s ? "," : "") k; print n + 0, x + 0, s }' "$out/t.tsv")
	read -r got bad names <<<"$line"
	note "$pfx: $got member requests, $bad owned by others than fio ${names:-}"
	if ((got > 0 && bad == 0)); then report PASS "${pfx}_owner"; else
		report FAIL "${pfx}_owner" "$got member requests, $bad owned by ${names:-nobody}, not fio"; fi
	check_stat "$k" "$s" "$a" "$b"
}

# Per device moved in setup S's window: the kernel's count (/sys/block stat:
# reads + writes completed; flushes, field 16, apart) against iotracer's
# requests completed in the window. Disks: their read and write requests,
# and the flush machinery's own requests (op sync, no bio) against the
# flushes. dm and md: their upper bios (the kernel counts bios there); md
# does not count an empty flush bio since 5.14 (md_flush_request takes it
# before md_account_bio; md_make_request counted it before), dm does (as a
# write). Partitions: the disk's requests
# that name the partition.
check_stat() { # K S A B
	local pfx=lab_stk_$1_$2 s=$2 a=$3 b=$4 dev want got bad="" rows="" mdflush=0
	# md counts an empty flush bio before 5.14 (md_make_request's own accounting)
	[[ $(printf '%s\n' "$kver" 5.14 | sort -V | head -n 1) != 5.14 ]] && mdflush=1
	awk -F'\t' -v a="$a" -v b="$b" -v mdflush="$mdflush" '$1 == "B" && $12 >= a && $12 <= b {
			rw = $7 == "read" || $7 == "write"
			if ($14 == "upper") { if (rw && ($5 !~ /^md/ || $10 > 0 || mdflush)) n[$5]++ }
			else if ($7 == "sync" && $10 == 0) n[$5 ":flush"]++
			else if (rw) { n[$5]++; if ($15 == "partition") n[$16]++ }
		} END { for (k in n) print n[k], k }' "$out/t.tsv" | sort -k2 >"$out/iot-$s.txt"
	awk -v s="$s" '$1 == s { k = $3; v = $5 + $9; f = $20
			if ($2 == "before") { b[k] = v; bf[k] = f } else { d[k] = v - b[k]; df[k] = f - bf[k] } }
		END { for (k in d) { if (d[k]) print k, d[k]; if (df[k]) print k ":flush", df[k] } }' \
		"$out/stat.txt" | sort >"$out/stat-$s.txt"
	while read -r dev want; do
		got=$(awk -v d="$dev" '$2 == d { print $1 }' "$out/iot-$s.txt")
		rows="$rows $dev:$want/${got:-0}"
		[[ ${got:-0} == "$want" ]] || bad="$bad $dev (stat $want, iotracer ${got:-0})"
	done <"$out/stat-$s.txt"
	note "$pfx: stat/iotracer per device:$rows"
	if [[ -z $bad && -n $rows ]]; then report PASS "${pfx}_stat"; else
		report FAIL "${pfx}_stat" "requests per device differ from /sys/block stat:${bad:- no device moved}"; fi
}

# The cgroups phase on dm-crypt (guest-stacks.sh cg_run): a writer in /cg/wr, a reader in
# /cg/rd. iostat: per cgroup, the bytes of iotracer's upper bios on the dm-crypt device
# (dm-N) owned by it == its io.stat rbytes + wbytes delta there (the kernel charges the
# upper bio to its submitter's cgroup), and its member requests on sda carry the same
# bytes in its name (none in the root's: no kthread). blame: the reader's requests'
# culprits (the daemon's blame lines, by cgroup) are the writer's cgroup, >= 90 % of
# what others held, and the root cgroup (dmcrypt_write, kcryptd) <= 5 %.
check_cgroups() { # K
	local pfx=lab_stk_$1 a b dm devno id wid want got mem line bad="" n o w root nf
	nf=$(not_followed crypt)
	if [[ -n $nf ]]; then
		report SKIP "${pfx}_iostat" "$kver: $nf"
		report SKIP "${pfx}_blame" "$kver: $nf"
		return
	fi
	grep -q '^cg wr ' "$out/cg.txt" 2>/dev/null || {
		report FAIL "${pfx}_iostat" "no cgroups phase (see $out/console.log)"
		report FAIL "${pfx}_blame" "no cgroups phase"
		return
	}
	read -r a b < <(window cg)
	dm=$(awk '$1 == "dev" && $4 == "crypt" { print $2 }' "$out/devs.txt")
	devno=$(awk '$1 == "dev" && $4 == "crypt" { print $3 }' "$out/devs.txt")
	for c in rd wr; do
		id=$(awk -v c="$c" '$1 == "cg" && $2 == c { print $3 }' "$out/cg.txt")
		want=$(awk -v c="$c" -v d="$devno" '$2 == c && $3 == d { for (i = 4; i <= NF; i++) {
				split($i, kv, "="); if (kv[1] == "rbytes" || kv[1] == "wbytes") v[$1] += kv[2] } }
			END { print v["after"] - v["before"] }' "$out/iostat.txt")
		read -r got mem < <(awk -F'\t' -v dm="$dm" -v id="$id" -v a="$a" -v b="$b" '$1 == "B" &&
				$4 == id && $12 >= a && $12 <= b {
				if ($5 == dm && $14 == "upper") u += $10
				if ($14 == "member" && $16 == dm) m += $10 } END { print u + 0, m + 0 }' "$out/t.tsv")
		note "$pfx cgroup $c (id $id): io.stat +$want bytes on $dm ($devno); iotracer's upper bios $got, their members on the disk $mem"
		[[ $want -gt 0 && $got == "$want" && $mem == "$want" ]] || bad="$bad $c: io.stat $want, upper $got, members $mem;"
	done
	if [[ -z $bad ]]; then report PASS "${pfx}_iostat"; else report FAIL "${pfx}_iostat" "${bad%;}"; fi
	id=$(awk '$1 == "cg" && $2 == "rd" { print $3 }' "$out/cg.txt")
	wid=$(awk '$1 == "cg" && $2 == "wr" { print $3 }' "$out/cg.txt")
	line=$(awk -F'\t' -v id="$id" -v w="$wid" -v a="$a" -v b="$b" '
		$1 == "R" && $6 == id && $8 >= a && $8 <= b { r[$2] = 1 }
		$1 == "L" && ($2 in r) { n++; o += $3; root += $5
			k = split($4, cs, ","); for (i = 1; i <= k; i++) { split(cs[i], p, ":"); if (p[1] == w) wr += p[2] } }
		END { printf "%d %.0f %.0f %.0f\n", n, o, wr, root }' "$out/t.tsv")
	read -r n o w root <<<"$line"
	note "$pfx blame: $n of the reader's requests, others held them ${o}ns, the writer's cgroup ${w}ns, the root cgroup ${root}ns"
	if ((n > 0 && o > 0 && w * 10 >= o * 9 && root * 20 <= o)); then report PASS "${pfx}_blame"; else
		report FAIL "${pfx}_blame" "the reader's waits: others ${o}ns, the writer's cgroup ${w}ns (< 90 %?), the root cgroup (kthreads) ${root}ns (> 5 %?)"; fi
}

# blkparse's default lines of setup S -> "q2r OP SECTOR NS" per remap of an upper bio of
# the top device TOPNO (maj,min) to a member (Q on the top device .. the member's A
# naming it, the first A of that queue), "d2c DEV OP SECTOR NS" per member request
# (D .. C on a member device, maj,min as blkparse writes them).
# shellcheck disable=SC2016 # awk program
BT_STAGES='
function ns(t) { return t * 1e9 }
function opn(r) { r = substr(r, 1, 1); return r == "R" ? "read" : r == "W" ? "write" : "" }
$6 == "Q" && $1 == top && opn($7) != "" { k = opn($7) " " $8; q[k, ++nq[k]] = ns($4); next }
$6 == "A" && $12 == "(" top ")" && opn($7) != "" {
	k = opn($7) " " $13
	if (na[k] < nq[k]) { na[k]++; printf "q2r %s %.0f\n", k, ns($4) - q[k, na[k]] }
	next
}
$1 != top && $6 == "D" && opn($7) != "" { d[$1 " " opn($7) " " $8] = ns($4); next }
$1 != top && $6 == "C" && opn($7) != "" {
	k = $1 " " opn($7) " " $8
	if (k in d) { printf "d2c %s %.0f\n", k, ns($4) - d[k]; delete d[k] }
}'

# pair_means STAGE_FILE IOT_FILE: pairs by key and n-th occurrence (both in queue order):
# "pairs mean_btt mean_iotracer unpaired_btt unpaired_iotracer kept_mean_btt
# kept_mean_iotracer off" (off: pairs whose two values differ by more than 3 % and 20 us,
# one stamp delayed between the two tracers' probes; the kept means leave them out)
# shellcheck disable=SC2016 # awk program
pair_means() {
	awk 'FNR == 1 { f++ }
		{ k = $1; for (x = 2; x < NF; x++) k = k " " $x }
		f == 1 { bv[k, ++nb[k]] = $NF; next }
		{ iv[k, ++ni[k]] = $NF }
		END {
			for (k in ni) for (j = 1; j <= ni[k]; j++) {
				if (j > nb[k]) { ui++; continue }
				b = bv[k, j]; v = iv[k, j]; d = v > b ? v - b : b - v
				n++; sb += b; si += v
				if (d > 20000 && d > 0.03 * b) off++
				else { tb += b; ti += v; print "P", b, v }
			}
			for (k in nb) if (nb[k] > ni[k] + 0) ub += nb[k] - ni[k]
			k = n - off
			printf "S %d %.0f %.0f %d %d %.0f %.0f %d\n", n, n ? sb / n : 0, n ? si / n : 0, ub, ui,
				k ? tb / k : 0, k ? ti / k : 0, off
		}' "$1" "$2" >"$tmp/pairs"
	grep '^S ' "$tmp/pairs" | cut -d' ' -f2-
}

# check_btt K S: iotracer's q2r of the upper bios and d2c of their member requests
# against blktrace's events of the same run (blktrace started before iotracer, on lin's
# and crypt's devices: its probes run first), in S's window, per request paired by (op,
# sector, occurrence): the means within STK_TOL %
check_btt() { # K S
	local pfx=lab_stk_$1_$2 s=$2 top topno why="" n mb mi ub ui line t0 a b nf
	nf=$(not_followed "$s")
	if [[ -n $nf ]]; then
		report SKIP "${pfx}_q2r" "$kver: $nf"
		report SKIP "${pfx}_d2c" "$kver: $nf"
		return
	fi
	top=$(awk -v s="$s" '$1 == "stack" && $2 == s { print $3 }' "$out/devs.txt")
	top=$(awk -v n="${top##*/}" '$1 == "dev" && ($2 == n || $4 == n) { print $2; exit }' "$out/devs.txt")
	topno=$(awk -v n="$top" '$1 == "dev" && $2 == n { sub(":", ",", $3); print $3; exit }' "$out/devs.txt")
	local ins=() f
	for f in "$out"/bt-bt/*.blktrace.0; do [[ -f $f ]] && ins+=(-i "$(basename "${f%.blktrace.0}")"); done
	if [[ ! -s $out/bt.txt ]] && ! blkparse -q -D "$out/bt-bt" "${ins[@]}" \
		-o "$out/bt.txt" >"$tmp/blkparse.log" 2>&1; then
		why="blkparse failed: $(tail -n 2 "$tmp/blkparse.log" | tr '\n' ' ')"
		report FAIL "${pfx}_q2r" "$why"
		report FAIL "${pfx}_d2c" "$why"
		return
	fi
	# blkparse's times count from the trace's first event: the offset to iotracer's clock
	# from the first queue on the top device, which both saw (no IO there before S's)
	read -r a b < <(window "$s")
	t0=$(awk -v top="$topno" '$1 == top && $6 == "Q" { printf "%s %s\n", $8, $4; exit }' "$out/bt.txt" |
		{ read -r sec t || exit; awk -F'\t' -v top="$top" -v sec="$sec" -v t="$t" \
			'$1 == "B" && $5 == top && $14 == "upper" && $8 == sec { printf "%.0f\n", $11 - t * 1e9; exit }' "$out/t.tsv"; })
	[[ -n $t0 ]] || t0=0
	awk -v t0="$t0" -v a="$a" -v b="$b" '{ t = $4 * 1e9 + t0 } t >= a - 3e8 && t <= b + 3e8' "$out/bt.txt" |
		awk -v top="$topno" "$BT_STAGES" >"$out/bt-$s.stages"
	# iotracer's, in queue order: q2r of the upper bios, d2c of the members below
	awk -F'\t' -v top="$top" -v a="$a" -v b="$b" '$1 == "B" && ($7 == "read" || $7 == "write") &&
			$9 > 0 && $11 >= a - 3e8 && $11 <= b + 3e8 {
			if ($5 == top && $14 == "upper" && $17 != -1) print $11, "q2r", $7, $8, $17
			else if ($16 == top && $13 != -1) { sub(":", ",", $6); print $11, "d2c", $6, $7, $8, $13 } }' \
		"$out/t.tsv" | sort -n | cut -d' ' -f2- >"$out/iot-$s.stages"
	for st in q2r d2c; do
		grep "^$st " "$out/bt-$s.stages" | cut -d' ' -f2- >"$tmp/bt.$st"
		grep "^$st " "$out/iot-$s.stages" | cut -d' ' -f2- >"$tmp/it.$st"
		read -r n mb mi ub ui db di off < <(pair_means "$tmp/bt.$st" "$tmp/it.$st")
		line="$n pairs (unpaired: blktrace $ub, iotracer $ui), $off off by > 3 % and 20us; mean of the others blktrace $((db / 1000))us, iotracer $((di / 1000))us ($(awk -v a="$di" -v b="$db" 'BEGIN { printf "%+.1f", b ? (a - b) * 100 / b : 0 }') %); of all $((mb / 1000))us, $((mi / 1000))us"
		note "$pfx $st: $line"
		if ((n >= 100 && ub == 0 && ui == 0 && off * 10 <= n)) &&
			awk -v a="$di" -v b="$db" -v t="$STK_TOL" 'BEGIN { d = a > b ? a - b : b - a
				exit !(b > 0 && (d <= b * t / 100 || d <= 1000)) }'; then
			report PASS "${pfx}_$st"
		else
			report FAIL "${pfx}_$st" "$line (allowed: the others' means ±$STK_TOL % or 1 us, at least 100 pairs, none unpaired, at most 10 % off)"
		fi
	done
}

# the cost notes: runs and BPF ns per IO, bare sda against dm-linear (same boot)
cost_notes() { # K
	awk -v k="$1" '$1 == "cost" { n = $3; r = $6 - $4; t = $7 - $5; c = $2 ~ /^lin/ ? "lin" : "bare"
			if (n > 0) { runs[c] += r / n; ns[c] += t / n; cnt[c]++ } }
		END { if (!cnt["bare"] || !cnt["lin"]) exit
			rb = runs["bare"] / cnt["bare"]; rl = runs["lin"] / cnt["lin"]
			nb = ns["bare"] / cnt["bare"]; nl = ns["lin"] / cnt["lin"]
			printf "# stack lin (%s) runs/IO bare->stacked %.2f -> %.2f (%+.2f), BPF ns/IO %.0f -> %.0f (%+.1f %%)\n",
				k, rb, rl, rl - rb, nb, nl, nb ? (nl - nb) * 100 / nb : 0 }' "$out/cost.txt"
}

# ------------------------------------------------------------ the boots
for k in $KERNELS; do
	PFX=lab_stk_$k
	out=$LAB_DIR/runs/stacks-$k
	kt0=$(lab_now)
	fetch_series "$k"
	boot_once_more "$k" "$LAB_SRC/guest-stacks.sh" "$out"
	note "$PFX: kernel $kver, ready $(sed -n 's/^ready_s=//p' "$out/result" 2>/dev/null)s, boot wall $(sed -n 's/^wall_s=//p' "$out/result" 2>/dev/null)s"
	boot_why
	for m in 'cannot make' 'fio .* failed'; do
		grep -qE "^$m" "$g" && why="${why}$(grep -m1 -E "^$m" "$g"); "
	done
	if [[ -n $why ]]; then
		for n in $NAMES; do [[ $n == "${PFX}_"* && -z ${done_names[$n]:-} ]] && report FAIL "$n" "${why%; } (see $out/console.log)"; done
		continue
	fi
	report PASS "${PFX}_run"
	extract
	for s in $SETUPS; do check_setup "$k" "$s"; done
	[[ " $SETUPS " == *" crypt "* ]] && check_cgroups "$k"
	for s in lin crypt; do [[ " $SETUPS " == *" $s "* ]] && check_btt "$k" "$s"; done
	cost_notes "$k"
	note "$PFX: took $(lab_since "$kt0")s; files in $out"
done
rest FAIL "not reported (bug in test_stacks.sh)"
note "lab_stk: took $(lab_since "$t0")s"
exit "$failed"
