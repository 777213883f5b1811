// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for src/mode/hostout.c: known counts, sessions and paths in, the
 * exact summary text, host_summary / path / guest_vreq JSON (read back with
 * lib/json) and --metrics lines out.
 */
#include <stdlib.h>

#include "unit.h"
#include "iotracer.h"
#include "lib/json.h"
#include "lib/jsonw.h"
#include "mode/hostout.h"

/* A memstream and its text, for the writers that take a FILE. */
struct mem {
	char *buf;
	size_t len;
	FILE *f;
};

static FILE *mem_open(struct mem *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	if (!m->f)
		abort();
	return m->f;
}

static const char *mem_text(struct mem *m)
{
	fclose(m->f);
	return m->buf;
}

static struct link_peer_info peer_info(uint64_t session, const char *name, uint64_t samples)
{
	struct link_peer_info pi = { .id = 1 };

	pi.hello.session = session;
	snprintf(pi.hello.name, sizeof(pi.hello.name), "%s", name);
	pi.clock.samples = samples;
	return pi;
}

/* The string at path, "" when absent or not one. */
static const char *str_at(const struct json *v, const char *path)
{
	const struct json *x = json_path(v, path);

	return x && x->t == JSON_STR ? x->str : "";
}

/* A path with every stage unknown but the ones set by the caller. */
static struct vj_path path_of(const struct link_vreq *g, int joined)
{
	struct vj_path p = { .g = g, .peer = 2, .session = 0xabc, .joined = joined };

	for (int s = 0; s < VJ_STAGES; s++)
		p.stage[s] = INT64_MIN;
	return p;
}

/* Sessions: one entry each, kept by session id; a full table gives NULL. */
static void test_hostout_peers(void)
{
	struct hostout s = { 0 };
	struct link_peer_info a = peer_info(7, "guest-a", 3), b = peer_info(8, "guest-b", 1);
	char longname[sizeof(a.hello.name)];

	hostout_note_peer(&s, &a, -1500, 200, 10);
	hostout_note_peer(&s, &b, 40, 9, 1);
	a.clock.samples = 5;
	hostout_note_peer(&s, &a, -1400, 100, 6);
	if (!ASSERT_EQ(s.nr_peers, 2, "two sessions"))
		return;
	ASSERT_STREQ(s.peers[0].name, "guest-a", "name");
	ASSERT_EQ(s.peers[0].records, 16, "records add up");
	ASSERT_EQ(s.peers[0].off, -1400, "latest offset");
	ASSERT_EQ(s.peers[0].unc, 100, "latest uncertainty");
	ASSERT_EQ(s.peers[0].samples, 5, "samples");
	ASSERT_TRUE(hostout_peer(&s, &b) == &s.peers[1], "same entry by session");
	memset(longname, 'x', sizeof(longname));
	memcpy(a.hello.name, longname, sizeof(longname)); /* NUL padded: may have no NUL */
	for (uint64_t i = 0; i < HOST_MAX_PEERS - 2; i++) {
		a.hello.session = 100 + i;
		ASSERT_TRUE(hostout_peer(&s, &a) != NULL, "room");
	}
	ASSERT_EQ(strlen(s.peers[2].name), sizeof(longname) - 1, "a full name is cut, terminated");
	a.hello.session = 999;
	ASSERT_TRUE(hostout_peer(&s, &a) == NULL, "table full");
	ASSERT_EQ(s.nr_peers, HOST_MAX_PEERS, "no overflow");
}

/* Stages: joined paths only, unknown stages skipped, negative ones counted as 0. */
static void test_hostout_stages(void)
{
	struct hostout s = { 0 };
	struct link_vreq g = { .seq = 1 };
	struct vj_path p = path_of(&g, 1), u = path_of(&g, 0);

	if (!ASSERT_OK(hostout_init(&s), "init"))
		return;
	p.stage[VJ_GUEST_VIRTIO] = 5000;
	p.stage[VJ_WORLD_SWITCH] = -300;
	hostout_add_path(&s, &p);
	p.stage[VJ_GUEST_VIRTIO] = 9000;
	hostout_add_path(&s, &p);
	u.stage[VJ_GUEST_VIRTIO] = 1;
	hostout_add_path(&s, &u);
	ASSERT_EQ(lhist_count(s.stage[VJ_GUEST_VIRTIO]), 2, "joined paths only");
	ASSERT_EQ(lhist_max(s.stage[VJ_GUEST_VIRTIO]), 9000, "max");
	ASSERT_EQ(lhist_min(s.stage[VJ_GUEST_VIRTIO]), 5000, "min");
	ASSERT_EQ(lhist_count(s.stage[VJ_WORLD_SWITCH]), 2, "negative counted");
	ASSERT_EQ(lhist_max(s.stage[VJ_WORLD_SWITCH]), 0, "as 0");
	ASSERT_EQ(lhist_count(s.stage[VJ_QEMU_TOTAL]), 0, "unknown skipped");
	hostout_free(&s);
}

/* Counts of a small run: 3 guest requests, 2 joined. */
static void fill(struct hostout *s, struct vj_stats *st, struct hostout_now *n)
{
	struct link_peer_info a = peer_info(0x1122, "vm1", 4);

	*st = (struct vj_stats){ .guest = 3,
				 .joined = 2,
				 .unjoined = 1,
				 .host_unjoined = 4,
				 .split = 1,
				 .with_submit = 2,
				 .with_notify = 2 };
	st->unjoin[VJ_UN_MERGED] = 1;
	st->host_unjoin[VJ_HU_UNCLAIMED] = 4;
	s->qemu_ev[IT_QEV_AIO_READ] = 2;
	s->qemu_ev[IT_QEV_AIO_WRITE] = 2;
	s->qemu_ev[IT_QEV_NOTIFY] = 2;
	s->host_io = 6;
	s->records_malformed = 1;
	s->filter_ignored = 2;
	hostout_note_peer(s, &a, -25, 7, 3);
	hostout_peer(s, &a)->malformed = 1;
	*n = (struct hostout_now){
		.st = st, .elapsed_ns = 2000000000ull, .bpf_ns = 4000000, .cpu_pct = 1.25
	};
	n->ls.refused = 5;
	n->ls.records_rx = 3;
}

static void test_hostout_text(void)
{
	struct hostout s = { 0 };
	struct vj_stats st;
	struct hostout_now n;
	struct mem m;
	const char *t;

	if (!ASSERT_OK(hostout_init(&s), "init"))
		return;
	fill(&s, &st, &n);
	hostout_text(mem_open(&m), &s, &n);
	t = mem_text(&m);
	ASSERT_TRUE(strstr(t, "host: guest virtio requests 3, joined 2 (66.7 %), unjoined 1, "
			      "order violations 0; QEMU host IOs 6 (never joined 4)\n") == t,
		    "first line");
	ASSERT_TRUE(
		strstr(t,
		       " merged 1 no_host_io 0 partial 0 no_address 0 unmapped 0 clock 0; host IOs "
		       "never joined: not_guest_buffer 0 unclaimed 4; split over several "
		       "host IOs 1\n"),
		"reasons");
	/* (2 + 2 + 2) hits / 4 blk_aio; 4 ms of BPF in 2 s = 0.2 % of a core */
	ASSERT_TRUE(strstr(t, "host: uprobe hits: blk_aio 4 + virtio_notify 2 = 1.50 per QEMU "
			      "block IO; daemon CPU 1.250 % of a core, BPF 4.000 ms (0.200 % of "
			      "a core)\n"),
		    "uprobe line");
	ASSERT_TRUE(strstr(t, "host: guest 'vm1' session 0000000000001122: clock host - guest = "
			      "-25 ns +- 7 ns (4 samples), records 3, malformed 1, filter serials "
			      "ignored 0\n"),
		    "peer line");
	ASSERT_TRUE(strstr(t, "host: link: peers refused 5, records malformed 1, filter serials "
			      "ignored 2\n"),
		    "link line");
	ASSERT_TRUE(strstr(t, "STAGE               COUNT          P50          P99          MAX\n"
			      "guest_submit            0            0            0            0\n"),
		    "stage table");
	free(m.buf);
	hostout_free(&s);
}

static void test_hostout_json(void)
{
	struct hostout s = { 0 };
	struct vj_stats st;
	struct hostout_now n;
	struct json *v;
	struct jw w;

	if (!ASSERT_OK(hostout_init(&s), "init"))
		return;
	fill(&s, &st, &n);
	jw_init(&w);
	hostout_json(&w, &s, &n, 1);
	v = json_parse(jw_data(&w), jw_len(&w));
	if (ASSERT_TRUE(v != NULL, "parses")) {
		ASSERT_STREQ(str_at(v, "type"), "host_summary", "type");
		ASSERT_EQ(json_num(v, "guest_requests", -1), 3, "guest");
		ASSERT_EQ(json_num(v, "unjoined_by_reason.merged", -1), 1, "by reason");
		ASSERT_EQ(json_num(v, "host_unjoined_by_reason.unclaimed", -1), 4, "host reason");
		ASSERT_NEAR(json_num(v, "uprobe_hits_per_qemu_io", -1), 1.5, 1e-9, "per QEMU IO");
		ASSERT_NEAR(json_num(v, "uprobe_hits_per_guest_io", -1), 2, 1e-9, "per guest IO");
		ASSERT_EQ(json_num(v, "elapsed_ns", -1), 2e9, "elapsed");
		ASSERT_EQ(json_num(v, "refused", -1), 5, "link stats");
		ASSERT_EQ(json_num(v, "filter_ignored", -1), 2, "filter");
		ASSERT_EQ(json_num(v, "stages.guest_virtio.count", -1), 0, "stages");
		ASSERT_TRUE(json_path(v, "peers")->child != NULL, "peers");
		ASSERT_NEAR(json_num(json_path(v, "peers")->child, "clock_offset_ns", 0), -25, 0,
			    "off");
	}
	json_free(v);
	jw_free(&w);
	hostout_free(&s);
}

static void test_hostout_records(void)
{
	struct link_vreq g = { .seq = 9,
			       .sector = 8,
			       .nr_sectors = 16,
			       .op = IT_OP_WRITE,
			       .drv_layer = IT_L_VIRTIO,
			       .serial = "disk1",
			       .kick_ns = 100,
			       .done_ns = 900 };
	struct vj_path p = path_of(&g, 0);
	struct json *v;
	struct mem m;
	struct jw w;

	jw_init(&w);
	hostout_json_vreq(&w, 0xabc, &g);
	v = json_parse(jw_data(&w), jw_len(&w));
	if (ASSERT_TRUE(v != NULL, "vreq parses")) {
		ASSERT_STREQ(str_at(v, "bus"), "virtio-blk", "bus");
		ASSERT_EQ(json_num(v, "nr_sectors", -1), 16, "sectors");
		ASSERT_TRUE(!json_get(v, "kick_suppressed"), "kicked");
	}
	json_free(v);
	jw_reset(&w);
	p.unjoin = VJ_UN_NO_SUBMIT;
	p.stage[VJ_GUEST_VIRTIO] = 800;
	jw_obj_begin(&w, NULL);
	hostout_json_path_fields(&w, &p);
	jw_obj_end(&w);
	v = json_parse(jw_data(&w), jw_len(&w));
	if (ASSERT_TRUE(v != NULL, "path parses")) {
		ASSERT_STREQ(str_at(v, "op"), "write", "op");
		ASSERT_EQ(json_num(v, "offset", -1), 4096, "offset in bytes");
		ASSERT_EQ(json_num(v, "bytes", -1), 8192, "bytes");
		ASSERT_STREQ(str_at(v, "unjoined_reason"), "no_qemu_submit", "reason");
		ASSERT_EQ(json_num(v, "stages_ns.guest_virtio", -1), 800, "stage");
		ASSERT_TRUE(!json_path(v, "stages_ns.qemu_total"), "unknown stage left out");
	}
	json_free(v);
	jw_free(&w);
	hostout_live_path(mem_open(&m), &p);
	ASSERT_STREQ(mem_text(&m),
		     "path disk1    write 4096+8192 UNJOINED guest_virtio 800 ns qemu -1 ns\n",
		     "live line");
	free(m.buf);
}

static void test_hostout_metrics(void)
{
	struct vj_stats st = { .guest = 3, .joined = 2 };
	struct mem m;
	const char *t;

	st.unjoin[VJ_UN_PARTIAL] = 1;
	hostout_metrics(mem_open(&m), 1, &st);
	t = mem_text(&m);
	ASSERT_TRUE(strstr(t, "\niotracer_link_peers 1\n"), "peers");
	ASSERT_TRUE(strstr(t, "\niotracer_joined_requests_total 2\n"), "joined");
	ASSERT_TRUE(strstr(t, "\niotracer_unjoined_requests_total{reason=\"partial\"} 1\n"),
		    "by reason");
	ASSERT_TRUE(strstr(t, "\niotracer_host_unjoined_io_total{reason=\"unclaimed\"} 0\n"),
		    "host reason");
	free(m.buf);
}

int main(void)
{
	RUN_TEST(test_hostout_peers);
	RUN_TEST(test_hostout_stages);
	RUN_TEST(test_hostout_text);
	RUN_TEST(test_hostout_json);
	RUN_TEST(test_hostout_records);
	RUN_TEST(test_hostout_metrics);
	return unit_result();
}
