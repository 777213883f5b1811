/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rng.h: the tests' and tools' random numbers (unit.h includes it; the
 * tools include it on its own). xorshift64* (Vigna, "An experimental
 * exploration of Marsaglia's xorshift generators"): deterministic from the
 * caller's state, which must not start at 0, so a failing input comes back.
 */
#ifndef IT_UNIT_RNG_H
#define IT_UNIT_RNG_H

#include <stdint.h>

static inline uint64_t unit_rng(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dull;
}

#endif /* IT_UNIT_RNG_H */
