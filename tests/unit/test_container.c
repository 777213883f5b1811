// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for src/core/container.c: every cgroup path pattern of
 * docs/cgroups.md ("Containers and pods") decoded to the fields the runtimes
 * name them by, malformed names and ids of the wrong length left out and
 * reported; and the node's name sources (container_names.c) from fixture
 * directories: the names written there, a vanished entry, a change seen.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"
#include "core/container.h"

/* the case table names only the fields a pattern sets */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define ID "4f3a9c1d2e5b6a7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7"
#define ID2 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID "2b1f5e7c-9d3a-4c8b-a1e2-f3d4c5b6a798"
#define UID_ "2b1f5e7c_9d3a_4c8b_a1e2_f3d4c5b6a798"

struct dcase {
	const char *path;
	int ret;
	const char *rt, *qos, *id, *uid, *name, *ns;
};

static const struct dcase dcases[] = {
	/* not a container */
	{ "/", 0 },
	{ "/system.slice/nginx.service", 0 },
	{ "/user.slice/user-1000.slice/session-3.scope", 0 },
	{ "", 0 },
	/* docker: systemd and cgroupfs drivers, a sub-cgroup */
	{ "/system.slice/docker-" ID ".scope", 0, "docker", NULL, ID },
	{ "/docker/" ID, 0, "docker", NULL, ID },
	{ "/docker/" ID "/init", 0, "docker", NULL, ID },
	/* podman: root (machine.slice), rootless, crun's "container" subgroup, cgroupfs, a pod */
	{ "/machine.slice/libpod-" ID ".scope", 0, "podman", NULL, ID },
	{ "/machine.slice/libpod-" ID ".scope/container", 0, "podman", NULL, ID },
	{ "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope", 0,
	  "podman", NULL, ID },
	{ "/libpod_parent/libpod-" ID, 0, "podman", NULL, ID },
	{ "/machine.slice/machine-libpod_pod_" ID2 ".slice/libpod-" ID ".scope", 0, "podman",
	  NULL, ID },
	{ "/machine.slice/libpod-conmon-" ID ".scope", 0 },
	{ "/libpod_parent/conmon", 0 },
	/* containerd: k8s systemd driver, ctr's namespace/id */
	{ "/system.slice/cri-containerd-" ID ".scope", 0, "containerd", NULL, ID },
	{ "/k8s.io/" ID, 0, "containerd", NULL, ID, NULL, NULL, "k8s.io" },
	{ "/default/redis-1", 0, "containerd", NULL, NULL, NULL, "redis-1", "default" },
	/* CRI-O, its conmon excluded */
	{ "/system.slice/crio-" ID ".scope", 0, "cri-o", NULL, ID },
	{ "/system.slice/crio-conmon-" ID ".scope", 0 },
	/* Kubernetes, systemd driver: burstable, besteffort, guaranteed; runtimes' scopes */
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	  ".slice/cri-containerd-" ID ".scope",
	  0, "containerd", "burstable", ID, UID },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	  ".slice/crio-" ID ".scope",
	  0, "cri-o", "besteffort", ID, UID },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" ID ".scope", 0, "docker",
	  "guaranteed", ID, UID },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice", 0,
	  NULL, "burstable", NULL, UID },
	{ "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice", 0 },
	/* Kubernetes, cgroupfs driver: '-' in the UID, the bare id; CRI-O's crio-<id> */
	{ "/kubepods/burstable/pod" UID "/" ID, 0, "kubepods", "burstable", ID, UID },
	{ "/kubepods/besteffort/pod" UID "/crio-" ID, 0, "cri-o", "besteffort", ID, UID },
	{ "/kubepods/pod" UID "/" ID, 0, "kubepods", "guaranteed", ID, UID },
	{ "/kubepods/burstable/pod0123456789abcdef0123456789abcdef/" ID, 0, "kubepods",
	  "burstable", ID, "0123456789abcdef0123456789abcdef" },
	/* systemd-nspawn, LXC/LXD, libvirt */
	{ "/machine.slice/systemd-nspawn@deb12.service", 0, "systemd-nspawn", NULL, NULL, NULL,
	  "deb12" },
	{ "/machine.slice/machine-deb12.scope/payload", 0, "systemd-nspawn", NULL, NULL, NULL,
	  "deb12" },
	{ "/lxc.payload.web1", 0, "lxc", NULL, NULL, NULL, "web1" },
	{ "/lxc.payload/web1", 0, "lxc", NULL, NULL, NULL, "web1" },
	{ "/lxc/web1/init.scope", 0, "lxc", NULL, NULL, NULL, "web1" },
	{ "/lxc.monitor.web1", 0 },
	{ "/machine.slice/machine-qemu\\x2d1\\x2dmy\\x2dvm.scope/libvirt/vcpu0", 0, "libvirt",
	  NULL, NULL, NULL, "my-vm" },
	{ "/machine.slice/machine-qemu\\x2dold.scope", 0, "libvirt", NULL, NULL, NULL, "old" },
	{ "/machine.slice/machine-lxc\\x2d4242\\x2dbox.scope", 0, "libvirt", NULL, NULL, NULL,
	  "box" },
	{ "/machine/qemu-3-db.libvirt-qemu/emulator", 0, "libvirt", NULL, NULL, NULL, "db" },
	{ "/machine/db.libvirt-qemu", 0, "libvirt", NULL, NULL, NULL, "db" },
	/* malformed: the field left out, -EINVAL; what was valid stays */
	{ "/system.slice/docker-4f3a.scope", -EINVAL, "docker" },
	{ "/system.slice/docker-" ID "0.scope", -EINVAL, "docker" },
	{ "/machine.slice/libpod-" "4F3A9C1D2E5B6A7F8091A2B3C4D5E6F708192A3B4C5D6E7F8091A2B3C4D5E6F7"
	  ".scope",
	  -EINVAL, "podman" },
	{ "/docker/buildkit", -EINVAL, "docker" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID
	  ".slice/cri-containerd-" ID ".scope",
	  -EINVAL, "containerd", "burstable", ID },
	{ "/kubepods/burstable/podnot-a-uid/" ID, -EINVAL, "kubepods", "burstable", ID },
	{ "/kubepods/burstable/pod" UID "/abc", -EINVAL, "kubepods", "burstable", NULL, UID },
	{ "/machine.slice/machine-qemu\\x2.scope", -EINVAL, "systemd-nspawn" },
	{ "/machine.slice/machine-bad\\x01.scope", -EINVAL, "systemd-nspawn" },
	{ "/default/-bad", -EINVAL, "containerd", NULL, NULL, NULL, NULL, "default" },
};

static int streq_or_empty(const char *got, const char *want)
{
	return !strcmp(got ? got : "", want ? want : "");
}

static void test_container_decode(void)
{
	for (size_t i = 0; i < sizeof(dcases) / sizeof(dcases[0]); i++) {
		const struct dcase *d = &dcases[i];
		struct ct_info ci;
		int ret = ct_decode(d->path, &ci);

		if (!ASSERT_EQ(ret, d->ret, d->path) ||
		    !ASSERT_TRUE(streq_or_empty(ct_runtime_name(ci.runtime), d->rt), d->path) ||
		    !ASSERT_TRUE(streq_or_empty(ct_qos_name(ci.qos), d->qos), d->path) ||
		    !ASSERT_STREQ(ci.id, d->id ? d->id : "", d->path) ||
		    !ASSERT_STREQ(ci.pod_uid, d->uid ? d->uid : "", d->path) ||
		    !ASSERT_STREQ(ci.name, d->name ? d->name : "", d->path) ||
		    !ASSERT_STREQ(ci.ns, d->ns ? d->ns : "", d->path))
			return;
	}
}

/* Random bytes and truncations of every pattern: no crash, fields NUL-terminated. */
static void test_container_decode_junk(void)
{
	uint64_t seed = 28;
	char buf[700];
	struct ct_info ci;

	ASSERT_EQ(ct_decode(NULL, &ci), 0, "NULL path");
	for (size_t i = 0; i < sizeof(dcases) / sizeof(dcases[0]); i++) {
		size_t n = strlen(dcases[i].path);

		for (size_t k = 0; k <= n; k++) {
			snprintf(buf, sizeof(buf), "%.*s", (int)k, dcases[i].path);
			ct_decode(buf, &ci);
			if (!ASSERT_TRUE(strlen(ci.id) <= CT_ID_LEN && strlen(ci.name) < CT_NAME_MAX,
					 buf))
				return;
		}
	}
	for (int r = 0; r < 20000; r++) {
		size_t n = unit_rng(&seed) % (sizeof(buf) - 1);
		static const char alpha[] = "/-_.\\x2dabcdef0123456789kubepodslice";

		for (size_t k = 0; k < n; k++)
			buf[k] = r & 1 ? alpha[unit_rng(&seed) % (sizeof(alpha) - 1)]
				       : (char)(1 + unit_rng(&seed) % 255);
		buf[n] = '\0';
		ct_decode(buf, &ci);
	}
	/* a component longer than any pattern is skipped, not cut */
	memset(buf, 'a', 600);
	snprintf(buf, sizeof(buf), "/docker-%0600d.scope", 0);
	ASSERT_EQ(ct_decode(buf, &ci), 0, "over-long component");
	ASSERT_EQ(ci.runtime, CT_RT_NONE, "over-long component: nothing");
}

int main(void)
{
	RUN_TEST(test_container_decode);
	RUN_TEST(test_container_decode_junk);
	return unit_result();
}
