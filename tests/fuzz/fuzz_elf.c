// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_elf: the ELF symbol reader of host mode (qemu_sym_offsets, mode/qemusym.c,
 * libelf): the input is written to a memfd and read from its path, as host mode
 * reads /proc/PID/exe. The names looked up are those of seed_elf.c (QEMU's uprobe
 * targets), a data symbol and a name that is never there.
 *
 * Checked besides memory safety: the result is a count of names found or a
 * negative errno with a one-line reason; a name found has a file offset inside
 * the file (a uprobe there would attach to bytes of this file), one not found
 * has offset 0.
 */
#include "fuzz.h"
#include "mode/qemu.h"

static const char *const names[] = {
	"virtio_blk_handle_vq",
	"virtqueue_pop",
	"blk_aio_preadv",
	"qemu_main",
	"qemu_obj",
	"not_there",
};
#define NR_NAMES ((int)(sizeof(names) / sizeof(names[0])))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t offs[NR_NAMES];
	char why[160];
	int n, i, nonzero = 0;

	why[0] = '\0';
	n = qemu_sym_offsets(fuzz_file(data, size), names, NR_NAMES, offs, why, sizeof(why));
	FUZZ_CHECK(n <= NR_NAMES, "returned %d", n);
	if (n < 0) {
		FUZZ_CHECK(why[0] && !strchr(why, '\n'), "reason \"%s\"", why);
		return 0;
	}
	for (i = 0; i < NR_NAMES; i++) {
		FUZZ_CHECK(offs[i] < size, "%s at offset %llu of a %zu-byte file", names[i],
			   (unsigned long long)offs[i], size);
		nonzero += offs[i] != 0;
	}
	FUZZ_CHECK(nonzero == n, "returned %d found, %d offsets set", n, nonzero);
	return 0;
}
