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

static bool opt_has(const struct opt *o, const char *key)
{
	for (int i = 0; i < o->n; i++)
		if (!strcmp(o->kv[i].key, key))
			return true;
	return false;
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
	char backing[64]; /* -blockdev backing=NODE: the next of the chain */
	struct qemu_file inline_backing; /* backing.file.filename=: inline node */
	bool no_backing; /* backing=null (or ""): the chain ends here */
	bool below; /* some other node's file= or backing= names this one */
};

struct qdev {
	char driver[32];
	char drive[64];
	char serial[21];
	char id[64];
	char bus[64];
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

/* backing=: a node name, null / "" (none), or an inline node (backing.file.filename). */
static void take_backing(struct qnode *nd, const struct opt *o)
{
	const char *b = opt_get(o, "backing"), *f = opt_get(o, "backing.file.filename");

	if (*f) {
		COPY(nd->inline_backing.path, f);
		COPY(nd->inline_backing.format, opt_get(o, "backing.driver"));
	} else if (!opt_has(o, "backing")) {
		return; /* the image's header names it */
	} else if (!*b || !strcmp(b, "null")) {
		nd->no_backing = true;
	} else {
		COPY(nd->backing, b);
	}
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
	take_backing(nd, o);
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
		nd->no_backing = true;
		return;
	}
	COPY(nd->d.format, drv);
	/* file= names a node; file.filename= (or JSON "file":{...}) inlines it */
	COPY(nd->ref, opt_get(o, "file"));
	COPY(nd->d.file, opt_get(o, "file.filename"));
	take_backing(nd, o);
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
	const char *drv = opt_get(o, "driver");
	struct qdev *dv;

	take_vsock(qp, o);
	/* an nvme controller without drive= holds the serial of its nvme-ns */
	if ((!*opt_get(o, "drive") && strcmp(drv, "nvme")) || qp->ndev >= QP_MAX)
		return;
	dv = &qp->dev[qp->ndev++];
	COPY(dv->driver, drv);
	COPY(dv->drive, opt_get(o, "drive"));
	COPY(dv->serial, opt_get(o, "serial"));
	COPY(dv->id, opt_get(o, "id"));
	COPY(dv->bus, opt_get(o, "bus"));
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
static void resolve_file(struct qparse *qp, struct qnode *nd)
{
	struct qnode *below = nd;

	for (int hops = 0; hops < 8 && !*below->d.file && *below->ref; hops++) {
		below = node_by_id(qp, below->ref);
		if (!below || below == nd)
			break;
		below->below = true;
	}
	if (below && below != nd)
		COPY(nd->d.file, below->d.file);
}

static void add_backing(struct qemu_disk *d, const char *path, const char *format)
{
	struct qemu_file *f;

	if (d->nr_backing >= QEMU_MAX_BACKING || !*path)
		return;
	f = &d->backing[d->nr_backing++];
	memset(f, 0, sizeof(*f));
	COPY(f->path, path);
	COPY(f->format, format);
}

/*
 * A format node's backing chain: backing=NODE hops (each node's file is
 * resolved already), ended by backing=null, an inline backing node, or a
 * node that says nothing (then its image's header names the rest).
 */
static void resolve_backing(struct qparse *qp, struct qnode *nd)
{
	struct qnode *cur = nd, *b;

	for (int hops = 0; hops <= QEMU_MAX_BACKING; hops++) {
		if (cur->no_backing || *cur->inline_backing.path) {
			add_backing(&nd->d, cur->inline_backing.path, cur->inline_backing.format);
			nd->d.backing_fixed = 1;
			return;
		}
		b = node_by_id(qp, cur->backing);
		if (!b || b == nd)
			return;
		b->below = true;
		add_backing(&nd->d, b->d.file, b->d.format);
		cur = b;
	}
}

static void resolve_nodes(struct qparse *qp)
{
	int i;

	for (i = 0; i < qp->nnode; i++)
		resolve_file(qp, &qp->node[i]);
	for (i = 0; i < qp->nnode; i++)
		resolve_backing(qp, &qp->node[i]);
}

static enum qemu_bus bus_of(const char *device)
{
	if (!strncmp(device, "virtio-blk", 10))
		return QEMU_BUS_VIRTIO_BLK;
	if (!strcmp(device, "scsi") || !strcmp(device, "scsi-hd") || !strcmp(device, "scsi-disk") ||
	    !strcmp(device, "scsi-block"))
		return QEMU_BUS_SCSI;
	if (!strcmp(device, "nvme") || !strcmp(device, "nvme-ns"))
		return QEMU_BUS_NVME;
	return QEMU_BUS_OTHER;
}

/* nvme-ns,bus=CTRL: the guest reads the serial of the nvme controller CTRL. */
static const char *dev_serial(const struct qparse *qp, const struct qdev *dv)
{
	if (*dv->serial || strcmp(dv->driver, "nvme-ns") || !*dv->bus)
		return dv->serial;
	for (int i = 0; i < qp->ndev; i++)
		if (!strcmp(qp->dev[i].driver, "nvme") && !strcmp(qp->dev[i].id, dv->bus))
			return qp->dev[i].serial;
	return "";
}

static void attach_devices(struct qparse *qp)
{
	struct qnode *nd;
	struct qdev *dv;
	int i;

	for (i = 0; i < qp->nnode; i++)
		qp->node[i].d.bus = bus_of(qp->node[i].d.device);
	for (i = 0; i < qp->ndev; i++) {
		dv = &qp->dev[i];
		nd = node_by_id(qp, dv->drive);
		if (!nd)
			continue;
		COPY(nd->d.device, dv->driver);
		nd->d.bus = bus_of(dv->driver);
		if (*dev_serial(qp, dv))
			COPY(nd->d.serial, dev_serial(qp, dv));
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

/* path as QEMU pid sees it: in its mount namespace, relative to its cwd. */
static int qemu_path(char *out, size_t outlen, const char *proc_root, pid_t pid, const char *path)
{
	int n;

	if (path[0] == '/')
		n = snprintf(out, outlen, "%s/%d/root%s", proc_root, (int)pid, path);
	else
		n = snprintf(out, outlen, "%s/%d/cwd/%s", proc_root, (int)pid, path);
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

/* stat() of one file of a disk into f; its size (a raw image's) in *size. */
static void stat_file(const char *path, struct qemu_file *f, uint64_t *size)
{
	struct stat st;
	int fd;

	if (stat(path, &st))
		return;
	f->stat_ok = 1;
	f->dev = IT_MKDEV(major(st.st_dev), minor(st.st_dev));
	f->ino = st.st_ino;
	if (S_ISBLK(st.st_mode))
		f->rdev = IT_MKDEV(major(st.st_rdev), minor(st.st_rdev));
	if (S_ISREG(st.st_mode))
		*size = (uint64_t)st.st_size;
	else if (S_ISBLK(st.st_mode) && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		if (ioctl(fd, BLKGETSIZE64, size))
			*size = 0;
		close(fd);
	}
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

#define QCOW2_MAGIC 0x514649fbu /* "QFI\xfb" */
#define QCOW2_EXT_BACKING_FMT 0xe2792acau
#define QCOW2_V2_HDR 72

/* Header extensions (version 3 header_length, or 72 for version 2) up to len. */
static void qcow2_exts(const uint8_t *buf, size_t len, struct qemu_qcow2 *q)
{
	size_t off = q->version >= 3 && len >= 104 ? be32(buf + 100) : QCOW2_V2_HDR;

	while (off >= QCOW2_V2_HDR && off + 8 <= len) {
		uint32_t type = be32(buf + off), elen = be32(buf + off + 4);

		if (!type || elen > len - off - 8)
			return;
		if (type == QCOW2_EXT_BACKING_FMT)
			snprintf(q->backing_fmt, sizeof(q->backing_fmt), "%.*s",
				 (int)(elen < sizeof(q->backing_fmt) ? elen :
								       sizeof(q->backing_fmt) - 1),
				 (const char *)buf + off + 8);
		off += 8 + ((elen + 7ull) & ~7ull);
	}
}

int qemu_qcow2_header(const uint8_t *buf, size_t len, struct qemu_qcow2 *q)
{
	memset(q, 0, sizeof(*q));
	if (!buf || len < QCOW2_V2_HDR || be32(buf) != QCOW2_MAGIC)
		return -EINVAL;
	q->version = be32(buf + 4);
	if (q->version < 2)
		return -EINVAL;
	q->backing_off = be64(buf + 8);
	q->backing_len = be32(buf + 16);
	q->size = be64(buf + 24);
	/* QEMU refuses a name over 1023 bytes: such an image opens nowhere */
	if (!q->backing_off || !q->backing_len || q->backing_len > 1023) {
		q->backing_off = 0;
		q->backing_len = 0;
	}
	qcow2_exts(buf, len, q);
	return 0;
}

/*
 * The qcow2 header of path (as the daemon reaches it): 0 and q filled, its
 * backing file name in name (""), or -errno / -EINVAL (not qcow2).
 */
static int read_qcow2(const char *path, struct qemu_qcow2 *q, char *name, size_t namelen)
{
	uint8_t buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	name[0] = 0;
	if (fd < 0)
		return -errno;
	n = pread(fd, buf, sizeof(buf), 0);
	err = n < 0 ? -errno : qemu_qcow2_header(buf, (size_t)n, q);
	if (!err && q->backing_len && q->backing_len < namelen) {
		n = pread(fd, name, q->backing_len, (off_t)q->backing_off);
		name[n == (ssize_t)q->backing_len ? n : 0] = 0;
	}
	close(fd);
	return err;
}

/*
 * A backing file name relative to its overlay: QEMU reads it from the
 * overlay's directory. 0, or -ENAMETOOLONG (not kept: a cut path is no file).
 */
static int backing_path(char *out, size_t outlen, const char *overlay, const char *name)
{
	const char *slash = strrchr(overlay, '/');
	int n;

	if (name[0] == '/' || !slash)
		n = snprintf(out, outlen, "%s", name);
	else
		n = snprintf(out, outlen, "%.*s/%s", (int)(slash - overlay), overlay, name);
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

/* Is the file (format fmt: "" = probed) a qcow2 image? Its header into q, backing name into name. */
static int qcow2_of(const char *proc_root, pid_t pid, const char *file, const char *fmt,
		    struct qemu_qcow2 *q, char *name, size_t namelen)
{
	char path[PATH_MAX];

	if ((*fmt && strcmp(fmt, "qcow2")) || qemu_path(path, sizeof(path), proc_root, pid, file))
		return -EINVAL;
	return read_qcow2(path, q, name, namelen);
}

/*
 * A qcow2 image's virtual size is the guest's disk size; the chain below the
 * last file the command line gave comes from the qcow2 headers: while that
 * file is qcow2 (said so, or probed) and names a backing file.
 */
static void qcow2_chain(const char *proc_root, pid_t pid, struct qemu_disk *d)
{
	char name[1024], full[QEMU_FILE_LEN];
	struct qemu_qcow2 q;

	if (!qcow2_of(proc_root, pid, d->file, d->format, &q, name, sizeof(name)))
		d->size = q.size;
	while (!d->backing_fixed && d->nr_backing < QEMU_MAX_BACKING) {
		const struct qemu_file *last = d->nr_backing ? &d->backing[d->nr_backing - 1] :
							       NULL;
		const char *file = last ? last->path : d->file;

		if (qcow2_of(proc_root, pid, file, last ? last->format : d->format, &q, name,
			     sizeof(name)) ||
		    !name[0] || !strncmp(name, "json:", 5) ||
		    backing_path(full, sizeof(full), file, name))
			return;
		add_backing(d, full, q.backing_fmt);
	}
}

static void stat_disk(const char *proc_root, pid_t pid, struct qemu_disk *d)
{
	char path[PATH_MAX];
	struct qemu_file top = { 0 };
	uint64_t size = 0, bsize;

	if (!qemu_path(path, sizeof(path), proc_root, pid, d->file))
		stat_file(path, &top, &size);
	d->stat_ok = top.stat_ok;
	d->dev = top.dev;
	d->ino = top.ino;
	d->rdev = top.rdev;
	/* a raw image is the guest's disk byte for byte: its size bounds the sectors */
	if (d->stat_ok && !strcmp(d->format, "raw"))
		d->size = size;
	if (d->stat_ok)
		qcow2_chain(proc_root, pid, d);
	for (int i = 0; i < d->nr_backing; i++)
		if (!qemu_path(path, sizeof(path), proc_root, pid, d->backing[i].path))
			stat_file(path, &d->backing[i], &bsize);
}

static int file_is(int stat_ok, uint32_t rdev, uint32_t fdev, uint64_t fino, uint32_t dev,
		   uint64_t ino)
{
	return stat_ok && (rdev ? rdev == dev : fdev == dev && fino == ino);
}

int qemu_disk_has_file(const struct qemu_disk *d, uint32_t dev, uint64_t ino)
{
	const struct qemu_file *f = d->backing;

	if (file_is(d->stat_ok, d->rdev, d->dev, d->ino, dev, ino))
		return 1;
	for (int i = 0; i < d->nr_backing && i < QEMU_MAX_BACKING; i++)
		if (file_is(f[i].stat_ok, f[i].rdev, f[i].dev, f[i].ino, dev, ino))
			return 1;
	return 0;
}

int qemu_disk_file_keys(const struct qemu_disk *d, uint32_t *devs, uint64_t *inos, int max)
{
	int n = 0;

	if (d->stat_ok && n < max) {
		devs[n] = d->dev;
		inos[n++] = d->ino;
	}
	for (int i = 0; i < d->nr_backing && i < QEMU_MAX_BACKING && n < max; i++) {
		if (!d->backing[i].stat_ok)
			continue;
		devs[n] = d->backing[i].dev;
		inos[n++] = d->backing[i].ino;
	}
	return n;
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
