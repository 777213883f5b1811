#!/usr/bin/env bash
# configs/iotracer-rules.yml with the real promtool (Debian's prometheus package).
# Oracles: promtool's rule checker and its rule unit tester on synthetic series whose
# expected values are worked out by hand (tests/rules/iotracer-rules.test.yml).
#   check   promtool check rules: the file parses, every expression is valid PromQL
#   test    promtool test rules: recorded p50/p99/throughput values, the blame shares
#           (a reader and a writer holding each other for the same seconds: the reader's
#           share ranks first) and every alert's firing time, labels and text (tests/rules/,
#           with a per-device threshold file)
#   paths   every file of the tree the rules file names (tests/..., docs/...) exists
# The rules against a real scrape of the tracer: test_metrics.sh ("rules").
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin check test paths
require_cmd promtool

out=$(promtool check rules "$IT_ROOT/configs/iotracer-rules.yml" 2>&1)
rc=$?
note "promtool check rules: exit $rc: $(tr '\n' ' ' <<<"$out")"
check check "exit $rc: $out" test "$rc" = 0

out=$(cd "$IT_ROOT/tests/rules" && promtool test rules iotracer-rules.test.yml 2>&1)
rc=$?
note "promtool test rules: exit $rc: $(tr '\n' ' ' <<<"$out" | head -c 300)"
check test "exit $rc: $(head -c 1500 <<<"$out")" test "$rc" = 0

# the repository's files the comments point to (a trailing dot or bracket is prose)
missing=""
named=$(grep -oE '\b(tests|docs|configs|src|tools)/[A-Za-z0-9_./-]*[A-Za-z0-9_]' \
	"$IT_ROOT/configs/iotracer-rules.yml" | sort -u)
for f in $named; do
	[[ -e $IT_ROOT/$f ]] || missing+=" $f"
done
check paths "named: $(tr '\n' ' ' <<<"$named"); missing:$missing" test -n "$named" -a -z "$missing"
it_end
