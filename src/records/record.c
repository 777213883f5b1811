// SPDX-License-Identifier: GPL-2.0
/*
 * record: the --record writer (see record.h; format in recfmt.h and
 * docs/record.md).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "records/cgroup.h"
#include "records/container.h"
#include "records/fname.h"
#include "records/record.h"
#include "records/recfmt.h"
#include "lib/log.h"
#include "lib/parse.h"

#define REC_RAW_CAP (256u << 10) /* payload of one block, at most (but for file names) */
/* room past the cap for one request's file names, the longest paths counted */
#define REC_NAMES_ROOM ((CORR_MAX_BLOCKS + 1) * RF_FNAME_MAX)
#define REC_BLOCK_DEVS 16 /* devices announced in a block, remembered */
#define REC_BLOCK_CGS 16 /* cgroups announced in a block, remembered */
#define REC_BLOCK_FILES 256 /* files announced in a block, remembered (a hash of slots) */
#define REC_FLUSH_DUE_NS (RF_FLUSH_NS - 100000000ull) /* a 50 ms drain tick later: < 1 s */
#define REC_PREFIX "iotracer-"

struct recorder {
	struct rec_opts o;
	char *dir;
	struct rf_seg_hdr hdr; /* of the open segment */
	int fd; /* -1: no segment open (an open failed: tried again at the next block) */
	char path[PATH_MAX];
	uint64_t seg_bytes, seg_blocks, seg_open_ns;
	uint64_t next_seq;
	/* the block being built */
	uint8_t *raw, *cbuf;
	size_t raw_len, cbuf_cap;
	size_t raw_cap; /* a block's payload, at most: what fits a segment (rec_open) */
	uint32_t nr_req, nr_blame; /* RF_E_REQ and RF_E_BLAME entries */
	uint64_t first_ns, last_ns;
	uint64_t last_flush_ns;
	struct rf_state st;
	uint32_t devs[REC_BLOCK_DEVS];
	int nr_devs;
	uint64_t cgs[REC_BLOCK_CGS];
	int nr_cgs;
	struct cg_cache *cg; /* cgroup paths (not owned); NULL: ids only */
	struct ct_names *names; /* container and pod names (not owned); NULL: none */
	struct fn_cache *fn; /* file names (not owned); NULL: none */
	struct fn_key files[REC_BLOCK_FILES]; /* announced in this block (ino 0: free) */
	z_stream zs;
	int zs_ok;
	/* counters */
	uint64_t lost, written, bytes;
	uint64_t lost_blame, blame_written;
	int warned;
};

/* ---- segment files ---- */

static void read_boot_id(char *buf, size_t n)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)n, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* This machine's identity for the segment headers (once). */
static void host_identity(struct rf_seg_hdr *h)
{
	struct utsname u;

	h->abi = IT_ABI_VERSION;
	h->pid = (uint32_t)getpid();
	if (gethostname(h->host, sizeof(h->host)))
		h->host[0] = '\0';
	h->host[sizeof(h->host) - 1] = '\0';
	if (!uname(&u))
		snprintf(h->kernel, sizeof(h->kernel), "%.63s", u.release);
	read_boot_id(h->boot_id, sizeof(h->boot_id));
}

static int is_segment(const struct dirent *e)
{
	size_t n = strlen(e->d_name), s = strlen(RF_SEG_SUFFIX);

	return !strncmp(e->d_name, REC_PREFIX, strlen(REC_PREFIX)) && n > s &&
	       !strcmp(e->d_name + n - s, RF_SEG_SUFFIX);
}

/*
 * Delete the oldest segments (names sort by time) until those left plus a
 * new one of seg_size fit max_bytes. The open segment is never deleted.
 */
static void enforce_budget(struct recorder *rc)
{
	struct dirent **ents;
	uint64_t total = rc->o.seg_size;
	int n = scandir(rc->dir, &ents, is_segment, alphasort);
	char p[PATH_MAX];
	struct stat st;

	if (n < 0)
		return;
	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/%s", rc->dir, ents[i]->d_name);
		if (!stat(p, &st))
			total += (uint64_t)st.st_size;
	}
	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/%s", rc->dir, ents[i]->d_name);
		/* the open one is kept; the one closed just before this open goes like any other */
		if (total > rc->o.max_bytes && (rc->fd < 0 || strcmp(p, rc->path)) &&
		    !stat(p, &st) && !unlink(p)) {
			total -= (uint64_t)st.st_size;
			it_debug("--record: deleted %s (over --record-max)", p);
		}
		free(ents[i]);
	}
	free(ents);
}

/* A new segment file named for the time now; its header written. */
static int seg_open(struct recorder *rc, uint64_t now_ns)
{
	uint8_t b[RF_SEG_HDR_LEN];
	uint64_t real = clock_ns(CLOCK_REALTIME);
	int err = 0;

	enforce_budget(rc);
	rc->hdr.real_ns = real;
	rc->hdr.mono_ns = clock_ns(CLOCK_MONOTONIC);
	rc->hdr.seq = rc->next_seq;
	for (int i = 0; i < 1000; i++, real += 1000) {
		time_t s = (time_t)(real / 1000000000ull);
		struct tm tm;
		char ts[32];

		gmtime_r(&s, &tm);
		strftime(ts, sizeof(ts), "%Y%m%dT%H%M%S", &tm);
		snprintf(rc->path, sizeof(rc->path), "%s/" REC_PREFIX "%s.%06lluZ" RF_SEG_SUFFIX,
			 rc->dir, ts, (unsigned long long)(real % 1000000000ull / 1000));
		/* every process's pids, comms, inodes and offsets: root's alone (record.md) */
		rc->fd = open(rc->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (rc->fd >= 0 || errno != EEXIST)
			break;
	}
	if (rc->fd < 0)
		return -errno;
	rf_seg_hdr_put(b, &rc->hdr);
	if (pwrite(rc->fd, b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
		err = errno ? -errno : -EIO;
		close(rc->fd);
		unlink(rc->path);
		rc->fd = -1;
		return err;
	}
	rc->next_seq++;
	rc->seg_bytes = sizeof(b);
	rc->bytes += sizeof(b);
	rc->seg_blocks = 0;
	rc->seg_open_ns = now_ns;
	return 0;
}

static void seg_close(struct recorder *rc)
{
	if (rc->fd < 0)
		return;
	/* only the data: a crash loses no more than a SIGKILL does (page cache) */
	if (close(rc->fd))
		it_debug("--record: close %s: %s", rc->path, strerror(errno));
	rc->fd = -1;
}

/* ---- blocks ---- */

/* The first write error is said once; later ones only add to the count. */
static void lost_block(struct recorder *rc, int err)
{
	rc->lost += rc->nr_req;
	rc->lost_blame += rc->nr_blame;
	if (!rc->warned)
		it_warn("--record: cannot write to %s: %s; requests are lost until it works "
			"again (counted)",
			rc->fd >= 0 ? rc->path : rc->dir, strerror(-err));
	rc->warned = 1;
}

static int write_all(int fd, const uint8_t *b, size_t n, uint64_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, b, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -ENOSPC;
		b += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* Compress the payload into rc->cbuf after room for the header; the block's length. */
static size_t compress_block(struct recorder *rc)
{
	struct rf_blk_hdr h = { .rlen = (uint32_t)rc->raw_len,
				.nr_req = rc->nr_req,
				.first_ns = rc->nr_req ? rc->first_ns : 0,
				.last_ns = rc->last_ns };

	if (deflateReset(&rc->zs) != Z_OK)
		return 0;
	rc->zs.next_in = rc->raw;
	rc->zs.avail_in = (uInt)rc->raw_len;
	rc->zs.next_out = rc->cbuf + RF_BLK_HDR_LEN;
	rc->zs.avail_out = (uInt)(rc->cbuf_cap - RF_BLK_HDR_LEN);
	if (deflate(&rc->zs, Z_FINISH) != Z_STREAM_END)
		return 0;
	h.clen = (uint32_t)rc->zs.total_out;
	h.crc = (uint32_t)crc32(0, rc->cbuf + RF_BLK_HDR_LEN, h.clen);
	rf_blk_hdr_put(rc->cbuf, &h);
	return RF_BLK_HDR_LEN + h.clen;
}

static void block_reset(struct recorder *rc, uint64_t now_ns)
{
	rc->raw_len = 0;
	rc->nr_req = 0;
	rc->nr_blame = 0;
	rc->first_ns = UINT64_MAX;
	rc->last_ns = 0;
	rc->nr_devs = 0;
	rc->nr_cgs = 0;
	memset(rc->files, 0, sizeof(rc->files));
	memset(&rc->st, 0, sizeof(rc->st));
	rc->last_flush_ns = now_ns;
}

/* Write the block being built (if any); rotate: then close the segment if it is full. */
static void flush_block(struct recorder *rc, uint64_t now_ns, int rotate)
{
	size_t n;
	int err = 0;

	if (rc->nr_req || rc->nr_blame) {
		n = compress_block(rc);
		/* a segment never ends past --record-size: a block that would go on in the next */
		if (n && rc->fd >= 0 && rc->seg_blocks && rc->seg_bytes + n > rc->o.seg_size)
			seg_close(rc);
		if (rc->fd < 0)
			err = seg_open(rc, now_ns);
		if (!err && !n)
			err = -ENOMEM;
		if (!err)
			err = write_all(rc->fd, rc->cbuf, n, rc->seg_bytes);
		if (err) {
			/* no torn block left behind: cut the file back to its last whole block */
			if (rc->fd >= 0 && ftruncate(rc->fd, (off_t)rc->seg_bytes))
				it_debug("--record: ftruncate %s: %s", rc->path, strerror(errno));
			lost_block(rc, err);
		} else {
			rc->seg_bytes += n;
			rc->bytes += n;
			rc->seg_blocks++;
			rc->written += rc->nr_req;
			rc->blame_written += rc->nr_blame;
		}
	}
	block_reset(rc, now_ns);
	/* the next segment is opened with the next block: no empty segment at exit */
	if (rotate && rc->fd >= 0 && rc->seg_bytes >= rc->o.seg_size)
		seg_close(rc);
}

/* ---- requests ---- */

/* Announce dev in this block (name, serial) if it is not yet. */
static void note_dev(struct recorder *rc, uint32_t dev)
{
	const char *name;

	if (!dev)
		return;
	for (int i = 0; i < rc->nr_devs; i++)
		if (rc->devs[i] == dev)
			return;
	if (rc->nr_devs < REC_BLOCK_DEVS)
		rc->devs[rc->nr_devs++] = dev;
	name = parse_dev_name_cached(dev, rc->o.sysfs_root);
	/* copy: the serial lookup may reuse the name cache */
	{
		char nbuf[RF_NAME_LEN];

		snprintf(nbuf, sizeof(nbuf), "%s", name);
		rc->raw_len = (size_t)(rf_put_dev(rc->raw + rc->raw_len, dev, nbuf,
						  parse_dev_serial_cached(dev, rc->o.sysfs_root)) -
				       rc->raw);
	}
}

/* The node's names of the container and pod a cgroup path is of (RF_E_CTNAME). */
static void note_ctnames(struct recorder *rc, const char *path)
{
	struct ct_full f;

	if (!rc->names)
		return;
	ct_describe(rc->names, path, &f);
	if (f.container && f.ci.id[0])
		rc->raw_len = (size_t)(rf_put_ctname(rc->raw + rc->raw_len, RF_CT_CONTAINER,
						     f.ci.id, f.container, NULL) -
				       rc->raw);
	if (f.pod && f.ci.pod_uid[0])
		rc->raw_len = (size_t)(rf_put_ctname(rc->raw + rc->raw_len, RF_CT_POD, f.ci.pod_uid,
						     f.pod, f.pod_ns) -
				       rc->raw);
}

/* Announce the path of cgroup id in this block if it is not yet (and is known). */
static void note_cgroup(struct recorder *rc, uint64_t id)
{
	const char *path = rc->cg && id ? cg_path(rc->cg, id) : NULL;

	if (!path)
		return;
	for (int i = 0; i < rc->nr_cgs; i++)
		if (rc->cgs[i] == id)
			return;
	if (rc->nr_cgs < REC_BLOCK_CGS)
		rc->cgs[rc->nr_cgs++] = id;
	rc->raw_len = (size_t)(rf_put_cgroup(rc->raw + rc->raw_len, id, path) - rc->raw);
	note_ctnames(rc, path);
}

/* Whether file k was announced in this block; if not, it is from now on (slot full: again). */
static int file_announced(struct recorder *rc, const struct fn_key *k)
{
	size_t h = (size_t)((k->ino * 0x9e3779b97f4a7c15ull ^ k->dev) >> 7) % REC_BLOCK_FILES;
	struct fn_key *s = &rc->files[h];

	if (s->ino == k->ino && s->dev == k->dev && s->bdev == k->bdev)
		return 1;
	*s = *k;
	return 0;
}

/* Announce the names of file k in this block if it is not yet (and they are known). */
static void note_file(struct recorder *rc, const struct fn_key *k)
{
	const struct fn_entry *e = fn_peek(rc->fn, k);

	if (!e || file_announced(rc, k))
		return;
	rc->raw_len = (size_t)(rf_put_fname(rc->raw + rc->raw_len, k->ino, k->dev, k->bdev, e->file,
					    e->cfile) -
			       rc->raw);
}

/* The names of the request's files, and of its block requests'. */
static void note_files(struct recorder *rc, const struct corr_req *r, int nb)
{
	struct fn_key rk, k;
	int has = fn_req_key(r, &rk);

	if (!rc->fn)
		return;
	if (has)
		note_file(rc, &rk);
	for (int i = 0; i < nb; i++)
		if (fn_blk_key(r->blocks[i], has ? &rk : NULL, &k))
			note_file(rc, &k);
}

/* The bytes the names of the request's files take in a block (announced or not). */
static size_t files_room(struct recorder *rc, const struct corr_req *r, int nb)
{
	struct fn_key rk, k;
	int has = fn_req_key(r, &rk);
	size_t n = 0;

	if (!rc->fn)
		return 0;
	for (int i = -1; i < nb; i++) {
		const struct fn_key *p = i < 0 ? (has ? &rk : NULL) :
					 fn_blk_key(r->blocks[i], has ? &rk : NULL, &k) ? &k :
											  NULL;
		const struct fn_entry *e = p ? fn_peek(rc->fn, p) : NULL;

		/* tag, length, three varints, two strings with their lengths */
		if (e)
			n += 1 + 3 + 16 + 2 + strlen(e->file) + 2 +
			     (e->cfile ? strlen(e->cfile) : 0);
	}
	return n;
}

static uint64_t req_cgroup(const struct corr_req *r)
{
	switch (r->kind) {
	case CORR_SYSCALL:
		return r->sys->task.cgroup_id;
	case CORR_URING:
		return r->uring->task.cgroup_id;
	case CORR_AIO:
		return r->aio.task.cgroup_id;
	default:
		return 0;
	}
}

void rec_set_cgroups(struct recorder *rc, struct cg_cache *cg)
{
	rc->cg = cg;
}

void rec_set_ctnames(struct recorder *rc, struct ct_names *names)
{
	rc->names = names;
}

void rec_set_fnames(struct recorder *rc, struct fn_cache *fn)
{
	rc->fn = fn;
}

static uint32_t req_dev(const struct corr_req *r)
{
	switch (r->kind) {
	case CORR_SYSCALL:
		return r->sys->dev;
	case CORR_URING:
		return r->uring->dev;
	case CORR_AIO:
		return r->aio.iocb.dev;
	default:
		return 0;
	}
}

void rec_request(struct recorder *rc, const struct corr_req *r)
{
	uint64_t start, end;
	int nb = r->nr_blocks < CORR_MAX_BLOCKS ? r->nr_blocks : CORR_MAX_BLOCKS;

	if (r->kind == CORR_BLOCK && !r->nr_blocks)
		return; /* out_request() writes no line for it either */
	/* cgroups: the request's, and per block its submitter's, dirtier's and blkcg */
	if (rc->raw_len + RF_REQ_MAX + (size_t)(nb + 1) * RF_DEV_MAX +
		    (size_t)(3 * nb + 1) * (RF_CG_MAX + 2 * RF_CTNAME_MAX) + files_room(rc, r, nb) >
	    rc->raw_cap)
		flush_block(rc, rc->last_flush_ns, 1);
	note_files(rc, r, nb);
	note_dev(rc, req_dev(r));
	note_cgroup(rc, req_cgroup(r));
	for (int i = 0; i < nb; i++) {
		note_dev(rc, r->blocks[i]->dev);
		note_cgroup(rc, r->blocks[i]->task.cgroup_id);
		if (r->blocks[i]->flags & IT_F_WB) {
			note_cgroup(rc, r->blocks[i]->wb.dirtier.cgroup_id);
			note_cgroup(rc, r->blocks[i]->wb.blkcg_id);
		}
	}
	rc->raw_len = (size_t)(rf_put_req(&rc->st, rc->raw + rc->raw_len, r) - rc->raw);
	rc->nr_req++;
	rf_req_span(r, &start, &end);
	if (start < rc->first_ns)
		rc->first_ns = start;
	if (end > rc->last_ns)
		rc->last_ns = end;
}

/*
 * A request's blame, once the daemon's split of it is done (blame/dblame.c):
 * its culprits' cgroup paths announced first, as for a request.
 */
void rec_blame(struct recorder *rc, const struct blame_line *b)
{
	if (rc->raw_len + RF_BLAME_MAX + BLAME_LINE_TOP * (RF_CG_MAX + 2 * RF_CTNAME_MAX) >
	    rc->raw_cap)
		flush_block(rc, rc->last_flush_ns, 1);
	for (int i = 0; i < b->nr && i < BLAME_LINE_TOP; i++)
		if (b->named & (1u << i))
			note_cgroup(rc, b->cgroup_id[i]);
	rc->raw_len = (size_t)(rf_put_blame(&rc->st, rc->raw + rc->raw_len, b) - rc->raw);
	rc->nr_blame++;
}

void rec_tick(struct recorder *rc, uint64_t now_ns)
{
	int pending = rc->nr_req || rc->nr_blame;

	if (pending && now_ns - rc->last_flush_ns >= REC_FLUSH_DUE_NS) {
		flush_block(rc, now_ns, 1);
	} else if (!pending) {
		rc->last_flush_ns = now_ns;
	}
	if (rc->fd >= 0 && rc->seg_blocks && now_ns - rc->seg_open_ns >= rc->o.seg_age_ns) {
		flush_block(rc, now_ns, 0);
		seg_close(rc); /* the next one opens with the next block */
	}
}

struct recorder *rec_open(const struct rec_opts *o, uint64_t now_ns)
{
	struct recorder *rc = calloc(1, sizeof(*rc));
	const char *who = o->who ? o->who : "--record";
	int err;

	if (!rc)
		return NULL;
	rc->o = *o;
	rc->fd = -1;
	rc->dir = strdup(o->dir);
	/*
	 * A block and the segment's header fit one segment (its zlib stream: the payload
	 * and a few bytes, 1/16 left for them), so that no segment passes --record-size
	 * and DIR never passes --record-max.
	 */
	rc->raw_cap = (o->seg_size - RF_SEG_HDR_LEN - RF_BLK_HDR_LEN) / 16 * 15;
	if (rc->raw_cap > REC_RAW_CAP)
		rc->raw_cap = REC_RAW_CAP;
	rc->cbuf_cap = RF_BLK_HDR_LEN + compressBound(REC_RAW_CAP + REC_NAMES_ROOM);
	rc->raw = malloc(REC_RAW_CAP + REC_NAMES_ROOM);
	rc->cbuf = malloc(rc->cbuf_cap);
	if (!rc->dir || !rc->raw || !rc->cbuf || deflateInit(&rc->zs, o->level) != Z_OK) {
		it_err("--record: out of memory");
		goto fail;
	}
	rc->zs_ok = 1;
	host_identity(&rc->hdr);
	rc->hdr.run_mono_ns = now_ns;
	rc->hdr.flags = o->blame ? RF_SEG_F_BLAME : 0;
	if (mkdir(o->dir, 0750) && errno != EEXIST) {
		it_err("%s: cannot create directory '%s': %s", who, o->dir, strerror(errno));
		goto fail;
	}
	err = seg_open(rc, now_ns);
	if (err) {
		it_err("%s: cannot create a segment in '%s': %s", who, o->dir, strerror(-err));
		errno = -err;
		goto fail;
	}
	block_reset(rc, now_ns);
	return rc;
fail:
	rec_close(rc);
	return NULL;
}

void rec_flush(struct recorder *rc)
{
	if (rc && rc->raw && (rc->nr_req || rc->nr_blame))
		flush_block(rc, rc->last_flush_ns, 0);
}

uint64_t rec_close(struct recorder *rc)
{
	uint64_t lost;

	if (!rc)
		return 0;
	rec_flush(rc);
	seg_close(rc);
	if (rc->zs_ok)
		deflateEnd(&rc->zs);
	free(rc->raw);
	free(rc->cbuf);
	free(rc->dir);
	lost = rc->lost;
	free(rc);
	return lost;
}

uint64_t rec_lost(const struct recorder *rc)
{
	return rc ? rc->lost : 0;
}

uint64_t rec_written(const struct recorder *rc)
{
	return rc ? rc->written : 0;
}

uint64_t rec_blame_lost(const struct recorder *rc)
{
	return rc ? rc->lost_blame : 0;
}

uint64_t rec_blame_written(const struct recorder *rc)
{
	return rc ? rc->blame_written : 0;
}

uint64_t rec_bytes(const struct recorder *rc)
{
	return rc ? rc->bytes : 0;
}

const char *rec_segment(const struct recorder *rc)
{
	return rc && rc->fd >= 0 ? rc->path : NULL;
}
