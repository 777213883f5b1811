/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fuzz.h: helpers shared by the libFuzzer targets (tests/fuzz/fuzz_<name>.c,
 * docs/testing.md "Fuzzing"). Each target defines LLVMFuzzerTestOneInput() and
 * feeds the input to one reader of untrusted bytes; a sanitizer report, a leak,
 * an abort() or a broken promise the harness checks (FUZZ_CHECK) is a crash.
 */
#ifndef IT_FUZZ_H
#define IT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A promise of the code under test that the input broke: report and crash. */
#define FUZZ_CHECK(cond, ...)                                                                  \
	do {                                                                                   \
		if (!(cond)) {                                                                 \
			fprintf(stderr, "fuzz: %s:%d: check failed: %s: ", __FILE__, __LINE__, \
				#cond);                                                        \
			fprintf(stderr, __VA_ARGS__);                                          \
			fputc('\n', stderr);                                                   \
			abort();                                                               \
		}                                                                              \
	} while (0)

/* The harness itself cannot run (no memory, no fd): not a finding, stop. */
#define FUZZ_SETUP(cond, what)                        \
	do {                                          \
		if (!(cond)) {                        \
			perror("fuzz: setup: " what); \
			exit(1);                      \
		}                                     \
	} while (0)

/*
 * A file holding exactly data[0..size), for readers that take a path: one memfd
 * per process, rewritten for each input. Returns its /proc/self/fd path.
 */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
	static char path[64];
	static int fd = -1;

	if (fd < 0) {
		fd = memfd_create("fuzz-input", MFD_CLOEXEC);
		FUZZ_SETUP(fd >= 0, "memfd_create");
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	FUZZ_SETUP(!ftruncate(fd, 0), "ftruncate");
	FUZZ_SETUP(pwrite(fd, data, size, 0) == (ssize_t)size, "pwrite");
	return path;
}

/*
 * Split data into at most max - 1 NUL-terminated words at any byte of seps
 * (a NUL byte always separates), into one malloc'd buffer: words[0..n) point
 * into *buf, words[n] = NULL. Empty words are kept (an empty argument is an
 * input too), but for the one after a final separator (a seed file's last newline);
 * no input, no word.
 * Returns n; free(*buf) after use.
 */
static inline int fuzz_split(const uint8_t *data, size_t size, const char *seps, char **words,
			     int max, char **buf)
{
	char *b = malloc(size + 1);
	size_t i, start = 0, end = size; /* the last word ends at end */
	int n = 0;

	FUZZ_SETUP(b, "malloc");
	memcpy(b, data, size);
	b[size] = '\0';
	if (size && (!b[size - 1] || strchr(seps, b[size - 1])))
		end = size - 1;
	for (i = 0; size && i <= end && n < max - 1; i++) {
		if (i < end && b[i] && !strchr(seps, b[i]))
			continue;
		b[i] = '\0';
		words[n++] = b + start;
		start = i + 1;
	}
	words[n] = NULL;
	*buf = b;
	return n;
}

#endif /* IT_FUZZ_H */
