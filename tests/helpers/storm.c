/* SPDX-License-Identifier: MIT */
/*
 * storm - many processes, many threads, purgers, a small budget, and
 * (optionally) SIGKILL at random moments; an oracle checks THE INVARIANT
 * and the truth of every UNMARK (DESIGN 4).
 *
 *   storm DIR SECONDS WORKERS THREADS PURGERS KILL
 *
 * Run with LD_PRELOAD=libvolatile.so and VOLATILE_BUDGET set. Two tmpfs
 * files in DIR, PAGES pages each; every page has one owner, a thread
 * slot (worker w, thread t), which loops: pick one of its pages, maybe
 * write a new pattern, MARK it, maybe read it, UNMARK it, and check:
 *
 *   UNMARK 0: the page holds exactly its pattern;
 *   UNMARK 1: the page is all zeros, or (a range whose purge was cut off,
 *             flagged purged to be safe) all its pattern.
 *
 * The page's state lives in memory shared with the parent, written in an
 * order that lets whoever takes over a killed worker's slot know what the
 * page may hold: `pending` is set before a write and cleared after, and
 * `marked`/`unmarking` are set before MARK/UNMARK and cleared after.
 * With KILL=1 the parent SIGKILLs a random worker or purger every few
 * milliseconds and starts another in its place; a slot that makes no
 * progress for 5 s is a hang. At the end the parent unmarks and checks
 * every page itself.
 *
 * Prints "storm: ..." and exits 0 only with no violation and no hang.
 *
 * Built with -DSTORM_STATIC (storm-static, linked -static: its fallocate is
 * the system call, which only `volatile run`'s supervisor serves), it links
 * no library, so it has no purgers (PURGERS must be 0): its pages are
 * purged by another storm's purgers and budget in the same region.
 */
#include <volatile.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define PAGES 256
#define FILES 2
#define MAX_SLOTS 64
#define MAX_KIDS 32

struct page_state {
	uint8_t expected;  /* what the page holds when not being written */
	uint8_t pending;   /* nonzero: being written with this */
	uint8_t marked;    /* a MARK may have been made */
	uint8_t unmarking; /* an UNMARK may have been made, its answer lost */
};

struct shared {
	struct page_state page[FILES][PAGES];
	uint64_t progress[MAX_SLOTS];
	uint64_t ops, unmark0, unmark1, violations, errors;
	int stop;
};

static struct shared *sh;
static int fds[FILES];
static int nslots, threads;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* 0 if the page is all c, else 1 */
static int page_is(int fi, int p, uint8_t c)
{
	unsigned char buf[PAGE];

	if (pread(fds[fi], buf, PAGE, (off_t)p * PAGE) != PAGE)
		return 1;
	for (int i = 0; i < PAGE; i++)
		if (buf[i] != c)
			return 1;
	return 0;
}

static void violation(const char *what, int fi, int p, const struct page_state *s)
{
	__atomic_add_fetch(&sh->violations, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "storm: VIOLATION: %s: file %d page %d (expected %u pending %u)\n", what,
		fi, p, s->expected, s->pending);
}

/*
 * UNMARK page p and check the answer against what the page may hold.
 * Whoever calls this owns the page (or is the parent, at the end).
 */
static void unmark_check(int fi, int p)
{
	struct page_state *s = &sh->page[fi][p];
	int lost = s->unmarking, r;

	s->unmarking = 1;
	r = fallocate(fds[fi], FALLOC_FL_UNMARK_VOLATILE, (off_t)p * PAGE, PAGE);
	if (r < 0) {
		__atomic_add_fetch(&sh->errors, 1, __ATOMIC_RELAXED);
		return; /* still marked, maybe: the next owner unmarks again */
	}
	if (r == 0) {
		__atomic_add_fetch(&sh->unmark0, 1, __ATOMIC_RELAXED);
		/* zeros after a lost UNMARK that said 1 to a dead process: fine */
		if (page_is(fi, p, s->expected) &&
		    (s->pending == 0 || page_is(fi, p, s->pending)) && !(lost && !page_is(fi, p, 0)))
			violation("UNMARK said 0 but the page is not intact", fi, p, s);
	} else {
		__atomic_add_fetch(&sh->unmark1, 1, __ATOMIC_RELAXED);
		if (page_is(fi, p, 0) && page_is(fi, p, s->expected) &&
		    (s->pending == 0 || page_is(fi, p, s->pending)))
			violation("UNMARK said 1 over a page neither purged nor intact", fi, p, s);
	}
	/* what the page holds now, whatever the last owner was doing */
	if (s->pending != 0 && page_is(fi, p, s->pending) == 0)
		s->expected = s->pending;
	else if (page_is(fi, p, 0) == 0)
		s->expected = 0;
	s->pending = 0;
	s->marked = 0;
	s->unmarking = 0;
}

static void one_op(int slot, unsigned *seed)
{
	int fi = (int)(rand_r(seed) % FILES);
	int k = (int)(rand_r(seed) % (PAGES / nslots));
	int p = k * nslots + slot;
	struct page_state *s = &sh->page[fi][p];
	unsigned char buf[PAGE];

	if (s->marked || s->unmarking || s->pending)
		unmark_check(fi, p); /* a killed owner's page, or our own */
	if (rand_r(seed) % 2) {
		uint8_t v = (uint8_t)(1 + rand_r(seed) % 255);

		s->pending = v;
		memset(buf, v, sizeof(buf));
		if (pwrite(fds[fi], buf, PAGE, (off_t)p * PAGE) != PAGE)
			__atomic_add_fetch(&sh->errors, 1, __ATOMIC_RELAXED);
		s->expected = v;
		s->pending = 0;
	}
	s->marked = 1;
	if (fallocate(fds[fi], FALLOC_FL_MARK_VOLATILE, (off_t)p * PAGE, PAGE) != 0)
		__atomic_add_fetch(&sh->errors, 1, __ATOMIC_RELAXED);
	if (rand_r(seed) % 4 == 0)
		usleep(rand_r(seed) % 2000);
	unmark_check(fi, p);
	__atomic_add_fetch(&sh->ops, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&sh->progress[slot], 1, __ATOMIC_RELAXED);
}

struct thread_arg {
	int slot;
	unsigned seed;
};

static void *thread_main(void *arg)
{
	struct thread_arg *a = arg;

	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED))
		one_op(a->slot, &a->seed);
	return NULL;
}

static void worker(int w, unsigned seed)
{
	pthread_t th[MAX_SLOTS];
	struct thread_arg args[MAX_SLOTS];

	for (int t = 0; t < threads; t++) {
		args[t].slot = w * threads + t;
		args[t].seed = seed * 31u + (unsigned)t;
		pthread_create(&th[t], NULL, thread_main, &args[t]);
	}
	for (int t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
	_exit(0);
}

#ifdef STORM_STATIC
/* never called: main refuses purgers */
static int64_t no_purge(uint64_t bytes)
{
	(void)bytes;
	return -1;
}
#define volatile_purge no_purge
#endif

static void purger(unsigned seed)
{
	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
		volatile_purge(rand_r(&seed) % 2 ? VOLATILE_PURGE_ALL : 16 * PAGE);
		usleep(rand_r(&seed) % 3000);
	}
	_exit(0);
}

struct kid {
	pid_t pid;
	int worker; /* -1: a purger */
};

static pid_t start(const struct kid *k, unsigned seed)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (k->worker >= 0)
			worker(k->worker, seed);
		purger(seed);
	}
	return pid;
}

int main(int argc, char **argv)
{
	struct kid kids[MAX_KIDS];
	int nkids = 0, workers, purgers, kill_mode, seconds, hang = 0;
	uint64_t last[MAX_SLOTS], since[MAX_SLOTS], end, kills = 0;
	unsigned seed = 12345;
	char path[4096];

	if (argc != 7) {
		fprintf(stderr, "usage: storm DIR SECONDS WORKERS THREADS PURGERS KILL\n");
		return 2;
	}
	seconds = atoi(argv[2]);
	workers = atoi(argv[3]);
	threads = atoi(argv[4]);
	purgers = atoi(argv[5]);
	kill_mode = atoi(argv[6]);
	nslots = workers * threads;
	if (nslots < 1 || nslots > MAX_SLOTS || PAGES % nslots != 0 ||
	    workers + purgers > MAX_KIDS || seconds < 1) {
		fprintf(stderr, "storm: bad numbers\n");
		return 2;
	}
#ifdef STORM_STATIC
	if (purgers != 0) {
		fprintf(stderr, "storm: a static storm has no purgers (it links no library)\n");
		return 2;
	}
#endif
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	for (int fi = 0; fi < FILES; fi++) {
		unsigned char buf[PAGE];

		snprintf(path, sizeof(path), "%s/storm.%d", argv[1], fi);
		fds[fi] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fds[fi] < 0)
			return 2;
		memset(buf, 'A', sizeof(buf));
		for (int p = 0; p < PAGES; p++) {
			if (pwrite(fds[fi], buf, PAGE, (off_t)p * PAGE) != PAGE)
				return 2;
			sh->page[fi][p].expected = 'A';
		}
	}

	for (int w = 0; w < workers; w++)
		kids[nkids++] = (struct kid){ 0, w };
	for (int q = 0; q < purgers; q++)
		kids[nkids++] = (struct kid){ 0, -1 };
	for (int i = 0; i < nkids; i++)
		kids[i].pid = start(&kids[i], seed + (unsigned)i);
	end = now_ms() + (uint64_t)seconds * 1000;
	for (int s = 0; s < nslots; s++) {
		last[s] = 0;
		since[s] = now_ms();
	}

	while (now_ms() < end && !hang) {
		usleep(kill_mode ? 2000 + rand_r(&seed) % 20000 : 100000);
		if (kill_mode) {
			int i = (int)(rand_r(&seed) % (unsigned)nkids);

			kill(kids[i].pid, SIGKILL);
			waitpid(kids[i].pid, NULL, 0);
			kills++;
			kids[i].pid = start(&kids[i], seed);
		}
		for (int s = 0; s < nslots; s++) {
			uint64_t p = __atomic_load_n(&sh->progress[s], __ATOMIC_RELAXED);

			if (p != last[s]) {
				last[s] = p;
				since[s] = now_ms();
			} else if (now_ms() - since[s] > 5000) {
				fprintf(stderr, "storm: HANG: slot %d made no progress for 5 s\n", s);
				hang = 1;
			}
		}
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nkids; i++) {
		uint64_t deadline = now_ms() + 20000; /* bounds a failure only: a loaded machine stops them late */
		int status;

		while (waitpid(kids[i].pid, &status, WNOHANG) == 0) {
			if (now_ms() > deadline) {
				fprintf(stderr, "storm: HANG: child %d does not stop\n", (int)kids[i].pid);
				kill(kids[i].pid, SIGKILL);
				waitpid(kids[i].pid, &status, 0);
				hang = 1;
				break;
			}
			usleep(10000);
		}
	}

	/* the last word: every page, unmarked and checked here */
	for (int fi = 0; fi < FILES; fi++)
		for (int p = 0; p < PAGES; p++)
			unmark_check(fi, p);
	printf("storm: %d workers x %d threads, %d purgers, %llu kills: %llu MARK/UNMARK "
	       "rounds, UNMARK said 0 %llu and 1 %llu times, %llu errors, %llu violations%s\n",
	       workers, threads, purgers, (unsigned long long)kills,
	       (unsigned long long)sh->ops, (unsigned long long)sh->unmark0,
	       (unsigned long long)sh->unmark1, (unsigned long long)sh->errors,
	       (unsigned long long)sh->violations, hang ? ", HUNG" : "");
	return sh->violations == 0 && !hang && sh->ops > 0 && sh->unmark1 > 0 ? 0 : 1;
}
