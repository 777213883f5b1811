// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the file names (issue 38): mountinfo parsing and lookups
 * (records/mountinfo.c), the bounded name cache (records/fname.c), name
 * records into paths (records/fnres.c, against a /proc of the test's own),
 * the recording's name entries (records/recfmt.c) and the names a recording
 * gives containers (records/container_names.c, ct_names_add).
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "records/container.h"
#include "records/fname.h"
#include "records/fnres.h"
#include "records/mountinfo.h"
#include "records/recfmt.h"
#include "lib/json.h"
#include "lib/jsonw.h"
#include "lib/procfs.h"
#include "unit.h"

/* A host's mounts: /, a loop fs at /mnt/t, a bind of /mnt/t/a/b at /srv/b, /dev, a space. */
static const char host_mi[] =
	"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
	"24 27 0:6 / /dev rw,relatime shared:2 - devtmpfs devtmpfs rw\n"
	"45 27 7:3 / /mnt/t rw,noatime shared:7 master:1 - ext4 /dev/loop3 rw\n"
	"46 27 7:3 /a/b /srv/b rw - ext4 /dev/loop3 rw\n"
	"47 27 7:4 /x\\040y /mnt/with\\040space rw - ext4 /dev/loop4 rw\n"
	"this line is not mountinfo\n";

static void test_mountinfo(void)
{
	struct mi_table t = { 0 };
	const struct mi_mount *m;
	char buf[256];
	int bad = -1;

	if (!ASSERT_OK(mi_parse(&t, host_mi, strlen(host_mi), &bad), "parse"))
		return;
	ASSERT_EQ(t.nr, 5, "mounts");
	ASSERT_EQ(bad, 1, "bad lines counted");
	m = mi_by_id(&t, 47);
	if (ASSERT_TRUE(m != NULL, "by id")) {
		ASSERT_STREQ(m->root, "/x y", "root unescaped");
		ASSERT_STREQ(m->point, "/mnt/with space", "point unescaped");
		ASSERT_EQ(m->dev, IT_MKDEV(7, 4), "dev");
		ASSERT_STREQ(m->fstype, "ext4", "fstype after the optional fields");
	}
	/* the bind shows /a/b/...: its root is the longer prefix */
	m = mi_by_dev(&t, IT_MKDEV(7, 3), "/a/b/c/f");
	ASSERT_TRUE(m && m->id == 46, "a bind's longer root");
	m = mi_by_dev(&t, IT_MKDEV(7, 3), "/a/bc/f");
	ASSERT_TRUE(m && m->id == 45, "a prefix only at a component boundary");
	ASSERT_TRUE(mi_by_dev(&t, IT_MKDEV(7, 9), "/f") == NULL, "no mount of the dev");
	ASSERT_OK(mi_path(mi_by_id(&t, 46), "/a/b/c/f", buf, sizeof(buf)), "bind path");
	ASSERT_STREQ(buf, "/srv/b/c/f", "below the bind's root, at its point");
	ASSERT_OK(mi_path(mi_by_id(&t, 27), "/etc/f", buf, sizeof(buf)), "root path");
	ASSERT_STREQ(buf, "/etc/f", "/ at /");
	ASSERT_OK(mi_path(mi_by_id(&t, 45), "/a/f", buf, sizeof(buf)), "mnt path");
	ASSERT_STREQ(buf, "/mnt/t/a/f", "/ at /mnt/t");
	ASSERT_EQ(mi_path(mi_by_id(&t, 46), "/z/f", buf, sizeof(buf)), -ENOENT, "not below");
	ASSERT_EQ(mi_path(mi_by_id(&t, 45), "/a/f", buf, 6), -ENAMETOOLONG, "too long");
	mi_free(&t);
}

static int evicted;
static struct fn_key last_evicted;

static void on_evict(const struct fn_key *k, void *ctx)
{
	(void)ctx;
	evicted++;
	last_evicted = *k;
}

static struct fn_key key(uint64_t ino)
{
	return (struct fn_key){ .ino = ino, .dev = IT_MKDEV(7, 3) };
}

static void test_cache(void)
{
	struct fn_cache *c = fn_new(100);
	struct fn_key k = key(5), miss[FN_MISSES];
	const struct fn_entry *e;
	struct fn_stats st;
	char name[32];

	if (!ASSERT_TRUE(c != NULL, "new"))
		return;
	fn_set_evict(c, on_evict, NULL);
	ASSERT_OK(fn_put(c, &k, "/a", NULL), "put");
	ASSERT_OK(fn_put(c, &k, "/b", "/c/b"), "put again: new names");
	e = fn_get(c, &k);
	ASSERT_TRUE(e && !strcmp(e->file, "/b") && e->cfile && !strcmp(e->cfile, "/c/b"),
		    "the newest names");
	k.bdev = 1;
	ASSERT_TRUE(fn_get(c, &k) == NULL, "a block device node is another file");
	ASSERT_EQ(fn_take_misses(c, miss, FN_MISSES), 1, "the miss kept");
	ASSERT_TRUE(miss[0].bdev == 1 && miss[0].ino == 5, "its key");
	ASSERT_EQ(fn_take_misses(c, miss, FN_MISSES), 0, "taken");
	/* 300 files through 100 entries: the least used go, 5 stays (used every time) */
	for (uint64_t i = 10; i < 310; i++) {
		snprintf(name, sizeof(name), "/f%llu", (unsigned long long)i);
		k = key(i);
		if (!ASSERT_OK(fn_put(c, &k, name, NULL), "put many"))
			break;
		k = key(5);
		fn_get(c, &k);
	}
	ASSERT_EQ(fn_count(c), 100, "bounded");
	ASSERT_EQ(evicted, 201, "evictions told");
	ASSERT_EQ(last_evicted.ino, 210, "least recently used first");
	k = key(5);
	ASSERT_TRUE(fn_get(c, &k) != NULL, "the busy one kept");
	k = key(209);
	ASSERT_TRUE(fn_peek(c, &k) == NULL, "an old one gone");
	k = key(309);
	e = fn_peek(c, &k);
	ASSERT_TRUE(e && !strcmp(e->file, "/f309"), "the newest kept");
	ASSERT_EQ(fn_evict(c, 10), 10, "evict 10");
	fn_stats(c, &st);
	ASSERT_EQ(st.entries, 90, "entries");
	ASSERT_EQ(st.evicted, 211, "evicted");
	ASSERT_EQ(st.misses, 1, "misses (peek does not count)");
	fn_free(c);
}

/* "{" members "}" parsed by the reader (lib/json.c): NULL when not JSON. */
static struct json *members(const char *m, size_t n)
{
	char buf[512];

	if (n + 3 > sizeof(buf))
		return NULL;
	buf[0] = '{';
	memcpy(buf + 1, m, n);
	buf[n + 1] = '}';
	return json_parse(buf, n + 2);
}

/* fn_get_json(): the names as JSON members, escaped once, made again after new names. */
static void test_json(void)
{
	/* a quote, a backslash, a control character, UTF-8: read back as they are */
	const char *odd = "/mnt/t/a \"q\" \\ \x01 \xc3\xa9.dat";
	const char *bad = "/mnt/t/\xff";
	struct fn_cache *c = fn_new(4);
	struct fn_key k = key(5), k2 = key(6);
	struct fn_stats st;
	struct json *v;
	const char *m;
	size_t n = 0, d = 0;
	struct jw w;

	if (!ASSERT_TRUE(c != NULL, "new"))
		return;
	ASSERT_OK(fn_put(c, &k, odd, "/data/a.dat"), "put");
	m = fn_get_json(c, &k, &n, &d);
	if (!ASSERT_TRUE(m != NULL && n < d, "members"))
		goto out;
	v = members(m, d);
	if (ASSERT_TRUE(v != NULL, "JSON, with file_devno")) {
		ASSERT_STREQ(json_get(v, "file")->str, odd, "file read back");
		ASSERT_STREQ(json_get(v, "container_file")->str, "/data/a.dat", "container_file");
		ASSERT_STREQ(json_get(v, "file_devno")->str, "7:3", "file_devno: the key's dev");
		json_free(v);
	}
	v = members(m, n);
	if (ASSERT_TRUE(v != NULL, "JSON, the names alone")) {
		ASSERT_TRUE(json_get(v, "file") && json_get(v, "container_file") &&
				    !json_get(v, "file_devno"),
			    "file and container_file only");
		json_free(v);
	}
	ASSERT_TRUE(fn_get_json(c, &k, &n, &d) == m, "kept: made once");

	/* new names (a rename): the members follow them */
	ASSERT_OK(fn_put(c, &k, bad, NULL), "put again");
	m = fn_get_json(c, &k, &n, &d);
	jw_init(&w);
	jw_obj_begin(&w, NULL);
	jw_str(&w, "file", bad);
	jw_str(&w, "file_devno", "7:3");
	jw_obj_end(&w);
	ASSERT_TRUE(m && d + 2 == jw_len(&w) && !memcmp(jw_data(&w) + 1, m, d),
		    "as a JSON line writes them (a byte not UTF-8: \\u00ff)");
	ASSERT_TRUE(m && n == strlen("\"file\":\"/mnt/t/\\u00ff\""), "no container_file");
	jw_free(&w);

	ASSERT_TRUE(fn_get_json(c, &k2, &n, &d) == NULL, "not known");
	fn_stats(c, &st);
	ASSERT_EQ(st.misses, 1, "the miss counted");
	ASSERT_EQ(st.hits, 3, "the hits counted");
	ASSERT_EQ(fn_evict(c, 1), 1, "evicted");
	fn_stats(c, &st);
	ASSERT_EQ(st.bytes, 0, "every byte given back (names and members)");
out:
	fn_free(c);
}

/* fn_get_json() of the entry it gave last (no call): as the cache's order and names go. */
static void test_json_hot(void)
{
	struct fn_cache *c = fn_new(2);
	struct fn_key a = key(5), b = key(6), x = key(7);
	struct fn_stats st;
	const char *m, *m2;
	size_t n = 0, d = 0;

	if (!ASSERT_TRUE(c != NULL, "new"))
		return;
	ASSERT_OK(fn_put(c, &a, "/a", NULL), "put a");
	ASSERT_OK(fn_put(c, &b, "/b", NULL), "put b");
	m = fn_get_json(c, &a, &n, &d);
	ASSERT_TRUE(m && n == strlen("\"file\":\"/a\"") && !memcmp(m, "\"file\":\"/a\"", n), "a");
	m2 = fn_get_json(c, &a, &n, &d);
	ASSERT_TRUE(m2 == m && n == strlen("\"file\":\"/a\""), "a again: the same members");
	fn_get(c, &b);
	/* b the most recently used: a's next use makes it so again, b goes first */
	ASSERT_TRUE(fn_get_json(c, &a, &n, &d) == m, "a after b");
	ASSERT_OK(fn_put(c, &x, "/x", NULL), "put x: one goes");
	ASSERT_TRUE(fn_peek(c, &a) != NULL && fn_peek(c, &b) == NULL, "b went, not a");
	/* new names of the hot entry */
	ASSERT_OK(fn_put(c, &a, "/a2", NULL), "rename a");
	m = fn_get_json(c, &a, &n, &d);
	ASSERT_TRUE(m && n == strlen("\"file\":\"/a2\"") && !memcmp(m, "\"file\":\"/a2\"", n),
		    "a's new name");
	ASSERT_EQ(fn_evict(c, 2), 2, "all evicted");
	ASSERT_TRUE(fn_get_json(c, &a, &n, &d) == NULL, "a gone: a miss");
	fn_stats(c, &st);
	ASSERT_EQ(st.hits, 5, "every hit counted, with a call or not");
	ASSERT_EQ(st.misses, 1, "the miss counted");
	fn_free(c);
}

/* A name record: components leaf first. */
static size_t mk_rec(struct it_name_rec *r, uint32_t flags, const char *const *comp, int nr)
{
	memset(r, 0, sizeof(*r));
	r->hdr.type = IT_REC_NAME;
	r->flags = flags;
	r->dev = IT_MKDEV(7, 3);
	r->ino = 12;
	for (int i = 0; i < nr; i++) {
		size_t n = strlen(comp[i]) + 1;

		memcpy(r->names + r->len, comp[i], n);
		r->len += (uint16_t)n;
	}
	r->nr = (uint16_t)nr;
	r->hdr.size = (uint16_t)IT_NAME_SIZE(r->len);
	return IT_NAME_SIZE(r->len);
}

static void test_rel(void)
{
	static const char *const path[] = { "f", "b", "a" };
	static const char *const memfd[] = { "memfd:shm" };
	static const char *const disc[] = { "f", "/" };
	struct it_name_rec *r = malloc(sizeof(*r));
	char buf[FR_PATH_MAX];
	size_t n;

	if (!ASSERT_TRUE(r != NULL, "alloc"))
		return;
	n = mk_rec(r, 0, path, 3);
	ASSERT_OK(fnres_rel(r, n, buf, sizeof(buf)), "rel");
	ASSERT_STREQ(buf, "/a/b/f", "root first");
	n = mk_rec(r, IT_NM_CUT, path, 3);
	ASSERT_OK(fnres_rel(r, n, buf, sizeof(buf)), "cut");
	ASSERT_STREQ(buf, "/" FR_CUT "/a/b/f", "the marker where the root side was");
	n = mk_rec(r, IT_NM_PSEUDO, memfd, 1);
	ASSERT_OK(fnres_rel(r, n, buf, sizeof(buf)), "memfd");
	ASSERT_STREQ(buf, "memfd:shm", "its own name");
	n = mk_rec(r, IT_NM_PSEUDO, disc, 2);
	ASSERT_OK(fnres_rel(r, n, buf, sizeof(buf)), "disconnected");
	ASSERT_STREQ(buf, "[disconnected]/f", "a disconnected dentry");
	n = mk_rec(r, IT_NM_PSEUDO | IT_NM_INODE, NULL, 0);
	memcpy(r->fstype, "bdev", 5);
	ASSERT_OK(fnres_rel(r, n, buf, sizeof(buf)), "no dentry");
	ASSERT_STREQ(buf, "[bdev]", "an inode of no dentry: its file system's type");
	/* malformed: counts that disagree, a missing NUL, a short buffer */
	n = mk_rec(r, 0, path, 3);
	r->nr = 2;
	ASSERT_EQ(fnres_rel(r, n, buf, sizeof(buf)), -EINVAL, "nr disagrees");
	n = mk_rec(r, 0, path, 3);
	r->names[r->len - 1] = 'x';
	ASSERT_EQ(fnres_rel(r, n, buf, sizeof(buf)), -EINVAL, "no NUL");
	n = mk_rec(r, 0, path, 3);
	ASSERT_EQ(fnres_rel(r, n - 1, buf, sizeof(buf)), -EINVAL, "cut short");
	ASSERT_EQ(fnres_rel(r, n, buf, 4), -EINVAL, "no room");
	r->len = IT_NAME_MAX + 1;
	ASSERT_EQ(fnres_rel(r, sizeof(*r), buf, sizeof(buf)), -EINVAL, "len past the record");
	free(r);
}

/* A /proc of the test's own: self/mountinfo, self/ns/mnt, 4242/mountinfo, 4242/ns/mnt. */
static int mk_proc(char *dir, uint64_t *self_ns, uint64_t *ct_ns)
{
	static const char ct_mi[] = "900 800 0:77 / / rw - overlay overlay rw\n"
				    "901 900 7:3 /a /data rw - ext4 /dev/loop3 rw\n";
	char p[512];
	struct stat st;

	if (!mkdtemp(dir))
		return -1;
	snprintf(p, sizeof(p), "%s/self", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/self/ns", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/4242", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/4242/ns", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/self/mountinfo", dir);
	if (procfs_write_file(p, host_mi, strlen(host_mi)))
		return -1;
	snprintf(p, sizeof(p), "%s/4242/mountinfo", dir);
	if (procfs_write_file(p, ct_mi, strlen(ct_mi)))
		return -1;
	snprintf(p, sizeof(p), "%s/self/ns/mnt", dir);
	if (procfs_write_file(p, "", 0) || stat(p, &st))
		return -1;
	*self_ns = st.st_ino;
	snprintf(p, sizeof(p), "%s/4242/ns/mnt", dir);
	if (procfs_write_file(p, "", 0) || stat(p, &st))
		return -1;
	*ct_ns = st.st_ino;
	return 0;
}

static void rm_proc(const char *dir)
{
	static const char *const files[] = { "self/mountinfo", "self/ns/mnt", "4242/mountinfo",
					     "4242/ns/mnt",    "self/ns",     "4242/ns",
					     "self",	       "4242" };
	char p[512];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		remove(p);
	}
	rmdir(dir);
}

static void test_resolve(void)
{
	static const char *const in_b[] = { "f", "c", "b", "a" };
	static const char *const loop0[] = { "loop0" };
	char dir[] = "/tmp/it-fnres-XXXXXX", file[FR_PATH_MAX], cfile[FR_PATH_MAX];
	struct it_name_rec *r = malloc(sizeof(*r));
	uint64_t self_ns = 0, ct_ns = 0;
	struct fnres *res = NULL;
	struct fn_key k;
	size_t n;

	if (!ASSERT_TRUE(r != NULL, "alloc") || !ASSERT_OK(mk_proc(dir, &self_ns, &ct_ns), "proc"))
		goto out;
	res = fnres_new(dir);
	if (!ASSERT_TRUE(res != NULL, "new"))
		goto out;
	/* through the bind mount (its id): the bind's point */
	n = mk_rec(r, 0, in_b, 4);
	r->mnt_id = 46;
	r->mnt_ns = (uint32_t)self_ns;
	ASSERT_OK(fnres_name(res, r, n, &k, file, cfile), "by id");
	ASSERT_STREQ(file, "/srv/b/c/f", "the bind's view");
	ASSERT_STREQ(cfile, "", "the daemon's namespace: no container path");
	ASSERT_TRUE(k.ino == 12 && k.dev == IT_MKDEV(7, 3) && !k.bdev, "key");
	/* named from its inode (no mount): a mount of the file system that shows it */
	r->mnt_id = 0;
	r->mnt_ns = 0;
	r->flags = IT_NM_INODE | IT_NM_DELETED;
	ASSERT_OK(fnres_name(res, r, n, &k, file, cfile), "by dev");
	ASSERT_STREQ(file, "/srv/b/c/f (deleted)", "the longest root, and deleted");
	/* reached in a container's namespace: its mount 901 shows /a at /data */
	r->flags = 0;
	r->mnt_id = 901;
	r->mnt_ns = (uint32_t)ct_ns;
	r->pid = 4242;
	ASSERT_OK(fnres_name(res, r, n, &k, file, cfile), "container");
	ASSERT_STREQ(cfile, "/data/b/c/f", "the container's path");
	ASSERT_STREQ(file, "/srv/b/c/f", "the host's path by the file system");
	/* its task gone: no container path, counted */
	r->pid = 4243;
	r->mnt_ns = (uint32_t)ct_ns + 1;
	ASSERT_OK(fnres_name(res, r, n, &k, file, cfile), "container gone");
	ASSERT_STREQ(cfile, "", "no container path");
	/* a file system no mount shows */
	r->dev = IT_MKDEV(8, 1);
	r->mnt_id = 0;
	r->mnt_ns = 0;
	ASSERT_OK(fnres_name(res, r, n, &k, file, cfile), "no mount");
	ASSERT_STREQ(file, "[8:1]/a/b/c/f", "its device and the path inside it");
	/* a block device node by its devtmpfs mount */
	n = mk_rec(r, IT_NM_BDEV, loop0, 1);
	r->dev = IT_MKDEV(7, 0);
	r->mnt_id = 24;
	ASSERT_OK(fnres_name(res, r, n, &k, file, cfile), "bdev");
	ASSERT_STREQ(file, "/dev/loop0", "the node");
	ASSERT_TRUE(k.bdev == 1 && k.dev == IT_MKDEV(7, 0), "the node's key");
	{
		struct fnres_stats st;

		fnres_stats(res, &st);
		ASSERT_EQ(st.names, 6, "resolved");
		ASSERT_EQ(st.container, 1, "container paths");
		ASSERT_EQ(st.container_gone, 1, "gone");
		ASSERT_EQ(st.no_mount, 1, "no mount");
	}
out:
	fnres_free(res);
	rm_proc(dir);
	free(r);
}

static void test_entries(void)
{
	static uint8_t buf[2 * RF_FNAME_MAX + RF_CTNAME_MAX];
	const uint8_t *p = buf, *end;
	struct rf_more *more = malloc(sizeof(*more));
	struct rf_state st;
	struct rf_req *q = malloc(sizeof(*q));
	struct rf_dev dev;
	struct rf_cgroup cg;
	struct blame_line bl;
	uint8_t *w = buf, *first;
	char long_path[RF_FILE_LEN + 100];
	int tag;

	if (!ASSERT_TRUE(more && q, "alloc"))
		goto out;
	memset(&st, 0, sizeof(st));
	memset(long_path, 'x', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = '\0';
	w = rf_put_fname(w, 12, IT_MKDEV(7, 3), 0, "/mnt/t/a b", "/data/a b");
	first = w;
	w = rf_put_fname(w, 13, IT_MKDEV(7, 0), 1, long_path, NULL);
	w = rf_put_ctname(w, RF_CT_POD, "0d7e3b1c-1111-2222-3333-444455556666", "web", "prod");
	end = w;
	ASSERT_OK(rf_get_entry(&st, &p, end, &tag, q, &dev, &cg, &bl, more), "fname");
	ASSERT_EQ(tag, RF_E_FNAME, "tag");
	ASSERT_TRUE(more->fname.ino == 12 && more->fname.dev == IT_MKDEV(7, 3) && !more->fname.bdev,
		    "key");
	ASSERT_STREQ(more->fname.file, "/mnt/t/a b", "file");
	ASSERT_STREQ(more->fname.cfile, "/data/a b", "cfile");
	ASSERT_OK(rf_get_entry(&st, &p, end, &tag, q, &dev, &cg, &bl, more), "long fname");
	ASSERT_EQ(strlen(more->fname.file), RF_FILE_LEN - 1, "cut to the entry's room");
	ASSERT_TRUE(more->fname.bdev == 1 && more->fname.cfile[0] == '\0', "bdev, no cfile");
	ASSERT_OK(rf_get_entry(&st, &p, end, &tag, q, &dev, &cg, &bl, more), "ctname");
	ASSERT_TRUE(tag == RF_E_CTNAME && more->ctname.kind == RF_CT_POD, "pod");
	ASSERT_STREQ(more->ctname.name, "web", "name");
	ASSERT_STREQ(more->ctname.ns, "prod", "namespace");
	/* a reader that does not want them skips them whole */
	p = buf;
	ASSERT_OK(rf_get_entry(&st, &p, end, &tag, q, &dev, &cg, &bl, NULL), "skipped");
	ASSERT_EQ(tag, RF_E_FNAME, "skipped's tag");
	/* cut anywhere: an error, never a read past the end */
	for (const uint8_t *cut = buf + 1; cut < first; cut++) {
		p = buf;
		if (!ASSERT_EQ(rf_get_entry(&st, &p, cut, &tag, q, &dev, &cg, &bl, more), -EBADMSG,
			       "cut short"))
			break;
	}
out:
	free(more);
	free(q);
}

static void test_ct_added(void)
{
	static const char id[] = "4f2c0a6b1d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a";
	struct ct_names *n = ct_names_new("/nonexistent-root");
	const char *ns = NULL, *pod = NULL;
	char path[256];
	struct ct_full f;

	if (!ASSERT_TRUE(n != NULL, "new"))
		return;
	ASSERT_TRUE(ct_names_container(n, id) == NULL, "unknown here");
	ASSERT_OK(ct_names_add(n, 0, id, "db", NULL), "add");
	ASSERT_STREQ(ct_names_container(n, id), "db", "the recording's name");
	ASSERT_OK(ct_names_add(n, 0, id, "db2", NULL), "again");
	ASSERT_STREQ(ct_names_container(n, id), "db2", "the newest");
	snprintf(path, sizeof(path), "/machine.slice/libpod-%s.scope", id);
	ct_describe(n, path, &f);
	ASSERT_TRUE(f.container && !strcmp(f.container, "db2"), "described with it");
	ASSERT_OK(ct_names_add(n, 1, "0d7e3b1c-1111-2222-3333-444455556666", "web", "prod"), "pod");
	ASSERT_OK(ct_names_pod(n, "0d7e3b1c-1111-2222-3333-444455556666", &ns, &pod), "pod found");
	ASSERT_TRUE(ns && pod && !strcmp(ns, "prod") && !strcmp(pod, "web"), "namespace, name");
	ct_names_free(n);
}

/* A block request's file: its own, a page-cache write's, the request's by inode or (aio) none. */
static void test_blk_key(void)
{
	struct fn_key req = { .ino = 12, .dev = IT_MKDEV(7, 3) }, k;
	struct it_block_rec b;

	memset(&b, 0, sizeof(b));
	b.ino = 12;
	b.file_dev = IT_MKDEV(7, 3);
	b.flags = IT_F_BDEV;
	ASSERT_TRUE(fn_blk_key(&b, NULL, &k) && k.ino == 12 && k.bdev == 1, "its own");
	b.file_dev = 0;
	b.flags = IT_F_WB;
	b.wb.file_dev = IT_MKDEV(7, 4);
	ASSERT_TRUE(fn_blk_key(&b, NULL, &k) && k.dev == IT_MKDEV(7, 4), "a page-cache write's");
	b.flags = 0;
	ASSERT_TRUE(fn_blk_key(&b, &req, &k) && k.dev == IT_MKDEV(7, 3), "the request's inode");
	ASSERT_FALSE(fn_blk_key(&b, NULL, &k), "no file system known");
	b.ino = 0;
	b.origin = IT_ORIG_SYSCALL;
	ASSERT_TRUE(fn_blk_key(&b, &req, &k) && k.ino == 12, "an aio iocb's: the request's");
	b.origin = IT_ORIG_NONE;
	ASSERT_FALSE(fn_blk_key(&b, &req, &k), "no inode, not the request's");
}

int main(void)
{
	RUN_TEST(test_mountinfo);
	RUN_TEST(test_cache);
	RUN_TEST(test_json);
	RUN_TEST(test_json_hot);
	RUN_TEST(test_rel);
	RUN_TEST(test_resolve);
	RUN_TEST(test_entries);
	RUN_TEST(test_ct_added);
	RUN_TEST(test_blk_key);
	return unit_result();
}
