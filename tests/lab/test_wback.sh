#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# test_wback.sh: writeback bytes per cgroup against the kernel's io.stat (issue
# 26, "iotracer's bytes per cgroup within 2 % of each cgroup's io.stat wbytes
# delta"). This host's cgroup v2 has no io controller; the lab guest's has.
#
# One boot of LAB_WBACK_KERNEL (6.12) with an ext4 image made here as
# /dev/vda runs tests/lab/guest-wback.sh: cgroup2 with +io +memory, three
# cgroups, a static `iotracer -q --no-live -j out.json -d vda --syscall-hooks
# raw` (--writeback pages) and beside it the always-on profile's writeback
# (--writeback files: `--profile always-on -m 0 -j files.json`, the syscall
# layer in the file systems), then dd into ext4: wa 24 MiB buffered, wb 8 MiB
# buffered, wd 8 MiB O_DIRECT, sync. Each cgroup's io.stat before and after
# comes back with both traces; each trace is checked (the files one as
# lab_wback_<k>_files_*).
#
#   lab_wback_<k>_run          the guest ran, iotracer attached and exited 0,
#                              the bundle arrived, io.stat has the io controller
#   lab_wback_<k>_blkcg_<cg>   the bytes of iotracer's block writes on vda
#                              charged to cgroup cg (block[].blkcg_id for writes
#                              of page-cache pages, else the request's cgroup)
#                              within 2 % of cg's io.stat wbytes delta on vda
#   lab_wback_<k>_dirtier_<cg> the bytes whose dirtier (block[].dirty) or
#                              submitter (direct IO) is in cg, the same
# for cg in wa, wb, wd.
#
# SKIP (never PASS) when the kernel cannot be fetched or booted.
# Files: $LAB_DIR/runs/wback-<k>/ (boot.sh's, the bundle).
# Environment: LAB_WBACK_KERNEL (6.12), LAB_WBACK_TOL (2: percent), LAB_TIMEOUT
# (180 s), and what boot.sh reads.
# shellcheck disable=SC2016 # jq expressions in single quotes
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"

SERIES=${LAB_WBACK_KERNEL:-6.12}
STATIC=$LAB_DIR/iotracer-static
TOL=${LAB_WBACK_TOL:-2}
export LAB_TIMEOUT=${LAB_TIMEOUT:-180}
unset LAB_HOST_HOOK
PFX=lab_wback_$SERIES
CGS="wa wb wd"
NAMES="${PFX}_run"
for m in "" files_; do
	for c in $CGS; do NAMES="$NAMES ${PFX}_${m}blkcg_$c ${PFX}_${m}dirtier_$c"; done
done

lab_begin wback
out=$LAB_DIR/runs/wback-$SERIES
t0=$(lab_now)

command -v mkfs.ext4 >/dev/null 2>&1 || { rest SKIP "no mkfs.ext4 here (the guest has none)"; exit 0; }
fetch_series "$SERIES"
if ! build_static amd64; then
	rest FAIL "$BUILD_WHY"
	exit 1
fi
export LAB_EXTRA=$tmp/extra
if ! guest_extra "$LAB_EXTRA"; then
	rest FAIL "cannot put iotracer in $LAB_EXTRA"
	exit 1
fi
export LAB_VBLK_IMG=$tmp/vblk.img
if ! truncate -s 128M "$LAB_VBLK_IMG" ||
	! mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LAB_VBLK_IMG" >"$tmp/mkfs.log" 2>&1; then
	rest FAIL "cannot make the ext4 image: $(tail -n 2 "$tmp/mkfs.log" | tr '\n' ' ')"
	exit 1
fi

boot_once_more "$SERIES" "$LAB_SRC/guest-wback.sh" "$out"
note "$PFX: kernel $kver, ready $(sed -n 's/^ready_s=//p' "$out/result" 2>/dev/null)s, boot wall $(sed -n 's/^wall_s=//p' "$out/result" 2>/dev/null)s"
why=""
if ((brc == 2)); then
	why="guest did not reach its end marker ($(grep -m1 -E 'timed out|panic|Oops' "$out/boot.log" "$out/console.log" 2>/dev/null | head -c 200)); "
elif ! unbundle "$g" "$out"; then
	why="$BUNDLE_WHY; "
fi
for m in 'iotracer did not attach' 'no cgroup2 mount' 'cannot enable' 'cannot mount ext4'; do
	grep -q "^$m" "$g" && why="${why}$(grep -m1 "^$m" "$g"); "
done
[[ $(grep -c '^iotracer_rc 0$' "$g") == 2 ]] ||
	why="${why}iotracer exited with status $(sed -n 's/^iotracer_rc //p' "$g" | tr '\n' ' '); "
((brc == 1)) && why="${why}guest script exited non-zero; "
grep -q '^after wa .*wbytes=' "$out/iostat.txt" 2>/dev/null || why="${why}no io.stat wbytes for wa (io controller?); "
if [[ -n $why ]]; then
	rest FAIL "${why%; } (see $out/console.log)"
	exit 1
fi
report PASS "${PFX}_run"

vda=$(jq -r 'select(.type == "request") | .block[]? | select(.dev == "vda") | .devno' "$out/out.json" | head -n 1)
# io.stat's wbytes delta of cgroup CG on vda
wdelta() {
	awk -v c="$1" -v d="$vda" '$2 == c && $3 == d {
		for (i = 4; i <= NF; i++) if ($i ~ /^wbytes=/) { sub(/wbytes=/, "", $i); v[$1] = $i } }
		END { print v["after"] - v["before"] }' "$out/iostat.txt"
}
# iotracer's bytes of block writes on vda in trace JSON whose cgroup (jq expression
# over the request $r and the block $b) is id ID
ibytes() {
	jq -n --argjson id "$3" 'reduce (inputs | select(.type == "request") | . as $r | .block[]?
		| select(.dev == "vda" and .op == "write") as $b | select(('"$2"') == $id) | $b.bytes) as $x (0; . + $x)' \
		"$1"
}
for m in "" files_; do
	json=$out/out.json
	[[ -n $m ]] && json=$out/files.json
	for c in $CGS; do
		id=$(awk -v c="$c" '$1 == "cg" && $2 == c { print $3 }' "$out/cg.txt")
		want=$(wdelta "$c")
		got=$(ibytes "$json" '$b.blkcg_id // $r.cgroup_id' "$id")
		dirt=$(ibytes "$json" 'if $b.dirty then $b.dirty.cgroup_id else $r.cgroup_id end' "$id")
		note "$PFX ${m}$c (cgroup id $id): io.stat wbytes +$want on $vda; iotracer by blkcg $got, by dirtier $dirt"
		for k in blkcg:"$got" dirtier:"$dirt"; do
			v=${k#*:}
			if ((want > 0)) && awk -v a="$v" -v b="$want" -v t="$TOL" 'BEGIN { d = (a - b) / b; exit !(d <= t / 100 && d >= -t / 100) }'; then
				report PASS "${PFX}_${m}${k%%:*}_$c"
			else
				report FAIL "${PFX}_${m}${k%%:*}_$c" "cgroup $c: iotracer ${k%%:*} $v bytes, io.stat wbytes delta $want (allowed ±$TOL %)"
			fi
		done
	done
done
rest FAIL "not reported (bug in test_wback.sh)"
note "$PFX: took $(lab_since "$t0")s; files in $out"
exit "$failed"
