/* SPDX-License-Identifier: MIT */
/*
 * own_table.c - the ashmem regions this process made, its fds on them, and the
 * dying (see own_table.h).
 *
 * A table under the self page's HERE mutex (this_process.h: a child of any kind
 * gets it unlocked; what the child finds half written belongs to an
 * older epoch, because every way of making a child raises the epoch
 * first). A signal handler that interrupted its thread inside the table
 * does not wait for the mutex its own interrupted frame holds: it raises
 * the epoch instead of updating the table. Lookups are linear in the
 * entries in use (this process's region fds), never in its open fds.
 */
#include "own_table.h"

#include "this_process.h"
#include "core/fault.h"

#include <pthread.h>
#include <string.h>

#define HERE 4096
#define DYING 256

static struct vl_here here[HERE];
static int used; /* entries [0, used) may be taken */
static struct vl_here_death dying[DYING];
uint32_t vl_here_ndying;
static __thread int holding __attribute__((tls_model("initial-exec")));
/* not static: spawn.c's vfork raises it from assembly */
uint32_t vl_here_epoch_word;

void vl_here_unsure(void)
{
	__atomic_fetch_add(&vl_here_epoch_word, 1, __ATOMIC_RELAXED);
}

uint32_t vl_here_epoch(void)
{
	return __atomic_load_n(&vl_here_epoch_word, __ATOMIC_RELAXED);
}

/* forks under way in this process (another thread's region is never alone meanwhile) */
static uint32_t forking;

void vl_here_fork_begin(void)
{
	__atomic_fetch_add(&forking, 1, __ATOMIC_SEQ_CST);
	vl_here_unsure();
}

void vl_here_fork_end(int child)
{
	if (child) { /* the child's one thread: no fork of its own is under way */
		__atomic_store_n(&forking, 0, __ATOMIC_SEQ_CST);
		return;
	}
	vl_here_unsure();
	__atomic_fetch_sub(&forking, 1, __ATOMIC_SEQ_CST);
}

static void parent_after_fork(void)
{
	vl_here_fork_end(0);
}

static void child_after_fork(void)
{
	vl_here_fork_end(1);
}

/*
 * A fork raises the epoch before it copies anything (the child sees it
 * raised too), and again after, in the parent: an entry that another
 * thread made between the first raise and the copy carries the raised
 * epoch, and is in the child too. In between, nothing is alone: a region
 * closed by another thread then may be in the child already.
 */
__attribute__((constructor)) static void here_at_load(void)
{
	pthread_atfork(vl_here_fork_begin, parent_after_fork, child_after_fork);
}

/*
 * Take the table, or, in a signal handler that interrupted this thread
 * while it had it, raise the epoch and say no. Its own flag, not
 * vl_enter's: the library's calls come here from inside it.
 */
static int take(void)
{
	if (__atomic_load_n(&holding, __ATOMIC_RELAXED)) {
		vl_here_unsure();
		return 0;
	}
	__atomic_store_n(&holding, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	vl_self_lock(VL_SELF_HERE);
	return 1;
}

static void give(void)
{
	vl_self_unlock(VL_SELF_HERE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&holding, 0, __ATOMIC_RELAXED);
}

/* fd's entry, or NULL (the HERE mutex held, as by every helper down to vl_here_made) */
static struct vl_here *find(int fd)
{
	VL_ASSERT_SELF_HELD(VL_SELF_HERE);
	for (int i = 0; i < used; i++)
		if (here[i].fd1 == fd + 1)
			return &here[i];
	return NULL;
}

/* An entry for fd: its old one (the number was closed unseen), a free one, or NULL (full). */
static struct vl_here *slot_for(int fd)
{
	struct vl_here *h = find(fd);

	if (h != NULL)
		return h;
	for (int i = 0; i < used; i++)
		if (here[i].fd1 == 0)
			return &here[i];
	return used < HERE ? &here[used++] : NULL;
}

static void forget(struct vl_here *h)
{
	VL_ASSERT_SELF_HELD(VL_SELF_HERE);
	h->fd1 = 0;
	while (used > 0 && here[used - 1].fd1 == 0)
		used--;
}

/* Call fn on every entry of id's region. */
static void each_of(const struct vl_ident *id, void (*fn)(struct vl_here *))
{
	VL_ASSERT_SELF_HELD(VL_SELF_HERE);
	for (int i = 0; i < used; i++)
		if (here[i].fd1 != 0 && vl_ident_same(&here[i].id, id))
			fn(&here[i]);
}

static void set_shared(struct vl_here *h)
{
	h->shared = 1;
}

static void set_mapped(struct vl_here *h)
{
	h->mapped = 1;
}

void vl_here_made(int fd, const struct vl_ident *id, uint32_t epoch)
{
	struct vl_here *h;

	if (fd < 0 || !take())
		return;
	h = slot_for(fd);
	if (h != NULL) { /* full: no entry, so never "alone": left to the purges */
		memset(h, 0, sizeof(*h));
		h->id = *id;
		h->epoch = epoch;
		h->fd1 = fd + 1;
	}
	give();
}

void vl_here_dup(int from, int to)
{
	struct vl_here *h, *n;

	if (from < 0 || to < 0 || from == to || !take())
		return;
	h = find(from);
	if (h != NULL) {
		struct vl_here copy = *h;

		n = slot_for(to);
		if (n == NULL) /* full: an fd the table cannot count, so the region is never alone */
			each_of(&copy.id, set_shared);
		else if (n != h) {
			*n = copy;
			n->fd1 = to + 1;
		}
	} else if ((n = find(to)) != NULL) {
		forget(n); /* `to` is another file now */
	}
	give();
}

void vl_here_sent(int fd)
{
	struct vl_here *h;

	if (fd < 0 || !take())
		return;
	h = find(fd);
	if (h != NULL)
		each_of(&h->id, set_shared);
	give();
}

void vl_here_mapped(const struct vl_ident *id)
{
	if (!take())
		return;
	each_of(id, set_mapped);
	give();
}

int vl_here_peek(int fd, struct vl_here *e)
{
	struct vl_here *h;

	if (fd < 0 || !take())
		return 0;
	h = find(fd);
	if (h != NULL)
		*e = *h;
	give();
	return h != NULL;
}

int vl_here_take(int fd, struct vl_here *e)
{
	struct vl_here *h;

	if (fd < 0 || !take())
		return 0;
	h = find(fd);
	VL_STEP("here: table taken");
	if (h != NULL) {
		*e = *h;
		forget(h);
	}
	give();
	return h != NULL;
}

void vl_here_put(const struct vl_here *e)
{
	struct vl_here *h;

	if (!take())
		return;
	h = slot_for(e->fd1 - 1);
	if (h != NULL)
		*h = *e;
	else
		each_of(&e->id, set_shared);
	give();
}

/* Is an entry of id's region, other than `not`, in the table? (the HERE mutex held) */
static int others(const struct vl_ident *id, const struct vl_here *not)
{
	VL_ASSERT_SELF_HELD(VL_SELF_HERE);
	for (int i = 0; i < used; i++)
		if (&here[i] != not && here[i].fd1 != 0 && vl_ident_same(&here[i].id, id))
			return 1;
	return 0;
}

static int alone(const struct vl_here *e, const struct vl_here *not)
{
	return __atomic_load_n(&forking, __ATOMIC_SEQ_CST) == 0 && e->epoch == vl_here_epoch() &&
	       !e->shared && !others(&e->id, not);
}

int vl_here_settled(uint32_t epoch)
{
	return __atomic_load_n(&forking, __ATOMIC_SEQ_CST) == 0 && epoch == vl_here_epoch();
}

int vl_here_alone(const struct vl_here *e)
{
	int a;

	if (!take())
		return 0;
	a = alone(e, find(e->fd1 - 1));
	give();
	return a;
}

int vl_here_held(const struct vl_ident *id)
{
	int held;

	if (!take())
		return 1;
	held = others(id, NULL);
	give();
	return held;
}

int vl_here_dying(const struct vl_here *e)
{
	int n = -1;

	if (!take())
		return -1;
	if (alone(e, NULL) && vl_here_ndying < DYING) {
		dying[vl_here_ndying].id = e->id;
		dying[vl_here_ndying].epoch = e->epoch;
		dying[vl_here_ndying].mapped = e->mapped;
		n = (int)vl_here_ndying + 1;
		__atomic_store_n(&vl_here_ndying, (uint32_t)n, __ATOMIC_RELAXED);
	}
	give();
	return n;
}

int vl_here_deaths(struct vl_here_death *out, int max)
{
	int n = 0;

	if (!take())
		return 0;
	while (n < max && vl_here_ndying > 0) {
		out[n++] = dying[vl_here_ndying - 1];
		__atomic_store_n(&vl_here_ndying, vl_here_ndying - 1, __ATOMIC_RELAXED);
	}
	give();
	return n;
}

void vl_here_still_dying(const struct vl_here_death *d)
{
	if (!take())
		return;
	if (vl_here_ndying < DYING) {
		dying[vl_here_ndying] = *d;
		__atomic_store_n(&vl_here_ndying, vl_here_ndying + 1, __ATOMIC_RELAXED);
	}
	give();
}
