// SPDX-License-Identifier: GPL-2.0
/*
 * link_peer: a guest end of the link without BPF, for tests (built by `make
 * tools`; tests/integration/test_link_auth.sh drives it against a real host
 * daemon). It dials ADDR as a guest, sends a FILTER and the records given,
 * and runs until the host acknowledged all of them or the time is up.
 *
 *   link_peer ADDR [--key FILE] [--name NAME] [--filter S1,S2,...]
 *             [--rec SERIAL:OP:SECTOR:NR]... [--ms N]
 *
 * A record's guest time stamps are made in order (syscall, block Q/D/C,
 * virtio submit/kick/done). Prints one JSON line: {"up":..,"acked":..,
 * "refused":..,"sent":..}; exits 0 when every record was acknowledged.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/keyfile.h"
#include "mode/link.h"

#define MAX_RECS 64

struct peer_opts {
	const char *addr, *name;
	struct link_key key;
	struct link_filter filter;
	int has_filter;
	struct link_vreq recs[MAX_RECS];
	uint32_t nr_recs;
	uint64_t ms;
};

static void log_line(void *ctx, const char *line)
{
	fprintf(stderr, "link_peer: %s\n", line);
}

static int add_filter(struct peer_opts *o, char *list)
{
	for (char *s = strtok(list, ","); s; s = strtok(NULL, ",")) {
		if (o->filter.nr_serials >= LINK_FILTER_MAX)
			return -1;
		strncpy(o->filter.serials[o->filter.nr_serials++], s, LINK_SERIAL_LEN);
	}
	o->has_filter = 1;
	return 0;
}

/* SERIAL:OP:SECTOR:NR -> a record with ordered time stamps. */
static int add_rec(struct peer_opts *o, const char *spec)
{
	struct link_vreq *v = &o->recs[o->nr_recs];
	char serial[LINK_SERIAL_LEN + 1];
	unsigned int op, nr;
	uint64_t sector, t = 1000000;

	if (o->nr_recs >= MAX_RECS ||
	    sscanf(spec, "%20[^:]:%u:%" SCNu64 ":%u", serial, &op, &sector, &nr) != 4)
		return -1;
	memset(v, 0, sizeof(*v));
	memcpy(v->serial, serial, strlen(serial)); /* at most 20: NUL-padded by the memset */
	v->op = (uint8_t)op;
	v->sector = sector;
	v->nr_sectors = nr;
	v->sys = UINT32_MAX;
	snprintf(v->comm, sizeof(v->comm), "link_peer");
	v->q_ns = t + 10, v->d_ns = t + 20, v->submit_ns = t + 30, v->kick_ns = t + 40;
	v->done_ns = t + 50, v->c_ns = t + 60;
	o->nr_recs++;
	return 0;
}

static int parse(int argc, char **argv, struct peer_opts *o)
{
	char why[160];

	int err = argc < 2 || argc % 2; /* ADDR, then option/value pairs */

	o->ms = 3000;
	o->addr = argc > 1 ? argv[1] : NULL;
	for (int i = 2; !err && i + 1 < argc; i += 2) {
		const char *a = argv[i];
		char *v = argv[i + 1];

		if (!strcmp(a, "--key")) {
			err = keyfile_load(v, &o->key, why, sizeof(why));
			if (err)
				fprintf(stderr, "link_peer: --key %s: %s\n", v, why);
		} else if (!strcmp(a, "--name")) {
			o->name = v;
		} else if (!strcmp(a, "--filter")) {
			err = add_filter(o, v);
		} else if (!strcmp(a, "--rec")) {
			err = add_rec(o, v);
		} else if (!strcmp(a, "--ms")) {
			o->ms = strtoull(v, NULL, 10);
		} else {
			err = -1;
		}
	}
	return err ? -1 : 0;
}

int main(int argc, char **argv)
{
	static struct peer_opts o;
	struct link_opts lo = { .role = LINK_ROLE_GUEST, .key = &o.key };
	struct link_cb cb = { .log = log_line };
	struct link_stats st = { 0 };
	struct net_addr a;
	struct link *l;
	char why[128];
	uint64_t end;
	int up = 0;

	if (parse(argc, argv, &o) || addr_parse(o.addr, &a, why, sizeof(why))) {
		fprintf(stderr, "usage: link_peer ADDR [--key FILE] [--name NAME] "
				"[--filter S1,S2,..] [--rec SERIAL:OP:SECTOR:NR].. [--ms N]\n");
		return 2;
	}
	lo.name = o.name ? o.name : "link_peer";
	l = link_new(&lo, &cb);
	if (!l || link_dial(l, &a))
		return 2;
	if (o.has_filter)
		link_set_filter(l, &o.filter);
	link_send_vreqs(l, o.recs, o.nr_recs);
	for (end = it_mono_ns() + o.ms * 1000000ull; it_mono_ns() < end;) {
		struct pollfd pfd = { .fd = link_epoll_fd(l), .events = POLLIN };

		link_run(l, it_mono_ns());
		link_get_stats(l, &st);
		up |= link_next_peer(l, NULL) &&
		      link_peer_info(link_next_peer(l, NULL))->hello_done;
		/* with records: until all are acked; a filter alone: the whole time */
		if (up && o.nr_recs && st.records_acked == o.nr_recs)
			break;
		poll(&pfd, 1, 5);
	}
	printf("{\"up\":%d,\"acked\":%" PRIu64 ",\"refused\":%" PRIu64 ",\"sent\":%" PRIu64 "}\n",
	       up, st.records_acked, st.refused, st.records_sent);
	link_free(l);
	keyfile_wipe(&o.key);
	return up && st.records_acked == o.nr_recs ? 0 : 1; /* records_acked 0 without records */
}
