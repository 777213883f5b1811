// SPDX-License-Identifier: GPL-2.0
/*
 * vreq: guest block records -> struct link_vreq (vreq.h).
 */
#include <string.h>

#include "mode/vreq.h"

int vreq_layer_streamed(uint8_t drv_layer)
{
	return drv_layer == IT_L_VIRTIO || drv_layer == IT_L_SCSI || drv_layer == IT_L_NVME;
}

const char *vreq_bus_name(uint8_t drv_layer)
{
	switch (drv_layer) {
	case IT_L_VIRTIO:
		return "virtio-blk";
	case IT_L_SCSI:
		return "scsi";
	case IT_L_NVME:
		return "nvme";
	default:
		return "-";
	}
}

static int layer_slot(uint8_t drv_layer)
{
	return drv_layer == IT_L_VIRTIO ? 0 : drv_layer == IT_L_SCSI ? 1 : 2;
}

uint64_t vreq_own_kick(uint64_t kick_ns, uint64_t d_ns, uint64_t submit_ns, uint64_t done_ns)
{
	if (!kick_ns || kick_ns < d_ns || kick_ns < submit_ns || (done_ns && kick_ns > done_ns))
		return 0;
	return kick_ns;
}

static void fill_sys(struct link_vreq *v, const struct corr_req *r)
{
	v->sys = UINT32_MAX;
	if (r->kind != CORR_SYSCALL || !r->sys)
		return;
	v->flags |= LINK_VF_HAS_SYS;
	v->sys = r->sys->sys;
	v->sys_enter_ns = r->sys->enter_ns;
	v->sys_exit_ns = r->sys->exit_ns;
}

/* The kick stamp (vreq_own_kick) and what it says about the notification. */
static void fill_kick(struct link_vreq *v, const struct it_block_rec *b, int virtio,
		      struct vreq_stats *s)
{
	v->kick_ns = vreq_own_kick(b->drv_kick_ns, b->d_ns, b->drv_submit_ns, b->drv_done_ns);
	if (b->drv_kick_ns && !v->kick_ns && s)
		s->kick_stale++;
	if (!virtio || v->kick_ns)
		return;
	v->flags |= LINK_VF_NO_KICK;
	if (s)
		s->kick_suppressed++;
}

int vreq_fill(struct link_vreq *v, const struct corr_req *r, const struct it_block_rec *b,
	      const char *serial, int virtio, struct vreq_stats *s)
{
	if (!vreq_layer_streamed(b->drv_layer))
		return 0;
	memset(v, 0, sizeof(*v));
	/* all 20 bytes may be used (docs/link.md): a 20-byte serial has no NUL */
	if (serial)
		memcpy(v->serial, serial, strnlen(serial, LINK_SERIAL_LEN));
	else if (s)
		s->no_serial++;
	v->sector = b->sector;
	v->nr_sectors = b->bytes / 512;
	v->op = b->op;
	v->drv_layer = b->drv_layer;
	v->pid = b->task.pid;
	v->tid = b->task.tid;
	memcpy(v->comm, b->task.comm, sizeof(v->comm));
	v->error = b->error;
	fill_sys(v, r);
	v->q_ns = b->q_ns;
	v->d_ns = b->d_ns;
	v->c_ns = b->c_ns;
	v->submit_ns = b->drv_submit_ns;
	v->done_ns = b->drv_done_ns;
	v->gpa = it_block_gpa(b);
	fill_kick(v, b, virtio || b->drv_layer == IT_L_VIRTIO, s);
	if (s)
		s->by_layer[layer_slot(b->drv_layer)]++;
	return 1;
}
