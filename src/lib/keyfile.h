/* SPDX-License-Identifier: GPL-2.0 */
/*
 * keyfile: the link's shared secret (--link-key FILE, docs/link.md), read and
 * checked before anything starts. Pure user space, no crypto here (the MAC is
 * mode/linkauth.c, libsodium).
 *
 * Rules: a regular file of KEYFILE_MIN..KEYFILE_MAX bytes (its whole content
 * is the key), mode without group/other bits (e.g. 0600 or 0400), owned by
 * root (uid 0). Anything else is refused with a one-line reason.
 */
#ifndef IT_LIB_KEYFILE_H
#define IT_LIB_KEYFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define KEYFILE_MIN 32
#define KEYFILE_MAX 1024

struct link_key {
	size_t len; /* 0 = no key */
	uint8_t bytes[KEYFILE_MAX];
};

/*
 * Is a file with this stat (and size) acceptable as a key? 0, or -EINVAL /
 * -EPERM with a reason in why. Pure: tests feed it synthetic stat buffers.
 */
int keyfile_check(const struct stat *st, uid_t want_owner, char *why, size_t whylen);
/* The rules but the size: a regular file, no group/other bits, owned by want_owner. */
int keyfile_check_mode(const struct stat *st, uid_t want_owner, char *why, size_t whylen);

/*
 * Read and check path: the rules but the owner may also be `also` (0: root
 * only), min to n bytes into buf (*len). 0, or -errno with a one-line reason.
 */
int keyfile_read(const char *path, uid_t also, size_t min, void *buf, size_t n, size_t *len,
		 char *why, size_t whylen);

/* Read and check path into k. 0, or -errno with a one-line reason in why. */
int keyfile_load(const char *path, struct link_key *k, char *why, size_t whylen);

/* Overwrite the key bytes (k->len = 0). */
void keyfile_wipe(struct link_key *k);

#endif /* IT_LIB_KEYFILE_H */
