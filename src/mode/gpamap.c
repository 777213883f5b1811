// SPDX-License-Identifier: GPL-2.0
/*
 * gpamap: a VM's GPA -> HVA map, learned from samples (gpamap.h).
 */
#include <string.h>

#include "mode/gpamap.h"

static int covers(const struct gpamap_seg *s, uint64_t gpa, uint64_t len)
{
	return s->lo <= gpa && gpa + len <= s->hi;
}

static int in_map(const struct gpamap_seg *s, uint64_t hva, uint64_t len)
{
	return s->map_hi && s->map_lo <= hva && hva + len <= s->map_hi;
}

/* GPA distance from [gpa, gpa + len) to a segment's range (0: they meet). */
static uint64_t dist(const struct gpamap_seg *s, uint64_t gpa, uint64_t len)
{
	if (gpa + len <= s->lo)
		return s->lo - (gpa + len);
	return gpa >= s->hi ? gpa - s->hi : 0;
}

static void drop(struct gpamap *m, int i)
{
	m->seg[i] = m->seg[--m->n];
	m->gen++;
}

/* Would [lo, hi) cross a segment of another offset than delta? */
static int crosses(const struct gpamap *m, int64_t delta, uint64_t lo, uint64_t hi)
{
	for (int i = 0; i < m->n; i++)
		if (m->seg[i].delta != delta && m->seg[i].lo < hi && lo < m->seg[i].hi)
			return 1;
	return 0;
}

static void add_seg(struct gpamap *m, int64_t delta, uint64_t gpa, uint64_t len, uint64_t map_lo,
		    uint64_t map_hi)
{
	struct gpamap_seg *s;

	if (m->n == GPAMAP_SEGS) { /* the least sampled one goes */
		int least = 0;

		for (int i = 1; i < m->n; i++)
			if (m->seg[i].samples < m->seg[least].samples)
				least = i;
		drop(m, least);
	}
	s = &m->seg[m->n++];
	*s = (struct gpamap_seg){ .delta = delta,
				  .lo = gpa,
				  .hi = gpa + len,
				  .map_lo = map_lo,
				  .map_hi = map_hi,
				  .samples = 1 };
	m->gen++;
}

int gpamap_add(struct gpamap *m, uint64_t gpa, uint64_t hva, uint64_t len, uint64_t map_lo,
	       uint64_t map_hi)
{
	int64_t delta = (int64_t)(hva - gpa);
	int conflict = 0;

	if (!len)
		len = 1;
	m->samples++;
	for (int i = 0; i < m->n;) {
		if (m->seg[i].delta != delta && m->seg[i].lo < gpa + len && gpa < m->seg[i].hi) {
			drop(m, i); /* the guest's memory is elsewhere now */
			conflict = 1;
			continue;
		}
		i++;
	}
	m->conflicts += conflict;
	for (int i = 0; i < m->n; i++) {
		struct gpamap_seg *s = &m->seg[i];
		uint64_t lo = s->lo < gpa ? s->lo : gpa, hi = s->hi > gpa + len ? s->hi : gpa + len;

		if (s->delta != delta || (s->map_hi && map_hi && s->map_lo != map_lo) ||
		    crosses(m, delta, lo, hi))
			continue;
		s->samples++;
		if (!s->map_hi && map_hi) {
			s->map_lo = map_lo;
			s->map_hi = map_hi;
		}
		if (lo == s->lo && hi == s->hi)
			return conflict ? -1 : 0;
		s->lo = lo;
		s->hi = hi;
		return conflict ? -1 : 1;
	}
	add_seg(m, delta, gpa, len, map_lo, map_hi);
	return conflict ? -1 : 1;
}

/* The segment nearest to [gpa, gpa + len), -1 when there is none. */
static int nearest(const struct gpamap *m, uint64_t gpa, uint64_t len)
{
	int best = -1;

	for (int i = 0; i < m->n; i++)
		if (best < 0 || dist(&m->seg[i], gpa, len) < dist(&m->seg[best], gpa, len))
			best = i;
	return best;
}

int gpamap_hva(const struct gpamap *m, uint64_t gpa, uint64_t len, uint64_t *hva)
{
	int i;

	if (!len)
		len = 1;
	for (i = 0; i < m->n; i++)
		if (covers(&m->seg[i], gpa, len)) {
			*hva = gpa + (uint64_t)m->seg[i].delta;
			return GPAMAP_EXACT;
		}
	i = nearest(m, gpa, len);
	if (i < 0 || !in_map(&m->seg[i], gpa + (uint64_t)m->seg[i].delta, len))
		return GPAMAP_NONE;
	*hva = gpa + (uint64_t)m->seg[i].delta;
	return GPAMAP_NEAR;
}

void gpamap_confirm(struct gpamap *m, uint64_t gpa, uint64_t len)
{
	int i = nearest(m, gpa, len ? len : 1);
	struct gpamap_seg *s;

	if (i < 0)
		return;
	s = &m->seg[i];
	if (gpa < s->lo && !crosses(m, s->delta, gpa, s->lo))
		s->lo = gpa;
	if (gpa + len > s->hi && !crosses(m, s->delta, s->hi, gpa + len))
		s->hi = gpa + len;
}

int gpamap_is_ram(const struct gpamap *m, uint64_t hva)
{
	for (int i = 0; i < m->n; i++) {
		const struct gpamap_seg *s = &m->seg[i];

		if (in_map(s, hva, 1) ||
		    (hva >= s->lo + (uint64_t)s->delta && hva < s->hi + (uint64_t)s->delta))
			return 1;
	}
	return 0;
}
