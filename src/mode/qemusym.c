// SPDX-License-Identifier: GPL-2.0
/*
 * qemusym: the file offsets of a QEMU executable's exported functions (where
 * host mode's uprobes attach), from its ELF symbol tables. See qemu.h for the
 * interface and docs/qemu.md for the rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mode/qemu.h"

static __attribute__((format(printf, 4, 5))) int why_err(char *why, size_t whylen, int err,
							 const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return err;
}

/*
 * A uprobe is placed at a file offset: the byte of the file that the
 * loader maps at the symbol's virtual address. The PT_LOAD segment that
 * holds the address gives it (vaddr - p_vaddr + p_offset); a file without
 * program headers falls back to its allocated sections.
 */
static int vaddr_to_off(Elf *e, uint64_t va, uint64_t *off)
{
	Elf_Scn *scn = NULL;
	GElf_Phdr ph;
	GElf_Shdr sh;
	size_t i, nph = 0;

	if (elf_getphdrnum(e, &nph))
		nph = 0;
	for (i = 0; i < nph; i++) {
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (va >= ph.p_vaddr && va - ph.p_vaddr < ph.p_filesz) {
			*off = va - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	if (nph)
		return -ENOENT;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_type == SHT_NOBITS)
			continue;
		if (va >= sh.sh_addr && va - sh.sh_addr < sh.sh_size) {
			*off = va - sh.sh_addr + sh.sh_offset;
			return 0;
		}
	}
	return -ENOENT;
}

struct symq {
	const char *const *names;
	int n;
	uint64_t *va; /* 0 = not found yet */
};

static bool sym_is_func(const GElf_Sym *s)
{
	int t = GELF_ST_TYPE(s->st_info);

	return s->st_shndx != SHN_UNDEF && s->st_value && (t == STT_FUNC || t == STT_GNU_IFUNC);
}

/* One pass over a symbol table: every wanted, not yet found name. */
static void scan_symtab(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct symq *q)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t i, cnt;
	const char *name;
	GElf_Sym s;
	int k;

	if (!d || !sh->sh_entsize)
		return;
	cnt = sh->sh_size / sh->sh_entsize;
	for (i = 1; i < cnt; i++) {
		if (!gelf_getsym(d, (int)i, &s) || !sym_is_func(&s))
			continue;
		name = elf_strptr(e, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		for (k = 0; k < q->n; k++)
			if (!q->va[k] && q->names[k] && !strcmp(name, q->names[k]))
				q->va[k] = s.st_value;
	}
}

/* Scans the tables of one type; returns how many there were. */
static int scan_type(Elf *e, Elf64_Word type, struct symq *q)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int nr = 0;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		scan_symtab(e, scn, &sh, q);
		nr++;
	}
	return nr;
}

static int sym_offsets_elf(Elf *e, struct symq *q, uint64_t *offs, char *why, size_t whylen)
{
	GElf_Ehdr eh;
	size_t size = 0;
	int k, ntab, found = 0;

	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || !elf_rawfile(e, &size))
		return why_err(why, whylen, -ENOEXEC, "not an ELF file");
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return why_err(why, whylen, -ENOEXEC, "ELF type %u is neither ET_EXEC nor ET_DYN",
			       eh.e_type);
	/* .dynsym first: it survives strip; .symtab only adds what it lacks */
	ntab = scan_type(e, SHT_DYNSYM, q);
	ntab += scan_type(e, SHT_SYMTAB, q);
	if (!ntab)
		return why_err(why, whylen, -ENOENT, "no symbol table (.dynsym or .symtab)");
	/* an offset past the end (a lying header) is no code; 0 (the ELF header) means none */
	for (k = 0; k < q->n; k++) {
		if (q->va[k] && !vaddr_to_off(e, q->va[k], &offs[k]) && offs[k] && offs[k] < size)
			found++;
		else
			offs[k] = 0;
	}
	return found;
}

int qemu_sym_offsets(const char *path, const char *const *names, int n, uint64_t *offs, char *why,
		     size_t whylen)
{
	struct symq q = { names, n, NULL };
	Elf *e;
	int fd, ret;

	if (!path || n < 0 || (n && (!names || !offs)))
		return why_err(why, whylen, -EINVAL, "bad arguments");
	if (n)
		memset(offs, 0, n * sizeof(*offs));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return why_err(why, whylen, -EINVAL, "libelf: %s", elf_errmsg(-1));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return why_err(why, whylen, -errno, "%s: %s", path, strerror(errno));
	q.va = calloc(n ? n : 1, sizeof(*q.va));
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!q.va)
		ret = why_err(why, whylen, -ENOMEM, "out of memory");
	else if (!e)
		ret = why_err(why, whylen, -ENOEXEC, "not an ELF file: %s", elf_errmsg(-1));
	else
		ret = sym_offsets_elf(e, &q, offs, why, whylen);
	elf_end(e);
	free(q.va);
	close(fd);
	return ret;
}
