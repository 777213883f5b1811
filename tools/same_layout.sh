#!/bin/sh
# The loader opens the compat object in the main skeleton's layout
# (src/load/loader.c open_skel): both objects' globals must sit at the same
# offsets of the same sections, or a compat kernel's (before 5.12) config and
# filters land on other variables. Fails the build naming the first that moved.
# A global without an initializer is placed where clang first meets a use of
# it, which differs between the builds: bpf/config.bpf.h initializes every one.
set -eu
OBJDUMP=${LLVM_OBJDUMP:-llvm-objdump}
layout() {
	"$OBJDUMP" -t "$1" | awk '$0 ~ / \.(rodata|bss|data)/ { print $NF, $1, $(NF-2), $(NF-1) }' | sort
}
a=$(layout "$1")
b=$(layout "$2")
[ "$a" = "$b" ] && exit 0
echo "$2: globals not at $1's offsets (name offset section size):" >&2
printf '%s\n' "$a" >/tmp/.same_layout.$$.a
printf '%s\n' "$b" | diff /tmp/.same_layout.$$.a - | head -6 >&2 || true
rm -f /tmp/.same_layout.$$.a
exit 1
