/* SPDX-License-Identifier: GPL-2.0 */
/*
 * guestgpa: guest mode's physical buffer addresses (bpf/gpa.bpf.h). The BPF
 * side needs the kernel's vmemmap base to turn a request's first page into
 * its physical address; this measures it once at start (two programs on
 * mm_page_alloc, attached for the few milliseconds it takes, then detached)
 * and keeps it in whichever skeleton is loaded (a reload loads a new one).
 * Talks to libbpf: left out of the unit builds.
 */
#ifndef IT_GUESTGPA_H
#define IT_GUESTGPA_H

#include <stddef.h>
#include <stdint.h>

struct it_loader;

/*
 * Measure the base: 0 and *vmemmap set, or -errno with why (the programs did
 * not attach, or no consistent base within a second).
 */
int guestgpa_measure(struct it_loader *ld, uint64_t *vmemmap, char *why, size_t n);
/* Put the measured base into the loaded skeleton if it lacks it (after a reload). */
void guestgpa_keep(struct it_loader *ld, uint64_t vmemmap);

#endif /* IT_GUESTGPA_H */
