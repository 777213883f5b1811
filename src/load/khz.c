// SPDX-License-Identifier: GPL-2.0
/*
 * khz: the kernel's CONFIG_HZ (see khz.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/utsname.h>
#include <zlib.h>

#include "load/khz.h"

unsigned int khz_from_config(const char *path)
{
	gzFile f = gzopen(path, "r"); /* reads a plain file as it is */
	unsigned int hz = 0;
	char line[256];
	char *end;
	unsigned long v;

	if (!f)
		return 0;
	while (gzgets(f, line, sizeof(line))) {
		if (strncmp(line, "CONFIG_HZ=", 10))
			continue;
		v = strtoul(line + 10, &end, 10);
		if (end != line + 10 && (*end == '\n' || !*end) && v > 0 && v <= 100000)
			hz = (unsigned int)v;
		break;
	}
	gzclose(f);
	return hz;
}

/* /proc/timer_list's "now at N nsecs" and its first "jiffies: N": 0, or -1. */
static int timer_list(uint64_t *now_ns, uint64_t *jiffies)
{
	FILE *f = fopen("/proc/timer_list", "r");
	char line[256];
	int have = 0;

	if (!f)
		return -1;
	while (have != 3 && fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (!(have & 1) && sscanf(line, "now at %llu nsecs", &v) == 1) {
			*now_ns = v;
			have |= 1;
		} else if (!(have & 2) && sscanf(line, "jiffies: %llu", &v) == 1) {
			*jiffies = v;
			have |= 2;
		}
	}
	fclose(f);
	return have == 3 ? 0 : -1;
}

static unsigned int hz_measured(void)
{
	static const unsigned int rates[] = { 100, 250, 300, 1000 };
	struct timespec pause = { .tv_nsec = 20 * 1000 * 1000 };
	uint64_t t0, j0, t1, j1;
	double hz, best = 0;
	unsigned int pick = 0;

	if (timer_list(&t0, &j0) || nanosleep(&pause, NULL) || timer_list(&t1, &j1) || t1 <= t0)
		return 0;
	hz = (double)(j1 - j0) * 1e9 / (double)(t1 - t0);
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		double d = hz > rates[i] ? hz / rates[i] : rates[i] / hz;

		if (!pick || d < best) {
			best = d;
			pick = rates[i];
		}
	}
	return best < 1.25 ? pick : 0;
}

unsigned int khz_kernel(void)
{
	struct utsname u;
	char path[128 + sizeof(u.release)];
	unsigned int hz = 0;

	if (!uname(&u)) {
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		hz = khz_from_config(path);
	}
	if (!hz)
		hz = khz_from_config("/proc/config.gz");
	return hz ? hz : hz_measured();
}
