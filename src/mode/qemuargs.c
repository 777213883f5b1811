// SPDX-License-Identifier: GPL-2.0
/*
 * qemuargs: a QEMU command line (argv as /proc/PID/cmdline gives it) read as
 * QEMU reads it (key=value options with ",," escapes, or JSON objects) into
 * the disks its guest sees (-drive, -blockdev nodes and their backing chains,
 * -device) and what names the guest on the link (vsock CID, chardev sockets).
 * See qemu.h for the interface and docs/qemu.md for the rules.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "mode/qemu.h"
#include "mode/qemu_int.h"

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

/* -name NAME or -name guest=NAME,process=..,debug-threads=..: the VM's name. */
static void take_name(struct qparse *qp, const struct opt *o)
{
	COPY(qp->vm.name, opt_get(o, "guest"));
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

void qemu_add_backing(struct qemu_disk *d, const char *path, const char *format)
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
			qemu_add_backing(&nd->d, cur->inline_backing.path,
					 cur->inline_backing.format);
			nd->d.backing_fixed = 1;
			return;
		}
		b = node_by_id(qp, cur->backing);
		if (!b || b == nd)
			return;
		b->below = true;
		qemu_add_backing(&nd->d, b->d.file, b->d.format);
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
		{ "drive", NULL, take_drive },	     { "blockdev", NULL, take_blockdev },
		{ "device", "driver", take_device }, { "chardev", "backend", take_chardev },
		{ "name", "guest", take_name },
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
