// SPDX-License-Identifier: GPL-2.0
/*
 * parse: strict value parsers and formatting helpers. See parse.h.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "lib/abi.h"
#include "lib/clock.h"
#include "iotracer.h"
#include "lib/parse.h"

#define PARSE_MAX_MAJOR 4095u
#define PARSE_MAX_MINOR ((1u << IT_MINORBITS) - 1)
#define PARSE_DEFAULT_SYSFS "/sys"

/*
 * Leading decimal digits of *sp into *v. Returns the number of digits read
 * (and advances *sp past them); *ovf is set when the value does not fit.
 */
static size_t parse_digits(const char **sp, uint64_t *v, int *ovf)
{
	const char *s = *sp;
	uint64_t acc = 0;
	size_t n = 0;

	*ovf = 0;
	while (*s >= '0' && *s <= '9') {
		unsigned int d = (unsigned int)(*s - '0');

		if (acc > (UINT64_MAX - d) / 10)
			*ovf = 1;
		else
			acc = acc * 10 + d;
		s++;
		n++;
	}
	*sp = s;
	*v = acc;
	return n;
}

int parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *name;
		uint64_t mult;
	} units[] = {
		{ "ns", 1ull },
		{ "us", 1000ull },
		{ "ms", 1000000ull },
		{ "s", 1000000000ull },
		{ "m", 60ull * 1000000000ull },
		{ "h", 3600ull * 1000000000ull },
		{ "", 1000000000ull },
	};
	uint64_t ip = 0, frac = 0, fscale = 1, mult = 0;
	unsigned __int128 total;
	size_t nint, nfrac = 0, i;
	int ovf = 0;

	if (!s || !*s)
		return -EINVAL;

	nint = parse_digits(&s, &ip, &ovf);
	if (*s == '.') {
		s++;
		/* 18 digits keep frac * mult within 128 bits; the rest truncates */
		while (*s >= '0' && *s <= '9') {
			if (nfrac < 18) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				fscale *= 10;
			}
			nfrac++;
			s++;
		}
		if (!nfrac)
			return -EINVAL;
	}
	if (!nint && !nfrac)
		return -EINVAL;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(s, units[i].name)) {
			mult = units[i].mult;
			break;
		}
	}
	if (!mult)
		return -EINVAL;
	if (ovf)
		return -ERANGE;

	total = (unsigned __int128)ip * mult;
	total += (unsigned __int128)frac * mult / fscale;
	if (total > UINT64_MAX)
		return -ERANGE;
	*ns = (uint64_t)total;
	return 0;
}

int parse_size(const char *s, uint64_t *bytes)
{
	uint64_t v, mult = 1;
	int ovf;

	if (!s || !parse_digits(&s, &v, &ovf))
		return -EINVAL;

	switch (tolower((unsigned char)*s)) {
	case 'k':
		mult = 1ull << 10;
		break;
	case 'm':
		mult = 1ull << 20;
		break;
	case 'g':
		mult = 1ull << 30;
		break;
	case 't':
		mult = 1ull << 40;
		break;
	}
	if (mult > 1) {
		s++;
		if (*s == 'i' || *s == 'I') {
			s++;
			if (*s != 'b' && *s != 'B')
				return -EINVAL;
		}
	}
	if (*s == 'b' || *s == 'B')
		s++;
	if (*s)
		return -EINVAL;
	if (ovf || v > UINT64_MAX / mult)
		return -ERANGE;
	*bytes = v * mult;
	return 0;
}

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* "MAJ:MIN" (the first len bytes of s) -> kernel dev_t. */
static int parse_majmin(const char *s, size_t len, uint32_t *kdev)
{
	char tmp[32];
	char *colon;
	uint64_t ma, mi;

	if (len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	colon = strchr(tmp, ':');
	if (!colon)
		return -EINVAL;
	*colon = '\0';
	if (parse_u64(tmp, 0, PARSE_MAX_MAJOR, &ma) ||
	    parse_u64(colon + 1, 0, PARSE_MAX_MINOR, &mi))
		return -EINVAL;
	*kdev = IT_MKDEV(ma, mi);
	return 0;
}

/* Read at most n - 1 bytes of a small file, NUL terminated; length or -errno. */
static ssize_t parse_read_small(const char *path, char *buf, size_t n)
{
	ssize_t ret, len = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)len < n - 1) {
		ret = read(fd, buf + len, n - 1 - (size_t)len);
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			len = -errno;
			goto out;
		}
		if (!ret)
			break;
		len += ret;
	}
	buf[len] = '\0';
out:
	close(fd);
	return len;
}

static int parse_dev_path(const char *path, uint32_t *kdev)
{
	struct stat st;

	if (stat(path, &st))
		return (errno == ENOENT || errno == ENOTDIR) ? -ENOENT : -errno;
	if (!S_ISBLK(st.st_mode))
		return -ENOTBLK;
	if (major(st.st_rdev) > PARSE_MAX_MAJOR || minor(st.st_rdev) > PARSE_MAX_MINOR)
		return -ERANGE;
	*kdev = IT_MKDEV(major(st.st_rdev), minor(st.st_rdev));
	return 0;
}

static int parse_dev_sysfs(const char *name, const char *root, uint32_t *kdev)
{
	char path[PATH_MAX], buf[64];
	ssize_t len;
	int n;

	if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") ||
	    strlen(name) > NAME_MAX)
		return -EINVAL;
	n = snprintf(path, sizeof(path), "%s/class/block/%s/dev", root, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	len = parse_read_small(path, buf, sizeof(buf));
	if (len < 0)
		return (len == -ENOENT || len == -ENOTDIR) ? -ENOENT : (int)len;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	return parse_majmin(buf, (size_t)len, kdev) ? -EIO : 0;
}

int parse_dev(const char *s, const char *sysfs_root, uint32_t *kdev)
{
	if (!s || !*s)
		return -EINVAL;
	if (!sysfs_root)
		sysfs_root = PARSE_DEFAULT_SYSFS;
	if (s[0] == '/')
		return parse_dev_path(s, kdev);
	if (strchr(s, ':'))
		return parse_majmin(s, strlen(s), kdev);
	return parse_dev_sysfs(s, sysfs_root, kdev);
}

char *parse_fmt_devno(uint32_t kdev, char *buf, size_t n)
{
	snprintf(buf, n, "%u:%u", IT_MAJOR(kdev), IT_MINOR(kdev));
	return buf;
}

/* Copy len bytes of src into buf of size n, truncating; always terminated. */
static void parse_copy(char *buf, size_t n, const char *src, size_t len)
{
	if (len >= n)
		len = n - 1;
	memcpy(buf, src, len);
	buf[len] = '\0';
}

static int parse_name_uevent(const char *dir, char *buf, size_t n)
{
	char path[PATH_MAX], data[4096];
	const char *p, *end;
	ssize_t len;
	int ret;

	ret = snprintf(path, sizeof(path), "%s/uevent", dir);
	if (ret < 0 || (size_t)ret >= sizeof(path))
		return -ENAMETOOLONG;
	len = parse_read_small(path, data, sizeof(data));
	if (len < 0)
		return (int)len;
	for (p = data; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, '\n');
		if (strncmp(p, "DEVNAME=", 8) || end == p + 8)
			continue;
		parse_copy(buf, n, p + 8, (size_t)(end - p - 8));
		return 0;
	}
	return -ENOENT;
}

static int parse_name_link(const char *dir, char *buf, size_t n)
{
	char target[PATH_MAX];
	const char *base;
	ssize_t len;

	len = readlink(dir, target, sizeof(target) - 1);
	if (len < 0)
		return -errno;
	target[len] = '\0';
	while (len > 0 && target[len - 1] == '/')
		target[--len] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (!*base)
		return -ENOENT;
	parse_copy(buf, n, base, strlen(base));
	return 0;
}

int parse_dev_sectors(uint32_t kdev, const char *sysfs_root, uint64_t *sectors)
{
	char path[PATH_MAX], buf[32];
	ssize_t len;

	snprintf(path, sizeof(path), "%s/dev/block/%u:%u/size",
		 sysfs_root ? sysfs_root : PARSE_DEFAULT_SYSFS, IT_MAJOR(kdev), IT_MINOR(kdev));
	len = parse_read_small(path, buf, sizeof(buf));
	if (len < 0)
		return (int)len;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	buf[len] = '\0';
	return parse_u64(buf, 0, UINT64_MAX, sectors) ? -EIO : 0;
}

int parse_dev_name(uint32_t kdev, const char *sysfs_root, char *buf, size_t n)
{
	char dir[PATH_MAX];
	int ret;

	if (!buf || !n)
		return -EINVAL;
	if (!sysfs_root)
		sysfs_root = PARSE_DEFAULT_SYSFS;
	ret = snprintf(dir, sizeof(dir), "%s/dev/block/%u:%u", sysfs_root, IT_MAJOR(kdev),
		       IT_MINOR(kdev));
	if (ret < 0 || (size_t)ret >= sizeof(dir))
		goto fallback;
	if (!parse_name_uevent(dir, buf, n) || !parse_name_link(dir, buf, n))
		return 0;
fallback:
	parse_fmt_devno(kdev, buf, n);
	return -ENOENT;
}

/* --- dev name cache ---------------------------------------------------- */

#define PARSE_DC_SIZE 64
#define PARSE_DC_NAME 40
#define PARSE_DC_ROOT 256
#define PARSE_DC_NEG_TTL_NS (2ull * 1000000000ull)

struct parse_dc_ent {
	uint32_t kdev;
	int used;
	int neg; /* name not found: expires */
	uint64_t t_ns;
	char name[PARSE_DC_NAME];
};

static struct parse_dc_ent parse_dc[PARSE_DC_SIZE];
static unsigned int parse_dc_next;
static char parse_dc_root[PARSE_DC_ROOT];
static char parse_dc_uncached[PARSE_DC_NAME];

void parse_dev_cache_clear(void)
{
	memset(parse_dc, 0, sizeof(parse_dc));
	parse_dc_next = 0;
	parse_dc_root[0] = '\0';
}

const char *parse_dev_name_cached(uint32_t kdev, const char *sysfs_root)
{
	struct parse_dc_ent *e = NULL;
	uint64_t now;
	unsigned int i;

	if (!sysfs_root)
		sysfs_root = PARSE_DEFAULT_SYSFS;
	if (strlen(sysfs_root) >= sizeof(parse_dc_root)) {
		parse_dev_name(kdev, sysfs_root, parse_dc_uncached, sizeof(parse_dc_uncached));
		return parse_dc_uncached;
	}
	if (strcmp(parse_dc_root, sysfs_root)) {
		parse_dev_cache_clear();
		strcpy(parse_dc_root, sysfs_root);
	}

	now = it_mono_ns();
	for (i = 0; i < PARSE_DC_SIZE; i++) {
		if (parse_dc[i].used && parse_dc[i].kdev == kdev) {
			e = &parse_dc[i];
			break;
		}
	}
	if (e && (!e->neg || now - e->t_ns < PARSE_DC_NEG_TTL_NS))
		return e->name;
	if (!e) {
		e = &parse_dc[parse_dc_next];
		parse_dc_next = (parse_dc_next + 1) % PARSE_DC_SIZE;
	}
	e->used = 1;
	e->kdev = kdev;
	e->t_ns = now;
	e->neg = parse_dev_name(kdev, sysfs_root, e->name, sizeof(e->name)) != 0;
	return e->name;
}

/* --- layers ------------------------------------------------------------ */

int parse_layers(const char *s, uint32_t *mask)
{
	uint32_t m = 0;
	const char *p, *end;
	size_t len;
	int l;

	if (!s || !*s)
		return -EINVAL;
	for (p = s;; p = end + 1) {
		end = strchrnul(p, ',');
		len = (size_t)(end - p);
		if (!len)
			return -EINVAL;
		if (len == 3 && !strncasecmp(p, "all", 3)) {
			m |= (1u << IT_L_MAX) - 1;
		} else {
			l = abi_value(&abi_layers, p, len);
			if (l < 0)
				return -EINVAL;
			m |= 1u << l;
		}
		if (!*end)
			break;
	}
	*mask = m;
	return 0;
}

/* --- formatting -------------------------------------------------------- */

/* ns / d rounded half up, without overflow. */
static uint64_t parse_div_round(uint64_t ns, uint64_t d)
{
	return ns / d + (ns % d >= d - ns % d ? 1 : 0);
}

char *parse_fmt_duration(uint64_t ns, char *buf, size_t n)
{
	static const struct {
		const char *name;
		uint64_t unit;
	} units[] = { { "us", 1000ull }, { "ms", 1000000ull }, { "s", 1000000000ull } };
	unsigned long long r;
	size_t i;

	if (!buf || !n)
		return buf;
	if (ns < 1000) {
		snprintf(buf, n, "%lluns", (unsigned long long)ns);
		return buf;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		uint64_t u = units[i].unit;

		r = parse_div_round(ns, u / 100);
		if (r < 1000) {
			snprintf(buf, n, "%llu.%02llu%s", r / 100, r % 100, units[i].name);
			return buf;
		}
		r = parse_div_round(ns, u / 10);
		if (r < 1000) {
			snprintf(buf, n, "%llu.%llu%s", r / 10, r % 10, units[i].name);
			return buf;
		}
		r = parse_div_round(ns, u);
		if (r < 1000) {
			snprintf(buf, n, "%llu%s", r, units[i].name);
			return buf;
		}
	}
	snprintf(buf, n, "%llus", (unsigned long long)parse_div_round(ns, 1000000000ull));
	return buf;
}

#define SERIAL_CACHE 64

/*
 * Trailing blanks off (NVMe pads its serial with spaces; QEMU's serial= is
 * taken as given, so leading ones stay); 1 if anything is left.
 */
static int serial_trim(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == ' ' || s[n - 1] == '\n'))
		s[--n] = 0;
	return n > 0;
}

int parse_vpd_serial(const uint8_t *page, size_t len, char *out, size_t outlen)
{
	size_t n, i;

	if (!outlen)
		return 0;
	out[0] = 0;
	if (len < 4 || page[1] != 0x80)
		return 0;
	n = (size_t)page[2] << 8 | page[3];
	if (n > len - 4)
		n = len - 4;
	for (i = 0; i < n && i < outlen - 1 && page[4 + i]; i++)
		out[i] = isprint(page[4 + i]) ? (char)page[4 + i] : '?';
	out[i] = 0;
	return serial_trim(out);
}

/* One sysfs serial file into out: text, or (vpd) the binary VPD page 0x80. */
static int serial_read(const char *path, int vpd, char *out, size_t outlen)
{
	uint8_t page[256];
	size_t n;
	FILE *f = fopen(path, "re");
	int found = 0;

	if (!f)
		return 0;
	if (vpd) {
		n = fread(page, 1, sizeof(page), f);
		found = parse_vpd_serial(page, n, out, outlen);
	} else if (fgets(out, (int)outlen, f)) {
		found = serial_trim(out);
	}
	fclose(f);
	return found;
}

static struct {
	uint32_t dev;
	int valid, found;
	char serial[64];
} serial_cache[SERIAL_CACHE];

/* The slot for a new device: a free one, else one without a serial, else the oldest. */
static unsigned int serial_slot(void)
{
	static unsigned int next;
	unsigned int i;

	for (i = 0; i < SERIAL_CACHE; i++)
		if (!serial_cache[i].valid)
			return i;
	for (i = 0; i < SERIAL_CACHE; i++)
		if (!serial_cache[i].found)
			return i;
	return next++ % SERIAL_CACHE;
}

const char *parse_dev_serial_cached(uint32_t kdev, const char *sysfs_root)
{
	typeof(serial_cache[0]) *cache = serial_cache;
	/* virtio-blk; NVMe controller (or subsystem); SCSI unit serial number */
	static const struct {
		const char *rel;
		int vpd;
	} src[] = { { "serial", 0 }, { "device/serial", 0 }, { "device/vpd_pg80", 1 } };
	unsigned int i;

	for (i = 0; i < SERIAL_CACHE; i++)
		if (cache[i].valid && cache[i].dev == kdev)
			return cache[i].found ? cache[i].serial : NULL;
	i = serial_slot();
	cache[i].dev = kdev;
	cache[i].valid = 1;
	cache[i].found = 0;
	for (size_t k = 0; k < sizeof(src) / sizeof(src[0]) && !cache[i].found; k++) {
		char path[256];

		snprintf(path, sizeof(path), "%s/dev/block/%u:%u/%s",
			 sysfs_root ? sysfs_root : "/sys", IT_MAJOR(kdev), IT_MINOR(kdev),
			 src[k].rel);
		cache[i].found =
			serial_read(path, src[k].vpd, cache[i].serial, sizeof(cache[i].serial));
	}
	return cache[i].found ? cache[i].serial : NULL;
}

int parse_dev_serials_prefetch(const char *sysfs_root)
{
	char path[256];
	struct dirent *e;
	unsigned int maj, min;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/dev/block", sysfs_root ? sysfs_root : "/sys");
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((e = readdir(dir)) && n < SERIAL_CACHE) {
		char c;

		if (sscanf(e->d_name, "%u:%u%c", &maj, &min, &c) != 2)
			continue;
		n += parse_dev_serial_cached(IT_MKDEV(maj, min), sysfs_root) != NULL;
	}
	closedir(dir);
	return n;
}

/*
 * A date and time ("2026-11-24T13:25:00Z", "...00.5+01:00", lower case t/z and
 * a space for T too; without a zone: local time) to CLOCK_REALTIME ns.
 */
static int parse_rfc3339(const char *s, uint64_t *ns)
{
	struct tm tm = { 0 };
	const char *p = strptime(s, "%Y-%m-%d", &tm);
	uint64_t frac = 0, scale = 1000000000ull;
	long off = 0;
	time_t t;

	if (!p || (*p != 'T' && *p != 't' && *p != ' '))
		return -EINVAL;
	p = strptime(p + 1, "%H:%M:%S", &tm);
	if (!p)
		return -EINVAL;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++)
			if (scale > 1) {
				scale /= 10;
				frac += (uint64_t)(*p - '0') * scale;
			}
	}
	if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
		off = ((p[1] - '0') * 10 + (p[2] - '0')) * 3600 +
		      ((p[4] - '0') * 10 + (p[5] - '0')) * 60;
		if (*p == '-')
			off = -off;
	} else if (!*p) {
		tm.tm_isdst = -1; /* no zone: local time, DST as the date has it */
		t = mktime(&tm);
		if (t == (time_t)-1 || t < 0)
			return -EINVAL;
		*ns = (uint64_t)t * 1000000000ull + frac;
		return 0;
	} else if (strcmp(p, "Z") && strcmp(p, "z")) {
		return -EINVAL;
	}
	t = timegm(&tm);
	if (t == (time_t)-1 || t - off < 0)
		return -EINVAL;
	*ns = (uint64_t)(t - off) * 1000000000ull + frac;
	return 0;
}

/* Seconds since the epoch ("1764000000", "1764000000.25"): digits, an optional fraction. */
static int parse_epoch(const char *s, uint64_t *ns)
{
	const char *p = s;

	while (*p >= '0' && *p <= '9')
		p++;
	if (p == s || (*p && *p != '.'))
		return -EINVAL;
	for (const char *f = *p ? p + 1 : p; *f; f++)
		if (*f < '0' || *f > '9')
			return -EINVAL;
	return parse_duration(s, ns); /* a plain number: seconds, fraction and overflow checked */
}

int parse_time(const char *s, uint64_t now_real, uint64_t *real)
{
	uint64_t v;

	if (!s)
		return -EINVAL;
	if (!parse_epoch(s, &v)) {
		*real = v;
		return 0;
	}
	if (!parse_duration(s, &v)) {
		*real = v < now_real ? now_real - v : 0;
		return 0;
	}
	if (!parse_rfc3339(s, &v)) {
		*real = v;
		return 0;
	}
	return -EINVAL;
}

int parse_each(const char *s, int (*fn)(const char *item, void *ctx), void *ctx)
{
	char *copy = strdup(s), *p, *end;
	int ret = 0, last;

	if (!copy)
		return -ENOMEM;
	for (p = copy;; p = end + 1) {
		end = strchrnul(p, ',');
		last = !*end;
		*end = '\0';
		ret = fn(p, ctx);
		if (ret || last)
			break;
	}
	free(copy);
	return ret;
}
