// SPDX-License-Identifier: GPL-2.0
/*
 * tax_floor raw|percall: attach tax_floor.bpf.c's empty programs of one kind
 * and hold them until SIGINT/SIGTERM. `iotracer bench` runs it as the tracers
 * floor-raw and floor-percall beside iotracer-empty (docs/bench.md, "Tax").
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "tax_floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	const char *kind = argc == 2 ? argv[1] : "";
	struct tax_floor_bpf *skel;
	struct bpf_program *p;
	int n = 0;

	if (strcmp(kind, "raw") && strcmp(kind, "percall")) {
		fprintf(stderr, "usage: tax_floor raw|percall\n");
		return 2;
	}
	skel = tax_floor_bpf__open();
	if (!skel)
		return 1;
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, !strncmp(bpf_program__name(p), kind, strlen(kind)));
	if (tax_floor_bpf__load(skel)) {
		fprintf(stderr, "tax_floor: cannot load the programs\n");
		return 1;
	}
	bpf_object__for_each_program(p, skel->obj)
	{
		if (!bpf_program__autoload(p))
			continue;
		if (!bpf_program__attach(p)) {
			fprintf(stderr, "tax_floor: cannot attach %s\n", bpf_program__name(p));
			return 1;
		}
		n++;
	}
	fprintf(stderr, "tax_floor: %d empty %s programs attached\n", n, kind);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop)
		pause();
	tax_floor_bpf__destroy(skel);
	return 0;
}
