// SPDX-License-Identifier: GPL-2.0
/*
 * qemu: uprobe offsets from a QEMU executable's ELF symbols, discovery of
 * qemu-system-* processes, and the disks of a QEMU from its command line.
 * See qemu.h for the interface and docs/qemu.md for the rules.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "iotracer.h"
#include "lib/json.h"
#include "mode/qemu.h"
#include "lib/procfs.h"

/* ---- ELF symbols -> uprobe file offsets ---- */

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

/* ---- discovery ---- */

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

static bool is_qemu_exe(int dirfd, const char *pid)
{
	char link[PATH_MAX + 16], tgt[PATH_MAX];
	const char *base;
	ssize_t len;

	snprintf(link, sizeof(link), "%s/exe", pid);
	len = readlinkat(dirfd, link, tgt, sizeof(tgt) - 1);
	if (len <= 0)
		return false;
	tgt[len] = '\0';
	/* "/usr/bin/qemu-system-x86_64 (deleted)" after an upgrade still counts */
	base = strrchr(tgt, '/');
	base = base ? base + 1 : tgt;
	return !strncmp(base, "qemu-system-", strlen("qemu-system-"));
}

int qemu_discover(const char *proc_root, pid_t *pids, int max)
{
	struct dirent *de;
	pid_t self = getpid();
	DIR *d;
	int nr = 0;

	if (!proc_root || max < 0 || (max && !pids))
		return -EINVAL;
	d = opendir(proc_root);
	if (!d)
		return -errno;
	while (nr < max && (de = readdir(d))) {
		if (!all_digits(de->d_name) || strtol(de->d_name, NULL, 10) == self)
			continue;
		if (is_qemu_exe(dirfd(d), de->d_name))
			pids[nr++] = (pid_t)strtol(de->d_name, NULL, 10);
	}
	closedir(d);
	return nr;
}

/* ---- command line ---- */

/*
 * One option value, flattened to key=value pairs. Nested JSON objects give
 * dotted keys ("file.filename"), as QEMU's own dotted syntax does.
 */
#define OPT_MAX_KV 48
struct opt_kv {
	char key[64];
	char val[256];
};
struct opt {
	int n;
	struct opt_kv kv[OPT_MAX_KV];
};

static void opt_add(struct opt *o, const char *key, size_t klen, const char *val, size_t vlen)
{
	struct opt_kv *kv;

	if (!o || o->n >= OPT_MAX_KV)
		return;
	kv = &o->kv[o->n++];
	snprintf(kv->key, sizeof(kv->key), "%.*s", (int)klen, key);
	snprintf(kv->val, sizeof(kv->val), "%.*s", (int)vlen, val);
}

static const char *opt_get(const struct opt *o, const char *key)
{
	int i;

	/* the last one wins, as in QEMU */
	for (i = o->n - 1; i >= 0; i--)
		if (!strcmp(o->kv[i].key, key))
			return o->kv[i].val;
	return "";
}

/*
 * QemuOpts syntax: "k=v,k2=v2" where ",," is a literal comma; a bare first
 * item is the value of the implied key (the driver of -device); another bare
 * item "k" means k=on.
 */
static int opt_parse_kv(const char *s, const char *implied, struct opt *o)
{
	char val[512];
	const char *eq;
	size_t klen, vlen;
	bool first = true;

	while (*s) {
		for (vlen = 0; *s && (*s != ',' || s[1] == ','); s += 1 + (*s == ',')) {
			if (vlen < sizeof(val) - 1)
				val[vlen++] = *s;
		}
		eq = memchr(val, '=', vlen);
		klen = eq ? (size_t)(eq - val) : vlen;
		if (eq)
			opt_add(o, val, klen, eq + 1, vlen - klen - 1);
		else if (first && implied)
			opt_add(o, implied, strlen(implied), val, vlen);
		else if (vlen)
			opt_add(o, val, vlen, "on", 2);
		first = false;
		if (*s)
			s++;
	}
	return 0;
}

/* ---- QEMU's JSON option syntax, over lib/json's DOM ---- */

#define OPT_JSON_DEPTH 8

/*
 * The members of a JSON object into o: nested objects give dotted keys
 * ("file.filename") as QEMU's dotted syntax does; scalars keep their JSON
 * text ("12", "true", "null"); arrays are skipped (nothing needed here is in
 * one).
 */
static int opt_walk(const struct json *obj, const char *prefix, int depth, struct opt *o)
{
	char key[128], num[32];
	const char *val;
	int err;

	if (depth > OPT_JSON_DEPTH)
		return -EINVAL;
	for (const struct json *m = obj->child; m; m = m->next) {
		snprintf(key, sizeof(key), "%s%s%.63s", prefix, *prefix ? "." : "", m->key);
		switch (m->t) {
		case JSON_OBJ:
			err = opt_walk(m, key, depth + 1, o);
			if (err)
				return err;
			continue;
		case JSON_ARR:
			continue;
		case JSON_STR:
			val = m->str;
			break;
		case JSON_NUM:
			snprintf(num, sizeof(num), "%.15g", m->num);
			val = num;
			break;
		case JSON_BOOL:
			val = m->num ? "true" : "false";
			break;
		default:
			val = "null";
		}
		opt_add(o, key, strlen(key), val, strlen(val));
	}
	return 0;
}

static int opt_parse_json(const char *s, struct opt *o)
{
	struct json *root = json_parse(s, strlen(s));
	int err = -EINVAL;

	if (root && root->t == JSON_OBJ)
		err = opt_walk(root, "", 1, o);
	json_free(root);
	return err;
}

static int opt_parse(const char *s, const char *implied, struct opt *o)
{
	o->n = 0;
	if (*s == '{')
		return opt_parse_json(s, o);
	return opt_parse_kv(s, implied, o);
}

/* ---- from options to disks ---- */

/* A -drive or a -blockdev node; devices attach to it by id. */
struct qnode {
	struct qemu_disk d;
	char ref[64]; /* -blockdev file=NODE: the node below this one */
	bool below; /* some other node's file= names this one */
};

struct qdev {
	char driver[32];
	char drive[64];
	char serial[21];
};

#define QP_MAX (2 * QEMU_MAX_DISKS)
struct qparse {
	struct qnode node[QP_MAX];
	int nnode;
	struct qdev dev[QP_MAX];
	int ndev;
	struct qemu_vm vm;
	struct opt o;
};

#define COPY(dst, src) snprintf(dst, sizeof(dst), "%s", src)

static const char *if_device(const char *ifname)
{
	if (!*ifname || !strcmp(ifname, "none"))
		return "";
	if (!strcmp(ifname, "virtio"))
		return "virtio-blk";
	return ifname;
}

static void take_drive(struct qparse *qp, const struct opt *o)
{
	struct qnode *nd;
	const char *file = opt_get(o, "file"), *fmt = opt_get(o, "format");

	if (qp->nnode >= QP_MAX)
		return;
	nd = &qp->node[qp->nnode++];
	if (!*file)
		file = opt_get(o, "file.filename");
	COPY(nd->d.file, file);
	COPY(nd->d.id, opt_get(o, "id"));
	COPY(nd->d.format, *fmt ? fmt : opt_get(o, "driver"));
	COPY(nd->d.serial, opt_get(o, "serial"));
	COPY(nd->d.device, if_device(opt_get(o, "if")));
}

static bool is_protocol(const char *driver)
{
	return !strcmp(driver, "file") || !strcmp(driver, "host_device") ||
	       !strcmp(driver, "host_cdrom");
}

static void take_blockdev(struct qparse *qp, const struct opt *o)
{
	struct qnode *nd;
	const char *drv = opt_get(o, "driver");

	if (qp->nnode >= QP_MAX)
		return;
	nd = &qp->node[qp->nnode++];
	COPY(nd->d.id, opt_get(o, "node-name"));
	if (is_protocol(drv)) {
		COPY(nd->d.file, opt_get(o, "filename"));
		COPY(nd->d.format, "raw"); /* the guest sees the file's bytes */
		return;
	}
	COPY(nd->d.format, drv);
	/* file= names a node; file.filename= (or JSON "file":{...}) inlines it */
	COPY(nd->ref, opt_get(o, "file"));
	COPY(nd->d.file, opt_get(o, "file.filename"));
}

/* guest-cid of a vhost-vsock device: a decimal above 2 (0..2 are not guests'). */
static void take_vsock(struct qparse *qp, const struct opt *o)
{
	const char *s = opt_get(o, "guest-cid");
	unsigned long long v;
	char *end;

	if (strncmp(opt_get(o, "driver"), "vhost-vsock", 11) || !isdigit((unsigned char)*s))
		return;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (!errno && !*end && v > 2 && v < UINT32_MAX)
		qp->vm.cid = (uint32_t)v;
}

/* -chardev socket,id=..,path=P: a unix socket the host may dial. */
static void take_chardev(struct qparse *qp, const struct opt *o)
{
	const char *path = opt_get(o, "path");

	if (strcmp(opt_get(o, "backend"), "socket") || !*path || qp->vm.nr_socks >= QEMU_MAX_SOCKS)
		return;
	COPY(qp->vm.socks[qp->vm.nr_socks], path);
	qp->vm.nr_socks++;
}

static void take_device(struct qparse *qp, const struct opt *o)
{
	struct qdev *dv;

	take_vsock(qp, o);
	if (!*opt_get(o, "drive") || qp->ndev >= QP_MAX)
		return;
	dv = &qp->dev[qp->ndev++];
	COPY(dv->driver, opt_get(o, "driver"));
	COPY(dv->drive, opt_get(o, "drive"));
	COPY(dv->serial, opt_get(o, "serial"));
}

static struct qnode *node_by_id(struct qparse *qp, const char *id)
{
	int i;

	if (!*id)
		return NULL;
	for (i = 0; i < qp->nnode; i++)
		if (!strcmp(qp->node[i].d.id, id))
			return &qp->node[i];
	return NULL;
}

/* A format node's file is the filename of the protocol node below it. */
static void resolve_nodes(struct qparse *qp)
{
	struct qnode *nd, *below;
	int i, hops;

	for (i = 0; i < qp->nnode; i++) {
		nd = &qp->node[i];
		below = nd;
		for (hops = 0; hops < 8 && !*below->d.file && *below->ref; hops++) {
			below = node_by_id(qp, below->ref);
			if (!below || below == nd)
				break;
			below->below = true;
		}
		if (below && below != nd)
			COPY(nd->d.file, below->d.file);
	}
}

static void attach_devices(struct qparse *qp)
{
	struct qnode *nd;
	struct qdev *dv;
	int i;

	for (i = 0; i < qp->ndev; i++) {
		dv = &qp->dev[i];
		nd = node_by_id(qp, dv->drive);
		if (!nd)
			continue;
		COPY(nd->d.device, dv->driver);
		if (*dv->serial)
			COPY(nd->d.serial, dv->serial);
	}
}

/* Returns 1 when the option was one of ours (val consumed), 0, or -EINVAL. */
static int take_option(struct qparse *qp, const char *name, const char *val)
{
	static const struct {
		const char *name, *implied;
		void (*take)(struct qparse *, const struct opt *);
	} opts[] = {
		{ "drive", NULL, take_drive },
		{ "blockdev", NULL, take_blockdev },
		{ "device", "driver", take_device },
		{ "chardev", "backend", take_chardev },
	};
	size_t i;
	int err;

	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		if (strcmp(name, opts[i].name))
			continue;
		if (!val)
			return -EINVAL;
		err = opt_parse(val, opts[i].implied, &qp->o);
		if (err)
			return err;
		opts[i].take(qp, &qp->o);
		return 1;
	}
	return 0;
}

/* Walks argv (NUL separated): "-drive VALUE" or "--drive VALUE". */
static int parse_argv(struct qparse *qp, const char *buf, size_t len)
{
	const char *end = buf + len, *arg, *next, *val;
	int ret;

	if (len && buf[len - 1])
		return -EINVAL; /* the last argument is not terminated */
	/* argv[0] is the program */
	for (arg = memchr(buf, '\0', len); arg && ++arg < end; arg = next) {
		next = memchr(arg, '\0', end - arg);
		if (arg[0] != '-')
			continue;
		val = next + 1 < end ? next + 1 : NULL;
		ret = take_option(qp, arg + 1 + (arg[1] == '-'), val);
		if (ret < 0)
			return ret;
		if (ret)
			next = memchr(val, '\0', end - val);
	}
	return 0;
}

int qemu_parse_vm(const char *buf, size_t len, struct qemu_vm *vm)
{
	struct qparse *qp;
	int err;

	if (!buf || !vm)
		return -EINVAL;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	err = parse_argv(qp, buf, len);
	*vm = qp->vm;
	free(qp);
	return err;
}

int qemu_parse_cmdline(const char *buf, size_t len, struct qemu_disk *disks, int max)
{
	struct qparse *qp;
	struct qnode *nd;
	int i, nr = 0, err;

	if (!buf || max < 0 || (max && !disks))
		return -EINVAL;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	err = parse_argv(qp, buf, len);
	resolve_nodes(qp);
	attach_devices(qp);
	for (i = 0; !err && i < qp->nnode && nr < max; i++) {
		nd = &qp->node[i];
		/* a node below another is a layer of that disk, not a disk */
		if (!nd->below && *nd->d.file)
			disks[nr++] = nd->d;
	}
	free(qp);
	return err ? err : nr;
}

/* ---- /proc/PID ---- */

/* The whole file, NUL-terminated like a /proc cmdline should be (the NUL counted). */
static int read_whole(const char *path, char **out, size_t *outlen)
{
	size_t len;
	char *buf = procfs_read_file(path, &len);

	if (!buf)
		return -errno;
	if (len && buf[len - 1])
		len++; /* procfs_read_file() wrote a NUL at buf[len] */
	*out = buf;
	*outlen = len;
	return 0;
}

static void stat_disk(const char *proc_root, pid_t pid, struct qemu_disk *d)
{
	char path[PATH_MAX];
	struct stat st;
	int n;

	if (d->file[0] == '/')
		n = snprintf(path, sizeof(path), "%s/%d/root%s", proc_root, (int)pid, d->file);
	else
		n = snprintf(path, sizeof(path), "%s/%d/cwd/%s", proc_root, (int)pid, d->file);
	if (n < 0 || (size_t)n >= sizeof(path) || stat(path, &st))
		return;
	d->stat_ok = 1;
	d->dev = IT_MKDEV(major(st.st_dev), minor(st.st_dev));
	d->ino = st.st_ino;
	if (S_ISBLK(st.st_mode))
		d->rdev = IT_MKDEV(major(st.st_rdev), minor(st.st_rdev));
	/* a raw image is the guest's disk byte for byte: its size bounds the sectors */
	if (strcmp(d->format, "raw"))
		return;
	if (S_ISREG(st.st_mode))
		d->size = (uint64_t)st.st_size;
	else if (S_ISBLK(st.st_mode) && (n = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		if (ioctl(n, BLKGETSIZE64, &d->size))
			d->size = 0;
		close(n);
	}
}

/* /proc/PID/cmdline under proc_root into *buf (malloc'd). 0 or -errno. */
static int read_cmdline(const char *proc_root, pid_t pid, char **buf, size_t *len)
{
	char path[PATH_MAX];

	*buf = NULL;
	*len = 0;
	if (!proc_root)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%d/cmdline", proc_root, (int)pid);
	return read_whole(path, buf, len);
}

int qemu_vm_info(const char *proc_root, pid_t pid, struct qemu_vm *vm)
{
	char *buf;
	size_t len;
	int err;

	memset(vm, 0, sizeof(*vm));
	err = read_cmdline(proc_root, pid, &buf, &len);
	if (!err)
		err = qemu_parse_vm(buf, len, vm);
	free(buf);
	return err;
}

int qemu_disks(const char *proc_root, pid_t pid, struct qemu_disk *disks, int max)
{
	char *buf;
	size_t len;
	int i, nr;

	nr = read_cmdline(proc_root, pid, &buf, &len);
	if (nr)
		return nr;
	nr = qemu_parse_cmdline(buf, len, disks, max);
	free(buf);
	for (i = 0; i < nr; i++)
		stat_disk(proc_root, pid, &disks[i]);
	return nr;
}
