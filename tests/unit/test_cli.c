// SPDX-License-Identifier: GPL-2.0
/* Unit tests for src/service/cli.c. */
#include "unit.h"
#include "iotracer.h"
#include "service/cli.h"
#include "cli_run.h"
#include "lib/keyfile.h"

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		if (*s == '\n')
			n++;
	return n;
}

static void test_cli_defaults(void)
{
	struct run r;

	run_argv(&r, (const char *const[]){ NULL });
	ASSERT_EQ(r.ret, CLI_RUN, "ret");
	ASSERT_EQ(r.o.layers, 0, "layers");
	ASSERT_EQ(r.o.nr_pids, 0, "pids");
	ASSERT_EQ(r.o.has_comm, 0, "comm");
	ASSERT_EQ(r.o.nr_cgroups, 0, "cgroup");
	ASSERT_EQ(r.o.metrics_cg_depth, -1, "no cgroup label");
	ASSERT_EQ(r.o.nr_devs, 0, "devs");
	ASSERT_TRUE(r.o.file_path == NULL, "file");
	ASSERT_EQ(r.o.min_lat_ns, 0, "min lat");
	ASSERT_EQ(r.o.sample, 1, "sample");
	ASSERT_EQ(r.o.duration_ns, 0, "duration");
	ASSERT_EQ(r.o.interval_ns, 0, "interval");
	ASSERT_TRUE(r.o.json_path == NULL, "json");
	ASSERT_EQ(r.o.live, 1, "live");
	ASSERT_EQ(r.o.quiet, 0, "quiet");
	ASSERT_EQ(r.o.verbose, 0, "verbose");
	ASSERT_EQ(r.o.ring_size, 8ull << 20, "ring size");
	ASSERT_TRUE(r.o.record_dir == NULL, "record");
	ASSERT_EQ(r.o.record_size, 64ull << 20, "record size");
	ASSERT_EQ(r.o.record_age_ns, 3600ull * 1000000000ull, "record age");
	ASSERT_EQ(r.o.record_max, 1ull << 30, "record max");
	ASSERT_EQ(r.o.record_level, 0, "record level");
	ASSERT_EQ(r.out_len + r.err_len, 0, "silent");
	run_free(&r);

	cli_defaults(&r.o);
	ASSERT_STREQ(r.o.sysfs_root, "/sys", "sysfs root");
}

static void test_cli_short(void)
{
	struct run r;

	RUN(&r, "-l", "syscall,block", "-p", "1,2,3", "-p", "2,4", "-c", "fio", "--cgroup", "/",
	    "-d", "loop0,7:5", "-d", "7:0", "-f", file, "-m", "250us", "--sample", "10", "-D",
	    "12s", "-i", "1.5s", "-j", "out.json", "--no-live", "--ring-size", "16M", "-v", "-vv");
	if (!ASSERT_EQ(r.ret, CLI_RUN, "ret") || !ASSERT_STREQ(r.err, "", "stderr"))
		goto out;
	ASSERT_EQ(r.o.layers, (1u << IT_L_SYSCALL) | (1u << IT_L_BLOCK), "layers");
	if (ASSERT_EQ(r.o.nr_pids, 4, "nr_pids")) {
		ASSERT_EQ(r.o.pids[0], 1, "pid0");
		ASSERT_EQ(r.o.pids[1], 2, "pid1");
		ASSERT_EQ(r.o.pids[2], 3, "pid2");
		ASSERT_EQ(r.o.pids[3], 4, "pid3 (2 deduplicated)");
	}
	ASSERT_EQ(r.o.has_comm, 1, "has_comm");
	ASSERT_STREQ(r.o.comm, "fio", "comm");
	if (ASSERT_EQ(r.o.nr_cgroups, 1, "nr_cgroups")) /* the hierarchy's root, wherever mounted */
		ASSERT_STREQ(r.o.cgroups[0], "/", "cgroup");
	if (ASSERT_EQ(r.o.nr_devs, 2, "nr_devs")) {
		ASSERT_EQ(r.o.devs[0], IT_MKDEV(7, 0), "dev0");
		ASSERT_EQ(r.o.devs[1], IT_MKDEV(7, 5), "dev1");
	}
	ASSERT_STREQ(r.o.file_path, file, "file");
	ASSERT_EQ(r.o.min_lat_ns, 250000, "min lat");
	ASSERT_EQ(r.o.sample, 10, "sample");
	ASSERT_EQ(r.o.duration_ns, 12000000000ull, "duration");
	ASSERT_EQ(r.o.interval_ns, 1500000000ull, "interval");
	ASSERT_STREQ(r.o.json_path, "out.json", "json");
	ASSERT_EQ(r.o.live, 0, "no live");
	ASSERT_EQ(r.o.quiet, 0, "quiet");
	ASSERT_EQ(r.o.verbose, 3, "verbose");
	ASSERT_EQ(r.o.ring_size, 16ull << 20, "ring size");
out:
	run_free(&r);
}

static void test_cli_long(void)
{
	struct run r;

	RUN(&r, "--layers=fs", "--layers", "sched", "--pid=42", "--comm", "a-15-char-name!",
	    "--dev=loop1", "--file", file, "--min-latency=0", "--duration", "1h", "--interval=10ms",
	    "--json", "-", "--ring-size=4K", "--quiet", "--verbose");
	if (!ASSERT_EQ(r.ret, CLI_RUN, "ret") || !ASSERT_STREQ(r.err, "", "stderr"))
		goto out;
	ASSERT_EQ(r.o.layers, (1u << IT_L_FS) | (1u << IT_L_SCHED), "layers OR");
	ASSERT_EQ(r.o.nr_pids, 1, "nr_pids");
	ASSERT_EQ(r.o.pids[0], 42, "pid");
	ASSERT_STREQ(r.o.comm, "a-15-char-name!", "15 char comm");
	ASSERT_EQ(r.o.nr_devs, 1, "nr_devs");
	ASSERT_EQ(r.o.devs[0], IT_MKDEV(7, 1), "loop1");
	ASSERT_EQ(r.o.min_lat_ns, 0, "min lat 0 allowed");
	ASSERT_EQ(r.o.duration_ns, 3600000000000ull, "duration");
	ASSERT_EQ(r.o.interval_ns, 10000000, "interval");
	ASSERT_STREQ(r.o.json_path, "-", "json stdout");
	ASSERT_EQ(r.o.ring_size, 4096, "ring size min");
	ASSERT_EQ(r.o.quiet, 1, "quiet");
	ASSERT_EQ(r.o.live, 0, "quiet implies no live");
	ASSERT_EQ(r.o.verbose, 1, "verbose");
out:
	run_free(&r);

	/* the last of repeated single-valued options wins, without leaking */
	RUN(&r, "-j", "a", "-j", "b", "-f", file, "-f", cgdir, "-c", "x", "-c", "yy", "--ring-size",
	    "1G", "--sample=18446744073709551615");
	if (ASSERT_EQ(r.ret, CLI_RUN, "repeat ret")) {
		ASSERT_STREQ(r.o.json_path, "b", "last json");
		ASSERT_STREQ(r.o.file_path, cgdir, "last file (a directory is fine)");
		ASSERT_STREQ(r.o.comm, "yy", "last comm");
		ASSERT_EQ(r.o.ring_size, 1ull << 30, "ring size max");
		ASSERT_EQ(r.o.sample, UINT64_MAX, "sample max");
	}
	run_free(&r);
}

/* The sink's options, each into its own field. */
static void test_cli_sink(void)
{
	struct run r;

	RUN(&r, "--sink", "clickhouse://u@db:8123/d.t", "--sink-compress", "gzip", "--sink-spill",
	    "/var/tmp/sp", "--sink-auth", file);
	if (ASSERT_EQ(r.ret, CLI_RUN, "ret")) {
		ASSERT_STREQ(r.o.sink_url, "clickhouse://u@db:8123/d.t", "url");
		ASSERT_STREQ(r.o.sink_compress, "gzip", "compress");
		ASSERT_STREQ(r.o.sink_spill, "/var/tmp/sp", "spill");
		ASSERT_STREQ(r.o.sink_auth, file, "auth");
	}
	run_free(&r);
	RUN(&r, "--sink-compress", "zstd");
	if (ASSERT_EQ(r.ret, CLI_RUN, "ret zstd")) {
		ASSERT_STREQ(r.o.sink_compress, "zstd", "compress zstd");
		ASSERT_TRUE(r.o.sink_spill == NULL, "no spill directory set by --sink-compress");
	}
	run_free(&r);
}

/* A bad value: CLI_USAGE, nothing on out, exactly one line "iotracer: --opt: ...'value'...". */
static bool check_bad(const char *opt, const char *arg, const char *expect_line)
{
	char name[128], prefix[64], quoted[PATH_MAX + 2];
	struct run r;
	bool ok = false;

	snprintf(name, sizeof(name), "%s '%s'", opt, arg);
	RUN(&r, opt, arg);
	snprintf(prefix, sizeof(prefix), "iotracer: %s: ", opt);
	snprintf(quoted, sizeof(quoted), "'%s'", arg);
	if (!ASSERT_EQ(r.ret, CLI_USAGE, name) || !ASSERT_EQ(r.out_len, 0, name) ||
	    !ASSERT_EQ(count_lines(r.err), 1, name) ||
	    !ASSERT_EQ(strncmp(r.err, prefix, strlen(prefix)), 0, name) ||
	    !ASSERT_TRUE(strstr(r.err, quoted), name))
		goto out;
	if (expect_line && !ASSERT_STREQ(r.err, expect_line, name))
		goto out;
	ok = true;
out:
	if (!ok)
		UNIT_LOG("stderr was: %s", r.err);
	run_free(&r);
	return ok;
}

/* --metrics: the three address forms; the last one wins. */
static void test_cli_metrics(void)
{
	static const char *const good[] = { "127.0.0.1:9477", "[::1]:9477", ":9477",
					    "localhost:1" };
	struct run r;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		RUN(&r, "--metrics", good[i]);
		if (!ASSERT_EQ(r.ret, CLI_RUN, good[i]) || !ASSERT_EQ(r.err_len, 0, good[i]) ||
		    !ASSERT_STREQ(r.o.metrics_addr, good[i], good[i])) {
			run_free(&r);
			return;
		}
		run_free(&r);
	}
	RUN(&r, "--metrics", ":1", "--metrics", ":2");
	ASSERT_STREQ(r.o.metrics_addr, ":2", "last wins");
	run_free(&r);
	RUN(&r, "--metrics", "9477");
	ASSERT_STREQ(r.err,
		     "iotracer: --metrics: bad address '9477': expected HOST:PORT "
		     "(e.g. 127.0.0.1:9477, [::1]:9477, :9477)\n",
		     "message");
	run_free(&r);
	/* the cgroup label of a server that is not there: refused, not ignored */
	RUN(&r, "--metrics-cgroup-depth", "1");
	ASSERT_EQ(r.ret, CLI_USAGE, "depth without --metrics");
	ASSERT_STREQ(r.err, "iotracer: --metrics-cgroup-depth needs --metrics\n", "message");
	run_free(&r);
	RUN(&r, "--metrics-cgroup-depth", "1", "--metrics", ":9477");
	ASSERT_EQ(r.ret, CLI_RUN, "depth with --metrics");
	ASSERT_EQ(r.o.metrics_cg_depth, 1, "depth");
	run_free(&r);
	/* --blame: -m and always-on thin what is written, not its input; --sample would */
	RUN(&r, "--metrics", ":9477", "--metrics-cgroup-depth", "1", "--blame", "-m", "2ms");
	ASSERT_EQ(r.ret, CLI_RUN, "--blame with -m");
	ASSERT_EQ(r.o.min_lat_ns, 2000000, "-m kept");
	run_free(&r);
	RUN(&r, "--metrics", ":9477", "--metrics-cgroup-depth", "1", "--profile", "always-on",
	    "--blame");
	ASSERT_EQ(r.ret, CLI_RUN, "--blame with always-on");
	run_free(&r);
	RUN(&r, "--metrics", ":9477", "--metrics-cgroup-depth", "1", "--blame", "--sample", "10");
	ASSERT_EQ(r.ret, CLI_USAGE, "--blame with --sample");
	ASSERT_STREQ(r.err,
		     "iotracer: --blame needs a record of every block request: not with --sample\n",
		     "message");
	run_free(&r);
	/* the records alone: no /metrics, so no depth needed; nowhere to show it: exit 2 */
	RUN(&r, "--blame", "-j", "/tmp/x.json");
	ASSERT_EQ(r.ret, CLI_RUN, "--blame with -j alone");
	run_free(&r);
	RUN(&r, "--blame", "--metrics", ":9477");
	ASSERT_EQ(r.ret, CLI_USAGE, "--blame --metrics without a depth");
	ASSERT_STREQ(r.err,
		     "iotracer: --blame: its series are per cgroup: needs --metrics-cgroup-depth\n",
		     "message");
	run_free(&r);
	RUN(&r, "--blame");
	ASSERT_EQ(r.ret, CLI_USAGE, "--blame alone");
	ASSERT_STREQ(
		r.err,
		"iotracer: --blame: shows in /metrics or the records: needs --metrics, -j or --record\n",
		"message");
	run_free(&r);
	/* in host mode owners are VMs (docs/blame.md): no depth needed, even with /metrics */
	RUN(&r, "--mode", "host", "--blame", "--metrics", ":9477");
	ASSERT_EQ(r.ret, CLI_RUN, "--blame --metrics in host mode");
	run_free(&r);
	RUN(&r, "--mode", "host", "--blame", "-j", "/dev/null");
	ASSERT_EQ(r.ret, CLI_RUN, "--blame in host mode");
	ASSERT_EQ(r.o.metrics_cg_depth, -1, "no depth");
	run_free(&r);
}

static void test_cli_bad_values(void)
{
	static const struct {
		const char *opt, *arg;
	} cases[] = {
		{ "--layers", "foo" },
		{ "--layers", "" },
		{ "--layers", "fs,,block" },
		{ "--pid", "0" },
		{ "--pid", "4194305" },
		{ "--pid", "-1" },
		{ "--pid", "1,,2" },
		{ "--pid", "1," },
		{ "--pid", "abc" },
		{ "--pid", "" },
		{ "--comm", "" },
		{ "--comm", "sixteen-chars-xx" },
		{ "--cgroup", "/nonexistent/cgroup" },
		{ "--dev", "nosuch" },
		{ "--dev", "7:x" },
		{ "--dev", "/dev/null" },
		{ "--dev", "loop0,," },
		{ "--file", "/nonexistent/file" },
		{ "--file", "" },
		{ "--min-latency", "10xs" },
		{ "--min-latency", "-1ms" },
		{ "--sample", "0" },
		{ "--sample", "1.5" },
		{ "--sample", "-3" },
		{ "--duration", "0" },
		{ "--duration", "0s" },
		{ "--duration", "soon" },
		{ "--interval", "0ms" },
		{ "--interval", "1e3" },
		{ "--ring-size", "3M" },
		{ "--ring-size", "2K" },
		{ "--ring-size", "2G" },
		{ "--ring-size", "8X" },
		{ "--json", "" },
		{ "--mode", "hostile" },
		{ "--link", "udp:1.2.3.4:5" },
		{ "--link", "tcp:1.2.3.4" },
		{ "--listen", "vsock:notaport" },
		{ "--qemu-pid", "0" },
		{ "--name", "" },
		{ "--metrics", "" },
		{ "--metrics", "9477" },
		{ "--metrics", "host.example:9477" },
		{ "--metrics", "127.0.0.1:0" },
		{ "--metrics", ":65536" },
		{ "--metrics", "::1:9477" },
		{ "--metrics", "[::1]9477" },
		{ "--record", "" },
		{ "--record-size", "1K" },
		{ "--record-size", "64Q" },
		{ "--record-max", "0" },
		{ "--record-age", "0s" },
		{ "--record-level", "10" },
		{ "--record-level", "-1" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!check_bad(cases[i].opt, cases[i].arg, NULL))
			return;

	/* short spellings name the long option too; exact texts from docs/cli.md */
	{
		struct run r;

		RUN(&r, "-m", "10xs");
		ASSERT_EQ(r.ret, CLI_USAGE, "-m ret");
		ASSERT_STREQ(r.err,
			     "iotracer: --min-latency: bad value '10xs' (expected e.g. 250us, "
			     "10ms, 2s)\n",
			     "-m message");
		run_free(&r);
	}
	check_bad("--dev", "nosuch", "iotracer: --dev: no block device 'nosuch'\n");
	/* the one wording; keyword lists as their tables hold them (cliapply.c, lib/abi.c) */
	check_bad("--mode", "hostile",
		  "iotracer: --mode: bad value 'hostile' (expected standalone, guest, host)\n");
	check_bad("--profile", "cheap",
		  "iotracer: --profile: bad value 'cheap' (expected always-on, full)\n");
	check_bad("--writeback", "some",
		  "iotracer: --writeback: bad value 'some' (expected files, pages, off)\n");
	check_bad("--syscall-hooks", "fentry",
		  "iotracer: --syscall-hooks: bad value 'fentry' (expected auto, raw, percall)\n");
	check_bad("--sink-compress", "lz4",
		  "iotracer: --sink-compress: bad value 'lz4' (expected fast, zstd, gzip)\n");
	check_bad("--layers", "foo",
		  "iotracer: --layers: bad value 'foo' (expected a comma list of syscall, fs, "
		  "sched, block, nvme, scsi, virtio, qemu, stack, all)\n");
	check_bad("--record-level", "10",
		  "iotracer: --record-level: bad value '10' (expected 0 to 9)\n");
	check_bad("--json", "",
		  "iotracer: --json: bad value '' (expected a file name, or '-' for stdout)\n");
	check_bad("--cgroup", file, NULL); /* a file, not a directory */
	/* a budget below one segment */
	{
		struct run r;

		RUN(&r, "--record", "/tmp/x", "--record-size", "128M", "--record-max", "64M");
		ASSERT_EQ(r.ret, CLI_USAGE, "budget ret");
		ASSERT_STREQ(r.err, "iotracer: --record-max: must be at least --record-size\n",
			     "budget message");
		run_free(&r);
		RUN(&r, "--record", "/tmp/x", "--record-size", "1M", "--record-age", "10m",
		    "--record-max", "10M", "--record-level", "6");
		ASSERT_EQ(r.ret, CLI_RUN, "record ret");
		ASSERT_STREQ(r.o.record_dir, "/tmp/x", "record dir");
		ASSERT_EQ(r.o.record_size, 1ull << 20, "record size");
		ASSERT_EQ(r.o.record_age_ns, 600ull * 1000000000ull, "record age");
		ASSERT_EQ(r.o.record_max, 10ull << 20, "record max");
		ASSERT_EQ(r.o.record_level, 6, "record level");
		run_free(&r);
	}
}

/* The host/guest options: values kept, mode conflicts refused (exit 2). */
static void test_cli_modes(void)
{
	struct run r;

	RUN(&r, "--mode", "host", "--qemu-pid", "12,34", "--listen", "tcp:127.0.0.1:7767", "--link",
	    "unix:/run/x.sock", "--name", "h1");
	if (ASSERT_EQ(r.ret, CLI_RUN, "host ret")) {
		ASSERT_EQ(r.o.mode, IT_MODE_HOST, "mode");
		ASSERT_EQ(r.o.nr_qemu_pids, 2, "qemu pids");
		ASSERT_EQ(r.o.qemu_pids[1], 34, "qemu pid 2");
		ASSERT_EQ(r.o.nr_listens, 1, "listens");
		ASSERT_STREQ(r.o.links[0], "unix:/run/x.sock", "link");
		ASSERT_STREQ(r.o.name, "h1", "name");
	}
	run_free(&r);
	/* host mode joins by the host IOs' records: -m / --sample would silently unjoin them all */
	RUN(&r, "--mode", "host", "-m", "10ms");
	ASSERT_EQ(r.ret, CLI_USAGE, "host mode with -m");
	ASSERT_STREQ(r.err,
		     "iotracer: --min-latency: --mode host needs a record of every QEMU IO to join "
		     "the guests' requests (thin the guest's records instead)\n",
		     "message");
	run_free(&r);
	RUN(&r, "--mode", "host", "--sample", "4");
	ASSERT_EQ(r.ret, CLI_USAGE, "host mode with --sample");
	run_free(&r);
	RUN(&r, "--profile", "always-on", "--mode", "host");
	ASSERT_EQ(r.ret, CLI_USAGE, "host mode with the always-on profile");
	ASSERT_EQ(strncmp(r.err, "iotracer: --profile: ", 21), 0, "the profile is named");
	run_free(&r);
	RUN(&r, "--profile", "always-on", "-m", "0", "--mode", "host");
	ASSERT_EQ(r.ret, CLI_RUN, "host mode, the profile's -m taken back");
	run_free(&r);
	RUN(&r, "--mode", "guest", "--link", "tcp:10.0.2.2:7", "-m", "10ms");
	ASSERT_EQ(r.ret, CLI_RUN, "guest mode with -m");
	run_free(&r);
	RUN(&r, "--qemu-pid", "12");
	ASSERT_EQ(r.ret, CLI_USAGE, "qemu-pid without host mode");
	ASSERT_STREQ(r.err, "iotracer: --qemu-pid needs --mode host\n", "message");
	run_free(&r);
	RUN(&r, "--link", "vsock:2:7767");
	ASSERT_EQ(r.ret, CLI_USAGE, "link in standalone mode");
	run_free(&r);
	RUN(&r, "--mode", "guest", "--link", "tcp:10.0.2.2:7", "--link", "tcp:10.0.2.2:8");
	ASSERT_EQ(r.ret, CLI_USAGE, "two links for a guest");
	run_free(&r);
	RUN(&r, "--mode", "guest", "--listen", "vsock:7767");
	ASSERT_EQ(r.ret, CLI_USAGE, "listen in guest mode");
	run_free(&r);
}

/* --link-key: checked at parse; without it a tcp listener stays on the loopback. */
static void test_cli_link_key(void)
{
	char key[160], want[320];
	struct run r;

	RUN(&r, "--mode", "host", "--listen", "tcp:0.0.0.0:7767");
	ASSERT_EQ(r.ret, CLI_USAGE, "keyless tcp listener off the loopback");
	ASSERT_STREQ(r.err,
		     "iotracer: --listen tcp:0.0.0.0:7767: a tcp listener off the loopback "
		     "needs --link-key\n",
		     "message");
	run_free(&r);
	RUN(&r, "--mode", "host", "--listen", "tcp:[::1]:7767", "--listen", "tcp:127.0.0.2:7767",
	    "--listen", "unix:/run/x.sock");
	ASSERT_EQ(r.ret, CLI_RUN, "keyless loopback and unix listeners");
	run_free(&r);
	RUN(&r, "--mode", "guest", "--link-key", "/nonexistent/key");
	ASSERT_EQ(r.ret, CLI_USAGE, "missing key file");
	ASSERT_STREQ(r.err, "iotracer: --link-key: /nonexistent/key: No such file or directory\n",
		     "message names --link-key");
	run_free(&r);
	snprintf(key, sizeof(key), "%s/key", tmpdir);
	if (!ASSERT_OK(unit_write_str(key, "0123456789abcdef0123456789abcdef\n"), "key file"))
		return;
	chmod(key, 0644);
	RUN(&r, "--mode", "guest", "--link-key", key);
	ASSERT_EQ(r.ret, CLI_USAGE, "0644 key file");
	snprintf(
		want, sizeof(want),
		"iotracer: --link-key: %s: mode 0644 gives access to group/others (chmod 600 it)\n",
		key);
	ASSERT_STREQ(r.err, want, "one line naming --link-key and the mode");
	run_free(&r);
	chmod(key, 0600);
	RUN(&r, "--mode", "host", "--link-key", key, "--listen", "tcp:0.0.0.0:7767");
	if (geteuid() == 0) {
		ASSERT_EQ(r.ret, CLI_RUN, "root's 0600 key: any tcp listener");
		ASSERT_TRUE(r.o.link_key && r.o.link_key->len == 33, "33 key bytes");
	} else {
		ASSERT_EQ(r.ret, CLI_USAGE, "not root's key");
	}
	run_free(&r);
	RUN(&r, "--link-key", key);
	ASSERT_EQ(r.ret, CLI_USAGE, "--link-key in standalone mode");
	run_free(&r);
}

static void test_cli_limits(void)
{
	char list[64 * 8 + 16];
	struct run r;
	size_t len = 0;
	int i;

	for (i = 1; i <= 64; i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", i > 1 ? "," : "",
					i * 1000);
	RUN(&r, "-p", list, "-p", "1000", "--pid=4194304");
	if (ASSERT_EQ(r.ret, CLI_USAGE, "65 pids")) {
		ASSERT_EQ(count_lines(r.err), 1, "one line");
		ASSERT_TRUE(strstr(r.err, "iotracer: --pid: too many"), "too many pids");
	}
	run_free(&r);

	RUN(&r, "-p", list, "-p", "1000,2000");
	if (ASSERT_EQ(r.ret, CLI_RUN, "64 pids with duplicates")) {
		ASSERT_EQ(r.o.nr_pids, 64, "nr_pids");
		ASSERT_EQ(r.o.pids[63], 64000, "last pid");
	}
	run_free(&r);

	len = 0;
	for (i = 0; i < 65; i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s7:%d", i ? "," : "", i);
	RUN(&r, "-d", list);
	if (ASSERT_EQ(r.ret, CLI_USAGE, "65 devs")) {
		ASSERT_EQ(count_lines(r.err), 1, "one line");
		ASSERT_TRUE(strstr(r.err, "iotracer: --dev: too many"), "too many devs");
	}
	run_free(&r);
}

static void test_cli_help(void)
{
	static const char *const longs[] = {
		"--layers",	 "--pid",    "--comm",	   "--cgroup",	 "--dev",    "--file",
		"--min-latency", "--sample", "--duration", "--interval", "--json",   "--no-live",
		"--ring-size",	 "--quiet",  "--verbose",  "--help",	 "--version"
	};
	static const char *const shorts[] = { "-l,", "-p,", "-c,", "-d,", "-f,", "-m,",
					      "-D,", "-i,", "-j,", "-q,", "-v," };
	struct run r;
	size_t i;

	RUN(&r, "--help");
	ASSERT_EQ(r.ret, CLI_EXIT_OK, "ret");
	ASSERT_EQ(r.err_len, 0, "nothing on err");
	for (i = 0; i < sizeof(longs) / sizeof(longs[0]); i++)
		if (!ASSERT_TRUE(strstr(r.out, longs[i]), longs[i]))
			break;
	for (i = 0; i < sizeof(shorts) / sizeof(shorts[0]); i++)
		if (!ASSERT_TRUE(strstr(r.out, shorts[i]), shorts[i]))
			break;
	ASSERT_TRUE(strstr(r.out, "DUR:") && strstr(r.out, "250us"), "DUR syntax");
	ASSERT_TRUE(strstr(r.out, "SIZE:"), "SIZE syntax");
	/* one option per line, within 100 columns */
	{
		const char *p = r.out;

		while (*p) {
			const char *nl = strchrnul(p, '\n');

			if (!ASSERT_TRUE(nl - p <= 100, "line <= 100 columns"))
				break;
			p = *nl ? nl + 1 : nl;
		}
	}
	run_free(&r);

	/* --help wins even after other valid options */
	RUN(&r, "-q", "--help", "--bogus");
	ASSERT_EQ(r.ret, CLI_EXIT_OK, "help after options");
	run_free(&r);
}

static void test_cli_version(void)
{
	struct run r;

	RUN(&r, "--version");
	ASSERT_EQ(r.ret, CLI_EXIT_OK, "ret");
	ASSERT_STREQ(r.out, "iotracer " IT_VERSION "\n", "text");
	ASSERT_EQ(r.err_len, 0, "nothing on err");
	run_free(&r);
}

/* Unknown option etc.: CLI_USAGE, first err line names it, second is the hint. */
static bool check_usage(const char *const *args, const char *want, const char *name)
{
	struct run r;
	bool ok = false;
	char *nl;

	run_argv(&r, args);
	if (!ASSERT_EQ(r.ret, CLI_USAGE, name) || !ASSERT_EQ(r.out_len, 0, name) ||
	    !ASSERT_EQ(count_lines(r.err), 2, name))
		goto out;
	nl = strchr(r.err, '\n');
	if (!ASSERT_STREQ(nl + 1, "Try 'iotracer --help'.\n", name))
		goto out;
	*nl = '\0';
	if (!ASSERT_STREQ(r.err, want, name))
		goto out;
	ok = true;
out:
	run_free(&r);
	return ok;
}

#define USAGE(want, name, ...) check_usage((const char *const[]){ __VA_ARGS__, NULL }, want, name)

static void test_cli_unknown(void)
{
	USAGE("iotracer: unknown or ambiguous option '--bogus'", "long", "--bogus");
	USAGE("iotracer: unknown or ambiguous option '--bogus=1'", "long=", "-q", "--bogus=1");
	USAGE("iotracer: unknown option '-x'", "short", "-x");
	USAGE("iotracer: unknown option '-h'", "no -h", "-h");
	USAGE("iotracer: unknown option '-x'", "cluster", "-qx");
	USAGE("iotracer: option '--min-latency' requires an argument", "missing short", "-m");
	USAGE("iotracer: option '--min-latency' requires an argument", "missing long",
	      "--min-latency");
	USAGE("iotracer: option '--cgroup' requires an argument", "missing long-only", "--cgroup");
	USAGE("iotracer: option '--no-live' doesn't allow an argument", "flag with value",
	      "--no-live=1");
	USAGE("iotracer: unknown or ambiguous option '--d'", "ambiguous", "--d", "1s");
	USAGE("iotracer: unexpected argument 'foo'", "positional", "foo");
	USAGE("iotracer: unexpected argument 'foo'", "positional among options", "-q", "foo", "-v");
	USAGE("iotracer: unexpected argument 'x'", "after --", "--", "x");
	USAGE("iotracer: unexpected argument '-'", "dash", "-");
}

static void test_cli_abbrev_and_reuse(void)
{
	struct run r;
	int i;

	/* getopt_long accepts unambiguous prefixes of long options */
	RUN(&r, "--dur", "2s", "--no-l");
	ASSERT_EQ(r.ret, CLI_RUN, "prefix ret");
	ASSERT_EQ(r.o.duration_ns, 2000000000ull, "prefix duration");
	ASSERT_EQ(r.o.live, 0, "prefix no-live");
	run_free(&r);

	/* parsing is repeatable: optind is reset on each call */
	for (i = 0; i < 3; i++) {
		RUN(&r, "-p", "7", "-m", "1ms");
		if (!ASSERT_EQ(r.ret, CLI_RUN, "repeat") ||
		    !ASSERT_EQ(r.o.nr_pids, 1, "repeat pids") ||
		    !ASSERT_EQ(r.o.min_lat_ns, 1000000, "repeat min lat")) {
			run_free(&r);
			return;
		}
		run_free(&r);
		RUN(&r, "-x");
		ASSERT_EQ(r.ret, CLI_USAGE, "repeat bad");
		run_free(&r);
	}
	cli_free(&r.o); /* twice is fine */
}

int main(void)
{
	if (run_setup("cli")) {
		printf("FAIL test_cli_setup: cannot create the fake sysfs tree in /tmp\n");
		run_teardown();
		return 1;
	}
	RUN_TEST(test_cli_defaults);
	RUN_TEST(test_cli_short);
	RUN_TEST(test_cli_long);
	RUN_TEST(test_cli_sink);
	RUN_TEST(test_cli_bad_values);
	RUN_TEST(test_cli_modes);
	RUN_TEST(test_cli_metrics);
	RUN_TEST(test_cli_link_key);
	RUN_TEST(test_cli_limits);
	RUN_TEST(test_cli_help);
	RUN_TEST(test_cli_version);
	RUN_TEST(test_cli_unknown);
	RUN_TEST(test_cli_abbrev_and_reuse);
	run_teardown();
	return unit_result();
}
