/* SPDX-License-Identifier: MIT */
/*
 * layout.h - the shared region: what lies where, in bytes.
 *
 * The region is one file mapped MAP_SHARED by every process of a user, at
 * a different address in each. So nothing in it is a pointer: ranges and
 * files are named by 32-bit indices into two arrays, and index 0 of each
 * array is a sentinel that is never handed out. Every index read from the
 * region is clamped into its array before use (vl_node_at, vl_file_at), so
 * a scribbled index can make an answer wrong but can never make us touch
 * memory outside the mapping.
 *
 *   +--------------------+ 0
 *   | struct vl_header   |  geometry (checked at attach), lock, counters
 *   +--------------------+ tomb_off
 *   | struct vl_tomb     |  tombstones: files forgotten with purged ranges (tomb.h)
 *   +--------------------+ files_off
 *   | struct vl_file [F] |  one per file with ranges, 512 bytes each
 *   +--------------------+ hash_off
 *   | uint32_t [H]       |  open-addressing table (dev, ino) -> file index
 *   +--------------------+ nodes_off
 *   | struct vl_node [N] |  one per range, 48 bytes each, in chunks of four
 *   +--------------------+ procs_off
 *   | struct vl_proc [P] |  the processes that take its locks, 64 bytes each
 *   +--------------------+ region_size
 *
 * The file is sparse and the allocators hand out the lowest unused slots
 * first, so the memory it takes follows the high-water mark of use, not
 * the capacity.
 */
#ifndef VL_LAYOUT_H
#define VL_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define VL_NIL 0u

/* "VOLATILE" read as a little-endian u64 */
#define VL_MAGIC 0x454c4954414c4f56ull
#define VL_VERSION 9u /* 2: ashmem state in file records; 3: a spare node per file,
			    records found without the region lock, one mix in a node's sum;
			    4: the inode's generation in a file's identity, the
			    library's own locks and table of processes, the
			    region's byte counts in 128 bits; 5: ages kept per
			    file, nodes allocated and counters kept without a
			    lock, records kept while empty; 6: the log of the
			    last purges; 7: tombstones an exact table under
			    a rising horizon, not a Bloom filter; 8: the file
			    table hashed by vl_ident_hash; 9: ages are the
			    host's clock (VL_AGE_CLOCK), not a region's count;
			    nodes handed out in chunks of four, a file's own
			    (VL_CHUNK); per-process totals (struct vl_proc's
			    deltas, shared_totals) */

/* ---- ranges ------------------------------------------------------------ */

/* node->meta: file index, allocation state, purged flag */
#define VL_META_FILE_MASK 0x00ffffffu
#define VL_META_STATE_SHIFT 24
#define VL_META_STATE_MASK (3u << VL_META_STATE_SHIFT)
#define VL_META_PURGED (1u << 26)

enum vl_node_state {
	VL_NODE_FREE = 0,    /* its chunk is on the free list (or being put there) */
	VL_NODE_PENDING = 1, /* allocated, not yet (or no longer) in a tree */
	VL_NODE_LIVE = 2,    /* a range in its file's tree */
	VL_NODE_IDLE = 3,    /* unused, in a chunk that files use (the file it names
				takes it first) */
};

/*
 * Nodes are handed out in chunks: VL_CHUNK consecutive slots from a
 * multiple of VL_CHUNK, 192 bytes from a 64-byte boundary (the node
 * array starts on one), so three whole cache lines. A chunk taken from
 * the region is one file's: its other nodes are that file's spares, and
 * a chunk goes back only when all its nodes are unused (pool.c). So two
 * files share no cache line of nodes, and two processes changing two
 * files write no line in common there (DESIGN 10); only a MARK that finds
 * the region full takes another file's unused node (vl_spare_steal).
 * Chunk 0 holds the sentinel and is never handed out.
 */
#define VL_CHUNK 4u
_Static_assert(VL_CHUNK * 48 % 64 == 0, "a chunk is whole cache lines");

/*
 * A volatile range [start, end) of one file. 48 bytes.
 *
 * Guarded by the lock of the file it belongs to: everything, as long as
 * the node is its (PENDING or LIVE): start, end, seq, the tree links,
 * prev and next (the file's unpurged ranges in age order), the purged
 * bit. An IDLE node is anyone's who turns its meta from IDLE to PENDING
 * by compare-and-swap (its file's lock holder first). A FREE chunk
 * belongs to the lock-free free list (pool.c), which chains the chunks'
 * first nodes through next and hands a chunk out by one compare-and-swap
 * of its first node's meta, FREE -> PENDING. `check` covers start, end,
 * seq, meta and the slot.
 */
struct vl_node {
	uint64_t start;
	uint64_t end;
	uint32_t seq;     /* age: the age clock at its newest MARK (DESIGN 10) */
	uint32_t check;   /* vl_node_sum() of the fields above and meta */
	uint32_t left;
	uint32_t right;
	uint32_t parent;  /* parent index << 1 | colour (1 = black) */
	uint32_t meta;    /* file index | state | purged */
	uint32_t prev;    /* the file's unpurged ranges, oldest first; */
	uint32_t next;    /* the free list and a file's spares use next */
};

/* ---- locks ------------------------------------------------------------- */

/*
 * A lock whose every bit only this library reads (src/lock.c): glibc's
 * robust mutexes keep a kind and list pointers in shared memory, so a
 * scribbled one crashed the host inside glibc, and a holder that glibc
 * never told the kernel about (a child made by clone()) left it locked
 * for good. Here the word names the holder's slot in the region's table
 * of processes (struct vl_proc), and a waiter that finds that process
 * gone takes the lock over and repairs what it guards.
 *
 * word: 0 free; else the holder's token (VL_TOKEN_MASK), VL_LOCK_WAITERS
 * when someone may sleep on it; VL_LOCK_BROKEN alone: a repair failed,
 * the lock is unusable (EUCLEAN) until the region is made anew.
 */
struct vl_lock {
	uint32_t word;
	uint32_t pad;
};

#define VL_LOCK_WAITERS 0x80000000u
#define VL_LOCK_BROKEN 0x40000000u
/* a token: the slot in the table of processes, and that slot's generation */
#define VL_TOKEN_MASK 0x3fffffffu
#define VL_TOKEN_SLOT(t) ((t) & 0xffffu)
#define VL_TOKEN_GEN(t) (((t) >> 16) & 0x3fffu)
#define VL_TOKEN(slot, gen) ((((uint32_t)(gen) & 0x3fffu) << 16) | ((uint32_t)(slot) & 0xffffu))

/*
 * The region's locks, what each guards, and the one order they are taken
 * in (the only place it is written; the structs below say field by field):
 *
 *   lock             where                guards
 *   a move lock      hdr->fate.move_lock  one mover of that region at a time
 *                                         (move.c)
 *   a file's lock    files[fi].h.lock     the file's ranges: its tree, age
 *                                         order, counts and spares, and its
 *                                         ashmem state (struct vl_file_hdr)
 *   the region lock  hdr->lock            the file table (records' state,
 *                                         identity, ways to reach them, the
 *                                         hash), counters c, moved_from, the
 *                                         tombstones (struct vl_header)
 *
 * Order: an old region's move lock, then a file's lock, then the region
 * lock; a mover (move.c) takes an old region's file lock before a new
 * region's locks (its file's, then its region lock), and no process takes
 * a new region's lock and then an old one's. Both a file's lock and the
 * region lock are held to free a file's slot. In one region only a repair
 * holds more than one file lock (every one, tried and never waited for:
 * recount, lock.c), so no file lock waits on another.
 *
 * Taken (lock.c: vl_lock_region, vl_lock_file), a lock whose holder died
 * is repaired before it is handed on: the region lock's by rebuilding the
 * lists and counters (vl_pool_rebuild), a file lock's by rebuilding the
 * file's tree (vl_file_repair; rebuild.c), both pure logic here in core.
 */

/*
 * A process that takes locks of the region. tag: its token | VL_PROC_LIVE
 * while taken (| VL_PROC_DONE once the rest is written); the token alone
 * when free, so that the next taker of the slot gives it a new
 * generation and a dead holder's lock words name nobody alive.
 *
 * d_*: changes of the region's totals made by commits under a lock that
 * names this slot and not yet folded into them (core/pool.c, DESIGN 10),
 * so that processes working on different files write no shared line. Only
 * ever changed by atomic operations: the owner's adds, and a fold's or a
 * recount's exchange with 0, by whoever makes it. They belong to no one
 * in particular: a dead process's stay, counted by every exact reader,
 * until its slot's next owner folds them or a recount counts them in.
 * One cache line a process.
 */
struct vl_proc {
	uint32_t tag;
	uint32_t pid;       /* as the /proc below shows it (readlink /proc/self) */
	uint64_t start;     /* its start time: clock ticks after boot (/proc/PID/stat) */
	uint64_t stack;     /* where its stack starts: set anew by each exec (0: unknown) */
	uint64_t procdev;   /* the /proc it saw itself in: only that /proc may judge it */
	uint64_t timens;    /* its time namespace, which shifts start times */
	int64_t d_vbytes;   /* unfolded: bytes in unpurged ranges */
	int64_t d_pbytes;   /* ... bytes in purged ranges */
	int32_t d_ranges;   /* ... ranges */
	int32_t d_purged;   /* ... purged ranges */
} __attribute__((aligned(64)));

#define VL_PROC_LIVE 0x80000000u
#define VL_PROC_DONE 0x40000000u
#define VL_PROCS 4096u /* slots, sentinel included: processes using a region at once */

/* ---- files ------------------------------------------------------------- */

#define VL_HOLDERS 4
#define VL_FILE_SIZE 512

enum vl_file_state {
	VL_FILE_FREE = 0,
	VL_FILE_LIVE = 1, /* in the hash table */
};

/*
 * Identity of a file: what survives an inode number being reused.
 *
 * (dev, ino) is not enough: tmpfs and memfd inode numbers come from
 * counters that wrap without checking what is still in use, and a tmpfs
 * mounted again at the same place gets the anonymous device number of the
 * one before it and hands out inode 2 again. The birth time does not
 * tell those apart either: tmpfs takes it from the coarse clock (4 ms
 * steps), so the first file of a tmpfs mounted again within the same
 * tick has the same (dev, ino, btime) as the first file of the last one.
 * What does tell them apart is the inode's generation, a random 32-bit
 * number tmpfs gives every inode and shows in its file handle
 * (name_to_handle_at): two inodes of one identity would need the same
 * device, inode number and birth tick and the same random generation.
 * ident.c says how it is had cheaply, and is the one place it is derived.
 */
struct vl_ident {
	uint64_t dev;
	uint64_t ino;
	int64_t btime_sec;
	uint32_t btime_nsec;
	uint32_t igen;   /* the inode's generation (its file handle's first word) */
};

/* THE identity check: every "is this the file?" in the library is this. */
static inline int vl_ident_same(const struct vl_ident *a, const struct vl_ident *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->btime_sec == b->btime_sec &&
	       a->btime_nsec == b->btime_nsec && a->igen == b->igen;
}

/*
 * An identity read or written while another thread or process may be
 * writing it (a record found without its lock, a slot of ident.c's
 * cache): field by field, relaxed, and judged by whoever guards it (the
 * file's lock, a sequence count).
 */
static inline void vl_ident_load(struct vl_ident *to, const struct vl_ident *from)
{
	to->dev = __atomic_load_n(&from->dev, __ATOMIC_RELAXED);
	to->ino = __atomic_load_n(&from->ino, __ATOMIC_RELAXED);
	to->btime_sec = __atomic_load_n(&from->btime_sec, __ATOMIC_RELAXED);
	to->btime_nsec = __atomic_load_n(&from->btime_nsec, __ATOMIC_RELAXED);
	to->igen = __atomic_load_n(&from->igen, __ATOMIC_RELAXED);
}

static inline void vl_ident_store(struct vl_ident *to, const struct vl_ident *from)
{
	__atomic_store_n(&to->dev, from->dev, __ATOMIC_RELAXED);
	__atomic_store_n(&to->ino, from->ino, __ATOMIC_RELAXED);
	__atomic_store_n(&to->btime_sec, from->btime_sec, __ATOMIC_RELAXED);
	__atomic_store_n(&to->btime_nsec, from->btime_nsec, __ATOMIC_RELAXED);
	__atomic_store_n(&to->igen, from->igen, __ATOMIC_RELAXED);
}

/*
 * A 64-bit mix, the finaliser of MurmurHash3: cheap, no table. The
 * checksums (layout.c), the tombstones' fingerprints (tomb.c) and every
 * hash of an identity (vl_ident_hash) are built on it.
 */
static inline uint64_t vl_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

/* a 64-bit mix folded to the 32 bits a sum keeps */
static inline uint32_t vl_fold32(uint64_t h)
{
	return (uint32_t)(h ^ (h >> 32));
}

/* ---- geometry arithmetic (both formats' plans, layout.c and layout10.c) --- */

static inline uint64_t vl_round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

static inline uint32_t vl_clamp32(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static inline uint32_t vl_pow2_at_least(uint64_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/*
 * The hash of a file's (dev, ino), the part of its identity known before
 * its generation and shared by twins (an inode number wrapped): the home
 * slot in the file table (core/pool.c) and in ident.c's cache. dev goes
 * into the high half, where tmpfs inode numbers rarely reach; one mix.
 */
static inline uint64_t vl_ident_hash(const struct vl_ident *id)
{
	return vl_mix64(id->ino ^ (id->dev << 32 | id->dev >> 32));
}

struct vl_holder {
	int32_t pid;
	int32_t fd;
};

/* file->flags: these bits, and from VL_FF_TURN_SHIFT up the holders' round robin (ops.c) */
#define VL_FF_TURN_SHIFT 8
#define VL_FF_ANON 0x1u       /* no name reached it at its last MARK (memfd) */
#define VL_FF_PATH_TRIED 0x2u /* we looked for a path once; don't again */
#define VL_FF_ASHMEM 0x4u     /* an ashmem region: ash holds its state, never a path;
				 the record lives until the file is gone, ranges or not */
#define VL_FF_TOMB 0x8u       /* made for an identity the tombstones hold (tomb.h),
				 or while the region served blind (DESIGN 16), or a
				 repair lost a range of it (rebuild.c lost_range):
				 every UNMARK of it says 1. Set before it is LIVE
				 but for a repair's, never cleared while it is */

/*
 * A file with volatile ranges. Guarded by the region lock: state, gen,
 * ident, check, next_free (and the hash table that points here), and the
 * ways to reach it (holders, path, flags), so a purger can copy them, and
 * what purges and evictions learnt of it (gone_since, checked_at).
 * Guarded by `lock` itself: root, lru_head, lru_tail, oldest, nranges,
 * npurged, vbytes, pbytes, and spare (a chain a MARK of another file may
 * yet take when the region is full, with the region lock and an atomic
 * exchange: vl_spare_steal). alive_at is a hint, stored by either. Both
 * locks are held to free the slot (the order: the table at struct vl_lock).
 *
 * The hash table, state and ident are also read with no lock at all, to
 * guess which slot is a file's (vl_file_probe); the guess is checked
 * under the file's lock, where a LIVE record cannot change identity. So
 * a slot's lock is initialised before the slot is first published, and
 * those fields are written with atomic stores.
 */
struct vl_file_hdr {
	struct vl_lock lock;
	struct vl_ident ident;
	uint32_t state;
	uint32_t gen;        /* bumped each time the slot is freed */
	uint32_t check;      /* vl_file_sum() of ident, state and gen */
	uint32_t next_free;
	uint32_t root;       /* range tree, ordered by start */
	uint32_t nranges;
	uint32_t npurged;    /* of which purged */
	uint32_t chunk;      /* the first slot of the chunk (VL_CHUNK) whose IDLE nodes
				its next changes take; VL_NIL: none */
	uint32_t lru_head;   /* its oldest unpurged range */
	uint32_t lru_tail;   /* its newest */
	uint32_t oldest;     /* lru_head's age, 0 if none: what purgers compare, unlocked */
	uint32_t vers;       /* odd while its lock is held: readers with no lock (status)
				take what they read between two equal even values */
	uint64_t vbytes;     /* bytes in unpurged ranges */
	uint64_t pbytes;     /* bytes in purged ranges */
	struct vl_holder holders[VL_HOLDERS];
	uint32_t path_len;   /* 0: no path known */
	uint32_t flags;      /* VL_FF_* */
	uint32_t gone_since; /* CLOCK_MONOTONIC s when first found gone; 0: not */
	uint32_t checked_at; /* CLOCK_MONOTONIC s of the last failed reach; 0: none */
	uint32_t alive_at;   /* CLOCK_MONOTONIC s of its last sign of life: made, a
				MARK or UNMARK that changed it, reached by an eviction
				(evict.c); 0: none seen */
	uint32_t pad;
};

/* vl_file_create clears a record from `check` on, keeping the lock, state and gen */
_Static_assert(offsetof(struct vl_file_hdr, state) < offsetof(struct vl_file_hdr, check) &&
		       offsetof(struct vl_file_hdr, gen) < offsetof(struct vl_file_hdr, check) &&
		       offsetof(struct vl_file_hdr, ident) < offsetof(struct vl_file_hdr, check),
	       "the fields a file record's reuse keeps come before check");

#define VL_PATH_MAX (VL_FILE_SIZE - sizeof(struct vl_file_hdr))

/* ---- ashmem regions ------------------------------------------------------ */

#define VL_ASH_NAME_LEN 256

/* ash.flags */
#define VL_ASH_MAPPED 0x1u /* mapped once: name and size are fixed */
#define VL_ASH_DEV 0x2u    /* opened as /dev/ashmem: fstat shows the device */
#define VL_ASH_PLAIN 0x4u  /* a memfd of its own: its size is the file's */
#define VL_ASH_FLAGS (VL_ASH_MAPPED | VL_ASH_DEV | VL_ASH_PLAIN)

/*
 * The state of an ashmem region, in the record of its memfd (VL_FF_ASHMEM),
 * shared by every process that holds the memfd. Guarded by the file's lock.
 * Not covered by the record's sum: read through vl_ash_state_ok().
 */
struct vl_ashmem {
	uint64_t size;               /* ASHMEM_SET_SIZE */
	uint32_t prot;               /* the mask: PROT_READ | PROT_WRITE | PROT_EXEC at most */
	uint32_t flags;              /* VL_ASH_* */
	char name[VL_ASH_NAME_LEN];  /* NUL-terminated; "" when never named */
};

struct vl_file {
	struct vl_file_hdr h;
	union {
		char path[VL_PATH_MAX]; /* a name that reached the file when marked */
		struct vl_ashmem ash;   /* VL_FF_ASHMEM: memfds have no path */
	};
};

/*
 * Does f's record hold state of its own (an ashmem region's name, size and
 * prot mask, where a path would go), so that it lives with its file, ranges
 * or not? What MARK, UNMARK, purges and moves ask, not knowing why.
 */
static inline int vl_file_holds_state(const struct vl_file *f)
{
	return (f->h.flags & VL_FF_ASHMEM) != 0;
}

/*
 * Is the record flagged, every UNMARK of it saying 1 (VL_FF_TOMB)? When
 * it goes, its identity must go to the tombstones then, purged ranges or
 * not: a repair's lost range (rebuild.c lost_range) is known nowhere else,
 * and a record made again unflagged would say 0 over its punched bytes.
 */
static inline int vl_file_flagged(const struct vl_file *f)
{
	return (__atomic_load_n(&f->h.flags, __ATOMIC_RELAXED) & VL_FF_TOMB) != 0;
}

/*
 * Must the record's identity go to the tombstones before its ranges go
 * (DESIGN 15; the one rule of evict.c, purge.c's drop and the release of
 * empty records)? When a purged one is among those that go, as its count
 * says (unpurged_only: none of them is purged), or when it is flagged.
 * Its caller looks again after the clear (vl_file_tomb_after): the count
 * may be wrong.
 */
static inline int vl_file_tomb_before(const struct vl_file *f, int unpurged_only)
{
	return (!unpurged_only && __atomic_load_n(&f->h.npurged, __ATOMIC_RELAXED) != 0) ||
	       vl_file_flagged(f);
}

/*
 * And after a clear that met d_purged purged ranges: a tombstone still
 * owed (none was put before: tomb_before 0), before the slot is freed.
 */
static inline int vl_file_tomb_after(int tomb_before, int unpurged_only, int64_t d_purged)
{
	return !tomb_before && !unpurged_only && d_purged != 0;
}

/* ---- byte counts of the whole region ------------------------------------ */

/*
 * A count of bytes over all files, exact in 128 bits, as two 64-bit
 * halves. One file's ranges lie in [0, 2^63) and never overlap, so its
 * own counts (vbytes, pbytes) fit in 64 bits; a sum over files does not:
 * three memfds marked [0, LLONG_MAX) wrapped a 64-bit count, and a budget
 * was then met, or never. Halves rather than unsigned __int128: the same
 * layout on every ABI and compiler, and no __int128 where there is none.
 * The stored value is never saturated (adds and subtracts must undo each
 * other exactly); only a report in 64 bits clamps, with vl_u128_sat.
 */
struct vl_u128 {
	uint64_t lo;
	uint64_t hi;
};

static inline void vl_u128_add(struct vl_u128 *a, uint64_t v)
{
	a->lo += v;
	a->hi += a->lo < v; /* the carry */
}

static inline void vl_u128_sub(struct vl_u128 *a, uint64_t v)
{
	a->hi -= a->lo < v; /* the borrow */
	a->lo -= v;
}

/* Below, equal to or above v: < 0, 0, > 0. */
static inline int vl_u128_cmp(const struct vl_u128 *a, uint64_t v)
{
	if (a->hi != 0)
		return 1;
	return a->lo < v ? -1 : a->lo > v;
}

/* The count in 64 bits: UINT64_MAX when it does not fit. */
static inline uint64_t vl_u128_sat(const struct vl_u128 *a)
{
	return a->hi != 0 ? UINT64_MAX : a->lo;
}

/*
 * The same, on counts in the region that many processes change at once
 * with no lock: the low half by one atomic add, the carry (or borrow)
 * into the high half by another, decided by the value the first add
 * found. Adds commute, so the stored value is exact once both are done;
 * a reader between the two (a carry every 2^64 bytes) sees it 2^64 off
 * for that instant, and one killed between them leaves it so.
 */
static inline void vl_u128_add_shared(struct vl_u128 *a, uint64_t v)
{
	uint64_t old = __atomic_fetch_add(&a->lo, v, __ATOMIC_RELAXED);

	if (old + v < old)
		__atomic_fetch_add(&a->hi, 1, __ATOMIC_RELAXED);
}

static inline void vl_u128_sub_shared(struct vl_u128 *a, uint64_t v)
{
	uint64_t old = __atomic_fetch_sub(&a->lo, v, __ATOMIC_RELAXED);

	if (old < v)
		__atomic_fetch_sub(&a->hi, 1, __ATOMIC_RELAXED);
}

static inline struct vl_u128 vl_u128_load(const struct vl_u128 *a)
{
	struct vl_u128 v;

	v.hi = __atomic_load_n(&a->hi, __ATOMIC_RELAXED);
	v.lo = __atomic_load_n(&a->lo, __ATOMIC_RELAXED);
	return v;
}

/* ---- header ------------------------------------------------------------ */

struct vl_geometry {
	uint64_t magic;
	uint32_t format;       /* vl_format(): version and every ABI size */
	uint32_t header_size;
	uint64_t region_size;
	uint32_t node_cap;     /* slots, sentinel included */
	uint32_t file_cap;
	uint32_t hash_cap;     /* a power of two */
	uint32_t check;        /* vl_geometry_sum() of all of the above */
	uint64_t tomb_off;     /* VL_TOMB_BYTES of tombstones, right after the header */
	uint64_t files_off;
	uint64_t hash_off;
	uint64_t nodes_off;
	uint64_t procs_off;    /* VL_PROCS struct vl_proc, after the nodes */
};

/*
 * The region's counters, in three groups on their own cache lines: the
 * file table's (region lock), the node allocator's and the ages and
 * totals (both only ever changed by atomic operations, with no lock).
 */
struct vl_counters {
	uint32_t file_hwm;   /* file slots [1, hwm) have been used at least once */
	uint32_t file_free;
	uint32_t files_used;
	uint32_t file_ready; /* file slots below this have their pages in memory */
	uint32_t evicted;    /* records evicted to make room (evict.c) */
	/*
	 * 1: a repair's recount of the totals found a file lock held and left
	 * them as they were; the next file lock dropped tries again (region.c).
	 * Written under the region lock, read with none.
	 */
	uint32_t recount_owed;
	/*
	 * 1: every commit counts on the shared totals, none in its process's
	 * slot (pool.c): set for good by the first process with a budget, whose
	 * MARKs need them exact (lock.c vl_totals_share). On recount_owed's
	 * line, which every commit reads anyway (vl_unlock_file) and which only
	 * the region lock's holder writes (files made and freed, recounts), so
	 * reading it costs no other line. Since ages come from the clock no
	 * region-wide line is written by every commit to put it on (DESIGN 10).
	 */
	uint32_t shared_totals;
	/* the free list of nodes: (tag << 32) | head; the tag defeats ABA */
	uint64_t node_top __attribute__((aligned(64)));
	uint32_t node_hwm;   /* node slots [VL_CHUNK, hwm) have been used at least once:
				whole chunks */
	uint32_t node_ready; /* node slots below this have their pages in memory */
	uint32_t nodes_used; /* in chunks in use (VL_CHUNK each): a file's changes
				within its chunk touch no line of the allocator's */
	/*
	 * The node slot where a full region's next look for files holding
	 * PENDING nodes starts (pool.c vl_pending_owners): written only by
	 * a look that found all it takes; 0 (as made) is the first slot.
	 */
	uint32_t repair_from;
	/* the clock ages are read from (VL_AGE_CLOCK), written at creation only */
	uint32_t age_clock __attribute__((aligned(64)));
	uint32_t ranges;     /* live ranges */
	uint32_t ranges_purged;
	uint32_t pad2;
	struct vl_u128 volatile_bytes; /* the sum of the files' vbytes */
	struct vl_u128 purged_bytes;   /* ... and of their pbytes */
	uint64_t purges;
	/* host ms (vl_age_ms) of the last look for ages near the wrap: age.c */
	uint64_t ages_tended;
	struct vl_u128 purged_total;
};

/* every commit reads shared_totals; vl_unlock_file reads recount_owed: one line */
_Static_assert(offsetof(struct vl_counters, shared_totals) / 64 ==
		       offsetof(struct vl_counters, recount_owed) / 64,
	       "shared_totals shares recount_owed's line");

/*
 * What became of a region whose name no longer leads to it (removed,
 * renamed, replaced; or the default place changed): its records are
 * moved into the region new processes find, so that processes that used
 * the old one and processes started since converge on one (src/move.c).
 *
 * retired: 0 in use; VL_RETIRING a mover is at work (every file lock
 * taken from then on says ESTALE: the caller moves on to the new region);
 * VL_MOVED all its records are in the region named in moved_to.
 * waiting: VL_WAITING, set by the creator of a region while older regions
 * that are still mapped have not been moved into it: it answers nothing
 * (ESTALE) until they are, so that no process answers from a region that
 * lacks what another process may still be purging elsewhere; or VL_BLIND
 * when the only ones left are removed ones nobody here can open, after
 * the young period and with no punch of theirs in flight (attach.c): it
 * serves, and an UNMARK says 1 of anything it does not hold whole (ops.c).
 * moved_from: the
 * old regions (file device and inode) whose records are here, and theirs
 * in turn, so that a mapping of one of them seen later is known done.
 */
#define VL_RETIRING 1u
#define VL_MOVED 2u
#define VL_MOVED_MAX 62
/* waiting: */
#define VL_WAITING 1u /* answers nothing (ESTALE) */
#define VL_BLIND 2u   /* serves, though an older region whose name is gone, that no one here
			 can open, may hold records of its files (attach.c, DESIGN 16) */

struct vl_fate {
	struct vl_lock move_lock; /* one mover at a time; taken before any other lock */
	uint32_t retired;
	uint32_t waiting;
	uint32_t nmoved;
	uint32_t chosen;          /* made at the default place (default_place.c), not VOLATILE_REGION */
	char path[256];           /* the name it was made with; its successors have the same */
	struct {
		uint64_t dev;
		uint64_t ino;
	} moved_from[VL_MOVED_MAX]; /* guarded by the region lock */
	/*
	 * When the region was first seen at its name by a process settling it:
	 * (time namespace << 32) | CLOCK_MONOTONIC_COARSE in ms, mod 2^32
	 * (never 0); 0 not yet. Set once, by compare-and-swap (attach.c). In
	 * what was padding: regions of version 6 made before it read 0.
	 */
	uint64_t young;
};
_Static_assert(sizeof(struct vl_fate) == 1280, "the fate keeps its size: the log after it stays");

/*
 * The last purges, for `volatile status` (what was purged, when, by whom,
 * why): a ring that every purge that freed something writes one entry of,
 * with no lock. An entry's seq is odd while it is written and 2i + 2 once
 * entry i is whole; a reader takes an entry only between two equal even
 * values that name the index it wants, so a torn or overtaken entry is
 * skipped, never shown. A writer claims its entry's slot by compare-and-swap
 * and drops its entry if another writer is still inside that slot (the ring
 * wrapped onto a stalled writer), so no two writers' stores ever mix in one
 * entry. Nothing decides anything from it.
 */
enum vl_purge_reason {
	VL_PURGE_OTHER = 0,
	VL_PURGE_BUDGET = 1,  /* VOLATILE_BUDGET, at a MARK */
	VL_PURGE_MEMORY = 2,  /* low memory, at a MARK or by the daemon */
	VL_PURGE_TMPFS = 3,   /* a nearly full tmpfs, at a MARK or by the daemon */
	VL_PURGE_COMMAND = 4, /* volatile purge */
	VL_PURGE_API = 5,     /* volatile_purge() */
	VL_PURGE_ASHMEM = 6,  /* ASHMEM_PURGE_ALL_CACHES */
	VL_PURGE_SYSTEM = 7,  /* the machine's daemon, through the user's worker (DESIGN 22) */
};

#define VL_PURGE_LOG 32

struct vl_purge_entry {
	uint64_t seq;
	uint64_t at_ms;   /* CLOCK_MONOTONIC_COARSE, milliseconds */
	uint64_t bytes;
	uint32_t ranges;
	int32_t pid;      /* the purging process, as /proc shows it */
	uint32_t reason;  /* enum vl_purge_reason */
	uint32_t pad;
};

struct vl_purge_log {
	uint64_t next; /* entries written so far */
	struct vl_purge_entry e[VL_PURGE_LOG] __attribute__((aligned(64)));
};

void vl_purge_log_add(struct vl_purge_log *l, uint64_t at_ms, uint64_t bytes, uint32_t ranges,
		      int32_t pid, uint32_t reason);
/* Up to max of the last entries, newest first, copied whole: how many. */
int vl_purge_log_read(const struct vl_purge_log *l, struct vl_purge_entry *out, int max);
/* "budget", "memory"...; "other" for a reason not known */
const char *vl_purge_reason_name(uint32_t reason);

struct vl_header {
	struct vl_geometry geo;
	/* its own cache line: the geometry is read-only after creation */
	struct vl_lock lock __attribute__((aligned(64))); /* the region lock */
	struct vl_counters c;       /* guarded by lock */
	struct vl_fate fate __attribute__((aligned(64)));
	struct vl_purge_log log __attribute__((aligned(64)));
};

/*
 * Where the region starts in its file. The bytes before it are a hole (no
 * memory): a mapping at this offset is how a region is recognised in
 * /proc/PID/maps, whatever its file's name has become (region.c).
 */
#define VL_MAP_OFFSET 0x564c000ull
/* the tag bytes in that hole, one per user and region name (region.c) */
#define VL_TAG_BASE 4096ull
#define VL_TAG_SPAN (VL_MAP_OFFSET - 2 * VL_TAG_BASE)

/* ---- a mapped region, as one process sees it --------------------------- */

struct vl_tomb;

struct vl_region {
	struct vl_header *hdr;
	struct vl_tomb *tomb;
	struct vl_file *files;
	uint32_t *hash;
	struct vl_node *nodes;
	struct vl_proc *procs;
	uint64_t serial;    /* this mapping, among the mappings this process made */
	uint64_t file_dev;  /* the region file, as it was opened */
	uint64_t file_ino;
	const char *path;   /* the name it was opened by (NULL: none, a test's) */
	uint32_t node_cap;  /* copied from the header at attach and trusted */
	uint32_t file_cap;
	uint32_t hash_cap;
	size_t size;
};

/*
 * VL_ASSERT_HELD(r, l): the caller holds lock l of region r, as a
 * function whose comment says "(... lock held)" needs. Checked in the
 * library's debug build (VL_DEBUG_LOCKS: tests/debug, which make check
 * preloads), where a lock not held by this process aborts with a line
 * naming the lock and the function (vl_lock_assert_held, lock.c);
 * nothing at all in the release library, the unit tests and the fuzz
 * targets. It tells this process from others, not one thread from
 * another: a lock word holds a process's token (lock.c).
 */
/*
 * VL_ASSERT_MINE(l): the same for a function not given the region (the
 * tombstones', core/tomb.c): l's word names a token this process holds in
 * any of its mappings (vl_self_owns_token), as the region is not there to
 * say which. Weaker by that much; the same line and abort.
 */
#ifdef VL_DEBUG_LOCKS
void vl_lock_assert_held(const struct vl_region *r, const struct vl_lock *l, const char *lock,
			 const char *func);
void vl_lock_assert_mine(const struct vl_lock *l, const char *lock, const char *func);
#define VL_ASSERT_HELD(r, l) vl_lock_assert_held((r), (l), #l, __func__)
#define VL_ASSERT_MINE(l) vl_lock_assert_mine((l), #l, __func__)
#else
#define VL_ASSERT_HELD(r, l) ((void)sizeof(r), (void)sizeof(l))
#define VL_ASSERT_MINE(l) ((void)sizeof(l))
#endif

/*
 * Steps (DESIGN 10: garbage is never a loop). Every loop over the region
 * reads a node or a file record through vl_node_at or vl_file_at, or a
 * slot of the file table (VL_WALK at the probe), at each iteration. A
 * build with VL_COUNT_STEPS (the fuzz targets, tests/fuzz) counts those
 * reads, so that a fuzzer holds every call of the core to VL_WALK_BOUND
 * steps whatever the region holds; elsewhere VL_WALK is nothing.
 */
#ifdef VL_COUNT_STEPS
extern unsigned long vl_walk_steps;
#define VL_WALK() ((void)vl_walk_steps++)
#else
#define VL_WALK() ((void)0)
#endif

/*
 * The most steps one call of the core takes over r, whatever r holds: a
 * constant times the region's slots (ranges + files + the file table's).
 * The constant is the deepest a tree walk goes for one range
 * (VL_RB_MAX_DEPTH, rtree.h) times the few reads of one step.
 */
#define VL_WALK_C 256u
#define VL_WALK_BOUND(r) \
	((uint64_t)VL_WALK_C * ((uint64_t)(r)->node_cap + (r)->file_cap + (r)->hash_cap))

/* Clamp an index read from shared memory into its array. */
static inline struct vl_node *vl_node_at(const struct vl_region *r, uint32_t i)
{
	VL_WALK();
	return &r->nodes[i < r->node_cap ? i : VL_NIL];
}

static inline struct vl_file *vl_file_at(const struct vl_region *r, uint32_t i)
{
	VL_WALK();
	return &r->files[i < r->file_cap ? i : VL_NIL];
}

static inline struct vl_counters *vl_counters(const struct vl_region *r)
{
	return &r->hdr->c;
}

static inline struct vl_proc *vl_proc_at(const struct vl_region *r, uint32_t i)
{
	return &r->procs[i < VL_PROCS ? i : VL_NIL];
}

/*
 * The node at i to write, or NULL for VL_NIL or an index out of range.
 * Reads clamp every bad index to slot 0, so slot 0 must read as all zeros
 * for ever: one write there would hand its values (links, above all) to
 * every bad index read after it, and a corrupt tree would spread.
 */
static inline struct vl_node *vl_node_w(const struct vl_region *r, uint32_t i)
{
	return i != VL_NIL && i < r->node_cap ? &r->nodes[i] : NULL;
}

/*
 * Every write of a link goes through one of these: a bad index writes
 * nothing. vl_set_left, vl_set_right, vl_set_parent (the whole word:
 * parent index << 1 | colour), vl_set_prev, vl_set_next.
 */
#define VL_LINK_SETTER(field)                                                             \
	static inline void vl_set_##field(const struct vl_region *r, uint32_t i, uint32_t v) \
	{                                                                                 \
		struct vl_node *x = vl_node_w(r, i);                                      \
                                                                                          \
		if (x != NULL)                                                            \
			x->field = v;                                                     \
	}
VL_LINK_SETTER(left)
VL_LINK_SETTER(right)
VL_LINK_SETTER(parent)
VL_LINK_SETTER(prev)
VL_LINK_SETTER(next)
#undef VL_LINK_SETTER

/* File slots ever used, [1, hwm): the high-water mark, clamped into the table. */
static inline uint32_t vl_file_hwm(const struct vl_region *r)
{
	uint32_t hwm = r->hdr->c.file_hwm;

	return hwm < r->file_cap ? hwm : r->file_cap;
}

static inline uint32_t vl_node_file(const struct vl_node *n)
{
	return n->meta & VL_META_FILE_MASK;
}

static inline unsigned vl_node_state(const struct vl_node *n)
{
	return (n->meta & VL_META_STATE_MASK) >> VL_META_STATE_SHIFT;
}

static inline int vl_node_purged(const struct vl_node *n)
{
	return (n->meta & VL_META_PURGED) != 0;
}

/*
 * Ages (DESIGN 10). An age is the host's CLOCK_MONOTONIC_COARSE in
 * milliseconds, mod 2^32, never 0 (0 says "no range"): comparable across
 * files, regions and users, and written to no shared counter. An age is
 * read as its distance back from the reader's now, mod 2^32: exact for
 * every age less than 2^32 ms (49.7 days) old. No age stays older than
 * VL_AGE_RESTAMP_MS: ranges that reach it are restamped to it under their
 * file's lock (vl_lru_restamp, at least once an hour while the region is
 * used: age.c). A distance beyond VL_AGE_PAST_MS then only comes from a
 * stamp ahead of the reader's clock (a reading of another CPU a tick on,
 * another time namespace, a scribble): it reads as now, the youngest.
 */
#define VL_AGE_CLOCK 1u                          /* CLOCK_MONOTONIC_COARSE, ms, the host's */
#define VL_AGE_RESTAMP_MS 3456000000u            /* 40 days */
#define VL_AGE_PAST_MS 4147200000u               /* 48 days: 1.7 days short of the wrap */

/* The stamp of a clock reading: never 0, which says "no range". */
static inline uint32_t vl_age_stamp(uint32_t ms)
{
	return ms != 0 ? ms : UINT32_MAX;
}

/* How long before now, in ms, age a was stamped: a stamp ahead of now reads as now. */
static inline uint32_t vl_age_back(uint32_t a, uint32_t now)
{
	uint32_t d = now - a;

	return d <= VL_AGE_PAST_MS ? d : 0;
}

/* Is age a older than age b, for a reader whose clock reads now? */
static inline int vl_age_older(uint32_t a, uint32_t b, uint32_t now)
{
	return vl_age_back(a, now) > vl_age_back(b, now);
}

static inline uint32_t vl_meta(uint32_t file, unsigned state, int purged)
{
	return (file & VL_META_FILE_MASK) | ((uint32_t)state << VL_META_STATE_SHIFT) |
	       (purged ? VL_META_PURGED : 0);
}

/* ---- integrity --------------------------------------------------------- */

uint32_t vl_format(void);
/* the format word's bits that name this ABI, not a format (both formats') */
uint32_t vl_format_abi(void);
/*
 * Each word times its own odd constant (a bijection: a change of any one
 * word changes the sum of them all), folded to 32 bits. No mix after: a
 * sum is computed for every node a MARK, UNMARK or purge looks at and
 * every node it writes, and it only has to tell a node as written from
 * one torn or scribbled, not to spread bits. Inline: a call would make
 * every caller load the region's node table again.
 */
static inline uint32_t vl_node_sum_at(const struct vl_node *n, uint32_t slot)
{
	/* the slot number is summed too: a node copied elsewhere is caught */
	uint64_t h = n->start * 0x9e3779b97f4a7c15ull + n->end * 0xc2b2ae3d27d4eb4full +
		     (((uint64_t)n->meta << 32) | n->seq) * 0x165667b19e3779f9ull +
		     ((uint64_t)slot + 1) * 0xd6e8feb86659fd93ull;

	return (uint32_t)(h ^ (h >> 32));
}

/*
 * vl_node_sum_at(n, its slot): the slot found again from the address, a
 * division by the node's size. Callers that hold the index pass it.
 */
static inline uint32_t vl_node_sum(const struct vl_region *r, const struct vl_node *n)
{
	return vl_node_sum_at(n, (uint32_t)(n - r->nodes));
}

uint32_t vl_file_sum(const struct vl_region *r, const struct vl_file *f);
/* the sum f will have once its state and gen are these */
uint32_t vl_file_sum_as(const struct vl_region *r, const struct vl_file *f, uint32_t state,
			uint32_t gen);
uint32_t vl_geometry_sum(const struct vl_geometry *g);

static inline void vl_node_seal(const struct vl_region *r, struct vl_node *n)
{
	n->check = vl_node_sum(r, n);
}

/* The same for node n at slot i (n is &r->nodes[i]). */
static inline void vl_node_seal_at(struct vl_node *n, uint32_t i)
{
	n->check = vl_node_sum_at(n, i);
}

static inline int vl_node_ok(const struct vl_region *r, const struct vl_node *n)
{
	return n->check == vl_node_sum(r, n) && n->start < n->end;
}

static inline void vl_file_seal(const struct vl_region *r, struct vl_file *f)
{
	f->h.check = vl_file_sum(r, f);
}

static inline int vl_file_ok(const struct vl_region *r, const struct vl_file *f)
{
	return f->h.check == vl_file_sum(r, f);
}

/* ---- geometry ---------------------------------------------------------- */

#define VL_DEFAULT_RANGES (1u << 21) /* 2,097,152 ranges */
#define VL_DEFAULT_FILES 65535u  /* with the sentinel, a power of two: a 512 KiB index */
#define VL_MIN_RANGES 8u
#define VL_MAX_RANGES (1u << 30)     /* parent links keep 31 bits */
#define VL_MAX_FILES (VL_META_FILE_MASK + 1u)

/*
 * Lay out a region for `ranges` ranges and `files` files (both rounded and
 * clamped to what the format allows); fills in *g completely.
 */
void vl_geometry_plan(struct vl_geometry *g, uint32_t ranges, uint32_t files);

/*
 * Check a geometry read from a region `size` bytes long. Returns 0, or
 * -EPROTO (another version or ABI), -EUCLEAN (inconsistent).
 */
int vl_geometry_check(const struct vl_geometry *g, uint64_t size);

/* Point r at the arrays of a region mapped at base (geometry checked). */
void vl_region_bind(struct vl_region *r, void *base, size_t size);

/*
 * Initialise the region mapped at base: its counters and its fate. The
 * locks need nothing, a zero word being a free lock (struct vl_lock), so
 * base must be zero-filled.
 */
void vl_region_format(void *base, const struct vl_geometry *g);

#endif /* VL_LAYOUT_H */
