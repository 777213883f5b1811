// SPDX-License-Identifier: GPL-2.0
/* Unit tests for src/mode/qemu.c, qemuargs.c and qemusym.c (qemu.h). */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "unit.h"
#include "iotracer.h"
#include "mode/qemu.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define QEMU_BIN "/usr/bin/qemu-system-x86_64"

static char tmpdir[PATH_MAX];

static bool make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/it_qemu_XXXXXX");
	return mkdtemp(tmpdir) != NULL;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void rm_tmpdir(void)
{
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- symbols ---- */

/*
 * A minimal ELF64 file written byte by byte, so the expected offsets are
 * known by construction: a text PT_LOAD at file offset 0x1000 mapped at
 * base + 0x3000 (vaddr and offset differ), and a .dynsym.
 */
#define SYN_TEXT_OFF 0x1000
#define SYN_TEXT_VA 0x3000
static const char syn_dynstr[] = "\0fn_a\0fn_b\0fn_undef\0obj\0fn_out";
static const char syn_shstr[] = "\0.text\0.dynstr\0.dynsym\0.shstrtab";

static void syn_shdr(Elf64_Shdr *sh, Elf64_Word name, Elf64_Word type, Elf64_Off off,
		     Elf64_Xword size)
{
	sh->sh_name = name;
	sh->sh_type = type;
	sh->sh_offset = off;
	sh->sh_size = size;
}

static bool write_synthetic_elf(const char *path, uint16_t type, uint64_t base)
{
	static unsigned char img[0x1400 + 5 * sizeof(Elf64_Shdr)];
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + sizeof(*eh));
	Elf64_Sym *sym = (Elf64_Sym *)(img + 0x1200);
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + 0x1400);
	uint64_t text = base + SYN_TEXT_VA;

	memset(img, 0, sizeof(img));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = type;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = 0x1400;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = 5;
	eh->e_shstrndx = 4;
	*ph = (Elf64_Phdr){ .p_type = PT_LOAD,
			    .p_flags = PF_R | PF_X,
			    .p_offset = SYN_TEXT_OFF,
			    .p_vaddr = text,
			    .p_paddr = text,
			    .p_filesz = 0x100,
			    .p_memsz = 0x100,
			    .p_align = 0x1000 };
	memcpy(img + 0x1100, syn_dynstr, sizeof(syn_dynstr));
	memcpy(img + 0x1300, syn_shstr, sizeof(syn_shstr));
	/* fn_a: FUNC; fn_b: IFUNC; fn_undef: undefined; obj: OBJECT; fn_out: outside PT_LOAD */
	sym[1] = (Elf64_Sym){ 1, ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), 0, 1, text + 0x10, 8 };
	sym[2] = (Elf64_Sym){ 6, ELF64_ST_INFO(STB_GLOBAL, STT_GNU_IFUNC), 0, 1, text + 0x20, 8 };
	sym[3] = (Elf64_Sym){ 11, ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), 0, SHN_UNDEF, 0, 0 };
	sym[4] = (Elf64_Sym){ 20, ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT), 0, 1, text + 0x30, 8 };
	sym[5] = (Elf64_Sym){ 24, ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), 0, 1, text + 0x9000, 8 };
	syn_shdr(&sh[1], 1, SHT_PROGBITS, SYN_TEXT_OFF, 0x100);
	sh[1].sh_flags = SHF_ALLOC | SHF_EXECINSTR;
	sh[1].sh_addr = text;
	syn_shdr(&sh[2], 7, SHT_STRTAB, 0x1100, sizeof(syn_dynstr));
	syn_shdr(&sh[3], 15, SHT_DYNSYM, 0x1200, 6 * sizeof(*sym));
	sh[3].sh_link = 2;
	sh[3].sh_info = 1;
	sh[3].sh_entsize = sizeof(*sym);
	syn_shdr(&sh[4], 23, SHT_STRTAB, 0x1300, sizeof(syn_shstr));
	return !unit_write(path, img, sizeof(img));
}

static void check_synthetic(uint16_t type, uint64_t base)
{
	static const char *const names[] = { "fn_a", "fn_b",   "fn_undef",
					     "obj",  "fn_out", "fn_missing" };
	const uint64_t want[] = { SYN_TEXT_OFF + 0x10, SYN_TEXT_OFF + 0x20, 0, 0, 0, 0 };
	uint64_t offs[ARRAY_SIZE(names)];
	char path[PATH_MAX + 16], why[128] = "", name[64];
	size_t i;

	snprintf(path, sizeof(path), "%s/syn-%u.elf", tmpdir, type);
	if (!ASSERT_TRUE(write_synthetic_elf(path, type, base), "write elf"))
		return;
	if (!ASSERT_EQ(qemu_sym_offsets(path, names, ARRAY_SIZE(names), offs, why, sizeof(why)), 2,
		       why))
		return;
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(name, sizeof(name), "e_type %u: %s", type, names[i]);
		if (!ASSERT_EQ(offs[i], want[i], name))
			return;
	}
}

static void test_sym_synthetic(void)
{
	if (!ASSERT_TRUE(make_tmpdir(), "mkdtemp"))
		return;
	check_synthetic(ET_EXEC, 0x400000);
	check_synthetic(ET_DYN, 0);
	rm_tmpdir();
}

/* A program header that puts the text past the end of the file (found by fuzz_elf). */
static void test_sym_segment_past_eof(void)
{
	static const char *const names[] = { "fn_a", "fn_b" };
	const uint64_t lie = 0x40000000;
	uint64_t offs[2] = { 1, 1 };
	char path[PATH_MAX + 16], why[128] = "";
	int fd;

	if (!ASSERT_TRUE(make_tmpdir(), "mkdtemp"))
		return;
	snprintf(path, sizeof(path), "%s/lying.elf", tmpdir);
	fd = write_synthetic_elf(path, ET_DYN, 0) ? open(path, O_WRONLY) : -1;
	if (ASSERT_TRUE(fd >= 0 && pwrite(fd, &lie, sizeof(lie),
					  sizeof(Elf64_Ehdr) + offsetof(Elf64_Phdr, p_offset)) ==
					   sizeof(lie),
			"patch p_offset")) {
		ASSERT_EQ(qemu_sym_offsets(path, names, 2, offs, why, sizeof(why)), 0, why);
		ASSERT_EQ(offs[0] + offs[1], 0ull, "no offset past the end of the file");
	}
	if (fd >= 0)
		close(fd);
	rm_tmpdir();
}

int main(void);

/* In .symtab of this (unstripped) test binary, not in its .dynsym. */
__attribute__((noinline, used)) int qemu_test_uprobe_target(int x);
__attribute__((noinline, used)) int qemu_test_uprobe_target(int x)
{
	return x * 3 + 1;
}

/* Oracle: where the kernel mapped &fn, from /proc/self/maps. */
static bool maps_file_offset(uintptr_t addr, uint64_t *off)
{
	unsigned long start, end, moff;
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &moff) != 3)
			continue;
		if (addr >= start && addr < end) {
			*off = addr - start + moff;
			found = true;
		}
	}
	fclose(f);
	return found;
}

static void test_sym_self_symtab(void)
{
	static const char *const names[] = { "qemu_test_uprobe_target", "main" };
	uint64_t offs[2], want;
	char why[128] = "";

	if (!ASSERT_TRUE(maps_file_offset((uintptr_t)&qemu_test_uprobe_target, &want), "maps"))
		return;
	if (!ASSERT_EQ(qemu_sym_offsets("/proc/self/exe", names, 2, offs, why, sizeof(why)), 2,
		       why))
		return;
	ASSERT_EQ(offs[0], want, "file offset of qemu_test_uprobe_target");
	ASSERT_TRUE(maps_file_offset((uintptr_t)&main, &want), "maps main");
	ASSERT_EQ(offs[1], want, "file offset of main");
	ASSERT_EQ(qemu_test_uprobe_target(1), 4, "target is callable");
}

/* Oracle for a stripped QEMU: binutils' nm -D and readelf -lW. */
struct load_seg {
	unsigned long off, va, filesz;
	bool exec;
};

static int read_loads(struct load_seg *seg, int max)
{
	char line[512], flags[32];
	unsigned long pa, memsz;
	int n = 0;
	FILE *f = popen("readelf -lW " QEMU_BIN " 2>/dev/null", "r");

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (sscanf(line, " LOAD %lx %lx %lx %lx %lx %31[RWE ]", &seg[n].off, &seg[n].va,
			   &pa, &seg[n].filesz, &memsz, flags) != 6)
			continue;
		seg[n++].exec = strchr(flags, 'E') != NULL;
	}
	pclose(f);
	return n;
}

static bool nm_addr(const char *sym, unsigned long *va)
{
	char cmd[256], line[512], name[256], t;
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm -D --defined-only " QEMU_BIN " 2>/dev/null");
	f = popen(cmd, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%lx %c %255s", va, &t, name) == 3 && !strcmp(name, sym);
	while (fgets(line, sizeof(line), f))
		; /* drain, so nm does not die of SIGPIPE noise */
	pclose(f);
	return found;
}

static void check_qemu_sym(const char *sym, uint64_t off, const struct load_seg *seg, int nseg)
{
	unsigned long va;
	int i;

	if (!ASSERT_TRUE(nm_addr(sym, &va), sym))
		return;
	for (i = 0; i < nseg; i++) {
		if (va < seg[i].va || va - seg[i].va >= seg[i].filesz)
			continue;
		ASSERT_TRUE(seg[i].exec, sym);
		ASSERT_EQ(off, va - seg[i].va + seg[i].off, sym);
		return;
	}
	ASSERT_TRUE(false && "no LOAD segment holds the symbol", sym);
}

static void test_sym_qemu_dynsym(void)
{
	static const char *const names[] = { "virtio_blk_handle_vq", "virtqueue_pop",
					     "virtqueue_push",	     "virtio_notify",
					     "blk_aio_preadv",	     "blk_aio_pwritev",
					     "it_no_such_function" };
	uint64_t offs[ARRAY_SIZE(names)];
	struct load_seg seg[16];
	char why[128] = "";
	struct stat st;
	int i, nseg;

	if (stat(QEMU_BIN, &st)) {
		SKIP("%s not installed", QEMU_BIN);
		return;
	}
	nseg = read_loads(seg, ARRAY_SIZE(seg));
	if (!nseg) {
		SKIP("readelf (binutils) not available");
		return;
	}
	if (!ASSERT_EQ(qemu_sym_offsets(QEMU_BIN, names, ARRAY_SIZE(names), offs, why, sizeof(why)),
		       6, why))
		return;
	for (i = 0; i < 6; i++) {
		ASSERT_TRUE(offs[i] > 0 && offs[i] < (uint64_t)st.st_size, names[i]);
		check_qemu_sym(names[i], offs[i], seg, nseg);
	}
	ASSERT_EQ(offs[6], 0, "a missing name has offset 0");
}

static void test_sym_errors(void)
{
	static const char *const names[] = { "x" };
	char path[PATH_MAX + 16], why[128] = "";
	uint64_t off = 7;

	if (!ASSERT_TRUE(make_tmpdir(), "mkdtemp"))
		return;
	snprintf(path, sizeof(path), "%s/text", tmpdir);
	ASSERT_TRUE(!unit_write(path, "#!/bin/sh\necho hi\n", 18), "write");
	ASSERT_TRUE(qemu_sym_offsets(path, names, 1, &off, why, sizeof(why)) < 0, "not ELF");
	ASSERT_TRUE(strstr(why, "not an ELF") != NULL, why);
	ASSERT_EQ(off, 0, "offs cleared");
	snprintf(path, sizeof(path), "%s/missing", tmpdir);
	ASSERT_EQ(qemu_sym_offsets(path, names, 1, &off, why, sizeof(why)), -ENOENT, "missing");
	ASSERT_TRUE(strstr(why, "missing") != NULL, why);
	ASSERT_EQ(qemu_sym_offsets(NULL, names, 1, &off, why, sizeof(why)), -EINVAL, "NULL path");
	rm_tmpdir();
}

/* ---- command line ---- */

/* argv (NULL-terminated) -> NUL-separated buffer, as /proc/PID/cmdline. */
static size_t mkcmd(char *buf, size_t cap, const char *const *argv)
{
	size_t len = 0, n;

	for (; *argv; argv++) {
		n = strlen(*argv) + 1;
		if (len + n > cap)
			break;
		memcpy(buf + len, *argv, n);
		len += n;
	}
	return len;
}

static int parse_argv(const char *const *argv, struct qemu_disk *d, int max)
{
	static char buf[8192];

	return qemu_parse_cmdline(buf, mkcmd(buf, sizeof(buf), argv), d, max);
}

struct want_disk {
	const char *id, *file, *format, *device, *serial;
};

static bool check_disk(const struct qemu_disk *d, const struct want_disk *w)
{
	return ASSERT_STREQ(d->id, w->id, w->id) && ASSERT_STREQ(d->file, w->file, w->id) &&
	       ASSERT_STREQ(d->format, w->format, w->id) &&
	       ASSERT_STREQ(d->device, w->device, w->id) &&
	       ASSERT_STREQ(d->serial, w->serial, w->id) && ASSERT_EQ(d->stat_ok, 0, w->id);
}

static void check_disks(const char *const *argv, const struct want_disk *w, int n)
{
	struct qemu_disk d[QEMU_MAX_DISKS];
	int i;

	if (!ASSERT_EQ(parse_argv(argv, d, QEMU_MAX_DISKS), n, argv[1]))
		return;
	for (i = 0; i < n; i++)
		if (!check_disk(&d[i], &w[i]))
			return;
}

static const char *const lab_argv[] = { "qemu-system-x86_64",
					"-name",
					"lab-6.1",
					"-machine",
					"q35",
					"-append",
					"console=ttyS0 -drive lab.wait=/dev/nvme0n1",
					"-drive",
					"file=/tmp/x/nvme.img,if=none,id=n0,format=raw",
					"-device",
					"nvme,drive=n0,serial=labnvme0",
					"-device",
					"virtio-scsi-pci,id=scsi0",
					"-drive",
					"file=/tmp/x/scsi.img,if=none,id=s0,format=raw,cache=none",
					"-device",
					"scsi-hd,drive=s0,bus=scsi0.0,serial=labscsi0",
					"-drive",
					"file=/tmp/x/vblk.img,if=none,id=v0,format=raw",
					"--device",
					"virtio-blk-pci,drive=v0,serial=labvblk0",
					"-device",
					"virtio-serial-pci",
					"-chardev",
					"socket,id=ch0,path=/tmp/x/s,server=on,wait=off",
					"-device",
					"virtserialport,chardev=ch0,name=lab.0",
					NULL };

static void test_cmdline_lab(void)
{
	static const struct want_disk w[] = {
		{ "n0", "/tmp/x/nvme.img", "raw", "nvme", "labnvme0" },
		{ "s0", "/tmp/x/scsi.img", "raw", "scsi-hd", "labscsi0" },
		{ "v0", "/tmp/x/vblk.img", "raw", "virtio-blk-pci", "labvblk0" },
	};

	check_disks(lab_argv, w, ARRAY_SIZE(w));
}

static void test_cmdline_escapes_and_drive_serial(void)
{
	static const char *const argv[] = {
		"qemu-system-x86_64",
		"-drive",
		"file=/tmp/a,,b.img,if=virtio,serial=0123456789abcdefghijKLM,format=qcow2",
		"-drive",
		"file=/tmp/c.img,,,id=c0,serial=old",
		"-device",
		"driver=ide-hd,drive=c0",
		"-drive",
		"if=none,id=empty",
		NULL
	};
	static const struct want_disk w[] = {
		/* if=virtio: the -drive is the device; serial cut to 20 like virtio does */
		{ "", "/tmp/a,b.img", "qcow2", "virtio-blk", "0123456789abcdefghij" },
		/* the -device has no serial= here: the older -drive serial= stays */
		{ "c0", "/tmp/c.img,", "", "ide-hd", "old" },
	};

	check_disks(argv, w, ARRAY_SIZE(w));
}

static void test_cmdline_blockdev(void)
{
	static const char *const argv[] = {
		"qemu-system-x86_64",
		"-blockdev",
		"driver=file,filename=/img/q.qcow2,node-name=proto0",
		"-blockdev",
		"driver=qcow2,file=proto0,node-name=fmt0",
		"-device",
		"virtio-blk-pci,drive=fmt0,serial=bd0",
		"-blockdev",
		"driver=host_device,filename=/dev/sdz,node-name=raw1,cache.direct=on",
		"-device",
		"nvme,drive=raw1,serial=bd1",
		"-blockdev",
		"{\"driver\":\"file\",\"filename\":\"/img/j\\\"s.img\",\"node-name\":\"jp\"}",
		"-blockdev",
		"{ \"driver\": \"raw\", \"node-name\": \"jf\", \"file\": \"jp\", \"n\": 12,"
		" \"ro\": true, \"a\": [1, {\"x\": \"y\"}] }",
		"-blockdev",
		"{\"driver\":\"qcow2\",\"node-name\":\"nested\",\"file\":{\"driver\":\"file\","
		"\"filename\":\"/img/n.qcow2\"}}",
		"-device",
		"{\"driver\":\"scsi-hd\",\"drive\":\"nested\",\"serial\":\"bd3\"}",
		NULL
	};
	static const struct want_disk w[] = {
		{ "fmt0", "/img/q.qcow2", "qcow2", "virtio-blk-pci", "bd0" },
		{ "raw1", "/dev/sdz", "raw", "nvme", "bd1" },
		{ "jf", "/img/j\"s.img", "raw", "", "" },
		{ "nested", "/img/n.qcow2", "qcow2", "scsi-hd", "bd3" },
	};

	check_disks(argv, w, ARRAY_SIZE(w));
}

static void test_cmdline_bad(void)
{
	static const char *const missing[] = { "qemu", "-drive", "file=/a,id=a", "-device", NULL };
	static const char *const json[] = { "qemu", "-blockdev", "{\"driver\":\"file\",", NULL };
	static const char *const trailing[] = { "qemu", "-device", "{\"driver\":\"x\",}", NULL };
	struct qemu_disk d[4];
	char unterminated[] = { 'q', 0, '-', 'd', 'r', 'i', 'v', 'e', 0, 'f', '=' };

	ASSERT_EQ(parse_argv(missing, d, 4), -EINVAL, "option without its value");
	ASSERT_EQ(parse_argv(json, d, 4), -EINVAL, "truncated JSON");
	ASSERT_EQ(parse_argv(trailing, d, 4), -EINVAL, "JSON trailing comma");
	ASSERT_EQ(qemu_parse_cmdline(unterminated, sizeof(unterminated), d, 4), -EINVAL,
		  "unterminated argv");
	ASSERT_EQ(qemu_parse_cmdline("", 0, d, 4), 0, "empty (a zombie's cmdline)");
	ASSERT_EQ(qemu_parse_cmdline(NULL, 0, d, 4), -EINVAL, "NULL");
}

static void test_cmdline_max(void)
{
	struct qemu_disk d[2];

	ASSERT_EQ(parse_argv(lab_argv, d, 2), 2, "bounded by max");
	ASSERT_STREQ(d[1].id, "s0", "second disk");
	ASSERT_EQ(parse_argv(lab_argv, NULL, 0), 0, "max 0");
}

/* ---- /proc ---- */

static bool fake_pid(const char *pid, const char *exe)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/proc/%s", tmpdir, pid);
	if (mkdir(path, 0755))
		return false;
	if (!exe)
		return true;
	snprintf(path, sizeof(path), "%s/proc/%s/exe", tmpdir, pid);
	return !symlink(exe, path);
}

static void test_discover(void)
{
	char proc[PATH_MAX + 16], self[32];
	pid_t pids[8] = { 0 };
	bool ok;
	int n;

	if (!ASSERT_TRUE(make_tmpdir(), "mkdtemp"))
		return;
	snprintf(proc, sizeof(proc), "%s/proc", tmpdir);
	snprintf(self, sizeof(self), "%d", (int)getpid());
	ok = !mkdir(proc, 0755) && fake_pid("100", QEMU_BIN) && fake_pid("200", "/usr/bin/bash") &&
	     fake_pid("300", "/opt/bin/qemu-system-aarch64 (deleted)") &&
	     fake_pid(self, QEMU_BIN) && fake_pid("abc", QEMU_BIN) && fake_pid("400", NULL) &&
	     fake_pid("500", "/usr/bin/qemu-img");
	if (ASSERT_TRUE(ok, "fake proc")) {
		n = qemu_discover(proc, pids, 8);
		ASSERT_EQ(n, 2, "qemu processes");
		ASSERT_EQ(pids[0] + pids[1], 400, "pids 100 and 300");
		ASSERT_TRUE(pids[0] == 100 || pids[0] == 300, "first pid");
		ASSERT_EQ(qemu_discover(proc, pids, 1), 1, "bounded by max");
	}
	snprintf(proc, sizeof(proc), "%s/nonexistent", tmpdir);
	ASSERT_EQ(qemu_discover(proc, pids, 8), -ENOENT, "no proc dir");
	rm_tmpdir();
}

/* The mapping holding an address, from /proc/PID/maps (guest RAM's bounds: gpamap.h). */
static void test_map_of(void)
{
	char maps[4096], proc[PATH_MAX + 16], path[PATH_MAX + 32];
	uint64_t lo = 0, hi = 0;
	size_t n;

	/* a mapped file's long path (over 2 KB) whose text holds a range: not one */
	n = (size_t)snprintf(maps, sizeof(maps),
			     "55d0c2a00000-55d0c2c00000 r-xp 00000000 fe:01 1234 %s\n"
			     "7f2a40000000-7f2a80000000 rw-p 00000000 00:00 0 \n"
			     "7f2a80000000-7f2a80021000 rw-p 00000000 00:00 0 /m",
			     QEMU_BIN);
	while (n < 2500)
		n += (size_t)snprintf(maps + n, sizeof(maps) - n, "/and/on");
	n += (size_t)snprintf(maps + n, sizeof(maps) - n,
			      "7f2aa0000000-7f2ab0000000\n"
			      "7ffd1e000000-7ffd1e021000 rw-p 00000000 00:00 0 [stack]\n");
	if (!ASSERT_TRUE(make_tmpdir(), "mkdtemp"))
		return;
	snprintf(proc, sizeof(proc), "%s/proc", tmpdir);
	snprintf(path, sizeof(path), "%s/700/maps", proc);
	if (ASSERT_TRUE(!mkdir(proc, 0755) && fake_pid("700", QEMU_BIN) &&
				!unit_write(path, maps, n),
			"fake proc")) {
		ASSERT_EQ(qemu_map_of(proc, 700, 0x7f2a41234000ull, &lo, &hi), 0, "in guest RAM");
		ASSERT_EQ(lo, 0x7f2a40000000ull, "its start");
		ASSERT_EQ(hi, 0x7f2a80000000ull, "its end");
		ASSERT_EQ(qemu_map_of(proc, 700, 0x7f2a80000000ull, &lo, &hi), 0, "the next one");
		ASSERT_EQ(lo, 0x7f2a80000000ull, "its start");
		ASSERT_EQ(qemu_map_of(proc, 700, 0x7f2aa0001000ull, &lo, &hi), -ENOENT,
			  "a path's text that looks like a range is no mapping");
		ASSERT_EQ(qemu_map_of(proc, 700, 0x1000, &lo, &hi), -ENOENT, "unmapped");
		ASSERT_EQ(qemu_map_of(proc, 701, 0x1000, &lo, &hi), -ENOENT, "no such pid");
	}
	rm_tmpdir();
}

/* A fake /proc/PID: cmdline, root -> "/", cwd -> tmpdir. */
static bool fake_qemu(const char *const *argv)
{
	char path[PATH_MAX + 64], buf[16384];
	size_t len;

	if (!fake_pid("700", QEMU_BIN))
		return false;
	len = mkcmd(buf, sizeof(buf), argv);
	snprintf(path, sizeof(path), "%s/proc/700/cmdline", tmpdir);
	if (unit_write(path, buf, len))
		return false;
	snprintf(path, sizeof(path), "%s/proc/700/root", tmpdir);
	if (symlink("/", path))
		return false;
	snprintf(path, sizeof(path), "%s/proc/700/cwd", tmpdir);
	return !symlink(tmpdir, path);
}

static bool check_stat(const struct qemu_disk *d, const char *path)
{
	struct stat st;

	if (!ASSERT_OK(stat(path, &st), path) || !ASSERT_EQ(d->stat_ok, 1, path))
		return false;
	return ASSERT_EQ(d->dev, IT_MKDEV(major(st.st_dev), minor(st.st_dev)), path) &&
	       ASSERT_EQ(d->ino, (uint64_t)st.st_ino, path) && ASSERT_EQ(d->rdev, 0, path);
}

static void test_disks(void)
{
	static char longarg[10000];
	char abs[PATH_MAX + 64], absopt[PATH_MAX + 128], rel[PATH_MAX + 16], proc[PATH_MAX + 16];
	const char *argv[] = { QEMU_BIN,
			       "-append",
			       longarg,
			       "-drive",
			       absopt,
			       "-device",
			       "virtio-blk-pci,drive=a0,serial=abs",
			       "-drive",
			       "file=rel.img,if=none,id=r0",
			       "-device",
			       "nvme,drive=r0,serial=rel",
			       "-drive",
			       "file=/nonexistent/it-qemu.img,if=none,id=m0",
			       "-device",
			       "vhost-vsock-pci,id=vs0,guest-cid=7",
			       NULL };
	struct qemu_disk d[4];
	struct qemu_vm vm;

	if (!ASSERT_TRUE(make_tmpdir(), "mkdtemp"))
		return;
	memset(longarg, 'x', sizeof(longarg) - 1); /* cmdline larger than one read */
	snprintf(abs, sizeof(abs), "%s/abs.img", tmpdir);
	snprintf(absopt, sizeof(absopt), "file=%s,if=none,id=a0,format=raw", abs);
	snprintf(rel, sizeof(rel), "%s/rel.img", tmpdir);
	snprintf(proc, sizeof(proc), "%s/proc", tmpdir);
	if (!ASSERT_TRUE(!mkdir(proc, 0755) && !unit_write(abs, "a", 1) &&
				 !unit_write(rel, "r", 1) && fake_qemu(argv),
			 "fake proc"))
		goto out;
	if (!ASSERT_EQ(qemu_disks(proc, 700, d, 4), 3, "disks"))
		goto out;
	ASSERT_STREQ(d[0].serial, "abs", "serial");
	check_stat(&d[0], abs);
	check_stat(&d[1], rel);
	ASSERT_EQ(d[0].size, 1ULL, "a raw image's size: its file's");
	ASSERT_EQ(d[1].size, 0ULL, "format not given: size unknown");
	ASSERT_EQ(d[2].stat_ok, 0, "missing file");
	ASSERT_EQ(qemu_disks(proc, 701, d, 4), -ENOENT, "no such pid");
	ASSERT_OK(qemu_vm_info(proc, 700, &vm), "vm info");
	ASSERT_EQ(vm.cid, 7u, "guest-cid from /proc/PID/cmdline");
	ASSERT_EQ(qemu_vm_info(proc, 701, &vm), -ENOENT, "vm info: no such pid");
out:
	rm_tmpdir();
}

/*
 * libvirt's layout: -blockdev JSON nodes (storage + format per layer, the
 * overlay's "backing" naming the next format node, the last one null) and
 * JSON -device; every file of the chain is the disk's.
 */
static void test_cmdline_libvirt_chain(void)
{
	static const char *const argv[] = {
		"qemu-system-x86_64", "-blockdev",
		"{\"driver\":\"file\",\"filename\":\"/var/lib/nova/base/abc\","
		"\"node-name\":\"libvirt-2-storage\",\"auto-read-only\":true,\"discard\":\"unmap\"}",
		"-blockdev",
		"{\"node-name\":\"libvirt-2-format\",\"read-only\":true,\"driver\":\"raw\","
		"\"file\":\"libvirt-2-storage\"}",
		"-blockdev",
		"{\"driver\":\"file\",\"filename\":\"/var/lib/nova/i1/disk\","
		"\"node-name\":\"libvirt-1-storage\",\"cache\":{\"direct\":true,\"no-flush\":false}}",
		"-blockdev",
		"{\"node-name\":\"libvirt-1-format\",\"read-only\":false,\"driver\":\"qcow2\","
		"\"file\":\"libvirt-1-storage\",\"backing\":\"libvirt-2-format\"}",
		"-object", "{\"qom-type\":\"iothread\",\"id\":\"iothread1\"}", "-device",
		"{\"driver\":\"virtio-blk-pci\",\"iothread\":\"iothread1\",\"num-queues\":2,"
		"\"drive\":\"libvirt-1-format\",\"id\":\"virtio-disk0\",\"serial\":\"nova-i1\"}",
		/* a layer that says nothing of its backing: its header will */
		"-blockdev", "driver=file,filename=/img/top.qcow2,node-name=s3", "-blockdev",
		"driver=qcow2,file=s3,node-name=f3", "-device",
		"virtio-blk-pci,drive=f3,serial=hdr",
		/* backing= "" and an inline backing node */
		"-blockdev",
		"driver=qcow2,file.driver=file,file.filename=/img/solo.qcow2,node-name=f4,backing=",
		"-device", "scsi-hd,drive=f4,serial=solo", "-blockdev",
		"{\"driver\":\"qcow2\",\"node-name\":\"f5\",\"file\":{\"driver\":\"file\","
		"\"filename\":\"/img/o5.qcow2\"},\"backing\":{\"driver\":\"raw\",\"file\":"
		"{\"driver\":\"file\",\"filename\":\"/img/b5.raw\"}}}",
		"-device", "nvme,drive=f5,serial=inl", NULL
	};
	struct qemu_disk d[8];

	if (!ASSERT_EQ(parse_argv(argv, d, 8), 4, "disks: the layers are not disks"))
		return;
	ASSERT_STREQ(d[0].id, "libvirt-1-format", "top node");
	ASSERT_STREQ(d[0].file, "/var/lib/nova/i1/disk", "overlay file");
	ASSERT_STREQ(d[0].format, "qcow2", "overlay format");
	ASSERT_STREQ(d[0].serial, "nova-i1", "serial");
	ASSERT_EQ(d[0].bus, QEMU_BUS_VIRTIO_BLK, "bus");
	ASSERT_EQ(d[0].nr_backing, 1, "one backing file");
	ASSERT_STREQ(d[0].backing[0].path, "/var/lib/nova/base/abc", "backing file");
	ASSERT_STREQ(d[0].backing[0].format, "raw", "backing format");
	/* a raw layer has no backing file: its header is not looked for (test_disks_backing_chain) */
	ASSERT_EQ(d[0].backing_fixed, 0, "raw backing: not said");
	ASSERT_EQ(d[1].nr_backing, 0, "header's backing: not yet");
	ASSERT_EQ(d[1].backing_fixed, 0, "header to be read");
	ASSERT_STREQ(d[2].file, "/img/solo.qcow2", "inline file");
	ASSERT_EQ(d[2].nr_backing, 0, "backing= empty: none");
	ASSERT_EQ(d[2].backing_fixed, 1, "backing= empty: fixed");
	ASSERT_EQ(d[2].bus, QEMU_BUS_SCSI, "scsi-hd");
	ASSERT_EQ(d[3].nr_backing, 1, "inline backing");
	ASSERT_STREQ(d[3].backing[0].path, "/img/b5.raw", "inline backing file");
	ASSERT_EQ(d[3].backing_fixed, 1, "inline backing: fixed");
	ASSERT_EQ(d[3].bus, QEMU_BUS_NVME, "nvme");
}

/*
 * The buses QEMU emulates as hypervisors set them up: scsi-hd on a
 * virtio-scsi-pci with an iothread, virtio-blk with iothread= and
 * num-queues=, nvme with drive= and serial=, and an nvme-ns on an nvme
 * controller (the serial is the controller's).
 */
static void test_cmdline_buses(void)
{
	static const char *const argv[] = {
		"qemu-system-x86_64",
		"-object",
		"iothread,id=io0",
		"-device",
		"virtio-scsi-pci,id=scsi0,iothread=io0,num_queues=1",
		"-drive",
		"file=/dev/loop7,if=none,id=s0,format=raw,cache=none,aio=native",
		"-device",
		"scsi-hd,drive=s0,bus=scsi0.0,channel=0,scsi-id=0,lun=0,serial=pve-scsi0",
		"-drive",
		"file=/img/v.raw,if=none,id=v0,format=raw,aio=io_uring,cache=none",
		"-device",
		"virtio-blk-pci,drive=v0,iothread=io0,num-queues=2,serial=vq2",
		"-drive",
		"file=/img/n.qcow2,if=none,id=n0,format=qcow2",
		"-device",
		"nvme,drive=n0,serial=nv0",
		"-device",
		"nvme,id=ctrl1,serial=ctrl1sn",
		"-drive",
		"file=/img/ns.raw,if=none,id=ns1,format=raw",
		"-device",
		"nvme-ns,drive=ns1,bus=ctrl1,nsid=1",
		"-drive",
		"file=/img/ide.raw,if=none,id=i0,format=raw",
		"-device",
		"ide-hd,drive=i0,serial=ide0",
		NULL
	};
	static const struct want_disk w[] = {
		{ "s0", "/dev/loop7", "raw", "scsi-hd", "pve-scsi0" },
		{ "v0", "/img/v.raw", "raw", "virtio-blk-pci", "vq2" },
		{ "n0", "/img/n.qcow2", "qcow2", "nvme", "nv0" },
		{ "ns1", "/img/ns.raw", "raw", "nvme-ns", "ctrl1sn" },
		{ "i0", "/img/ide.raw", "raw", "ide-hd", "ide0" },
	};
	static const enum qemu_bus bus[] = { QEMU_BUS_SCSI, QEMU_BUS_VIRTIO_BLK, QEMU_BUS_NVME,
					     QEMU_BUS_NVME, QEMU_BUS_OTHER };
	struct qemu_disk d[8];

	check_disks(argv, w, ARRAY_SIZE(w));
	if (!ASSERT_EQ(parse_argv(argv, d, 8), 5, "disks"))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(bus); i++)
		ASSERT_EQ(d[i].bus, bus[i], w[i].id);
}

/* ---- qcow2 headers ---- */

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = v;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, (uint32_t)v);
}

/*
 * A qcow2 header (version 3, 104 bytes) naming backing file `name` with
 * format `fmt` ("" = no format extension), as qemu-img create -b writes it.
 * Returns its length.
 */
static size_t qcow2_hdr(uint8_t *buf, size_t cap, uint64_t size, const char *name, const char *fmt)
{
	size_t off = 104, n = strlen(name), fl = strlen(fmt);

	memset(buf, 0, cap);
	put32(buf, 0x514649fb);
	put32(buf + 4, 3);
	put32(buf + 20, 16); /* cluster_bits */
	put64(buf + 24, size);
	put32(buf + 100, 104); /* header_length */
	if (fl) {
		put32(buf + off, 0xe2792aca);
		put32(buf + off + 4, (uint32_t)fl);
		memcpy(buf + off + 8, fmt, fl);
		off += 8 + ((fl + 7) & ~7ul);
	}
	off += 8; /* end-of-extensions marker: type 0 */
	if (n) {
		put64(buf + 8, off);
		put32(buf + 16, (uint32_t)n);
		memcpy(buf + off, name, n);
		off += n;
	}
	return off;
}

static void test_qcow2_header(void)
{
	uint8_t buf[1024];
	struct qemu_qcow2 q;
	size_t n;

	n = qcow2_hdr(buf, sizeof(buf), 1ull << 30, "base.raw", "raw");
	if (!ASSERT_OK(qemu_qcow2_header(buf, n, &q), "v3 with backing"))
		return;
	ASSERT_EQ(q.version, 3u, "version");
	ASSERT_EQ(q.size, 1ull << 30, "virtual size");
	ASSERT_EQ(q.backing_len, 8u, "name length");
	ASSERT_TRUE(!memcmp(buf + q.backing_off, "base.raw", 8), "name offset");
	ASSERT_STREQ(q.backing_fmt, "raw", "backing format extension");
	n = qcow2_hdr(buf, sizeof(buf), 4096, "", "");
	ASSERT_OK(qemu_qcow2_header(buf, n, &q), "no backing");
	ASSERT_EQ(q.backing_off, 0ull, "no backing offset");
	ASSERT_STREQ(q.backing_fmt, "", "no format");
	/* version 2: 72-byte header, extensions right after it */
	n = qcow2_hdr(buf, sizeof(buf), 4096, "", "");
	put32(buf + 4, 2);
	ASSERT_OK(qemu_qcow2_header(buf, 72, &q), "v2");
	ASSERT_EQ(q.version, 2u, "v2 version");
	/* a name QEMU would refuse */
	n = qcow2_hdr(buf, sizeof(buf), 4096, "x", "");
	put32(buf + 16, 4096);
	ASSERT_OK(qemu_qcow2_header(buf, n, &q), "long name");
	ASSERT_EQ(q.backing_len, 0u, "over 1023 bytes: none");
	/* an extension whose length runs past the buffer stops the scan */
	n = qcow2_hdr(buf, sizeof(buf), 4096, "", "qcow2");
	put32(buf + 108, 100000);
	ASSERT_OK(qemu_qcow2_header(buf, n, &q), "bad extension");
	ASSERT_STREQ(q.backing_fmt, "", "bad extension skipped");
	ASSERT_EQ(qemu_qcow2_header(buf, 71, &q), -EINVAL, "short");
	buf[0] = 'X';
	ASSERT_EQ(qemu_qcow2_header(buf, n, &q), -EINVAL, "not qcow2");
	ASSERT_EQ(qemu_qcow2_header(NULL, 0, &q), -EINVAL, "NULL");
}

/* A file of n bytes at tmpdir/name; 0 or -errno. */
static int write_tmp(const char *name, const void *data, size_t n)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return unit_write(path, data, n);
}

/*
 * The Nova layout from images on disk: a qcow2 overlay whose header names a
 * qcow2 middle layer, whose header names a raw base (relative names: from
 * each overlay's directory); a -drive without format= (probed); a -blockdev
 * chain with backing null (headers not read); format=raw of a qcow2 file.
 */
static void test_disks_backing_chain(void)
{
	char ov[PATH_MAX + 64], mid[PATH_MAX + 64], base[PATH_MAX + 64], proc[PATH_MAX + 16];
	char o1[PATH_MAX + 128], o2[PATH_MAX + 128], o3[PATH_MAX + 256], o4[PATH_MAX + 128];
	const char *argv[] = { QEMU_BIN,
			       "-drive",
			       o1,
			       "-device",
			       "virtio-blk-pci,drive=d1,serial=ov",
			       "-drive",
			       o2,
			       "-device",
			       "nvme,drive=d2,serial=probed",
			       "-blockdev",
			       o3,
			       "-device",
			       "scsi-hd,drive=d3,serial=nohdr",
			       "-drive",
			       o4,
			       "-device",
			       "virtio-blk-pci,drive=d4,serial=asraw",
			       NULL };
	uint8_t hdr[1024];
	struct qemu_disk d[4];
	uint32_t devs[8];
	uint64_t inos[8];
	size_t n;

	if (!ASSERT_TRUE(make_tmpdir(), "mkdtemp"))
		return;
	snprintf(ov, sizeof(ov), "%s/inst/disk", tmpdir);
	snprintf(mid, sizeof(mid), "%s/inst/mid.qcow2", tmpdir);
	snprintf(base, sizeof(base), "%s/base.raw", tmpdir);
	snprintf(proc, sizeof(proc), "%s/proc", tmpdir);
	snprintf(o1, sizeof(o1), "file=%s,if=none,id=d1,format=qcow2", ov);
	snprintf(o2, sizeof(o2), "file=%s,if=none,id=d2", mid);
	snprintf(o3, sizeof(o3),
		 "{\"driver\":\"qcow2\",\"node-name\":\"d3\",\"file\":{\"driver\":\"file\","
		 "\"filename\":\"%s\"},\"backing\":null}",
		 ov);
	snprintf(o4, sizeof(o4), "file=%s,if=none,id=d4,format=raw", ov);
	if (!ASSERT_TRUE(!mkdir(proc, 0755), "proc"))
		goto out;
	{
		char dir[PATH_MAX + 64];

		snprintf(dir, sizeof(dir), "%s/inst", tmpdir);
		mkdir(dir, 0755);
	}
	n = qcow2_hdr(hdr, sizeof(hdr), 10ull << 30, "mid.qcow2", "qcow2");
	ASSERT_OK(write_tmp("inst/disk", hdr, n), "overlay");
	n = qcow2_hdr(hdr, sizeof(hdr), 10ull << 30, "../base.raw", "");
	ASSERT_OK(write_tmp("inst/mid.qcow2", hdr, n), "middle");
	ASSERT_OK(write_tmp("base.raw", "raw bytes", 9), "base");
	if (!ASSERT_TRUE(fake_qemu(argv), "fake proc"))
		goto out;
	if (!ASSERT_EQ(qemu_disks(proc, 700, d, 4), 4, "disks"))
		goto out;
	/* overlay -> mid.qcow2 (its format from the extension) -> ../base.raw (probed: raw) */
	ASSERT_EQ(d[0].size, 10ull << 30, "virtual size from the header");
	if (ASSERT_EQ(d[0].nr_backing, 2, "overlay's chain")) {
		ASSERT_STREQ(d[0].backing[0].path, mid, "middle layer");
		ASSERT_STREQ(d[0].backing[0].format, "qcow2", "middle format");
		check_stat((const struct qemu_disk *)&d[0], ov);
		ASSERT_EQ(d[0].backing[1].stat_ok, 1, "base stat");
		ASSERT_EQ(qemu_disk_file_keys(&d[0], devs, inos, 8), 3, "three files");
		ASSERT_EQ(inos[0], d[0].ino, "image first");
		ASSERT_EQ(inos[2], d[0].backing[1].ino, "base last");
		ASSERT_TRUE(qemu_disk_has_file(&d[0], devs[2], inos[2]), "base is the disk's");
		ASSERT_TRUE(qemu_disk_has_file(&d[0], devs[1], inos[1]), "middle is the disk's");
		ASSERT_FALSE(qemu_disk_has_file(&d[0], devs[1], inos[1] + 999), "another inode");
		ASSERT_EQ(qemu_disk_file_keys(&d[0], devs, inos, 1), 1, "bounded by max");
	}
	/* no format=: QEMU probes the qcow2 magic, and so do we */
	ASSERT_EQ(d[1].nr_backing, 1, "probed chain");
	ASSERT_EQ(d[1].size, 10ull << 30, "probed: virtual size");
	ASSERT_EQ(d[2].nr_backing, 0, "backing null: no header read");
	ASSERT_EQ(d[2].size, 10ull << 30, "backing null: size still read");
	ASSERT_EQ(d[3].nr_backing, 0, "format=raw: the file is the disk");
	ASSERT_EQ(d[3].size,
		  (uint64_t)(n = qcow2_hdr(hdr, sizeof(hdr), 10ull << 30, "mid.qcow2", "qcow2")),
		  "format=raw: the file's size");
out:
	rm_tmpdir();
}

/* A block device image is named by its device number, whatever its inode. */
static void test_disk_has_file_bdev(void)
{
	struct qemu_disk d;

	memset(&d, 0, sizeof(d));
	d.stat_ok = 1;
	d.dev = IT_MKDEV(0, 5); /* devtmpfs */
	d.ino = 321;
	d.rdev = IT_MKDEV(7, 3); /* /dev/loop3 */
	ASSERT_TRUE(qemu_disk_has_file(&d, IT_MKDEV(7, 3), 321), "loop3");
	ASSERT_TRUE(qemu_disk_has_file(&d, IT_MKDEV(7, 3), 999), "loop3 by another node");
	ASSERT_FALSE(qemu_disk_has_file(&d, IT_MKDEV(0, 5), 321), "the node's filesystem");
	ASSERT_FALSE(qemu_disk_has_file(&d, IT_MKDEV(7, 4), 321), "loop4");
	d.stat_ok = 0;
	ASSERT_FALSE(qemu_disk_has_file(&d, IT_MKDEV(7, 3), 321), "not stat()ed");
	/* a backing file on a block device (an LV base under a file overlay) */
	d.nr_backing = 1;
	d.backing[0].stat_ok = 1;
	d.backing[0].rdev = IT_MKDEV(253, 1);
	ASSERT_TRUE(qemu_disk_has_file(&d, IT_MKDEV(253, 1), 5), "backing LV");
}

static int parse_vm(const char *const *argv, struct qemu_vm *vm)
{
	static char buf[4096];

	return qemu_parse_vm(buf, mkcmd(buf, sizeof(buf), argv), vm);
}

/* What names a guest on the link: its vsock CID and its unix chardevs. */
static void test_cmdline_vm(void)
{
	const char *lab[] = { QEMU_BIN,
			      "-device",
			      "vhost-vsock-pci,id=v,guest-cid=3",
			      "-chardev",
			      "socket,id=ch0,path=/run/lab/serial.sock,server=on,wait=off",
			      "-chardev",
			      "file,id=log,path=/tmp/console.log",
			      "-device",
			      "virtserialport,chardev=ch0,name=lab.0",
			      NULL };
	const char *json[] = { QEMU_BIN, "-device",
			       "{\"driver\":\"vhost-vsock-device\",\"guest-cid\":42}", NULL };
	const char *bad_cids[] = { "vhost-vsock-pci,guest-cid=2",
				   "vhost-vsock-pci,guest-cid=0",
				   "vhost-vsock-pci,guest-cid=x3",
				   "vhost-vsock-pci,guest-cid=3x",
				   "vhost-vsock-pci,guest-cid=4294967295",
				   "vhost-user-vsock-pci,guest-cid=5",
				   "virtio-blk-pci,guest-cid=5" };
	const char *one[] = { QEMU_BIN, "-device", NULL, NULL };
	/* -name: the plain form, guest= (libvirt's), none, the last one wins, cut at 63 */
	const char *names[][2] = {
		{ "lab-6.12", "lab-6.12" },
		{ "guest=web1,debug-threads=on", "web1" },
		{ "process=qemu-x,debug-threads=on", "" },
		{ "guest=a,,b", "a,b" },
		{ "{\"guest\":\"db\",\"debug-threads\":true}", "db" },
		{ "0123456789012345678901234567890123456789012345678901234567890123456789",
		  "012345678901234567890123456789012345678901234567890123456789012" },
	};
	const char *two_names[] = { QEMU_BIN, "-name", "first", "-name", "second", NULL };
	const char *name[] = { QEMU_BIN, "-name", NULL, NULL };
	struct qemu_vm vm;

	ASSERT_OK(parse_vm(lab, &vm), "lab");
	ASSERT_EQ(vm.cid, 3u, "guest-cid");
	ASSERT_EQ(vm.nr_socks, 1, "one socket chardev (the file one is not)");
	ASSERT_STREQ(vm.socks[0], "/run/lab/serial.sock", "its path");
	ASSERT_OK(parse_vm(json, &vm), "json");
	ASSERT_EQ(vm.cid, 42u, "guest-cid in JSON -device");
	for (size_t i = 0; i < sizeof(bad_cids) / sizeof(bad_cids[0]); i++) {
		one[2] = bad_cids[i];
		ASSERT_OK(parse_vm(one, &vm), bad_cids[i]);
		ASSERT_EQ(vm.cid, 0u, bad_cids[i]);
	}
	ASSERT_STREQ(vm.name, "", "no -name");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		name[2] = names[i][0];
		ASSERT_OK(parse_vm(name, &vm), names[i][0]);
		ASSERT_STREQ(vm.name, names[i][1], names[i][0]);
	}
	ASSERT_OK(parse_vm(two_names, &vm), "two -name");
	ASSERT_STREQ(vm.name, "second", "the last -name");
}

int main(void)
{
	RUN_TEST(test_sym_synthetic);
	RUN_TEST(test_sym_segment_past_eof);
	RUN_TEST(test_sym_self_symtab);
	RUN_TEST(test_sym_qemu_dynsym);
	RUN_TEST(test_sym_errors);
	RUN_TEST(test_cmdline_lab);
	RUN_TEST(test_cmdline_escapes_and_drive_serial);
	RUN_TEST(test_cmdline_blockdev);
	RUN_TEST(test_cmdline_libvirt_chain);
	RUN_TEST(test_cmdline_buses);
	RUN_TEST(test_qcow2_header);
	RUN_TEST(test_cmdline_bad);
	RUN_TEST(test_cmdline_max);
	RUN_TEST(test_cmdline_vm);
	RUN_TEST(test_discover);
	RUN_TEST(test_map_of);
	RUN_TEST(test_disks);
	RUN_TEST(test_disks_backing_chain);
	RUN_TEST(test_disk_has_file_bdev);
	return unit_result();
}
