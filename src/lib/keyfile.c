// SPDX-License-Identifier: GPL-2.0
/*
 * keyfile: read and check the link key file (lib/keyfile.h, docs/link.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/keyfile.h"

int keyfile_check_mode(const struct stat *st, uid_t want_owner, char *why, size_t whylen)
{
	if (!S_ISREG(st->st_mode)) {
		snprintf(why, whylen, "not a regular file");
		return -EINVAL;
	}
	if (st->st_mode & (S_IRWXG | S_IRWXO)) {
		snprintf(why, whylen, "mode %04o gives access to group/others (chmod 600 it)",
			 (unsigned int)(st->st_mode & 07777));
		return -EPERM;
	}
	if (st->st_uid != want_owner) {
		snprintf(why, whylen, "owned by uid %u, not %s", (unsigned int)st->st_uid,
			 want_owner ? "us" : "root");
		return -EPERM;
	}
	return 0;
}

int keyfile_check(const struct stat *st, uid_t want_owner, char *why, size_t whylen)
{
	int err = keyfile_check_mode(st, want_owner, why, whylen);

	if (err)
		return err;
	if (st->st_size < KEYFILE_MIN || st->st_size > KEYFILE_MAX) {
		snprintf(why, whylen, "%lld bytes (want %d to %d random bytes)",
			 (long long)st->st_size, KEYFILE_MIN, KEYFILE_MAX);
		return -EINVAL;
	}
	return 0;
}

int keyfile_read(const char *path, uid_t also, size_t min, void *buf, size_t n, size_t *len,
		 char *why, size_t whylen)
{
	struct stat st;
	ssize_t r = 0;
	int fd, err;

	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		err = -errno;
		snprintf(why, whylen, "%s", strerror(errno));
		return err;
	}
	/* checked on the open file: what is read is what was checked */
	if (fstat(fd, &st)) {
		err = -errno;
		snprintf(why, whylen, "%s", strerror(errno));
	} else {
		err = keyfile_check_mode(&st, also && st.st_uid == also ? also : 0, why, whylen);
	}
	if (!err && (st.st_size < (off_t)min || st.st_size > (off_t)n)) {
		snprintf(why, whylen, "%lld bytes (want %zu to %zu bytes)", (long long)st.st_size,
			 min, n);
		err = -EINVAL;
	}
	if (!err) {
		do
			r = read(fd, buf, n);
		while (r < 0 && errno == EINTR);
		if (r != st.st_size) {
			err = r < 0 ? -errno : -EIO;
			snprintf(why, whylen, "short read (%zd of %lld bytes)", r,
				 (long long)st.st_size);
		}
	}
	close(fd);
	if (!err)
		*len = (size_t)r;
	return err;
}

int keyfile_load(const char *path, struct link_key *k, char *why, size_t whylen)
{
	int err;

	memset(k, 0, sizeof(*k));
	err = keyfile_read(path, 0, KEYFILE_MIN, k->bytes, sizeof(k->bytes), &k->len, why, whylen);
	if (err)
		keyfile_wipe(k);
	return err;
}

void keyfile_wipe(struct link_key *k)
{
	/* volatile stores: the compiler cannot drop them as dead */
	volatile uint8_t *b = k->bytes;

	for (size_t i = 0; i < sizeof(k->bytes); i++)
		b[i] = 0;
	k->len = 0;
}
