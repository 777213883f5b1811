#!/usr/bin/env bash
# make install, the systemd unit and the man pages.
# Oracles: the installed tree (paths, modes), systemd-analyze verify, groff's warnings,
# man -l, and `--help` of each command (the man pages must list the same options).
#   install_tree  DESTDIR install: binary 0755, unit, man pages, bpftrace scripts, config
#   unit_verify   systemd-analyze verify --man=no on the unit of a real PREFIX install:
#                 exit 0 and not one line of output (it warns on stdout/stderr, exit 0)
#   unit_caps     the unit grants exactly the capabilities docs/service.md explains
#   unit_docs     the unit's Documentation= names exactly the installed man pages (man:NAME(8))
#   man_render    groff -ww -z finds no warning in any page; man -l renders each
#   man_opts      iotracer(8), iotracer-bench(8), iotracer-report(8) and iotracer-top(8)
#                 list exactly the long options of `iotracer --help`, `bench --help`,
#                 `report --help` and `top --help`
#   conf_ignored  with the shipped config installed at /etc/iotracer/iotracer.conf (a
#                 private mount namespace) and its metrics port taken, a plain
#                 `iotracer -D 1s` reads no config: exit 0, a final summary on stdout
#   conf_where    the same with --config FILE: exit 1, one error line naming
#                 FILE:LINE: metrics (the line of its metrics key)
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin install_tree unit_verify unit_caps unit_docs man_render man_opts conf_ignored conf_where
require_cmd make install systemd-analyze groff man
require_iotracer

dest=$IT_TMP/dest
if ! make -s -C "$IT_ROOT" install DESTDIR="$dest" PREFIX=/usr >"$IT_TMP/install.log" 2>&1; then
	fail_all "make install failed: $(tail -c 300 "$IT_TMP/install.log" | tr '\n' ' ')"
fi
want=(usr/bin/iotracer:755 usr/lib/systemd/system/iotracer.service:644
	usr/share/man/man8/iotracer.8:644 usr/share/man/man8/iotracer-bench.8:644
	usr/share/man/man8/iotracer-report.8:644 usr/share/man/man8/iotracer-top.8:644
	usr/share/iotracer/scripts/blk_lat_hist.bt:644 usr/share/iotracer/scripts/blk_io_print.bt:644)
[[ -f $IT_ROOT/configs/iotracer.conf ]] && want+=(etc/iotracer/iotracer.conf:644)
bad=""
for w in "${want[@]}"; do
	f=${w%%:*} m=${w##*:}
	got=$(stat -c %a "$dest/$f" 2>/dev/null) || got=missing
	[[ $got == "$m" ]] || bad+=" $f($got, want $m)"
done
check install_tree "wrong or missing:$bad" test -z "$bad"

# A real PREFIX, so that ExecStart names a binary that exists.
pfx=$IT_TMP/prefix
unit=$pfx/lib/systemd/system/iotracer.service
if make -s -C "$IT_ROOT" install PREFIX="$pfx" SYSCONFDIR="$pfx/etc" >"$IT_TMP/install2.log" 2>&1; then
	out=$(systemd-analyze verify --man=no "$unit" 2>&1)
	rc=$?
	check unit_verify "exit $rc: $(head -c 400 <<<"$out" | tr '\n' ' ')" test "$rc" -eq 0 -a -z "$out"
else
	fail unit_verify "make install PREFIX=$pfx failed: $(tail -c 300 "$IT_TMP/install2.log")"
fi

caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$dest/usr/lib/systemd/system/iotracer.service" | tr ' ' '\n' | sort | tr '\n' ' ')
doc=$(grep -o '^| `CAP_[A-Z_]*' "$IT_ROOT/docs/service.md" 2>/dev/null | sed 's/^| `//' | sort -u | tr '\n' ' ')
check unit_caps "unit: [$caps] docs/service.md: [$doc]" test -n "$caps" -a "$caps" = "$doc"

docs=$(sed -n 's/^Documentation=//p' "$dest/usr/lib/systemd/system/iotracer.service" | tr ' ' '\n' |
	grep . | sort | tr '\n' ' ')
pages=$(cd "$dest/usr/share/man/man8" 2>/dev/null && for f in *.8; do echo "man:${f%.8}(8)"; done |
	sort | tr '\n' ' ')
check unit_docs "Documentation=[$docs] installed man8: [$pages]" test -n "$pages" -a "$docs" = "$pages"

bad=""
for p in "$IT_ROOT"/docs/man/*.8; do
	w=$(groff -ww -z -man "$p" 2>&1)
	[[ -z $w ]] || bad+=" $(basename "$p"): $w"
	lines=$(MANWIDTH=80 man -l "$p" 2>/dev/null | wc -l)
	((lines > 20)) || bad+=" $(basename "$p"): man -l rendered $lines lines"
done
check man_render "$bad" test -z "$bad"

# long_opts: the --long-option names in a text, one per line, sorted.
long_opts() { grep -o -- '--[a-z][a-z-]*' | sort -u; }
bad=""
for pair in "iotracer.8:" "iotracer-bench.8:bench" "iotracer-report.8:report" "iotracer-top.8:top"; do
	page=${pair%%:*} cmd=${pair#*:}
	# shellcheck disable=SC2086 # cmd is empty or one word
	help=$("$IOTRACER" $cmd --help 2>&1 | long_opts)
	man=$(sed 's/\\-/-/g' "$IT_ROOT/docs/man/$page" | grep -v '^\.\\"' | long_opts)
	d=$(diff <(echo "$help") <(echo "$man") | grep '^[<>]' | tr '\n' ' ')
	[[ -z $d ]] || bad+=" $page (< help only, > man only): $d"
done
check man_opts "$bad" test -z "$bad"

# The installed config is the service's: read with --config only (issue 23).
# hold_port: a process that listens on a free port and prints it (one write) only once
# listen() returned; bind() may still lose a race for the port to another program: then
# it exits 1 and another port is tried. Sets holder and port; returns 1 when no try held one.
hold_port() {
	local try i why
	for ((try = 1; try <= 5; try++)); do
		port=$(free_port) || return 1
		python3 -c 'import socket, sys, time
s = socket.socket()
try:
	s.bind(("127.0.0.1", int(sys.argv[1])))
	s.listen(1)
except OSError as e:
	sys.exit("port %s: %s" % (sys.argv[1], e))
print(sys.argv[1], flush=True)
time.sleep(120)' "$port" >"$IT_TMP/holder.ready" 2>"$IT_TMP/holder.err" &
		holder=$!
		_it_register pids "$holder"
		for ((i = 0; i < 100; i++)); do
			[[ -s $IT_TMP/holder.ready ]] || ! proc_alive "$holder" && break
			sleep 0.05
		done
		[[ $(cat "$IT_TMP/holder.ready") == "$port" ]] && return 0
		_it_kill "$holder"
		_it_unregister pids "$holder"
		why=$(tail -n 1 "$IT_TMP/holder.err")
		note "port holder, try $try: ${why:-port $port: not listening within 5 s}"
	done
	return 1
}
hold_port || fail_all "no process could hold a free port in 5 tries (notes)"
etc=$IT_TMP/etc-iotracer
mkdir -p "$etc"
sed "s/^metrics = .*/metrics = 127.0.0.1:$port/" "$IT_ROOT/configs/iotracer.conf" >"$etc/iotracer.conf"
line=$(grep -n '^metrics = ' "$etc/iotracer.conf" | cut -d: -f1)
# in_etc ARGS...: iotracer ARGS with $etc as /etc/iotracer, in a private mount namespace
in_etc() {
	unshare -m sh -c 'mkdir -p /etc/iotracer && mount --bind "$1" /etc/iotracer && shift && exec "$@"' \
		sh "$etc" timeout -k 5 30 "$IOTRACER" "$@"
}
in_etc -D 1s -l syscall >"$IT_TMP/plain.out" 2>"$IT_TMP/plain.err" </dev/null
rc=$?
check conf_ignored "plain run with the installed config: exit $rc, stderr: $(head -c 300 "$IT_TMP/plain.err" | tr '\n' ' ')" \
	test "$rc" -eq 0 -a "$(grep -c 'final summary' "$IT_TMP/plain.out")" -eq 1
in_etc --config /etc/iotracer/iotracer.conf -D 1s -l syscall >/dev/null 2>"$IT_TMP/conf.err" </dev/null
rc=$?
msg=$(cat "$IT_TMP/conf.err")
note "--config with its port taken: exit $rc: $msg"
check conf_where "exit $rc (want 1), stderr: $msg (want one line naming /etc/iotracer/iotracer.conf:$line: metrics)" \
	test "$rc" -eq 1 -a "$(grep -c '' "$IT_TMP/conf.err")" -eq 1 -a \
	"$(grep -cF "/etc/iotracer/iotracer.conf:$line: metrics: cannot listen on 127.0.0.1:$port" "$IT_TMP/conf.err")" -eq 1
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
_it_unregister pids "$holder"
it_end
