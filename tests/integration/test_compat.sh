#!/usr/bin/env bash
# 32-bit (compat) syscalls are not traced: the syscall layer's raw sys_enter/sys_exit
# programs see every syscall, and a 32-bit one's number is another table's; the
# per-syscall tracepoints never fire for one. Both sets (--syscall-hooks raw, percall).
# tests/tools/compat_syscall makes an `int $0x80` syscall numbered 17 (x86-64 pread64,
# i386 "break": -ENOSYS) with the 64-bit argument registers of a pread64 of a file on
# the traced loop device, then one real pread64 of it.
# Oracle: the helper's own calls (what it did and what the kernel returned).
#   int80_ignored  no syscall record of the helper with the int80's return (-ENOSYS)
#   pread_traced   exactly one pread64 record of the helper: 4096 bytes at offset 0
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin int80_ignored pread_traced
it_require_all

HELPER=$IT_ROOT/build/compat_syscall
[[ -x $HELPER ]] || fail_all "$HELPER is not built (make tools)"

dev=$(mk_loop 16 fill) || fail_all "cannot create a loop device"
name=$(devname "$dev")
"$HELPER" "$dev" >/dev/null 2>&1
if (($? == 3)); then
	skip int80_ignored "no 32-bit syscalls here (not x86-64, or ia32_emulation off)"
	skip pread_traced "no 32-bit syscalls here (not x86-64, or ia32_emulation off)"
	it_end
fi

# one_set KIND: the helper's two calls under --syscall-hooks KIND; sets INT80_WHY, PREAD_WHY
# (empty when the check holds)
one_set() {
	local hpid hrc int80 bogus good all
	start_tracer -d "$name" --syscall-hooks "$1" || fail_all "$TRACER_WHY"
	"$HELPER" "$dev" >"$IT_TMP/helper.out" 2>&1 &
	hpid=$!
	wait "$hpid"
	hrc=$?
	sleep 0.3
	stop_tracer
	note "$1: helper (pid $hpid, exit $hrc): $(tr '\n' ' ' <"$IT_TMP/helper.out")"
	int80=$(awk '$1 == "int80" { print $2 }' "$IT_TMP/helper.out")
	bogus=$(jcount "$TRACER_JSON" '.kind == "syscall" and .pid == $p and .ret == $r' \
		--argjson p "$hpid" --argjson r "${int80:-0}")
	INT80_WHY=""
	[[ $hrc -eq 0 && ${int80:-0} -lt 0 && $bogus -eq 0 ]] ||
		INT80_WHY="$1: int80 returned ${int80:-?}; $bogus syscall records of the helper with that return"
	good=$(jcount "$TRACER_JSON" '.kind == "syscall" and .pid == $p and .syscall == "pread64"
		and .ret == 4096 and .offset == 0 and .bytes == 4096' --argjson p "$hpid")
	all=$(jcount "$TRACER_JSON" '.kind == "syscall" and .pid == $p' --argjson p "$hpid")
	PREAD_WHY=""
	[[ $good -eq 1 && $all -eq 1 ]] ||
		PREAD_WHY="$1: $good matching pread64 records of $all syscall records of the helper"
}

one_set raw
i80=$INT80_WHY pr=$PREAD_WHY
one_set percall
i80+=$INT80_WHY pr+=$PREAD_WHY
check int80_ignored "${i80:-no record of the helper is the int80 (raw and percall)}" test -z "$i80"
check pread_traced "${pr:-one pread64 record of the helper (raw and percall)}" test -z "$pr"
it_end
