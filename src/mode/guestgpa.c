// SPDX-License-Identifier: GPL-2.0
/*
 * guestgpa: the vmemmap base for guest mode's buffer addresses (guestgpa.h,
 * bpf/gpa.bpf.h).
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/libbpf.h>

#include "iotracer.skel.h"
#include "load/loader.h"
#include "mode/guestgpa.h"

#define GPA_PAGES 32 /* touched per round: each a fresh page, one mm_page_alloc each */
#define GPA_ROUNDS 100 /* 10 ms apart: a second at most */

/* Fault GPA_PAGES fresh anonymous pages in, so the page allocator runs here. */
static void touch_pages(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)GPA_PAGES * (size_t)pg;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	for (size_t off = 0; off < len; off += (size_t)pg)
		((volatile char *)p)[off] = 1;
	munmap(p, len);
}

int guestgpa_measure(struct it_loader *ld, uint64_t *vmemmap, char *why, size_t n)
{
	struct iotracer_bpf *s = ld->skel;
	struct bpf_link *page = NULL, *pfn = NULL;
	int ret = -ETIMEDOUT;

	*vmemmap = 0;
	if (!s->bss) {
		snprintf(why, n, "the BPF globals are not mapped");
		return -ENOTSUP;
	}
	page = bpf_program__attach(s->progs.mode_guest_gpa_page);
	pfn = page ? bpf_program__attach(s->progs.mode_guest_gpa_pfn) : NULL;
	if (!page || !pfn) {
		ret = -errno;
		snprintf(why, n, "mm_page_alloc: %s %s", page ? "tracepoint" : "raw_tp",
			 strerror(errno));
		goto out;
	}
	for (int i = 0; i < GPA_ROUNDS && !s->bss->gpa_vmemmap; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		touch_pages();
		if (!s->bss->gpa_vmemmap)
			nanosleep(&ts, NULL);
	}
	*vmemmap = s->bss->gpa_vmemmap;
	if (*vmemmap)
		ret = 0;
	else
		snprintf(why, n, "no consistent vmemmap base from mm_page_alloc within 1 s");
out:
	bpf_link__destroy(pfn);
	bpf_link__destroy(page);
	return ret;
}

void guestgpa_keep(struct it_loader *ld, uint64_t vmemmap)
{
	struct iotracer_bpf *s = ld->skel;

	if (vmemmap && s && s->bss && s->bss->gpa_vmemmap != vmemmap)
		s->bss->gpa_vmemmap = vmemmap;
}
