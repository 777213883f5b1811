# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # RAMLOOP_* are read by the caller
#
# Sourced by the measuring tools (bpf_ab.sh, daemon_instr.sh): one RAM-backed loop
# device, filled so reads hit data, direct IO to its backing file.
#
#   ramloop SIZE ERRDIR   sets RAMLOOP_DEV (/dev/loopN over a /dev/shm file already
#                         unlinked: losetup -d frees it), or returns 1 with RAMLOOP_WHY;
#                         ERRDIR keeps fio's and losetup's stderr
ramloop() {
	local img
	RAMLOOP_DEV="" RAMLOOP_WHY=""
	img=$(mktemp /dev/shm/iotracer-loop.XXXXXX.img) || {
		RAMLOOP_WHY="cannot create a file in /dev/shm"
		return 1
	}
	if ! fio --name=fill --filename="$img" --size="$1" --rw=write --bs=1M \
		--output=/dev/null 2>"$2/fill.err"; then
		RAMLOOP_WHY="fio could not fill $img with --size $1: $(tail -n1 "$2/fill.err")"
	elif ! RAMLOOP_DEV=$(losetup -f --show --direct-io=on "$img" 2>"$2/losetup.err"); then
		RAMLOOP_WHY="losetup: $(tail -n1 "$2/losetup.err")"
	fi
	rm -f "$img" # the loop device holds it until losetup -d
	[[ -n $RAMLOOP_DEV ]]
}
