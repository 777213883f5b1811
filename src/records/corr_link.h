/* SPDX-License-Identifier: GPL-2.0 */
/*
 * corr_link: the intrusive circular doubly linked list of corr.c's tables and
 * queues (corr.c alone includes it).
 */
#ifndef IT_CORR_LINK_H
#define IT_CORR_LINK_H

#include <stdbool.h>
#include <stddef.h>

/* Intrusive circular doubly linked list. */
struct corr_link {
	struct corr_link *next, *prev;
};

#define link_entry(ptr, type, member) ((type *)((char *)ptr - offsetof(type, member)))

static inline void link_init(struct corr_link *h)
{
	h->next = h;
	h->prev = h;
}

static inline bool link_empty(const struct corr_link *h)
{
	return h->next == h;
}

static inline void link_add_tail(struct corr_link *h, struct corr_link *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void link_del(struct corr_link *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	link_init(n);
}

#endif /* IT_CORR_LINK_H */
