// SPDX-License-Identifier: GPL-2.0
/*
 * btfext_noline OBJ: drop the line info from a BPF object's .BTF.ext, in place
 * (the Makefile runs it on the linked object before the skeleton is made).
 *
 * libbpf copies the whole .BTF.ext of the object it opens and keeps it for
 * the object's life, and copies each loaded program's line info again at
 * load: for iotracer's object, line info is 93 % of the section (922 of 994
 * KiB), the bulk of the daemon's anonymous memory after the program code
 * (docs/bench.md, "Thirteenth round"). It only maps instructions back to
 * source lines in verifier logs and `bpftool prog dump`; the function info
 * and the CO-RE relocations, which loading needs, are kept. `make
 * BPF_LINE_INFO=1` keeps it (for reading verifier logs).
 *
 * The section is a header (struct btf_ext_header: magic, version, flags,
 * hdr_len, then offset and length of func_info, line_info and, when hdr_len
 * says so, core_relo, each offset from the end of the header) and the three
 * blocks. Rewritten: the header with line_info empty, func_info, core_relo.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ext_hdr {
	uint16_t magic;
	uint8_t version;
	uint8_t flags;
	uint32_t hdr_len;
	uint32_t func_info_off, func_info_len;
	uint32_t line_info_off, line_info_len;
	uint32_t core_relo_off, core_relo_len; /* when hdr_len covers them */
};

#define EXT_MAGIC 0xeB9F
#define HDR_MIN 24 /* without core_relo */

static int fail(const char *obj, const char *what)
{
	fprintf(stderr, "btfext_noline: %s: %s%s%s\n", obj, what, elf_errno() ? ": " : "",
		elf_errno() ? elf_errmsg(-1) : "");
	return 1;
}

/* The new section's bytes from the old ones (n bytes at old): malloc'd, its size in *out_n. */
static void *rewrite(const uint8_t *old, size_t n, size_t *out_n)
{
	struct ext_hdr h = { 0 };
	uint8_t *neu;
	size_t body;

	if (n < HDR_MIN)
		return NULL;
	memcpy(&h, old, n < sizeof(h) ? n : sizeof(h));
	if (h.magic != EXT_MAGIC || h.hdr_len < HDR_MIN || h.hdr_len > n)
		return NULL;
	if (h.hdr_len < sizeof(h))
		h.core_relo_off = h.core_relo_len = 0;
	if ((uint64_t)h.hdr_len + h.func_info_off + h.func_info_len > n ||
	    (uint64_t)h.hdr_len + h.core_relo_off + h.core_relo_len > n)
		return NULL;
	body = (size_t)h.func_info_len + h.core_relo_len;
	neu = calloc(1, h.hdr_len + body);
	if (!neu)
		return NULL;
	memcpy(neu + h.hdr_len, old + h.hdr_len + h.func_info_off, h.func_info_len);
	memcpy(neu + h.hdr_len + h.func_info_len, old + h.hdr_len + h.core_relo_off,
	       h.core_relo_len);
	h.func_info_off = 0;
	h.line_info_off = h.func_info_len;
	h.line_info_len = 0;
	if (h.hdr_len >= sizeof(h))
		h.core_relo_off = h.func_info_len;
	memcpy(neu, &h, h.hdr_len < sizeof(h) ? h.hdr_len : sizeof(h));
	*out_n = h.hdr_len + body;
	return neu;
}

int main(int argc, char **argv)
{
	const char *obj = argc == 2 ? argv[1] : NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx, n = 0;
	Elf_Data *d;
	GElf_Shdr sh;
	void *neu = NULL;
	int fd, rc = 1;
	Elf *e;

	if (!obj) {
		fprintf(stderr, "usage: btfext_noline OBJ\n");
		return 2;
	}
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(obj, "libelf");
	fd = open(obj, O_RDWR);
	if (fd < 0) {
		perror(obj);
		return 1;
	}
	e = elf_begin(fd, ELF_C_RDWR, NULL);
	if (!e || elf_getshdrstrndx(e, &shstrndx)) {
		rc = fail(obj, "not an ELF object");
		goto out;
	}
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".BTF.ext"))
			break;
	}
	if (!scn) {
		rc = fail(obj, "no .BTF.ext section");
		goto out;
	}
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !(neu = rewrite(d->d_buf, d->d_size, &n))) {
		rc = fail(obj, "a .BTF.ext this tool does not know");
		goto out;
	}
	d->d_buf = neu;
	d->d_size = n;
	elf_flagdata(d, ELF_C_SET, ELF_F_DIRTY);
	if (elf_update(e, ELF_C_WRITE) < 0) {
		rc = fail(obj, "cannot write it back");
		goto out;
	}
	rc = 0;
out:
	if (e)
		elf_end(e);
	close(fd);
	free(neu);
	return rc;
}
