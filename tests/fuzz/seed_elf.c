// SPDX-License-Identifier: GPL-2.0
/*
 * seed_elf.c: the source of fuzz_elf's seeds, built by `make fuzz-build` (never
 * committed as binaries) into a stripped shared object (.dynsym only), a static
 * executable (.symtab only, ET_EXEC) and a PIE with both tables. Without libc, so
 * they stay about 1-2 KiB. A few functions carry the names of QEMU's uprobe targets
 * that fuzz_elf looks up; qemu_obj is a data symbol (not a function: never found).
 */
int virtio_blk_handle_vq(void *s, void *vq)
{
	return vq != s;
}

int virtqueue_pop(void *vq, unsigned long sz)
{
	return (int)sz + (vq != 0);
}

int blk_aio_preadv(int x)
{
	return x * 3;
}

int qemu_obj = 5;

void qemu_main(void)
{
	for (;;)
		;
}
