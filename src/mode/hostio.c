// SPDX-License-Identifier: GPL-2.0
/*
 * hostio: QEMU's host IO into the join (host_int.h): the worker threads'
 * syscalls (aio=threads) and io_uring requests as the correlator finished
 * them, the iocbs of io_submit (aio=native) and their block requests
 * straight from the records, and QEMU's uprobe and KVM events. Each host IO
 * is added once per guest buffer it names (vjoin.h).
 */
#include <string.h>

#include "iotracer.h"
#include "lib/clock.h"
#include "mode/host_int.h"
#include "records/corr.h"

static int is_qemu(const struct host *h, uint32_t pid)
{
	for (int i = 0; i < h->nr_qemu; i++)
		if ((uint32_t)h->qemu[i] == pid)
			return 1;
	return 0;
}

/* The disk whose image (or one of its backing files) is (dev, ino). */
static int disk_of_file(const struct host *h, uint32_t dev, uint64_t ino)
{
	for (int i = 0; i < h->nr_disks; i++)
		if (qemu_disk_has_file(&h->disks[i].d, dev, ino))
			return i;
	return -1;
}

/* A host IO, once per buffer it names (vjoin.h: struct vj_host_io). */
static void host_add_io(struct host *h, struct vj_host_io *io, const struct it_bufs *b)
{
	uint64_t now = it_mono_ns();

	h->sum.host_io++;
	io->view = 0;
	io->buf = b->buf;
	io->offset = io->io_offset;
	io->bytes = b->buf2 ? b->len : io->io_bytes;
	vjoin_add_host(h->vj, io, now);
	if (!b->buf2 || !b->len2)
		return;
	io->view = 1;
	io->buf = b->buf2;
	io->offset = io->io_offset + b->len;
	io->bytes = b->len2;
	vjoin_add_host(h->vj, io, now);
}

/*
 * aio=native: each iocb of QEMU's io_submit on a disk's file is a host IO at
 * once. QEMU reaps the completion ring in user space (no io_getevents), so
 * the request is never "completed" by a syscall; its completion is the host
 * block request's (attached by its io_submit's (tid, seq) when it comes).
 */
static void host_aio_submit(struct host *h, const struct it_aio_rec *a)
{
	if (a->sys != IT_SYS_IO_SUBMIT || !is_qemu(h, a->task.pid))
		return;
	for (uint32_t i = 0; i < a->nr && i < IT_AIO_BATCH; i++) {
		const struct it_aio_iocb *c = &a->iocbs[i];
		struct vj_host_io io = { .kind = VJ_K_AIO,
					 .pid = a->task.pid,
					 .tid = a->task.tid,
					 .io_offset = c->offset,
					 .io_bytes = c->nbytes,
					 .seq = a->seq,
					 .ino = c->ino,
					 .enter_ns = a->enter_ns };

		/* a guest read or write (QEMU's fsyncs are not a guest request's IO) */
		io.op = it_aio_op(c->opcode);
		io.disk = disk_of_file(h, c->dev, c->ino);
		if ((io.op != IT_OP_READ && io.op != IT_OP_WRITE) || io.disk < 0)
			continue;
		host_add_io(h, &io, &c->bufs);
	}
}

/* A block request of a QEMU thread's syscall: maybe an aio=native IO's. */
static void host_block(struct host *h, const struct it_block_rec *b)
{
	if (b->origin == IT_ORIG_SYSCALL && is_qemu(h, b->task.pid))
		vjoin_host_block(h->vj, b->task.tid, b->seq, b->sector, b->q_ns, b->d_ns, b->c_ns,
				 b->dev);
}

int hostio_record(struct host *h, const void *data, size_t size)
{
	const struct it_qemu_rec *q = data;
	struct vj_qemu_ev ev;

	if (size < sizeof(q->hdr) || !it_rec_size(q->hdr.type) || size < it_rec_size(q->hdr.type))
		return 0;
	if (q->hdr.type == IT_REC_AIO && size >= IT_AIO_SIZE(((const struct it_aio_rec *)data)->nr))
		host_aio_submit(h, data);
	if (q->hdr.type == IT_REC_BLOCK)
		host_block(h, data);
	if (q->hdr.type != IT_REC_QEMU)
		return 0;
	if (q->ev < IT_QEV_MAX)
		h->sum.qemu_ev[q->ev]++;
	ev = (struct vj_qemu_ev){ .ev = q->ev,
				  .pid = q->pid,
				  .ts_ns = q->ts_ns,
				  .offset = q->offset,
				  .hva = q->hva,
				  .bytes = q->bytes,
				  .niov = q->niov };
	vjoin_add_qemu(h->vj, &ev);
	return 1;
}

static void blocks_of(struct vj_host_io *io, const struct corr_req *r)
{
	if (!r->nr_blocks)
		return;
	io->blk_q_ns = r->blocks[0]->q_ns;
	io->blk_d_ns = r->blocks[0]->d_ns;
	io->blk_c_ns = r->blocks[0]->c_ns;
	io->blk_dev = r->blocks[0]->dev;
	for (int i = 1; i < r->nr_blocks; i++)
		if (r->blocks[i]->c_ns > io->blk_c_ns)
			io->blk_c_ns = r->blocks[i]->c_ns;
}

/* aio=threads: a worker's syscall; aio=io_uring: an SQE and its CQE. */
static int host_io_of(const struct host *h, const struct corr_req *r, struct vj_host_io *io,
		      const struct it_bufs **b)
{
	const struct it_syscall_rec *s = r->sys;
	const struct it_uring_rec *u = r->uring;

	memset(io, 0, sizeof(*io));
	if (r->kind == CORR_SYSCALL && s && is_qemu(h, s->task.pid) && s->ret >= 0) {
		*io = (struct vj_host_io){ .kind = VJ_K_SYSCALL,
					   .op = s->op,
					   .pid = s->task.pid,
					   .tid = s->task.tid,
					   .io_offset = s->offset,
					   .io_bytes = s->bytes,
					   .ino = s->ino,
					   .enter_ns = s->enter_ns,
					   .exit_ns = s->exit_ns,
					   .ret = s->ret };
		io->disk = disk_of_file(h, s->dev, s->ino);
		io->req = r->id;
		*b = &s->bufs;
	} else if (r->kind == CORR_URING && u && is_qemu(h, u->task.pid) && u->res >= 0) {
		*io = (struct vj_host_io){ .kind = VJ_K_URING,
					   .op = u->op,
					   .pid = u->task.pid,
					   .tid = u->task.tid,
					   .io_offset = u->offset,
					   .io_bytes = u->bytes,
					   .ino = u->ino,
					   .enter_ns = u->submit_ns,
					   .exit_ns = u->complete_ns,
					   .ret = u->res };
		io->disk = disk_of_file(h, u->dev, u->ino);
		io->req = r->id;
		*b = &u->bufs;
	} else {
		return 0;
	}
	return io->disk >= 0 && (io->op == IT_OP_READ || io->op == IT_OP_WRITE);
}

void hostio_request(struct host *h, const struct corr_req *r)
{
	const struct it_bufs *b = NULL;
	struct vj_host_io io;

	if (!host_io_of(h, r, &io, &b))
		return;
	blocks_of(&io, r);
	host_add_io(h, &io, b);
}
