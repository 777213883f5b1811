// SPDX-License-Identifier: GPL-2.0
// ioload: a tiny O_DIRECT load generator for the QEMU lab guest. Its own counts
// are the oracle the lab tests compare a tracer against.
//
//   ioload -d DEV -n COUNT [-b BS] [-m read|write|randread|randwrite] [-s SEED]
//          [-o OFFSET] [-S SPAN] [-r OPS_PER_SEC]
//
// One synchronous pread/pwrite per op (queue depth 1) on an O_DIRECT fd with a
// page-aligned buffer; sequential modes wrap around inside [OFFSET, OFFSET+SPAN).
// Prints one JSON line on stdout:
//   {"dev":"/dev/vda","mode":"randread","bs":4096,"count":256,"ops":256,
//    "bytes":1048576,"errors":0,"short":0,"first_errno":0,"elapsed_ns":...,
//    "lat_min_ns":...,"lat_max_ns":...,"lat_avg_ns":...}
// ops = ops that transferred exactly BS bytes; errors = failed or short ops
// (short counts the short ones); ops + errors == count. Exit 0 iff errors == 0,
// 1 on IO errors, 2 on usage or setup errors.
//
// Build: gcc -static -O2 -Wall -o ioload ioload.c
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum mode { M_READ, M_WRITE, M_RANDREAD, M_RANDWRITE };
static const char *const mode_names[] = { "read", "write", "randread", "randwrite" };

static void usage(void)
{
	fprintf(stderr, "usage: ioload -d DEV -n COUNT [-b BS] [-m read|write|randread|randwrite]\n"
			"              [-s SEED] [-o OFFSET] [-S SPAN] [-r OPS_PER_SEC]\n"
			"  sizes take k/m/g suffixes (powers of 1024)\n");
	exit(2);
}

static uint64_t parse_size(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		goto bad;
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	default:
		break;
	}
	if (*end)
		goto bad;
	return v;
bad:
	fprintf(stderr, "ioload: bad %s: %s\n", what, s);
	exit(2);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// xorshift64*: deterministic for a given seed.
static uint64_t rng_state;
static uint64_t rng(void)
{
	uint64_t x = rng_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545F4914F6CDD1Dull;
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	uint64_t count = 0, bs = 4096, seed = 1, off0 = 0, span = 0, rate = 0;
	enum mode mode = M_READ;
	int have_count = 0, c;

	while ((c = getopt(argc, argv, "d:n:b:m:s:o:S:r:h")) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 'n':
			count = parse_size(optarg, "count");
			have_count = 1;
			break;
		case 'b':
			bs = parse_size(optarg, "block size");
			break;
		case 's':
			seed = parse_size(optarg, "seed");
			break;
		case 'o':
			off0 = parse_size(optarg, "offset");
			break;
		case 'S':
			span = parse_size(optarg, "span");
			break;
		case 'r':
			rate = parse_size(optarg, "rate");
			break;
		case 'm': {
			int i, found = 0;
			for (i = 0; i < 4; i++)
				if (!strcmp(optarg, mode_names[i])) {
					mode = (enum mode)i;
					found = 1;
				}
			if (!found) {
				fprintf(stderr, "ioload: bad mode: %s\n", optarg);
				usage();
			}
			break;
		}
		default:
			usage();
		}
	}
	if (!dev || !have_count || optind != argc)
		usage();
	if (bs == 0 || bs % 512 || bs > (64u << 20)) {
		fprintf(stderr, "ioload: block size must be a multiple of 512, at most 64m\n");
		return 2;
	}
	if (off0 % bs) {
		fprintf(stderr, "ioload: offset must be a multiple of the block size\n");
		return 2;
	}

	int writing = mode == M_WRITE || mode == M_RANDWRITE;
	int fd = open(dev, (writing ? O_RDWR : O_RDONLY) | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ioload: open %s: %s\n", dev, strerror(errno));
		return 2;
	}

	struct stat st;
	uint64_t size = 0;
	if (fstat(fd, &st) < 0) {
		fprintf(stderr, "ioload: stat %s: %s\n", dev, strerror(errno));
		return 2;
	}
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &size) < 0) {
			fprintf(stderr, "ioload: BLKGETSIZE64 %s: %s\n", dev, strerror(errno));
			return 2;
		}
		int lbs = 512;
		if (ioctl(fd, BLKSSZGET, &lbs) == 0 && lbs > 0 && bs % (uint64_t)lbs) {
			fprintf(stderr,
				"ioload: block size %" PRIu64
				" is not a multiple of %s's logical block size %d\n",
				bs, dev, lbs);
			return 2;
		}
	} else {
		size = (uint64_t)st.st_size;
	}
	if (off0 >= size) {
		fprintf(stderr,
			"ioload: offset %" PRIu64 " beyond the end of %s (%" PRIu64 " bytes)\n",
			off0, dev, size);
		return 2;
	}
	if (span == 0 || span > size - off0)
		span = size - off0;
	uint64_t nblocks = span / bs;
	if (nblocks == 0) {
		fprintf(stderr, "ioload: %s is smaller than one block\n", dev);
		return 2;
	}

	void *buf;
	size_t align = bs >= 4096 ? 4096 : 512;
	if (posix_memalign(&buf, align, bs)) {
		fprintf(stderr, "ioload: out of memory\n");
		return 2;
	}
	rng_state = seed ? seed : 0x9E3779B97F4A7C15ull;
	for (uint64_t i = 0; i < bs / 8; i++)
		((uint64_t *)buf)[i] = rng();
	rng_state = seed ? seed * 0x9E3779B97F4A7C15ull : 0x9E3779B97F4A7C15ull;

	uint64_t ops = 0, bytes = 0, errors = 0, shorts = 0;
	uint64_t lat_min = UINT64_MAX, lat_max = 0, lat_sum = 0;
	int first_errno = 0;
	uint64_t start = now_ns();

	for (uint64_t i = 0; i < count; i++) {
		if (rate) {
			uint64_t due = start + i * 1000000000ull / rate;
			struct timespec ts = { .tv_sec = (time_t)(due / 1000000000ull),
					       .tv_nsec = (long)(due % 1000000000ull) };
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
		}
		uint64_t blk = (mode == M_RANDREAD || mode == M_RANDWRITE) ? rng() % nblocks :
									     i % nblocks;
		off_t off = (off_t)(off0 + blk * bs);
		if (writing)
			memcpy(buf, &off, sizeof(off)); // stamp the offset into the data
		uint64_t t0 = now_ns();
		ssize_t r = writing ? pwrite(fd, buf, bs, off) : pread(fd, buf, bs, off);
		uint64_t lat = now_ns() - t0;
		if (r < 0) {
			errors++;
			if (!first_errno)
				first_errno = errno;
			continue;
		}
		bytes += (uint64_t)r;
		if ((uint64_t)r != bs) {
			errors++;
			shorts++;
			continue;
		}
		ops++;
		lat_sum += lat;
		if (lat < lat_min)
			lat_min = lat;
		if (lat > lat_max)
			lat_max = lat;
	}
	uint64_t elapsed = now_ns() - start;
	close(fd);

	printf("{\"dev\":\"%s\",\"mode\":\"%s\",\"bs\":%" PRIu64 ",\"count\":%" PRIu64
	       ",\"ops\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"errors\":%" PRIu64
	       ",\"short\":%" PRIu64 ",\"first_errno\":%d"
	       ",\"elapsed_ns\":%" PRIu64 ",\"lat_min_ns\":%" PRIu64 ",\"lat_max_ns\":%" PRIu64
	       ",\"lat_avg_ns\":%" PRIu64 "}\n",
	       dev, mode_names[mode], bs, count, ops, bytes, errors, shorts, first_errno, elapsed,
	       ops ? lat_min : 0, lat_max, ops ? lat_sum / ops : 0);
	fflush(stdout);
	free(buf);
	return errors ? 1 : 0;
}
