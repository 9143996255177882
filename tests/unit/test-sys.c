/* SPDX-License-Identifier: MIT */
/*
 * test-sys.c - the door to the kernel (src/sys.h): a vl_raw_ call answers
 * the result or -errno and never writes errno, even on failure, so that a
 * vfork child, which shares its parent's errno, leaves it as it was; a
 * pass-through of the host's call gives libc's -1 and errno back.
 */
#include "harness.h"

#include "sys.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define UNTOUCHED 4321 /* an errno no call here sets */

START_TEST(test_failure_is_minus_errno)
{
	errno = UNTOUCHED;
	ck_assert_int_eq(vl_raw_open("/nonexistent/volatile-test", O_RDONLY), -ENOENT);
	ck_assert_int_eq(vl_raw_close(-1), -EBADF);
	ck_assert_int_eq(vl_raw_fcntl(-1, F_GETFD), -EBADF);
	ck_assert_int_eq((int)vl_raw_write(-1, "x", 1), -EBADF);
	ck_assert_int_eq(errno, UNTOUCHED);
}
END_TEST

START_TEST(test_success_is_the_result)
{
	char c = 'x';
	int fd;

	errno = UNTOUCHED;
	fd = vl_raw_open("/dev/null", O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(vl_raw_fcntl(fd, F_GETFD), FD_CLOEXEC); /* no third argument */
	ck_assert_int_eq(vl_raw_fcntl(fd, F_SETFD, 0), 0);      /* a third */
	ck_assert_int_eq(vl_raw_fcntl(fd, F_GETFD), 0);
	ck_assert_int_eq((int)vl_raw_write(fd, &c, 1), 1);
	ck_assert_int_eq((int)vl_raw_read(fd, &c, 1), 0);
	ck_assert_int_eq(vl_raw_close(fd), 0);
	ck_assert_int_eq(errno, UNTOUCHED);
}
END_TEST

/* mmap's failure is a pointer in the last page, as the kernel gives it */
START_TEST(test_mmap_error)
{
	void *bad = vl_raw_mmap(NULL, 4096, PROT_READ, MAP_SHARED, -1, 0);
	void *good = vl_raw_mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				 -1, 0);

	ck_assert_int_eq(vl_map_error(bad), -EBADF);
	ck_assert_int_eq(vl_map_error(good), 0);
	ck_assert_int_eq(vl_raw_munmap(good, 4096), 0);
}
END_TEST

/* The child of vfork runs on its parent's memory, its errno too. */
START_TEST(test_vfork_child_leaves_errno)
{
	pid_t pid;
	int status;

	errno = UNTOUCHED;
	pid = vfork();
	if (pid == 0) {
		vl_raw_close(-1);
		(void)vl_raw_open("/nonexistent/volatile-test", O_RDONLY);
		_exit(0);
	}
	ck_assert_msg(errno == UNTOUCHED, "the parent's errno after its vfork child: %d (%s)",
		      errno, strerror(errno));
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

START_TEST(test_pass_through_is_libc)
{
	errno = UNTOUCHED;
	ck_assert_int_eq((int)vl_as_libc(7), 7);
	ck_assert_int_eq(errno, UNTOUCHED);
	ck_assert_int_eq((int)vl_as_libc(vl_raw_close(-1)), -1);
	ck_assert_int_eq(errno, EBADF);
}
END_TEST

static Suite *sys_suite(void)
{
	Suite *s = suite_create("sys");
	TCase *tc = th_tcase("raw", 30);

	tcase_add_test(tc, test_failure_is_minus_errno);
	tcase_add_test(tc, test_success_is_the_result);
	tcase_add_test(tc, test_mmap_error);
	tcase_add_test(tc, test_vfork_child_leaves_errno);
	tcase_add_test(tc, test_pass_through_is_libc);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return th_run(sys_suite());
}
