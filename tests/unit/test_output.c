// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/records/output.c and stages.c: synthetic corr_req requests
 * in, JSON lines (checked against docs/json.md with jq), live text lines and
 * summaries out.
 *
 * Device names come from a fake sysfs tree under mkdtemp() (7:0 -> loop0),
 * never from the real /sys. Every JSON line written is parsed by jq, one line
 * at a time (`fromjson` per raw line), so a line must be a complete object.
 */
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "records/cgroup.h"
#include "service/cli.h"
#include "records/container.h"
#include "records/corr.h"
#include "records/output.h"
#include "lib/parse.h"
#include "unit.h"

#define DEV_LOOP0 IT_MKDEV(7, 0)
#define US 1000ULL

/* A JSON string literal: S("loop0") -> "\"loop0\"" (jq tojson output). */
#define S(x) "\"" x "\""

static char g_tmp[128]; /* mkdtemp() directory: fake sysfs + jq scratch files */
static char g_sysfs[192];
static int g_have_jq;
static int g_have_sysfs;

/* ---- fake sysfs ---- */

static int mkdirs(const char *root, const char *const *dirs, int n)
{
	char p[512];

	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
		if (mkdir(p, 0755) && errno != EEXIST)
			return -errno;
	}
	return 0;
}

static int make_fake_sysfs(void)
{
	static const char *const dirs[] = {
		"sys",	     "sys/dev",		"sys/dev/block",	 "sys/dev/block/7:0",
		"sys/class", "sys/class/block", "sys/class/block/loop0",
	};
	char p[512];
	int err;

	snprintf(g_tmp, sizeof(g_tmp), "/tmp/it_test_output.XXXXXX");
	if (!mkdtemp(g_tmp))
		return -errno;
	snprintf(g_sysfs, sizeof(g_sysfs), "%s/sys", g_tmp);
	err = mkdirs(g_tmp, dirs, (int)(sizeof(dirs) / sizeof(dirs[0])));
	if (err)
		return err;
	snprintf(p, sizeof(p), "%s/dev/block/7:0/uevent", g_sysfs);
	err = unit_write_str(p, "MAJOR=7\nMINOR=0\nDEVNAME=loop0\nDEVTYPE=disk\n");
	if (err)
		return err;
	snprintf(p, sizeof(p), "%s/class/block/loop0/dev", g_sysfs);
	return unit_write_str(p, "7:0\n");
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *fw)
{
	return remove(path);
}

static void rm_tree(void)
{
	if (g_tmp[0])
		nftw(g_tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- jq ---- */

/* Run `jq ARGS -f prog input`; *outp: its stdout (malloc'd). Returns the exit status. */
static int run_jq(const char *args, const char *prog, const char *input, char **outp)
{
	char pin[256], pprog[256], cmd[1024];
	char *buf = NULL;
	size_t len = 0;
	FILE *p, *ms;
	int c, st;

	*outp = NULL;
	snprintf(pin, sizeof(pin), "%s/in.json", g_tmp);
	snprintf(pprog, sizeof(pprog), "%s/prog.jq", g_tmp);
	if (unit_write_str(pin, input) || unit_write_str(pprog, prog))
		return -1;
	snprintf(cmd, sizeof(cmd), "jq %s -f '%s' '%s' 2>/dev/null", args, pprog, pin);
	fflush(NULL);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	ms = open_memstream(&buf, &len);
	if (!ms) {
		pclose(p);
		return -1;
	}
	while ((c = fgetc(p)) != EOF)
		fputc(c, ms);
	fclose(ms);
	st = pclose(p);
	*outp = buf;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

struct jqc {
	const char *expr; /* jq expression on the line */
	const char *want; /* its value as compact JSON (tojson) */
};

/*
 * Evaluate every expression of t on the JSON text `line` (one jq run) and
 * compare each result (tojson) with its expected value.
 */
static bool check_fields(const char *line, const struct jqc *t, int n)
{
	char *prog = NULL, *res = NULL, *p;
	size_t plen = 0;
	FILE *ms;
	bool ok = true;
	int st, i;

	if (!ASSERT_TRUE(line != NULL, "line present"))
		return false;
	ms = open_memstream(&prog, &plen);
	if (!ASSERT_TRUE(ms != NULL, "open_memstream"))
		return false;
	for (i = 0; i < n; i++)
		fprintf(ms, "%s((%s) | tojson)\n", i ? ", " : "", t[i].expr);
	fclose(ms);
	st = run_jq("-r", prog, line, &res);
	free(prog);
	if (!ASSERT_EQ(st, 0, "jq exit status (line not valid JSON?)")) {
		UNIT_LOG("line: %.3000s\n", line);
		free(res);
		return false;
	}
	p = res;
	for (i = 0; i < n; i++) {
		char *nl = p ? strchr(p, '\n') : NULL;

		if (!ASSERT_TRUE(nl != NULL, "one jq output per expression")) {
			ok = false;
			break;
		}
		*nl = '\0';
		if (!ASSERT_STREQ(p, t[i].want, t[i].expr)) {
			UNIT_LOG("line: %.3000s\n", line);
			ok = false;
		}
		p = nl + 1;
	}
	free(res);
	return ok;
}

/* One number from a JSON text. */
static bool jq_u64(const char *line, const char *expr, uint64_t *v)
{
	char prog[512], *res = NULL, *end;
	int st;
	bool ok;

	snprintf(prog, sizeof(prog), "(%s) | if type == \"number\" then . else error(\"nan\") end",
		 expr);
	st = run_jq("-r", prog, line, &res);
	ok = ASSERT_EQ(st, 0, expr) && ASSERT_TRUE(res && *res, expr);
	if (ok) {
		*v = strtoull(res, &end, 10);
		ok = ASSERT_TRUE(*end == '\n' || *end == '\0', expr);
	}
	free(res);
	return ok;
}

static int count_lines(const char *buf)
{
	int n = 0;

	for (; *buf; buf++)
		n += *buf == '\n';
	return n;
}

/* Line n (0-based) of buf, malloc'd without the newline; NULL if none. */
static char *nth_line(const char *buf, int n)
{
	const char *p = buf, *e;

	for (; n > 0 && p; n--) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || !*p)
		return NULL;
	e = strchrnul(p, '\n');
	return strndup(p, (size_t)(e - p));
}

#define NWANT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* check_fields() on line `idx` of a JSON lines buffer. */
static void check_line(const char *buf, int idx, const struct jqc *t, int n)
{
	char *line = nth_line(buf, idx);

	check_fields(line, t, n);
	free(line);
}

/*
 * Every line of buf is one complete JSON object with a "type" (`jq -e .` of
 * each line, done as fromjson on raw lines), and buf has want_lines lines.
 */
static bool json_lines_valid(const char *buf, int want_lines)
{
	char *res = NULL;
	int st, n = count_lines(buf);
	bool ok;

	ok = ASSERT_EQ(n, want_lines, "JSON line count");
	ok = ASSERT_TRUE(!*buf || buf[strlen(buf) - 1] == '\n', "last JSON line ends with \\n") &&
	     ok;
	st = run_jq("-R -r",
		    "fromjson | if type == \"object\" and has(\"type\") then \"ok\" "
		    "else error(\"not an object with a type\") end",
		    buf, &res);
	ok = ASSERT_EQ(st, 0, "every line parses as a JSON object (jq -e .)") && ok;
	if (!ok)
		UNIT_LOG("json (first 2000 chars): %.2000s\n", buf);
	else
		ok = ASSERT_EQ(res ? count_lines(res) : 0, n, "jq objects");
	free(res);
	return ok;
}

/* ---- sinks and the module under test ---- */

struct sink {
	char *buf;
	size_t len;
	FILE *f;
};

static bool sink_open(struct sink *s)
{
	s->buf = NULL;
	s->len = 0;
	s->f = open_memstream(&s->buf, &s->len);
	return s->f != NULL;
}

static const char *sink_str(struct sink *s)
{
	if (!s->f)
		return "";
	fflush(s->f);
	return s->buf ? s->buf : "";
}

static void sink_close(struct sink *s)
{
	if (s->f)
		fclose(s->f);
	free(s->buf);
	s->f = NULL;
	s->buf = NULL;
}

struct env {
	struct it_opts o;
	struct sink text, json;
	struct it_out *out;
};

/* live/quiet as the options; with_json 0: json sink NULL. */
static bool env_init(struct env *e, int live, int quiet, int with_json)
{
	memset(e, 0, sizeof(*e));
	cli_defaults(&e->o);
	e->o.live = live;
	e->o.quiet = quiet;
	e->o.sysfs_root = g_sysfs;
	if (!ASSERT_TRUE(sink_open(&e->text), "open_memstream text"))
		return false;
	if (with_json && !ASSERT_TRUE(sink_open(&e->json), "open_memstream json"))
		return false;
	e->out = out_new(cli_out_config(&e->o, &(struct out_config){ 0 }), e->text.f,
			 with_json ? e->json.f : NULL, 0);
	return ASSERT_TRUE(e->out != NULL, "out_new");
}

static void env_done(struct env *e)
{
	out_free(e->out);
	e->out = NULL;
	sink_close(&e->text);
	sink_close(&e->json);
	cli_free(&e->o);
}

static bool need_jq(void)
{
	if (!g_have_jq || !g_have_sysfs) {
		SKIP("jq not installed or no fake sysfs");
		return false;
	}
	return true;
}

/* r written as JSON lines alone: one valid line that meets want (SKIP without jq). */
static void check_request(struct corr_req *r, const struct jqc *want, int n)
{
	struct env e;

	if (!need_jq())
		return;
	if (!env_init(&e, 0, 0, 1))
		goto out;
	out_request(r, e.out);
	if (json_lines_valid(sink_str(&e.json), 1))
		check_line(sink_str(&e.json), 0, want, n);
out:
	env_done(&e);
}

/* ---- record builders ---- */

static struct it_task mk_task(uint32_t pid, uint32_t tid, const char *comm)
{
	struct it_task t;

	memset(&t, 0, sizeof(t));
	t.pid = pid;
	t.tid = tid;
	t.cgroup_id = 1234;
	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	return t;
}

/* The pread64 of docs/json.md: 1000 -> 61000, one bio 2000 -> 58000. */
static struct it_syscall_rec mk_pread(void)
{
	struct it_syscall_rec s;

	memset(&s, 0, sizeof(s));
	s.hdr.type = IT_REC_SYSCALL;
	s.hdr.size = sizeof(s);
	s.task = mk_task(1200, 1201, "fio");
	s.seq = 5;
	s.enter_ns = 1000;
	s.exit_ns = 61000;
	s.ret = 4096;
	s.offset = 40960;
	s.bytes = 4096;
	s.ino = 123;
	s.dev = DEV_LOOP0;
	s.sys = IT_SYS_PREAD64;
	s.op = IT_OP_READ;
	s.flags = IT_F_DIO | IT_F_SAMPLED | IT_F_SCHED_CNT | IT_F_SCHED_SW;
	s.nr_bios = 1;
	s.cache_miss_pages = 0;
	s.dio_count = 1;
	s.first_q_ns = 2000;
	s.offcpu_ns = 50000;
	s.offcpu_blocked_ns = 49000;
	s.nr_switches = 1;
	s.waker_tid = 88;
	snprintf(s.waker_comm, sizeof(s.waker_comm), "kworker/1:1H");
	s.runq_ns = 700;
	s.nr_preempt = 2;
	return s;
}

static struct it_block_rec mk_blk(uint32_t pid, uint32_t tid, uint8_t origin, uint8_t op,
				  uint64_t sector, uint32_t bytes, uint64_t q, uint64_t g,
				  uint64_t i, uint64_t d, uint64_t c, uint32_t flags)
{
	struct it_block_rec b;

	memset(&b, 0, sizeof(b));
	b.hdr.type = IT_REC_BLOCK;
	b.hdr.size = sizeof(b);
	b.task = mk_task(pid, tid, "fio");
	b.origin = origin;
	b.op = op;
	b.sector = sector;
	b.bytes = bytes;
	b.q_ns = q;
	b.g_ns = g;
	b.i_ns = i;
	b.d_ns = d;
	b.c_ns = c;
	b.flags = flags;
	b.dev = DEV_LOOP0;
	b.ino = 123;
	return b;
}

/* The bio of the documented pread64: q 2000 g 2500 (no insert) d 3000 c 58000. */
static struct it_block_rec mk_pread_bio(void)
{
	struct it_block_rec b = mk_blk(1200, 1201, IT_ORIG_SYSCALL, IT_OP_READ, 80, 4096, 2000,
				       2500, 0, 3000, 58000, IT_F_HAS_Q | IT_F_HAS_G);

	b.seq = 5;
	return b;
}

static struct corr_req mk_req(enum corr_kind kind, uint64_t id)
{
	struct corr_req r;

	memset(&r, 0, sizeof(r));
	r.kind = kind;
	r.id = id;
	return r;
}

/* ---- tests: request lines ---- */

static void test_syscall_json_fields(void)
{
	struct it_syscall_rec s = mk_pread();
	struct it_block_rec b = mk_pread_bio();
	struct corr_req r = mk_req(CORR_SYSCALL, 42);
	struct env e;
	static const struct jqc want[] = {
		{ ".type", S("request") },
		{ ".id", "42" },
		{ ".kind", S("syscall") },
		{ ".ts_ns", "1000" },
		{ ".pid", "1200" },
		{ ".tid", "1201" },
		{ ".comm", S("fio") },
		{ ".cgroup_id", "1234" },
		{ ".syscall", S("pread64") },
		{ ".op", S("read") },
		{ ".dev", S("loop0") },
		{ ".devno", S("7:0") },
		{ ".ino", "123" },
		{ ".offset", "40960" },
		{ ".bytes", "4096" },
		{ ".ret", "4096" },
		{ ".lat_ns", "60000" },
		{ ".fs.dio", "true" },
		{ ".fs.cache_miss_pages", "0" },
		{ ".fs.pre_block_ns", "1000" },
		{ ".fs.post_block_ns", "3000" },
		{ ".fs | has(\"vfs_ns\")", "false" },
		{ ".sched.offcpu_ns", "50000" },
		{ ".sched.offcpu_blocked_ns", "49000" },
		{ ".sched.switches", "1" },
		{ ".sched.preempted", "2" },
		{ ".sched.runq_ns", "700" },
		{ ".sched.waker_tid", "88" },
		{ ".sched.waker_comm", S("kworker/1:1H") },
		{ ".block | length", "1" },
		{ ".block[0].dev", S("loop0") },
		{ ".block[0].devno", S("7:0") },
		{ ".block[0].op", S("read") },
		{ ".block[0].sector", "80" },
		{ ".block[0].nr_sectors", "8" },
		{ ".block[0].bytes", "4096" },
		{ ".block[0].q_ns", "2000" },
		{ ".block[0].q2g_ns", "500" },
		{ ".block[0].g2i_ns", "0" },
		{ ".block[0].i2d_ns", "500" },
		{ ".block[0].d2c_ns", "55000" },
		{ ".block[0].q2c_ns", "56000" },
		{ ".block[0].merged", "0" },
		{ ".block[0].error", "0" },
		{ ".block[0].origin", S("syscall") },
		{ "has(\"parent\")", "false" },
		{ "has(\"uring\")", "false" },
		{ "has(\"aio\")", "false" },
		{ "has(\"block_apart\")", "false" },
	};

	if (!need_jq())
		return;
	if (!env_init(&e, 0, 0, 1))
		goto out;
	r.sys = &s;
	r.blocks[0] = &b;
	r.nr_blocks = 1;
	out_request(&r, e.out);
	ASSERT_EQ(out_requests(e.out), 1ULL, "out_requests");
	ASSERT_EQ(out_error(e.out), 0, "out_error");
	if (!json_lines_valid(sink_str(&e.json), 1))
		goto out;
	check_line(sink_str(&e.json), 0, want, NWANT(want));
	ASSERT_STREQ(sink_str(&e.text), "", "no live output with live=0");
out:
	env_done(&e);
}

/* Several children, btt stages with insert, vfs_ns, and syscalls without blocks. */
static void test_syscall_json_variants(void)
{
	struct it_syscall_rec s = mk_pread();
	/* arrival order: the latest completion (58000) is neither first nor last */
	struct it_block_rec b1 = mk_blk(1200, 1201, IT_ORIG_SYSCALL, IT_OP_READ, 200, 8192, 2500,
					2600, 2900, 4000, 58000,
					IT_F_HAS_Q | IT_F_HAS_G | IT_F_HAS_I);
	struct it_block_rec b2 = mk_blk(1200, 1201, IT_ORIG_SYSCALL, IT_OP_READ, 80, 4096, 2000, 0,
					2300, 2400, 40000, IT_F_HAS_Q | IT_F_HAS_I);
	struct it_block_rec b3 = mk_blk(1200, 1201, IT_ORIG_SYSCALL, IT_OP_READ, 300, 4096, 2700,
					2800, 0, 2900, 50000, IT_F_HAS_Q | IT_F_HAS_G);
	struct corr_req r = mk_req(CORR_SYSCALL, 1);
	struct env e;
	static const struct jqc want_two[] = {
		{ ".fs.pre_block_ns", "1000" },
		{ ".fs.post_block_ns", "3000" }, /* 61000 - max c 58000 (2nd child) */
		{ ".fs.vfs_ns", "59000" },
		{ ".fs.cache_miss_pages", "3" },
		{ ".fs.dio", "false" },
		{ "has(\"sched\")", "false" }, /* no IT_F_SCHED_*: the layer was off */
		{ ".nr_bios", "3" },
		{ ".block | length", "3" },
		{ "[.block[] | .sector]", "[80,200,300]" },
		{ ".block[1].nr_sectors", "16" },
		{ ".block[1].q2g_ns", "100" },
		{ ".block[1].g2i_ns", "300" },
		{ ".block[1].i2d_ns", "1100" },
		{ ".block[1].d2c_ns", "54000" },
		{ ".block[1].q2c_ns", "55500" },
		/* no getrq: q2g and g2i cannot be measured; i2d from the insert */
		{ ".block[0] | has(\"q2g_ns\")", "false" },
		{ ".block[0] | has(\"g2i_ns\")", "false" },
		{ ".block[0].i2d_ns", "100" },
		{ ".block[0].d2c_ns", "37600" },
		{ ".block[0].q2c_ns", "38000" },
		{ ".block[2].g2i_ns", "0" },
	};
	static const struct jqc want_none[] = {
		{ ".kind", S("syscall") },
		{ ".syscall", S("fsync") },
		{ ".op", S("sync") },
		{ ".lat_ns", "60000" },
		{ ".ret", "-5" },
		{ ".block", "[]" },
		{ ".fs | has(\"pre_block_ns\")", "false" },
		{ ".fs | has(\"post_block_ns\")", "false" },
		{ ".sched | has(\"waker_tid\")", "false" },
		{ ".sched | has(\"waker_comm\")", "false" },
		{ ".sched.offcpu_ns", "0" },
		{ ".sched.runq_ns", "700" },
	};
	static const struct jqc want_late[] = {
		/* sched from the task counters alone (no --sched-switch) */
		{ ".sched | keys", "[\"preempted\",\"runq_ns\",\"switches\"]" },
		/* first bio queued before enter / completed after exit: unmeasurable */
		{ ".fs | has(\"pre_block_ns\")", "false" },
		{ ".fs | has(\"post_block_ns\")", "false" },
		{ ".lat_ns", "60000" },
	};

	if (!need_jq())
		return;
	if (!env_init(&e, 0, 0, 1))
		goto out;
	s.flags = 0;
	s.vfs_ns = 59000;
	s.cache_miss_pages = 3;
	s.nr_bios = 3;
	r.sys = &s;
	r.blocks[0] = &b2;
	r.blocks[1] = &b1;
	r.blocks[2] = &b3;
	r.nr_blocks = 3;
	out_request(&r, e.out);

	s = mk_pread();
	s.sys = IT_SYS_FSYNC;
	s.op = IT_OP_SYNC;
	s.ret = -5;
	s.first_q_ns = 0;
	s.nr_bios = 0;
	s.offcpu_ns = 0;
	s.offcpu_blocked_ns = 0;
	s.nr_switches = 0;
	s.waker_tid = 0;
	memset(s.waker_comm, 0, sizeof(s.waker_comm));
	r = mk_req(CORR_SYSCALL, 2);
	r.sys = &s;
	out_request(&r, e.out);

	{
		struct it_syscall_rec s_late = mk_pread();
		struct it_block_rec b_late = mk_pread_bio();

		s_late.first_q_ns = 500; /* before enter (1000) */
		s_late.flags &= ~IT_F_SCHED_SW;
		s_late.waker_tid = 0;
		b_late.c_ns = 70000; /* after exit (61000) */
		r = mk_req(CORR_SYSCALL, 3);
		r.sys = &s_late;
		r.blocks[0] = &b_late;
		r.nr_blocks = 1;
		out_request(&r, e.out);
	}

	ASSERT_EQ(out_requests(e.out), 3ULL, "out_requests");
	if (!json_lines_valid(sink_str(&e.json), 3))
		goto out;
	check_line(sink_str(&e.json), 0, want_two, NWANT(want_two));
	check_line(sink_str(&e.json), 1, want_none, NWANT(want_none));
	check_line(sink_str(&e.json), 2, want_late, NWANT(want_late));
out:
	env_done(&e);
}

/* The insert not hooked (no --block-insert): one g2d stage in place of g2i and i2d. */
static void test_block_json_no_insert(void)
{
	struct it_syscall_rec s = mk_pread();
	struct it_block_rec b1 = mk_blk(1200, 1201, IT_ORIG_SYSCALL, IT_OP_READ, 80, 4096, 2500,
					2600, 0, 4000, 58000, IT_F_HAS_Q | IT_F_HAS_G | IT_F_NO_I);
	struct it_block_rec b2 = mk_blk(1200, 1201, IT_ORIG_SYSCALL, IT_OP_READ, 200, 4096, 2700, 0,
					0, 2900, 50000, IT_F_HAS_Q | IT_F_NO_I);
	struct corr_req r = mk_req(CORR_SYSCALL, 1);
	static const struct jqc want[] = {
		{ ".block | length", "2" },
		{ ".block[0].q2g_ns", "100" },
		{ ".block[0].g2d_ns", "1400" },
		{ ".block[0] | has(\"g2i_ns\") or has(\"i2d_ns\")", "false" },
		{ ".block[0].q2d_ns", "1500" },
		{ ".block[0].d2c_ns", "54000" },
		/* no getrq: no g2d either, q2d still */
		{ ".block[1] | has(\"g2d_ns\") or has(\"g2i_ns\") or has(\"i2d_ns\")", "false" },
		{ ".block[1].q2d_ns", "200" },
	};

	s.nr_bios = 2;
	r.sys = &s;
	r.blocks[0] = &b1;
	r.blocks[1] = &b2;
	r.nr_blocks = 2;
	check_request(&r, want, NWANT(want));
}

/*
 * A flusher's write of page-cache pages (IT_F_WB): the request is the
 * dirtier's, the flusher stays in block[].pid, and block[].dirty says whose
 * bytes, why some are unknown, and how long they waited (age = q - first).
 */
static void test_block_json_writeback(void)
{
	struct it_block_rec b = mk_blk(88, 88, IT_ORIG_WRITEBACK, IT_OP_WRITE, 2048, 65536, 10000,
				       0, 0, 10500, 30000, IT_F_HAS_Q | IT_F_NO_I | IT_F_WB);
	struct corr_req r = mk_req(CORR_BLOCK, 7);
	static const struct jqc want[] = {
		{ ".kind", "\"block\"" },
		{ ".pid", "1500" },
		{ ".comm", "\"dd\"" },
		{ ".cgroup_id", "77" },
		{ ".block[0].pid", "88" },
		{ ".block[0].blkcg_id", "78" },
		{ ".block[0].dirty.pid", "1500" },
		{ ".block[0].dirty.tid", "1501" },
		{ ".block[0].dirty.bytes", "49152" },
		{ ".block[0].dirty.other_pid", "1600" },
		{ ".block[0].dirty.other_bytes", "8192" },
		{ ".block[0].dirty.unknown_bytes", "8192" },
		{ ".block[0].dirty.unknown", "[\"not_noted\",\"many\"]" },
		{ ".block[0].dirty.age_ns", "9000" },
		{ ".block[0].dirty.age_min_ns", "4000" },
		{ ".block[0].dirty.file_devno", "\"7:0\"" },
	};

	b.wb.dirtier = mk_task(1500, 1501, "dd");
	b.wb.dirtier.cgroup_id = 77;
	b.wb.blkcg_id = 78;
	b.wb.bytes = 49152;
	b.wb.other_pid = 1600;
	b.wb.other_bytes = 8192;
	b.wb.unknown_bytes = 8192;
	b.wb.unknown_why = IT_WB_NOT_NOTED | IT_WB_MANY;
	b.wb.dirty_first_ns = 1000;
	b.wb.dirty_last_ns = 6000;
	b.wb.file_dev = DEV_LOOP0;
	r.blocks[0] = &b;
	r.nr_blocks = 1;
	check_request(&r, want, NWANT(want));
}

/*
 * The same request split over its file's dirtiers (--writeback files,
 * bpf/wbfile.bpf.h): by "file", and shared when the file had several.
 */
static void test_block_json_writeback_file(void)
{
	struct it_block_rec b = mk_blk(88, 88, IT_ORIG_WRITEBACK, IT_OP_WRITE, 2048, 65536, 10000,
				       0, 0, 10500, 30000, IT_F_HAS_Q | IT_F_NO_I | IT_F_WB);
	struct corr_req r = mk_req(CORR_BLOCK, 7);
	static const struct jqc want[] = {
		{ ".pid", "1500" },
		{ ".block[0].dirty.by", "\"file\"" },
		{ ".block[0].dirty.shared", "true" },
		{ ".block[0].dirty.bytes", "40960" },
		{ ".block[0].dirty.other_bytes", "24576" },
		{ ".block[0].dirty | has(\"unknown\")", "false" },
		{ ".block[0].dirty.age_ns", "9000" },
	};

	b.wb.dirtier = mk_task(1500, 1501, "dd");
	b.wb.bytes = 40960;
	b.wb.other_pid = 1600;
	b.wb.other_bytes = 24576;
	b.wb.dirty_first_ns = 1000;
	b.wb.mode = IT_WBM_FILE | IT_WBM_SHARED;
	r.blocks[0] = &b;
	r.nr_blocks = 1;
	check_request(&r, want, NWANT(want));
}

/*
 * A flush carries the kernel's "no sector" (blk_rq_init: (sector_t)-1): no
 * offset and no sector, not -1 shifted by 9 and wrapped.
 */
static void test_block_json_flush(void)
{
	struct it_block_rec b = mk_blk(70, 70, IT_ORIG_NONE, IT_OP_SYNC, UINT64_MAX, 0, 100, 0, 0,
				       200, 900, IT_F_HAS_Q);
	struct corr_req r = mk_req(CORR_BLOCK, 7);
	static const struct jqc want[] = {
		{ ".op", S("sync") },
		{ "has(\"offset\")", "false" },
		{ ".block[0] | has(\"sector\")", "false" },
		{ ".block[0].nr_sectors", "0" },
		{ ".bytes", "0" },
		{ ".lat_ns", "800" },
	};

	r.blocks[0] = &b;
	r.nr_blocks = 1;
	check_request(&r, want, NWANT(want));
}

/*
 * A buffered write adds the pages it writes to the cache: no misses. The
 * field is a read's; a write has none.
 */
static void test_write_json_no_cache_miss(void)
{
	struct it_syscall_rec s = mk_pread();
	struct corr_req r = mk_req(CORR_SYSCALL, 8);
	static const struct jqc want[] = {
		{ ".op", S("write") },
		{ ".offset", "40960" },
		{ ".fs | has(\"cache_miss_pages\")", "false" },
	};
	static const struct jqc want_read[] = {
		{ ".op", S("read") },
		{ ".fs.cache_miss_pages", "256" },
	};

	s.flags = IT_F_SAMPLED;
	s.nr_bios = 0;
	s.cache_miss_pages = 256;
	s.sys = IT_SYS_PWRITE64;
	s.op = IT_OP_WRITE;
	r.sys = &s;
	check_request(&r, want, NWANT(want));
	s.sys = IT_SYS_PREAD64;
	s.op = IT_OP_READ;
	check_request(&r, want_read, NWANT(want_read));
}

static void test_uring_json(void)
{
	struct it_uring_rec u;
	struct it_block_rec b = mk_blk(300, 301, IT_ORIG_URING, IT_OP_READ, 16, 8192, 11000, 0, 0,
				       12000, 29000, IT_F_HAS_Q);
	struct corr_req r = mk_req(CORR_URING, 7);
	static const struct jqc want[] = {
		{ ".type", S("request") },
		{ ".id", "7" },
		{ ".kind", S("io_uring") },
		{ ".ts_ns", "10000" },
		{ ".pid", "300" },
		{ ".tid", "301" },
		{ ".comm", S("uring") },
		{ ".op", S("read") },
		{ ".dev", S("loop0") },
		{ ".devno", S("7:0") },
		{ ".ino", "55" },
		{ ".ret", "4096" },
		{ ".lat_ns", "20000" },
		{ ".uring.user_data", "77" },
		{ ".uring.opcode", "22" },
		{ ".uring.res", "4096" },
		{ ".uring.submit_ns", "10000" },
		{ ".uring.complete_ns", "30000" },
		{ "has(\"syscall\")", "false" },
		{ "has(\"fs\")", "false" },
		{ "has(\"sched\")", "false" },
		{ "has(\"aio\")", "false" },
		{ "has(\"parent\")", "false" },
		{ ".block | length", "1" },
		{ ".block[0].origin", S("io_uring") },
		{ ".block[0] | has(\"q2g_ns\")", "false" },
		{ ".block[0] | has(\"g2i_ns\")", "false" },
		{ ".block[0] | has(\"i2d_ns\")", "false" },
		{ ".block[0].q2d_ns", "1000" },
		{ ".block[0].d2c_ns", "17000" },
		{ ".block[0].q2c_ns", "18000" },
	};

	memset(&u, 0, sizeof(u));
	u.hdr.type = IT_REC_URING;
	u.hdr.size = sizeof(u);
	u.task = mk_task(300, 301, "uring");
	u.req = 0xffff888012345678ULL;
	u.user_data = 77;
	u.submit_ns = 10000;
	u.complete_ns = 30000;
	u.ino = 55;
	u.res = 4096;
	u.dev = DEV_LOOP0;
	u.opcode = 22; /* IORING_OP_READ */
	u.op = IT_OP_READ;
	b.origin_id = u.req;
	r.uring = &u;
	r.blocks[0] = &b;
	r.nr_blocks = 1;
	check_request(&r, want, NWANT(want));
}

static void test_aio_json(void)
{
	struct it_block_rec b = mk_blk(400, 401, IT_ORIG_SYSCALL, IT_OP_WRITE, 2048, 4096, 6000, 0,
				       0, 6500, 20000, IT_F_HAS_Q);
	struct corr_req r = mk_req(CORR_AIO, 9);
	struct env e;
	static const struct jqc want_reaped[] = {
		{ ".kind", S("aio") },
		{ ".id", "9" },
		{ ".syscall", S("io_submit") },
		{ ".op", S("write") },
		{ ".ts_ns", "5000" },
		{ ".pid", "400" },
		{ ".tid", "401" },
		{ ".comm", S("aio") },
		{ ".dev", S("loop0") },
		{ ".devno", S("7:0") },
		{ ".offset", "1048576" },
		{ ".bytes", "4096" },
		{ ".ret", "4096" },
		{ ".lat_ns", "20000" },
		{ ".aio.iocb", S("0x7f00dead0000") },
		{ ".aio.submit_ns", "5000" },
		{ ".aio.reap_ns", "25000" },
		{ ".aio.res", "4096" },
		{ "has(\"fs\")", "false" },
		{ "has(\"uring\")", "false" },
		{ ".block | length", "1" },
		{ ".block[0].op", S("write") },
		{ ".block[0].d2c_ns", "13500" },
		{ ".block[0].q2c_ns", "14000" },
	};
	static const struct jqc want_unreaped[] = {
		{ ".kind", S("aio") },
		{ ".op", S("read") },
		{ ".ts_ns", "5000" },
		{ "has(\"lat_ns\")", "false" },
		{ ".aio.iocb", S("0x7f00dead0040") },
		{ ".aio.submit_ns", "5000" },
		{ ".aio | has(\"reap_ns\")", "false" },
		{ ".aio | has(\"res\")", "false" },
		{ ".block", "[]" },
	};
	static const struct jqc want_sync[] = {
		{ ".op", S("sync") },
		{ ".lat_ns", "1000" },
		{ "has(\"dev\")", "false" }, /* dev 0: unknown */
		{ "has(\"devno\")", "false" },
	};

	if (!need_jq())
		return;
	if (!env_init(&e, 0, 0, 1))
		goto out;
	r.aio.task = mk_task(400, 401, "aio");
	r.aio.seq = 3;
	r.aio.iocb.iocb = 0x7f00dead0000ULL;
	r.aio.iocb.offset = 1048576;
	r.aio.iocb.nbytes = 4096;
	r.aio.iocb.res = 4096;
	r.aio.iocb.fd = 5;
	r.aio.iocb.dev = DEV_LOOP0;
	r.aio.iocb.opcode = 1; /* IOCB_CMD_PWRITE */
	r.aio.submit_ns = 5000;
	r.aio.reap_ns = 25000;
	r.aio.res = 4096;
	r.aio.reaped = 1;
	r.blocks[0] = &b;
	r.nr_blocks = 1;
	out_request(&r, e.out);

	r.id = 10;
	r.aio.iocb.iocb = 0x7f00dead0040ULL;
	r.aio.iocb.opcode = 7; /* IOCB_CMD_PREADV */
	r.aio.iocb.res = 0;
	r.aio.reap_ns = 0;
	r.aio.res = 0;
	r.aio.reaped = 0;
	r.nr_blocks = 0;
	r.blocks[0] = NULL;
	out_request(&r, e.out);

	r.id = 11;
	r.aio.iocb.opcode = 3; /* IOCB_CMD_FDSYNC */
	r.aio.iocb.dev = 0;
	r.aio.reaped = 1;
	r.aio.reap_ns = 6000;
	out_request(&r, e.out);

	if (!json_lines_valid(sink_str(&e.json), 3))
		goto out;
	check_line(sink_str(&e.json), 0, want_reaped, NWANT(want_reaped));
	check_line(sink_str(&e.json), 1, want_unreaped, NWANT(want_unreaped));
	check_line(sink_str(&e.json), 2, want_sync, NWANT(want_sync));
out:
	env_done(&e);
}

static void test_block_json(void)
{
	/* late readahead of the pread (id 42): insert seen, 3 bios merged */
	struct it_block_rec ra = mk_blk(1200, 1201, IT_ORIG_SYSCALL, IT_OP_READ, 1000, 131072,
					70000, 70100, 70300, 71000, 90000,
					IT_F_HAS_Q | IT_F_HAS_G | IT_F_HAS_I);
	/* writeback by a kworker, failed with EIO */
	struct it_block_rec wb = mk_blk(50, 50, IT_ORIG_WRITEBACK, IT_OP_WRITE, 4096, 65536, 1000,
					0, 0, 1500, 9000, IT_F_HAS_Q | IT_F_ERROR);
	/* completed without an issue (d_ns unknown): d2c, i2d, g2i unmeasurable */
	struct it_block_rec nod = mk_blk(60, 61, IT_ORIG_NONE, IT_OP_DISCARD, 8, 512, 100, 200, 0,
					 0, 5000, IT_F_HAS_Q | IT_F_HAS_G);
	struct corr_req r = mk_req(CORR_BLOCK, 43);
	struct env e;
	static const struct jqc want_ra[] = {
		{ ".kind", S("block") },
		{ ".id", "43" },
		{ ".ts_ns", "70000" },
		{ ".lat_ns", "20000" },
		{ ".pid", "1200" },
		{ ".tid", "1201" },
		{ ".op", S("read") },
		{ ".dev", S("loop0") },
		{ ".devno", S("7:0") },
		{ ".offset", "512000" },
		{ ".bytes", "131072" },
		{ ".ret", "0" },
		{ ".parent.id", "42" },
		{ ".parent.tid", "1201" },
		{ ".parent.seq", "5" },
		{ "has(\"syscall\")", "false" },
		{ "has(\"fs\")", "false" },
		{ "has(\"sched\")", "false" },
		{ ".block | length", "1" },
		{ ".block[0].nr_sectors", "256" },
		{ ".block[0].q_ns", "70000" },
		{ ".block[0].q2g_ns", "100" },
		{ ".block[0].g2i_ns", "200" },
		{ ".block[0].i2d_ns", "700" },
		{ ".block[0].d2c_ns", "19000" },
		{ ".block[0].q2c_ns", "20000" },
		{ ".block[0].merged", "3" },
		{ ".block[0].origin", S("syscall") },
	};
	static const struct jqc want_wb[] = {
		{ ".kind", S("block") },
		{ "has(\"parent\")", "false" },
		{ ".op", S("write") },
		{ ".comm", S("kworker/u8:2") },
		{ ".pid", "50" },
		{ ".ino", "777" },
		{ ".ret", "-5" },
		{ ".lat_ns", "8000" },
		{ ".block[0].origin", S("writeback") },
		{ ".block[0].error", "-5" },
		{ ".block[0] | has(\"q2g_ns\")", "false" },
		{ ".block[0] | has(\"i2d_ns\")", "false" },
		{ ".block[0].q2d_ns", "500" },
		{ ".block[0].d2c_ns", "7500" },
		{ ".block[0].q2c_ns", "8000" },
	};
	static const struct jqc want_nod[] = {
		{ ".op", S("discard") },
		{ ".lat_ns", "4900" },
		{ ".block[0].origin", S("none") },
		{ ".block[0].q2g_ns", "100" },
		{ ".block[0] | has(\"d2c_ns\")", "false" },
		{ ".block[0] | has(\"i2d_ns\")", "false" },
		{ ".block[0] | has(\"g2i_ns\")", "false" },
		{ ".block[0].q2c_ns", "4900" },
		{ ".block_apart", "3" },
	};

	if (!need_jq())
		return;
	if (!env_init(&e, 0, 0, 1))
		goto out;
	ra.seq = 5;
	ra.nr_merged = 3;
	r.blocks[0] = &ra;
	r.nr_blocks = 1;
	r.parent.id = 42;
	r.parent.tid = 1201;
	r.parent.seq = 5;
	r.parent.valid = 1;
	out_request(&r, e.out);

	wb.task = mk_task(50, 50, "kworker/u8:2");
	wb.origin_id = 777;
	wb.ino = 777;
	wb.error = -5;
	r = mk_req(CORR_BLOCK, 44);
	r.blocks[0] = &wb;
	r.nr_blocks = 1;
	out_request(&r, e.out);

	r = mk_req(CORR_BLOCK, 45);
	r.blocks[0] = &nod;
	r.nr_blocks = 1;
	r.nr_blocks_apart = 3;
	out_request(&r, e.out);

	/* a block request without a block record: nothing to write */
	r = mk_req(CORR_BLOCK, 46);
	out_request(&r, e.out);

	ASSERT_EQ(out_requests(e.out), 3ULL, "out_requests (empty block request skipped)");
	if (!json_lines_valid(sink_str(&e.json), 3))
		goto out;
	check_line(sink_str(&e.json), 0, want_ra, NWANT(want_ra));
	check_line(sink_str(&e.json), 1, want_wb, NWANT(want_wb));
	check_line(sink_str(&e.json), 2, want_nod, NWANT(want_nod));
out:
	env_done(&e);
}

/* Strings that need escaping, and a device with no sysfs entry. */
static void test_json_escaping_and_unknown_dev(void)
{
	struct it_syscall_rec s = mk_pread();
	struct corr_req r = mk_req(CORR_SYSCALL, 1);
	static const struct jqc want[] = {
		{ ".comm", "\"a\\\"b\\\\c\\t\xc3\xbf\"" }, /* 0xff read as Latin-1 */
		{ ".sched.waker_comm", "\"0123456789abcdef\"" },
		{ ".devno", S("8:16") },
		{ ".dev | type", S("string") },
	};

	memcpy(s.task.comm, "a\"b\\c\t\xff", 8);
	memcpy(s.waker_comm, "0123456789abcdef", IT_COMM_LEN); /* no NUL */
	s.dev = IT_MKDEV(8, 16);
	r.sys = &s;
	check_request(&r, want, NWANT(want));
}

/* output.h: out_error() reports JSON write errors. */
/*
 * A request from a kubepods container: the decoded fields from the path alone,
 * then the pod's and container's names from a kubelet fixture (docs/json.md).
 */
static void test_container_json(void)
{
	static const char id[] = "4f3a9c1d2e5b6a7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7";
	static const char uid[] = "2b1f5e7c-9d3a-4c8b-a1e2-f3d4c5b6a798";
	char root[] = "/tmp/it_test_ctjson.XXXXXX", path[512], cmd[1024];
	struct it_syscall_rec sc = mk_pread();
	struct corr_req r = mk_req(CORR_SYSCALL, 42);
	struct cg_cache *cg = cg_cache_new(NULL);
	struct ct_names *names = NULL;
	struct env e;
	static const struct jqc ids[] = {
		{ ".runtime", S("kubepods") },
		{ ".container_id",
		  S("4f3a9c1d2e5b6a7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7") },
		{ ".pod_uid", S("2b1f5e7c-9d3a-4c8b-a1e2-f3d4c5b6a798") },
		{ ".qos", S("burstable") },
		{ "has(\"pod\") or has(\"container\") or has(\"namespace\")", "false" },
	};
	static const struct jqc named[] = {
		{ ".container_id",
		  S("4f3a9c1d2e5b6a7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7") },
		{ ".container", S("redis") },
		{ ".pod", S("cart-7d9f") },
		{ ".namespace", S("shop") },
	};

	r.sys = &sc;
	if (!need_jq() || !ASSERT_TRUE(cg && mkdtemp(root), "cache, temp dir"))
		goto out;
	snprintf(path, sizeof(path), "/kubepods/burstable/pod%s/%s", uid, id);
	cg_cache_put(cg, 1234, path);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s/var/log/pods/shop_cart-7d9f_%s/redis %s/var/log/containers && "
		 "touch %s/var/log/containers/cart-7d9f_shop_redis-%s.log",
		 root, uid, root, root, id);
	if (!ASSERT_OK(system(cmd), "fixture"))
		goto out;
	for (int pass = 0; pass < 2; pass++) {
		if (!env_init(&e, 0, 0, 1))
			break;
		if (pass)
			names = ct_names_new(root);
		out_set_cgroups(e.out, cg);
		out_set_names(e.out, names);
		out_request(&r, e.out);
		if (json_lines_valid(sink_str(&e.json), 1)) {
			if (pass)
				check_line(sink_str(&e.json), 0, named, NWANT(named));
			else
				check_line(sink_str(&e.json), 0, ids, NWANT(ids));
		}
		env_done(&e);
	}
out:
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", root);
	ct_names_free(names);
	cg_cache_free(cg);
}

static void test_json_write_error(void)
{
	struct it_syscall_rec s = mk_pread();
	struct corr_req r = mk_req(CORR_SYSCALL, 1);
	struct it_opts o;
	struct it_out *out;
	FILE *ro;
	uint64_t drops[IT_NR_DROPS] = { 0 };
	struct corr_stats cs;
	struct out_summary_in in;

	cli_defaults(&o);
	o.live = 0;
	o.sysfs_root = g_sysfs;
	memset(&cs, 0, sizeof(cs));
	memset(&in, 0, sizeof(in));
	in.drops = drops;
	in.corr = &cs;
	r.sys = &s;

	/* a stream not open for writing: every write fails at once */
	ro = fopen("/dev/null", "r");
	if (!ASSERT_TRUE(ro != NULL, "fopen /dev/null"))
		return;

	out = out_new(cli_out_config(&o, &(struct out_config){ 0 }), NULL, ro, 0);
	if (ASSERT_TRUE(out != NULL, "out_new")) {
		ASSERT_EQ(out_error(out), 0, "no error before writing");
		out_request(&r, out);
		ASSERT_NEQ(out_error(out), 0, "request write error reported");
		ASSERT_EQ(out_requests(out), 1ULL, "request counted");
	}
	out_free(out);

	clearerr(ro);
	out = out_new(cli_out_config(&o, &(struct out_config){ 0 }), NULL, ro, 0);
	if (ASSERT_TRUE(out != NULL, "out_new")) {
		out_summary(out, &in);
		ASSERT_NEQ(out_error(out), 0, "summary write error reported");
	}
	out_free(out);

	clearerr(ro);
	out = out_new(cli_out_config(&o, &(struct out_config){ 0 }), NULL, ro, 0);
	if (ASSERT_TRUE(out != NULL, "out_new")) {
		out_attach(out, "block", "block_rq_issue", "tp_btf", OUT_HS_ATTACHED, NULL);
		ASSERT_NEQ(out_error(out), 0, "attach write error reported");
	}
	out_free(out);
	fclose(ro);
	cli_free(&o);
}

/* ---- attach ---- */

static void test_attach(void)
{
	struct env e;
	char *line;
	static const struct jqc want_ok[] = {
		{ ".type", S("attach") },
		{ ".layer", S("block") },
		{ ".hook", S("block_rq_issue") },
		{ ".method", S("tp_btf") },
		{ ".ok", "true" },
		{ "has(\"reason\")", "false" },
	};
	static const struct jqc want_fail[] = {
		{ ".type", S("attach") },   { ".layer", S("fs") },
		{ ".hook", S("vfs_read") }, { ".method", S("fentry") },
		{ ".ok", "false" },	    { ".reason", S("attach failed: EPERM") },
		{ ".state", S("failed") },
	};

	if (!need_jq())
		return;
	if (!env_init(&e, 1, 0, 1))
		goto out;
	out_attach(e.out, "block", "block_rq_issue", "tp_btf", OUT_HS_ATTACHED, NULL);
	out_attach(e.out, "fs", "vfs_read", "fentry", OUT_HS_FAILED, "attach failed: EPERM");
	/* attached, with what it gives up on this kernel (a 5.10 thread state) */
	out_attach(e.out, "syscall", "thread_state", "hash", OUT_HS_ATTACHED,
		   "an LRU hash of 16384 threads");
	if (!json_lines_valid(sink_str(&e.json), 3))
		goto out;
	line = nth_line(sink_str(&e.json), 0);
	ASSERT_STREQ(line,
		     "{\"type\":\"attach\",\"layer\":\"block\",\"hook\":\"block_rq_issue\","
		     "\"method\":\"tp_btf\",\"ok\":true,\"state\":\"attached\"}",
		     "attach line as documented");
	check_fields(line, want_ok, (int)(sizeof(want_ok) / sizeof(want_ok[0])));
	free(line);
	check_line(sink_str(&e.json), 1, want_fail, NWANT(want_fail));
	line = nth_line(sink_str(&e.json), 2);
	ASSERT_STREQ(line,
		     "{\"type\":\"attach\",\"layer\":\"syscall\",\"hook\":\"thread_state\","
		     "\"method\":\"hash\",\"ok\":true,\"state\":\"attached\","
		     "\"note\":\"an LRU hash of 16384 threads\"}",
		     "an attached hook's note, no reason");
	free(line);
	ASSERT_STREQ(sink_str(&e.text), "", "attach writes no text");
	ASSERT_EQ(out_requests(e.out), 0ULL, "attach is not a request");
	ASSERT_EQ(out_error(e.out), 0, "out_error");
out:
	env_done(&e);
}

/* ---- live text ---- */

static void test_live_lines(void)
{
	struct it_syscall_rec s = mk_pread();
	struct it_block_rec b = mk_pread_bio();
	struct corr_req r = mk_req(CORR_SYSCALL, 1);
	struct env e;
	char *hdr, *l1, *l2;
	const char *text;

	if (!g_have_sysfs) {
		SKIP("no fake sysfs");
		return;
	}
	if (!env_init(&e, 1, 0, 0))
		goto out;
	r.sys = &s;
	r.blocks[0] = &b;
	r.nr_blocks = 1;
	out_request(&r, e.out);
	s.enter_ns = 2500000000ULL;
	s.exit_ns = s.enter_ns + 60000;
	s.first_q_ns = 0;
	r.nr_blocks = 0;
	r.id = 2;
	out_request(&r, e.out);
	{
		struct it_block_rec wb = mk_blk(50, 50, IT_ORIG_WRITEBACK, IT_OP_WRITE, 8, 4096,
						3000, 0, 0, 4000, 9000, IT_F_HAS_Q);
		struct corr_req rb = mk_req(CORR_BLOCK, 3);

		wb.task = mk_task(50, 50, "kworker/u8:2");
		rb.blocks[0] = &wb;
		rb.nr_blocks = 1;
		out_request(&rb, e.out);
	}
	ASSERT_EQ(out_requests(e.out), 3ULL, "out_requests without JSON");
	text = sink_str(&e.text);
	if (!ASSERT_EQ(count_lines(text), 4, "header + 3 lines"))
		UNIT_LOG("text:\n%s", text);
	hdr = nth_line(text, 0);
	l1 = nth_line(text, 1);
	l2 = nth_line(text, 2);
	if (ASSERT_TRUE(hdr && l1 && l2, "three lines")) {
		const char *cols[] = { "TIME(s)", "COMM",  "PID", "KIND",  "OP",     "DEV",
				       "OFFSET",  "BYTES", "LAT", "QUEUE", "DEVICE", "RUNQ" };
		const char *vals[] = { "0.000001", "fio",   "1200", "syscall", "read",
				       "loop0",	   "40960", "4096", "60.0us", /* lat 60000 */
				       "4.00us", /* fs: 60000 - (58000 - 2000) */
				       "1.00us", /* queue: d - q */
				       "55.0us", /* device: c - d */
				       "700ns" /* runq */ };

		for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
			ASSERT_TRUE(strstr(hdr, cols[i]) != NULL, cols[i]);
		ASSERT_TRUE(strncmp(hdr, "TIME(s)", 7) == 0, "header first");
		for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
			if (!ASSERT_TRUE(strstr(l1, vals[i]) != NULL, vals[i]))
				UNIT_LOG("line: %s\n", l1);
		ASSERT_TRUE(strncmp(l1, "0.000001 ", 9) == 0, "relative time first");
		ASSERT_TRUE(strncmp(l2, "2.500000 ", 9) == 0, "relative time of the 2nd");
		ASSERT_TRUE(strstr(l2, "loop0") != NULL, "2nd line dev");
	}
	{
		char *l3 = nth_line(text, 3);
		const char *vals[] = { "kworker/u8:2", "50",   "block",	 "write",
				       "loop0",	       "4096", "6.00us", /* lat c - q */
				       "1.00us", /* queue d - q */
				       "5.00us" /* device c - d */ };

		if (ASSERT_TRUE(l3 != NULL, "block line"))
			for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
				if (!ASSERT_TRUE(strstr(l3, vals[i]) != NULL, vals[i]))
					UNIT_LOG("line: %s\n", l3);
		free(l3);
	}
	free(hdr);
	free(l1);
	free(l2);
out:
	env_done(&e);
}

static void test_live_off_and_quiet(void)
{
	struct it_syscall_rec s = mk_pread();
	struct corr_req r = mk_req(CORR_SYSCALL, 1);
	struct env e;

	r.sys = &s;
	if (env_init(&e, 1, 1, 0)) { /* -q */
		out_request(&r, e.out);
		ASSERT_STREQ(sink_str(&e.text), "", "quiet: no live lines");
		ASSERT_EQ(out_requests(e.out), 1ULL, "quiet: counted");
	}
	env_done(&e);
	if (env_init(&e, 0, 0, 0)) { /* --no-live */
		out_request(&r, e.out);
		out_attach(e.out, "block", "block_rq_issue", "tp_btf", OUT_HS_ATTACHED,
			   NULL); /* no JSON: no-op */
		ASSERT_STREQ(sink_str(&e.text), "", "no-live: no live lines");
		ASSERT_EQ(out_error(e.out), 0, "out_error");
	}
	env_done(&e);
}

/* ---- summaries ---- */

static void feed_reads(struct it_out *out, uint64_t from_us, uint64_t to_us, uint64_t step_us,
		       uint64_t *id)
{
	for (uint64_t us = from_us; us <= to_us; us += step_us) {
		struct it_syscall_rec s = mk_pread();
		struct corr_req r = mk_req(CORR_SYSCALL, ++*id);

		s.enter_ns = 1000000 * *id;
		s.exit_ns = s.enter_ns + us * US;
		s.first_q_ns = 0;
		s.offcpu_ns = us * US / 2;
		r.sys = &s;
		out_request(&r, out);
	}
}

static bool stage_near(const char *line, const char *sel, const char *field, double want,
		       double rel_tol)
{
	char expr[256];
	uint64_t v = 0;

	snprintf(expr, sizeof(expr), "%s.%s", sel, field);
	if (!jq_u64(line, expr, &v))
		return false;
	if (!ASSERT_NEAR((double)v, want, want * rel_tol, expr)) {
		UNIT_LOG("line: %.3000s\n", line);
		return false;
	}
	return true;
}

static void test_summary(void)
{
	static struct out_khist kh[3];
	uint64_t drops[IT_NR_DROPS] = { 0 };
	struct corr_stats cs;
	struct out_summary_in in;
	struct env e;
	uint64_t id = 0;
	char *line;
	const char *text;
	const char *tot = "(.stages[] | select(.layer == \"syscall\" and .stage == \"total\"))";
	static const struct jqc want1[] = {
		{ ".type", S("summary") },
		{ ".final", "false" },
		{ ".elapsed_ns", "1000000000" },
		{ ".records.syscall", "100" },
		{ ".records.block", "7" },
		{ ".records.io_uring", "3" },
		{ ".records.aio", "2" },
		{ ".requests", "100" },
		{ ".unjoined", "4" },
		{ ".malformed", "1" },
		{ ".drops.total", "8" },
		{ ".drops.block.ringbuf", "5" },
		{ ".drops.block.inflight", "0" },
		{ ".drops.syscall.inflight", "2" },
		{ ".drops.sched.hist", "1" },
		{ ".drops.fs | [.ringbuf, .inflight, .hist]", "[0,0,0]" },
		{ "[.drops[] | numbers] | length", "1" }, /* only total is a number */
		{ "[.drops | to_entries[] | select(.key != \"total\") | .value[]] | add", "8" },
		{ ".drops | keys | length", "10" }, /* total + IT_L_MAX layers */
		{ ".stages | length", "3" },
		{ "[.stages[] | .layer + \"/\" + .stage] | sort",
		  "[\"syscall/offcpu\",\"syscall/runq\",\"syscall/total\"]" },
		{ "(.stages[] | select(.stage == \"total\")) | [.dev, .devno, .op, .count, .max_ns, "
		  ".mean_ns]",
		  "[\"loop0\",\"7:0\",\"read\",100,100000,50500]" },
		{ "(.stages[] | select(.stage == \"offcpu\")) | [.count, .max_ns, .mean_ns]",
		  "[100,50000,25250]" },
		{ ".hists | length", "2" },
		{ ".hists[0] | [.layer, .dev, .devno, .op, .stage, .count, .sum_ns]",
		  "[\"block\",\"loop0\",\"7:0\",\"read\",\"q2c\",1203,72000000]" },
		{ ".hists[0].buckets", "[{\"lo_ns\":0,\"hi_ns\":2,\"count\":3},"
				       "{\"lo_ns\":32768,\"hi_ns\":65536,\"count\":1000},"
				       "{\"lo_ns\":65536,\"hi_ns\":131072,\"count\":200}]" },
		{ ".hists[1] | [.layer, has(\"dev\"), has(\"devno\"), .op, .stage, .count]",
		  "[\"io_uring\",false,false,\"write\",\"total\",1]" },
		{ ".hists[1].buckets",
		  "[{\"lo_ns\":9223372036854776000,\"hi_ns\":18446744073709552000,\"count\":1}]" },
	};
	static const struct jqc want2[] = {
		{ ".type", S("summary") }, { ".final", "false" },      { ".stages", "[]" },
		{ ".requests", "100" },	   { ".hists | length", "2" },
	};
	static const struct jqc want3[] = {
		{ ".final", "false" },
		{ "(.stages[] | select(.stage == \"total\")) | [.count, .max_ns, .mean_ns]",
		  "[3,400000,300000]" },
	};
	static const struct jqc want4[] = {
		{ ".final", "true" },
		{ ".requests", "103" },
		{ "(.stages[] | select(.stage == \"total\")) | [.count, .max_ns]", "[103,400000]" },
		{ "(.stages[] | select(.stage == \"offcpu\")) | [.count, .max_ns]",
		  "[103,200000]" },
	};

	if (!need_jq())
		return;
	if (!env_init(&e, 0, 0, 1))
		goto out;
	memset(&cs, 0, sizeof(cs));
	cs.records[IT_REC_SYSCALL] = 100;
	cs.records[IT_REC_BLOCK] = 7;
	cs.records[IT_REC_URING] = 3;
	cs.records[IT_REC_AIO] = 2;
	cs.requests = 100;
	cs.unjoined = 4;
	cs.malformed = 1;
	drops[IT_L_BLOCK * IT_DROP_KINDS + IT_DROP_RINGBUF] = 5;
	drops[IT_L_SYSCALL * IT_DROP_KINDS + IT_DROP_INFLIGHT] = 2;
	drops[IT_L_SCHED * IT_DROP_KINDS + IT_DROP_HIST] = 1;

	memset(kh, 0, sizeof(kh));
	kh[0].key.dev = DEV_LOOP0;
	kh[0].key.layer = IT_L_BLOCK;
	kh[0].key.op = IT_OP_READ;
	kh[0].key.kind = IT_HK_PLAIN;
	kh[0].val.st[IT_ST_Q2C].slots[0] = 3;
	kh[0].val.st[IT_ST_Q2C].slots[15] = 1000;
	kh[0].val.st[IT_ST_Q2C].slots[16] = 200;
	kh[0].val.st[IT_ST_Q2C].count = 1203;
	kh[0].val.st[IT_ST_Q2C].sum_ns = 72000000;
	kh[0].val.st[IT_ST_D2C].slots[10] = 5; /* count 0: not reported */
	kh[1].key.dev = 0;
	kh[1].key.layer = IT_L_SYSCALL;
	kh[1].key.op = IT_OP_WRITE;
	kh[1].key.kind = IT_HK_URING;
	kh[1].val.st[IT_ST_TOTAL].slots[IT_HIST_SLOTS - 1] = 1;
	kh[1].val.st[IT_ST_TOTAL].count = 1;
	kh[1].val.st[IT_ST_TOTAL].sum_ns = 600000000000ULL;

	memset(&in, 0, sizeof(in));
	in.final = 0;
	in.elapsed_ns = 1000000000ULL;
	in.khists = kh;
	in.nr_khists = 3; /* kh[2] all empty */
	in.drops = drops;
	in.corr = &cs;

	/* 100 reads of 1..100 us, off-CPU half of it */
	feed_reads(e.out, 1, 100, 1, &id);
	out_summary(e.out, &in);
	/* second interval without requests */
	in.elapsed_ns = 2000000000ULL;
	out_summary(e.out, &in);
	/* third interval: 200, 300, 400 us */
	feed_reads(e.out, 200, 400, 100, &id);
	in.elapsed_ns = 3000000000ULL;
	out_summary(e.out, &in);
	/* final: the whole run */
	in.final = 1;
	in.elapsed_ns = 3500000000ULL;
	out_summary(e.out, &in);
	ASSERT_EQ(out_error(e.out), 0, "out_error");

	/* 100 requests, summary, summary, 3 requests, summary, summary */
	if (!json_lines_valid(sink_str(&e.json), 107))
		goto out;
	line = nth_line(sink_str(&e.json), 100);
	if (check_fields(line, want1, (int)(sizeof(want1) / sizeof(want1[0])))) {
		/* percentiles: exact to 1 % (docs/json.md) */
		stage_near(line, tot, "p50_ns", 50000, 0.01);
		stage_near(line, tot, "p90_ns", 90000, 0.01);
		stage_near(line, tot, "p99_ns", 99000, 0.01);
	}
	free(line);
	check_line(sink_str(&e.json), 101, want2, NWANT(want2));
	line = nth_line(sink_str(&e.json), 105);
	if (check_fields(line, want3, (int)(sizeof(want3) / sizeof(want3[0]))))
		stage_near(line, tot, "p50_ns", 300000, 0.01);
	free(line);
	line = nth_line(sink_str(&e.json), 106);
	if (check_fields(line, want4, (int)(sizeof(want4) / sizeof(want4[0])))) {
		stage_near(line, tot, "p50_ns", 52000, 0.01); /* rank 52 of 1..100,200,300,400 */
		stage_near(line, tot, "p99_ns", 300000, 0.01); /* rank ceil(101.97) = 102 */
	}
	free(line);

	text = sink_str(&e.text);
	ASSERT_TRUE(strstr(text, "=== interval summary after 1.0s: 100 requests, 4 unjoined, "
				 "8 dropped ===") != NULL,
		    "text interval header");
	ASSERT_TRUE(strstr(text, "=== final summary after 3.5s: 103 requests") != NULL,
		    "text final header");
	ASSERT_TRUE(strstr(text, "drops: block ringbuf 5") != NULL, "text drops block");
	ASSERT_TRUE(strstr(text, "drops: syscall inflight 2") != NULL, "text drops syscall");
	ASSERT_TRUE(strstr(text, "LAYER") != NULL, "text table header");
	ASSERT_TRUE(strstr(text, "block loop0 read q2c (all requests)") != NULL,
		    "text final in-kernel histogram");
	ASSERT_TRUE(strstr(text, "io_uring - write total (all requests)") != NULL,
		    "text final in-kernel io_uring histogram");
	{
		/* the 2nd interval (no requests) has a table header and no rows */
		const char *i2 = strstr(text, "=== interval summary after 2.0s");
		const char *i3 = strstr(text, "=== interval summary after 3.0s");

		if (ASSERT_TRUE(i2 && i3 && i3 > i2, "text interval 2 and 3")) {
			char *sec = strndup(i2, (size_t)(i3 - i2));

			ASSERT_TRUE(sec && strstr(sec, "LAYER") != NULL, "interval 2 table header");
			ASSERT_TRUE(sec && strstr(sec, "\nsyscall ") == NULL,
				    "interval 2 has no rows");
			free(sec);
			ASSERT_TRUE(strstr(i3, "\nsyscall ") != NULL, "interval 3 has rows");
		}
	}
	{
		/* in-kernel histograms only in the final text summary */
		const char *fin = strstr(text, "=== final");

		ASSERT_TRUE(fin && strstr(text, "(all requests)") > fin,
			    "histograms only after the final header");
	}
	ASSERT_TRUE(strstr(text, "the stage table counts") == NULL, "no -m: nothing to say");
	{
		/* -m 10ms, --sample 4: the header and a line say what the stage table counts */
		uint64_t no_drops[IT_NR_DROPS] = { 0 };
		struct out_summary_in fin = {
			.final = 1, .elapsed_ns = 1000000000ull, .drops = no_drops, .corr = &cs
		};
		size_t mark = strlen(sink_str(&e.text));

		out_set_thinning(e.out, 10000000, 4);
		out_summary(e.out, &fin);
		text = sink_str(&e.text) + mark;
		ASSERT_TRUE(strstr(text, "103 recorded requests") != NULL,
			    "recorded in the header");
		ASSERT_TRUE(strstr(text,
				   "  the stage table counts the recorded requests only: those "
				   "at least 10.0ms long (-m), 1 in 4 (--sample); the "
				   "histograms below count every request\n") != NULL,
			    "what the stage table counts");
	}
out:
	env_done(&e);
}

/* One stage row per (layer, dev, op, stage), fed by every kind of request. */
static void test_summary_stage_keys(void)
{
	uint64_t drops[IT_NR_DROPS] = { 0 };
	struct corr_stats cs;
	struct out_summary_in in;
	struct env e;
	struct it_syscall_rec s = mk_pread();
	struct it_block_rec b1 = mk_pread_bio(); /* q2c 56000, d2c 55000, q2d 1000 */
	struct it_block_rec b2 = mk_blk(1, 1, IT_ORIG_NONE, IT_OP_READ, 0, 4096, 100, 0, 0, 2100,
					10100, IT_F_HAS_Q); /* q2c 10000 d2c 8000 q2d 2000 */
	struct it_block_rec b3 = mk_blk(1, 1, IT_ORIG_NONE, IT_OP_READ, 0, 4096, 100, 0, 0, 0,
					30100, IT_F_HAS_Q); /* q2c 30000, no d */
	struct it_block_rec b4 =
		mk_blk(1, 1, IT_ORIG_NONE, IT_OP_WRITE, 0, 4096, 100, 0, 0, 200, 1100, IT_F_HAS_Q);
	struct it_uring_rec u;
	struct corr_req r;
	static const struct jqc want[] = {
		{ "[.stages[] | .layer + \"/\" + .op + \"/\" + .stage] | sort",
		  "[\"aio/read/total\",\"block/read/d2c\",\"block/read/q2c\",\"block/read/q2d\","
		  "\"block/write/d2c\",\"block/write/q2c\",\"block/write/q2d\","
		  "\"io_uring/read/total\",\"syscall/read/offcpu\",\"syscall/read/runq\","
		  "\"syscall/read/total\"]" },
		{ "(.stages[] | select(.layer == \"block\" and .op == \"read\" and .stage == "
		  "\"q2c\")) | [.count, .max_ns, .dev]",
		  "[3,56000,\"loop0\"]" },
		{ "(.stages[] | select(.layer == \"block\" and .op == \"read\" and .stage == "
		  "\"d2c\")) | [.count, .max_ns]",
		  "[2,55000]" },
		{ "(.stages[] | select(.layer == \"block\" and .op == \"read\" and .stage == "
		  "\"q2d\")) | [.count, .max_ns]",
		  "[2,2000]" },
		{ "(.stages[] | select(.layer == \"io_uring\")) | [.count, .max_ns]", "[1,20000]" },
		{ "(.stages[] | select(.layer == \"aio\")) | [.count, .max_ns]", "[1,20000]" },
		{ "(.stages[] | select(.layer == \"syscall\" and .stage == \"total\")) | .count",
		  "2" },
		{ ".hists", "[]" },
	};

	if (!need_jq())
		return;
	if (!env_init(&e, 0, 0, 1))
		goto out;
	/* two syscalls (one with a bio), two block requests, one without d */
	r = mk_req(CORR_SYSCALL, 1);
	r.sys = &s;
	r.blocks[0] = &b1;
	r.nr_blocks = 1;
	out_request(&r, e.out);
	r.nr_blocks = 0;
	r.id = 2;
	out_request(&r, e.out);
	r = mk_req(CORR_BLOCK, 3);
	r.blocks[0] = &b2;
	r.nr_blocks = 1;
	out_request(&r, e.out);
	r.id = 4;
	r.blocks[0] = &b3;
	out_request(&r, e.out);
	r.id = 5;
	r.blocks[0] = &b4;
	out_request(&r, e.out);
	/* io_uring 20 us */
	memset(&u, 0, sizeof(u));
	u.task = mk_task(3, 3, "u");
	u.submit_ns = 1000;
	u.complete_ns = 21000;
	u.dev = DEV_LOOP0;
	u.op = IT_OP_READ;
	r = mk_req(CORR_URING, 6);
	r.uring = &u;
	out_request(&r, e.out);
	/* aio: reaped (20 us) counts, unreaped does not */
	r = mk_req(CORR_AIO, 7);
	r.aio.task = mk_task(4, 4, "a");
	r.aio.iocb.dev = DEV_LOOP0;
	r.aio.iocb.opcode = 0;
	r.aio.submit_ns = 1000;
	r.aio.reap_ns = 21000;
	r.aio.reaped = 1;
	out_request(&r, e.out);
	r.id = 8;
	r.aio.reap_ns = 0;
	r.aio.reaped = 0;
	out_request(&r, e.out);

	memset(&cs, 0, sizeof(cs));
	memset(&in, 0, sizeof(in));
	in.final = 1;
	in.drops = drops;
	in.corr = &cs;
	out_summary(e.out, &in);
	ASSERT_EQ(out_requests(e.out), 8ULL, "out_requests");
	if (!json_lines_valid(sink_str(&e.json), 9))
		goto out;
	check_line(sink_str(&e.json), 8, want, NWANT(want));
out:
	env_done(&e);
}

/* More stage keys than the initial table (16) holds: the table grows, counts stay per key. */
static void test_summary_many_devices(void)
{
	enum { NDEV = 40 };
	uint64_t drops[IT_NR_DROPS] = { 0 };
	struct corr_stats cs;
	struct out_summary_in in;
	struct env e;
	char *line;
	static const struct jqc want[] = {
		{ "[.stages[] | select(.layer == \"block\")] | length", "120" }, /* 40 x 3 */
		{ "[.stages[] | .count] | unique", "[2]" },
		{ "[.stages[] | select(.stage == \"q2c\") | .devno] | unique | length", "40" },
		{ "(.stages[] | select(.devno == \"8:39\" and .stage == \"d2c\")) | .max_ns",
		  "39100" },
		{ "(.stages[] | select(.devno == \"8:0\" and .stage == \"q2d\")) | .max_ns",
		  "1000" },
	};

	if (!need_jq())
		return;
	if (!env_init(&e, 0, 0, 1))
		goto out;
	for (int round = 0; round < 2; round++) {
		for (int k = 0; k < NDEV; k++) {
			struct it_block_rec b = mk_blk(
				1, 1, IT_ORIG_NONE, IT_OP_WRITE, 0, 4096, 1000, 0, 0, 2000,
				2000 + 1000 * (uint64_t)k + 100 * (uint64_t)round, IT_F_HAS_Q);
			struct corr_req r = mk_req(CORR_BLOCK, (uint64_t)(round * NDEV + k + 1));

			b.dev = IT_MKDEV(8, k);
			r.blocks[0] = &b;
			r.nr_blocks = 1;
			out_request(&r, e.out);
		}
	}
	memset(&cs, 0, sizeof(cs));
	memset(&in, 0, sizeof(in));
	in.final = 1;
	in.drops = drops;
	in.corr = &cs;
	out_summary(e.out, &in);
	ASSERT_EQ(out_error(e.out), 0, "out_error");
	if (!json_lines_valid(sink_str(&e.json), 2 * NDEV + 1))
		goto out;
	line = nth_line(sink_str(&e.json), 2 * NDEV);
	check_fields(line, want, (int)(sizeof(want) / sizeof(want[0])));
	free(line);
out:
	env_done(&e);
}

/* ---- JSON batches into files ---- */

/* Everything written to f so far (after a fflush), malloc'd; NULL on error. */
static char *file_str(FILE *f)
{
	struct stat st;
	char *buf;

	if (fflush(f) || fstat(fileno(f), &st))
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return NULL;
	if (pread(fileno(f), buf, (size_t)st.st_size, 0) != st.st_size) {
		free(buf);
		return NULL;
	}
	buf[st.st_size] = '\0';
	return buf;
}

/* Bytes written to f so far (after a fflush); -1 on error. */
static long file_size(FILE *f)
{
	struct stat st;

	if (fflush(f) || fstat(fileno(f), &st))
		return -1;
	return (long)st.st_size;
}

/* The file holds exactly what the line-by-line memstream holds. */
static bool file_is(FILE *f, struct sink *ref, const char *what)
{
	char *got = file_str(f);
	bool ok = ASSERT_TRUE(got != NULL, "read the file") &&
		  ASSERT_STREQ(got, sink_str(ref), what);

	free(got);
	return ok;
}

/*
 * JSON into a file goes out in batches (not a write per line), with the same
 * bytes as line by line (a memstream gets every line at once); attach lines
 * and summaries write what is pending first, and out_free() writes the rest.
 */
static void test_json_batches(void)
{
	struct it_syscall_rec s = mk_pread();
	struct it_block_rec b = mk_pread_bio();
	struct corr_req r = mk_req(CORR_SYSCALL, 1);
	uint64_t drops[IT_NR_DROPS] = { 0 };
	struct corr_stats cs;
	struct out_summary_in in;
	struct it_out *bo = NULL;
	FILE *bf = NULL;
	struct env e;
	long size, ref, max_pending = 0;
	int held = 0, i;

	if (!need_jq())
		return;
	if (!env_init(&e, 0, 0, 1))
		goto out;
	bf = tmpfile();
	if (!ASSERT_TRUE(bf != NULL, "tmpfile"))
		goto out;
	bo = out_new(cli_out_config(&e.o, &(struct out_config){ 0 }), NULL, bf, 0);
	if (!ASSERT_TRUE(bo != NULL, "out_new"))
		goto out;
	memset(&cs, 0, sizeof(cs));
	memset(&in, 0, sizeof(in));
	in.drops = drops;
	in.corr = &cs;
	r.sys = &s;
	r.blocks[0] = &b;
	r.nr_blocks = 1;

	out_attach(e.out, "block", "block_rq_issue", "tp_btf", 1, NULL);
	out_attach(bo, "block", "block_rq_issue", "tp_btf", 1, NULL);
	if (!file_is(bf, &e.json, "attach line at once"))
		goto out;
	/* 1000 requests of about 1 KB within 1 s: held, then written in batches */
	for (i = 1; i <= 1000; i++) {
		r.id = (uint64_t)i;
		s.enter_ns = 1000000ULL * (uint64_t)i;
		s.exit_ns = s.enter_ns + 60000;
		out_request(&r, e.out);
		out_request(&r, bo);
		size = file_size(bf);
		ref = (long)strlen(sink_str(&e.json));
		if (!ASSERT_TRUE(size >= 0 && size <= ref, "file size"))
			goto out;
		held += size < ref;
		if (ref - size > max_pending)
			max_pending = ref - size;
	}
	ASSERT_TRUE(held > 900, "lines are held back");
	ASSERT_TRUE(max_pending > 16 * 1024 && max_pending < 128 * 1024, "batches of < 128 KiB");
	{
		char *got = file_str(bf);
		const char *want = sink_str(&e.json);

		/* whole lines only, a prefix of the same output */
		if (ASSERT_TRUE(got && *got, "something written")) {
			ASSERT_TRUE(got[strlen(got) - 1] == '\n', "whole lines");
			ASSERT_TRUE(!strncmp(got, want, strlen(got)), "prefix of the same lines");
		}
		free(got);
	}
	out_attach(e.out, "fs", "vfs_read", "fentry", 0, "fentry not permitted (EPERM)");
	out_attach(bo, "fs", "vfs_read", "fentry", 0, "fentry not permitted (EPERM)");
	if (!file_is(bf, &e.json, "an attach line writes the pending requests first"))
		goto out;
	for (i = 1001; i <= 1010; i++) {
		r.id = (uint64_t)i;
		out_request(&r, e.out);
		out_request(&r, bo);
	}
	out_summary(e.out, &in);
	out_summary(bo, &in);
	if (!file_is(bf, &e.json, "a summary writes the pending requests first"))
		goto out;
	for (i = 1011; i <= 1015; i++) {
		r.id = (uint64_t)i;
		out_request(&r, e.out);
		out_request(&r, bo);
	}
	out_free(bo);
	bo = NULL;
	if (!file_is(bf, &e.json, "out_free() writes the rest"))
		goto out;
	ASSERT_EQ(out_error(e.out), 0, "out_error");
	json_lines_valid(sink_str(&e.json), 1015 + 2 + 1);
out:
	out_free(bo);
	if (bf)
		fclose(bf);
	env_done(&e);
}

/* A batch is written when its first request is 1 s older than the current one. */
static void test_json_batch_age(void)
{
	static const uint64_t exits[] = { 1000000000ULL, 2000000000ULL, 2500000000ULL,
					  2999999999ULL, 3000000000ULL, 3000000001ULL };
	static const int want_lines[] = { 1, 1, 1, 1, 5, 5 };
	struct it_syscall_rec s = mk_pread();
	struct corr_req r = mk_req(CORR_SYSCALL, 1);
	struct it_out *out = NULL;
	struct it_opts o;
	FILE *f = tmpfile();
	char *got;

	cli_defaults(&o);
	o.live = 0;
	o.sysfs_root = g_sysfs;
	if (!ASSERT_TRUE(f != NULL, "tmpfile"))
		goto out;
	out = out_new(cli_out_config(&o, &(struct out_config){ 0 }), NULL, f, 0);
	if (!ASSERT_TRUE(out != NULL, "out_new"))
		goto out;
	r.sys = &s;
	for (int i = 0; i < 6; i++) {
		r.id = (uint64_t)i + 1;
		s.exit_ns = exits[i];
		s.enter_ns = exits[i] - 50000;
		out_request(&r, out);
		got = file_str(f);
		if (!ASSERT_TRUE(got != NULL, "read") ||
		    !ASSERT_EQ(count_lines(got), want_lines[i], "lines written")) {
			UNIT_LOG("after request %d\n", i + 1);
			free(got);
			goto out;
		}
		free(got);
	}
	ASSERT_EQ(out_error(out), 0, "out_error");
out:
	out_free(out);
	if (f)
		fclose(f);
	cli_free(&o);
}

/* A full disk is reported within a batch, and by the summary that writes one. */
static void test_json_batch_write_error(void)
{
	struct it_syscall_rec s = mk_pread();
	struct corr_req r = mk_req(CORR_SYSCALL, 1);
	uint64_t drops[IT_NR_DROPS] = { 0 };
	struct corr_stats cs;
	struct out_summary_in in;
	struct it_out *out;
	struct it_opts o;
	FILE *full = fopen("/dev/full", "w");
	int i;

	if (!full) {
		SKIP("no /dev/full");
		return;
	}
	cli_defaults(&o);
	o.live = 0;
	o.sysfs_root = g_sysfs;
	memset(&cs, 0, sizeof(cs));
	memset(&in, 0, sizeof(in));
	in.drops = drops;
	in.corr = &cs;
	r.sys = &s;

	out = out_new(cli_out_config(&o, &(struct out_config){ 0 }), NULL, full, 0);
	if (ASSERT_TRUE(out != NULL, "out_new")) {
		for (i = 0; i < 5000 && !out_error(out); i++)
			out_request(&r, out);
		ASSERT_NEQ(out_error(out), 0, "ENOSPC reported");
		ASSERT_TRUE(i < 1000, "within a batch");
	}
	out_free(out);
	clearerr(full);
	out = out_new(cli_out_config(&o, &(struct out_config){ 0 }), NULL, full, 0);
	if (ASSERT_TRUE(out != NULL, "out_new")) {
		out_request(&r, out);
		out_request(&r, out);
		out_summary(out, &in);
		ASSERT_NEQ(out_error(out), 0, "summary: ENOSPC reported");
	}
	out_free(out);
	fclose(full);
	cli_free(&o);
}

/* Add <sysfs>/dev/block/MAJ:MIN/uevent naming the device. */
static int fake_dev(uint32_t dev, const char *name)
{
	char p[512], txt[128];

	snprintf(p, sizeof(p), "%s/dev/block/%u:%u", g_sysfs, IT_MAJOR(dev), IT_MINOR(dev));
	if (mkdir(p, 0755) && errno != EEXIST)
		return -errno;
	snprintf(p, sizeof(p), "%s/dev/block/%u:%u/uevent", g_sysfs, IT_MAJOR(dev), IT_MINOR(dev));
	snprintf(txt, sizeof(txt), "MAJOR=%u\nMINOR=%u\nDEVNAME=%s\nDEVTYPE=disk\n", IT_MAJOR(dev),
		 IT_MINOR(dev), name);
	return unit_write_str(p, txt);
}

/*
 * Device names of requests and their block requests over more devices than
 * output.c remembers, one without a name; a device named later is found once
 * parse_dev_name_cached() looks again (output.c does not keep numbers).
 */
static void test_dev_names(void)
{
	struct it_syscall_rec s = mk_pread();
	struct it_block_rec b = mk_pread_bio();
	struct corr_req r = mk_req(CORR_SYSCALL, 1);
	char name[32], *res = NULL, *want = NULL;
	size_t want_len = 0;
	FILE *ws = NULL;
	struct env e;
	int k;

	if (!need_jq())
		return;
	for (k = 1; k <= 6; k++) {
		snprintf(name, sizeof(name), "loop%d", k);
		if (!ASSERT_OK(fake_dev(IT_MKDEV(7, k), name), "fake sysfs device"))
			return;
	}
	if (!env_init(&e, 0, 0, 1))
		goto out;
	ws = open_memstream(&want, &want_len);
	if (!ASSERT_TRUE(ws != NULL, "open_memstream"))
		goto out;
	r.sys = &s;
	r.blocks[0] = &b;
	r.nr_blocks = 1;
	for (int round = 0; round < 3; round++) {
		for (k = 0; k < 8; k++) { /* 7:7 has no name */
			int kb = (k + 3) % 8;

			s.dev = IT_MKDEV(7, k);
			b.dev = IT_MKDEV(7, kb);
			out_request(&r, e.out);
			fprintf(ws, k == 7 ? "7:7 7:7 " : "loop%d 7:%d ", k, k);
			fprintf(ws, kb == 7 ? "7:7 7:7\n" : "loop%d 7:%d\n", kb, kb);
		}
	}
	/* 7:7 appears; parse_dev_name_cached() forgets "7:7" after a while: now */
	if (!ASSERT_OK(fake_dev(IT_MKDEV(7, 7), "loop7"), "fake sysfs device"))
		goto out;
	parse_dev_cache_clear();
	s.dev = IT_MKDEV(7, 7);
	b.dev = IT_MKDEV(7, 0);
	out_request(&r, e.out);
	fprintf(ws, "loop7 7:7 loop0 7:0\n");
	fclose(ws);
	ws = NULL;
	if (!json_lines_valid(sink_str(&e.json), 25))
		goto out;
	if (ASSERT_EQ(run_jq("-r", "[.dev, .devno, .block[0].dev, .block[0].devno] | join(\" \")",
			     sink_str(&e.json), &res),
		      0, "jq"))
		ASSERT_STREQ(res, want, "dev and devno of every line");
out:
	if (ws)
		fclose(ws);
	free(want);
	free(res);
	env_done(&e);
}

int main(void)
{
	char *res = NULL;
	int err = make_fake_sysfs();

	if (err)
		fprintf(stderr, "fake sysfs: %s\n", strerror(-err));
	else
		g_have_sysfs = 1;
	if (g_have_sysfs && system("jq --version >/dev/null 2>&1") == 0) {
		g_have_jq = run_jq("-e", ".", "{}", &res) == 0;
		free(res);
	}
	RUN_TEST(test_syscall_json_fields);
	RUN_TEST(test_syscall_json_variants);
	RUN_TEST(test_block_json_no_insert);
	RUN_TEST(test_block_json_writeback);
	RUN_TEST(test_block_json_writeback_file);
	RUN_TEST(test_block_json_flush);
	RUN_TEST(test_write_json_no_cache_miss);
	RUN_TEST(test_uring_json);
	RUN_TEST(test_aio_json);
	RUN_TEST(test_block_json);
	RUN_TEST(test_json_escaping_and_unknown_dev);
	RUN_TEST(test_container_json);
	RUN_TEST(test_json_write_error);
	RUN_TEST(test_attach);
	RUN_TEST(test_live_lines);
	RUN_TEST(test_live_off_and_quiet);
	RUN_TEST(test_summary);
	RUN_TEST(test_summary_stage_keys);
	RUN_TEST(test_summary_many_devices);
	RUN_TEST(test_json_batches);
	RUN_TEST(test_json_batch_age);
	RUN_TEST(test_json_batch_write_error);
	RUN_TEST(test_dev_names); /* adds devices to the fake sysfs: last */
	parse_dev_cache_clear();
	rm_tree();
	return unit_result();
}
