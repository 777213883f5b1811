// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for src/records/container.c: every cgroup path pattern of
 * docs/cgroups.md ("Containers and pods") decoded to the fields the runtimes
 * name them by, malformed names and ids of the wrong length left out and
 * reported; and the node's name sources (container_names.c) from fixture
 * directories: the names written there, a vanished entry, a change seen, a
 * new container named at its first lookup; and /metrics' labels (agg.c)
 * keeping the names they were first given.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"
#include "records/agg.h"
#include "records/cgroup.h"
#include "records/container.h"

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
	{ "/machine.slice/machine-libpod_pod_" ID2 ".slice/libpod-" ID ".scope", 0, "podman", NULL,
	  ID },
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
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice/crio-" ID
	  ".scope",
	  0, "cri-o", "besteffort", ID, UID },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" ID ".scope", 0, "docker",
	  "guaranteed", ID, UID },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice", 0, NULL,
	  "burstable", NULL, UID },
	{ "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice", 0 },
	/* Kubernetes, cgroupfs driver: '-' in the UID, the bare id; CRI-O's crio-<id> */
	{ "/kubepods/burstable/pod" UID "/" ID, 0, "kubepods", "burstable", ID, UID },
	{ "/kubepods/besteffort/pod" UID "/crio-" ID, 0, "cri-o", "besteffort", ID, UID },
	{ "/kubepods/pod" UID "/" ID, 0, "kubepods", "guaranteed", ID, UID },
	{ "/kubepods/burstable/pod0123456789abcdef0123456789abcdef/" ID, 0, "kubepods", "burstable",
	  ID, "0123456789abcdef0123456789abcdef" },
	/* systemd-nspawn, LXC/LXD, libvirt */
	{ "/machine.slice/systemd-nspawn@deb12.service", 0, "systemd-nspawn", NULL, NULL, NULL,
	  "deb12" },
	{ "/machine.slice/machine-deb12.scope/payload", 0, "systemd-nspawn", NULL, NULL, NULL,
	  "deb12" },
	{ "/lxc.payload.web1", 0, "lxc", NULL, NULL, NULL, "web1" },
	{ "/lxc.payload/web1", 0, "lxc", NULL, NULL, NULL, "web1" },
	{ "/lxc/web1/init.scope", 0, "lxc", NULL, NULL, NULL, "web1" },
	{ "/lxc.monitor.web1", 0 },
	{ "/machine.slice/machine-qemu\\x2d1\\x2dmy\\x2dvm.scope/libvirt/vcpu0", 0, "libvirt", NULL,
	  NULL, NULL, "my-vm" },
	{ "/machine.slice/machine-qemu\\x2dold.scope", 0, "libvirt", NULL, NULL, NULL, "old" },
	{ "/machine.slice/machine-lxc\\x2d4242\\x2dbox.scope", 0, "libvirt", NULL, NULL, NULL,
	  "box" },
	{ "/machine/qemu-3-db.libvirt-qemu/emulator", 0, "libvirt", NULL, NULL, NULL, "db" },
	{ "/machine/db.libvirt-qemu", 0, "libvirt", NULL, NULL, NULL, "db" },
	/* malformed: the field left out, -EINVAL; what was valid stays */
	{ "/system.slice/docker-4f3a.scope", -EINVAL, "docker" },
	{ "/system.slice/docker-" ID "0.scope", -EINVAL, "docker" },
	{ "/machine.slice/libpod-"
	  "4F3A9C1D2E5B6A7F8091A2B3C4D5E6F708192A3B4C5D6E7F8091A2B3C4D5E6F7"
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
			if (!ASSERT_TRUE(strlen(ci.id) <= CT_ID_LEN &&
						 strlen(ci.name) < CT_NAME_MAX,
					 buf))
				return;
		}
	}
	for (int r = 0; r < 20000; r++) {
		size_t n = unit_rng(&seed) % (sizeof(buf) - 1);
		static const char alpha[] = "/-_.\\x2dabcdef0123456789kubepodslice";

		for (size_t k = 0; k < n; k++)
			buf[k] = r & 1 ? alpha[unit_rng(&seed) % (sizeof(alpha) - 1)] :
					 (char)(1 + unit_rng(&seed) % 255);
		buf[n] = '\0';
		ct_decode(buf, &ci);
	}
	/* a component longer than any pattern is skipped, not cut */
	memset(buf, 'a', 600);
	snprintf(buf, sizeof(buf), "/docker-%0600d.scope", 0);
	ASSERT_EQ(ct_decode(buf, &ci), 0, "over-long component");
	ASSERT_EQ(ci.runtime, CT_RT_NONE, "over-long component: nothing");
}

/* mkdir -p, then an empty file or one with text when text is given */
static int put(const char *root, const char *rel, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	if (!text)
		return mkdir(path, 0755);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static void rm_rf(const char *root)
{
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", root);
}

/* Advance a directory's mtime: a change within the same clock tick must still be seen. */
static void touch_later(const char *root, const char *rel, int sec)
{
	char path[1024];
	struct timespec ts[2] = { { .tv_sec = 0, .tv_nsec = UTIME_OMIT } };
	struct stat st;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	if (stat(path, &st))
		return;
	ts[1].tv_sec = st.st_mtim.tv_sec + sec;
	ts[1].tv_nsec = 0;
	utimensat(AT_FDCWD, path, ts, 0);
}

#define KPOD "/var/log/pods/shop_cart-7d9f_" UID
#define KLOG "/var/log/containers/cart-7d9f_shop_redis-" ID ".log"

static void test_container_names(void)
{
	char root[] = "/tmp/it_test_ctnames.XXXXXX";
	struct ct_names_stats st;
	struct ct_names *n = NULL;
	const char *ns = NULL, *pod = NULL;
	struct ct_full f;
	uint64_t scans;

	if (!ASSERT_TRUE(mkdtemp(root) != NULL, "temp dir"))
		return;
	if (!ASSERT_OK(put(root, KPOD "/redis/0.log", ""), "pod dir") ||
	    !ASSERT_OK(put(root, KLOG, ""), "container log") ||
	    !ASSERT_OK(put(root, "/var/log/pods/bad-name-without-uid", NULL), "bad pod") ||
	    !ASSERT_OK(put(root, "/var/log/containers/x_y_z-abc.log", ""), "bad log") ||
	    !ASSERT_OK(put(root, "/var/lib/docker/containers/" ID2 "/config.v2.json",
			   "{\"ID\":\"" ID2 "\",\"Name\":\"/web\",\"State\":{}}"),
		       "docker") ||
	    !ASSERT_OK(put(root, "/var/lib/containers/storage/vfs-containers/containers.json",
			   "[{\"id\":\"" ID2 "\",\"names\":[\"pm1\"]},"
			   "{\"id\":\"short\",\"names\":[\"x\"]}]"),
		       "podman"))
		goto out;
	n = ct_names_new(root);
	if (!ASSERT_TRUE(n != NULL, "new"))
		goto out;
	ASSERT_OK(ct_names_pod(n, UID, &ns, &pod), "pod known");
	ASSERT_STREQ(ns ? ns : "", "shop", "namespace");
	ASSERT_STREQ(pod ? pod : "", "cart-7d9f", "pod");
	ASSERT_STREQ(ct_names_container(n, ID) ?: "", "redis", "kubelet's container name");
	ASSERT_STREQ(ct_names_container(n, ID2) ?: "", "pm1", "podman before docker");
	ASSERT_EQ(ct_names_pod(n, "00000000-0000-0000-0000-000000000000", &ns, &pod), -ENOENT,
		  "unknown pod");
	ASSERT_TRUE(ct_names_container(n, "nope") == NULL, "unknown container");
	ct_names_stats(n, &st);
	ASSERT_EQ(st.pods, 1, "pods");
	ASSERT_EQ(st.containers, 3, "containers: kubelet, docker, podman");
	ASSERT_EQ(st.bad, 3, "bad pod dir, bad log name, podman's short id");
	ASSERT_EQ(st.miss_pod, 1, "a pod miss");
	ASSERT_EQ(st.miss_container, 1, "a container miss");

	/* the whole description of a kubepods container */
	ASSERT_OK(ct_describe(n, "/kubepods/burstable/pod" UID "/" ID, &f), "describe");
	ASSERT_STREQ(f.container ?: "", "redis", "described container");
	ASSERT_STREQ(f.pod ?: "", "cart-7d9f", "described pod");
	ASSERT_STREQ(f.pod_ns ?: "", "shop", "described namespace");
	ASSERT_EQ(ct_describe(n, "/docker/abc", &f), -EINVAL, "malformed");
	ASSERT_TRUE(f.container == NULL, "no name for a malformed id");

	/* the pod vanishes; its directory's mtime moves: seen at the next refresh */
	rm_rf(strcat(strcpy((char[1024]){ 0 }, root), KPOD));
	touch_later(root, "/var/log/pods", 5);
	ct_names_stats(n, &st);
	scans = st.scans;
	usleep(1100 * 1000); /* sources are looked at no more than once a second */
	ASSERT_EQ(ct_names_pod(n, UID, &ns, &pod), -ENOENT, "vanished pod");
	ct_names_stats(n, &st);
	ASSERT_EQ(st.scans, scans + 1, "only the changed source read again");
	ASSERT_OK(ct_describe(n, "/kubepods/burstable/pod" UID "/" ID, &f), "describe again");
	ASSERT_TRUE(f.pod == NULL && f.pod_ns == NULL, "vanished pod: names left out");
	ASSERT_STREQ(f.ci.pod_uid, UID, "the UID stays");
	ct_names_stats(n, &st);
	ASSERT_EQ(st.malformed, 1, "one malformed path");
	ASSERT_EQ(st.pods, 0, "no pods");
out:
	ct_names_free(n);
	rm_rf(root);
}

#define PODMAN_JSON "/var/lib/containers/storage/vfs-containers/containers.json"

/*
 * A container started after the last refresh (its runtime wrote its name just before
 * starting it): its first lookup names it, not one a second later (issue 37).
 */
static void test_container_names_new(void)
{
	char root[] = "/tmp/it_test_ctnew.XXXXXX";
	struct ct_names *n = NULL;

	if (!ASSERT_TRUE(mkdtemp(root) != NULL, "temp dir"))
		return;
	if (!ASSERT_OK(put(root, PODMAN_JSON, "[]"), "podman, empty"))
		goto out;
	n = ct_names_new(root);
	if (!ASSERT_TRUE(n != NULL, "new"))
		goto out;
	ASSERT_TRUE(ct_names_container(n, ID) == NULL, "not there yet");
	if (!ASSERT_OK(put(root, PODMAN_JSON, "[{\"id\":\"" ID "\",\"names\":[\"job1\"]}]"),
		       "podman writes it"))
		goto out;
	touch_later(root, PODMAN_JSON, 5);
	usleep(20 * 1000); /* past the 10 ms between two looks at a miss */
	ASSERT_STREQ(ct_names_container(n, ID) ?: "(none)", "job1", "named at its first lookup");
out:
	ct_names_free(n);
	rm_rf(root);
}

/*
 * /metrics' container labels are those of the label's first naming: the container
 * exits, podman forgets it, the series keeps its name (issue 37).
 */
static void test_agg_names_kept(void)
{
	char root[] = "/tmp/it_test_ctkept.XXXXXX";
	struct agg_labels *lb = calloc(1, sizeof(*lb));
	struct cg_cache *cg = cg_cache_new(NULL);
	struct agg_entry e = { .key = { .cgroup_id = 42, .dev = 7, .op = IT_OP_READ } };
	struct agg_row row;
	const char *path = "/libpod_parent/libpod-" ID;

	e.v.count = 3;
	if (!ASSERT_TRUE(mkdtemp(root) != NULL && lb && cg, "alloc"))
		goto out;
	if (!ASSERT_OK(put(root, PODMAN_JSON, "[{\"id\":\"" ID "\",\"names\":[\"job1\"]}]"),
		       "podman"))
		goto out;
	lb->names = ct_names_new(root);
	lb->ct_on = 1;
	cg_cache_put(cg, 42, path);
	ASSERT_STREQ(agg_label(42, cg, 2, lb), path, "label at the first request");
	ASSERT_STREQ(agg_label(43, cg, 2, lb), "other", "unknown cgroup");
	/* the container exits: podman forgets it */
	put(root, PODMAN_JSON, "[]");
	touch_later(root, PODMAN_JSON, 5);
	ct_names_refresh(lb->names, 1);
	if (!ASSERT_EQ(agg_fold(&e, 1, cg, 2, lb, &row), 1, "one row"))
		goto out;
	ASSERT_STREQ(row.cgroup, path, "its label");
	ASSERT_TRUE(row.ct != NULL, "container labels");
	ASSERT_STREQ(row.ct ? row.ct[0] : "", "job1", "the name it was first given");
	ASSERT_TRUE(ct_names_container(lb->names, ID) == NULL, "which podman no longer gives");
out:
	if (lb)
		ct_names_free(lb->names);
	free(lb);
	cg_cache_free(cg);
	rm_rf(root);
}

/* No sources at all (a host without runtimes): ids only, nothing fails. */
static void test_container_names_empty(void)
{
	struct ct_names *n = ct_names_new("/nonexistent/root");
	struct ct_full f;

	if (!ASSERT_TRUE(n != NULL, "new"))
		return;
	ASSERT_OK(ct_describe(n, "/machine.slice/libpod-" ID ".scope", &f), "describe");
	ASSERT_STREQ(f.ci.id, ID, "the id");
	ASSERT_TRUE(f.container == NULL, "no name");
	ASSERT_OK(ct_describe(NULL, "/docker/" ID, &f), "without names");
	ct_names_free(n);
}

int main(void)
{
	RUN_TEST(test_container_decode);
	RUN_TEST(test_container_decode_junk);
	RUN_TEST(test_container_names);
	RUN_TEST(test_container_names_empty);
	RUN_TEST(test_container_names_new);
	RUN_TEST(test_agg_names_kept);
	return unit_result();
}
