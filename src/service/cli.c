// SPDX-License-Identifier: GPL-2.0
/*
 * cli: command line of the run mode. See cli.h and docs/cli.md. Here
 * getopt, the checks of a whole command line and where a value came from; a
 * value into struct it_opts is cliapply.c's, the table of options
 * clitab.c's (both below this file: it calls them, they never call it).
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iotracer.h"
#include "records/cgroup.h"
#include "service/cli.h"
#include "service/cli_int.h"
#include "records/record.h"
#include "sink/sink.h"
#include "lib/addr.h"
#include "lib/keyfile.h"
#include "lib/log.h"
#include "lib/procfs.h"

void cli_defaults(struct it_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->live = 1;
	o->sample = 1;
	o->ring_size = CLI_RING_DEFAULT;
	o->sysfs_root = "/sys";
	o->metrics_cg_depth = -1;
	o->file_names = CLI_FILE_NAMES_DEFAULT;
	o->record_size = REC_DEF_SIZE;
	o->record_age_ns = REC_DEF_AGE_NS;
	o->record_max = REC_DEF_MAX;
	o->sink_queue = SK_DEF_QUEUE;
	o->sink_spill_max = SK_DEF_SPILL_MAX;
	o->sink_timeout_ns = SK_DEF_TIMEOUT_MS * 1000000ull;
}

static void cli_free_strs(char **arr, int *nr)
{
	for (int i = 0; i < *nr; i++) {
		free(arr[i]);
		arr[i] = NULL;
	}
	*nr = 0;
}

void cli_free(struct it_opts *o)
{
	cli_free_strs(o->cgroups, &o->nr_cgroups);
	cli_free_strs(o->dev_names, &o->nr_dev_names);
	free(o->file_path);
	o->file_path = NULL;
	free(o->json_path);
	o->json_path = NULL;
	free(o->record_dir);
	o->record_dir = NULL;
	free(o->sink_url);
	free(o->sink_auth);
	free(o->sink_ca);
	free(o->sink_spill);
	free(o->sink_compress);
	o->sink_url = o->sink_auth = o->sink_ca = o->sink_spill = o->sink_compress = NULL;
	cli_free_strs(o->links, &o->nr_links);
	cli_free_strs(o->listens, &o->nr_listens);
	free(o->name);
	o->name = NULL;
	free(o->qemu_uprobes);
	o->qemu_uprobes = NULL;
	free(o->profile);
	o->profile = NULL;
	free(o->syscall_hooks);
	o->syscall_hooks = NULL;
	free(o->writeback);
	o->writeback = NULL;
	free(o->metrics_addr);
	o->metrics_addr = NULL;
	if (o->link_key)
		keyfile_wipe(o->link_key);
	free(o->link_key);
	o->link_key = NULL;
	free(o->config_path);
	o->config_path = NULL;
}

/* Without a key, anyone who reaches a tcp listener could feed us: loopback only. */
static int cli_check_listen(const struct it_opts *o, FILE *err)
{
	struct net_addr a;
	char why[128];

	for (int i = 0; !o->link_key && i < o->nr_listens; i++) {
		if (addr_parse(o->listens[i], &a, why, sizeof(why)) || a.kind != ADDR_TCP ||
		    addr_is_loopback(&a))
			continue;
		it_err_to(err, "--listen %s: a tcp listener off the loopback needs --link-key",
			  o->listens[i]);
		return CLI_USAGE;
	}
	return CLI_RUN;
}

/*
 * Host mode joins each guest request to QEMU's host IO by that IO's records:
 * -m and --sample (the always-on profile's -m too) would leave the host IOs
 * unrecorded and the guests' requests unjoined (no_host_io), with nothing
 * dropped or said (seen: a lab run's host daemon #2 under -m 10ms).
 */
static int cli_check_host_thinning(const struct it_opts *o, FILE *err)
{
	char who[PATH_MAX + 32];
	const char *name = o->min_lat_ns ? "min-latency" : "sample";

	if (o->mode != IT_MODE_HOST || (!o->min_lat_ns && o->sample <= 1))
		return CLI_RUN;
	/* the profile's -m, not one given after it */
	if (o->profile && !strcmp(o->profile, "always-on") &&
	    o->min_lat_ns == IT_ALWAYS_ON_MIN_LAT_NS)
		name = "profile";
	it_err_to(err,
		  "%s: --mode host needs a record of every QEMU IO to join the guests' "
		  "requests (thin the guest's records instead)",
		  cli_where(o, name, who, sizeof(who)));
	return CLI_USAGE;
}

/* The cgroup label of /metrics is nothing without the server. */
static int cli_check_metrics(const struct it_opts *o, FILE *err)
{
	char who[PATH_MAX + 32];

	if (o->metrics_addr || o->metrics_cg_depth < 0)
		return CLI_RUN;
	it_err_to(err, "%s needs --metrics",
		  cli_where(o, "metrics-cgroup-depth", who, sizeof(who)));
	return CLI_USAGE;
}

/* Options that only make sense in one mode. */
static int cli_check_mode(const struct it_opts *o, FILE *err)
{
	const char *bad = NULL;

	if (o->mode != IT_MODE_HOST && o->nr_qemu_pids)
		bad = "--qemu-pid needs --mode host";
	else if (o->mode != IT_MODE_HOST && (o->qemu_uprobes || o->qemu_stages))
		bad = o->qemu_stages ? "--qemu-stages needs --mode host" :
				       "--qemu-uprobes needs --mode host";
	else if (o->mode != IT_MODE_HOST && o->nr_listens)
		bad = "--listen needs --mode host";
	else if (o->mode == IT_MODE_STANDALONE && o->nr_links)
		bad = "--link needs --mode guest or --mode host";
	else if (o->mode == IT_MODE_GUEST && o->nr_links > 1)
		bad = "--mode guest takes one --link";
	else if (o->mode == IT_MODE_STANDALONE && o->link_key)
		bad = "--link-key needs --mode guest or --mode host";
	else if (o->record_max < o->record_size)
		bad = "--record-max: must be at least --record-size";
	else if (o->metrics_files && !o->metrics_addr)
		bad = "--metrics-files needs --metrics";
	else if (o->metrics_files && !o->file_names)
		bad = "--metrics-files: labels the series with file names: not with --file-names 0";
	else if (o->metrics_containers && o->metrics_cg_depth < 0)
		bad = "--metrics-containers: labels the per-cgroup series: needs --metrics-cgroup-depth";
	else if (o->blame && o->metrics_addr && o->metrics_cg_depth < 0 && o->mode != IT_MODE_HOST)
		bad = "--blame: its series are per cgroup: needs --metrics-cgroup-depth";
	else if (o->blame && !o->metrics_addr && !o->json_path && !o->record_dir)
		bad = "--blame: shows in /metrics or the records: needs --metrics, -j or --record";
	else if (o->blame && o->sample > 1)
		bad = "--blame needs a record of every block request: not with --sample";
	if (!bad)
		return cli_check_host_thinning(o, err) ?: cli_check_listen(o, err);
	it_err_to(err, "%s", bad);
	return CLI_USAGE;
}

/*
 * An option that accumulates (its value type says), given on the command
 * line, replaces what the config file said (the first time it is seen there).
 */
static void cli_forget(const struct cli_option *r, struct it_opts *o)
{
	void *field = (char *)o + r->off;
	int *nr = (int *)((char *)o + r->nr);

	switch (r->val) {
	case CLI_V_LAYERS:
		*(uint32_t *)field = 0;
		break;
	case CLI_V_COUNT:
		*(int *)field = 0;
		break;
	case CLI_V_U32S:
	case CLI_V_DEVS:
		*nr = 0;
		break;
	case CLI_V_STRS:
		cli_free_strs(field, nr);
		break;
	default:
		break;
	}
}

/*
 * A first getopt pass looks for --config, --no-config, --help and --version
 * only (cli_parse reports errors). No file for --help/--version.
 */
int cli_config_file(int argc, char **argv, struct it_opts *o, FILE *err, const char **file)
{
	const char *path = NULL;
	int c, no_config = 0, info = 0;

	*file = NULL;
	optind = 0;
	opterr = 0;
	while ((c = cli_getopt(argc, argv)) != -1) {
		if (c == CLI_OPT_CONFIG)
			path = optarg;
		else if (c == CLI_OPT_NO_CONFIG)
			no_config = 1;
		else if (c == CLI_OPT_HELP || c == CLI_OPT_VERSION)
			info = 1;
	}
	if (info)
		return CLI_RUN;
	if (path && no_config) {
		it_err_to(err, "--config and --no-config exclude each other");
		return CLI_USAGE;
	}
	if (!path || no_config)
		return CLI_RUN;
	if (cli_setstr(&o->config_path, path)) {
		it_err_to(err, "--config: out of memory");
		return CLI_USAGE;
	}
	*file = o->config_path;
	return CLI_RUN;
}

int cli_parse(int argc, char **argv, struct it_opts *o, FILE *out, FILE *err)
{
	unsigned char seen[CLI_MAX_OPTS] = { 0 };
	const struct cli_option *r;
	struct cli_src src;
	int c, ret;

	if (!out)
		out = stdout;
	if (!err)
		err = stderr;
	src = (struct cli_src){ .err = err };
	o->argc = argc;
	o->argv = argv;
	optind = 0; /* full re-initialisation of glibc getopt */
	opterr = 0;
	while ((c = cli_getopt(argc, argv)) != -1) {
		if (c == '?' || c == ':') {
			ret = opts_getopt_error(cli_table(), c, argc, argv, err);
		} else {
			r = cli_option_of(c);
			if (r && !seen[cli_option_index(r)]++)
				cli_forget(r, o);
			if (r)
				o->from_line[cli_option_index(r)] = 0; /* the command line's now */
			ret = cli_apply(c, optarg, o, out, &src);
		}
		if (ret != CLI_RUN)
			goto out;
	}
	if (optind < argc) {
		ret = opts_unexpected(cli_table(), argv[optind], err);
	} else {
		ret = cli_check_mode(o, err) ?: cli_check_metrics(o, err);
	}
out:
	fflush(out);
	fflush(err);
	return ret;
}

int cli_check_start(const struct it_opts *o, FILE *err)
{
	char who[PATH_MAX + 32];

	for (int i = 0; i < o->nr_pids; i++) {
		int64_t tgid = procfs_tgid((pid_t)o->pids[i]);

		if (tgid < 0) {
			it_err_to(err, "%s: no process %u", cli_where(o, "pid", who, sizeof(who)),
				  o->pids[i]);
			return CLI_USAGE;
		}
		if ((uint64_t)tgid != o->pids[i]) {
			it_err_to(err, "%s: %u is a thread of process %lld: -p takes process ids",
				  cli_where(o, "pid", who, sizeof(who)), o->pids[i],
				  (long long)tgid);
			return CLI_USAGE;
		}
	}
	return CLI_RUN;
}

void cli_set_line(struct it_opts *o, int key, unsigned int line)
{
	const struct cli_option *r = cli_option_of(key);

	if (r)
		o->from_line[cli_option_index(r)] = line;
}

const char *cli_where(const struct it_opts *o, const char *name, char *buf, size_t n)
{
	const struct cli_option *r = cli_option_named(name);
	unsigned int line = r ? o->from_line[cli_option_index(r)] : 0;

	if (!r)
		snprintf(buf, n, "--%s", name);
	else if (line && o->config_path)
		snprintf(buf, n, "%s:%u: %s", o->config_path, line, r->row.name);
	else
		snprintf(buf, n, "--%s", r->row.name);
	return buf;
}
