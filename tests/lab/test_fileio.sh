#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# test_fileio.sh [SERIES[+kprobe]...]   (default: $LAB_FIO_KERNELS or "6.12 6.12+kprobe")
#
# The syscall layer's file path (docs/hooks.md "fileio"): on kernels with
# fentry (SERIES+kprobe: IOTRACER_PREFER=kprobe, the kprobe variants) the fd
# syscalls are traced in the file systems, and sockets, pipes, eventfds and
# other syscalls run no iotracer program. One boot per SERIES runs
# tests/lab/guest-fileio.sh (taxload: tests/lab/taxload.c) and checks:
#   lab_fio_<k>_run      the guest ran to its end, every iotracer attached and
#                        exited 0, no loop failed, the bundle arrived intact
#   lab_fio_<k>_path     the attach report: sys_enter/sys_exit (raw_syscalls)
#                        `off`, shmem_file_read_iter and blkdev_read_iter
#                        attached (fentry, or kprobe for +kprobe); no program
#                        of the raw pair loaded (the guest's program list)
#   lab_fio_<k>_noprog   over getppid, pipe, socket and eventfd loops (write +
#                        read, LAB_FIO_NOTAX rounds each): every BPF program's
#                        run count (kernel.bpf_stats_enabled, read in the loop's
#                        own process before and after) unchanged; and the file
#                        loop's ran the file path's programs (the counts work)
#   lab_fio_<k>_norecord no record of the taxload process (the loops above)
#   lab_fio_<k>_file     the file loop (LAB_FIO_FILE rounds of 64-byte pwrite +
#                        pread at offset 0 of a tmpfs file, as `taxfile`): as
#                        many pwrite64 and pread64 records as rounds, each
#                        with the file's ino, offset 0, bytes 64, ret 64
#   lab_fio_<k>_ext4     LAB_FIO_EXT4 (200) rounds of pwrite + fsync + pread on
#                        ext4 (mke2fs on vda): as many pwrite64, fsync and
#                        pread64 records of the file (its ino) on vda as rounds
#                        (ext4's buffered read nests in generic_file_read_iter:
#                        one record), offset 0, bytes 64 / ret 64 (fsync ret 0)
#   lab_fio_<k>_aio      LAB_FIO_EXT4 rounds of io_submit + io_getevents of one
#                        64-byte pread iocb on ext4 (the libaio hooks on
#                        __x64_sys_io_submit ...): one aio record per iocb,
#                        on vda, a read of 64 bytes at offset 0, res 64 (an aio
#                        record carries no ino: stages.c leaves it 0)
#   lab_fio_<k>_tax_<w>  w = syscall, pipe, socket: ns per call of the fastest
#                        50th of each loop (taxload's min_ns_per_call), the
#                        best of LAB_FIO_ROUNDS rounds, run back to back under
#                        one attach of each tracer (full: the noprog step's,
#                        kept attached) (a tracer cannot make a
#                        call faster; this shared host and TCG make whole
#                        rounds slower: loop means spread +-30 %, and the
#                        first loops after a detach run slow: a warm-up), with
#                        always-on and full records each within
#                        LAB_FIO_TAX_TOL (5) % of no tracer
# and notes `# tax <workload> <tracer> ns/call none→traced (ratio)` (and the
# medians of the loop means, for comparison) for
# always-on, full and raw (always-on on the raw_syscalls pair, one round, last, forced with
# --syscall-hooks raw: what these kernels paid before).
# The guest runs under TCG: its syscalls cost several times a native one's, so
# a ratio here is smaller than the same program's natively.
#
# Output: the line protocol (docs/testing.md); exit 1 if anything FAILed.
# Files: $LAB_DIR/runs/fileio-<k>/.
# Environment: LAB_FIO_KERNELS, LAB_FIO_NOTAX (20000), LAB_FIO_FILE (500),
# LAB_FIO_TAX (50000 rounds per tax loop), LAB_FIO_ROUNDS (3), LAB_FIO_TAX_TOL
# (5), LAB_FIO_TAX_STEP (default 1 with LAB_FULL=1, else 0: the tax_<w> checks SKIP),
# LAB_TIMEOUT (300 s per boot), and what boot.sh reads.
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"

STATIC=$LAB_DIR/iotracer-static
TOL=${LAB_FIO_TAX_TOL:-5}
export LAB_TIMEOUT=${LAB_TIMEOUT:-300}
export LAB_G_FIO_NOTAX=${LAB_FIO_NOTAX:-20000}
export LAB_G_FIO_FILE=${LAB_FIO_FILE:-500}
export LAB_G_FIO_EXT4=${LAB_FIO_EXT4:-200}
export LAB_G_FIO_TAX=${LAB_FIO_TAX:-50000}
export LAB_G_FIO_ROUNDS=${LAB_FIO_ROUNDS:-3}
# the tax rounds are a timed measurement (~30 s of the boot): LAB_FULL=1 only, or
# LAB_FIO_TAX_STEP=1; in make test the tax checks SKIP (speed is the bench's job)
export LAB_G_FIO_TAXSTEP=${LAB_FIO_TAX_STEP:-${LAB_FULL:-0}}
unset LAB_HOST_HOOK
WORKLOADS="syscall pipe socket"
# shellcheck disable=SC2086 # space separated list
[[ $# -gt 0 ]] || set -- ${LAB_FIO_KERNELS:-6.12 6.12+kprobe}
KERNELS=("$@")

names_of() {
	local w
	echo "lab_fio_$1_run lab_fio_$1_path lab_fio_$1_noprog lab_fio_$1_norecord lab_fio_$1_file lab_fio_$1_ext4 lab_fio_$1_aio"
	for w in $WORKLOADS; do echo "lab_fio_$1_tax_$w"; done
}
# rest K VERDICT WHY: every check of K not reported yet
rest() {
	local n
	for n in $(names_of "$1"); do [[ -n ${done_names[$n]:-} ]] || report "$2" "$n" "$3"; done
}
# shellcheck disable=SC2317 # invoked through the traps
on_signal() {
	trap '' INT TERM HUP
	local k
	for k in "${KERNELS[@]}"; do rest "$k" FAIL "interrupted by SIG$1 (timeout?)"; done
	exit "$2"
}
install_traps cleanup
new_tmp fileio || {
	for k in "${KERNELS[@]}"; do rest "$k" FAIL "cannot make a temp dir in $LAB_DIR/tmp"; done
	exit 1
}
if ! build_static amd64; then
	for k in "${KERNELS[@]}"; do rest "$k" FAIL "$BUILD_WHY"; done
	exit 1
fi
export LAB_EXTRA=$tmp/extra
if ! guest_extra "$LAB_EXTRA" ||
	! gcc -static -O2 -Wall -o "$LAB_EXTRA/taxload" "$LAB_SRC/taxload.c" 2>"$tmp/taxload.log"; then
	for k in "${KERNELS[@]}"; do rest "$k" FAIL "cannot build taxload or fill $LAB_EXTRA: $(head -c 200 "$tmp/taxload.log")"; done
	exit 1
fi

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else if (NR) print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# tax_of OUT WORKLOAD TRACER FIELD [min]: the median (or the minimum) over the rounds of FIELD
tax_of() {
	awk -v w="$2" -v t="$3" '$1 == "tax" && $3 == t && $4 ~ "\"mode\":\"" w "\"" { print $4 }' "$1/tax.txt" |
		jq -r ".$4" | if [[ ${5:-} == min ]]; then sort -g | head -n 1; else median; fi
}

checks() { # K OUT
	local k=$1 out=$2 j=$2/clean.json why n bad meth ino nw nr nok
	jq -R -c 'fromjson? | select(type == "object")' "$out/out.json" >"$j"
	# path
	meth=fentry
	[[ $k == *+kprobe ]] && meth=kprobe
	why=""
	jq -e -s 'any(.[]; .type == "attach" and .hook == "sys_enter/sys_exit" and .state == "off")' "$j" >/dev/null ||
		why="sys_enter/sys_exit is not off: $(jq -r -s 'map(select(.type == "attach" and .hook == "sys_enter/sys_exit")) | .[0] | "\(.method) \(.state) \(.reason // "")"' "$j"); "
	for h in shmem_file_read_iter blkdev_read_iter; do
		jq -e -s --arg h "$h" --arg m "$meth" 'any(.[]; .type == "attach" and .hook == $h and .method == $m and .state == "attached")' "$j" >/dev/null ||
			why="$why$h not attached by $meth; "
	done
	# no program of the raw pair is even loaded (names as the kernel keeps them)
	n=$(awk '$1 == "runs" && $4 ~ /^(btf|raw)_(sys_enter|sys_exit|aio_exit)$/ { printf "%s ", $4 }' "$out/runs.txt" | head -c 200)
	[[ -z $n ]] || why="${why}raw_syscalls programs loaded: $n; "
	if [[ -z $why ]]; then report PASS "lab_fio_${k}_path"; else report FAIL "lab_fio_${k}_path" "${why%; }"; fi
	# noprog: runs MODE ID NAME RUNS; progs MODE BEFORE AFTER
	why=""
	for m in syscall pipe socket eventfd; do
		n=$(awk -v m="$m" '$1 == "progs" && $2 == m { print $3 }' "$out/runs.txt")
		bad=$(awk -v m="$m" '$1 == "runs" && $2 == m && $5 > 0 { printf "%s:%s ", $4, $5 }' "$out/runs.txt")
		[[ ${n:-0} -gt 0 ]] || why="$why$m: no program seen (run counts unread); "
		[[ -z $bad ]] || why="$why$m ran $bad; "
	done
	nok=$(awk '$1 == "runs" && $2 == "file" && $4 ~ /^f(entry|exit)_fio_|^k(ret)?probe_fio_/ { s += $5 } END { print s + 0 }' "$out/runs.txt")
	note "lab_fio_$k: programs loaded $(awk '$1 == "progs" && $2 == "pipe" { print $4 }' "$out/runs.txt"); runs in the file loop: $(awk '$1 == "runs" && $2 == "file" && $5 > 0 { printf "%s:%s ", $4, $5 }' "$out/runs.txt")"
	((nok > 0)) || why="${why}the file loop ran no file path program (are run counts on?); "
	if [[ -z $why ]]; then report PASS "lab_fio_${k}_noprog"; else report FAIL "lab_fio_${k}_noprog" "${why%; }"; fi
	# norecord
	n=$(jq -r 'select(.type == "request" and .comm == "taxload") | .syscall // .kind' "$j" | sort | uniq -c | tr '\n' ' ')
	if [[ -z $n ]]; then report PASS "lab_fio_${k}_norecord"; else report FAIL "lab_fio_${k}_norecord" "records of the loops: $n"; fi
	# file
	ino=$(sed -n 's/^file_ino //p' "$out/ioload.txt")
	read -r nw nr bad < <(jq -r --argjson ino "${ino:-0}" 'select(.type == "request" and .comm == "taxfile" and .dev != "vda")
		| [.syscall, ((.ino == $ino and .offset == 0 and .bytes == 64 and .ret == 64) | tostring)] | @tsv' "$j" |
		awk '$1 == "pwrite64" { w++ } $1 == "pread64" { r++ } $2 != "true" || ($1 != "pwrite64" && $1 != "pread64") { b++ }
			END { printf "%d %d %d\n", w, r, b }')
	note "lab_fio_$k: file loop $LAB_G_FIO_FILE rounds: pwrite64 $nw, pread64 $nr records, $bad other or wrong (ino $ino)"
	if [[ $nw == "$LAB_G_FIO_FILE" && $nr == "$LAB_G_FIO_FILE" && $bad == 0 ]]; then
		report PASS "lab_fio_${k}_file"
	else
		report FAIL "lab_fio_${k}_file" "pwrite64 $nw, pread64 $nr of $LAB_G_FIO_FILE each, $bad records other or wrong"
	fi
	# ext4: pwrite64 + fsync + pread64 per round on vda
	if grep -q '^ext4_unavailable' "$out/ioload.txt"; then
		report SKIP "lab_fio_${k}_ext4" "mke2fs or the ext4 mount of vda failed in the guest"
	else
		ino=$(sed -n 's/^ext4_ino //p' "$out/ioload.txt")
		read -r nw nr ns bad < <(jq -r --argjson ino "${ino:-0}" 'select(.type == "request" and .comm == "taxfile" and .dev == "vda" and .kind == "syscall" and .ino == $ino)
			| [.syscall, ((.offset == 0 and ((.syscall == "fsync" and .ret == 0) or (.bytes == 64 and .ret == 64))) | tostring)] | @tsv' "$j" |
			awk '$1 == "pwrite64" { w++ } $1 == "pread64" { r++ } $1 == "fsync" { s++ } $2 != "true" || ($1 != "pwrite64" && $1 != "pread64" && $1 != "fsync") { b++ }
				END { printf "%d %d %d %d\n", w, r, s, b }')
		note "lab_fio_$k: ext4 loop $LAB_G_FIO_EXT4 rounds: pwrite64 $nw, fsync $ns, pread64 $nr records, $bad other or wrong (ino $ino); runs: $(awk '$1 == "runs" && $2 == "file" && $5 > 0 { printf "%s:%s ", $4, $5 }' "$out/runs.txt")"
		if [[ $nw == "$LAB_G_FIO_EXT4" && $nr == "$LAB_G_FIO_EXT4" && $ns == "$LAB_G_FIO_EXT4" && $bad == 0 ]]; then
			report PASS "lab_fio_${k}_ext4"
		else
			report FAIL "lab_fio_${k}_ext4" "pwrite64 $nw, fsync $ns, pread64 $nr of $LAB_G_FIO_EXT4 each, $bad records other or wrong"
		fi
	fi
	# aio: one record per iocb (io_submit's entry and exit, io_getevents' exit)
	if grep -q '^ext4_unavailable' "$out/ioload.txt"; then
		report SKIP "lab_fio_${k}_aio" "mke2fs or the ext4 mount of vda failed in the guest"
	else
		read -r n bad < <(jq -r 'select(.type == "request" and .comm == "taxfile" and .kind == "aio")
			| (.dev == "vda" and .op == "read" and .ret == 64 and .bytes == 64 and .offset == 0) | tostring' "$j" |
			awk '{ n++ } $1 != "true" { b++ } END { printf "%d %d\n", n, b }')
		note "lab_fio_$k: aio loop $LAB_G_FIO_EXT4 rounds: $n aio records, $bad wrong; runs: $(awk '$1 == "runs" && $2 == "aio" && $5 > 0 { printf "%s:%s ", $4, $5 }' "$out/runs.txt")"
		if [[ $n == "$LAB_G_FIO_EXT4" && $bad == 0 ]]; then
			report PASS "lab_fio_${k}_aio"
		else
			report FAIL "lab_fio_${k}_aio" "$n aio records of $LAB_G_FIO_EXT4 iocbs, $bad with another dev, op, ret, bytes or offset"
		fi
	fi
	# tax: `tax ROUND TRACER JSON`
	local w t none v ratio res mnone mv
	if [[ $LAB_G_FIO_TAXSTEP != 1 ]]; then
		for w in $WORKLOADS; do
			report SKIP "lab_fio_${k}_tax_$w" "a timed measurement: LAB_FULL=1 (or LAB_FIO_TAX_STEP=1) runs the tax rounds"
		done
		return
	fi
	for w in $WORKLOADS; do
		none=$(tax_of "$out" "$w" none min_ns_per_call min)
		mnone=$(tax_of "$out" "$w" none ns_per_call)
		res=""
		for t in always-on full raw; do
			v=$(tax_of "$out" "$w" "$t" min_ns_per_call min)
			mv=$(tax_of "$out" "$w" "$t" ns_per_call)
			ratio=$(awk -v a="$v" -v b="$none" 'BEGIN { if (a > 0 && b > 0) printf "%.3f", a / b; else print "?" }')
			note "tax $w $t ns/call ${none:-?}→${v:-?} ($ratio) [$k; means ${mnone:-?}→${mv:-?} ($(awk -v a="$mv" -v b="$mnone" 'BEGIN { if (a > 0 && b > 0) printf "%.3f", a / b; else print "?" }'))]"
			[[ $t == raw ]] && continue
			awk -v r="$ratio" -v tol="$TOL" 'BEGIN { exit !(r != "?" && r <= 1 + tol / 100) }' || res="$res$t ${none:-?}→${v:-?} ns ($ratio); "
		done
		[[ $w == syscall ]] && note "lab_fio_$k: the tracer's own CPU time over each round's three loops (ticks): $(awk '$1 == "taxcpu" { printf "%s r%s %s; ", $3, $2, $4 }' "$out/tax.txt")"
		if [[ -z $res ]]; then report PASS "lab_fio_${k}_tax_$w"; else report FAIL "lab_fio_${k}_tax_$w" "over +$TOL %: ${res%; }"; fi
	done
}

one() { # K
	local k=$1 series=${1%%+*} out brc=0 g why=""
	out=$LAB_DIR/runs/fileio-$k
	rm -rf "$out"
	mkdir -p "$out"
	export LAB_G_PREFER=""
	[[ $k == *+kprobe ]] && LAB_G_PREFER=kprobe
	if ! step "$out/fetch.out" "$out/fetch.log" "$LAB_SRC/fetch.sh" "$series"; then
		rest "$k" SKIP "kernel $series cannot be fetched here: $(tail -n 1 "$out/fetch.log")"
		return
	fi
	step /dev/null "$out/boot.log" "$LAB_SRC/boot.sh" "$series" "$LAB_SRC/guest-fileio.sh" "$out" || brc=$?
	# A guest kernel that died before the script began, or on an int3 of its own
	# text patching (a static key flipped as hooks attach or detach under QEMU's
	# multi-threaded TCG, docs/lab.md; seen here as the raw pair attached), says
	# nothing about iotracer: once more.
	if ((brc == 2)) && { ! grep -q '===LAB-BEGIN===' "$out/console.log" 2>/dev/null ||
		grep -q 'Oops: int3' "$out/console.log" 2>/dev/null; }; then
		note "lab_fio_$k: guest kernel died ($(grep -m1 -oE 'Oops: [^[]*|Kernel panic[^[]*' "$out/console.log" | head -c 80) $(grep -m1 -oE 'RIP: 0010:[^ ]+' "$out/console.log")); booting once more"
		mv -f "$out/console.log" "$out/console.crash.log"
		brc=0
		step /dev/null "$out/boot.log" "$LAB_SRC/boot.sh" "$series" "$LAB_SRC/guest-fileio.sh" "$out" || brc=$?
	fi
	g=$out/guest.out
	if ((brc == 3)); then
		rest "$k" SKIP "$(tail -n 1 "$out/boot.log" | sed 's/^\[lab\] //')"
		return
	fi
	note "lab_fio_$k: kernel $(sed -n 's/^kver=//p' "$out/result" 2>/dev/null), boot wall $(sed -n 's/^wall_s=//p' "$out/result" 2>/dev/null)s"
	if ((brc == 2)); then
		why="guest did not reach its end marker ($(grep -m1 -E 'timed out|panic|Oops' "$out/boot.log" "$out/console.log" 2>/dev/null | head -c 200)); "
	elif ! unbundle "$g" "$out"; then
		why="$BUNDLE_WHY; "
	fi
	grep -q '^iotracer did not attach' "$g" && why="${why}iotracer did not attach: $(head -c 300 "$out/iotracer.err" 2>/dev/null | tr '\n' ' '); "
	grep '^iotracer_rc ' "$g" | grep -qv '^iotracer_rc 0$' && why="${why}an iotracer exited non-zero; "
	((brc == 1)) && why="${why}guest script exited non-zero (a loop failed?: $(grep -h loop_failed "$out/ioload.txt" 2>/dev/null | tr '\n' ' ')); "
	if [[ -n $why ]]; then
		rest "$k" FAIL "${why%; } (see $out/console.log)"
		return
	fi
	report PASS "lab_fio_${k}_run"
	checks "$k" "$out"
}

for k in "${KERNELS[@]}"; do one "$k"; done
exit "$failed"
