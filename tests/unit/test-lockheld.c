/* SPDX-License-Identifier: MIT */
/*
 * test-lockheld.c - the debug build's check of a lock precondition
 * (VL_ASSERT_HELD, core/layout.h): a function that needs a lock, called
 * without it, aborts with one line naming the lock and the function;
 * called with it, goes on. Linked with the debug build's runtime
 * (VL_DEBUG_LOCKS); the locks are lock.c's own, in a region in memory.
 * Each kind of check: a function given the region (VL_ASSERT_HELD), one
 * given only what the lock guards (VL_ASSERT_MINE: the tombstones), and
 * this process's own mutexes, which know their holding thread
 * (VL_ASSERT_SELF_HELD, this_process.h), and the command's (CLI_ASSERT_HELD,
 * cli/mutex.h).
 */
#include "harness.h"

#include "cli/mutex.h"
#include "core/tomb.h"
#include "lock.h"
#include "policy.h"
#include "region.h"
#include "this_process.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* a mapping's serial no real region of this process has */
#define TEST_SERIAL 0x7e57ull

static struct th_region t;

static void setup(void)
{
	th_region_init(&t, 64, 8);
	t.r.serial = TEST_SERIAL;
}

static void teardown(void)
{
	th_region_fini(&t);
}

enum call {
	LRU_CHECK,
	ROOM_FOR_FILE,
	BATCH_MORE,
	TOMB_ADD,
	SELF_NOT_TAKEN,
	SELF_OTHER_THREAD,
	CLI_NOT_TAKEN,
	CLI_OTHER_THREAD,
	CLI_WAITING
};

static const struct vl_ident tomb_id = { .dev = 1, .ino = 2, .btime_sec = 3 };

/* The attach mutex, as a function that needs it checks it. */
static void needs_attach_mutex(void)
{
	VL_ASSERT_SELF_HELD(VL_SELF_ATTACH);
}

static void *take_attach_mutex(void *arg)
{
	(void)arg;
	vl_self_lock(VL_SELF_ATTACH);
	return NULL;
}

static struct cli_mutex cli_m = CLI_MUTEX_INITIALIZER;

/* A function of the command that needs cli_m. */
static void needs_cli_mutex(void)
{
	CLI_ASSERT_HELD(&cli_m);
}

static void *take_cli_mutex(void *arg)
{
	(void)arg;
	cli_lock(&cli_m);
	return NULL;
}

/* Checks cli_m from inside a wait on it, which has let it go. */
static void *check_cli_mutex(void *arg)
{
	pthread_cond_t *c = arg;

	cli_lock(&cli_m);
	needs_cli_mutex();
	pthread_cond_signal(c);
	cli_unlock(&cli_m);
	return NULL;
}

static void wait_on_cli_mutex(void)
{
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_t other;

	cli_lock(&cli_m);
	ck_assert_int_eq(pthread_create(&other, NULL, check_cli_mutex, &c), 0);
	cli_cond_wait(&c, &cli_m);
	needs_cli_mutex(); /* held again after the wait */
	cli_unlock(&cli_m);
	ck_assert_int_eq(pthread_join(other, NULL), 0);
}

static void call(enum call what)
{
	struct vl_goal g = { .bytes = UINT64_MAX };
	struct vl_purge_report rep = { 0 };
	pthread_t other;

	switch (what) {
	case LRU_CHECK:
		(void)vl_lru_check(&t.r, 1);
		break;
	case ROOM_FOR_FILE:
		(void)vl_room_for_file(&t.r);
		break;
	case BATCH_MORE:
		(void)vl_batch_more(&t.r, &g, &rep, 1, &VL_IX_AGED_END, 0, 0, 0);
		break;
	case TOMB_ADD:
		vl_tomb_add(t.r.tomb, &tomb_id);
		break;
	case SELF_NOT_TAKEN:
		needs_attach_mutex();
		break;
	case SELF_OTHER_THREAD:
		/* another thread of this process holds it (and keeps it): not this one */
		ck_assert_int_eq(pthread_create(&other, NULL, take_attach_mutex, NULL), 0);
		ck_assert_int_eq(pthread_join(other, NULL), 0);
		needs_attach_mutex();
		break;
	case CLI_NOT_TAKEN:
		needs_cli_mutex();
		break;
	case CLI_OTHER_THREAD:
		ck_assert_int_eq(pthread_create(&other, NULL, take_cli_mutex, NULL), 0);
		ck_assert_int_eq(pthread_join(other, NULL), 0);
		needs_cli_mutex();
		break;
	case CLI_WAITING:
		wait_on_cli_mutex();
		break;
	}
}

/*
 * Make `what` in a child, its stderr into buf: the child's wait status.
 * The child exits 0 if the call returned. A child holds no lock: its
 * parent's token is not its own (lock.c).
 */
static int call_in_child(enum call what, char *buf, size_t size)
{
	int fds[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		call(what);
		_exit(0);
	}
	close(fds[1]);
	while ((size_t)got < size - 1 && (n = read(fds[0], buf + got, size - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

static void expect_abort(enum call what, const char *func, const char *lock)
{
	char err[1024];
	int status = call_in_child(what, err, sizeof(err));

	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
		      "%s without %s: wait status %#x, not killed by SIGABRT; stderr: %s", func,
		      lock, status, err);
	ck_assert_msg(strstr(err, func) != NULL && strstr(err, lock) != NULL,
		      "%s without %s: the line does not name both: %s", func, lock, err);
	ck_assert_msg(strchr(err, '\n') == strrchr(err, '\n'), "more than one line: %s", err);
}

START_TEST(test_file_lock_not_held_aborts)
{
	expect_abort(LRU_CHECK, "vl_lru_check", "the lock of file 1");
}
END_TEST

START_TEST(test_region_lock_not_held_aborts)
{
	expect_abort(ROOM_FOR_FILE, "vl_room_for_file", "the region lock");
}
END_TEST

/* Another process's token in the word is not ours: the lock is not held here. */
START_TEST(test_lock_held_elsewhere_aborts)
{
	__atomic_store_n(&vl_file_at(&t.r, 1)->h.lock.word, VL_TOKEN(3, 1), __ATOMIC_RELAXED);
	expect_abort(LRU_CHECK, "vl_lru_check", "the lock of file 1");
}
END_TEST

/* A function not given the region, only what the region lock guards (the tombstones). */
START_TEST(test_batch_more_without_file_lock_aborts)
{
	expect_abort(BATCH_MORE, "vl_batch_more", "the lock of file 1");
}
END_TEST

START_TEST(test_tomb_without_region_lock_aborts)
{
	expect_abort(TOMB_ADD, "vl_tomb_add", "vl_tomb_region_lock(t)");
}
END_TEST

/* This process's mutexes: not taken, or taken by another thread, is not held. */
START_TEST(test_self_mutex_not_held_aborts)
{
	expect_abort(SELF_NOT_TAKEN, "needs_attach_mutex", "the attach mutex");
}
END_TEST

START_TEST(test_self_mutex_other_thread_aborts)
{
	expect_abort(SELF_OTHER_THREAD, "needs_attach_mutex", "the attach mutex");
}
END_TEST

/* The command's mutexes: not taken, or taken by another thread, is not held. */
START_TEST(test_cli_mutex_not_held_aborts)
{
	expect_abort(CLI_NOT_TAKEN, "needs_cli_mutex", "the mutex &cli_m");
}
END_TEST

START_TEST(test_cli_mutex_other_thread_aborts)
{
	expect_abort(CLI_OTHER_THREAD, "needs_cli_mutex", "the mutex &cli_m");
}
END_TEST

/* A cond wait lets go of the mutex: held by the thread that took it meanwhile, then by us. */
START_TEST(test_cli_mutex_wait_goes_on)
{
	char err[1024];
	int status = call_in_child(CLI_WAITING, err, sizeof(err));

	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "a check around a cond wait: wait status %#x; stderr: %s", status, err);
}
END_TEST

/* Held by this process (here, not in a child: a child has a token of its own), they go on. */
START_TEST(test_lock_held_goes_on)
{
	struct vl_goal g = { .bytes = UINT64_MAX };
	struct vl_purge_report rep = { 0 };

	ck_assert_int_eq(vl_lock_take(&t.r, &vl_file_at(&t.r, 1)->h.lock), 0);
	ck_assert_int_eq(vl_lock_region(&t.r), 0);
	ck_assert_int_eq(vl_lru_check(&t.r, 1), 0);
	(void)vl_room_for_file(&t.r);
	ck_assert_int_eq(vl_batch_more(&t.r, &g, &rep, 1, &VL_IX_AGED_END, 0, 0, 0), 0);
	vl_tomb_add(t.r.tomb, &tomb_id);
	ck_assert_int_eq(vl_tomb_has(t.r.tomb, &tomb_id), 1);
	vl_unlock_region(&t.r);
	vl_lock_drop(&t.r, &vl_file_at(&t.r, 1)->h.lock);
	vl_self_lock(VL_SELF_ATTACH);
	needs_attach_mutex();
	vl_self_unlock(VL_SELF_ATTACH);
}
END_TEST

static Suite *lockheld_suite(void)
{
	Suite *s = suite_create("lockheld");
	TCase *tc = th_tcase("precondition", 30);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_file_lock_not_held_aborts);
	tcase_add_test(tc, test_region_lock_not_held_aborts);
	tcase_add_test(tc, test_lock_held_elsewhere_aborts);
	tcase_add_test(tc, test_batch_more_without_file_lock_aborts);
	tcase_add_test(tc, test_tomb_without_region_lock_aborts);
	tcase_add_test(tc, test_self_mutex_not_held_aborts);
	tcase_add_test(tc, test_self_mutex_other_thread_aborts);
	tcase_add_test(tc, test_cli_mutex_not_held_aborts);
	tcase_add_test(tc, test_cli_mutex_other_thread_aborts);
	tcase_add_test(tc, test_cli_mutex_wait_goes_on);
	tcase_add_test(tc, test_lock_held_goes_on);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return th_run(lockheld_suite());
}
