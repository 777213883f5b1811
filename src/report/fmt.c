// SPDX-License-Identifier: GPL-2.0
/*
 * fmt: the formats the parts of a report share (sizes, wall-clock times). See internal.h.
 */
#include <stdio.h>
#include <time.h>

#include "report/internal.h"

char *rp_fmt_bytes(uint64_t b, char *buf, size_t n)
{
	if (b && !(b % (1024 * 1024)))
		snprintf(buf, n, "%lluMiB", (unsigned long long)(b >> 20));
	else if (b && !(b % 1024))
		snprintf(buf, n, "%lluKiB", (unsigned long long)(b >> 10));
	else
		snprintf(buf, n, "%lluB", (unsigned long long)b);
	return buf;
}

char *rp_fmt_real(uint64_t real, char *buf, size_t n)
{
	time_t s = (time_t)(real / 1000000000ull);
	struct tm tm;
	char t[32];

	gmtime_r(&s, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, n, "%s.%06lluZ", t, (unsigned long long)(real % 1000000000ull / 1000));
	return buf;
}
