// SPDX-License-Identifier: GPL-2.0
/*
 * What every output writer shares, below output.c, output_json.c,
 * output_summary.c and output_stack.c (they call down here; nothing here
 * calls them): the device names' small cache, and the JSON stream's batches,
 * written whole lines at a time, with the lines a failed write lost counted.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/jsonw.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "records/output.h"
#include "records/output_int.h"

/* dev_get() of a device not in out->devs: look it up, and keep it if it has a name. */
__attribute__((noinline)) const struct out_dev *out_dev_lookup(struct it_out *out, uint32_t dev,
							       struct out_dev *tmp)
{
	struct out_dev *e;
	const char *name = out->dn ? out->dn->name(out->dn->ctx, dev) :
				     parse_dev_name_cached(dev, out->sysfs_root);
	size_t n;

	parse_fmt_devno(dev, tmp->devno, sizeof(tmp->devno));
	if (!name)
		name = tmp->devno;
	n = strlen(name);
	tmp->dev = dev;
	tmp->name = name;
	if (n >= sizeof(tmp->nbuf) || !strcmp(name, tmp->devno))
		return tmp; /* no name (yet): parse_dev_name_cached() looks again after a while */
	e = &out->devs[out->next_dev];
	out->next_dev = (out->next_dev + 1) % OUT_DEVS;
	e->dev = dev;
	e->uses = OUT_DEV_USES;
	memcpy(e->nbuf, name, n + 1);
	e->name = e->nbuf;
	memcpy(e->devno, tmp->devno, sizeof(e->devno));
	return e;
}

const char *out_dev_name(struct it_out *out, uint32_t dev, struct out_dev *tmp)
{
	return dev ? dev_get(out, dev, tmp)->name : "-";
}

/*
 * A failed JSON write (disk full, a file system gone read-only) does not stop
 * the tracing: the lines of that batch are counted lost, the first failure is
 * said once, later batches are tried again (space may come back), and the
 * exit status says output was lost (out_error). A line the failed write may
 * have cut is ended before the next batch, so the file stays one object a line.
 */
void out_json_write_lost(struct it_out *out, uint32_t lines, int torn)
{
	int err = errno ? errno : EIO;

	if (!out->error)
		it_warn("--json: write failed: %s: tracing goes on, lost lines are counted "
			"(summary: output_lost)",
			strerror(err));
	out->error = -err;
	out->json_lost += lines;
	out->torn |= torn;
	clearerr(out->json);
}

/* Lines of a batch that a write cut after n of its bytes: the ones not ended. */
static uint32_t lines_cut(const char *data, size_t n, uint32_t lines)
{
	uint32_t done = 0;

	for (size_t i = 0; i < n; i++)
		done += data[i] == '\n';
	return lines - done;
}

/*
 * Write the first len bytes of the JSON lines in out->w (whole lines: len is
 * jw_len(), or where the line that failed began; lines of them) and empty it.
 * A batched stream is unbuffered (out_new), so fwrite()'s count is what
 * reached the file and the lines it cut are counted exactly.
 */
void out_json_write(struct it_out *out, size_t len, uint32_t lines)
{
	struct jw *w = &out->w;
	size_t n;

	if (len) {
		errno = 0;
		if (out->torn && fputc('\n', out->json) == EOF) {
			out_json_write_lost(out, lines, 1);
		} else {
			out->torn = 0;
			n = fwrite(jw_data(w), 1, len, out->json);
			if (n != len)
				out_json_write_lost(out, lines_cut(jw_data(w), n, lines), n > 0);
			else if (fputc('\n', out->json) == EOF)
				out_json_write_lost(out, 1, 1);
		}
		out->json_started = 1;
	}
	jw_reset(w);
	out->batch_lines = 0;
}

/* After a line was added at mark: write the batch if it is due; now: write it anyway. */
void out_json_line_done(struct it_out *out, size_t mark, int now)
{
	struct jw *w = &out->w;

	if (jw_error(w)) {
		out->error = -EIO;
		out->json_lost++;
		out_json_write(out, mark, out->batch_lines); /* the lines before this one */
		return;
	}
	out->batch_lines++;
	if (now || !out->batch || !out->json_started || jw_len(w) >= OUT_BATCH_BYTES)
		out_json_write(out, jw_len(w), out->batch_lines);
}

/* fflush() the JSON stream (a buffered one: a terminal, a memory stream). */
void out_json_fflush(struct it_out *out)
{
	errno = 0;
	if (fflush(out->json))
		out_json_write_lost(out, 0, 1);
}
