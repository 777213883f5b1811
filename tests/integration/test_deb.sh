#!/usr/bin/env bash
# make deb: the Debian package (docs/package.md), installed on this machine and removed.
# Oracles: dpkg-deb, lintian, ldd + dpkg -S (which package gives each library the binary
# links), dpkg's database, systemd-analyze verify, the file system after removal.
#   contents      the binary, 3 man pages (gzip), the unit in /lib/systemd/system, the
#                 example config as a conffile, rules, dashboard, bpftrace scripts, copyright
#   depends       every library the binary needs (its NEEDED entries, and the sonames its
#                 .rodata holds for dlopen: libcurl.so.4, src/sink/curldl.c) comes from a
#                 Depends package, and Depends holds nothing else (no compiler, -dev, test
#                 or lab package)
#   lintian       lintian reports no error (E:) and no warning (W:) on the package
#   install       dpkg -i: installed, /usr/bin/iotracer --version is this build's
#   unit_verify   systemd-analyze verify on the installed unit: exit 0, not one line
#   remove        dpkg -r: every file of the package gone but the conffile; dpkg -P: that
#                 too, /etc/iotracer gone, dpkg knows the package no more
# install/unit_verify/remove SKIP when iotracer is already installed here (a package or a
# /usr/bin/iotracer not from one): the test does not touch an operator's install.
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin contents depends lintian install unit_verify remove
require_root
require_cmd make dpkg dpkg-deb dpkg-shlibdeps lintian ldd readelf systemd-analyze
require_iotracer

INSTALLED=0
# Whatever happens, a package this test installed is purged at exit.
deb_cleanup() {
	((INSTALLED)) && dpkg_do -P iotracer >/dev/null 2>&1
	INSTALLED=0
}
trap 'rc=$?; deb_cleanup; (exit $rc); _it_on_exit' EXIT

# dpkg_do ARGS...: dpkg, waiting up to 120 s while another dpkg or apt holds the lock
dpkg_do() {
	local i out rc
	for ((i = 0; i < 120; i++)); do
		out=$(dpkg "$@" 2>&1)
		rc=$?
		grep -q 'lock' <<<"$out" && ((rc != 0)) || break
		sleep 1
	done
	printf '%s\n' "$out"
	return "$rc"
}

if ! make -s -C "$IT_ROOT" deb >"$IT_TMP/deb.log" 2>&1; then
	fail_all "make deb failed: $(tail -c 300 "$IT_TMP/deb.log" | tr '\n' ' ')"
fi
version=$(cat "$IT_ROOT/VERSION")
deb=$IT_ROOT/build/iotracer_${version}_$(dpkg --print-architecture).deb
[[ -f $deb ]] || fail_all "make deb made no $deb"
note "$(basename "$deb"): $(stat -c %s "$deb") bytes"

dpkg-deb -c "$deb" | awk '{ print $1, $NF }' | sed 's| \./| |' >"$IT_TMP/list"
want=(-rwxr-xr-x:usr/bin/iotracer -rw-r--r--:lib/systemd/system/iotracer.service
	-rw-r--r--:etc/iotracer/iotracer.conf -rw-r--r--:usr/share/iotracer/iotracer-rules.yml
	-rw-r--r--:usr/share/iotracer/grafana-iotracer.json
	-rw-r--r--:usr/share/doc/iotracer/copyright -rw-r--r--:usr/share/doc/iotracer/changelog.gz
	-rw-r--r--:usr/share/lintian/overrides/iotracer)
for p in iotracer iotracer-bench iotracer-report; do want+=("-rw-r--r--:usr/share/man/man8/$p.8.gz"); done
for s in "$IT_ROOT"/src/bench/scripts/*.bt; do want+=("-rwxr-xr-x:usr/share/iotracer/scripts/$(basename "$s")"); done
bad=""
for w in "${want[@]}"; do
	grep -qxF -- "${w%%:*} ${w#*:}" "$IT_TMP/list" || bad+=" ${w#*:}(${w%%:*})"
done
conf=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles 2>/dev/null)
[[ $conf == /etc/iotracer/iotracer.conf ]] || bad+=" conffiles: '$conf'"
check contents "missing or wrong:$bad" test -z "$bad"

# depends: the libraries, by ldd and dpkg -S, against the Depends field
dep=$(dpkg-deb -f "$deb" Depends)
note "Depends: $dep"
dep_pkgs=$(tr ',' '\n' <<<"$dep" | sed 's/(.*//; s/[[:space:]]//g' | sort -u)
dpkg-deb -x "$deb" "$IT_TMP/root"
bad=""
need=""
bin=$IT_TMP/root/usr/bin/iotracer
ldd "$bin" >"$IT_TMP/ldd"
# the binary's own NEEDED entries (not its libraries' libraries), resolved by ldd, and the
# sonames in its .rodata (what it loads with dlopen), resolved by ldconfig's cache
readelf -p .rodata "$bin" | grep -oE '\]  lib[A-Za-z0-9_+.-]*\.so(\.[0-9]+)+$' | sed 's/^\]  //' |
	sort -u >"$IT_TMP/dlopen"
note "dlopen'ed: $(tr '\n' ' ' <"$IT_TMP/dlopen")"
ldconfig -p | awk '$NF ~ /^\// { print $1, "=>", $NF }' >>"$IT_TMP/ldd"
while read -r so; do
	lib=$(awk -v s="$so" '$1 == s && $3 ~ /^\// { print $3; exit }' "$IT_TMP/ldd")
	owner=$(dpkg -S "$(realpath "${lib:-/nonexistent}")" 2>/dev/null | head -1 | cut -d: -f1)
	[[ -z $owner && -n $lib ]] && owner=$(dpkg -S "$lib" 2>/dev/null | head -1 | cut -d: -f1)
	need+="$owner "
	grep -qxF -- "$owner" <<<"$dep_pkgs" || bad+=" $so (${lib:-not found}, from ${owner:-no package}) not in Depends;"
done < <(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; cat "$IT_TMP/dlopen")
for p in $dep_pkgs; do
	grep -qw -- "$p" <<<"$need" || bad+=" $p in Depends, no library of it linked;"
done
check depends "${bad:-} (libraries' packages: $need)" test -z "$bad"

lintian "$deb" >"$IT_TMP/lintian.txt" 2>&1
note "lintian: $(grep -c '^E:' "$IT_TMP/lintian.txt") errors, $(grep -c '^W:' "$IT_TMP/lintian.txt") warnings"
check lintian "$(grep -E '^[EW]:' "$IT_TMP/lintian.txt" | head -5 | tr '\n' ' ')" \
	test "$(grep -cE '^[EW]:' "$IT_TMP/lintian.txt")" = 0

if dpkg-query -W -f='${Status}' iotracer 2>/dev/null | grep -q installed; then
	skip_all "the iotracer package is already installed here: left alone"
fi
[[ -e /usr/bin/iotracer ]] && skip_all "/usr/bin/iotracer exists (not from a package): left alone"

out=$(dpkg_do -i "$deb")
rc=$?
INSTALLED=1
st=$(dpkg-query -W -f='${Status}' iotracer 2>/dev/null)
ver=$(/usr/bin/iotracer --version 2>&1)
note "dpkg -i: exit $rc, status '$st', /usr/bin/iotracer --version: $ver"
check install "dpkg -i exit $rc ($(tail -c 300 <<<"$out")), status '$st', version '$ver'" \
	test "$rc" = 0 -a "$st" = "install ok installed" -a "${ver#iotracer "$version" }" != "$ver"

out=$(systemd-analyze verify --man=no /lib/systemd/system/iotracer.service 2>&1)
rc=$?
check unit_verify "exit $rc: $(head -c 400 <<<"$out" | tr '\n' ' ')" test "$rc" = 0 -a -z "$out"

dpkg -L iotracer >"$IT_TMP/files"
out=$(dpkg_do -r iotracer)
rc=$?
st=$(dpkg-query -W -f='${Status}' iotracer 2>/dev/null)
left=""
while read -r f; do
	[[ ! -d $f ]] && [[ -e $f || -L $f ]] && [[ $f != /etc/iotracer/iotracer.conf ]] && left+=" $f"
done <"$IT_TMP/files"
[[ -f /etc/iotracer/iotracer.conf ]] || left+=" (conffile removed by dpkg -r)"
out2=$(dpkg_do -P iotracer)
rc2=$?
INSTALLED=0
st2=$(dpkg-query -W -f='${Status}' iotracer 2>/dev/null)
[[ -e /etc/iotracer ]] && left+=" /etc/iotracer after purge"
note "dpkg -r: exit $rc, status '$st'; dpkg -P: exit $rc2, status '${st2:-unknown}'"
check remove "-r exit $rc '$st' ($(tail -c 200 <<<"$out")), -P exit $rc2 '$st2' ($(tail -c 200 <<<"$out2")), left:$left" \
	test "$rc" = 0 -a "$st" = "deinstall ok config-files" -a "$rc2" = 0 -a \
	"${st2:-not-installed}" != "install ok installed" -a "${st2:-not-installed}" != "deinstall ok config-files" -a -z "$left"

it_end
