#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# test_stacks.sh: one request through the storage stacks servers run (issue 42):
# a partition, dm-linear over two disks, dm-crypt, LVM (dm-linear) on dm-crypt,
# md raid1 and md raid5 over 3 disks, in one boot per kernel (LAB_STK_KERNELS,
# "6.1 6.12"; 5.10 under LAB_FULL). The guest script (guest-stacks.sh) makes
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

KERNELS=${LAB_STK_KERNELS:-6.1 6.12}
[[ ${LAB_FULL:-0} == 1 ]] && KERNELS=${LAB_STK_KERNELS:-5.10 6.1 6.12}
[[ $# -gt 0 ]] && KERNELS=$*
SETUPS=${LAB_STK_SETUPS:-part lin crypt lvc r1 r5}
export LAB_G_STK_SETUPS=$SETUPS
export LAB_G_STK_IOS=${LAB_STK_IOS:-100}
export LAB_TIMEOUT=${LAB_TIMEOUT:-240}
export LAB_DISK_MB=64
export LAB_MODULES_EXTRA="dm-mod dm-crypt xts ecb aes_generic raid1 raid456"
unset LAB_HOST_HOOK
STATIC=$LAB_DIR/iotracer-static
NAMES=""
for k in $KERNELS; do
	NAMES="$NAMES lab_stk_${k}_run"
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

for t in dmsetup mdadm fio; do
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
	! guest_tool "$LAB_EXTRA" bpftool; then
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
# (helpers over $out/out.json: requests and their block entries)

# window S: "start end" of setup S's runs in ns (guest uptime = CLOCK_MONOTONIC)
window() {
	awk -v s="$1" '$1 == "step" && $2 == s "_start" { a = $3 } $1 == "step" && $2 == s "_end" { b = $3 }
		END { printf "%.0f %.0f\n", a * 1e9, b * 1e9 }' "$out/steps.txt"
}

check_setup() { # K S
	local k=$1 s=$2 pfx=lab_stk_$1_$2 top a b want got bad line
	top=$(awk -v s="$s" '$1 == "stack" && $2 == s { print $3 }' "$out/devs.txt")
	top=${top##*/}
	# dm devices: /dev/mapper/NAME is dm-N
	top=$(awk -v n="$top" '$1 == "dev" && ($2 == n || $4 == n) { print $2; exit }' "$out/devs.txt")
	read -r a b < <(window "$s")
	# fio: direct ops of dr and dw
	want=0
	for r in dr dw; do
		want=$((want + $(jq '[.jobs[0].read.total_ios, .jobs[0].write.total_ios] | add' "$out/fio-$s-$r.json" 2>/dev/null || echo 0)))
	done
	read -r got bad < <(jq -rn --arg top "$top" --argjson a "$a" --argjson b "$b" '
		[inputs | select(.type == "request" and .kind == "syscall" and .dev == $top and .comm == "fio"
			and (.syscall == "pread64" or .syscall == "pwrite64") and .ts_ns >= $a and .ts_ns <= $b and .fs.dio)]
		| [length, ([.[] | select([.block[]? | select(.stack.role == "member")] | length == 0)] | length)]
		| "\(.[0]) \(.[1])"' "$out/out.json")
	note "$pfx: fio direct ops $want, iotracer's $got on $top, $bad of them without a member request"
	if ((want > 0 && got == want && bad == 0)); then report PASS "${pfx}_fio"; else
		report FAIL "${pfx}_fio" "fio did $want direct ops on $top, iotracer has $got syscall records, $bad without a member request"; fi
	# owners of the member requests in the window
	line=$(jq -rn --argjson a "$a" --argjson b "$b" '
		[inputs | select(.type == "request") as $r | .block[]? | select(.stack.role == "member" and .c_ns >= $a and .c_ns <= $b)
			| {comm: $r.comm, dev, pid}] | [length, ([.[] | select(.comm != "fio")] | length),
			([.[] | select(.comm != "fio") | .comm] | unique | join(","))] | "\(.[0]) \(.[1]) \(.[2])"' "$out/out.json")
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
# does not count an empty flush bio (md_flush_request takes it before
# md_account_bio), dm does (as a write). Partitions: the disk's requests
# that name the partition.
check_stat() { # K S A B
	local pfx=lab_stk_$1_$2 s=$2 a=$3 b=$4 dev want got bad="" rows=""
	jq -rn --argjson a "$a" --argjson b "$b" '
		inputs | select(.type == "request") | .block[]? | select(.c_ns >= $a and .c_ns <= $b)
		| if .stack.role == "upper" then
			select(.op == "read" or .op == "write")
			| select((.dev | startswith("md") | not) or .bytes > 0) | .dev
		  elif .op == "sync" and .bytes == 0 then "\(.dev):flush"
		  else select(.op == "read" or .op == "write")
			| .dev, (select(.stack.how == "partition") | .stack.upper) end' "$out/out.json" |
		sort | uniq -c >"$out/iot-$s.txt"
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

# the cost notes: runs and BPF ns per IO, bare sda against dm-linear (same boot)
cost_notes() { # K
	awk -v k="$1" '$1 == "cost" { n = $2; r = $5 - $3; t = $6 - $4; c = $2 ~ /^lin/ ? "lin" : "bare"
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
	why=""
	if ((brc == 2)); then
		why="boot failed: $(boot_failure "$out"); "
	elif ! unbundle "$g" "$out"; then
		why="$BUNDLE_WHY; "
	fi
	grep -q '^iotracer did not attach' "$g" && why="${why}iotracer did not attach: $(head -c 300 "$out/iotracer.err" 2>/dev/null | tr '\n' ' '); "
	grep -q '^iotracer_rc 0$' "$g" || why="${why}iotracer exited with status $(sed -n 's/^iotracer_rc //p' "$g"); "
	for m in 'cannot make' 'fio .* failed'; do
		grep -qE "^$m" "$g" && why="${why}$(grep -m1 -E "^$m" "$g"); "
	done
	if [[ -n $why ]]; then
		for n in $NAMES; do [[ $n == "${PFX}_"* && -z ${done_names[$n]:-} ]] && report FAIL "$n" "${why%; } (see $out/console.log)"; done
		continue
	fi
	report PASS "${PFX}_run"
	for s in $SETUPS; do check_setup "$k" "$s"; done
	cost_notes "$k"
	note "$PFX: took $(lab_since "$kt0")s; files in $out"
done
rest FAIL "not reported (bug in test_stacks.sh)"
note "lab_stk: took $(lab_since "$t0")s"
exit "$failed"
