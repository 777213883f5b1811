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
# SKIP when the repo is not a git checkout (an unpacked tarball has no index to check).
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin no_binaries ignored format commit_msg
require_cmd git file clang-format

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
it_end
