// SPDX-License-Identifier: GPL-2.0
/*
 * sender: the sink's thread (see sink.h). It takes the oldest batch of the
 * queue, compresses it (every waiting batch is, as soon as the thread is
 * free: the queue's memory is mostly compressed), checks its table's columns
 * once, POSTs it, and drops it from the queue only on a 200. Any failure
 * is counted by reason and retried after a backoff (100 ms doubling to 2 s);
 * the first failure of each reason is said once, and so is the recovery.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "sink/sink_int.h"

#define SK_RETRY_MIN_NS (100ull * 1000 * 1000)
#define SK_RETRY_MAX_NS (2ull * 1000 * 1000 * 1000)
#define SK_POST_ROWS (1u << 20) /* rows one POST takes, at most */
#define SK_POST_BYTES (32u << 20) /* and bytes (compressed) */
#define SK_POST_EVERY_NS (1000ull * 1000 * 1000) /* a POST a second, at most (pace()) */

/* The retry reasons' names (sink.h): the thread counts them, sink.c and /metrics say them. */
static const char *const retry_names[SK_RETRY_NR] = {
	[SK_RETRY_CONNECT] = "connect",	  [SK_RETRY_TIMEOUT] = "timeout",
	[SK_RETRY_TLS] = "tls",		  [SK_RETRY_IO] = "io",
	[SK_RETRY_AUTH] = "auth",	  [SK_RETRY_TABLE] = "table",
	[SK_RETRY_HTTP_4XX] = "http_4xx", [SK_RETRY_HTTP_5XX] = "http_5xx",
};

const char *sink_retry_name(int reason)
{
	return reason >= 0 && reason < SK_RETRY_NR ? retry_names[reason] : "?";
}

void sk_batch_free(struct sk_batch *b)
{
	if (!b)
		return;
	nat_buf_free(&b->data);
	free(b);
}

/* The condition variable's deadline in ns from now (its clock: CLOCK_MONOTONIC). */
static void wait_ns(struct sk_sender *q, uint64_t ns)
{
	struct timespec ts;
	uint64_t t;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + ns;
	ts.tv_sec = (time_t)(t / 1000000000ull);
	ts.tv_nsec = (long)(t % 1000000000ull);
	pthread_cond_timedwait(&q->cond, &q->lock, &ts);
}

/* A batch's bytes in the queue: compressed, else its Native block. */
static size_t batch_bytes(const struct sk_batch *b)
{
	return b->enc == SK_ENC_NONE ? b->data.len : b->zlen;
}

/*
 * Compress every batch not compressed yet (the queue's memory shrinks 3-15x),
 * in the queue's order, onto the end of q->zq: a POST's body is then a run of
 * it, sent as it is. Under no lock.
 */
static void compress_waiting(struct sk_sender *q)
{
	for (;;) {
		struct sk_batch *b;
		size_t at = q->zq.len;

		pthread_mutex_lock(&q->lock);
		for (b = q->head; b && b->enc != SK_ENC_NONE; b = b->next)
			;
		pthread_mutex_unlock(&q->lock);
		/* only this thread removes batches or compresses them: b stays ours */
		if (!b || q->stop || q->enc == SK_ENC_NONE)
			return;
		if (sk_compress(q->enc, &q->zctx, b->data.p, b->data.len, b->plain_at, &q->zq)) {
			q->zq.len = at;
			return; /* sent as it is, later */
		}
		pthread_mutex_lock(&q->lock);
		b->zoff = at;
		b->zlen = q->zq.len - at;
		q->q_bytes = q->q_bytes - b->data.len + b->zlen;
		b->enc = q->enc;
		if (q->nr_spare < SK_SPARES) { /* the next batch's buffer: no page faults */
			q->spare[q->nr_spare++] = b->data;
			b->data = (struct nat_buf){ 0 };
		}
		pthread_mutex_unlock(&q->lock);
		nat_buf_free(&b->data);
	}
}

/* What a failed request counts as. */
static int retry_reason(const struct sk_http_res *res)
{
	switch (res->err) {
	case SK_HE_CONNECT:
		return SK_RETRY_CONNECT;
	case SK_HE_TIMEOUT:
		return SK_RETRY_TIMEOUT;
	case SK_HE_TLS:
		return SK_RETRY_TLS;
	case SK_HE_NONE:
		break;
	default:
		return SK_RETRY_IO;
	}
	/* the server's codes: 192 unknown user, 193 wrong password, 194 password required,
	 * 516 authentication failed; 60 unknown table, 81 unknown database, 16 no such column */
	if (res->status == 401 || res->status == 403 || res->code == 192 || res->code == 193 ||
	    res->code == 194 || res->code == 516)
		return SK_RETRY_AUTH;
	if (res->status == 404 || res->code == 60 || res->code == 81 || res->code == 16)
		return SK_RETRY_TABLE;
	return res->status >= 500 ? SK_RETRY_HTTP_5XX : SK_RETRY_HTTP_4XX;
}

static void failed(struct sk_sender *q, int reason, const char *what, const char *msg)
{
	sk_add(&q->ctr[SK_C_RETRY + reason], 1);
	__atomic_store_n(&q->up, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&q->failed, 1, __ATOMIC_RELAXED);
	if (q->said & (1 << reason))
		return;
	q->said |= 1 << reason;
	it_warn("%s: %s:%u: %s: %s; retrying (counted: iotracer_sink_retries_total{reason=\"%s\"})",
		q->who, q->cfg.url.host, q->cfg.url.port, what, msg, sink_retry_name(reason));
}

/* Is table t there with our columns? 0, or the reason it cannot take rows. */
static int check_table(struct sk_sender *q, int t)
{
	const struct nat_colspec *spec = t == SK_T_REQ ? sk_req_spec : sk_blame_spec;
	int n = t == SK_T_REQ ? SK_R_NR : SK_B_NR, reason = -1;
	struct nat_buf resp = { 0 };
	struct sk_http_res res;
	char sql[200], why[200];

	snprintf(sql, sizeof(sql), "DESCRIBE TABLE %s", q->table[t]);
	if (sk_http_query(q->http, sql, NULL, 0, 0, &resp, &res)) {
		reason = retry_reason(&res);
		if (res.err != SK_HE_STOPPED)
			failed(q, reason, q->table[t], res.msg);
	} else if (sk_schema_check(spec, n, (const char *)resp.p, resp.len, why, sizeof(why))) {
		reason = SK_RETRY_TABLE;
		failed(q, reason, q->table[t], why);
	} else {
		q->checked[t] = 1;
	}
	nat_buf_free(&resp);
	return reason < 0 ? 0 : -1;
}

/*
 * The batches one POST takes: from the head, those of its table and encoding
 * (a body of several compressed Native blocks: the server inserts them as one,
 * squashed into one part), SK_POST_ROWS and SK_POST_BYTES at most; a batch
 * not compressed goes alone. Their body (a run of q->zq, or the batch's own)
 * in *body and *len; the number taken.
 */
static int gather(struct sk_sender *q, struct sk_batch *head, const void **body, size_t *len)
{
	uint64_t rows = 0;
	int n = 0;

	pthread_mutex_lock(&q->lock);
	if (head->enc == SK_ENC_NONE) {
		*body = head->data.p;
		*len = head->data.len;
		pthread_mutex_unlock(&q->lock);
		return 1;
	}
	*body = q->zq.p + head->zoff;
	*len = 0;
	for (struct sk_batch *b = head; b && b->table == head->table && b->enc == head->enc;
	     b = b->next) {
		if (n && (rows + b->rows > SK_POST_ROWS || *len + b->zlen > SK_POST_BYTES))
			break;
		*len += b->zlen; /* contiguous: compressed one after the other */
		rows += b->rows;
		n++;
	}
	pthread_mutex_unlock(&q->lock);
	return n;
}

/* POST the batches from the head, their body: 0 when the server took them. */
static int send_batches(struct sk_sender *q, struct sk_batch *b, const void *body, size_t len)
{
	struct nat_buf resp = { 0 };
	struct sk_http_res res;
	int err;

	if (!q->checked[b->table] && check_table(q, b->table))
		return -1;
	err = sk_http_query(q->http, q->sql[b->table], body, len, b->enc, &resp, &res);
	nat_buf_free(&resp);
	if (!err)
		return 0;
	if (res.err == SK_HE_STOPPED)
		return -1;
	if (retry_reason(&res) == SK_RETRY_TABLE)
		q->checked[b->table] = 0; /* dropped or altered since: look again */
	failed(q, retry_reason(&res), q->table[b->table], res.msg);
	return -1;
}

/* The compressed bytes of the batches sent, to used, off the front of q->zq. Under lock. */
static void zq_consume(struct sk_sender *q, size_t used)
{
	if (!used)
		return;
	memmove(q->zq.p, q->zq.p + used, q->zq.len - used);
	q->zq.len -= used;
	for (struct sk_batch *b = q->head; b && b->enc != SK_ENC_NONE; b = b->next)
		b->zoff -= used;
	if (!q->zq.len && q->zq.cap > SK_ZQ_KEEP)
		nat_buf_free(&q->zq); /* after an outage: memory back */
}

/* The n head batches were sent: off the queue, counted. */
static void sent(struct sk_sender *q, int n)
{
	size_t used = 0;

	for (int i = 0; i < n; i++) {
		struct sk_batch *b;

		pthread_mutex_lock(&q->lock);
		b = q->head;
		q->head = b->next;
		if (!q->head)
			q->tail = NULL;
		q->q_rows -= b->rows;
		q->q_bytes -= batch_bytes(b);
		if (b->enc != SK_ENC_NONE)
			used = b->zoff + b->zlen;
		if (i == n - 1)
			zq_consume(q, used);
		pthread_cond_broadcast(&q->cond);
		pthread_mutex_unlock(&q->lock);
		sk_add(&q->ctr[b->table == SK_T_REQ ? SK_C_SENT : SK_C_BLAME_SENT], b->rows);
		if (b->seg && b->table == SK_T_REQ)
			sk_add(&q->ctr[SK_C_REPLAYED], b->rows);
		sk_add(&q->ctr[SK_C_BYTES], batch_bytes(b));
		if (b->seg)
			__atomic_fetch_sub(&b->seg->refs, 1, __ATOMIC_RELEASE);
		sk_batch_free(b);
	}
	sk_add(&q->ctr[SK_C_BATCHES], 1);
	if (q->said && !__atomic_load_n(&q->up, __ATOMIC_RELAXED))
		it_note_always("%s: %s:%u: sending again (%s)", q->who, q->cfg.url.host,
			       q->cfg.url.port, sk_http_scheme(q->http));
	q->said = 0;
	__atomic_store_n(&q->scheme, sk_http_scheme(q->http), __ATOMIC_RELAXED);
	__atomic_store_n(&q->up, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&q->failed, 0, __ATOMIC_RELAXED);
}

/*
 * A POST a second at most while the server takes them (one INSERT, one part a
 * second: what ClickHouse wants of each writer), sooner when half a POST's rows
 * or bytes wait or the daemon is closing. Compressing what waits meanwhile.
 * Under lock.
 */
static void pace(struct sk_sender *q, uint64_t last_ns)
{
	uint64_t now;

	while (!q->stop && !q->draining && q->q_rows < SK_POST_ROWS / 2 &&
	       q->q_bytes < SK_POST_BYTES / 2 &&
	       (now = it_mono_ns()) - last_ns < SK_POST_EVERY_NS) {
		pthread_mutex_unlock(&q->lock);
		compress_waiting(q);
		pthread_mutex_lock(&q->lock);
		wait_ns(q, SK_POST_EVERY_NS - (now - last_ns));
	}
}

static void *sender_main(void *arg)
{
	struct sk_sender *q = arg;
	uint64_t backoff = 0, last_ns = 0;

	for (;;) {
		struct sk_batch *b;
		const void *body;
		size_t len;
		int n;

		pthread_mutex_lock(&q->lock);
		while (!q->head && !q->stop)
			pthread_cond_wait(&q->cond, &q->lock);
		pace(q, last_ns);
		b = q->head;
		pthread_mutex_unlock(&q->lock);
		if (q->stop)
			break;
		compress_waiting(q);
		n = gather(q, b, &body, &len);
		last_ns = it_mono_ns();
		if (n && !send_batches(q, b, body, len)) {
			sent(q, n);
			backoff = 0;
			continue;
		}
		backoff = backoff ? backoff * 2 : SK_RETRY_MIN_NS;
		if (backoff > q->retry_max_ns)
			backoff = q->retry_max_ns;
		pthread_mutex_lock(&q->lock);
		pthread_cond_broadcast(&q->cond); /* a drain waiting: the server failed */
		if (!q->stop)
			wait_ns(q, backoff);
		pthread_mutex_unlock(&q->lock);
	}
	return NULL;
}

int sk_sender_start(struct sk_sender *q, const struct sk_http_cfg *cfg, int enc, uint64_t *ctr,
		    const char *who, uint64_t retry_max_ns)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	memset(q, 0, sizeof(*q));
	q->scheme = "";
	q->enc = enc;
	q->ctr = ctr;
	q->who = who;
	q->retry_max_ns = retry_max_ns ? retry_max_ns : SK_RETRY_MAX_NS;
	for (int t = 0; t < SK_T_NR; t++) {
		char name[sizeof(q->table[t])];

		snprintf(name, sizeof(name), "%s.%s%s", cfg->url.db, cfg->url.table,
			 t == SK_T_BLAME ? SK_BLAME_SUFFIX : "");
		memcpy(q->table[t], name, sizeof(name));
		snprintf(q->sql[t], sizeof(q->sql[t]), "INSERT INTO %s FORMAT Native", name);
	}
	q->cfg = *cfg;
	q->cfg.stop = &q->stop;
	q->http = sk_http_new(&q->cfg);
	if (!q->http)
		return -errno;
	pthread_mutex_init(&q->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* no signal for this thread (nor curl's resolver threads): the daemon's signalfd takes them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&q->thread, NULL, sender_main, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		sk_http_free(q->http);
		q->http = NULL;
		return -err;
	}
	q->started = 1;
	return 0;
}

void sk_sender_spare(struct sk_sender *q, struct nat_buf *out)
{
	*out = (struct nat_buf){ 0 };
	if (!q->started)
		return;
	pthread_mutex_lock(&q->lock);
	if (q->nr_spare)
		*out = q->spare[--q->nr_spare];
	pthread_mutex_unlock(&q->lock);
	out->len = 0;
}

void sk_sender_push(struct sk_sender *q, struct sk_batch *b)
{
	b->next = NULL;
	pthread_mutex_lock(&q->lock);
	if (q->tail)
		q->tail->next = b;
	else
		q->head = b;
	q->tail = b;
	q->q_rows += b->rows;
	q->q_bytes += batch_bytes(b);
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

uint64_t sk_sender_bytes(struct sk_sender *q)
{
	uint64_t n;

	pthread_mutex_lock(&q->lock);
	n = q->q_bytes;
	pthread_mutex_unlock(&q->lock);
	return n;
}

void sk_sender_drain(struct sk_sender *q, uint64_t deadline_ns)
{
	if (!q->started)
		return;
	/* while the server takes batches, or the first attempt is under way */
	pthread_mutex_lock(&q->lock);
	q->draining = 1;
	pthread_cond_broadcast(&q->cond);
	while (q->head && it_mono_ns() < deadline_ns &&
	       !__atomic_load_n(&q->failed, __ATOMIC_RELAXED))
		wait_ns(q, 50ull * 1000 * 1000);
	pthread_mutex_unlock(&q->lock);
}

struct sk_batch *sk_sender_stop(struct sk_sender *q)
{
	struct sk_batch *left;

	if (!q->started)
		return NULL;
	pthread_mutex_lock(&q->lock);
	q->stop = 1;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	q->started = 0;
	left = q->head;
	q->head = q->tail = NULL;
	q->q_rows = q->q_bytes = 0;
	/* the compressed batches take their bytes with them (none: counted lost) */
	for (struct sk_batch *b = left; b && b->enc != SK_ENC_NONE; b = b->next) {
		if (nat_buf_room(&b->data, b->zlen)) {
			sk_add(&q->ctr[SK_C_DROP + SK_DROP_ENCODE], b->rows);
			b->rows = 0;
			continue;
		}
		memcpy(b->data.p, q->zq.p + b->zoff, b->zlen);
		b->data.len = b->zlen;
	}
	sk_http_free(q->http);
	q->http = NULL;
	sk_compress_free(q->zctx);
	q->zctx = NULL;
	nat_buf_free(&q->zq);
	while (q->nr_spare)
		nat_buf_free(&q->spare[--q->nr_spare]);
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	return left;
}
