/* SPDX-License-Identifier: MIT */
/*
 * plant.c - test helper: make the region look as if FILE's inode number
 * had belonged to an older file with volatile ranges.
 *
 * tmpfs reuses an inode number only after a 32-bit counter wraps, which a
 * test cannot wait for. What reuse leaves behind is a record with the same
 * device and inode but another birth time; this program writes exactly
 * that record, through the library's own allocator, so the shell test can
 * check what a new file with that inode number inherits (nothing) and that
 * a purge never punches the new file through the old record.
 *
 *   plant FILE PURGED_OFF PURGED_LEN VOLATILE_OFF VOLATILE_LEN
 *
 * And one scribble, as a buggy process of the same user might make:
 *
 *   plant scribble FILE OTHER
 *       overwrite the identity in FILE's record with OTHER's, without
 *       rewriting the record's sum: a purge must not trust that record.
 *
 * And the lock words, as a process that died or scribbled leaves them:
 *
 *   plant lockword region|FILE dead|broken|junk:SEED|HEX
 *       the region lock, or FILE's record's lock: "dead" names a process
 *       slot that nobody holds (a holder that died, its slot freed since),
 *       "broken" a lock whose repair failed, "junk:SEED" random bytes over
 *       the whole lock, HEX that word.
 *
 *   plant end FILE START END
 *       overwrite the end of FILE's range that starts at START with END,
 *       without rewriting the node's sum: a stray write into a node.
 *
 *   plant node FILE START FIELD VALUE
 *       the same for any field of that node: start, end, meta (owner,
 *       state, purged bit), left, right or parent (the links, which no
 *       sum covers); VALUE as strtoull reads it (0x for hex).
 *
 *   plant link FILE START left|right TARGET|none
 *       make a link of FILE's range that starts at START name the range
 *       that starts at TARGET, or none: a walk in key order may then go
 *       from the one to the other, past what lies between, or a subtree
 *       be cut off.
 *
 *   plant record FILE FIELD VALUE
 *       a field of FILE's record that no sum covers: nranges, npurged,
 *       pbytes, root or flags.
 */
#include "core/layout.h"
#include "core/pool.h"
#include "core/ranges.h"
#include "core/rtree.h"
#include "env.h"
#include "ident.h"
#include "region.h"
#include "sys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_range(struct vl_region *r, uint32_t fi, uint64_t off, uint64_t len, int purge)
{
	struct vl_file *f = vl_file_at(r, fi);
	struct vl_change c;
	uint32_t spare = vl_node_alloc(r, fi);

	if (vl_ranges_mark(r, &f->h.root, fi, off, off + len, spare, &c) != 0)
		return -1;
	c.age = vl_age_stamp((uint32_t)vl_now_ms()); /* as a MARK in the initial time namespace */
	vl_commit(r, fi, &c, spare);
	if (purge) {
		if (vl_ranges_purge(r, &f->h.root, fi, c.keep, &c) != 0)
			return -1;
		vl_commit(r, fi, &c, VL_NIL);
	}
	return 0;
}

static int scribble(const char *file, const char *other)
{
	const struct vl_config *cfg = vl_config();
	struct vl_region r;
	struct vl_stat a, b;
	uint32_t fi;

	if (vl_sys_stat_at(-100, file, 1, &a) != 0 || vl_sys_stat_at(-100, other, 1, &b) != 0 ||
	    vl_region_open(cfg->region, 0, 0, 0, &r) != 0 || vl_lock_region(&r) != 0) {
		fprintf(stderr, "plant: cannot stat the files or open the region\n");
		return 1;
	}
	if (vl_file_lookup(&r, &a.id, &fi) != 0 || fi == VL_NIL) {
		fprintf(stderr, "plant: %s has no record\n", file);
		return 1;
	}
	vl_file_at(&r, fi)->h.ident = b.id; /* and no new sum */
	vl_unlock_region(&r);
	printf("scribbled file %u: it claims to be %s\n", fi, other);
	return 0;
}

/*
 * A field of node n set to v, as a stray write leaves it: no new sum. 0,
 * or -1 for a name that is no field.
 */
static int set_field(struct vl_node *n, const char *field, uint64_t v)
{
	if (strcmp(field, "start") == 0)
		n->start = v;
	else if (strcmp(field, "end") == 0)
		n->end = v;
	else if (strcmp(field, "meta") == 0)
		n->meta = (uint32_t)v;
	else if (strcmp(field, "left") == 0)
		n->left = (uint32_t)v;
	else if (strcmp(field, "right") == 0)
		n->right = (uint32_t)v;
	else if (strcmp(field, "parent") == 0)
		n->parent = (uint32_t)v;
	else
		return -1;
	return 0;
}

/* FILE's record in the region, opened: 0, or 1 (said why). */
static int record_of(struct vl_region *r, const char *file, uint32_t *fi)
{
	const struct vl_config *cfg = vl_config();
	struct vl_stat st;

	if (vl_sys_stat_at(-100, file, 1, &st) != 0 || vl_region_open(cfg->region, 0, 0, 0, r) != 0) {
		fprintf(stderr, "plant: cannot stat %s or open the region\n", file);
		return 1;
	}
	if (vl_file_lookup(r, &st.id, fi) != 0 || *fi == VL_NIL) {
		fprintf(stderr, "plant: %s has no record\n", file);
		return 1;
	}
	return 0;
}

/* The node of file fi's range that starts at start, or VL_NIL (said why). */
static uint32_t node_at_start(const struct vl_region *r, uint32_t fi, uint64_t start)
{
	uint32_t x, steps = 0;

	for (x = vl_rb_first(r, vl_file_at(r, fi)->h.root); x != VL_NIL && steps++ < r->node_cap;
	     x = vl_rb_next(r, x))
		if (vl_node_at(r, x)->start == start)
			return x;
	fprintf(stderr, "plant: no range at %llu\n", (unsigned long long)start);
	return VL_NIL;
}

/* A field of FILE's range that starts at start set to v, the region locked. */
static int scribble_node(const char *file, uint64_t start, const char *field, uint64_t v)
{
	struct vl_region r;
	struct vl_node *n;
	uint32_t fi, x;

	if (record_of(&r, file, &fi) != 0 || vl_lock_region(&r) != 0)
		return 1;
	x = node_at_start(&r, fi, start);
	if (x == VL_NIL) {
		vl_unlock_region(&r);
		return 1;
	}
	n = vl_node_at(&r, x);
	if (set_field(n, field, v) != 0) {
		vl_unlock_region(&r);
		fprintf(stderr, "plant: no node field %s\n", field);
		return 2;
	}
	vl_unlock_region(&r);
	printf("scribbled node %u of file %u: [%llu, %llu) meta %#x left %u right %u parent %#x\n",
	       x, fi, (unsigned long long)n->start, (unsigned long long)n->end, n->meta, n->left,
	       n->right, n->parent);
	return 0;
}

/* A link of FILE's range at start made to name the range at target, or none. */
static int scribble_link(const char *file, uint64_t start, const char *which, const char *target)
{
	struct vl_region r;
	uint32_t fi, y = VL_NIL;

	if (strcmp(which, "left") != 0 && strcmp(which, "right") != 0) {
		fprintf(stderr, "plant: no link %s\n", which);
		return 2;
	}
	if (strcmp(target, "none") != 0 &&
	    (record_of(&r, file, &fi) != 0 ||
	     (y = node_at_start(&r, fi, strtoull(target, NULL, 0))) == VL_NIL))
		return 1;
	return scribble_node(file, start, which, y);
}

/* A field of FILE's record set to v without its sum (none covers these). */
static int scribble_record(const char *file, const char *field, uint64_t v)
{
	struct vl_region r;
	struct vl_file *f;
	uint32_t fi;

	if (record_of(&r, file, &fi) != 0)
		return 1;
	f = vl_file_at(&r, fi);
	if (strcmp(field, "nranges") == 0)
		f->h.nranges = (uint32_t)v;
	else if (strcmp(field, "npurged") == 0)
		f->h.npurged = (uint32_t)v;
	else if (strcmp(field, "pbytes") == 0)
		f->h.pbytes = v;
	else if (strcmp(field, "root") == 0)
		f->h.root = (uint32_t)v;
	else if (strcmp(field, "flags") == 0)
		f->h.flags = (uint32_t)v;
	else {
		fprintf(stderr, "plant: no record field %s\n", field);
		return 2;
	}
	printf("scribbled file %u: %s %llu\n", fi, field, (unsigned long long)v);
	return 0;
}

static int lockword(const char *which, const char *what)
{
	const struct vl_config *cfg = vl_config();
	struct vl_region r;
	struct vl_lock *l;

	if (vl_region_open(cfg->region, 0, 0, 0, &r) != 0) {
		fprintf(stderr, "plant: cannot open the region\n");
		return 1;
	}
	if (strcmp(which, "region") == 0) {
		l = &r.hdr->lock;
	} else {
		struct vl_stat st;
		uint32_t fi;

		if (vl_sys_stat_at(-100, which, 1, &st) != 0 || vl_file_lookup(&r, &st.id, &fi) != 0 ||
		    fi == VL_NIL) {
			fprintf(stderr, "plant: %s has no record\n", which);
			return 1;
		}
		l = &vl_file_at(&r, fi)->h.lock;
	}
	if (strcmp(what, "dead") == 0) {
		/* the last slot, never taken by a test's few processes: its generation 3 is nobody */
		l->word = VL_TOKEN(VL_PROCS - 1, 3);
	} else if (strcmp(what, "broken") == 0) {
		l->word = VL_LOCK_BROKEN;
	} else if (strncmp(what, "junk:", 5) == 0) {
		unsigned char *b = (unsigned char *)l;

		srand((unsigned)strtoul(what + 5, NULL, 0));
		for (size_t i = 0; i < sizeof(*l); i++)
			b[i] = (unsigned char)rand();
	} else {
		l->word = (uint32_t)strtoul(what, NULL, 16);
	}
	printf("lock %s: word %#x\n", which, l->word);
	return 0;
}

int main(int argc, char **argv)
{
	const struct vl_config *cfg = vl_config();
	struct vl_region r;
	struct vl_stat st;
	struct vl_ident old;
	uint32_t fi;

	if (argc == 4 && strcmp(argv[1], "scribble") == 0)
		return scribble(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "lockword") == 0)
		return lockword(argv[2], argv[3]);
	if (argc == 5 && strcmp(argv[1], "end") == 0)
		return scribble_node(argv[2], strtoull(argv[3], NULL, 0), "end",
				     strtoull(argv[4], NULL, 0));
	if (argc == 5 && strcmp(argv[1], "record") == 0)
		return scribble_record(argv[2], argv[3], strtoull(argv[4], NULL, 0));
	if (argc == 6 && strcmp(argv[1], "link") == 0)
		return scribble_link(argv[2], strtoull(argv[3], NULL, 0), argv[4], argv[5]);
	if (argc == 6 && strcmp(argv[1], "node") == 0)
		return scribble_node(argv[2], strtoull(argv[3], NULL, 0), argv[4],
				     strtoull(argv[5], NULL, 0));
	if (argc != 6) {
		fprintf(stderr, "usage: plant FILE POFF PLEN VOFF VLEN\n");
		return 2;
	}
	if (vl_sys_stat_at(-100 /* AT_FDCWD */, argv[1], 1, &st) != 0 ||
	    vl_region_open(cfg->region, 1, cfg->create_ranges, cfg->create_files, &r) != 0 ||
	    vl_lock_region(&r) != 0) {
		fprintf(stderr, "plant: cannot stat %s or open the region\n", argv[1]);
		return 1;
	}
	old = st.id;
	old.btime_sec -= 3600; /* an hour older: another file */
	if (vl_file_new(&r, &old, &fi) != 0) {
		fprintf(stderr, "plant: region full\n");
		return 1;
	}
	/* the old file was reachable by the same name */
	snprintf(vl_file_at(&r, fi)->path, VL_PATH_MAX, "%s", argv[1]);
	vl_file_at(&r, fi)->h.path_len = (uint32_t)strlen(vl_file_at(&r, fi)->path);
	if (add_range(&r, fi, strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0), 1) != 0 ||
	    add_range(&r, fi, strtoull(argv[4], NULL, 0), strtoull(argv[5], NULL, 0), 0) != 0) {
		fprintf(stderr, "plant: cannot add ranges\n");
		return 1;
	}
	vl_unlock_region(&r);
	printf("planted file %u: dev %llu ino %llu, born an hour earlier\n", fi,
	       (unsigned long long)old.dev, (unsigned long long)old.ino);
	return 0;
}
