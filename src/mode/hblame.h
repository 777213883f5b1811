/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hblame: host mode's --blame (docs/blame.md, "Host mode"). It names the VMs
 * the daemon's blame engine (blame/dblame.h) sees as owners: the QEMU's
 * -name, else the name its guest said in the link hello, else "qemu:PID";
 * and it holds each joined guest request's path line until the splits of its
 * host IOs' block requests are in (about the horizon, 1 s, after their
 * completion), so that the line carries them ("host_blame"). Pure user space.
 */
#ifndef IT_HBLAME_H
#define IT_HBLAME_H

#include <stdint.h>

#include "mode/vjoin.h"
#include "blame/dblame.h"

#define HB_MAX_VMS 16
#define HB_NAME_LEN 64
/* A held path is written without its blame this long after it was joined. */
#define HB_WAIT_NS (3ull * 1000 * 1000 * 1000)
/*
 * Splits kept for paths not held yet (their guest record came after the split):
 * a 2-way cache by request id, a new split replaces the older of its two.
 */
#define HB_CACHE 16384

/*
 * A path to write: blame NULL when it has none to carry (not joined, or an
 * aio=native host IO: no request of the daemon's); missing: it should have
 * one, but a split never came (counted in hb_stats.missing).
 */
typedef void (*hb_emit_fn)(void *ctx, const struct vj_path *p, const struct dblame_rec *blame,
			   int missing);

struct hb_stats {
	uint64_t held; /* paths held for their blame */
	uint64_t with_blame; /* written with it */
	uint64_t missing; /* written without: a split lost, late, or out of the cache */
};

struct hblame;

struct hblame *hblame_new(hb_emit_fn emit, void *ctx);
void hblame_free(struct hblame *hb);

/* VM number vm (< HB_MAX_VMS) is QEMU pid, named qemu_name by its -name ("" when none). */
void hblame_set_vm(struct hblame *hb, int vm, uint32_t pid, const char *qemu_name);
/* The guest of VM number vm said this name in its hello (used when the QEMU has no -name). */
void hblame_set_guest(struct hblame *hb, int vm, const char *guest_name);
/* The VM's name of a QEMU pid; NULL: no VM's (dblame_host.vm_name). */
const char *hblame_vm_name(void *hb, uint32_t pid);

/* The engine it names VMs for (dblame_set_host); NULL: --blame is off, paths pass through. */
int hblame_attach(struct hblame *hb, struct dblame *b);
/* A request's split (dblame_host.on_rec). */
void hblame_on_rec(void *hb, const struct dblame_rec *e);

/* A path from vjoin: written at once, or held for its blame. now: host clock. */
void hblame_path(struct hblame *hb, const struct vj_path *p, uint64_t now);
/* Write the held paths whose blame is in, or whose wait is over. */
void hblame_tick(struct hblame *hb, uint64_t now);
/* Write every held path (the end: every split is in). */
void hblame_flush(struct hblame *hb);
const struct hb_stats *hblame_stats(const struct hblame *hb);

#endif /* IT_HBLAME_H */
