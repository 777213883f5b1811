#!/usr/bin/env bash
# The tree as git holds it: what a clone gets.
# Oracles: git's own index (ls-files) and file(1)'s reading of each tracked file.
#   no_binaries   no tracked file is an ELF object, executable or archive (build output
#                 belongs in build/, never in git; two debug binaries were once committed).
#                 The fuzzers' regression inputs (tests/fuzz/regress/) are inputs, kept.
#   ignored       .gitignore keeps the build's outputs out: the binaries, objects and
#                 build/ are all ignored by git check-ignore
#   format        every tracked C source and header (but vmlinux/, generated) is as
#                 clang-format leaves it under the repo's .clang-format (`make format`)
#   commit_msg    tools/git-hooks/commit-msg refuses a 73-character subject and a body
#                 glued to its subject, and takes a 72-character one with a body
#   symbols       every global symbol our objects define (nm of build/obj/, as `make`
#                 left them: nothing is built here) starts with a prefix its folder owns
#                 in the table below (docs/architecture.md, "Module prefixes"); none
#                 starts with bpf_ (libbpf's namespace)
#   calls         parts call down: no circle of calls between our objects (nm: each
#                 undefined symbol of an object to the object defining it; tsort finds
#                 the loops), but link's, named in the test as one module in several
#                 files (docs/architecture.md, "Parts call down")
#   lines         every tracked file of src/ and bpf/, and tools/*.c, is at most 800
#                 lines (wc -l): a longer one is split by job (docs/architecture.md)
#   includes      the folders of src/ include down: a file includes headers of its own
#                 folder or of one below it in docs/architecture.md's folder map (its
#                 rows, top to bottom), never of one above; every folder is in the map
# SKIP when the repo is not a git checkout (an unpacked tarball has no index to check).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin no_binaries ignored format commit_msg symbols calls lines includes
require_cmd git file clang-format nm tsort

cd "$IT_ROOT" || fail_all "cannot cd to $IT_ROOT"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
	skip_all "$IT_ROOT is not a git checkout"

bins=$(git ls-files -z -- . ':!tests/fuzz/regress' | xargs -0 -r file -N --mime-type -- 2>/dev/null |
	awk -F': ' '$2 ~ /application\/(x-(executable|sharedlib|pie-executable|object|archive)|x-elf)/ { print $1 }')
if [[ -z $bins ]]; then
	pass no_binaries
else
	fail no_binaries "tracked build outputs: $(tr '\n' ' ' <<<"$bins")"
fi

missing=""
for p in iotracer iotracer-static build/obj/main.o src/main.o iotracer-s99; do
	git check-ignore -q --no-index "$p" || missing+="$p "
done
if [[ -z $missing ]]; then
	pass ignored
else
	fail ignored "not ignored by .gitignore: $missing"
fi

unclean=""
while IFS= read -r -d '' f; do
	clang-format --style=file "$f" | cmp -s - "$f" || unclean+="$f "
done < <(git ls-files -z -- '*.c' '*.h' ':!vmlinux')
if [[ -z $unclean ]]; then
	pass format
else
	fail format "not clang-format clean (make format): $unclean"
fi

hook=$IT_ROOT/tools/git-hooks/commit-msg
s72=$(printf 'x%.0s' {1..72})
printf '%s\n\nbody\n' "$s72" >"$IT_TMP/ok"
printf '%sy\n' "$s72" >"$IT_TMP/long"
printf 'subject\nbody glued\n' >"$IT_TMP/glued"
why=""
sh "$hook" "$IT_TMP/ok" 2>/dev/null || why+="refused a 72-character subject; "
sh "$hook" "$IT_TMP/long" 2>/dev/null && why+="took a 73-character subject; "
sh "$hook" "$IT_TMP/glued" 2>/dev/null && why+="took a body without the blank line; "
if [[ -z $why ]]; then pass commit_msg; else fail commit_msg "$why"; fi

long=$(git ls-files -z -- src bpf 'tools/*.c' | xargs -0 -r wc -l -- |
	awk '$2 != "total" && $1 > 800 { printf "%s (%d lines) ", $2, $1 }')
if [[ -z $long ]]; then
	pass lines
else
	fail lines "over 800 lines: $long"
fi

# The folders of src/ top to bottom: the folder map's rows (`src/main.c` is main.c).
order=$(awk -F'|' '/^## / { map = $0 ~ /^## Folder map/ }
	map && $2 ~ /^ `src\// { f = $2; gsub(/[ `]/, "", f); sub(/^src\//, "", f); sub(/\/$/, "", f); print f }' \
	docs/architecture.md)
up=$( {
	git ls-files -- 'src/*.c' 'src/*.h' | awk '{ print "FILE", $0 }'
	git grep -n -E '^#include "[a-z_]+/' -- 'src/*.c' 'src/*.h' | sed -E 's/:[0-9]+:#include "/ /; s/".*//'
} | awk -v order="$order" '
	BEGIN { n = split(order, o, "\n"); for (i = 1; i <= n; i++) rank[o[i]] = i }
	function folder(f) { sub(/^src\//, "", f); if (f !~ /\//) return f; sub(/\/.*/, "", f); return f }
	$1 == "FILE" { d = folder($2); if (!(d in rank) && !(d in told)) { told[d]; print "src/" d " (not in the map)" }; next }
	{ d = folder($1); h = $2; sub(/\/.*/, "", h)
	  if ((h in rank) && (d in rank) && rank[h] < rank[d]) print $1 " -> " $2 }')
if [[ -z $order ]]; then
	fail includes "no src/ rows in docs/architecture.md's folder map"
elif [[ -z $up ]]; then
	pass includes
else
	fail includes "$(wc -l <<<"$up") includes up the folder map: $(tr '\n' ' ' <<<"$up")"
fi

# The module prefixes: a folder of src/ (or a file at its top), then the prefixes its
# objects' global symbols may start with; a name without a trailing _ is one exact name.
# This table is the one list (docs/architecture.md points here).
prefixes='
main.c   main
bench    bench_ bpfstats_ scrape_ tax_ tracer_
blame    blame_ dblame_ rb_ tblame_
lib      abi_ addr_ it_ json_ jw_ keyfile_ log_ opts_ parse_ procfs_ svg_
load     it_ ld_ khz_
mode     gpamap_ guest_ guestgpa_ hblame_ host_ hostio_ hostout_ hprobe_ link_ linkauth_ lk_
mode     qemu_ scope_ vj_ vjoin_ vreq_
records  agg_ cg_ corr_ ct_ fn_ fnres_ lhist_ log2h_ metrics_ mi_ out_ rec_ recbuf_ rf_ rr_
records  stages_ stk_ uhists_ wbsync_
report   bf_ bk_ ch_ hm_ jl_ pf_ report_ rp_ slowest_ st_
service  cli_ config_ daemon_ dnames_ metrics_ mfiles_ reload_
sink     nat_ sink_ sk_
top      tfile_ top_ tview_
'
objs=()
while IFS= read -r -d '' o; do
	rel=${o#"$IT_ROOT"/build/obj/}
	[[ -f $IT_ROOT/src/${rel%.o}.c ]] && objs+=("$o")
done < <(find "$IT_ROOT/build/obj" -name '*.o' -print0 2>/dev/null)
if ((${#objs[@]} == 0)); then
	fail symbols "no objects under build/obj (make iotracer builds them)"
else
	# each object's global definitions as "SYMBOL OBJECT" (the calls check reads them too)
	for o in "${objs[@]}"; do
		rel=${o#"$IT_ROOT"/build/obj/}
		nm --defined-only -g "$o" | awk -v f="$rel" '$2 ~ /^[TDBRCGSVW]$/ { print $3, f }'
	done | sort >"$IT_TMP/defs"
	bad=$(awk '{ f = $2; sub(/\.o$/, ".c", f); print "src/" f, $1 }' "$IT_TMP/defs" | awk -v table="$prefixes" '
		BEGIN {
			n = split(table, lines, "\n")
			for (i = 1; i <= n; i++) {
				m = split(lines[i], w, " ")
				for (j = 2; j <= m; j++) own[w[1]] = own[w[1]] " " w[j]
			}
		}
		{
			dir = $1; sub(/^src\//, "", dir)
			if (dir !~ /\//) key = dir; else { key = dir; sub(/\/.*/, "", key) }
			ok = 0
			if ($2 !~ /^bpf_/) {
				m = split(own[key], p, " ")
				for (j = 1; j <= m && !ok; j++)
					ok = p[j] ~ /_$/ ? index($2, p[j]) == 1 : $2 == p[j]
			}
			if (!ok) print $1 ":" $2
		}')
	if [[ -z $bad ]]; then
		pass symbols
	else
		fail symbols "$(wc -l <<<"$bad") global symbols outside their folder's prefixes (the table in this test): $(tr '\n' ' ' <<<"$bad")"
	fi
fi

# Objects that may call one another in a circle: each line one module split in files that
# share its internal header. Only link's four (docs/architecture.md).
circles_ok='
mode/link.o mode/linkin.o mode/linknet.o mode/linkout.o
'
if ((${#objs[@]} == 0)); then
	fail calls "no objects under build/obj (make iotracer builds them)"
else
	for o in "${objs[@]}"; do
		rel=${o#"$IT_ROOT"/build/obj/}
		nm -u "$o" | awk -v f="$rel" '{ print $2, f }'
	done | sort >"$IT_TMP/uses"
	join "$IT_TMP/uses" "$IT_TMP/defs" | awk '$2 != $3 { print $2, $3 }' | sort -u >"$IT_TMP/calls"
	# tsort names each loop it has to break: "input contains a loop:", then its members
	loops=$(tsort "$IT_TMP/calls" 2>&1 >/dev/null | sed 's/^tsort: //' | awk -v ok="$circles_ok" '
		BEGIN { n = split(ok, lines, "\n"); for (i = 1; i <= n; i++) if (split(lines[i], w, " ")) for (j in w) grp[w[j]] = i }
		function flush() { if (nm && bad) print members; members = ""; nm = 0; bad = 0; g = "" }
		/input contains a loop/ { flush(); next }
		{ members = members (nm++ ? " " : "") $1
		  if (!($1 in grp) || (g != "" && grp[$1] != g)) bad = 1; else g = grp[$1] }
		END { flush() }')
	if [[ -z $loops ]]; then
		pass calls
	else
		fail calls "objects calling one another in a circle: $(sed 's/.*/[&]/' <<<"$loops" | tr '\n' ' ')"
	fi
fi
it_end
