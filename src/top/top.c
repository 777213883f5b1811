// SPDX-License-Identifier: GPL-2.0
/*
 * top: the driver of `iotracer top` — options, the BPF side (block layer
 * only, no per-request records, the kernel's aggregation keyed by process,
 * cgroup, device and op), the terminal (plain ANSI redraw, keys read raw) or
 * batch tables, and the loop. See top.h and docs/top.md. With --blame also
 * the block records (the daemon's record path: ring buffer, per-CPU buffers,
 * recbuf) into the blame sums (tblame.h).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "iotracer.h"
#include "iotracer.skel.h"
#include "records/cgroup.h"
#include "service/cli.h"
#include "service/dnames.h"
#include "records/container.h"
#include "load/aggmap.h"
#include "load/loader.h"
#include "records/output.h"
#include "records/agg.h"
#include "records/recbuf.h"
#include "lib/abi.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/opts.h"
#include "blame/tblame.h"
#include "top/tfile.h"
#include "top/top.h"
#include "top/topopts.h"
#include "top/view.h"

#define TOP_FOLD_MAX 4096 /* containers and pods told apart; past it, cgroups stay rows */
/* --blame: records drained this often, all but those younger than the watermark (recbuf.h) */
#define TOP_DRAIN_NS (50ull * 1000 * 1000)
#define TOP_WATERMARK_NS (2ull * 1000 * 1000)

/* TG_FILE last: `c` cycles the others, `f` goes to it and back (docs/top.md) */

/* A container or pod (key: its id, UID or machine name) and its first cgroup's id. */
struct top_fold {
	char key[CT_ID_LEN + 2 * CT_NAME_MAX + 16];
	uint64_t id;
};

struct top {
	struct it_opts o; /* the filters and the BPF side's settings */
	uint64_t interval_ns;
	uint64_t iterations; /* 0: until q / SIGINT */
	int batch;
	int rows; /* -r; 0: what fits the terminal (followed on resize) */
	struct tview_opts view;
	struct it_loader ld;
	struct cg_cache *cg;
	struct ct_names *names; /* container and pod names from the node (container.h) */
	enum top_group group; /* rows per process, cgroup, container, pod or file */
	enum top_group group_back; /* `f` again goes back to it */
	struct dnames *fnames; /* the files' names (dnames.h) */
	struct fn_index *files; /* file row ids (tfile.h) */
	struct top_fold *fold; /* container / pod -> the cgroup id that stands for it */
	int nr_fold;
	char label[CT_NAME_MAX * 2 + 16]; /* the last group label made (cgroup_name) */
	struct agg_entry *prev;
	int nr_prev;
	uint64_t start_ns, prev_ns;
	struct termios saved;
	int raw; /* the terminal is in raw mode (restored at exit) */
	/* the records: name records always, block records with --blame */
	int blame_on;
	int direct_files; /* the syscall layer is on: direct IO's bios name their files */
	struct tblame *blame;
	struct ring_buffer *rb;
	struct recbuf recs;
	uint64_t rec_lost; /* records not kept (no memory): counted on the TOTAL's blame line */
};

static volatile sig_atomic_t top_stop;

static void set_group(struct top *t, enum top_group g)
{
	static const char *const cols[TG_NR] = { "CGROUP", "CGROUP", "CONTAINER", "POD", "FILE" };

	t->group = g;
	t->view.by_cgroup = g != TG_PROCESS;
	t->view.group_col = cols[g];
}

static void on_signal(int sig)
{
	(void)sig;
	top_stop = 1;
}

static int top_one(void *ctx, int c, const char *arg)
{
	struct top *t = ctx;
	struct cli_src src = { .err = stderr, .cmd = "top" };
	char list[128];
	uint64_t v;

	switch (c) {
	case 'i':
		if (parse_duration(arg, &t->interval_ns) || t->interval_ns < 10000000ull)
			return opts_bad_value(NULL, "top", "interval", arg,
					      "at least 10ms, e.g. 1s, 500ms");
		return 0;
	case 'b':
		t->batch = 1;
		return 0;
	case 'n':
		if (parse_u64(arg, 1, UINT32_MAX, &t->iterations))
			return opts_bad_value(NULL, "top", "iterations", arg, "N >= 1");
		return 0;
	case 's':
		if (tview_sort_of(arg) < 0)
			return opts_bad_value(NULL, "top", "sort", arg, "%s",
					      opts_kw_list(list, sizeof(list), tview_sort_kw));
		t->view.sort = tview_sort_of(arg);
		return 0;
	case 'C':
		set_group(t, TG_CGROUP);
		return 0;
	case 'r':
		if (parse_u64(arg, 1, 100000, &v))
			return opts_bad_value(NULL, "top", "rows", arg, "1 to 100000");
		t->rows = (int)v;
		return 0;
	case TOP_OPT_GROUP:
		if (opts_kw_find(top_group_kw, arg) < 0)
			return opts_bad_value(NULL, "top", "group", arg, "%s",
					      opts_kw_list(list, sizeof(list), top_group_kw));
		set_group(t, opts_kw_find(top_group_kw, arg));
		return 0;
	case TOP_OPT_BLAME:
		t->blame_on = 1;
		return 0;
	}
	return cli_filter(c, arg, &t->o, &src) == CLI_RUN ? 0 : 2;
}

/*
 * --blame splits a request's wait over every request that held the device: the
 * task filters, applied in the kernel to the records too, would hide culprits.
 */
static int check_blame(const struct top *t)
{
	if (!t->blame_on)
		return 0;
	if (t->o.nr_pids || t->o.nr_cgroups) {
		it_err("top: --blame: needs every block request of the devices as a culprit: "
		       "not with %s (-d DEV is fine)",
		       t->o.nr_pids ? "-p/--pid" : "--cgroup");
		return 2;
	}
	return 0;
}

static int top_parse(struct top *t, int argc, char **argv)
{
	return opts_parse(top_opts(), argc, argv, top_one, t, NULL, NULL) ?: check_blame(t);
}

/* ---- the records: the files' names, and with --blame the block records ---- */

/* recbuf_fn: one record, in completion order. */
static void on_record(void *ctx, void *data, size_t size)
{
	struct top *t = ctx;
	const struct it_hdr *h = data;
	uint64_t file;

	if (dnames_record(t->fnames, data, size))
		return;
	if (!t->blame || size < sizeof(struct it_block_rec) || h->type != IT_REC_BLOCK)
		return; /* the syscall layer's programs write none (no per-request records) */
	file = tfile_id(t->files, data);
	if (!file || tblame_block(t->blame, data, file == TFILE_NONE ? 0 : file))
		t->rec_lost++;
}

/*
 * Read every record published (final: the youngest too): the names, and the
 * blame, which splits what the horizon passed.
 */
static void drain(struct top *t, int final)
{
	uint64_t mark = it_mono_ns() - TOP_WATERMARK_NS;

	if (!t->rb)
		return;
	if (ring_buffer__consume(t->rb) < 0)
		t->rec_lost++;
	recbuf_drain(&t->recs, final ? UINT64_MAX : mark, on_record, t);
	dnames_tick(t->fnames);
	if (t->blame && final)
		tblame_flush(t->blame);
	else if (t->blame)
		tblame_tick(t->blame, mark);
}

/* The record path the daemon uses (it_loader_records), the names and the blame sums. */
static int records_start(struct top *t)
{
	t->fnames = dnames_new(t->o.file_names > 0 ? t->o.file_names : CLI_FILE_NAMES_DEFAULT);
	t->files = fn_index_new();
	if (!t->fnames || !t->files || (t->blame_on && !(t->blame = tblame_new())))
		return -ENOMEM;
	dnames_attach(t->fnames, t->ld.skel);
	return it_loader_records(&t->ld, &t->rb, &t->recs);
}

static void records_stop(struct top *t)
{
	ring_buffer__free(t->rb);
	recbuf_free(&t->recs);
	tblame_free(t->blame);
	dnames_free(t->fnames);
	fn_index_free(t->files);
}

/* ---- the terminal ---- */

static void term_raw(struct top *t)
{
	struct termios raw;

	if (t->batch || !isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &t->saved))
		return;
	raw = t->saved;
	raw.c_lflag &= ~(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (!tcsetattr(STDIN_FILENO, TCSANOW, &raw))
		t->raw = 1;
}

static void term_restore(struct top *t)
{
	if (t->raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
	t->raw = 0;
}

/*
 * The terminal's size now (followed on resize): the rows that fit under the
 * title and header (the -r value wins), and its width for the columns.
 */
static void fit_term(struct top *t)
{
	struct winsize ws;
	int ok = !t->batch && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col;

	t->view.width = ok ? ws.ws_col : 0;
	if (t->rows || t->batch)
		t->view.max_rows = t->rows;
	else
		t->view.max_rows = ok ? tview_fit(ws.ws_row) : 20;
}

/* A key pressed: change the view; 1 to quit. */
static int on_key(struct top *t, char k)
{
	static const char sort_keys[TV_SORT_MAX] = { 'i', 'b', 'a', 'p', 'u', 'd' };

	if (k == 'q')
		return 1;
	if (k == 's')
		t->view.sort = (t->view.sort + 1) % TV_SORT_MAX;
	else if (k == 'c')
		set_group(t, t->group == TG_FILE ? TG_PROCESS : (t->group + 1) % TG_FILE);
	else if (k == 'f' && t->group == TG_FILE)
		set_group(t, t->group_back);
	else if (k == 'f') {
		t->group_back = t->group;
		set_group(t, TG_FILE);
	}
	for (int i = 0; i < TV_SORT_MAX; i++)
		if (k == sort_keys[i])
			t->view.sort = i;
	return 0;
}

/* Wait until deadline (CLOCK_MONOTONIC ns), handling keys; 1 to quit. */
static int wait_tick(struct top *t, uint64_t deadline)
{
	for (;;) {
		uint64_t now = it_mono_ns(), wait;
		struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
		char k;

		if (top_stop)
			return 1;
		if (now >= deadline)
			return 0;
		wait = deadline - now;
		if (wait > TOP_DRAIN_NS)
			wait = TOP_DRAIN_NS; /* the records' buffers are read while waiting */
		drain(t, 0);
		if (poll(&p, t->raw ? 1 : 0, (int)(wait / 1000000 + 1)) <= 0)
			continue;
		if (read(STDIN_FILENO, &k, 1) == 1 && on_key(t, k))
			return 1;
		if (t->raw)
			return 0; /* redraw at once with the new view */
	}
}

/* ---- names ---- */

static const char *dev_name(uint32_t dev, void *ctx)
{
	const struct top *t = ctx;

	return dev ? parse_dev_name_cached(dev, t->o.sysfs_root) : "-";
}

/* What a cgroup is for the grouping: its container's or pod's description; 0: neither. */
static int describe(struct top *t, uint64_t id, struct ct_full *f)
{
	const char *path = cg_path(t->cg, id);

	if (!path || t->group < TG_CONTAINER)
		return 0;
	ct_describe(t->names, path, f);
	if (t->group == TG_POD)
		return f->ci.pod_uid[0] != '\0';
	return f->ci.id[0] || f->ci.name[0];
}

/* The row label: the cgroup's path, its container ("runtime/name") or pod ("ns/pod"), a file. */
static const char *cgroup_name(uint64_t id, void *ctx)
{
	struct top *t = ctx;
	const char *name;
	struct ct_full f;

	if (t->group == TG_FILE)
		return tfile_label(t->files, dnames_cache(t->fnames), id, t->label,
				   sizeof(t->label));
	if (!describe(t, id, &f))
		return cg_path(t->cg, id);
	if (t->group == TG_POD) {
		if (f.pod)
			snprintf(t->label, sizeof(t->label), "%s/%s", f.pod_ns, f.pod);
		else
			snprintf(t->label, sizeof(t->label), "pod/%s", f.ci.pod_uid);
		return t->label;
	}
	name = f.container ? f.container : f.ci.name[0] ? f.ci.name : NULL;
	if (name)
		snprintf(t->label, sizeof(t->label), "%s/%s", ct_runtime_name(f.ci.runtime), name);
	else
		snprintf(t->label, sizeof(t->label), "%s/%.12s", ct_runtime_name(f.ci.runtime),
			 f.ci.id);
	return t->label;
}

/* tview_fold: a cgroup's id -> the id of the first cgroup seen of its container or pod. */
static uint64_t fold_id(uint64_t id, void *ctx)
{
	struct top *t = ctx;
	struct top_fold k;
	struct ct_full f;

	if (!describe(t, id, &f))
		return id;
	if (t->group == TG_POD)
		snprintf(k.key, sizeof(k.key), "p %s", f.ci.pod_uid);
	else /* the id, or a machine's name (no id) */
		snprintf(k.key, sizeof(k.key), "c %d %s %s %s", f.ci.runtime, f.ci.id, f.ci.ns,
			 f.ci.name);
	for (int i = 0; i < t->nr_fold; i++)
		if (!strcmp(t->fold[i].key, k.key))
			return t->fold[i].id;
	if (t->nr_fold == TOP_FOLD_MAX)
		return id;
	if (!t->nr_fold && !(t->fold = calloc(TOP_FOLD_MAX, sizeof(*t->fold))))
		return id;
	k.id = id;
	t->fold[t->nr_fold++] = k;
	return id;
}

/*
 * tblame_group_fn: an owner's row key under the grouping of the moment (the
 * rows' fold); rows per file: a victim's file, a culprit's process.
 */
static uint64_t blame_group(const struct blame_owner *o, uint64_t file, void *ctx)
{
	struct top *t = ctx;

	if (t->group == TG_FILE && file)
		return file;
	if (t->group == TG_PROCESS || t->group == TG_FILE)
		return o->pid;
	return t->group == TG_CGROUP ? o->cgroup_id : fold_id(o->cgroup_id, t);
}

/* tview_opts.blame: the row's top culprit, "comm[pid]" or its group's label. */
static int row_blame(const struct tview_row *r, int totals, char *name, size_t n, double *pct,
		     void *ctx)
{
	struct top *t = ctx;
	uint64_t key = t->group == TG_PROCESS ? r->tgid : r->cgroup_id;
	struct tblame_top top;
	const char *label;

	if (tblame_row(t->blame, totals, t->group == TG_FILE ? r->cgroup_id : key, r->dev, r->op,
		       blame_group, t, &top) ||
	    !top.found || top.blamed_ns <= 0)
		return 0;
	*pct = 100.0 * top.ns / top.blamed_ns;
	if (blame_owner_none(&top.who)) {
		snprintf(name, n, "%s", BLAME_NO_TASK);
		return 1;
	}
	if (t->group == TG_PROCESS || t->group == TG_FILE) {
		snprintf(name, n, "%s[%u]", top.who.comm[0] ? top.who.comm : "?", top.who.pid);
		return 1;
	}
	label = cgroup_name(blame_group(&top.who, 0, t), t);
	if (label)
		snprintf(name, n, "%s", label);
	else
		snprintf(name, n, "cgroup-id %llu", (unsigned long long)top.who.cgroup_id);
	return 1;
}

/* A copy of a snapshot's entries for the grouping: the files dropped or made rows, folded. */
static int group_copy(struct top *t, const struct agg_entry *e, int nr, struct agg_entry **out)
{
	*out = malloc((nr ? nr : 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	memcpy(*out, e, nr * sizeof(**out));
	nr = tfile_fold(t->files, *out, nr, t->group == TG_FILE);
	if (nr >= 0 && (t->group == TG_CONTAINER || t->group == TG_POD))
		nr = tview_fold(*out, nr, fold_id, t);
	return nr;
}

/*
 * Rows of the snapshots now and prev (raw, sorted), per file, container or pod
 * when asked: folded copies (prev stays raw, so a change of grouping is no jump).
 */
static int group_rows(struct top *t, const struct agg_entry *now, int nr,
		      const struct agg_entry *prev, int nr_prev, uint64_t dt_ns, int totals,
		      struct tview_row **rows)
{
	struct agg_entry *fn = NULL, *fp = NULL;
	int n;

	nr = group_copy(t, now, nr, &fn);
	if (prev && nr >= 0)
		nr_prev = group_copy(t, prev, nr_prev, &fp);
	if (nr < 0 || (prev && nr_prev < 0)) {
		n = -ENOMEM;
		goto out;
	}
	n = totals ? tview_totals(fn, nr, dt_ns, t->view.by_cgroup, rows) :
		     tview_rows(fn, nr, fp, nr_prev, dt_ns, t->view.by_cgroup, rows);
out:
	free(fn);
	free(fp);
	return n;
}

/* ---- the loop ---- */

static void title(const struct top *t, int nrows, char *buf, size_t n)
{
	char iv[16], tm[16];
	time_t now = time(NULL);
	struct tm lt;

	parse_fmt_duration(t->interval_ns, iv, sizeof(iv));
	strftime(tm, sizeof(tm), "%H:%M:%S", localtime_r(&now, &lt));
	snprintf(buf, n, "%s - %s  interval %s  sort %s  per %s%s  %d row%s%s%s", "iotracer top",
		 tm, iv, tview_sort_name(t->view.sort), top_group_kw(t->group),
		 t->group == TG_FILE && !t->direct_files ? " (page cache)" : "", nrows,
		 nrows == 1 ? "" : "s", t->blame ? "  blame 1s late" : "",
		 t->raw ? "  [q quit, s sort, c grouping, f files]" : "");
}

/* Read the map, print the interval's table; the snapshot becomes prev. 0 or -errno. */
static int tick(struct top *t)
{
	struct agg_entry *now = NULL;
	struct tview_row *rows = NULL;
	uint64_t ns = it_mono_ns();
	char head[160];
	int nr = 0, n, ret;

	drain(t, 0);
	ret = it_loader_agg(&t->ld, &now, &nr);
	if (ret)
		return ret;
	tview_sort_snapshot(now, nr);
	n = group_rows(t, now, nr, t->prev, t->nr_prev, ns - t->prev_ns, 0, &rows);
	if (n < 0) {
		free(now);
		return n;
	}
	tview_sort(rows, n, t->view.sort);
	title(t, n, head, sizeof(head));
	fit_term(t);
	tview_print(stdout, head, rows, n, &t->view);
	if (t->batch)
		fputc('\n', stdout);
	fflush(stdout);
	free(rows);
	if (t->blame)
		tblame_next(t->blame);
	free(t->prev);
	t->prev = now;
	t->nr_prev = nr;
	t->prev_ns = ns;
	return 0;
}

/* -b: the totals since the start, the last table. */
/* --blame's counts for the TOTAL: what the sums could not hold is said, never guessed. */
static void blame_totals(struct top *t)
{
	const struct blame_stats *st = tblame_stats(t->blame);
	uint64_t drops[IT_NR_DROPS];

	it_loader_counts(&t->ld, drops, NULL);
	printf("blame (docs/blame.md): %llu block requests split, %llu late, %llu not split "
	       "(history gone), %llu split early (cap), %llu records lost (ring full), "
	       "%llu not kept (no memory)\n",
	       (unsigned long long)st->resolved, (unsigned long long)st->late,
	       (unsigned long long)st->truncated, (unsigned long long)st->forced,
	       (unsigned long long)drops[IT_L_BLOCK * IT_DROP_KINDS + IT_DROP_RINGBUF],
	       (unsigned long long)(t->rec_lost + t->recs.spill_lost + tblame_lost(t->blame)));
}

static void totals(struct top *t)
{
	struct tview_row *rows = NULL;
	uint64_t cnt[IT_NR_COUNTERS];
	int n;

	drain(t, 1); /* every request left is split: the blame of the whole run */
	n = group_rows(t, t->prev, t->nr_prev, NULL, 0, t->prev_ns - t->start_ns, 1, &rows);
	if (n < 0)
		return;
	tview_sort(rows, n, t->view.sort);
	it_loader_counts(&t->ld, NULL, cnt);
	/* completions no program saw: not in the rows (docs/hooks.md, "Nested completions") */
	printf("TOTAL since the start, %d rows; block requests issued %llu, seen completing %llu\n",
	       n, (unsigned long long)cnt[IT_CNT_BLK_ISSUED],
	       (unsigned long long)cnt[IT_CNT_BLK_COMPLETED]);
	if (t->blame)
		blame_totals(t);
	tview_print_totals(stdout, rows, n, &t->view);
	free(rows);
}

static int top_start(struct top *t)
{
	char mnt[CG_PATH_MAX];
	struct ld_config c;
	int ret;

	/*
	 * Page-cache bios name their files in the block layer. Direct IO's files are
	 * the syscall layer's, which taxes every syscall on tracepoint-only kernels:
	 * loaded only when top starts per file (docs/top.md, "How").
	 */
	t->direct_files = t->group == TG_FILE;
	/* the stack layer too: a dm/md device's rows, its disks' requests named after their owner */
	t->o.layers = 1u << IT_L_BLOCK | 1u << IT_L_STACK |
		      (t->direct_files ? 1u << IT_L_SYSCALL : 0);
	/* no per-request records; --blame: a record of every block request */
	t->o.min_lat_ns = t->blame_on ? 0 : UINT64_MAX;
	t->o.live = 0;
	t->o.quiet = 1;
	cli_ld_config(&t->o, &c);
	/* the aggregation keyed by process, cgroup and file (bpf/agg.bpf.h) */
	c.agg_keys = IT_AGG_ON | IT_AGG_TGID | IT_AGG_CGROUP | IT_AGG_FILE;
	ret = it_loader_start(&t->ld, &c, stderr);
	if (!ret)
		ret = records_start(t);
	if (t->blame_on)
		t->view.blame = row_blame;
	if (ret)
		return ret;
	if (!cg_mount_point(NULL, NULL, mnt, sizeof(mnt)))
		t->cg = cg_cache_new(mnt);
	t->names = ct_names_new(NULL);
	t->start_ns = t->prev_ns = it_mono_ns();
	return 0;
}

static int top_loop(struct top *t)
{
	uint64_t next = t->start_ns + t->interval_ns;
	int ret = 0;

	term_raw(t);
	for (uint64_t i = 0; !t->iterations || i < t->iterations;) {
		if (wait_tick(t, next))
			break;
		if (it_mono_ns() >= next) { /* else a key's redraw: not an interval */
			next += t->interval_ns;
			i++;
		}
		ret = tick(t);
		if (ret)
			break;
	}
	term_restore(t);
	if (t->batch && !ret)
		totals(t);
	return ret;
}

int top_main(int argc, char **argv)
{
	struct top t = { .interval_ns = 1000000000ull };
	struct sigaction sa = { .sa_handler = on_signal };
	int ret;

	cli_defaults(&t.o);
	t.view = (struct tview_opts){ .dev_name = dev_name, .cgroup = cgroup_name, .ctx = &t };
	ret = top_parse(&t, argc, argv);
	if (ret) {
		cli_free(&t.o);
		return ret == 1 ? 0 : ret;
	}
	/* a pipe or a file gets the batch tables: no escapes, no keys (like top -b) */
	if (!isatty(STDOUT_FILENO))
		t.batch = 1;
	t.view.ansi = !t.batch;
	/* a pid of no process is refused, as the daemon does */
	ret = cli_check_start(&t.o, stderr);
	if (ret) {
		cli_free(&t.o);
		return 2;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = top_start(&t);
	if (!ret)
		ret = top_loop(&t);
	if (ret)
		it_err("top: %s", strerror(-ret));
	records_stop(&t);
	it_loader_stop(&t.ld);
	cg_cache_free(t.cg);
	ct_names_free(t.names);
	free(t.fold);
	free(t.prev);
	cli_free(&t.o);
	return ret ? 1 : 0;
}
