/* SPDX-License-Identifier: GPL-2.0 */
/*
 * jsonl: `iotracer -j` JSON lines as recorded requests (see jsonl.c).
 */
#ifndef IT_REPORT_JSONL_H
#define IT_REPORT_JSONL_H

#include <stddef.h>
#include <stdint.h>

#include "records/recfmt.h"
#include "report/internal.h"

struct json;
struct fn_key;

/* Where the device names and serials of the lines go (fn may be NULL), host-mode paths, cgroups. */
struct jl_devs {
	void (*fn)(void *ctx, uint32_t dev, const char *name, const char *serial);
	void (*path)(void *ctx, const struct rp_path *g); /* joined "path" lines; may be NULL */
	void (*cgroup)(void *ctx, uint64_t id, const char *path); /* "cgroup" fields; may be NULL */
	/* "file", "container_file" (cfile NULL: none) of a request and its block requests; may be NULL */
	void (*file)(void *ctx, const struct fn_key *k, const char *file, const char *cfile);
	void *ctx;
};

struct jl_stats {
	uint64_t requests; /* request lines decoded */
	uint64_t bad_lines; /* lines that are not JSON, or requests that do not decode */
	uint64_t paths; /* joined host-mode "path" lines */
};

/* One parsed line into q: 1 a request, 0 another type of line, -EINVAL a bad request. */
int jl_decode(const struct json *v, struct rf_req *q, struct jl_devs *devs);

/* Every request line of buf[0..len) to fn, in order. 0 or -ENOMEM. */
int jl_read(const char *buf, size_t len, struct jl_devs *devs,
	    void (*fn)(void *ctx, const struct rf_req *q), void *ctx, struct jl_stats *st);

#endif /* IT_REPORT_JSONL_H */
