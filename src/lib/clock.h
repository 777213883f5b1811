/* SPDX-License-Identifier: GPL-2.0 */
/* clock: CLOCK_MONOTONIC in ns, the clock of bpf_ktime_get_ns() and of every timestamp here. */
#ifndef IT_CLOCK_H
#define IT_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t it_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* IT_CLOCK_H */
