#!/usr/bin/env bash
# `iotracer report` on inputs that leave nothing to show, and what it says then.
# No root, no BPF: the input is a JSON lines file the test writes (N requests of
# docs/json.md's shape, pid 1200, comm fio, device loop0, cgroup /system.slice/db.service),
# so the oracle is what the test wrote.
#   header     the JSON input's header: "requests: N read, N matched the filters" (it said
#              "0 requests, N matched": the recording's count next to the lines')
#   inverted   --since after --until: exit 2, one line naming --since and --until
#   why_cgroup --cgroup of no request: a warning naming --cgroup, and N read
#   why_dev    -d sdz: a warning naming --dev
#   why_window a window before every request: a warning naming --since/--until
#   why_chain  -c fio (keeps all) then -p 99 (keeps none): names --pid, not --comm
#   no_reqs    a file of `{}` lines: a warning that the input holds no request
#   not_file   report /dev/urandom (a character device): not "empty": "not a regular file",
#              and exit 1 with "no input could be read" (the man page's status; it was 0)
# shellcheck disable=SC2016 # jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin header inverted why_cgroup why_dev why_window why_chain no_reqs not_file
require_cmd jq
require_iotracer

N=50
in=$IT_TMP/in.json
for ((i = 1; i <= N; i++)); do
	jq -cn --argjson i "$i" '{type: "request", id: $i, kind: "syscall", ts_ns: (1000000000 + $i * 1000000),
		pid: 1200, tid: 1201, comm: "fio", cgroup_id: 1234, cgroup: "/system.slice/db.service",
		syscall: "pread64", op: "read", dev: "loop0", devno: "7:0", ino: 123, offset: ($i * 4096),
		bytes: 4096, ret: 4096, lat_ns: 61234,
		fs: {dio: true, cache_miss_pages: 0}, nr_bios: 0, block: []}'
done >"$in"

# rep NAME ARGS...: report into NAME.out / NAME.err, exit status in RC
rep() {
	local n=$1
	shift
	"$IOTRACER" report "$@" >"$IT_TMP/$n.out" 2>"$IT_TMP/$n.err"
	RC=$?
}
err1() { tr '\n' '|' <"$IT_TMP/$1.err" | head -c 400; }

rep all "$in"
line=$(grep 'matched the filters' "$IT_TMP/all.out")
note "all: $line"
check header "exit $RC, header '$line' (want 'requests: $N read, $N matched the filters')" \
	test "$RC" = 0 -a "$line" = "requests: $N read, $N matched the filters"

rep inv --since 1h --until 2h "$in"
check inverted "exit $RC (want 2), stderr: $(err1 inv)" \
	test "$RC" = 2 -a "$(wc -l <"$IT_TMP/inv.err")" = 1 -a \
	"$(grep -c -- '--since.*--until' "$IT_TMP/inv.err")" = 1

rep cg --cgroup /nope.slice "$in"
check why_cgroup "exit $RC, stderr: $(err1 cg)" \
	grep -q -- "none of the $N requests read passed --cgroup" "$IT_TMP/cg.err"

rep dev -d sdz "$in"
check why_dev "exit $RC, stderr: $(err1 dev)" \
	grep -q -- "none of the $N requests read passed --dev" "$IT_TMP/dev.err"

# every request is 1 s after boot: a window of the epoch's first day holds none of them
rep win --since 0 --until 86400 "$in"
check why_window "exit $RC, stderr: $(err1 win)" \
	grep -q -- "none of the $N requests read passed --since/--until" "$IT_TMP/win.err"

rep chain -c fio -p 99 "$in"
check why_chain "exit $RC, stderr: $(err1 chain)" \
	grep -q -- "none of the $N requests read passed --pid" "$IT_TMP/chain.err"

printf '{}\n{}\n' >"$IT_TMP/empty.json"
rep empty "$IT_TMP/empty.json"
check no_reqs "exit $RC, stderr: $(err1 empty)" \
	grep -q -- "no request in the input" "$IT_TMP/empty.err"

rep dnull /dev/urandom
check not_file "exit $RC (want 1), stderr: $(err1 dnull)" \
	sh -c '[ "$2" = 1 ] && ! grep -q empty "$1" && grep -q "/dev/urandom: not a regular file" "$1" &&
		grep -q "no input could be read" "$1"' sh "$IT_TMP/dnull.err" "$RC"
it_end
