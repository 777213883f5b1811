/* SPDX-License-Identifier: GPL-2.0 */
/*
 * native: ClickHouse's Native format, the columnar block an HTTP INSERT ...
 * FORMAT Native takes and a SELECT ... FORMAT Native returns (the same bytes
 * since 2016: Debian's 18.16 and current releases; docs/fleet.md, "Wire").
 *
 *   block  := varint(columns) varint(rows) column*
 *   column := string(name) string(type) data
 *   data   := rows fixed-width little-endian values | rows strings (varint length, bytes)
 *           | Array(T): rows cumulative UInt64 offsets, then the elements' data
 *
 * A builder appends one value per column per row (the columns of a Nested
 * group, "block.*", take a row's elements and share its offsets); a reader
 * walks a stream of blocks and finds columns by name. Pure user space: libc.
 */
#ifndef IT_SINK_NATIVE_H
#define IT_SINK_NATIVE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum nat_type { NAT_U8, NAT_U16, NAT_U32, NAT_U64, NAT_I32, NAT_I64, NAT_STR, NAT_NR_TYPES };

#define NAT_MAX_GROUPS 4 /* array groups of a table: group 0 is the scalars */
#define NAT_MAX_COLS 256 /* columns of a table, at most */

/* A column: its name and type, and its array group (0: a scalar column). */
struct nat_colspec {
	const char *name;
	uint8_t type; /* enum nat_type */
	uint8_t group;
};

struct nat_buf {
	uint8_t *p;
	size_t len, cap;
	uint64_t nr; /* a block's column: the values written (to the last one not the default) */
};

/*
 * A block being built over a table of columns (spec is not copied: static).
 * A column stores its values up to its last one that is not the default (0,
 * ""): a default costs a test, and is written only when a later value of its
 * column comes (the zeros before it) or the block is written out. A column
 * of defaults only is left out of the block.
 */
struct nat_block {
	const struct nat_colspec *spec;
	int nr_cols;
	struct nat_buf *cols;
	struct nat_buf offs[NAT_MAX_GROUPS]; /* each group's cumulative offsets, per row */
	uint64_t elems[NAT_MAX_GROUPS]; /* each group's elements so far */
	uint64_t at[NAT_MAX_GROUPS]; /* the value being put: group 0 the row, else its element */
	uint64_t rows;
	int oom; /* a value could not be kept: the block is unusable */
};

int nat_block_init(struct nat_block *b, const struct nat_colspec *spec, int nr_cols);
void nat_block_free(struct nat_block *b);
/* Forget the rows, keep the memory. */
void nat_block_reset(struct nat_block *b);
/* Bytes the block holds now (what nat_block_write() will write, about: not the defaults). */
size_t nat_block_bytes(const struct nat_block *b);

/* Grow buf to hold n more bytes; 0 or -ENOMEM. */
int nat_buf_room(struct nat_buf *buf, size_t n);
void nat_buf_free(struct nat_buf *buf);

/* A value after defaults not written yet, or past the column's memory. */
void nat_put_slow(struct nat_block *b, int col, uint64_t v, size_t n);

static inline void nat_put(struct nat_block *b, int col, uint64_t v, size_t n)
{
	struct nat_buf *c = &b->cols[col];
	uint64_t at;

	if (!v)
		return; /* the default: written when needed (nat_block_write) */
	at = b->at[b->spec[col].group];
	if (c->nr != at || c->len + 8 > c->cap) {
		nat_put_slow(b, col, v, n);
		return;
	}
	memcpy(c->p + c->len, &v, 8); /* little-endian: the n low bytes count */
	c->len += n;
	c->nr = at + 1;
}

/* One value of column col (its type's width: the caller picks the matching call). */
static inline void nat_u8(struct nat_block *b, int col, uint8_t v)
{
	nat_put(b, col, v, 1);
}
static inline void nat_u16(struct nat_block *b, int col, uint16_t v)
{
	nat_put(b, col, v, 2);
}
static inline void nat_u32(struct nat_block *b, int col, uint32_t v)
{
	nat_put(b, col, v, 4);
}
static inline void nat_u64(struct nat_block *b, int col, uint64_t v)
{
	nat_put(b, col, v, 8);
}
/* A string of n bytes; nat_str(): to its NUL (NULL: ""). */
void nat_strn_slow(struct nat_block *b, int col, const char *s, size_t n);
static inline void nat_strn(struct nat_block *b, int col, const char *s, size_t n)
{
	struct nat_buf *c = &b->cols[col];
	uint64_t at;

	if (!n)
		return; /* "": as a 0 */
	at = b->at[b->spec[col].group];
	if (n >= 0x80 || c->nr != at || c->len + n + 1 > c->cap) {
		nat_strn_slow(b, col, s, n);
		return;
	}
	c->p[c->len++] = (uint8_t)n;
	memcpy(c->p + c->len, s, n);
	c->len += n;
	c->nr = at + 1;
}
static inline void nat_str(struct nat_block *b, int col, const char *s)
{
	if (s && *s)
		nat_strn(b, col, s, strlen(s));
}

/*
 * Element i of this row's elements of array group g is put next (its
 * columns' values): before each element's values.
 */
static inline void nat_elem(struct nat_block *b, int g, int i)
{
	b->at[g] = b->elems[g] + (uint64_t)i;
}

/*
 * The end of a row: each array group's offset (its elements so far). Each
 * group's columns had the same number of elements (nr: the row's elements of
 * group g, added to it), each element put after its nat_elem().
 */
void nat_row_end(struct nat_block *b, const int *nr_elems);

/*
 * The block in Native bytes appended to out; 0, -ENOMEM, or -EINVAL (values
 * put wrong). A column whose every value is the default (0, "") is left out:
 * the server fills it with its default (a Nested one with as many elements as
 * its group's others), and a reader finds it missing (nat_rcol() NULL:
 * nat_get() 0). With changing, the columns whose values change from one to
 * the next (times, offsets, ids: sampled) come last, from *changing (out's
 * length then) on: a compressor gains little on them for its most work.
 */
int nat_block_write(const struct nat_block *b, struct nat_buf *out, size_t *changing);

/* ---- reading ---- */

/* One column of a block read back. */
struct nat_rcol {
	const char *name; /* into the input: not NUL-terminated, name_len bytes */
	size_t name_len;
	int type; /* enum nat_type of the element, -1: a type this reader does not know */
	int array; /* Array(T) */
	const uint8_t *offs; /* array: rows UInt64 offsets */
	const uint8_t *data; /* fixed width: the values; strings: see strs */
	uint64_t nr; /* values (elements of an array) */
	const uint8_t **strs; /* NAT_STR: each value's start (its length before it) */
};

struct nat_rblock {
	uint64_t rows;
	int nr_cols;
	struct nat_rcol *cols;
};

/*
 * Parse the block at buf[*pos..len) and move *pos past it. 0; -EAGAIN when
 * the block goes on past len (a stream not read to its end yet); -EBADMSG
 * for anything that is not a well-formed block (nothing is read past len);
 * -ENOMEM.
 * The block points into buf; free it with nat_rblock_free().
 */
int nat_read_block(const uint8_t *buf, size_t len, size_t *pos, struct nat_rblock *rb);
void nat_rblock_free(struct nat_rblock *rb);
/* The column named name (NUL-terminated), NULL when the block has none. */
const struct nat_rcol *nat_rcol(const struct nat_rblock *rb, const char *name);
/* Value i of a fixed-width column as u64 (signed ones sign-extended); 0 past the end. */
uint64_t nat_get(const struct nat_rcol *c, uint64_t i);
/* String value i (not NUL-terminated): its bytes and length; "" past the end. */
const char *nat_get_str(const struct nat_rcol *c, uint64_t i, size_t *len);
/* Array row r's elements: [*first, *first + *n). 0, or -EBADMSG. */
int nat_get_elems(const struct nat_rcol *c, uint64_t r, uint64_t *first, uint64_t *n);

/* The type name of t ("UInt64"), and t of a name; -1: not one of ours. */
const char *nat_type_name(int t);
int nat_type_of(const char *name, size_t len);

#endif /* IT_SINK_NATIVE_H */
