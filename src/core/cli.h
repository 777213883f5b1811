/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cli: the run options of iotracer (docs/cli.md). Subcommands are handled by
 * main() before cli_parse().
 */
#ifndef IT_CLI_H
#define IT_CLI_H

#include <stdint.h>
#include <stdio.h>

struct link_key; /* lib/keyfile.h */

#ifndef IT_VERSION
#define IT_VERSION "dev"
#endif

#define CLI_MAX_PIDS 64
#define CLI_MAX_DEVS 64
#define CLI_MAX_PID 4194304u /* PID_MAX_LIMIT */
#define CLI_COMM_LEN 16
#define CLI_RING_MIN (4ull << 10)
#define CLI_RING_MAX (1ull << 30)
#define CLI_RING_DEFAULT (8ull << 20)
#define CLI_MAX_LINKS 8
#define CLI_MAX_QEMU 16

enum it_mode { IT_MODE_STANDALONE = 0, IT_MODE_GUEST, IT_MODE_HOST };

struct it_opts {
	uint32_t layers; /* 1u << IT_L_*; 0 = all that attach */
	uint32_t pids[CLI_MAX_PIDS]; /* tgids, no duplicates */
	int nr_pids;
	char comm[CLI_COMM_LEN];
	int has_comm;
	char *cgroup_path; /* malloc'd, NULL if not given */
	uint32_t devs[CLI_MAX_DEVS]; /* kernel dev_t (IT_MKDEV), no duplicates */
	int nr_devs;
	char *file_path; /* malloc'd, NULL if not given */
	uint64_t min_lat_ns;
	uint64_t sample; /* 1 = all */
	uint64_t duration_ns; /* 0 = forever */
	uint64_t interval_ns; /* 0 = final only */
	char *json_path; /* malloc'd, NULL = off, "-" = stdout */
	char *record_dir; /* --record: malloc'd, NULL = off (docs/record.md) */
	uint64_t record_size; /* bytes: a segment is closed at this size */
	uint64_t record_age_ns; /* ... or this age */
	uint64_t record_max; /* bytes: the directory's segments, at most */
	int record_level; /* zlib level of the blocks, 0-9 */
	int live; /* live per-request lines; 0 with --no-live or -q */
	int quiet;
	int verbose; /* number of -v */
	uint64_t ring_size; /* bytes, power of two */
	int sched_switch; /* --sched-switch: sched layer from the switch/wakeup hooks too */
	const char *sysfs_root; /* "/sys"; tests point it to a fake tree */
	/* host/guest modes (docs/modes.md) */
	enum it_mode mode;
	char *links[CLI_MAX_LINKS]; /* --link: addresses to dial (malloc'd) */
	int nr_links;
	char *listens[CLI_MAX_LINKS]; /* --listen: addresses to accept on (host) */
	int nr_listens;
	uint32_t qemu_pids[CLI_MAX_QEMU]; /* --qemu-pid; none: auto-discover */
	int nr_qemu_pids;
	char *name; /* --name: this side's name in the link hello */
	char *metrics_addr; /* --metrics: serve Prometheus /metrics here (malloc'd), NULL = off */
	struct link_key *link_key; /* --link-key: read and checked at parse (malloc'd) */
};

enum { CLI_RUN = 0, CLI_EXIT_OK = 1, CLI_USAGE = 2 };

/* live=1, sample=1, ring_size=8M, sysfs_root="/sys", everything else 0/NULL. */
void cli_defaults(struct it_opts *o);

/*
 * Parse the run options into *o (start from cli_defaults(); o->sysfs_root is
 * used to resolve --dev names). Returns CLI_RUN to go on, CLI_EXIT_OK after
 * --help/--version (printed to out), or CLI_USAGE after printing one error
 * line (plus a "Try" hint for unknown options, missing arguments and stray
 * operands) to err. out/err NULL mean stdout/stderr.
 * -p and -d may repeat (lists accumulate), -l repeats OR the layers, -v counts,
 * other options: the last one wins. Call cli_free() whatever it returns.
 * Uses getopt_long (resets optind; argv may be permuted).
 */
int cli_parse(int argc, char **argv, struct it_opts *o, FILE *out, FILE *err);

/* Free the strings owned by *o (safe to call twice). */
void cli_free(struct it_opts *o);

/* The usage text (what --help prints). */
void cli_usage(FILE *f);

#endif /* IT_CLI_H */
