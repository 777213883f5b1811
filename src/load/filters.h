/* SPDX-License-Identifier: GPL-2.0 */
/*
 * filters: the BPF side's filter knobs (pid, comm, cgroup, dev, file,
 * min-latency, sample, and whether the kernel keeps the histograms). They are
 * writable globals (.bss) and maps, so a SIGHUP changes them in place, under
 * attached programs, without touching a link (docs/config.md, "Reload").
 */
#ifndef IT_FILTERS_H
#define IT_FILTERS_H

#include <stdio.h>

struct iotracer_bpf;
struct ld_config; /* load/loader.h */

/*
 * Set the filters of o on a loaded skeleton: at start before attach, and on
 * reload. The inputs (cgroup, file) are checked first: on error nothing has
 * changed. A filter that narrows is switched on after its data is in place,
 * one that widens is switched off first, and map entries that stay are never
 * removed, so a request that both the old and the new filters keep is never
 * dropped by the change. Sets the .bss's kern_hists (the kernel keeps the
 * histograms). 0 or -errno (one line to err). The loader calls it
 * (it_loader_filters): the filters own the filter maps and knobs, the loader
 * the skeleton, and neither includes the other's caller.
 */
int it_filters_apply(struct iotracer_bpf *skel, const struct ld_config *o, FILE *err);

#endif /* IT_FILTERS_H */
