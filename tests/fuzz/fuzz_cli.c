// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_cli: the run options (config_parse, service/config.c: the command line of
 * service/cli.c). The input is split into arguments at newlines and NUL bytes,
 * after argv[0] "iotracer". --dev names are
 * resolved in the real /sys (read only), --file/--cgroup paths are stat()ed.
 *
 * Checked besides memory safety: config_parse() returns one of its three results,
 * prints one error line (plus a "Try" hint) when it refuses, and the options it
 * accepts are within the limits cli.h states.
 */
#include <stdio.h>

#include "fuzz.h"
#include "service/cli.h"
#include "service/config.h"

#define MAX_ARGS 64

static FILE *sink; /* --help and --version text */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	sink = fopen("/dev/null", "w");
	FUZZ_SETUP(sink, "/dev/null");
	return 0;
}

/* Every --listen is a host option, every --link needs a mode: cli.h's rules. */
static void check_opts(const struct it_opts *o)
{
	FUZZ_CHECK(o->nr_pids >= 0 && o->nr_pids <= CLI_MAX_PIDS, "nr_pids %d", o->nr_pids);
	FUZZ_CHECK(o->nr_devs >= 0 && o->nr_devs <= CLI_MAX_DEVS, "nr_devs %d", o->nr_devs);
	FUZZ_CHECK(o->nr_links <= CLI_MAX_LINKS && o->nr_listens <= CLI_MAX_LINKS,
		   "%d links, %d listens", o->nr_links, o->nr_listens);
	FUZZ_CHECK(o->nr_qemu_pids <= CLI_MAX_QEMU, "nr_qemu_pids %d", o->nr_qemu_pids);
	FUZZ_CHECK(o->ring_size >= CLI_RING_MIN && o->ring_size <= CLI_RING_MAX &&
			   !(o->ring_size & (o->ring_size - 1)),
		   "ring_size %llu", (unsigned long long)o->ring_size);
	FUZZ_CHECK(o->sample >= 1, "sample %llu", (unsigned long long)o->sample);
	FUZZ_CHECK(!o->has_comm || (o->comm[0] && !o->comm[CLI_COMM_LEN - 1]), "comm");
	FUZZ_CHECK(o->mode == IT_MODE_HOST || (!o->nr_listens && !o->nr_qemu_pids),
		   "--listen/--qemu-pid accepted in mode %d", o->mode);
	FUZZ_CHECK(o->mode != IT_MODE_STANDALONE || !o->nr_links, "--link accepted standalone");
	for (int i = 0; i < o->nr_pids; i++)
		FUZZ_CHECK(o->pids[i] >= 1 && o->pids[i] <= CLI_MAX_PID, "pid %u", o->pids[i]);
}

/* A refusal is "iotracer: ..." on one line, possibly followed by the "Try" hint. */
static void check_error(const char *err, size_t len)
{
	const char *nl = memchr(err, '\n', len);

	FUZZ_CHECK(len > 10 && !strncmp(err, "iotracer: ", 10), "error text \"%.*s\"", (int)len,
		   err);
	FUZZ_CHECK(nl && (nl + 1 == err + len || !strcmp(nl + 1, "Try 'iotracer --help'.\n")),
		   "error is not one line: \"%.*s\"", (int)len, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 1], *buf, *errtxt = NULL;
	size_t errlen = 0;
	struct it_opts o;
	FILE *err;
	int argc, ret;

	argv[0] = "iotracer";
	argc = 1 + fuzz_split(data, size, "\n", argv + 1, MAX_ARGS, &buf);
	err = open_memstream(&errtxt, &errlen);
	FUZZ_SETUP(err, "open_memstream");
	cli_defaults(&o);
	ret = config_parse(argc, argv, &o, sink, err);
	fclose(err);
	FUZZ_CHECK(ret == CLI_RUN || ret == CLI_EXIT_OK || ret == CLI_USAGE, "returned %d", ret);
	if (ret == CLI_USAGE)
		check_error(errtxt, errlen);
	else
		FUZZ_CHECK(!errlen, "printed \"%s\" and returned %d", errtxt, ret);
	if (ret == CLI_RUN)
		check_opts(&o);
	cli_free(&o);
	free(errtxt);
	free(buf);
	return 0;
}
