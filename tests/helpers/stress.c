/* SPDX-License-Identifier: MIT */
/*
 * stress - a program linked with -lvolatile (not preloaded) that races
 * MARK/UNMARK against purges, and calls MARK from signal handlers.
 *
 *   stress race SECONDS     threads mark, check and unmark their own pages
 *                           of a memfd while a forked process purges the
 *                           whole region in a loop. An UNMARK that returns
 *                           0 must find its page as written; one that
 *                           returns 1 must find it all zeros (whole ranges
 *                           are purged); guard pages between the marked
 *                           ones, never marked, must never change (THE
 *                           INVARIANT). Prints the counts; exit 1 on any
 *                           violation, or if the race never purged (it runs
 *                           on, up to 10 * SECONDS, until a purge did).
 *   stress signal SECONDS   the main thread marks and unmarks in a loop;
 *                           a fast timer's handler marks and unmarks too.
 *                           Calls that interrupted the main thread inside
 *                           the library must fail with EINTR, never hang;
 *                           every other call must succeed. Exit 1 unless
 *                           at least one EINTR was seen (it runs on, up to
 *                           10 * SECONDS, until one is) and nothing else
 *                           failed.
 *   stress fork ROUNDS      a fresh process makes its first MARK (which
 *                           attaches the region) in a thread while its main
 *                           thread forks at a random moment; the child must
 *                           MARK within 20 s (no lock inherited from a thread
 *                           it does not have). Exit 1 if any child hung.
 *   stress api              volatile_stats and volatile_purge through the
 *                           C API of volatile.h.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <volatile.h>

_Static_assert(FALLOCATE_FL_MARK_VOLATILE == FALLOC_FL_MARK_VOLATILE, "LWN spelling");
_Static_assert(FALLOCATE_FL_UNMARK_VOLATILE == FALLOC_FL_UNMARK_VOLATILE, "LWN spelling");

#define PAGE 4096
#define THREADS 4
#define PAGES_PER_THREAD 16 /* even: marked and checked; odd: guards */

static int memfd;
static unsigned char *map;
static double seconds;
static int stop; /* set by main, read by the racers: atomics */

struct counts {
	long iterations, intact, purged, violations, errors;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned char pattern(int page, long iteration)
{
	return (unsigned char)(1 + (page * 31 + iteration) % 255); /* never 0 */
}

static int all(const unsigned char *p, unsigned char v)
{
	for (int i = 0; i < PAGE; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

static void *racer(void *arg)
{
	int t = (int)(long)arg, first = t * PAGES_PER_THREAD;
	struct counts *c = calloc(1, sizeof(*c));
	unsigned seed = (unsigned)t * 7919u + 1;

	for (int g = first + 1; g < first + PAGES_PER_THREAD; g += 2)
		memset(map + (size_t)g * PAGE, 0xee, PAGE);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		int page = first + 2 * (int)(rand_r(&seed) % (PAGES_PER_THREAD / 2));
		unsigned char v = pattern(page, c->iterations);
		unsigned char *p = map + (size_t)page * PAGE;
		int r;

		memset(p, v, PAGE);
		if (fallocate(memfd, FALLOC_FL_MARK_VOLATILE, (off_t)page * PAGE, PAGE) != 0) {
			c->errors++;
			continue;
		}
		for (int spin = (int)(rand_r(&seed) % 2000); spin > 0; spin--)
			__asm__ volatile("" ::: "memory");
		r = fallocate(memfd, FALLOC_FL_UNMARK_VOLATILE, (off_t)page * PAGE, PAGE);
		if (r == 0) {
			c->intact++;
			if (!all(p, v))
				c->violations++; /* UNMARK said intact, bytes changed */
		} else if (r == 1) {
			c->purged++;
			if (!all(p, 0))
				c->violations++; /* the purged flag lied */
		} else {
			c->errors++;
		}
		for (int g = first + 1; g < first + PAGES_PER_THREAD; g += 2)
			if (!all(map + (size_t)g * PAGE, 0xee))
				c->violations++; /* a byte that was never volatile changed */
		c->iterations++;
	}
	return c;
}

static int race(void)
{
	pthread_t th[THREADS];
	struct counts total = { 0 };
	size_t size = (size_t)THREADS * PAGES_PER_THREAD * PAGE;
	long purges = 0;
	int status;
	pid_t purger;

	memfd = memfd_create("stress-race", 0);
	if (memfd < 0 || ftruncate(memfd, (off_t)size) != 0)
		return 2;
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (map == MAP_FAILED)
		return 2;
	purger = fork();
	if (purger == 0) {
		/* another process: it reaches the memfd through /proc/PPID/fd */
		double end = now() + seconds;

		/*
		 * SECONDS at least, and on (up to 10 times as long) until a pass
		 * purged something: on a loaded machine few passes may run, and
		 * the race is worth what it purged, not the time
		 */
		while (now() < end || (purges == 0 && now() < end + 9 * seconds))
			if (volatile_purge(VOLATILE_PURGE_ALL) > 0)
				purges++;
		printf("purger: %ld passes purged something\n", purges);
		_exit(purges > 0 ? 0 : 3);
	}
	for (long t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, racer, (void *)t);
	waitpid(purger, &status, 0);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int t = 0; t < THREADS; t++) {
		struct counts *c;

		pthread_join(th[t], (void **)&c);
		total.iterations += c->iterations;
		total.intact += c->intact;
		total.purged += c->purged;
		total.violations += c->violations;
		total.errors += c->errors;
		free(c);
	}
	printf("race: iterations %ld intact %ld purged %ld violations %ld errors %ld\n",
	       total.iterations, total.intact, total.purged, total.violations, total.errors);
	if (total.violations || total.errors)
		return 1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || total.purged == 0 ||
	    total.intact == 0) {
		printf("race: the race was not exercised (nothing purged, or nothing intact)\n");
		return 1;
	}
	return 0;
}

static volatile sig_atomic_t in_handler_ok, in_handler_eintr, in_handler_other;

static void on_alarm(int sig)
{
	int saved = errno, r;

	(void)sig;
	r = fallocate(memfd, FALLOC_FL_MARK_VOLATILE, 8 * PAGE, PAGE);
	if (r == 0)
		r = fallocate(memfd, FALLOC_FL_UNMARK_VOLATILE, 8 * PAGE, PAGE);
	if (r >= 0)
		in_handler_ok++;
	else if (errno == EINTR)
		in_handler_eintr++;
	else
		in_handler_other++;
	errno = saved;
}

static int signals(void)
{
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	struct sigaction sa;
	long loops = 0, errors = 0;
	double end = now() + seconds;

	memfd = memfd_create("stress-signal", 0);
	if (memfd < 0 || ftruncate(memfd, 16 * PAGE) != 0)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	/* SECONDS at least, and on (up to 10 times as long) until a handler
	 * interrupted the library: a loaded machine may run few loops */
	while (now() < end || (in_handler_eintr == 0 && now() < end + 9 * seconds)) {
		if (fallocate(memfd, FALLOC_FL_MARK_VOLATILE, 0, PAGE) != 0 ||
		    fallocate(memfd, FALLOC_FL_UNMARK_VOLATILE, 0, PAGE) < 0)
			errors++;
		loops++;
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	printf("signal: loops %ld errors %ld; in handlers: ok %d eintr %d other %d\n", loops,
	       errors, (int)in_handler_ok, (int)in_handler_eintr, (int)in_handler_other);
	if (errors || in_handler_other)
		return 1;
	if (in_handler_eintr == 0) {
		printf("signal: no handler ever interrupted the library: not exercised\n");
		return 1;
	}
	return 0;
}

static int api(void)
{
	struct volatile_stats st, small;
	int fd = memfd_create("stress-api", 0);
	int64_t purged;

	if (fd < 0 || ftruncate(fd, 64 * PAGE) != 0)
		return 2;
	if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, 4 * PAGE) != 0 ||
	    fallocate(fd, FALLOC_FL_MARK_VOLATILE, 8 * PAGE, 2 * PAGE) != 0 ||
	    fallocate(fd, FALLOC_FL_MARK_VOLATILE, 16 * PAGE, PAGE) != 0)
		return 1;
	if (volatile_stats(&st, sizeof(st)) != 0)
		return 1;
	printf("stats: files %llu ranges %llu volatile %llu purged %llu capacity %llu\n",
	       (unsigned long long)st.files, (unsigned long long)st.ranges,
	       (unsigned long long)st.volatile_bytes, (unsigned long long)st.purged_bytes,
	       (unsigned long long)st.capacity_ranges);
	if (st.files != 1 || st.ranges != 3 || st.volatile_bytes != 7 * PAGE ||
	    st.purged_bytes != 0 || st.capacity_ranges < 1000000)
		return 1;
	/* a caller built against a smaller struct gets only what it asked for */
	memset(&small, 0xa5, sizeof(small));
	if (volatile_stats(&small, sizeof(small.files)) != 0 || small.files != 1 ||
	    small.ranges != 0xa5a5a5a5a5a5a5a5ull)
		return 1;
	if (volatile_stats(NULL, sizeof(st)) != -1 || errno != EINVAL)
		return 1;
	/* oldest first, whole ranges: asking for 1 byte takes the first range */
	purged = volatile_purge(1);
	printf("purge(1) = %lld\n", (long long)purged);
	if (purged != 4 * PAGE)
		return 1;
	purged = volatile_purge(VOLATILE_PURGE_ALL);
	printf("purge(all) = %lld\n", (long long)purged);
	if (purged != 3 * PAGE || volatile_stats(&st, sizeof(st)) != 0 ||
	    st.purged_bytes != 7 * PAGE || st.volatile_bytes != 0 || st.purges != 3)
		return 1;
	if (fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, 0, 64 * PAGE) != 1)
		return 1;
	if (volatile_purge(VOLATILE_PURGE_ALL) != 0)
		return 1;
	printf("api: ok\n");
	return 0;
}

static void *first_mark(void *arg)
{
	int fd = *(int *)arg;

	if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, PAGE) != 0)
		abort();
	return NULL;
}

/* One round, in a fresh process that has not attached the region yet. */
static int fork_round(unsigned seed)
{
	int fd = memfd_create("stress-fork", 0), status;
	pthread_t t;
	pid_t child;

	if (fd < 0 || ftruncate(fd, 4 * PAGE) != 0 ||
	    pthread_create(&t, NULL, first_mark, &fd) != 0)
		return 2;
	usleep(rand_r(&seed) % 400); /* land somewhere in the attach */
	child = fork();
	if (child == 0) {
		alarm(20); /* a hang is killed, and counted (a loaded machine may
			    * take seconds to run a child at all) */
		_exit(fallocate(fd, FALLOC_FL_MARK_VOLATILE, PAGE, PAGE) == 0 ? 0 : 2);
	}
	pthread_join(t, NULL);
	if (child < 0 || waitpid(child, &status, 0) != child)
		return 2;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int forks(int rounds)
{
	int bad = 0;

	for (int n = 0; n < rounds; n++) {
		pid_t p = fork();
		int status;

		if (p == 0)
			_exit(fork_round((unsigned)n * 2654435761u));
		if (p < 0 || waitpid(p, &status, 0) != p || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			bad++;
	}
	printf("fork: %d rounds, %d children hung or failed\n", rounds, bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "api") == 0)
		return api();
	if (argc != 3 || (seconds = atof(argv[2])) <= 0) {
		fprintf(stderr, "usage: stress race|signal SECONDS | stress fork ROUNDS | stress api\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(argv[1], "race") == 0)
		return race();
	if (strcmp(argv[1], "signal") == 0)
		return signals();
	if (strcmp(argv[1], "fork") == 0)
		return forks((int)seconds);
	fprintf(stderr, "stress: unknown mode %s\n", argv[1]);
	return 2;
}
