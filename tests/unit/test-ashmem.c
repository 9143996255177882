/* SPDX-License-Identifier: MIT */
/*
 * test-ashmem.c - the ashmem driver's rules (core/ashmem_rules.c): request
 * decoding in both ABIs, PIN/UNPIN/GET_PIN_STATUS arguments, the prot
 * mask, what mmap may ask for, name and size after the first mmap, names,
 * and where the state sits in a file record.
 */
#include "harness.h"

#include "core/ashmem_rules.h"

#include <linux/ashmem.h>
#include <stddef.h>
#include <sys/mman.h>

#define PAGE 4096u

_Static_assert(sizeof(struct vl_ashmem) <= VL_PATH_MAX, "ashmem state fits where a path would");
_Static_assert(offsetof(struct vl_file, ash) == sizeof(struct vl_file_hdr), "state follows the header");

/* ---- the numbers ------------------------------------------------------- */

START_TEST(test_header_numbers)
{
	/* the installed header agrees with the driver's ABI (64-bit) */
	ck_assert_uint_eq(__ASHMEMIOC, 0x77);
	ck_assert_uint_eq(ASHMEM_NAME_LEN, 256);
	ck_assert_uint_eq(ASHMEM_SET_NAME, 0x41007701u);
	ck_assert_uint_eq(ASHMEM_GET_NAME, 0x81007702u);
	ck_assert_uint_eq(ASHMEM_SET_SIZE, 0x40087703u);
	ck_assert_uint_eq(ASHMEM_GET_SIZE, 0x7704u);
	ck_assert_uint_eq(ASHMEM_SET_PROT_MASK, 0x40087705u);
	ck_assert_uint_eq(ASHMEM_GET_PROT_MASK, 0x7706u);
	ck_assert_uint_eq(ASHMEM_PIN, 0x40087707u);
	ck_assert_uint_eq(ASHMEM_UNPIN, 0x40087708u);
	ck_assert_uint_eq(ASHMEM_GET_PIN_STATUS, 0x7709u);
	ck_assert_uint_eq(ASHMEM_PURGE_ALL_CACHES, 0x770au);
	ck_assert_uint_eq(ASHMEM_GET_FILE_ID, 0x8008770bu);
	ck_assert_uint_eq(sizeof(struct ashmem_pin), 8);
	ck_assert_int_eq(ASHMEM_NOT_PURGED, 0);
	ck_assert_int_eq(ASHMEM_WAS_PURGED, 1);
	ck_assert_int_eq(ASHMEM_IS_UNPINNED, 0);
	ck_assert_int_eq(ASHMEM_IS_PINNED, 1);
	ck_assert_str_eq(ASHMEM_NAME_DEF, "dev/ashmem");
}
END_TEST

static const struct {
	unsigned long req;
	enum vl_ash_cmd cmd;
	unsigned compat, argsize;
} decoded[] = {
	{ 0x41007701u, VL_ASH_SET_NAME, 0, 256 },
	{ 0x81007702u, VL_ASH_GET_NAME, 0, 256 },
	{ 0x40087703u, VL_ASH_SET_SIZE, 0, 8 },
	{ 0x40047703u, VL_ASH_SET_SIZE, 1, 4 },
	{ 0x7704u, VL_ASH_GET_SIZE, 0, 0 },
	{ 0x40087705u, VL_ASH_SET_PROT_MASK, 0, 8 },
	{ 0x40047705u, VL_ASH_SET_PROT_MASK, 1, 4 },
	{ 0x7706u, VL_ASH_GET_PROT_MASK, 0, 0 },
	{ 0x40087707u, VL_ASH_PIN, 0, 8 },
	{ 0x40087708u, VL_ASH_UNPIN, 0, 8 },
	{ 0x7709u, VL_ASH_GET_PIN_STATUS, 0, 8 },
	{ 0x770au, VL_ASH_PURGE_ALL_CACHES, 0, 0 },
	{ 0x8008770bu, VL_ASH_GET_FILE_ID, 0, 8 },
	{ 0x8004770bu, VL_ASH_GET_FILE_ID, 1, 4 },
};

START_TEST(test_decode_both_abis)
{
	for (size_t i = 0; i < sizeof(decoded) / sizeof(decoded[0]); i++) {
		struct vl_ash_req q;

		ck_assert_msg(vl_ash_type(decoded[i].req), "0x%lx is of type 0x77", decoded[i].req);
		ck_assert_int_eq(vl_ash_decode(decoded[i].req, &q), decoded[i].cmd);
		ck_assert_int_eq(q.cmd, decoded[i].cmd);
		ck_assert_uint_eq(q.compat, decoded[i].compat);
		ck_assert_uint_eq(q.argsize, decoded[i].argsize);
		/* glibc passes an unsigned long: the kernel sees 32 bits */
		ck_assert_int_eq(vl_ash_decode(decoded[i].req | 0xffffffff00000000ul, &q),
				 decoded[i].cmd);
	}
}
END_TEST

START_TEST(test_decode_others)
{
	struct vl_ash_req q;

	/* another driver's type: not ours at all */
	ck_assert(!vl_ash_type(0x5401)); /* TCGETS */
	ck_assert_int_eq(vl_ash_decode(0x5401, &q), VL_ASH_NOT_OURS);
	ck_assert_int_eq(vl_ash_decode(0x40087603u, &q), VL_ASH_NOT_OURS);
	/* type 0x77 but no such request: ENOTTY */
	ck_assert_int_eq(vl_ash_decode(0x770cu, &q), VL_ASH_UNKNOWN);
	ck_assert_int_eq(vl_ash_decode(0x7700u, &q), VL_ASH_UNKNOWN);
	/* a right number with a wrong size or direction is another request */
	ck_assert_int_eq(vl_ash_decode(0x40107703u, &q), VL_ASH_UNKNOWN);
	ck_assert_int_eq(vl_ash_decode(0x80087703u, &q), VL_ASH_UNKNOWN);
	ck_assert_int_eq(vl_ash_decode(0x7701u, &q), VL_ASH_UNKNOWN);
	ck_assert_int_eq(vl_ash_decode(0x40087709u, &q), VL_ASH_UNKNOWN);
}
END_TEST

START_TEST(test_arg_widths)
{
	struct vl_ash_req q;

	vl_ash_decode(0x40087703u, &q);
	ck_assert_uint_eq(vl_ash_arg_value(&q, 0x100000000ul), 0x100000000ull);
	vl_ash_decode(0x40047703u, &q);
	ck_assert_uint_eq(vl_ash_arg_value(&q, 0x100001000ul), 0x1000u);
	vl_ash_decode(0x40047705u, &q);
	ck_assert_uint_eq(vl_ash_arg_value(&q, 0xffffffff00000003ul), 3u);
}
END_TEST

/* ---- PIN, UNPIN, GET_PIN_STATUS ------------------------------------------ */

static int pin(uint32_t off, uint32_t len, uint64_t size, uint64_t *s, uint64_t *e)
{
	*s = *e = 0xdead;
	return vl_ash_pin_range(off, len, size, PAGE, s, e);
}

START_TEST(test_pin_aligned)
{
	uint64_t s, e;

	ck_assert_int_eq(pin(0, PAGE, 16 * PAGE, &s, &e), 0);
	ck_assert_uint_eq(s, 0);
	ck_assert_uint_eq(e, PAGE);
	ck_assert_int_eq(pin(4 * PAGE, 12 * PAGE, 16 * PAGE, &s, &e), 0);
	ck_assert_uint_eq(s, 4 * PAGE);
	ck_assert_uint_eq(e, 16 * PAGE);
}
END_TEST

START_TEST(test_pin_unaligned)
{
	uint64_t s, e;

	ck_assert_int_eq(pin(1, PAGE, 16 * PAGE, &s, &e), -EINVAL);
	ck_assert_int_eq(pin(0, PAGE + 1, 16 * PAGE, &s, &e), -EINVAL);
	ck_assert_int_eq(pin(PAGE / 2, 0, 16 * PAGE, &s, &e), -EINVAL);
	ck_assert_uint_eq(s, 0xdead); /* nothing said on error */
}
END_TEST

START_TEST(test_pin_len0_to_end)
{
	uint64_t s, e;

	ck_assert_int_eq(pin(0, 0, 16 * PAGE, &s, &e), 0);
	ck_assert_uint_eq(s, 0);
	ck_assert_uint_eq(e, 16 * PAGE);
	ck_assert_int_eq(pin(3 * PAGE, 0, 16 * PAGE, &s, &e), 0);
	ck_assert_uint_eq(s, 3 * PAGE);
	ck_assert_uint_eq(e, 16 * PAGE);
	/* the end is the page-rounded size */
	ck_assert_int_eq(pin(0, 0, 5 * PAGE + 1, &s, &e), 0);
	ck_assert_uint_eq(e, 6 * PAGE);
	/* from the very end: an empty range */
	ck_assert_int_eq(pin(16 * PAGE, 0, 16 * PAGE, &s, &e), 0);
	ck_assert_uint_eq(s, e);
}
END_TEST

START_TEST(test_pin_past_end)
{
	uint64_t s, e;

	ck_assert_int_eq(pin(0, 17 * PAGE, 16 * PAGE, &s, &e), -EINVAL);
	ck_assert_int_eq(pin(16 * PAGE, PAGE, 16 * PAGE, &s, &e), -EINVAL);
	ck_assert_int_eq(pin(15 * PAGE, 2 * PAGE, 16 * PAGE, &s, &e), -EINVAL);
	/* len 0 from beyond the end wraps 32 bits, and is refused */
	ck_assert_int_eq(pin(17 * PAGE, 0, 16 * PAGE, &s, &e), -EINVAL);
	/* an end beyond 32 bits */
	ck_assert_int_eq(pin(0xfffff000u, 2 * PAGE, 1ull << 33, &s, &e), -EINVAL);
	/* the last page of a size that is not a page multiple is in */
	ck_assert_int_eq(pin(5 * PAGE, PAGE, 5 * PAGE + 1, &s, &e), 0);
	ck_assert_int_eq(pin(0, 0, 0, &s, &e), 0);
	ck_assert_uint_eq(e, 0);
}
END_TEST

/* ---- the prot mask --------------------------------------------------------- */

START_TEST(test_prot_only_loses_bits)
{
	uint32_t p = 0x77;

	ck_assert_int_eq(vl_ash_set_prot(7, PROT_READ | PROT_WRITE, 0, &p), 0);
	ck_assert_uint_eq(p, PROT_READ | PROT_WRITE);
	ck_assert_int_eq(vl_ash_set_prot(PROT_READ | PROT_WRITE, PROT_READ, 0, &p), 0);
	ck_assert_uint_eq(p, PROT_READ);
	p = 0x77;
	ck_assert_int_eq(vl_ash_set_prot(PROT_READ, PROT_READ | PROT_WRITE, 0, &p), -EINVAL);
	ck_assert_uint_eq(p, 0x77);
	ck_assert_int_eq(vl_ash_set_prot(PROT_READ, PROT_EXEC, 0, &p), -EINVAL);
	ck_assert_int_eq(vl_ash_set_prot(7, 0x8, 0, &p), -EINVAL);
	ck_assert_int_eq(vl_ash_set_prot(7, 0x100000007ull, 0, &p), -EINVAL);
	ck_assert_int_eq(vl_ash_set_prot(7, 0, 0, &p), 0);
	ck_assert_uint_eq(p, PROT_NONE);
	/* the same mask again is fine */
	ck_assert_int_eq(vl_ash_set_prot(PROT_READ, PROT_READ, 0, &p), 0);
}
END_TEST

START_TEST(test_prot_read_implies_exec)
{
	uint32_t p;

	ck_assert_int_eq(vl_ash_set_prot(7, PROT_READ, 1, &p), 0);
	ck_assert_uint_eq(p, PROT_READ | PROT_EXEC);
	ck_assert_int_eq(vl_ash_set_prot(7, PROT_WRITE, 1, &p), 0);
	ck_assert_uint_eq(p, PROT_WRITE);
}
END_TEST

/* ---- mmap, and name and size after it -------------------------------------- */

START_TEST(test_prot_sealed)
{
	/* a write seal takes PROT_WRITE out of what the mask says, nothing else */
	ck_assert_uint_eq(vl_ash_prot_sealed(7, 0), 7);
	ck_assert_uint_eq(vl_ash_prot_sealed(7, -1), 7);
	ck_assert_uint_eq(vl_ash_prot_sealed(7, 0x1 | 0x2 | 0x4), 7); /* seal, shrink, grow */
	ck_assert_uint_eq(vl_ash_prot_sealed(7, VL_SEAL_WRITE), PROT_READ | PROT_EXEC);
	ck_assert_uint_eq(vl_ash_prot_sealed(7, VL_SEAL_FUTURE_WRITE | 0x1), PROT_READ | PROT_EXEC);
	ck_assert_uint_eq(vl_ash_prot_sealed(PROT_READ, VL_SEAL_FUTURE_WRITE), PROT_READ);
	ck_assert_uint_eq(vl_ash_prot_sealed(0, VL_SEAL_WRITE), 0);
}
END_TEST

START_TEST(test_mmap_rules)
{
	struct vl_ashmem a;

	vl_ash_init(&a, VL_ASH_DEV);
	ck_assert_uint_eq(a.prot, 7);
	/* before SET_SIZE: EINVAL */
	ck_assert_int_eq(vl_ash_mmap_check(&a, PROT_READ, PAGE, PAGE), -EINVAL);
	a.size = 3 * PAGE + 10;
	ck_assert_int_eq(vl_ash_mmap_check(&a, PROT_READ | PROT_WRITE, 4 * PAGE, PAGE), 0);
	ck_assert_int_eq(vl_ash_mmap_check(&a, PROT_READ, 5 * PAGE, PAGE), -EINVAL);
	a.prot = PROT_READ;
	ck_assert_int_eq(vl_ash_mmap_check(&a, PROT_READ, PAGE, PAGE), 0);
	ck_assert_int_eq(vl_ash_mmap_check(&a, PROT_NONE, PAGE, PAGE), 0);
	ck_assert_int_eq(vl_ash_mmap_check(&a, PROT_READ | PROT_WRITE, PAGE, PAGE), -EPERM);
	ck_assert_int_eq(vl_ash_mmap_check(&a, PROT_EXEC, PAGE, PAGE), -EPERM);
	/* too long and beyond the mask: the driver looked at the size first */
	ck_assert_int_eq(vl_ash_mmap_check(&a, PROT_READ | PROT_WRITE, 5 * PAGE, PAGE), -EINVAL);
	/* bits beyond read, write, exec are not the mask's business */
	ck_assert_int_eq(vl_ash_mmap_check(&a, PROT_READ | PROT_GROWSDOWN, PAGE, PAGE), 0);
	a.prot = PROT_NONE;
	ck_assert_int_eq(vl_ash_mmap_check(&a, PROT_READ, PAGE, PAGE), -EPERM);
}
END_TEST

/* A shared mapping under a mask without PROT_WRITE goes through a read-only fd. */
START_TEST(test_map_readonly)
{
	struct vl_ashmem a;

	vl_ash_init(&a, VL_ASH_DEV);
	a.size = PAGE;
	ck_assert_int_eq(vl_ash_map_readonly(&a, MAP_SHARED), 0);
	a.prot = PROT_READ | PROT_EXEC;
	ck_assert_int_eq(vl_ash_map_readonly(&a, MAP_SHARED), 1);
	ck_assert_int_eq(vl_ash_map_readonly(&a, MAP_SHARED_VALIDATE), 1);
	ck_assert_int_eq(vl_ash_map_readonly(&a, MAP_SHARED | MAP_FIXED | MAP_POPULATE), 1);
	/* a private mapping's writes reach no one: the driver's rule is not followed there */
	ck_assert_int_eq(vl_ash_map_readonly(&a, MAP_PRIVATE), 0);
	a.prot = PROT_WRITE;
	ck_assert_int_eq(vl_ash_map_readonly(&a, MAP_SHARED), 0);
	a.prot = PROT_NONE;
	ck_assert_int_eq(vl_ash_map_readonly(&a, MAP_SHARED), 1);
}
END_TEST

START_TEST(test_settable_before_mmap_only)
{
	struct vl_ashmem a;

	vl_ash_init(&a, VL_ASH_DEV);
	ck_assert_int_eq(vl_ash_settable(&a), 0);
	a.flags |= VL_ASH_MAPPED;
	ck_assert_int_eq(vl_ash_settable(&a), -EINVAL);
}
END_TEST

/* ---- names ----------------------------------------------------------------- */

START_TEST(test_names)
{
	struct vl_ashmem a;
	char big[300];
	size_t len;

	vl_ash_init(&a, 0);
	ck_assert_str_eq(vl_ash_name_get(&a, &len), "dev/ashmem");
	ck_assert_uint_eq(len, 11);
	vl_ash_name_set(&a, "cache", 6);
	ck_assert_str_eq(vl_ash_name_get(&a, &len), "cache");
	ck_assert_uint_eq(len, 6);
	/* 256 bytes without a NUL keep 255 */
	memset(big, 'n', sizeof(big));
	vl_ash_name_set(&a, big, 256);
	ck_assert_uint_eq(strlen(a.name), 255);
	vl_ash_name_get(&a, &len);
	ck_assert_uint_eq(len, 256);
	/* an empty name is no name */
	vl_ash_name_set(&a, "", 1);
	ck_assert_str_eq(vl_ash_name_get(&a, &len), "dev/ashmem");
	ck_assert(vl_ash_state_ok(&a));
}
END_TEST

START_TEST(test_memfd_names)
{
	char buf[VL_MEMFD_NAME_MAX + 1], big[300];

	vl_ash_memfd_name(NULL, buf, sizeof(buf));
	ck_assert_str_eq(buf, "dev/ashmem");
	vl_ash_memfd_name("", buf, sizeof(buf));
	ck_assert_str_eq(buf, "dev/ashmem");
	vl_ash_memfd_name("tiles", buf, sizeof(buf));
	ck_assert_str_eq(buf, "dev/ashmem/tiles");
	memset(big, 'n', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	vl_ash_memfd_name(big, buf, sizeof(buf));
	ck_assert_uint_eq(strlen(buf), VL_MEMFD_NAME_MAX);
	ck_assert(strncmp(buf, "dev/ashmem/nnn", 14) == 0);
}
END_TEST

START_TEST(test_dev_paths)
{
	ck_assert(vl_ash_dev_path("/dev/ashmem"));
	ck_assert(vl_ash_dev_path("/dev/ashmem6d5c2a64-4a7f-4e4f-8a3b-123456789abc"));
	ck_assert(!vl_ash_dev_path("/dev/ashmem/x"));
	ck_assert(!vl_ash_dev_path("/dev/ashme"));
	ck_assert(!vl_ash_dev_path("/dev/shm/ashmem"));
	ck_assert(!vl_ash_dev_path("dev/ashmem"));
	ck_assert(!vl_ash_dev_path(NULL));
}
END_TEST

START_TEST(test_state_validation)
{
	struct vl_ashmem a;

	vl_ash_init(&a, VL_ASH_DEV | VL_ASH_MAPPED);
	ck_assert(vl_ash_state_ok(&a));
	a.prot = 8;
	ck_assert(!vl_ash_state_ok(&a));
	vl_ash_init(&a, 0);
	a.flags = 0x80;
	ck_assert(!vl_ash_state_ok(&a));
	vl_ash_init(&a, 0);
	memset(a.name, 'x', sizeof(a.name)); /* scribbled: no terminator */
	ck_assert(!vl_ash_state_ok(&a));
}
END_TEST

static Suite *ashmem_suite(void)
{
	Suite *s = suite_create("ashmem");
	TCase *tc = tcase_create("requests");

	tcase_add_test(tc, test_header_numbers);
	tcase_add_test(tc, test_decode_both_abis);
	tcase_add_test(tc, test_decode_others);
	tcase_add_test(tc, test_arg_widths);
	suite_add_tcase(s, tc);
	tc = tcase_create("pins");
	tcase_add_test(tc, test_pin_aligned);
	tcase_add_test(tc, test_pin_unaligned);
	tcase_add_test(tc, test_pin_len0_to_end);
	tcase_add_test(tc, test_pin_past_end);
	suite_add_tcase(s, tc);
	tc = tcase_create("prot, mmap, names");
	tcase_add_test(tc, test_prot_only_loses_bits);
	tcase_add_test(tc, test_prot_read_implies_exec);
	tcase_add_test(tc, test_prot_sealed);
	tcase_add_test(tc, test_mmap_rules);
	tcase_add_test(tc, test_map_readonly);
	tcase_add_test(tc, test_settable_before_mmap_only);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_memfd_names);
	tcase_add_test(tc, test_dev_paths);
	tcase_add_test(tc, test_state_validation);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return th_run(ashmem_suite());
}
