// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_config: the config file reader (config_read, service/config.c, libinih under
 * it, every value through cli_apply). The input is the file (a memfd by path).
 *
 * Checked besides memory safety: config_read() returns 0 or a usage error; a
 * refusal is one line, "iotracer: PATH..." (the file named), and the options it
 * leaves are within cli.h's limits.
 */
#include <stdio.h>

#include "fuzz.h"
#include "service/cli.h"
#include "service/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	char *err = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&err, &len);
	struct it_opts o;
	int ret;

	FUZZ_SETUP(f, "open_memstream");
	cli_defaults(&o);
	ret = config_read(path, &o, f);
	fclose(f);
	if (ret) {
		const char *nl = memchr(err, '\n', len);

		FUZZ_CHECK(len && !strncmp(err, "iotracer: ", 10), "refusal without a line: '%.*s'",
			   (int)(len < 200 ? len : 200), err ? err : "");
		FUZZ_CHECK(nl && (size_t)(nl - err) == len - 1,
			   "refusal of more than one line: %.*s", (int)(len < 300 ? len : 300),
			   err);
		FUZZ_CHECK(strstr(err, path) != NULL, "the file is not named: %s", err);
	} else {
		FUZZ_CHECK(len == 0, "accepted, and said: %.*s", (int)(len < 200 ? len : 200), err);
		FUZZ_CHECK(o.nr_pids <= CLI_MAX_PIDS && o.nr_devs <= CLI_MAX_DEVS, "lists %d %d",
			   o.nr_pids, o.nr_devs);
		FUZZ_CHECK(o.sample >= 1, "sample %llu", (unsigned long long)o.sample);
	}
	free(err);
	cli_free(&o);
	return 0;
}
