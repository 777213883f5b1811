// SPDX-License-Identifier: GPL-2.0
/*
 * sink: the daemon's side of --sink (see sink.h): rows into batches, batches
 * to the sender's queue, the spill directory when the queue is full, the
 * replay when it has room again, and what is left at exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "records/reader.h"
#include "records/record.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/procfs.h"
#include "sink/curldl.h"
#include "sink/sink_int.h"

#define SK_EXIT_WAIT_NS (5ull * 1000 * 1000 * 1000) /* at exit, for the server to take the rest */

struct sink {
	struct sink_opts o;
	char who[128];
	char password[256];
	struct sk_ident id; /* this run's */
	struct sk_rows live, replay;
	uint64_t live_since; /* the oldest row of the live batch (CLOCK_MONOTONIC) */
	struct sk_sender q;
	struct sk_spill sp;
	int spilling;
	uint64_t ctr[SK_C_NR];
	uint64_t now_ns;
	int finished;
};

static const char *const drop_names[SK_DROP_NR] = {
	[SK_DROP_QUEUE_FULL] = "queue_full",
	[SK_DROP_SPILL_FULL] = "spill_full",
	[SK_DROP_SPILL_ERROR] = "spill_error",
	[SK_DROP_ENCODE] = "encode",
};

const char *sink_drop_name(int reason)
{
	return reason >= 0 && reason < SK_DROP_NR ? drop_names[reason] : "?";
}

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* This run's host, boot id and run (its rows' key with their ids). */
static void own_ident(struct sink *s)
{
	size_t n = 0;
	char *boot = procfs_read_file("/proc/sys/kernel/random/boot_id", &n);

	if (s->o.host)
		snprintf(s->id.host, sizeof(s->id.host), "%s", s->o.host);
	else if (gethostname(s->id.host, sizeof(s->id.host)))
		s->id.host[0] = '\0';
	s->id.host[sizeof(s->id.host) - 1] = '\0';
	snprintf(s->id.boot, sizeof(s->id.boot), "%s", boot ? boot : "");
	s->id.boot[strcspn(s->id.boot, "\n")] = '\0';
	free(boot);
	s->id.run = s->o.start_ns;
	s->id.clock_off = (int64_t)(real_ns() - it_mono_ns());
}

static void drop(struct sink *s, int reason, uint64_t n)
{
	sk_add(&s->ctr[SK_C_DROP + reason], n);
}

/* The rows of w's table t as a batch on the queue (none: nothing). */
static void push(struct sink *s, struct sk_rows *w, int t, struct sk_seg *seg)
{
	struct nat_block *blk = t == SK_T_REQ ? &w->req : &w->blame;
	struct sk_batch *b;

	if (!blk->rows)
		return;
	b = calloc(1, sizeof(*b));
	if (b)
		sk_sender_spare(&s->q, &b->data);
	if (!b || blk->oom || nat_block_write(blk, &b->data, &b->plain_at)) {
		drop(s, SK_DROP_ENCODE, blk->rows);
		sk_batch_free(b);
		nat_block_reset(blk);
		return;
	}
	b->table = t;
	b->rows = blk->rows;
	b->seg = seg;
	if (seg)
		__atomic_fetch_add(&seg->refs, 1, __ATOMIC_RELAXED);
	nat_block_reset(blk);
	sk_rows_forget(w);
	sk_sender_push(&s->q, b);
}

static void push_live(struct sink *s)
{
	push(s, &s->live, SK_T_REQ, NULL);
	push(s, &s->live, SK_T_BLAME, NULL);
	s->live_since = 0;
}

/*
 * The queue is full: from now on requests go to the spill directory (if any).
 * Asked every SK_FULL_EVERY rows (a lock and a sum over the columns): the
 * bound is passed by that many rows at most.
 */
#define SK_FULL_EVERY 64
static int queue_full(struct sink *s)
{
	if (s->live.req.rows % SK_FULL_EVERY)
		return 0;
	return sk_sender_bytes(&s->q) + nat_block_bytes(&s->live.req) >= s->o.queue_max;
}

void sink_request(struct sink *s, const struct corr_req *r)
{
	int err;

	if (r->kind == CORR_BLOCK && !r->nr_blocks)
		return; /* no line for it either */
	sk_add(&s->ctr[SK_C_ROWS], 1);
	if (!s->spilling && queue_full(s)) {
		push_live(s);
		s->spilling = 1;
	}
	if (s->spilling) {
		err = s->o.spill_dir ? sk_spill_request(&s->sp, r, s->now_ns) : SK_DROP_QUEUE_FULL;
		if (err)
			drop(s, err, 1);
		else
			sk_add(&s->ctr[SK_C_SPILLED], 1);
		return;
	}
	if (!s->live_since)
		s->live_since = s->now_ns ? s->now_ns : it_mono_ns();
	sk_rows_put(&s->live, &s->id, r);
	if (s->live.req.rows >= SK_BATCH_ROWS)
		push_live(s);
}

void sink_blame(struct sink *s, const struct blame_line *l)
{
	int err;

	sk_add(&s->ctr[SK_C_BLAME_ROWS], 1);
	if (s->spilling) {
		err = s->o.spill_dir ? sk_spill_blame(&s->sp, l, s->now_ns) : SK_DROP_QUEUE_FULL;
		if (err)
			drop(s, err, 1);
		return;
	}
	if (!s->live_since)
		s->live_since = s->now_ns ? s->now_ns : it_mono_ns();
	sk_rows_blame(&s->live, &s->id, l, real_ns());
}

/* ---- replay ---- */

struct replay_ctx {
	struct sink *s;
	struct sk_ident id;
	struct sk_seg *seg;
	struct rr_reader *rr;
	uint64_t rows;
};

static const char *rp_dev_name(void *ctx, uint32_t dev)
{
	return rr_dev_name(((struct replay_ctx *)ctx)->rr, dev);
}

static const char *rp_dev_serial(void *ctx, uint32_t dev)
{
	return rr_dev_serial(((struct replay_ctx *)ctx)->rr, dev);
}

static const char *rp_cgroup(void *ctx, uint64_t id)
{
	return rr_cgroup_path(((struct replay_ctx *)ctx)->rr, id);
}

static const struct fn_entry *rp_fname(void *ctx, const struct fn_key *k)
{
	const struct rr_reader *rr = ((struct replay_ctx *)ctx)->rr;

	return rr->fnames ? fn_peek(rr->fnames, k) : NULL;
}

/* The segment's run: its own boot, run and clock, this host's name. */
static void seg_ident(struct replay_ctx *c, const struct rr_reader *rr)
{
	snprintf(c->id.host, sizeof(c->id.host), "%s", c->s->id.host);
	snprintf(c->id.boot, sizeof(c->id.boot), "%s", rr->seg.boot_id);
	c->id.run = rr->seg.run_mono_ns;
	c->id.clock_off = (int64_t)(rr->seg.real_ns - rr->seg.mono_ns);
}

static void replay_req(void *ctx, const struct rr_reader *rr, const struct rf_req *q)
{
	struct replay_ctx *c = ctx;
	struct corr_req r;

	seg_ident(c, rr);
	rf_req_view(q, &r);
	sk_rows_put(&c->s->replay, &c->id, &r);
	c->rows++;
	if (c->s->replay.req.rows >= SK_BATCH_ROWS)
		push(c->s, &c->s->replay, SK_T_REQ, c->seg);
}

static void replay_blame(void *ctx, const struct rr_reader *rr, const struct blame_line *l)
{
	struct replay_ctx *c = ctx;

	seg_ident(c, rr);
	sk_rows_blame(&c->s->replay, &c->id, l, real_ns());
	if (c->s->replay.blame.rows >= SK_BATCH_ROWS)
		push(c->s, &c->s->replay, SK_T_BLAME, c->seg);
}

/* One closed spill segment into batches (all of its requests at once). */
static void replay_one(struct sink *s, struct sk_seg *seg)
{
	struct replay_ctx c = { .s = s, .seg = seg };
	struct rr_reader rr;
	int fd = open(seg->path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *m = MAP_FAILED;

	rr_init(&rr, replay_req, &c);
	rr.blame_fn = replay_blame;
	c.rr = &rr;
	s->replay.lk = (struct sk_lookup){ .dev_name = rp_dev_name,
					   .dev_serial = rp_dev_serial,
					   .cgroup = rp_cgroup,
					   .fname = rp_fname,
					   .ctx = &c,
					   .names = s->live.lk.names };
	if (fd >= 0 && !fstat(fd, &st) && st.st_size)
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m != MAP_FAILED) {
		rr_segment(&rr, m, (size_t)st.st_size);
		munmap(m, (size_t)st.st_size);
	}
	if (fd >= 0)
		close(fd);
	push(s, &s->replay, SK_T_REQ, seg);
	push(s, &s->replay, SK_T_BLAME, seg);
	rr_free(&rr);
	seg->read = 1; /* deleted once its batches were sent (a bad segment: at once) */
}

/* Requests and blame lines a spill write lost: dropped, no longer spilled. */
static void spill_lost(struct sink *s, uint64_t reqs, uint64_t blame)
{
	if (reqs + blame)
		drop(s, SK_DROP_SPILL_ERROR, reqs + blame);
	__atomic_fetch_sub(&s->ctr[SK_C_SPILLED], reqs, __ATOMIC_RELAXED);
}

void sink_tick(struct sink *s, uint64_t now_ns)
{
	uint64_t lost, blame;

	s->now_ns = now_ns;
	if (s->live_since && now_ns - s->live_since >= SK_BATCH_AGE_NS)
		push_live(s);
	if (!s->o.spill_dir) {
		if (s->spilling && sk_sender_bytes(&s->q) < s->o.queue_max / 2)
			s->spilling = 0;
		return;
	}
	if (s->sp.rc)
		rec_tick(s->sp.rc, now_ns);
	lost = sk_spill_lost(&s->sp, &blame);
	spill_lost(s, lost, blame);
	if (s->spilling && sk_sender_bytes(&s->q) < s->o.queue_max / 2) {
		lost = sk_spill_close(&s->sp, &blame);
		spill_lost(s, lost, blame);
		s->spilling = 0;
	}
	sk_spill_reap(&s->sp);
	if (!s->spilling && sk_sender_bytes(&s->q) < s->o.queue_max / 2) {
		struct sk_seg *seg = sk_spill_next(&s->sp);

		if (seg)
			replay_one(s, seg);
	}
}

/* ---- open ---- */

static int sink_auth(struct sink *s, struct sk_http_cfg *cfg)
{
	char why[256];

	if (!s->o.auth)
		return 0;
	if (sk_password_load(s->o.auth, s->password, sizeof(s->password), why, sizeof(why))) {
		it_err("%s: password file '%s': %s", s->who, s->o.auth, why);
		return -EINVAL;
	}
	cfg->password = s->password;
	return 0;
}

/* --sink-compress KIND's enum sk_enc. */
static int enc_of(const char *kind)
{
	if (kind && !strcmp(kind, "gzip"))
		return SK_ENC_GZIP;
	return kind && !strcmp(kind, "zstd") ? SK_ENC_ZSTD : SK_ENC_FAST;
}

struct sink *sink_open(const struct sink_opts *o, struct cg_cache *cg, struct ct_names *names)
{
	struct sink *s = calloc(1, sizeof(*s));
	struct sk_lookup lk = { .sysfs_root = o->sysfs_root, .cg = cg, .names = names };
	struct sk_http_cfg cfg = { .ca_file = o->ca_file,
				   .timeout_ms = o->timeout_ms ? o->timeout_ms :
								 SK_DEF_TIMEOUT_MS };
	char why[256];
	int err;

	if (!s)
		return NULL;
	s->o = *o;
	snprintf(s->who, sizeof(s->who), "%s", o->who ? o->who : "--sink");
	s->o.who = s->who;
	if (sk_url_parse(o->url, &cfg.url, why, sizeof(why))) {
		it_err("%s: %s", s->who, why);
		goto fail;
	}
	if (sink_auth(s, &cfg) || sk_rows_init(&s->live, &lk) || sk_rows_init(&s->replay, &lk))
		goto fail;
	own_ident(s);
	if (o->spill_dir && sk_spill_init(&s->sp, o->spill_dir, o->spill_max, o->start_ns,
					  o->sysfs_root, cg, s->who))
		goto fail;
	if (sink_curl_load(why, sizeof(why))) {
		it_err("%s: %s", s->who, why);
		goto fail;
	}
	err = sk_sender_start(&s->q, &cfg, enc_of(o->compress), s->ctr, s->who, o->retry_max_ns);
	if (err) {
		it_err("%s: %s", s->who, strerror(-err));
		goto fail;
	}
	memset(s->password, 0, sizeof(s->password)); /* the sender has its copy */
	return s;
fail:
	sk_rows_free(&s->live);
	sk_rows_free(&s->replay);
	sk_spill_free(&s->sp);
	memset(s->password, 0, sizeof(s->password));
	free(s);
	return NULL;
}

/* ---- stats and close ---- */

void sink_set_fnames(struct sink *s, struct fn_cache *fn)
{
	s->live.lk.fn = fn;
	s->sp.fn = fn;
	if (s->sp.rc)
		rec_set_fnames(s->sp.rc, fn);
}

void sink_stats(struct sink *s, struct sink_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->rows = sk_get(&s->ctr[SK_C_ROWS]);
	st->blame_rows = sk_get(&s->ctr[SK_C_BLAME_ROWS]);
	st->sent = sk_get(&s->ctr[SK_C_SENT]);
	st->blame_sent = sk_get(&s->ctr[SK_C_BLAME_SENT]);
	st->batches = sk_get(&s->ctr[SK_C_BATCHES]);
	st->bytes = sk_get(&s->ctr[SK_C_BYTES]);
	st->spilled = sk_get(&s->ctr[SK_C_SPILLED]);
	st->replayed = sk_get(&s->ctr[SK_C_REPLAYED]);
	for (int i = 0; i < SK_DROP_NR; i++)
		st->dropped[i] = sk_get(&s->ctr[SK_C_DROP + i]);
	for (int i = 0; i < SK_RETRY_NR; i++)
		st->retries[i] = sk_get(&s->ctr[SK_C_RETRY + i]);
	if (s->q.started) {
		pthread_mutex_lock(&s->q.lock);
		st->queue_rows = s->q.q_rows;
		st->queue_bytes = s->q.q_bytes;
		pthread_mutex_unlock(&s->q.lock);
	}
	st->up = __atomic_load_n(&s->q.up, __ATOMIC_RELAXED);
	st->scheme = __atomic_load_n(&s->q.scheme, __ATOMIC_RELAXED);
	st->spill_bytes = s->o.spill_dir ? sk_spill_used(&s->sp, s->now_ns) : 0;
}

void sink_summary(struct sink *s, FILE *f)
{
	struct sink_stats st;
	uint64_t dropped = 0, retries = 0;

	sink_stats(s, &st);
	for (int i = 0; i < SK_DROP_NR; i++)
		dropped += st.dropped[i];
	for (int i = 0; i < SK_RETRY_NR; i++)
		retries += st.retries[i];
	fprintf(f,
		"sink: %llu requests, %llu sent, %llu queued, %llu spilled, %llu replayed, "
		"%llu dropped; %llu blame lines, %llu sent; %llu retries",
		(unsigned long long)st.rows, (unsigned long long)st.sent,
		(unsigned long long)st.queue_rows, (unsigned long long)st.spilled,
		(unsigned long long)st.replayed, (unsigned long long)dropped,
		(unsigned long long)st.blame_rows, (unsigned long long)st.blame_sent,
		(unsigned long long)retries);
	if (st.scheme && st.scheme[0])
		fprintf(f, " (%s)", st.scheme);
	for (int i = 0; i < SK_DROP_NR; i++)
		if (st.dropped[i])
			fprintf(f, "; dropped %s %llu", drop_names[i],
				(unsigned long long)st.dropped[i]);
	for (int i = 0; i < SK_RETRY_NR; i++)
		if (st.retries[i])
			fprintf(f, "; retries %s %llu", sink_retry_name(i),
				(unsigned long long)st.retries[i]);
	fputc('\n', f);
}

/* The rows of a block the server never took into the spill directory; the rows kept. */
static uint64_t spill_rows(struct sink *s, int table, const struct nat_rblock *rb)
{
	struct sk_rview v;
	struct rf_req q;
	struct corr_req r;
	struct blame_line l;
	uint64_t kept = 0;
	int err;

	sk_rview_init(&v, rb);
	for (uint64_t i = 0; i < rb->rows; i++) {
		if (table == SK_T_REQ && !sk_rows_get(&v, i, &q, NULL, NULL)) {
			rf_req_view(&q, &r);
			err = sk_spill_request(&s->sp, &r, s->now_ns);
		} else if (table == SK_T_BLAME && !sk_rows_get_blame(rb, i, &l, NULL)) {
			err = sk_spill_blame(&s->sp, &l, s->now_ns);
		} else {
			continue;
		}
		if (err) {
			drop(s, err, 1);
			continue;
		}
		kept++;
		if (table == SK_T_REQ)
			sk_add(&s->ctr[SK_C_SPILLED], 1);
	}
	return kept;
}

/* A batch the server never took, back into requests in the spill directory. */
static void spill_batch(struct sink *s, struct sk_batch *b)
{
	struct nat_buf raw = { 0 };
	const struct nat_buf *data = &b->data;
	struct nat_rblock rb;
	size_t pos = 0;
	uint64_t kept = 0;

	if (b->enc != SK_ENC_NONE)
		data = sk_decompress(b->enc, b->data.p, b->data.len, &raw) ? NULL : &raw;
	while (data && pos < data->len && !nat_read_block(data->p, data->len, &pos, &rb)) {
		kept += spill_rows(s, b->table, &rb);
		nat_rblock_free(&rb);
	}
	if (!data)
		drop(s, SK_DROP_SPILL_ERROR, b->rows); /* not ours to read back: not expected */
	nat_buf_free(&raw);
}

uint64_t sink_finish(struct sink *s)
{
	struct sk_batch *left;
	uint64_t lost = 0, n, blame;

	if (!s || s->finished)
		return 0;
	s->finished = 1;
	push_live(s);
	sk_sender_drain(&s->q, it_mono_ns() + SK_EXIT_WAIT_NS);
	left = sk_sender_stop(&s->q);
	s->now_ns = it_mono_ns();
	while (left) {
		struct sk_batch *b = left;

		left = b->next;
		/* a replayed segment's batch: the segment is still there for the next run */
		if (!b->seg && s->o.spill_dir)
			spill_batch(s, b);
		else if (!b->seg)
			drop(s, SK_DROP_QUEUE_FULL, b->rows);
		sk_batch_free(b);
	}
	if (s->o.spill_dir) {
		n = sk_spill_close(&s->sp, &blame);
		spill_lost(s, n, blame);
	}
	for (int i = 0; i < SK_DROP_NR; i++)
		lost += sk_get(&s->ctr[SK_C_DROP + i]);
	return lost;
}

void sink_free(struct sink *s)
{
	if (!s)
		return;
	sink_finish(s);
	sk_rows_free(&s->live);
	sk_rows_free(&s->replay);
	sk_spill_free(&s->sp);
	free(s);
}
