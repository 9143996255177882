/*
 * ashmem_here.c - the ashmem regions this process made, and its fds on
 * them (see ashmem_here.h).
 *
 * A small table under the self page's HERE mutex (self.h: a child of any
 * kind gets it unlocked; what the child finds half written belongs to an
 * older epoch, because every way of making a child raises the epoch
 * first). A signal handler that interrupted its thread inside the table
 * does not wait for the mutex its own interrupted frame holds: it raises
 * the epoch instead of updating the table.
 */
#include "ashmem_here.h"

#include "self.h"

#include <pthread.h>
#include <string.h>

#define HERE 256

static struct here {
	int fd1; /* fd + 1; 0: a free entry */
	uint32_t epoch;
	uint8_t shared, mapped;
	struct vl_ident id;
} here[HERE];
static int used; /* entries [0, used) may be taken */
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

/* fork raises the epoch before it copies anything (the child sees it raised too) */
__attribute__((constructor)) static void here_at_load(void)
{
	pthread_atfork(vl_here_unsure, NULL, NULL);
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

static struct here *find(int fd)
{
	for (int i = 0; i < used; i++)
		if (here[i].fd1 == fd + 1)
			return &here[i];
	return NULL;
}

/* An entry for fd: its old one (the number was closed unseen), a free one, or NULL. */
static struct here *slot_for(int fd)
{
	struct here *h = find(fd);

	if (h != NULL)
		return h;
	for (int i = 0; i < used; i++)
		if (here[i].fd1 == 0)
			return &here[i];
	if (used < HERE)
		return &here[used++];
	/* full: forget everything made before, which then is never "alone" */
	memset(here, 0, sizeof(here));
	used = 1;
	vl_here_unsure();
	return &here[0];
}

void vl_here_made(int fd, const struct vl_ident *id)
{
	struct here *h;

	if (fd < 0 || !take())
		return;
	h = slot_for(fd);
	h->id = *id;
	h->epoch = vl_here_epoch();
	h->shared = 0;
	h->mapped = 0;
	h->fd1 = fd + 1;
	give();
}

void vl_here_dup(int from, int to)
{
	struct here *h, *n;

	if (from < 0 || to < 0 || from == to || !take())
		return;
	h = find(from);
	if (h != NULL) {
		struct here copy = *h;

		n = slot_for(to);
		if (n != h) {
			*n = copy;
			n->fd1 = to + 1;
		}
	} else if ((n = find(to)) != NULL) {
		n->fd1 = 0; /* `to` is another file now */
	}
	give();
}

/* Call fn on every entry of id's region. */
static void each_of(const struct vl_ident *id, void (*fn)(struct here *))
{
	for (int i = 0; i < used; i++)
		if (here[i].fd1 != 0 && vl_ident_same(&here[i].id, id))
			fn(&here[i]);
}

static void set_shared(struct here *h)
{
	h->shared = 1;
}

static void set_mapped(struct here *h)
{
	h->mapped = 1;
}

void vl_here_sent(int fd)
{
	struct here *h;

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

/* How many entries of id's region, other than `not`? */
static int others(const struct vl_ident *id, const struct here *not)
{
	int n = 0;

	for (int i = 0; i < used; i++)
		if (&here[i] != not && here[i].fd1 != 0 && vl_ident_same(&here[i].id, id))
			n++;
	return n;
}

int vl_here_last(int fd, const struct vl_ident *id, int *mapped, uint32_t *ep)
{
	struct here *h;
	int last = 0;

	if (fd < 0 || !take())
		return 0;
	h = find(fd);
	if (h != NULL && vl_ident_same(&h->id, id) && h->epoch == vl_here_epoch() && !h->shared &&
	    others(id, h) == 0) {
		last = 1;
		*mapped = h->mapped;
		*ep = h->epoch;
	}
	give();
	return last;
}

void vl_here_closed(int fd)
{
	struct here *h;

	if (fd < 0 || !take())
		return;
	h = find(fd);
	if (h != NULL)
		h->fd1 = 0;
	while (used > 0 && here[used - 1].fd1 == 0)
		used--;
	give();
}

int vl_here_held(const struct vl_ident *id)
{
	int held;

	if (!take())
		return 1;
	held = others(id, NULL) != 0;
	give();
	return held;
}
