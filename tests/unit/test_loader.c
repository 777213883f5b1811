// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for src/load/hooktab.c's hook table against the BPF objects:
 * opened with libbpf, never loaded (no root, no bpf() calls).
 */
#include <bpf/libbpf.h>

#include "unit.h"
#include "iotracer.skel.h"
#include "iotracer_compat.skel.h"
#include "load/loader.h"

/* The object in the skeleton's bytes, opened only. */
static void check_bytes(const void *bytes, size_t len, const char *what)
{
	struct bpf_object *obj = bpf_object__open_mem(bytes, len, NULL);
	char why[160] = "";
	int nr = 0;

	if (!ASSERT_TRUE(obj != NULL, what))
		return;
	ASSERT_OK(it_loader_check_hooks(obj, why, sizeof(why)), why);
	/* the check walked something: the object has its programs */
	for (struct bpf_program *p = bpf_object__next_program(obj, NULL); p;
	     p = bpf_object__next_program(obj, p))
		nr++;
	ASSERT_TRUE(nr > 20, what);
	bpf_object__close(obj);
}

/* Every name of the table is a program of both objects, every program one hook's. */
static void test_loader_hooks_match_object(void)
{
	size_t len;
	const void *bytes = iotracer_bpf__elf_bytes(&len);

	check_bytes(bytes, len, "main object");
	bytes = iotracer_compat_bpf__elf_bytes(&len);
	check_bytes(bytes, len, "compat object");
}

/* The real object plus one program that no hook names: refused, by name. */
static void test_loader_stray_program(void)
{
	static const char *const paths[] = { "build/unit/stray.linked.o",
					     "../../build/unit/stray.linked.o" };
	struct bpf_object *obj = NULL;
	char why[160] = "";

	for (size_t i = 0; i < 2 && !obj; i++)
		obj = bpf_object__open_file(paths[i], NULL);
	if (!ASSERT_TRUE(obj != NULL, "build/unit/stray.linked.o (run from the repo root)"))
		return;
	ASSERT_EQ(it_loader_check_hooks(obj, why, sizeof(why)), -EINVAL, "refused");
	ASSERT_STREQ(why, "program raw_stray is in 0 hooks of the table (expected 1)", "why");
	bpf_object__close(obj);
}

int main(void)
{
	libbpf_set_print(NULL);
	RUN_TEST(test_loader_hooks_match_object);
	RUN_TEST(test_loader_stray_program);
	return unit_result();
}
