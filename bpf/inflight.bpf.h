/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-request state in flight: how the LRU hashes of requests in flight
 * (`bios`, request.bpf.h; `uring_inflight`, uring.bpf.h) store and find
 * an entry, recycled in place rather than deleted. An entry that cannot be
 * stored is counted as an IT_DROP_INFLIGHT drop.
 */
#ifndef IT_INFLIGHT_BPF_H
#define IT_INFLIGHT_BPF_H

#include "record.bpf.h"

/*
 * Per-request state in an LRU hash keyed by a kernel address the kernel
 * recycles (a bio, an io_kiocb). The entry is not deleted when its request
 * ends but marked dead (live = 0), and the next request at that address
 * overwrites it in place: in the steady state no update or delete, which take
 * IRQ-saving spin locks (hash bucket, LRU list), only a lock-free lookup.
 * `val` is a struct with a u8 `live`; the macro sets it.
 */
#define IT_SLOT_PUT(map, key, val, layer) IT_SLOT_PUT_OLD(map, key, val, layer, IT_SLOT_NO_OLD)
#define IT_SLOT_NO_OLD(p) ((void)(p))
/* The same, old(p) told first of the entry about to be overwritten (live or dead). */
#define IT_SLOT_PUT_OLD(map, key, val, layer, old)                           \
	({                                                                   \
		typeof(val) *_p = bpf_map_lookup_elem(map, key);             \
		(val).live = 1;                                              \
		if (_p) {                                                    \
			old(_p);                                             \
			*_p = (val);                                         \
		} else if (bpf_map_update_elem(map, key, &(val), BPF_ANY)) { \
			it_drop(layer, IT_DROP_INFLIGHT);                    \
		}                                                            \
	})

/* The live entry of `key` (a u64 lvalue, 0: none) as a `type *`, or NULL. */
#define IT_SLOT_GET(map, key, type)                                         \
	({                                                                  \
		type *_v = (key) ? bpf_map_lookup_elem(map, &(key)) : NULL; \
		_v && _v->live ? _v : NULL;                                 \
	})

#endif /* IT_INFLIGHT_BPF_H */
