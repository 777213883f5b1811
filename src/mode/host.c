// SPDX-License-Identifier: GPL-2.0
/*
 * Host mode: trace QEMU processes and the host stack under them, receive the
 * guests' virtio requests over the link, and join each one to QEMU's handling
 * and the host IO it caused (vjoin.c). What is traced on the host:
 *
 * - the QEMU processes' own syscalls and block IO (the standalone layers with
 *   a pid filter on the QEMU tgids and a file filter on the disk images named
 *   on QEMU's command line; the file filter follows the guests' filters);
 * - per QEMU, while its VM calibrates (hprobe.c): two uprobes per guest IO
 *   at most, blk_aio_preadv/pwritev (QEMU submits the guest request: carries
 *   the byte offset and the guest buffer, whose address the host IO repeats:
 *   the join key) and virtio_notify (QEMU interrupts the guest), at file
 *   offsets from QEMU's .dynsym; then none: the guests say their buffers'
 *   guest-physical addresses and vjoin maps them to QEMU's (the address path).
 */
#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "iotracer.h"
#include "iotracer.skel.h"
#include "lib/procfs.h"
#include "service/cli.h"
#include "records/corr.h"
#include "lib/jsonw.h"
#include "mode/hblame.h"
#include "mode/host_int.h"
#include "mode/hostout.h"
#include "mode/hprobe.h"
#include "mode/link.h"
#include "load/loader.h"
#include "lib/clock.h"
#include "mode/mode.h"
#include "records/output.h"
#include "mode/qemu.h"
#include "mode/scope.h"
#include "mode/vjoin.h"
#include "lib/log.h"

/* ---- setup ---- */

static int host_prepare(struct it_opts *o, FILE *err)
{
	pid_t found[CLI_MAX_QEMU];
	int n;

	if (!o->nr_qemu_pids) {
		n = qemu_discover("/proc", found, CLI_MAX_QEMU);
		for (int i = 0; i < n; i++)
			o->qemu_pids[o->nr_qemu_pids++] = found[i];
	}
	if (!o->nr_qemu_pids) {
		it_err_to(err, "--mode host: no qemu-system-* process found "
			       "(start the VM first, or give --qemu-pid)");
		return -ENOENT;
	}
	for (int i = 0; i < o->nr_qemu_pids; i++) {
		char path[64], exe[PATH_MAX];
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/%u", o->qemu_pids[i]);
		if (access(path, F_OK)) {
			it_err_to(err, "--qemu-pid: no process %u", o->qemu_pids[i]);
			return -EINVAL;
		}
		snprintf(path, sizeof(path), "/proc/%u/exe", o->qemu_pids[i]);
		len = readlink(path, exe, sizeof(exe) - 1);
		exe[len > 0 ? len : 0] = 0;
		if (!strstr(exe, "qemu-system-"))
			it_warn_to(err, "pid %u is not a qemu-system-* process (%s)",
				   o->qemu_pids[i], len > 0 ? exe : strerror(errno));
	}
	/*
	 * The join needs QEMU's host syscalls: keep that layer on whatever -l
	 * says. By default only what the join uses: syscall, block, qemu. The
	 * sched and fs hooks fire for every task of the host (a context switch
	 * anywhere runs sched_switch) only to be filtered out: -l all asks for them.
	 */
	if (!o->layers)
		o->layers = (1u << IT_L_SYSCALL) | (1u << IT_L_BLOCK) | (1u << IT_L_QEMU);
	o->layers |= (1u << IT_L_SYSCALL) | (1u << IT_L_QEMU);
	/* Trace the QEMU processes only (their threads: tgid filter). */
	o->nr_pids = 0;
	for (int i = 0; i < o->nr_qemu_pids && i < CLI_MAX_PIDS; i++)
		o->pids[o->nr_pids++] = o->qemu_pids[i];
	return 0;
}

/*
 * mode_ops.ld_config: the QEMU uprobes (attached per process: hprobe.c), the
 * syscalls' iovecs (the join by buffer address), and the file filter's map,
 * which holds the wanted disks' images (update_files).
 */
static void host_ld_config(struct ld_config *c)
{
	c->mode_progs = LD_PROGS_HOST;
	c->want_iovecs = 1;
	c->files_by_caller = 1;
}

_Static_assert(HOST_MAX_DISKS <= SCOPE_MAX_DISKS, "a scope mask holds every disk");

/* The disks of QEMU number qi, and what names its guest (vsock CID, sockets). */
static void add_disks(struct host *h, int qi)
{
	struct qemu_disk d[QEMU_MAX_DISKS];
	pid_t pid = h->qemu[qi];
	int n = qemu_disks("/proc", pid, d, QEMU_MAX_DISKS);

	if (n < 0)
		it_err("qemu pid %d: cannot read its disks: %s", pid, strerror(-n));
	if (qemu_vm_info("/proc", pid, &h->vms[qi]) == 0 && h->vms[qi].cid && !h->env.o->quiet)
		it_note("qemu pid %d: vsock guest-cid %u", pid, h->vms[qi].cid);
	for (int i = 0; i < n && h->nr_disks < HOST_MAX_DISKS; i++) {
		struct scope_disk *sd = &h->sdisks[h->nr_disks];
		struct hdisk *hd = &h->disks[h->nr_disks++];

		hd->pid = pid;
		hd->d = d[i];
		/* a bounce buffer's host IO is found by offset where the offset is the guest's */
		vjoin_disk(h->vj, h->nr_disks - 1, qi,
			   !d[i].nr_backing && (d[i].rdev || !strcmp(d[i].format, "raw")));
		_Static_assert(sizeof(sd->serial) == sizeof(d[i].serial), "serial sizes");
		memcpy(sd->serial, d[i].serial, sizeof(sd->serial));
		sd->vm = qi;
		sd->size = d[i].size;
		sd->bus = d[i].bus;
		if (!h->env.o->quiet)
			fprintf(stderr, "qemu     pid %d disk %-8s serial %-20s %s%s\n", pid,
				d[i].id, d[i].serial[0] ? d[i].serial : "-", d[i].file,
				d[i].stat_ok ? "" : " (cannot stat: not traced)");
		for (int j = 0; j < d[i].nr_backing && !h->env.o->quiet; j++)
			fprintf(stderr, "qemu     pid %d disk %-8s backing %d: %s%s\n", pid,
				d[i].id, j + 1, d[i].backing[j].path,
				d[i].backing[j].stat_ok ? "" : " (cannot stat: not traced)");
	}
}

/* The mapping of QEMU vm's memory holding hva (vjoin.h vj_maps_fn): its map's bounds. */
static int host_ram_map(void *ctx, int vm, uint64_t hva, uint64_t *lo, uint64_t *hi)
{
	const struct host *h = ctx;

	if (vm < 0 || vm >= h->nr_qemu || !h->qemu[vm])
		return -1;
	return qemu_map_of("/proc", h->qemu[vm], hva, lo, hi) ? -1 : 0;
}

/* The kernel file-filter keys of a disk: its image and backing files (qemu.h). */
static int file_keys(const struct hdisk *hd, struct it_file_key *k, int max)
{
	uint32_t devs[1 + QEMU_MAX_BACKING];
	uint64_t inos[1 + QEMU_MAX_BACKING];
	int n = qemu_disk_file_keys(&hd->d, devs, inos,
				    max < 1 + QEMU_MAX_BACKING ? max : 1 + QEMU_MAX_BACKING);

	memset(k, 0, max * sizeof(*k));
	for (int i = 0; i < n; i++) {
		k[i].ino = inos[i];
		k[i].dev = devs[i];
	}
	return n;
}

/*
 * The disks to trace (scope.h): each connected guest's filter narrows its
 * own disks only; a disk no filter covers is traced.
 */
static uint64_t disks_wanted(struct host *h)
{
	struct scope_claim c[HOST_MAX_PEERS * 4];
	int n = 0;

	for (struct link_peer *p = link_next_peer(h->link, NULL);
	     p && n < (int)(sizeof(c) / sizeof(c[0])); p = link_next_peer(h->link, p)) {
		const struct hconn *hc = link_peer_user(p);

		if (hc && hc->named)
			c[n++] = (struct scope_claim){ .scope = hc->scope, .named = hc->named };
	}
	return scope_wanted(&h->scope, c, n);
}

/*
 * Host mode's JSON lines go into the daemon's batch (out_json_begin), in
 * order with the request lines, written with them: one write per batch. A
 * line per write call cost the daemon ~20 us per guest IO (two lines, each
 * two unbuffered writes). Durable now: the batch written (out_flush); 0, or
 * -EIO when a write failed.
 */
static int json_now(struct host *h)
{
	uint64_t lost = out_json_lost(h->env.out);

	out_flush(h->env.out);
	return out_json_lost(h->env.out) == lost ? 0 : -EIO;
}

/* The filter in force, as a JSON line (tests count records after it). */
static void json_filter(struct host *h)
{
	size_t mark;
	struct jw *w = out_json_begin(h->env.out, &mark);

	if (!w)
		return;
	jw_obj_begin(w, NULL);
	jw_str(w, "type", "host_filter");
	jw_arr_begin(w, "disks");
	for (int i = 0; i < h->nr_disks; i++) {
		jw_obj_begin(w, NULL);
		jw_str(w, "serial", h->disks[i].d.serial);
		jw_str(w, "file", h->disks[i].d.file);
		jw_u64(w, "ino", h->disks[i].d.ino);
		jw_bool(w, "traced", h->disks[i].wanted);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
	out_json_end(h->env.out, mark);
	json_now(h);
}

/* The kernel's file filter = the images of the wanted disks. */
static void update_files(struct host *h)
{
	int fd = bpf_map__fd(h->env.ld->skel->maps.files);
	uint64_t wanted = disks_wanted(h);
	int changed = 0;
	uint8_t one = 1;

	for (int i = 0; i < h->nr_disks; i++) {
		struct hdisk *hd = &h->disks[i];
		struct it_file_key k[1 + QEMU_MAX_BACKING];
		int want = !!(wanted & (1ull << i)), nk = file_keys(hd, k, 1 + QEMU_MAX_BACKING);

		if (!nk || want == hd->wanted)
			continue;
		for (int j = 0; j < nk; j++)
			if (want ? bpf_map_update_elem(fd, &k[j], &one, BPF_ANY) :
				   bpf_map_delete_elem(fd, &k[j]))
				it_warn("filter update for %s (file %d of its chain) failed: %s",
					hd->d.file, j + 1, strerror(errno));
		hd->wanted = want;
		changed = 1;
		if (!h->env.o->quiet)
			it_note("host filter: %s disk %s (%s)", want ? "tracing" : "not tracing",
				hd->d.serial[0] ? hd->d.serial : hd->d.id, hd->d.file);
	}
	if (changed && h->env.json)
		json_filter(h);
}

/* ---- link callbacks ---- */

static void host_log(void *ctx, const char *line)
{
	it_note("%s", line);
}

/* A guest refused or lost, a listener failing: said under -q too. */
static void host_warn(void *ctx, const char *line)
{
	it_warn("%s", line);
}

static void host_on_up(void *ctx, struct link_peer *p)
{
	struct host *h = ctx;
	const struct link_peer_info *pi = link_peer_info(p);

	if (!h->env.o->quiet)
		it_note("guest '%.64s' up on %s (peer %d)", pi->hello.name, pi->addr, pi->id);
}

/*
 * A guest without buffer addresses (no LINK_CAP_GPA: an older iotracer, or
 * one that could not read them) keeps the VM of a disk it names on the
 * uprobe path while it is connected: said once per VM, counted (hprobe.h).
 */
static void pin_vm(struct host *h, struct link_peer *p, int vm)
{
	const struct link_peer_info *pi = link_peer_info(p);
	struct hconn *hc = link_peer_user(p);

	if (!hc || (pi->hello.caps & LINK_CAP_GPA) || vm < 0 || (hc->pinned & (1u << vm)))
		return;
	hc->pinned |= 1u << vm;
	hprobe_pin(h->hp, vm, 1);
	it_note("guest '%.64s' (peer %d) sends no buffer addresses (an older iotracer?): qemu pid "
		"%d stays on its uprobes",
		pi->hello.name, pi->id, h->qemu[vm]);
}

/*
 * A peer passed the hello (and AUTH when there is a key): which disks may it
 * touch? A vsock CID that is no traced QEMU's is refused (the link counts it).
 */
static int host_on_admit(void *ctx, struct link_peer *p, char *why, size_t whylen)
{
	struct host *h = ctx;
	const struct link_peer_info *pi = link_peer_info(p);
	struct scope_peer sp = {
		.transport = pi->transport, .accepted = pi->accepted, .cid = pi->cid, .path = ""
	};
	struct hconn *hc;
	uint64_t mask;
	int vm = -1, one = 1;

	if (pi->transport == ADDR_UNIX && !strncmp(pi->addr, "unix:", 5))
		sp.path = pi->addr + 5;
	if (scope_of(&h->scope, &sp, &mask, why, whylen))
		return -EACCES;
	hc = calloc(1, sizeof(*hc));
	if (!hc) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	hc->scope = mask;
	link_peer_set_user(p, hc);
	/* a guest of one VM without addresses: its uprobes stay before its records come */
	for (int i = 0; i < h->nr_disks; i++) {
		if (!(mask & (1ull << i)))
			continue;
		one = vm < 0 || h->sdisks[i].vm == vm ? one : 0;
		vm = h->sdisks[i].vm;
	}
	if (one)
		pin_vm(h, p, vm);
	/* its VM is named by its hello when its QEMU has no -name (docs/blame.md) */
	for (int i = 0; i < h->nr_disks; i++)
		if (mask & (1ull << i)) {
			hblame_set_guest(h->hb, h->sdisks[i].vm, pi->hello.name);
			break;
		}
	return 0;
}

static void host_on_down(void *ctx, struct link_peer *p, const char *why)
{
	struct host *h = ctx;
	const struct link_peer_info *pi = link_peer_info(p);
	const struct hconn *hc = link_peer_user(p);

	for (int vm = 0; hc && vm < h->nr_qemu; vm++)
		if (hc->pinned & (1u << vm))
			hprobe_pin(h->hp, vm, -1);
	/* its filter stays in force until the next filter change (the guest comes back) */
	free(link_peer_user(p));
	link_peer_set_user(p, NULL);
	if (!h->env.o->quiet)
		it_note("peer %d (%s) down: %s", pi->id, pi->addr, why);
}

/* A filter narrows its sender's disks only; serials outside them are counted. */
static void host_on_filter(void *ctx, struct link_peer *p, const struct link_filter *f)
{
	struct host *h = ctx;
	struct hconn *hc = link_peer_user(p);
	const struct link_peer_info *pi = link_peer_info(p);
	struct hpeer *hp = hostout_peer(&h->sum, pi);
	uint64_t now = it_mono_ns();
	int ignored;

	if (!hc)
		return;
	ignored = scope_filter(&h->scope, hc->scope, f, &hc->named);
	h->sum.filter_ignored += (uint64_t)ignored;
	if (hp)
		hp->filter_ignored += (uint64_t)ignored;
	if (ignored && now >= h->next_filter_note) {
		it_note("guest '%.64s' (peer %d, %s): filter: %d of %u serials ignored (not its "
			"disks, or no such disk)%s",
			pi->hello.name, pi->id, pi->addr, ignored, f->nr_serials,
			hc->named ? "" : ": it changes nothing");
		h->next_filter_note = now + 1000000000ull;
	}
	update_files(h);
}

/* A record is delivered only when it fits a disk of its sender (scope.h). */
static const char *host_check_record(void *ctx, struct link_peer *p, const struct link_vreq *v)
{
	struct host *h = ctx;
	const struct hconn *hc = link_peer_user(p);
	struct hpeer *hp;
	const char *why;
	int disk;

	why = hc ? scope_check_vreq(&h->scope, hc->scope, v, &disk) : "peer not admitted";
	if (!why)
		return NULL;
	h->sum.records_malformed++;
	hp = hostout_peer(&h->sum, link_peer_info(p));
	if (hp)
		hp->malformed++;
	return why;
}

/* The disk of a record check_record let through. */
static int disk_of_vreq(const struct host *h, struct link_peer *p, const struct link_vreq *v)
{
	const struct hconn *hc = link_peer_user(p);
	int disk = -1;

	if (hc)
		scope_check_vreq(&h->scope, hc->scope, v, &disk);
	return disk;
}

static int host_on_records(void *ctx, struct link_peer *p, const struct link_vreq *v, uint32_t n)
{
	struct host *h = ctx;
	const struct link_peer_info *pi = link_peer_info(p);
	uint64_t now = it_mono_ns(), unc = HOST_NO_CLOCK_UNC;
	int64_t peer_minus_local = 0;

	link_clock_get(&pi->clock, &peer_minus_local, &unc);
	for (uint32_t i = 0; h->env.json && i < n; i++) {
		size_t mark;
		struct jw *w = out_json_begin(h->env.out, &mark);

		hostout_json_vreq(w, pi->hello.session, &v[i]);
		out_json_end(h->env.out, mark);
	}
	if (h->env.json && json_now(h))
		return -EIO; /* not durable: not acknowledged */
	for (uint32_t i = 0; i < n; i++) {
		int disk = disk_of_vreq(h, p, &v[i]);

		if (disk >= 0 && !(pi->hello.caps & LINK_CAP_GPA))
			pin_vm(h, p, h->sdisks[disk].vm);
		vjoin_add_guest(h->vj, pi->id, pi->hello.session, disk, &v[i], -peer_minus_local,
				unc, now);
	}
	h->sum.vreq_rx += n;
	hostout_note_peer(&h->sum, pi, -peer_minus_local, unc, n);
	return 0;
}

/* ---- joined paths ---- */

/* A path's line, with the split of its host IOs' block requests under --blame (hblame.h). */
static void host_path_line(void *ctx, const struct vj_path *p, const struct dblame_rec *blame,
			   int missing)
{
	struct host *h = ctx;
	size_t mark;
	struct jw *w = out_json_begin(h->env.out, &mark);

	if (!w)
		return;
	jw_obj_begin(w, NULL);
	hostout_json_path_fields(w, p);
	if (blame) {
		jw_obj_begin(w, "host_blame");
		dblame_json_rec(h->env_blame, w, blame);
		jw_obj_end(w);
	} else if (missing) {
		jw_bool(w, "host_blame_missing", 1);
	}
	jw_obj_end(w);
	out_json_end(h->env.out, mark);
}

static void host_on_path(const struct vj_path *p, void *ctx)
{
	struct host *h = ctx;

	hostout_add_path(&h->sum, p);
	if (h->env.json)
		hblame_path(h->hb, p, it_mono_ns());
	if (h->env.o->live)
		hostout_live_path(h->env.text, p);
}

/* ---- daemon hooks ---- */

static int host_listen_default(struct host *h)
{
	struct net_addr a;
	char why[128];
	int ret;

	for (int i = 0; i < h->env.o->nr_listens; i++) {
		addr_parse(h->env.o->listens[i], &a, why, sizeof(why));
		if (a.kind == ADDR_TCP && !h->env.o->link_key)
			it_warn("--listen %s without --link-key: any local process may connect "
				"as a guest (tcp listeners stay on the loopback)",
				h->env.o->listens[i]);
		ret = link_listen(h->link, &a);
		if (ret) {
			it_err("--listen %s: %s", h->env.o->listens[i], strerror(-ret));
			return ret;
		}
	}
	for (int i = 0; i < h->env.o->nr_links; i++) {
		addr_parse(h->env.o->links[i], &a, why, sizeof(why));
		ret = link_dial(h->link, &a);
		if (ret)
			return ret;
	}
	if (h->env.o->nr_listens || h->env.o->nr_links)
		return 0;
	addr_parse("vsock:7767", &a, why, sizeof(why));
	ret = link_listen(h->link, &a);
	if (ret)
		it_err("cannot listen on vsock:7767: %s (give --listen or --link)", strerror(-ret));
	return ret;
}

static void *host_start(const struct mode_env *env)
{
	struct link_opts lo = { .role = LINK_ROLE_HOST,
				.name = env->o->name,
				.key = env->o->link_key };
	struct host *h = calloc(1, sizeof(*h));
	struct hprobe_opts po;
	struct link_cb cb = { .on_up = host_on_up,
			      .on_down = host_on_down,
			      .on_filter = host_on_filter,
			      .on_records = host_on_records,
			      .on_admit = host_on_admit,
			      .check_record = host_check_record,
			      .log = host_log,
			      .warn = host_warn };

	if (!h)
		return NULL;
	h->env = *env;
	cb.ctx = h;
	h->start_ns = it_mono_ns();
	h->cpu_start_ns = procfs_cpu_ns(getpid());
	if (hostout_init(&h->sum) || !(h->hb = hblame_new(host_path_line, h)))
		goto fail;
	h->vj = vjoin_new(host_on_path, h, HOST_HOLD_NS, 0);
	lo.caps = LINK_CAP_GPA; /* records with the guests' buffer addresses, please */
	h->link = link_new(&lo, &cb);
	po.always = env->o->qemu_uprobes && !strcmp(env->o->qemu_uprobes, "always");
	po.stages = env->o->qemu_stages;
	if (!h->vj || !h->link || !(h->hp = hprobe_new(env, h->vj, &po)))
		goto fail;
	vjoin_set_maps(h->vj, host_ram_map, h);
	for (int i = 0; i < env->o->nr_qemu_pids; i++) {
		h->qemu[h->nr_qemu] = env->o->qemu_pids[i];
		add_disks(h, h->nr_qemu);
		hblame_set_vm(h->hb, h->nr_qemu, h->qemu[h->nr_qemu], h->vms[h->nr_qemu].name);
		hprobe_add_vm(h->hp, h->nr_qemu, h->qemu[h->nr_qemu]);
		h->nr_qemu++;
	}
	h->scope = (struct scope_host){
		.disks = h->sdisks, .nr_disks = h->nr_disks, .vms = h->vms, .nr_vms = h->nr_qemu
	};
	update_files(h);
	if (host_listen_default(h))
		goto fail;
	return h;
fail:
	it_err("host mode could not start");
	host_mode_ops.stop(h);
	return NULL;
}

static int host_epoll_fd(void *m)
{
	return link_epoll_fd(((struct host *)m)->link);
}

static int host_record(void *m, const void *data, size_t size)
{
	return hostio_record(m, data, size);
}

static void host_request(void *m, const struct corr_req *r)
{
	hostio_request(m, r);
}

/*
 * A traced QEMU that exited (its VM shut down, or it was killed): its uprobes
 * are detached at once rather than held until we stop, and it is said. The
 * other QEMUs and their guests are served as before; a peer of the gone VM
 * finds no disk of its own in scope any more.
 */
static void check_qemus(struct host *h, uint64_t now_ns)
{
	if (now_ns < h->next_qemu_check)
		return;
	h->next_qemu_check = now_ns + 1000000000ull;
	for (int q = 0; q < h->nr_qemu; q++) {
		int n;

		if (!h->qemu[q] || !kill(h->qemu[q], 0) || errno != ESRCH)
			continue;
		n = hprobe_gone(h->hp, q);
		it_note("qemu pid %d exited: its %d uprobes detached", h->qemu[q], n);
		h->qemu[q] = 0;
		h->sum.qemu_exited++;
	}
}

static void host_run(void *m, uint64_t now_ns)
{
	struct host *h = m;

	link_run(h->link, now_ns);
	vjoin_tick(h->vj, now_ns);
	hprobe_tick(h->hp);
	hblame_tick(h->hb, now_ns);
	check_qemus(h, now_ns);
}

/* Each QEMU's path and probes, for the summary. */
static int host_vms(const struct host *h, struct hostout_vm *vms)
{
	for (int q = 0; q < h->nr_qemu; q++) {
		const struct hprobe_vm *pv = hprobe_vm(h->hp, q);

		vms[q] = (struct hostout_vm){ .pid = pv ? pv->pid : 0,
					      .uprobes = hprobe_why_name(pv ? pv->why : HP_GONE),
					      .recheck = vj_recheck_name(pv ? pv->recheck : 0),
					      .st = vjoin_vm(h->vj, q),
					      .attaches = pv ? pv->attaches : 0,
					      .detaches = pv ? pv->detaches : 0,
					      .pinned = pv ? pv->pinned : 0 };
	}
	return h->nr_qemu;
}

static void host_summary(void *m, int final)
{
	struct host *h = m;
	struct hostout_now n = { .elapsed_ns = it_mono_ns() - h->start_ns };
	struct hostout_vm vms[CLI_MAX_QEMU];
	size_t mark;
	struct jw *w;

	if (final) {
		vjoin_flush(h->vj);
		/* the daemon split every block request before the final summary */
		hblame_flush(h->hb);
	}
	n.st = vjoin_stats(h->vj);
	n.blame = h->blame ? hblame_stats(h->hb) : NULL;
	link_get_stats(h->link, &n.ls);
	n.cpu_pct = n.elapsed_ns ?
			    100.0 * (procfs_cpu_ns(getpid()) - h->cpu_start_ns) / n.elapsed_ns :
			    0;
	it_loader_run_totals(h->env.ld, NULL, &n.bpf_ns);
	n.vms = vms;
	n.nr_vms = host_vms(h, vms);
	hprobe_runs(h->hp, &n.uprobe_runs, &n.kvm_runs, &n.runs_known);
	hostout_text(h->env.text, &h->sum, &n);
	w = out_json_begin(h->env.out, &mark);
	if (!w)
		return;
	hostout_json(w, &h->sum, &n, final);
	out_json_end(h->env.out, mark);
	json_now(h);
}

/* --metrics: link state and join counts (docs/metrics.md). */
static void host_metrics(void *m, FILE *f)
{
	struct host *h = m;
	struct link_peer *p = NULL;
	uint64_t up = 0;

	while ((p = link_next_peer(h->link, p)))
		up += link_peer_info(p)->hello_done;
	hostout_metrics(f, up, vjoin_stats(h->vj));
}

/* --blame: VMs are the owners, named by hblame (docs/blame.md, "Host mode"). */
static int host_blame(void *m, struct dblame *b)
{
	struct host *h = m;
	int ret = hblame_attach(h->hb, b);

	h->blame = !ret;
	h->env_blame = b;
	return ret;
}

static void host_stop(void *m)
{
	struct host *h = m;

	if (!h)
		return;
	for (struct link_peer *p = h->link ? link_next_peer(h->link, NULL) : NULL; p;
	     p = link_next_peer(h->link, p))
		free(link_peer_user(p)); /* link_free() calls no on_down */
	hprobe_free(h->hp);
	link_free(h->link);
	vjoin_free(h->vj);
	hblame_free(h->hb);
	hostout_free(&h->sum);
	free(h);
}

const struct mode_ops host_mode_ops = {
	.name = "host",
	.prepare = host_prepare,
	.ld_config = host_ld_config,
	.start = host_start,
	.epoll_fd = host_epoll_fd,
	.record = host_record,
	.blame = host_blame,
	.request = host_request,
	.run = host_run,
	.summary = host_summary,
	.metrics = host_metrics,
	.stop = host_stop,
};
