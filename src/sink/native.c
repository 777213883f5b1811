// SPDX-License-Identifier: GPL-2.0
/*
 * native: ClickHouse Native blocks, built and read (see native.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sink/native.h"

static const char *const nat_names[NAT_NR_TYPES] = {
	[NAT_U8] = "UInt8",  [NAT_U16] = "UInt16", [NAT_U32] = "UInt32", [NAT_U64] = "UInt64",
	[NAT_I32] = "Int32", [NAT_I64] = "Int64",  [NAT_STR] = "String",
};
static const uint8_t nat_width[NAT_NR_TYPES] = {
	[NAT_U8] = 1, [NAT_U16] = 2, [NAT_U32] = 4, [NAT_U64] = 8, [NAT_I32] = 4, [NAT_I64] = 8,
};

const char *nat_type_name(int t)
{
	return t >= 0 && t < NAT_NR_TYPES ? nat_names[t] : "?";
}

int nat_type_of(const char *name, size_t len)
{
	for (int t = 0; t < NAT_NR_TYPES; t++)
		if (strlen(nat_names[t]) == len && !memcmp(nat_names[t], name, len))
			return t;
	return -1;
}

int nat_buf_room(struct nat_buf *buf, size_t n)
{
	size_t cap = buf->cap ? buf->cap : 256;
	uint8_t *p;

	if (buf->len + n <= buf->cap)
		return 0;
	while (cap < buf->len + n)
		cap *= 2;
	p = realloc(buf->p, cap);
	if (!p)
		return -ENOMEM;
	buf->p = p;
	buf->cap = cap;
	return 0;
}

void nat_buf_free(struct nat_buf *buf)
{
	free(buf->p);
	memset(buf, 0, sizeof(*buf));
}

static int buf_put(struct nat_buf *buf, const void *v, size_t n)
{
	if (!n)
		return 0;
	if (nat_buf_room(buf, n))
		return -ENOMEM;
	memcpy(buf->p + buf->len, v, n);
	buf->len += n;
	return 0;
}

static int buf_varint(struct nat_buf *buf, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		b[n++] |= v ? 0x80 : 0;
	} while (v);
	return buf_put(buf, b, n);
}

static int buf_str(struct nat_buf *buf, const char *s, size_t n)
{
	return buf_varint(buf, n) ?: buf_put(buf, s, n);
}

int nat_block_init(struct nat_block *b, const struct nat_colspec *spec, int nr_cols)
{
	memset(b, 0, sizeof(*b));
	b->spec = spec;
	b->nr_cols = nr_cols;
	b->cols = calloc((size_t)nr_cols, sizeof(*b->cols));
	return b->cols ? 0 : -ENOMEM;
}

void nat_block_free(struct nat_block *b)
{
	for (int i = 0; b->cols && i < b->nr_cols; i++)
		nat_buf_free(&b->cols[i]);
	for (int g = 0; g < NAT_MAX_GROUPS; g++)
		nat_buf_free(&b->offs[g]);
	free(b->cols);
	memset(b, 0, sizeof(*b));
}

void nat_block_reset(struct nat_block *b)
{
	for (int i = 0; i < b->nr_cols; i++)
		b->cols[i].len = b->cols[i].nr = 0;
	for (int g = 0; g < NAT_MAX_GROUPS; g++) {
		b->offs[g].len = 0;
		b->elems[g] = b->at[g] = 0;
	}
	b->rows = 0;
	b->oom = 0;
}

size_t nat_block_bytes(const struct nat_block *b)
{
	size_t n = 0;

	for (int i = 0; i < b->nr_cols; i++)
		n += b->cols[i].len;
	for (int g = 1; g < NAT_MAX_GROUPS; g++)
		n += b->offs[g].len;
	return n;
}

/*
 * Column col's value v (n bytes) or string s (n bytes: v unused) at the value
 * being put, after the defaults not written yet: zeros (an empty string is its
 * length byte, 0).
 */
static void put_after_defaults(struct nat_block *b, int col, uint64_t v, const char *s, size_t n)
{
	struct nat_buf *c = &b->cols[col];
	uint64_t at = b->at[b->spec[col].group];
	size_t pad, w = b->spec[col].type == NAT_STR ? 1 : n;

	if (at < c->nr) { /* put twice, or a row's element before its nat_elem() */
		b->oom = 1;
		return;
	}
	pad = (size_t)(at - c->nr) * w;
	if (nat_buf_room(c, pad + 10 + n)) {
		b->oom = 1;
		return;
	}
	memset(c->p + c->len, 0, pad);
	c->len += pad;
	c->nr = at + 1;
	if (b->spec[col].type != NAT_STR) {
		memcpy(c->p + c->len, &v, 8); /* room for 8: nat_buf_room above */
		c->len += n;
		return;
	}
	if (buf_str(c, s, n))
		b->oom = 1;
}

void nat_put_slow(struct nat_block *b, int col, uint64_t v, size_t n)
{
	put_after_defaults(b, col, v, NULL, n);
}

void nat_strn_slow(struct nat_block *b, int col, const char *s, size_t n)
{
	put_after_defaults(b, col, 0, s, n);
}

void nat_row_end(struct nat_block *b, const int *nr_elems)
{
	for (int g = 1; g < NAT_MAX_GROUPS; g++) {
		b->elems[g] += nr_elems ? (uint64_t)nr_elems[g] : 0;
		b->at[g] = b->elems[g];
		if (buf_put(&b->offs[g], &b->elems[g], sizeof(b->elems[g])))
			b->oom = 1;
	}
	b->at[0] = ++b->rows;
}

/* "Array(UInt64)" or "UInt64" */
static int write_type(struct nat_buf *out, const struct nat_colspec *c)
{
	const char *t = nat_type_name(c->type);
	char a[32];
	size_t n = strlen(t);

	if (!c->group)
		return buf_str(out, t, n);
	memcpy(a, "Array(", 6);
	memcpy(a + 6, t, n);
	a[6 + n] = ')';
	return buf_str(out, a, n + 7);
}

/* Column i's values the block holds (its group's elements), and the bytes of its defaults left. */
static uint64_t col_values(const struct nat_block *b, int i, size_t *pad)
{
	const struct nat_colspec *c = &b->spec[i];
	uint64_t all = c->group ? b->elems[c->group] : b->rows;
	size_t w = c->type == NAT_STR ? 1 : nat_width[c->type];

	*pad = all > b->cols[i].nr ? (size_t)(all - b->cols[i].nr) * w : 0;
	return all;
}

/*
 * Does column i's value change from one value to the next (in more than 3 of
 * 4 adjacent pairs of a sample)? A compressor pays such a column a sequence a
 * value and gains little on it: times, offsets, ids. Strings: no.
 */
#define NAT_PAIRS 64
static int col_changes(const struct nat_block *b, int i)
{
	const struct nat_buf *c = &b->cols[i];
	size_t w = nat_width[b->spec[i].type];
	uint64_t pairs, step, diff = 0;

	if (b->spec[i].type == NAT_STR || c->nr < 2)
		return 0;
	pairs = c->nr - 1 < NAT_PAIRS ? c->nr - 1 : NAT_PAIRS;
	step = (c->nr - 1) / pairs;
	for (uint64_t k = 0; k < pairs; k++) {
		const uint8_t *v = c->p + k * step * w;

		diff += memcmp(v, v + w, w) != 0;
	}
	return diff * 4 > pairs * 3;
}

/* Column i: its name, type, offsets (an array) and values, the defaults after its last one. */
static int write_col(const struct nat_block *b, int i, struct nat_buf *out)
{
	const struct nat_colspec *c = &b->spec[i];
	size_t pad;
	int err;

	col_values(b, i, &pad);
	err = buf_str(out, c->name, strlen(c->name)) ?: write_type(out, c);
	if (!err && c->group)
		err = buf_put(out, b->offs[c->group].p, b->offs[c->group].len);
	if (!err)
		err = buf_put(out, b->cols[i].p, b->cols[i].len);
	if (!err && pad && !(err = nat_buf_room(out, pad))) {
		memset(out->p + out->len, 0, pad);
		out->len += pad;
	}
	return err;
}

int nat_block_write(const struct nat_block *b, struct nat_buf *out, size_t *changing)
{
	size_t size = 20, pad;
	uint64_t plain[(NAT_MAX_COLS + 63) / 64] = { 0 };
	int n = 0, err;

	if (b->nr_cols > NAT_MAX_COLS)
		return -EINVAL;
	for (int i = 0; i < b->nr_cols; i++) {
		if (!b->cols[i].nr)
			continue;
		if (col_values(b, i, &pad) < b->cols[i].nr)
			return -EINVAL; /* more values than rows: put wrong */
		n++;
		size += b->cols[i].len + pad + 64 + strlen(b->spec[i].name) +
			(b->spec[i].group ? b->offs[b->spec[i].group].len : 0);
		if (changing && col_changes(b, i))
			plain[i / 64] |= 1ull << (i % 64);
	}
	/* one allocation: no copy of what was written as the buffer grows */
	err = nat_buf_room(out, size) ?: buf_varint(out, (uint64_t)n) ?: buf_varint(out, b->rows);
	/* the columns that change from value to value last: after *changing */
	for (int pass = 0; pass < 2; pass++) {
		if (changing && pass)
			*changing = out->len;
		for (int i = 0; !err && i < b->nr_cols; i++)
			if (b->cols[i].nr && !!(plain[i / 64] & (1ull << (i % 64))) == pass)
				err = write_col(b, i, out);
	}
	return err;
}

/* ---- reading ---- */

static int get_varint(const uint8_t *buf, size_t len, size_t *pos, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (*pos >= len)
			return -EAGAIN;
		*v |= (uint64_t)(buf[*pos] & 0x7f) << shift;
		if (!(buf[(*pos)++] & 0x80))
			return 0;
	}
	return -EBADMSG;
}

static int get_str(const uint8_t *buf, size_t len, size_t *pos, const char **s, size_t *n)
{
	uint64_t l;
	int err = get_varint(buf, len, pos, &l);

	if (err)
		return err;
	if (l > len - *pos)
		return -EAGAIN;
	*s = (const char *)buf + *pos;
	*n = (size_t)l;
	*pos += (size_t)l;
	return 0;
}

/* "Array(T)" or "T" into c's type and array flag. */
static void parse_type(struct nat_rcol *c, const char *t, size_t n)
{
	c->array = n > 7 && !memcmp(t, "Array(", 6) && t[n - 1] == ')';
	if (c->array) {
		t += 6;
		n -= 7;
	}
	c->type = nat_type_of(t, n);
}

/* The strings of a String column: their starts (nr of them). */
static int read_strs(const uint8_t *buf, size_t len, size_t *pos, struct nat_rcol *c)
{
	const char *s;
	size_t n;

	if (c->nr > len - *pos) /* each string takes a byte at least */
		return -EAGAIN;
	c->strs = calloc(c->nr ? (size_t)c->nr : 1, sizeof(*c->strs));
	if (!c->strs)
		return -ENOMEM;
	for (uint64_t i = 0; i < c->nr; i++) {
		int err;

		c->strs[i] = buf + *pos;
		err = get_str(buf, len, pos, &s, &n);
		if (err)
			return err;
	}
	return 0;
}

/* One column's data: its offsets (arrays) and values. */
static int read_data(const uint8_t *buf, size_t len, size_t *pos, uint64_t rows, struct nat_rcol *c)
{
	uint64_t w;

	c->nr = rows;
	if (c->array) {
		if (rows > (len - *pos) / 8)
			return -EAGAIN;
		c->offs = buf + *pos;
		*pos += (size_t)rows * 8;
		c->nr = 0;
		if (rows)
			memcpy(&c->nr, c->offs + (rows - 1) * 8, 8);
		for (uint64_t r = 0; r < rows; r++) {
			uint64_t first, n;

			if (nat_get_elems(c, r, &first, &n))
				return -EBADMSG;
		}
	}
	if (c->type == NAT_STR)
		return read_strs(buf, len, pos, c);
	w = nat_width[c->type];
	if (c->nr > (len - *pos) / w)
		return -EAGAIN;
	c->data = buf + *pos;
	*pos += (size_t)(c->nr * w);
	return 0;
}

int nat_read_block(const uint8_t *buf, size_t len, size_t *pos, struct nat_rblock *rb)
{
	uint64_t ncols, rows;
	const char *t;
	size_t tn;
	int err;

	memset(rb, 0, sizeof(*rb));
	err = get_varint(buf, len, pos, &ncols) ?: get_varint(buf, len, pos, &rows);
	if (err)
		return err;
	if (ncols > 4096)
		return -EBADMSG;
	rb->rows = rows;
	rb->cols = calloc(ncols ? (size_t)ncols : 1, sizeof(*rb->cols));
	if (!rb->cols)
		return -ENOMEM;
	for (uint64_t i = 0; i < ncols; i++) {
		struct nat_rcol *c = &rb->cols[rb->nr_cols++];

		err = get_str(buf, len, pos, &c->name, &c->name_len) ?:
			      get_str(buf, len, pos, &t, &tn);
		if (err)
			return err;
		parse_type(c, t, tn);
		if (c->type < 0)
			return -EBADMSG; /* a type we cannot skip: its width is unknown */
		err = read_data(buf, len, pos, rows, c);
		if (err)
			return err;
	}
	return 0;
}

void nat_rblock_free(struct nat_rblock *rb)
{
	for (int i = 0; rb->cols && i < rb->nr_cols; i++)
		free(rb->cols[i].strs);
	free(rb->cols);
	memset(rb, 0, sizeof(*rb));
}

const struct nat_rcol *nat_rcol(const struct nat_rblock *rb, const char *name)
{
	size_t n = strlen(name);

	for (int i = 0; i < rb->nr_cols; i++)
		if (rb->cols[i].name_len == n && !memcmp(rb->cols[i].name, name, n))
			return &rb->cols[i];
	return NULL;
}

uint64_t nat_get(const struct nat_rcol *c, uint64_t i)
{
	uint64_t v = 0;

	if (!c || i >= c->nr || c->type == NAT_STR)
		return 0;
	switch (c->type) {
	case NAT_I32: {
		int32_t s;

		memcpy(&s, c->data + i * 4, 4);
		return (uint64_t)(int64_t)s;
	}
	default:
		memcpy(&v, c->data + i * nat_width[c->type], nat_width[c->type]);
		return v;
	}
}

const char *nat_get_str(const struct nat_rcol *c, uint64_t i, size_t *len)
{
	const uint8_t *p;
	uint64_t n = 0;

	*len = 0;
	if (!c || i >= c->nr || c->type != NAT_STR)
		return "";
	p = c->strs[i];
	for (int shift = 0; shift < 64; shift += 7) {
		n |= (uint64_t)(*p & 0x7f) << shift;
		if (!(*p++ & 0x80))
			break;
	}
	*len = (size_t)n;
	return (const char *)p;
}

int nat_get_elems(const struct nat_rcol *c, uint64_t r, uint64_t *first, uint64_t *n)
{
	uint64_t a = 0, b;

	if (!c || !c->array)
		return -EBADMSG;
	if (r)
		memcpy(&a, c->offs + (r - 1) * 8, 8);
	memcpy(&b, c->offs + r * 8, 8);
	if (b < a || b > c->nr)
		return -EBADMSG;
	*first = a;
	*n = b - a;
	return 0;
}
