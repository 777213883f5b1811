#!/bin/bash
# shellcheck shell=bash
# Host-side helpers shared by the lab tests (test_drivers.sh, test_modes.sh, test_btt.sh):
# the PASS/FAIL/SKIP/# line protocol, running a step in the background so a
# signal reaches it at once, stopping it and what it started (QEMU), the
# static iotracer for the guest, and the base64 bundle a guest script sends
# back on the console. Source after lib.sh; set `tmp` (a temp dir) before
# calling build_static or unbundle.

failed=0
say() { printf '%s\n' "$*"; }
pass() { say "PASS $1"; }
fail() {
	say "FAIL $1: ${2//$'\n'/ }"
	failed=1
}
skip() { say "SKIP $1: ${2//$'\n'/ }"; }
note() { say "# $*"; }
# report VERDICT NAME [WHY]: one verdict line; done_names remembers what was said.
declare -A done_names=()
report() { # VERDICT NAME [WHY]
	done_names[$2]=1
	case $1 in
	PASS) pass "$2" ;;
	FAIL) fail "$2" "${3:-}" ;;
	*) skip "$2" "${3:-}" ;;
	esac
}
# Temp dir (LAB_EXTRA for the guest, host trace); a step runs in the background
# so that a TERM/INT to this script reaches it at once (boot.sh then kills QEMU).
tmp=""
child=""
# shellcheck disable=SC2317 # used by the traps
alive() { [[ -r /proc/$1/cmdline ]] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
# shellcheck disable=SC2317
cmdline_of() { { tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null; }
# shellcheck disable=SC2317
descendants() {
	local p
	for p in $(pgrep -P "$1" 2>/dev/null); do
		echo "$p"
		descendants "$p"
	done
}
# Stop the running step. A test runner's timeout signals the whole process
# group, so the step (boot.sh) usually got the signal too and is cleaning up:
# give it 3 s before signalling it again (a second TERM can cut its cleanup
# short). Then whatever it started (timeout, QEMU) and still runs is ended by
# pid, and a boot temp dir it left behind is removed.
# shellcheck disable=SC2317 # invoked through the traps
stop_child() {
	local c=$child i p q dir
	local -A cmd=()
	child=""
	[[ -n $c ]] || return 0
	if ! alive "$c"; then
		wait "$c" 2>/dev/null
		return 0
	fi
	for p in $(descendants "$c"); do cmd[$p]=$(cmdline_of "$p"); done
	for ((i = 0; i < 30; i++)); do alive "$c" || break; sleep 0.1; done
	if alive "$c"; then
		kill -TERM "$c" 2>/dev/null
		for ((i = 0; i < 50; i++)); do alive "$c" || break; sleep 0.1; done
		alive "$c" && kill -KILL "$c" 2>/dev/null
	fi
	wait "$c" 2>/dev/null
	for p in "${!cmd[@]}"; do
		[[ -n ${cmd[$p]} && $(cmdline_of "$p") == "${cmd[$p]}" ]] || continue
		kill -TERM "$p" 2>/dev/null
		for ((i = 0; i < 20; i++)); do alive "$p" || break; sleep 0.1; done
		alive "$p" && kill -KILL "$p" 2>/dev/null
	done
	for q in "${cmd[@]}"; do
		[[ $q == qemu-system-* && $q =~ -pidfile\ ([^ ]*)/qemu\.pid ]] || continue
		dir=${BASH_REMATCH[1]}
		[[ $dir == "$LAB_DIR/tmp/boot."* && -d $dir ]] && rm -rf "$dir"
	done
	return 0
}
# shellcheck disable=SC2317 # invoked through the traps
cleanup() {
	local rc=$?
	trap - EXIT
	trap '' INT TERM HUP # a second signal must not cut the cleanup short
	stop_child
	[[ -n $tmp ]] && rm -rf "$tmp"
	exit "$rc"
}
# install_traps EXIT_CMD: EXIT runs EXIT_CMD; INT/TERM/HUP call the sourcing
# script's on_signal NAME STATUS (which reports what is left and exits).
install_traps() {
	# shellcheck disable=SC2064 # EXIT_CMD is expanded now, on purpose
	trap "$1" EXIT
	trap 'on_signal INT 130' INT
	trap 'on_signal TERM 143' TERM
	trap 'on_signal HUP 129' HUP
}
# new_tmp NAME: tmp = a new $LAB_DIR/tmp/NAME.XXXXXX ($LAB_DIR/runs made too);
# status 1 (tmp empty) when it cannot be made.
new_tmp() {
	mkdir -p "$LAB_DIR/tmp" "$LAB_DIR/runs" && tmp=$(mktemp -d "$LAB_DIR/tmp/$1.XXXXXX") && return 0
	tmp=""
	return 1
}
# step OUT ERR CMD...: the redirections are made here, not on the call, so
# that the traps (which print the verdicts) keep this script's stdout.
step() {
	local o=$1 e=$2
	shift 2
	"$@" >"$o" 2>"$e" &
	child=$!
	local rc=0
	wait "$child" || rc=$?
	child=""
	return "$rc"
}
# ------------------------------------------------------------ static iotracer
build_static() { # [ARCH]: amd64 (default) -> $STATIC, arm64 -> $STATIC-arm64 (cross build)
	local arch=${1:-amd64} targets="iotracer build/iotracer.static build/test_link.static"
	local built=$LAB_REPO/build/iotracer.static dst=$STATIC
	if [[ $arch == arm64 ]]; then
		targets=static-arm64 built=$LAB_REPO/build/arm64/iotracer.static dst=$STATIC-arm64
		# what the cross build needs, as `make test` installs its own (idempotent; the
		# kernel fetch's check of the tools comes after this build)
		if [[ $(id -u) -eq 0 ]] && ! make -C "$LAB_REPO" -s deps-arm64 >"$tmp/deps-arm64.log" 2>&1; then
			BUILD_WHY="make deps-arm64 failed: $(tail -n 3 "$tmp/deps-arm64.log" | tr '\n' ' ')"
			return 1
		fi
	fi
	# The Makefile knows the objects; static glibc's NSS warnings land in the log.
	# shellcheck disable=SC2086 # the target list is space separated
	if ! make -C "$LAB_REPO" -s $targets >"$tmp/make-$arch.log" 2>&1; then
		BUILD_WHY="static $arch build failed (libbpf-dev libelf-dev zlib1g-dev libzstd-dev libc6-dev, arm64: make deps-arm64?): $(grep -v 'statically linked' "$tmp/make-$arch.log" | tail -n 3 | tr '\n' ' ')"
		return 1
	fi
	if [[ ! -x $dst || $built -nt $dst ]]; then
		cp -f "$built" "$dst.part.$$" && mv -f "$dst.part.$$" "$dst"
		note "built $dst ($(stat -c %s "$dst") bytes)"
	fi
}

# guest_extra DIR [ARCH]: LAB_EXTRA for a guest script: the static iotracer of
# ARCH and guest-lib.sh (build_static ARCH first).
guest_extra() {
	local bin=$STATIC
	[[ ${2:-amd64} == arm64 ]] && bin=$STATIC-arm64
	mkdir -p "$1" &&
		{ ln -f "$bin" "$1/iotracer" 2>/dev/null || cp "$bin" "$1/iotracer"; } &&
		cp "$LAB_SRC/guest-lib.sh" "$1/"
}

# Numeric field of a flat JSON line.
jnum() { sed -n "s/.*\"$2\":\\(-\\{0,1\\}[0-9][0-9]*\\).*/\\1/p" <<<"$1"; }

# Bundle between the markers of guest.out -> files in DIR. Sets BUNDLE_WHY.
unbundle() { # GUEST_OUT DIR
	local g=$1 dir=$2 hdr size md5 got
	BUNDLE_WHY=""
	hdr=$(grep -m 1 '^===DRV-BUNDLE=== ' "$g" || true)
	if [[ -z $hdr ]] || ! grep -q '^===DRV-BUNDLE-END===$' "$g"; then
		BUNDLE_WHY="no complete bundle in the guest output"
		return 1
	fi
	read -r _ size md5 <<<"$hdr"
	sed -n '/^===DRV-BUNDLE=== /,/^===DRV-BUNDLE-END===$/p' "$g" | sed '1d;$d' |
		base64 -d >"$tmp/bundle.tgz" 2>/dev/null || {
		BUNDLE_WHY="bundle is not valid base64"
		return 1
	}
	got=$(md5sum <"$tmp/bundle.tgz" | cut -d' ' -f1)
	if [[ $got != "$md5" || $(stat -c %s "$tmp/bundle.tgz") != "$size" ]]; then
		BUNDLE_WHY="bundle damaged on the console (size $(stat -c %s "$tmp/bundle.tgz")/$size, md5 $got/$md5)"
		return 1
	fi
	tar -xzf "$tmp/bundle.tgz" -C "$dir" || {
		BUNDLE_WHY="bundle does not unpack"
		return 1
	}
	rm -f "$tmp/bundle.tgz"
}


# ------------------------------------------------------------ faults outside iotracer
# A boot may fail for reasons that say nothing about iotracer (docs/lab.md "Faults
# outside iotracer"): QEMU itself killed by a fault signal before the guest was ready,
# a guest soft lockup or int3 oops at a half-patched jump label or in the kernel's text
# patching (TCG's cross-modifying code) with no BPF program frame on the stack, or a
# guest kernel that died before the lab script began. Such a boot is run once more,
# with a `# retried: NAME: REASON` note; a run retries at most once per boot, and more
# than one retry in a run is itself a FAIL (retries_verdict; tests/run.sh counts the
# notes over the whole run too).
retries=0

# crash_block CONSOLE: the guest's soft lockup or int3 oops report, from its first
# line to the end of the console (timestamps and CRs stripped); nothing if none.
crash_block() {
	tr -d '\r' <"$1" 2>/dev/null | sed 's/^\[ *[0-9.]*\] //' |
		awk '/BUG: soft lockup|(^|Oops: )int3: [0-9a-f]+ \[#/ { on = 1 } on'
}

# patch_site BLOCK: status 0 when the first `Code:` line of the report shows the
# faulting byte (<xx>) inside a 5-byte jump-label NOP (66 66 66 66 90, 0f 1f 44 00
# 00), on the second byte of a 2-byte one (66 <90>: the int3 was its first byte, the
# trap's RIP the next) or right after / on an int3 byte (cc: a site being patched).
patch_site() {
	awk '/^Code: / && !done {
		done = 1; n = 0; m = 0
		for (i = 2; i <= NF; i++) {
			b = $i
			if (b ~ /^<..>$/) { b = substr(b, 2, 2); m = n + 1 }
			by[++n] = b
		}
		if (!m) exit 1
		if (by[m] == "cc" || by[m - 1] == "cc") exit 0
		if (by[m - 1] == "66" && by[m] == "90") exit 0
		for (s = m - 4; s <= m; s++) {
			w = by[s] " " by[s + 1] " " by[s + 2] " " by[s + 3] " " by[s + 4]
			if (w == "66 66 66 66 90" || w == "0f 1f 44 00 00") exit 0
		}
		exit 1
	} END { if (!done) exit 1 }' <<<"$1"
}

# boot_fault DIR: when boot.sh's outcome in DIR (result, console.log) is a fault
# outside iotracer, print its one-line description and return 0; else return 1.
boot_fault() {
	local d=$1 rc qrc sig blk rip
	rc=$(sed -n 's/^rc=//p' "$d/result" 2>/dev/null)
	qrc=$(sed -n 's/^qemu_rc=//p' "$d/result" 2>/dev/null)
	[[ $rc == 2 && $qrc =~ ^[0-9]+$ ]] || return 1
	# QEMU killed by a fault signal (timeout(1) passes it on as 128 + N) before the
	# guest's ready marker: QEMU's own crash (seen: SIGSEGV in memory_region_dispatch_write)
	if ((qrc > 128)) && ! grep -q '===LAB-READY===' "$d/console.log" 2>/dev/null; then
		sig=$(kill -l $((qrc - 128)) 2>/dev/null)
		case $sig in
		ILL | TRAP | ABRT | BUS | FPE | SEGV)
			echo "QEMU killed by SIG$sig before the guest was ready (qemu rc $qrc)"
			return 0
			;;
		esac
	fi
	blk=$(crash_block "$d/console.log")
	# a BPF program (iotracer's) or trampoline on the stack: never retried
	grep -qE 'bpf_prog_[0-9a-f]|bpf_trampoline_' <<<"$blk" && return 1
	rip=$(grep -m1 -oE 'RIP: 0010:[^ ]+' <<<"$blk")
	if [[ -n $blk ]] && { patch_site "$blk" ||
		grep -qE '(text_poke|jump_label|poke_int3|static_key)[_a-z]*\+0x' <<<"$blk"; }; then
		if grep -q 'BUG: soft lockup' <<<"$blk"; then
			echo "guest soft lockup at a jump label or text patching site (${rip:-no RIP}; TCG cross-modifying code)"
		else
			echo "guest int3 oops of its own text patching (${rip:-no RIP}; TCG cross-modifying code)"
		fi
		return 0
	fi
	# a crash once the lab script began, not at a patching site: iotracer may be in it
	[[ -n $blk ]] && grep -q '===LAB-BEGIN===' "$d/console.log" 2>/dev/null && return 1
	# any other guest kernel death before the lab script began (iotracer not yet started)
	if ! grep -q '===LAB-BEGIN===' "$d/console.log" 2>/dev/null &&
		grep -qE 'Kernel panic|BUG:|Oops' "$d/console.log" 2>/dev/null &&
		! grep -qE 'bpf_prog_[0-9a-f]|bpf_trampoline_' "$d/console.log"; then
		echo "guest kernel died before the lab script began ($(tr -d '\r' <"$d/console.log" |
			grep -m1 -oE 'Kernel panic[^[]*|BUG: [^[]*|Oops: [^[]*' | head -c 80))"
		return 0
	fi
	return 1
}

# boot_failure DIR: one line naming why boot.sh's boot in DIR failed (for FAIL lines).
boot_failure() {
	local d=$1 rc qrc why t
	rc=$(sed -n 's/^rc=//p' "$d/result" 2>/dev/null)
	qrc=$(sed -n 's/^qemu_rc=//p' "$d/result" 2>/dev/null)
	if why=$(boot_fault "$d"); then
		echo "$why"
		return
	fi
	t=$(tr -d '\r' <"$d/console.log" 2>/dev/null | grep -m1 -oE 'Kernel panic[^[]*|BUG: [^[]*|Oops: [^[]*|int3: [0-9a-f]+ [^[]*' | head -c 100)
	if [[ -z $rc ]]; then
		why="boot.sh left no result"
	elif [[ $qrc == 124 || $qrc == 137 ]]; then
		why="guest timed out (qemu rc $qrc)"
	elif [[ -n $qrc ]] && ((qrc > 128)); then
		why="QEMU killed by SIG$(kill -l $((qrc - 128)) 2>/dev/null || echo $((qrc - 128)))"
	else
		why="guest ended without its end marker (qemu rc ${qrc:-?})"
	fi
	echo "$why${t:+: guest $t}; see $d/console.log"
}

# retry_boot NAME DIR ATTEMPT: status 0 when the boot in DIR failed for a fault outside
# iotracer on its first ATTEMPT: notes `# retried: NAME: REASON` and counts it.
retry_boot() {
	local why
	(($3 == 1)) || return 1
	why=$(boot_fault "$2") || return 1
	retries=$((retries + 1))
	note "retried: $1: $why"
	return 0
}

# retries_verdict NAME: at the end of a run, more than one retried boot FAILs NAME.
retries_verdict() {
	((retries > 1)) && fail "$1" "$retries boots retried for faults outside iotracer (at most 1 per run): the lab or this machine is not healthy"
	note "boots retried: $retries"
}

# ------------------------------------------------------------ one-boot lab tests
# (test_btt.sh, test_wback.sh: their checks in NAMES, their prefix in PFX)

# rest VERDICT WHY: every check of NAMES not reported yet
rest() {
	local n
	for n in $NAMES; do [[ -n ${done_names[$n]:-} ]] || report "$1" "$n" "$2"; done
}
# shellcheck disable=SC2317 # invoked through the traps
on_signal() {
	trap '' INT TERM HUP
	rest FAIL "interrupted by SIG$1 (timeout?)"
	exit "$2"
}
# lab_begin NAME: the traps and a temp dir (tmp); exits with every check FAILed
# when there is none
lab_begin() {
	install_traps cleanup
	new_tmp "$1" || {
		rest FAIL "cannot make a temp dir in $LAB_DIR/tmp"
		exit 1
	}
}
# fetch_series SERIES: the kernel fetched (kver set), else every check
# reported (SKIP when it cannot be fetched here, else FAIL) and exit
fetch_series() {
	local frc=0 why
	step "$tmp/fetch.out" "$tmp/fetch.log" "$LAB_SRC/fetch.sh" "$1" || frc=$?
	if ((frc != 0)); then
		why=$(grep -E 'unavailable:|error:' "$tmp/fetch.log" | tail -n 1 | sed 's/^\[lab\] //')
		if ((frc == 3)); then rest SKIP "${why:-kernel $1 cannot be fetched here}"; else rest FAIL "fetch.sh $1 failed (rc $frc): $why"; fi
		exit "$failed"
	fi
	# shellcheck disable=SC2034 # read by the calling script
	kver=$(lab_resolve_kver "$1")
}
# boot_why: what keeps a boot of boot_once_more (brc, g, out) from being checked: the
# boot, the bundle, iotracer's attach and exit status; sets why ("" when none, else
# each reason followed by "; ")
boot_why() {
	why=""
	if ((brc == 2)); then
		why="boot failed: $(boot_failure "$out"); "
	elif ! unbundle "$g" "$out"; then
		why="$BUNDLE_WHY; "
	fi
	grep -q '^iotracer did not attach' "$g" && why="${why}iotracer did not attach: $(head -c 300 "$out/iotracer.err" 2>/dev/null | tr '\n' ' '); "
	grep -q '^iotracer_rc 0$' "$g" || why="${why}iotracer exited with status $(sed -n 's/^iotracer_rc //p' "$g"); "
}
# boot_once_more SERIES GUEST_SCRIPT OUT: boot.sh into OUT (brc its status, g
# its guest.out); a boot that failed for a fault outside iotracer (boot_fault
# above) boots once more, said in a `# retried:` note; any other failure, or a
# second one, is the caller's to report. Every check SKIPped (and exit) when it
# cannot boot here.
boot_once_more() {
	local series=$1 script=$2 out=$3
	rm -rf "$out"
	mkdir -p "$out"
	brc=0
	step /dev/null "$out/boot.log" "$LAB_SRC/boot.sh" "$series" "$script" "$out" || brc=$?
	if ((brc == 2)) && retry_boot "$PFX" "$out" 1; then
		mv -f "$out/console.log" "$out.retried-console.log"
		brc=0
		step /dev/null "$out/boot.log" "$LAB_SRC/boot.sh" "$series" "$script" "$out" || brc=$?
	fi
	g=$out/guest.out
	if ((brc == 3)); then
		rest SKIP "$(tail -n 1 "$out/boot.log" | sed 's/^\[lab\] //')"
		exit 0
	fi
}
