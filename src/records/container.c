// SPDX-License-Identifier: GPL-2.0
/*
 * container: cgroup path -> runtime, container id, pod UID, QoS class, machine
 * name (docs/cgroups.md, "Containers and pods"). See container.h. The names
 * from the node are in container_names.c.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "records/container.h"

#define CT_COMP_MAX 256 /* longest path component looked at; longer: not a pattern */

static const char *const rt_names[CT_RT_NR] = {
	[CT_RT_DOCKER] = "docker",	   [CT_RT_PODMAN] = "podman",
	[CT_RT_CONTAINERD] = "containerd", [CT_RT_CRIO] = "cri-o",
	[CT_RT_NSPAWN] = "systemd-nspawn", [CT_RT_LXC] = "lxc",
	[CT_RT_LIBVIRT] = "libvirt",	   [CT_RT_KUBEPODS] = "kubepods",
};

static const char *const qos_names[CT_QOS_NR] = {
	[CT_QOS_GUARANTEED] = "guaranteed",
	[CT_QOS_BURSTABLE] = "burstable",
	[CT_QOS_BESTEFFORT] = "besteffort",
};

const char *ct_runtime_name(enum ct_runtime rt)
{
	return rt > CT_RT_NONE && rt < CT_RT_NR ? rt_names[rt] : NULL;
}

const char *ct_qos_name(enum ct_qos q)
{
	return q > CT_QOS_NONE && q < CT_QOS_NR ? qos_names[q] : NULL;
}

/* One path component, NUL-terminated; len 0 when it was too long to be a pattern. */
struct comp {
	char s[CT_COMP_MAX];
	size_t len;
};

static int is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]) && (s[i] < 'a' || s[i] > 'f'))
			return 0;
	return 1;
}

static int is_id(const char *s, size_t n)
{
	return n == CT_ID_LEN && is_hex(s, n);
}

/* s[0..n) with prefix and suffix, the middle (may be empty) into *mid / *mid_n. */
static int affix(const struct comp *c, const char *prefix, const char *suffix, const char **mid,
		 size_t *mid_n)
{
	size_t pl = strlen(prefix), sl = strlen(suffix);

	if (c->len < pl + sl || strncmp(c->s, prefix, pl) || strcmp(c->s + c->len - sl, suffix))
		return 0;
	*mid = c->s + pl;
	*mid_n = c->len - pl - sl;
	return 1;
}

/* An id into ci->id: 0, or -EINVAL (left out) when it is not 64 hex digits. */
static int set_id(struct ct_info *ci, enum ct_runtime rt, const char *s, size_t n)
{
	ci->runtime = rt;
	if (!is_id(s, n))
		return -EINVAL;
	memcpy(ci->id, s, n);
	ci->id[n] = '\0';
	return 0;
}

/*
 * A pod UID as the kubepods component holds it (sep: '_' under the systemd
 * driver, '-' under cgroupfs) into ci->pod_uid with '-'. 8-4-4-4-12 hex, or
 * 32 hex (a static pod's UID is its config hash).
 */
static int set_pod(struct ct_info *ci, const char *s, size_t n, char sep)
{
	char uid[CT_UID_MAX + 1];

	if (n == 32 && is_hex(s, n))
		goto ok;
	if (n != 36)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		int dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != sep : !is_hex(s + i, 1))
			return -EINVAL;
	}
ok:
	memcpy(uid, s, n);
	uid[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (uid[i] == '_')
			uid[i] = '-';
	memcpy(ci->pod_uid, uid, n + 1);
	return 0;
}

/*
 * A machine's or container's name into buf, systemd's "\xHH" escapes undone
 * ("qemu\x2d1\x2dvm" -> "qemu-1-vm"). -EINVAL: empty, too long, a bad escape,
 * or a byte that is not printable.
 */
static int set_name(char *out, const char *s, size_t n)
{
	char buf[CT_NAME_MAX];
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned int v = (unsigned char)s[i];

		if (s[i] == '\\') {
			if (i + 3 >= n)
				return -EINVAL;
			if (s[i + 1] != 'x' || !isxdigit((unsigned char)s[i + 2]) ||
			    !isxdigit((unsigned char)s[i + 3]) || sscanf(s + i + 2, "%2x", &v) != 1)
				return -EINVAL;
			i += 3;
		}
		if (v < 0x20 || v == 0x7f || o + 1 >= CT_NAME_MAX)
			return -EINVAL;
		buf[o++] = (char)v;
	}
	if (!o)
		return -EINVAL;
	buf[o] = '\0';
	memcpy(out, buf, o + 1);
	return 0;
}

/* libvirt's "qemu-<N>-<name>" (or "lxc-<N>-<name>", or without <N>): the name. */
static int set_vm(struct ct_info *ci, const char *s, size_t n)
{
	char esc[CT_NAME_MAX];
	const char *p;

	ci->runtime = CT_RT_LIBVIRT;
	if (set_name(esc, s, n))
		return -EINVAL;
	p = strchr(esc, '-') + 1; /* the caller matched "qemu-" or "lxc-" */
	if (isdigit((unsigned char)*p)) {
		const char *q = p;

		while (isdigit((unsigned char)*q))
			q++;
		if (*q == '-' && q[1])
			p = q + 1;
	}
	memmove(ci->name, p, strlen(p) + 1);
	return ci->name[0] ? 0 : -EINVAL;
}

/* containerd's identifiers (ctr's namespaces and ids): [A-Za-z0-9][A-Za-z0-9._-]*, ≤ 76. */
static int is_ident(const char *s, size_t n)
{
	if (!n || n > 76 || !isalnum((unsigned char)s[0]))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
			return 0;
	return 1;
}

/*
 * The runtimes' own leaf components: ".../docker-<id>.scope" and the like.
 * 1: the component is a container's (ci set, *err -EINVAL when malformed);
 * -1: a runtime's helper that is no container (conmon, LXC's monitor); 0: none.
 */
static int scope_comp(const struct comp *c, struct ct_info *ci, int *err)
{
	static const struct {
		const char *prefix, *suffix;
		enum ct_runtime rt;
	} ids[] = {
		{ "docker-", ".scope", CT_RT_DOCKER },
		{ "libpod-", ".scope", CT_RT_PODMAN },
		{ "libpod-", "", CT_RT_PODMAN }, /* cgroupfs: /libpod_parent/libpod-<id> */
		{ "cri-containerd-", ".scope", CT_RT_CONTAINERD },
		{ "crio-", ".scope", CT_RT_CRIO },
		{ "crio-", "", CT_RT_CRIO }, /* cgroupfs: /kubepods/<qos>/pod<uid>/crio-<id> */
	};
	const char *m;
	size_t mn;

	if (!strncmp(c->s, "libpod-conmon-", 14) || !strncmp(c->s, "crio-conmon-", 12) ||
	    !strncmp(c->s, "lxc.monitor", 11))
		return -1;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if (affix(c, ids[i].prefix, ids[i].suffix, &m, &mn)) {
			*err = set_id(ci, ids[i].rt, m, mn);
			return 1;
		}
	if (affix(c, "machine-qemu\\x2d", ".scope", &m, &mn) ||
	    affix(c, "machine-lxc\\x2d", ".scope", &m, &mn)) {
		m = c->s + 8;
		*err = set_vm(ci, m, c->len - 8 - 6);
		return 1;
	}
	if (affix(c, "machine-", ".scope", &m, &mn) ||
	    affix(c, "systemd-nspawn@", ".service", &m, &mn)) {
		ci->runtime = CT_RT_NSPAWN;
		*err = set_name(ci->name, m, mn);
		return 1;
	}
	if (affix(c, "lxc.payload.", "", &m, &mn)) {
		ci->runtime = CT_RT_LXC;
		*err = set_name(ci->name, m, mn);
		return 1;
	}
	return 0;
}

/*
 * The component after a runtime's parent directory (the cgroupfs drivers):
 * /docker/<id>, /lxc/<name>, /lxc.payload/<name>, /machine/<name>.libvirt-qemu,
 * and ctr's /<namespace>/<id> for containerd's usual namespaces.
 */
static int child_comp(const struct comp *parent, int depth, const struct comp *c,
		      struct ct_info *ci, int *err)
{
	const char *m;
	size_t mn;

	if (!strcmp(parent->s, "docker")) {
		*err = set_id(ci, CT_RT_DOCKER, c->s, c->len);
		return 1;
	}
	if (!strcmp(parent->s, "lxc.payload") || (depth == 0 && !strcmp(parent->s, "lxc"))) {
		ci->runtime = CT_RT_LXC;
		*err = set_name(ci->name, c->s, c->len);
		return 1;
	}
	if (depth == 0 && !strcmp(parent->s, "machine") &&
	    (affix(c, "", ".libvirt-qemu", &m, &mn) || affix(c, "", ".libvirt-lxc", &m, &mn))) {
		char tmp[CT_COMP_MAX];

		/* "qemu-1-vm.libvirt-qemu" (or older "vm.libvirt-qemu") */
		if (!strncmp(m, "qemu-", 5) || !strncmp(m, "lxc-", 4)) {
			*err = set_vm(ci, m, mn);
		} else {
			ci->runtime = CT_RT_LIBVIRT;
			snprintf(tmp, sizeof(tmp), "%.*s", (int)mn, m);
			*err = set_name(ci->name, tmp, mn);
		}
		return 1;
	}
	if (depth == 0 && (!strcmp(parent->s, "k8s.io") || !strcmp(parent->s, "default"))) {
		ci->runtime = CT_RT_CONTAINERD;
		snprintf(ci->ns, sizeof(ci->ns), "%.*s", CT_NAME_MAX - 1, parent->s);
		if (is_id(c->s, c->len))
			return set_id(ci, CT_RT_CONTAINERD, c->s, c->len), 1;
		if (!is_ident(c->s, c->len))
			*err = -EINVAL;
		else
			snprintf(ci->name, sizeof(ci->name), "%.*s", CT_NAME_MAX - 1,
				 c->s); /* ≤ 76 */
		return 1;
	}
	return 0;
}

/* The kubepods tree's own components. 2: the pod's; 1: a QoS class's; 0: not one. */
static int kube_comp(const struct comp *c, int have_pod, struct ct_info *ci, int *err)
{
	static const char *const qos[] = { "burstable", "besteffort" };
	char pfx[64];
	const char *m;
	size_t mn;

	if (have_pod)
		return 0;
	for (int i = 0; i < 2; i++) {
		enum ct_qos q = i ? CT_QOS_BESTEFFORT : CT_QOS_BURSTABLE;

		snprintf(pfx, sizeof(pfx), "kubepods-%s.slice", qos[i]);
		if (!strcmp(c->s, pfx) || !strcmp(c->s, qos[i])) {
			ci->qos = q;
			return 1;
		}
		snprintf(pfx, sizeof(pfx), "kubepods-%s-pod", qos[i]);
		if (affix(c, pfx, ".slice", &m, &mn)) {
			ci->qos = q;
			*err = set_pod(ci, m, mn, '_');
			return 2;
		}
	}
	if (affix(c, "kubepods-pod", ".slice", &m, &mn)) {
		*err = set_pod(ci, m, mn, '_');
		return 2;
	}
	if (affix(c, "pod", "", &m, &mn)) {
		*err = set_pod(ci, m, mn, '-');
		return 2;
	}
	return 0;
}

static int is_kube_root(const struct comp *c)
{
	const char *m;
	size_t mn;

	return !strcmp(c->s, "kubepods") || !strcmp(c->s, "kubepods.slice") ||
	       affix(c, "", "-kubepods.slice", &m, &mn);
}

/* The next component of *p into c; 0 at the end. */
static int next_comp(const char **p, struct comp *c)
{
	const char *s = *p, *e;

	while (*s == '/')
		s++;
	if (!*s)
		return 0;
	e = strchr(s, '/');
	if (!e)
		e = s + strlen(s);
	c->len = (size_t)(e - s) < sizeof(c->s) ? (size_t)(e - s) : 0;
	snprintf(c->s, sizeof(c->s), "%.*s", (int)c->len, s);
	*p = e;
	return 1;
}

int ct_decode(const char *path, struct ct_info *ci)
{
	struct comp prev = { .len = 0 }, c;
	int kube = 0, have_pod = 0, err = 0, e = 0, depth = 0, r;

	memset(ci, 0, sizeof(*ci));
	/* e: the last component's verdict; err: the first malformed one's, kept */
	for (const char *p = path ? path : ""; next_comp(&p, &c);
	     prev = c, depth++, err = err ?: e) {
		if (!c.len) { /* too long for any pattern */
			if (have_pod)
				break;
			continue;
		}
		if (kube && (r = kube_comp(&c, have_pod, ci, &e))) {
			have_pod = r == 2;
			continue;
		}
		if (!kube && is_kube_root(&c)) {
			kube = 1;
			continue;
		}
		r = scope_comp(&c, ci, &e);
		if (r < 0) { /* conmon, a monitor: no container */
			memset(ci, 0, sizeof(*ci));
			return 0;
		}
		if (r)
			break;
		if (have_pod) { /* cgroupfs: /kubepods/<qos>/pod<uid>/<id> */
			e = set_id(ci, CT_RT_KUBEPODS, c.s, c.len);
			break;
		}
		if (prev.len && child_comp(&prev, depth - 1, &c, ci, &e))
			break;
	}
	err = err ?: e;
	if (kube && have_pod && ci->qos == CT_QOS_NONE)
		ci->qos = CT_QOS_GUARANTEED; /* a guaranteed pod sits right under kubepods */
	return err;
}
