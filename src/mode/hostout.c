// SPDX-License-Identifier: GPL-2.0
/*
 * hostout: what host mode writes (hostout.h): its records (guest_vreq and
 * path JSON lines, the --live path line), the counts behind its summary
 * (text and a host_summary JSON line) and its --metrics families.
 */
#include <errno.h>
#include <string.h>

#include "records/hist.h"
#include "records/metrics.h"
#include "lib/abi.h"
#include "lib/jsonw.h"
#include "mode/hostout.h"
#include "mode/vjoin.h"
#include "mode/vreq.h"

int hostout_init(struct hostout *s)
{
	for (int i = 0; i < VJ_STAGES; i++)
		if (!(s->stage[i] = lhist_new()))
			return -ENOMEM;
	return 0;
}

void hostout_free(struct hostout *s)
{
	for (int i = 0; i < VJ_STAGES; i++) {
		lhist_free(s->stage[i]);
		s->stage[i] = NULL;
	}
}

struct hpeer *hostout_peer(struct hostout *s, const struct link_peer_info *pi)
{
	struct hpeer *hp;

	for (int i = 0; i < s->nr_peers; i++)
		if (s->peers[i].session == pi->hello.session)
			return &s->peers[i];
	if (s->nr_peers >= HOST_MAX_PEERS)
		return NULL;
	hp = &s->peers[s->nr_peers++];
	hp->session = pi->hello.session;
	memcpy(hp->name, pi->hello.name, sizeof(hp->name));
	hp->name[sizeof(hp->name) - 1] = 0;
	return hp;
}

void hostout_note_peer(struct hostout *s, const struct link_peer_info *pi, int64_t host_minus_guest,
		       uint64_t unc, uint32_t n)
{
	struct hpeer *hp = hostout_peer(s, pi);

	if (!hp)
		return;
	hp->off = host_minus_guest;
	hp->unc = unc;
	hp->samples = pi->clock.samples;
	hp->records += n;
}

void hostout_json_vreq(struct jw *w, uint64_t session, const struct link_vreq *v)
{
	jw_obj_begin(w, NULL);
	jw_str(w, "type", "guest_vreq");
	jw_hex(w, "session", session);
	jw_u64(w, "seq", v->seq);
	jw_strn(w, "serial", v->serial, LINK_SERIAL_LEN);
	jw_str(w, "bus", vreq_bus_name(v->drv_layer));
	jw_u64(w, "op", v->op);
	jw_u64(w, "sector", v->sector);
	jw_u64(w, "nr_sectors", v->nr_sectors);
	jw_u64(w, "kick_ns", v->kick_ns);
	if (v->gpa)
		jw_hex(w, "gpa", v->gpa);
	if (v->flags & LINK_VF_NO_KICK)
		jw_bool(w, "kick_suppressed", 1);
	jw_u64(w, "done_ns", v->done_ns);
	jw_obj_end(w);
}

static const char *host_kind_name(uint8_t k)
{
	return k == VJ_K_AIO ? "native" : k == VJ_K_URING ? "io_uring" : "threads";
}

void hostout_json_path_fields(struct jw *w, const struct vj_path *p)
{
	jw_str(w, "type", "path");
	jw_u64(w, "peer", p->peer);
	jw_hex(w, "session", p->session);
	jw_u64(w, "seq", p->g->seq);
	jw_strn(w, "serial", p->g->serial, LINK_SERIAL_LEN);
	jw_str(w, "op", abi_op_name(p->g->op));
	jw_u64(w, "offset", p->g->sector * 512);
	jw_u64(w, "bytes", (uint64_t)p->g->nr_sectors * 512);
	jw_bool(w, "joined", p->joined);
	jw_i64(w, "clock_offset_ns", p->clock_off);
	jw_u64(w, "clock_uncert_ns", p->clock_unc);
	if (p->g->gpa)
		jw_hex(w, "gpa", p->g->gpa);
	if (p->hva)
		jw_hex(w, "hva", p->hva);
	if (p->joined) {
		jw_str(w, "key", vj_key_name(p->key));
		jw_bool(w, "order_ok", p->order_ok);
		if (!p->order_ok)
			jw_str(w, "order_bad_at", vj_ts_name(p->bad_pair));
		jw_u64(w, "host_tid", p->h.tid);
		jw_u64(w, "host_dev", p->h.blk_dev);
		jw_str(w, "host_aio", host_kind_name(p->h.kind));
		jw_arr_begin(w, "host_io");
		for (int i = 0; i < p->nr_h; i++) {
			jw_obj_begin(w, NULL);
			jw_u64(w, "ino", p->hp[i].ino);
			jw_u64(w, "offset", p->hp[i].offset);
			jw_u64(w, "bytes", p->hp[i].bytes);
			jw_obj_end(w);
		}
		jw_arr_end(w);
	} else {
		jw_str(w, "unjoined_reason", vj_unjoin_name(p->unjoin));
	}
	jw_obj_begin(w, "t");
	for (int k = 0; k < VJ_T_MAX; k++)
		if (p->t[k])
			jw_u64(w, vj_ts_name(k), p->t[k]);
	jw_obj_end(w);
	jw_obj_begin(w, "stages_ns");
	for (int s = 0; s < VJ_STAGES; s++)
		if (p->stage[s] != INT64_MIN)
			jw_i64(w, vj_stage_name(s), p->stage[s]);
	jw_obj_end(w);
}

void hostout_live_path(FILE *f, const struct vj_path *p)
{
	fprintf(f, "path %-8.20s %-5s %llu+%u %s guest_virtio %lld ns qemu %lld ns\n", p->g->serial,
		abi_op_name(p->g->op), (unsigned long long)p->g->sector * 512,
		p->g->nr_sectors * 512, p->joined ? "joined" : "UNJOINED",
		(long long)(p->stage[VJ_GUEST_VIRTIO] == INT64_MIN ? -1 :
								     p->stage[VJ_GUEST_VIRTIO]),
		(long long)(p->stage[VJ_QEMU_TOTAL] == INT64_MIN ? -1 : p->stage[VJ_QEMU_TOTAL]));
}

void hostout_add_path(struct hostout *s, const struct vj_path *p)
{
	/*
	 * A stage across the guest/host boundary is known to +- the clock
	 * uncertainty and may come out negative: counted as 0 in the table (the
	 * JSON keeps the signed value).
	 */
	for (int i = 0; p->joined && i < VJ_STAGES; i++)
		if (p->stage[i] != INT64_MIN)
			lhist_add(s->stage[i], p->stage[i] > 0 ? (uint64_t)p->stage[i] : 0);
}

double hostout_hits(const struct hostout *h)
{
	uint64_t aio = h->qemu_ev[IT_QEV_AIO_READ] + h->qemu_ev[IT_QEV_AIO_WRITE];

	return aio ? (double)(h->qemu_ev[0] + h->qemu_ev[1] + h->qemu_ev[2]) / aio : 0;
}

static void vm_text(FILE *f, const struct hostout_vm *v)
{
	const struct vj_vm_stats *s = v->st;

	fprintf(f,
		"host: qemu pid %d: %s path, uprobes %s (attached %llu, detached %llu times; "
		"re-checks: unmapped %llu, join rate %llu; pinned by %llu guests); address path "
		"joined %llu, unjoined %llu (unmapped %llu, no address %llu), bounced %llu; map "
		"%llu samples, %d segments; beside the uprobes %llu agreed, %llu not\n",
		v->pid, s->mode == VJ_VM_ADDRESS ? "address" : "uprobe", v->uprobes,
		(unsigned long long)v->attaches, (unsigned long long)v->detaches,
		(unsigned long long)s->rechecks[VJ_RC_UNMAPPED],
		(unsigned long long)s->rechecks[VJ_RC_JOIN_RATE], (unsigned long long)v->pinned,
		(unsigned long long)s->addr_joined, (unsigned long long)s->addr_unjoined,
		(unsigned long long)s->unmapped, (unsigned long long)s->no_address,
		(unsigned long long)s->bounced, (unsigned long long)s->samples, s->segments,
		(unsigned long long)s->agree, (unsigned long long)s->disagree);
}

static void vm_json(struct jw *w, const struct hostout_vm *v)
{
	const struct vj_vm_stats *s = v->st;

	jw_obj_begin(w, NULL);
	jw_i64(w, "pid", v->pid);
	jw_str(w, "path", s->mode == VJ_VM_ADDRESS ? "address" : "uprobe");
	jw_str(w, "uprobes", v->uprobes);
	jw_str(w, "recheck", v->recheck);
	jw_u64(w, "uprobe_attaches", v->attaches);
	jw_u64(w, "uprobe_detaches", v->detaches);
	jw_u64(w, "pinned", v->pinned);
	jw_u64(w, "calibrations", s->calibrations);
	jw_obj_begin(w, "rechecks");
	for (int r = VJ_RC_UNMAPPED; r < VJ_RC_MAX; r++)
		jw_u64(w, vj_recheck_name(r), s->rechecks[r]);
	jw_obj_end(w);
	jw_u64(w, "map_samples", s->samples);
	jw_u64(w, "map_segments", (uint64_t)s->segments);
	jw_u64(w, "map_conflicts", s->conflicts);
	jw_u64(w, "agree", s->agree);
	jw_u64(w, "disagree", s->disagree);
	jw_u64(w, "address_joined", s->addr_joined);
	jw_u64(w, "address_unjoined", s->addr_unjoined);
	jw_u64(w, "unmapped", s->unmapped);
	jw_u64(w, "no_address", s->no_address);
	jw_u64(w, "bounced", s->bounced);
	if (s->clk_n) {
		jw_i64(w, "clock_lo_ns", s->clk_lo);
		jw_i64(w, "clock_hi_ns", s->clk_hi);
	}
	jw_obj_end(w);
}

void hostout_text(FILE *f, const struct hostout *h, const struct hostout_now *n)
{
	const struct vj_stats *st = n->st;

	fprintf(f,
		"host: guest virtio requests %llu, joined %llu (%.1f %%), unjoined %llu, "
		"order violations %llu; QEMU host IOs %llu (never joined %llu)\n",
		(unsigned long long)st->guest, (unsigned long long)st->joined,
		st->guest ? 100.0 * st->joined / st->guest : 0.0, (unsigned long long)st->unjoined,
		(unsigned long long)st->order_bad, (unsigned long long)h->host_io,
		(unsigned long long)st->host_unjoined);
	fprintf(f, "host: unjoined by reason:");
	for (int r = 0; r < VJ_UN_MAX; r++)
		fprintf(f, " %s %llu", vj_unjoin_name(r), (unsigned long long)st->unjoin[r]);
	fprintf(f, "; host IOs never joined:");
	for (int r = 0; r < VJ_HU_MAX; r++)
		fprintf(f, " %s %llu", vj_hunjoin_name(r), (unsigned long long)st->host_unjoin[r]);
	fprintf(f, "; split over several host IOs %llu\n", (unsigned long long)st->split);
	fprintf(f,
		"host: uprobe hits: blk_aio %llu + virtio_notify %llu = %.2f per QEMU block IO; "
		"daemon CPU %.3f %% of a core, BPF %.3f ms (%.3f %% of a core)\n",
		(unsigned long long)(h->qemu_ev[IT_QEV_AIO_READ] + h->qemu_ev[IT_QEV_AIO_WRITE]),
		(unsigned long long)h->qemu_ev[IT_QEV_NOTIFY], hostout_hits(h), n->cpu_pct,
		n->bpf_ns / 1e6, 100.0 * n->bpf_ns / n->elapsed_ns);
	if (n->runs_known)
		fprintf(f, "host: uprobe runs %llu (%.2f per guest IO), kvm irq runs %llu\n",
			(unsigned long long)n->uprobe_runs,
			st->guest ? (double)n->uprobe_runs / st->guest : 0.0,
			(unsigned long long)n->kvm_runs);
	for (int i = 0; i < n->nr_vms; i++)
		vm_text(f, &n->vms[i]);
	for (int i = 0; i < h->nr_peers; i++)
		fprintf(f,
			"host: guest '%s' session %016llx: clock host - guest = %+lld ns +- %llu ns "
			"(%llu samples), records %llu, malformed %llu, filter serials ignored %llu\n",
			h->peers[i].name, (unsigned long long)h->peers[i].session,
			(long long)h->peers[i].off, (unsigned long long)h->peers[i].unc,
			(unsigned long long)h->peers[i].samples,
			(unsigned long long)h->peers[i].records,
			(unsigned long long)h->peers[i].malformed,
			(unsigned long long)h->peers[i].filter_ignored);
	fprintf(f,
		"host: link: peers refused %llu, records malformed %llu, filter serials "
		"ignored %llu\n",
		(unsigned long long)n->ls.refused, (unsigned long long)h->records_malformed,
		(unsigned long long)h->filter_ignored);
	fprintf(f, "%-16s %8s %12s %12s %12s\n", "STAGE", "COUNT", "P50", "P99", "MAX");
	for (int s = 0; s < VJ_STAGES; s++)
		fprintf(f, "%-16s %8llu %12llu %12llu %12llu\n", vj_stage_name(s),
			(unsigned long long)lhist_count(h->stage[s]),
			(unsigned long long)lhist_percentile(h->stage[s], 50),
			(unsigned long long)lhist_percentile(h->stage[s], 99),
			(unsigned long long)lhist_max(h->stage[s]));
}

void hostout_json(struct jw *w, const struct hostout *h, const struct hostout_now *n, int final)
{
	const struct vj_stats *st = n->st;

	jw_obj_begin(w, NULL);
	jw_str(w, "type", "host_summary");
	jw_bool(w, "final", final);
	jw_u64(w, "guest_requests", st->guest);
	jw_u64(w, "joined", st->joined);
	jw_u64(w, "unjoined", st->unjoined);
	jw_u64(w, "order_bad", st->order_bad);
	jw_u64(w, "host_io", h->host_io);
	jw_u64(w, "host_unjoined", st->host_unjoined);
	jw_obj_begin(w, "unjoined_by_reason");
	for (int r = 0; r < VJ_UN_MAX; r++)
		jw_u64(w, vj_unjoin_name(r), st->unjoin[r]);
	jw_obj_end(w);
	jw_obj_begin(w, "host_unjoined_by_reason");
	for (int r = 0; r < VJ_HU_MAX; r++)
		jw_u64(w, vj_hunjoin_name(r), st->host_unjoin[r]);
	jw_obj_end(w);
	jw_u64(w, "joined_split", st->split);
	jw_u64(w, "with_qemu_submit", st->with_submit);
	jw_u64(w, "with_qemu_notify", st->with_notify);
	jw_u64(w, "uprobe_aio", h->qemu_ev[IT_QEV_AIO_READ] + h->qemu_ev[IT_QEV_AIO_WRITE]);
	jw_u64(w, "uprobe_notify", h->qemu_ev[IT_QEV_NOTIFY]);
	jw_double(w, "uprobe_hits_per_qemu_io", hostout_hits(h));
	jw_double(w, "uprobe_hits_per_guest_io",
		  st->guest ? (double)(h->qemu_ev[0] + h->qemu_ev[1] + h->qemu_ev[2]) / st->guest :
			      0);
	jw_obj_begin(w, "joined_by_key");
	for (int k = VJ_KEY_UPROBE; k < VJ_KEY_MAX; k++)
		jw_u64(w, vj_key_name(k), st->by_key[k]);
	jw_obj_end(w);
	if (n->runs_known) {
		jw_u64(w, "uprobe_runs", n->uprobe_runs);
		jw_double(w, "uprobe_runs_per_guest_io",
			  st->guest ? (double)n->uprobe_runs / st->guest : 0);
		jw_u64(w, "kvm_irq_runs", n->kvm_runs);
	}
	jw_u64(w, "kvm_irq", h->qemu_ev[IT_QEV_KVM_IRQ]);
	jw_arr_begin(w, "vms");
	for (int i = 0; i < n->nr_vms; i++)
		vm_json(w, &n->vms[i]);
	jw_arr_end(w);
	jw_double(w, "daemon_cpu_pct", n->cpu_pct);
	jw_u64(w, "bpf_ns", n->bpf_ns);
	jw_u64(w, "elapsed_ns", n->elapsed_ns);
	jw_u64(w, "records_rx", n->ls.records_rx);
	jw_u64(w, "records_dup", n->ls.records_dup);
	jw_u64(w, "malformed", n->ls.malformed);
	jw_u64(w, "refused", n->ls.refused);
	jw_u64(w, "records_malformed", h->records_malformed);
	jw_u64(w, "filter_ignored", h->filter_ignored);
	jw_u64(w, "qemu_exited", h->qemu_exited);
	if (n->blame) {
		jw_obj_begin(w, "host_blame");
		jw_u64(w, "held", n->blame->held);
		jw_u64(w, "with_blame", n->blame->with_blame);
		jw_u64(w, "missing", n->blame->missing);
		jw_obj_end(w);
	}
	jw_arr_begin(w, "peers");
	for (int i = 0; i < h->nr_peers; i++) {
		jw_obj_begin(w, NULL);
		jw_str(w, "name", h->peers[i].name);
		jw_hex(w, "session", h->peers[i].session);
		jw_i64(w, "clock_offset_ns", h->peers[i].off);
		jw_u64(w, "clock_uncert_ns", h->peers[i].unc);
		jw_u64(w, "clock_samples", h->peers[i].samples);
		jw_u64(w, "records", h->peers[i].records);
		jw_u64(w, "malformed", h->peers[i].malformed);
		jw_u64(w, "filter_ignored", h->peers[i].filter_ignored);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_begin(w, "stages");
	for (int s = 0; s < VJ_STAGES; s++) {
		jw_obj_begin(w, vj_stage_name(s));
		jw_u64(w, "count", lhist_count(h->stage[s]));
		jw_u64(w, "p50_ns", lhist_percentile(h->stage[s], 50));
		jw_u64(w, "p99_ns", lhist_percentile(h->stage[s], 99));
		jw_u64(w, "max_ns", lhist_max(h->stage[s]));
		jw_obj_end(w);
	}
	jw_obj_end(w);
	jw_obj_end(w);
}

void hostout_metrics(FILE *f, uint64_t peers_up, const struct vj_stats *st)
{
	metrics_single(f, "iotracer_link_peers", "gauge",
		       "Guests connected over the link (hello exchanged).", peers_up);
	metrics_single(f, "iotracer_guest_requests_total", "counter",
		       "Guest virtio requests received from the guests.", st->guest);
	metrics_single(f, "iotracer_joined_requests_total", "counter",
		       "Guest requests joined with the host IO QEMU issued for them.", st->joined);
	metrics_family(f, "iotracer_unjoined_requests_total", "counter",
		       "Guest requests not joined to a host IO, by reason.");
	for (int r = 0; r < VJ_UN_MAX; r++) {
		struct metrics_label l = { "reason", vj_unjoin_name(r) };

		metrics_sample_u64(f, "iotracer_unjoined_requests_total", &l, 1, st->unjoin[r]);
	}
	metrics_family(
		f, "iotracer_host_unjoined_io_total", "counter",
		"Host IOs of QEMU on a traced disk never joined to a guest request, by reason.");
	for (int r = 0; r < VJ_HU_MAX; r++) {
		struct metrics_label l = { "reason", vj_hunjoin_name(r) };

		metrics_sample_u64(f, "iotracer_host_unjoined_io_total", &l, 1, st->host_unjoin[r]);
	}
}
