/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gpamap: one VM's guest-physical -> QEMU host-virtual address map, learned
 * from samples (a guest request's buffer GPA beside the buffer QEMU's
 * blk_aio uprobe saw for it), never from QEMU's internals. QEMU maps each RAM
 * block into its address space once, so the map is a few segments of one
 * offset each (x86's pc.ram: below 4 GiB, and the rest above it at another
 * offset; arm64's virt: one). A segment is the GPAs its samples cover; a GPA
 * between or beside them is taken to share the nearest segment's offset
 * when the address lands in the same QEMU mapping (its bounds: the caller's,
 * from /proc/PID/maps) and no sample of another offset lies in between:
 * such a translation is tentative until a host IO confirms it
 * (gpamap_confirm). Pure, unit-tested (tests/unit/test_gpamap.c).
 */
#ifndef IT_GPAMAP_H
#define IT_GPAMAP_H

#include <stdint.h>

#define GPAMAP_SEGS 16

struct gpamap_seg {
	int64_t delta; /* hva - gpa */
	uint64_t lo, hi; /* GPAs its samples cover, [lo, hi) */
	uint64_t map_lo, map_hi; /* the QEMU mapping holding them (hva); 0, 0: unknown */
	uint64_t samples;
};

struct gpamap {
	struct gpamap_seg seg[GPAMAP_SEGS];
	int n;
	uint64_t samples; /* gpamap_add calls */
	uint64_t conflicts; /* samples whose GPA a segment of another offset covered */
	uint64_t gen; /* bumped when a segment is added, moved or dropped */
};

/*
 * A sample: len bytes at gpa are at hva in QEMU, in the mapping [map_lo,
 * map_hi) (0, 0: not known). Returns 1 when it grew the map (a new segment,
 * or a segment's range), 0 when the map already said so, -1 when it
 * contradicts the map (the segment of another offset that covered gpa is
 * dropped: the guest's memory moved, e.g. a hotplug or a migration).
 */
int gpamap_add(struct gpamap *m, uint64_t gpa, uint64_t hva, uint64_t len, uint64_t map_lo,
	       uint64_t map_hi);

/* How a GPA translated. */
enum gpamap_how {
	GPAMAP_NONE = 0, /* no segment applies */
	GPAMAP_EXACT, /* inside a segment's samples */
	GPAMAP_NEAR, /* beside one, in its mapping: tentative */
};

/* Translate len bytes at gpa; the answer's kind (enum gpamap_how), *hva set when not NONE. */
int gpamap_hva(const struct gpamap *m, uint64_t gpa, uint64_t len, uint64_t *hva);
/* A tentative translation was right (a host IO was at it): its segment grows to gpa. */
void gpamap_confirm(struct gpamap *m, uint64_t gpa, uint64_t len);
/* Is hva in a mapping that holds guest RAM (a segment's)? */
int gpamap_is_ram(const struct gpamap *m, uint64_t hva);

#endif /* IT_GPAMAP_H */
