/* SPDX-License-Identifier: GPL-2.0 */
/*
 * container: which container, pod or machine a cgroup v2 path belongs to,
 * decoded from the path alone (docs/cgroups.md, "Containers and pods", lists
 * each pattern with an example), and the names the node itself holds for
 * them (kubelet's /var/log/pods and /var/log/containers, docker's and
 * podman's state directories), cached and looked at again when they change.
 * Nothing comes from the network.
 */
#ifndef IT_CORE_CONTAINER_H
#define IT_CORE_CONTAINER_H

#include <stddef.h>
#include <stdint.h>

enum ct_runtime {
	CT_RT_NONE, /* not in a container (or a kubepods container the path does not name) */
	CT_RT_DOCKER,
	CT_RT_PODMAN,
	CT_RT_CONTAINERD,
	CT_RT_CRIO,
	CT_RT_NSPAWN,
	CT_RT_LXC,
	CT_RT_LIBVIRT,
	CT_RT_KUBEPODS, /* a kubepods container under the cgroupfs driver: the id, not its runtime */
	CT_RT_NR,
};

enum ct_qos { CT_QOS_NONE, CT_QOS_GUARANTEED, CT_QOS_BURSTABLE, CT_QOS_BESTEFFORT, CT_QOS_NR };

#define CT_ID_LEN 64 /* a container id: 64 lowercase hex digits */
#define CT_UID_MAX 36 /* a pod UID: 8-4-4-4-12 hex, or 32 hex (static pods) */
#define CT_NAME_MAX 128

struct ct_info {
	enum ct_runtime runtime;
	enum ct_qos qos;
	char id[CT_ID_LEN + 1]; /* "": none (or malformed) */
	char pod_uid[CT_UID_MAX + 1]; /* with '-', as the API server writes it; "": none */
	char name[CT_NAME_MAX]; /* a machine's name (libvirt, nspawn, LXC) or ctr's id; "" */
	char ns[CT_NAME_MAX]; /* containerd's namespace (ctr); "" */
};

/*
 * Decode a hierarchy path ("/system.slice/docker-<id>.scope/..."). Sub-cgroups
 * of a container (".../libpod-<id>.scope/container") are the container's.
 * 0: decoded (runtime CT_RT_NONE and nothing else set when the path is no
 * container's); -EINVAL: a component looked like a pattern but was malformed
 * (an id of the wrong length, a bad pod UID): what was valid is set, the rest
 * left out.
 */
int ct_decode(const char *path, struct ct_info *ci);

/* "docker", "podman", ... ; NULL for CT_RT_NONE. */
const char *ct_runtime_name(enum ct_runtime rt);
/* "guaranteed", "burstable", "besteffort"; NULL for CT_QOS_NONE. */
const char *ct_qos_name(enum ct_qos q);

/*
 * Names from the node, under root ("": /; the env IOTRACER_HOST_ROOT when NULL,
 * for a container that mounts the host's / elsewhere, and for tests):
 *   <root>/var/log/pods/<namespace>_<pod>_<uid>/          pod UID -> namespace, pod
 *   <root>/var/log/containers/<pod>_<ns>_<container>-<id>.log   id -> container name
 *   <root>/var/lib/docker/containers/<id>/config.v2.json  id -> "Name" (without '/')
 *   <root>/var/lib/containers/storage/<driver>-containers/containers.json
 *                                                       id -> names[0] (podman)
 * Each source is read again when its directory's or file's mtime changes,
 * looked at no more than once a second; a lookup that misses looks again at
 * once (at most every 10 ms), then ten times a second while it misses: a
 * container is named in its runtime's files just before it starts, so its
 * first request already finds its name.
 */
struct ct_names;

struct ct_names_stats {
	uint64_t scans; /* sources read (again) */
	uint64_t pods, containers; /* entries known after the last scans */
	uint64_t miss_pod, miss_container; /* lookups of a UID / id no source names */
	uint64_t bad; /* entries skipped: malformed names, vanished files, unparsable JSON */
	uint64_t malformed; /* cgroup paths ct_describe found malformed (ct_decode's -EINVAL) */
};

struct ct_names *ct_names_new(const char *root);
void ct_names_free(struct ct_names *n);
/* Look at the sources again if due (see above; force: now). */
void ct_names_refresh(struct ct_names *n, int force);
/* The pod's namespace and name (valid until the next refresh); 0, or -ENOENT (counted in miss_pod). */
int ct_names_pod(struct ct_names *n, const char *uid, const char **ns, const char **pod);
/* A container's name; NULL when no source names it (counted in miss_container). */
const char *ct_names_container(struct ct_names *n, const char *id);
void ct_names_stats(const struct ct_names *n, struct ct_names_stats *st);
/*
 * A name from elsewhere than the node's files (a recording's, docs/record.md):
 * a container id's name (pod 0; ns unused) or a pod UID's name and namespace
 * (pod 1). Such names come before the node's; a later one for the same id
 * replaces it. 0 or -ENOMEM.
 */
int ct_names_add(struct ct_names *n, int pod, const char *id, const char *name, const char *ns);

/*
 * Everything known of a cgroup path, for output: the decoded fields and the
 * names (n may be NULL: ids only; the names are valid until the next call).
 * 0, or -EINVAL as ct_decode (counted in malformed). The last path's answer
 * is kept while no source changed: requests come in runs from one cgroup.
 */
struct ct_full {
	struct ct_info ci;
	const char *container; /* container name; NULL: unknown */
	const char *pod, *pod_ns; /* pod name and namespace; NULL: unknown */
};
int ct_describe(struct ct_names *n, const char *path, struct ct_full *f);

#endif /* IT_CORE_CONTAINER_H */
