/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cli_run.h: run config_parse() as main() does, with its output captured, over a
 * fake sysfs in a temp dir: sys/class/block/loop0 (7:0) and loop1 (7:1), a
 * directory cg/ and a file data. Shared by test_cli.c and test_config.c.
 * No config file is read unless a test names one (--config).
 */
#ifndef IT_CLI_RUN_H
#define IT_CLI_RUN_H

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

#include "unit.h"
#include "service/cli.h"
#include "service/config.h"

#define MAX_ARGS 160

struct run {
	int ret;
	char *out, *err;
	size_t out_len, err_len;
	struct it_opts o;
};

static char tmpdir[64]; /* holds sys/class/block/..., cg/ and file */
static char sysroot[128], cgdir[128], file[128];

/*
 * cli_parse("iotracer" + the NULL terminated args), out/err captured;
 */
static void run_args(struct run *r, const char *const *args)
{
	char *argv[MAX_ARGS + 2];
	FILE *out, *err;
	int argc = 0;

	memset(r, 0, sizeof(*r));
	cli_defaults(&r->o);
	r->o.sysfs_root = sysroot;
	argv[argc++] = (char *)"iotracer";
	while (*args && argc <= MAX_ARGS)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;

	out = open_memstream(&r->out, &r->out_len);
	err = open_memstream(&r->err, &r->err_len);
	if (!out || !err) {
		UNIT_LOG("open_memstream failed\n");
		abort();
	}
	r->ret = config_parse(argc, argv, &r->o, out, err);
	fclose(out);
	fclose(err);
}

static inline void run_argv(struct run *r, const char *const *args)
{
	run_args(r, args);
}

#define RUN(r, ...) run_argv(r, (const char *const[]){ __VA_ARGS__, NULL })

static void run_free(struct run *r)
{
	cli_free(&r->o);
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

/* The fake tree under /tmp/it_<name>.XXXXXX. 0 or -errno. */
static int run_setup(const char *name)
{
	static const char *const dirs[] = { "sys",
					    "sys/class",
					    "sys/class/block",
					    "sys/class/block/loop0",
					    "sys/class/block/loop1",
					    "cg" };
	char path[PATH_MAX];
	size_t i;
	int err = 0;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/it_%s.XXXXXX", name);
	if (!mkdtemp(tmpdir))
		return -errno;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, dirs[i]);
		if (mkdir(path, 0755))
			return -errno;
	}
	snprintf(sysroot, sizeof(sysroot), "%s/sys", tmpdir);
	snprintf(cgdir, sizeof(cgdir), "%s/cg", tmpdir);
	snprintf(file, sizeof(file), "%s/data", tmpdir);
	snprintf(path, sizeof(path), "%s/class/block/loop0/dev", sysroot);
	err = err ?: unit_write_str(path, "7:0\n");
	snprintf(path, sizeof(path), "%s/class/block/loop1/dev", sysroot);
	err = err ?: unit_write_str(path, "7:1\n");
	err = err ?: unit_write_str(file, "hello\n");
	return err;
}

static void run_teardown(void)
{
	char cmd[PATH_MAX];

	if (strncmp(tmpdir, "/tmp/it_", 8) || !strchr(tmpdir, '.'))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		UNIT_LOG("cannot remove %s\n", tmpdir);
}

#endif /* IT_CLI_RUN_H */
