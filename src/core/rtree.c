/* SPDX-License-Identifier: MIT */
/*
 * rtree.c - red-black tree by index (see rtree.h).
 *
 * The algorithms are the textbook ones (Cormen et al., chapter 13), with
 * VL_NIL standing for the absent child: it is black, and it is never
 * written. Every link is written through the guarded setters of layout.h,
 * which drop a write to VL_NIL or past the array: a scribbled link may
 * lead anywhere, but slot 0 stays zero whatever shape the tree is in.
 */
#include "rtree.h"

#include "fault.h"

#include <errno.h>

#define BLACK 1u

static inline uint32_t parent_of(const struct vl_region *r, uint32_t i)
{
	return vl_node_at(r, i)->parent >> 1;
}

static inline int is_black(const struct vl_region *r, uint32_t i)
{
	return i == VL_NIL || (vl_node_at(r, i)->parent & BLACK);
}

static inline int real(const struct vl_region *r, uint32_t i)
{
	return vl_node_w(r, i) != NULL;
}

static inline void set_parent(const struct vl_region *r, uint32_t i, uint32_t p)
{
	vl_set_parent(r, i, (p << 1) | (vl_node_at(r, i)->parent & BLACK));
}

static inline void set_black(const struct vl_region *r, uint32_t i, int black)
{
	vl_set_parent(r, i, (vl_node_at(r, i)->parent & ~BLACK) | (black ? BLACK : 0));
}

/*
 * Sides: LEFT 0, RIGHT 1, !side the other. The fixups below are written
 * once for a node on `side` of its parent; the mirror image is the same
 * code with the other side.
 */
#define LEFT 0
#define RIGHT 1

static inline uint32_t child_of(const struct vl_region *r, uint32_t i, int side)
{
	if (i == VL_NIL)
		return VL_NIL;
	return side == LEFT ? vl_node_at(r, i)->left : vl_node_at(r, i)->right;
}

static inline void set_child(const struct vl_region *r, uint32_t i, int side, uint32_t v)
{
	if (side == LEFT)
		vl_set_left(r, i, v);
	else
		vl_set_right(r, i, v);
}

/* Make v take u's place under u's parent. */
static void replace_child(const struct vl_region *r, uint32_t *root, uint32_t u, uint32_t v)
{
	uint32_t p = parent_of(r, u);

	/*
	 * Only in a corrupt tree: a parent link that is VL_NIL below the root
	 * would make v the root and cut off the rest of the tree, whose ranges
	 * would then be volatile in no tree; leave it for the checks to see.
	 */
	if (p == VL_NIL && *root != u)
		return;
	if (p == VL_NIL)
		*root = v;
	else if (!real(r, p))
		return; /* only in a corrupt tree */
	else if (vl_node_at(r, p)->left == u)
		vl_set_left(r, p, v);
	else
		vl_set_right(r, p, v);
	set_parent(r, v, p);
}

/*
 * Rotate x down to `side`: its child y on the other side takes its place,
 * and x becomes y's child on `side` (rotate(..., LEFT) is the textbook
 * left rotation).
 */
static void rotate(const struct vl_region *r, uint32_t *root, uint32_t x, int side)
{
	uint32_t y = child_of(r, x, !side);

	if (!real(r, x) || !real(r, y)) /* only in a corrupt tree */
		return;
	set_child(r, x, !side, child_of(r, y, side));
	set_parent(r, child_of(r, y, side), x);
	VL_STEP(side == LEFT ? "rb rotate_left: halfway" : "rb rotate_right: halfway");
	replace_child(r, root, x, y);
	set_child(r, y, side, x);
	set_parent(r, x, y);
}

/*
 * Link n under p (on the left if left; as the root if p is VL_NIL), red,
 * and restore the rules. depth bounds the rounds: p's depth, or the
 * deepest a tree can be when it is not known.
 */
static int link_and_balance(const struct vl_region *r, uint32_t *root, uint32_t n, uint32_t p,
			    int left, int depth)
{
	vl_set_left(r, n, VL_NIL);
	vl_set_right(r, n, VL_NIL);
	vl_set_parent(r, n, p << 1); /* red */
	if (p == VL_NIL)
		*root = n;
	else if (left)
		vl_set_left(r, p, n);
	else
		vl_set_right(r, p, n);
	VL_STEP("rb insert: linked, not balanced");

	/*
	 * Only a red node under a red parent breaks the rules. Each round
	 * either recolours and moves the fault two levels up, or rotates
	 * once or twice and ends; so the loop runs at most depth/2 times.
	 */
	while (!is_black(r, p = parent_of(r, n)) && depth-- >= 0) {
		uint32_t g = parent_of(r, p), u;
		int side; /* p's side under g */

		if (g == VL_NIL) /* a red root: only in a corrupt tree */
			break;
		side = vl_node_at(r, g)->left == p ? LEFT : RIGHT;
		u = child_of(r, g, !side);

		if (!is_black(r, u)) {
			set_black(r, p, 1);
			set_black(r, u, 1);
			set_black(r, g, 0);
			n = g;
			continue;
		}
		if (n == child_of(r, p, !side)) { /* n on the inside: bring it outside */
			rotate(r, root, p, side);
			n = p;
			p = parent_of(r, n);
		}
		set_black(r, p, 1);
		set_black(r, g, 0);
		rotate(r, root, g, !side);
		break;
	}
	set_black(r, *root, 1);
	return 0;
}

int vl_rb_insert(const struct vl_region *r, uint32_t *root, uint32_t n)
{
	uint64_t key = vl_node_at(r, n)->start;
	uint32_t p = VL_NIL, x = *root;
	int depth = 0, left = 0;

	if (!real(r, n))
		return -EUCLEAN; /* a bad index cannot be linked: reads would see slot 0 */
	while (x != VL_NIL) {
		if (x >= r->node_cap || ++depth > VL_RB_MAX_DEPTH)
			return -EUCLEAN;
		p = x;
		left = key < vl_node_at(r, x)->start;
		x = left ? vl_node_at(r, x)->left : vl_node_at(r, x)->right;
	}
	return link_and_balance(r, root, n, p, left, depth);
}

static uint32_t leftmost(const struct vl_region *r, uint32_t x)
{
	int depth = 0;

	while (x != VL_NIL && vl_node_at(r, x)->left != VL_NIL && ++depth <= VL_RB_MAX_DEPTH)
		x = vl_node_at(r, x)->left;
	return x;
}

static uint32_t rightmost(const struct vl_region *r, uint32_t x)
{
	int depth = 0;

	while (x != VL_NIL && vl_node_at(r, x)->right != VL_NIL && ++depth <= VL_RB_MAX_DEPTH)
		x = vl_node_at(r, x)->right;
	return x;
}

int vl_rb_insert_next_to(const struct vl_region *r, uint32_t *root, uint32_t n, uint32_t x,
			 int after)
{
	uint32_t below;

	if (!real(r, n) || !real(r, x))
		return -EUCLEAN;
	/*
	 * In order, n goes between x and its neighbour on that side: under x
	 * if x has no child there, else under that neighbour, which is the
	 * nearest node of x's subtree on that side and has no child facing x.
	 */
	below = child_of(r, x, after ? RIGHT : LEFT);
	if (below == VL_NIL)
		return link_and_balance(r, root, n, x, !after, VL_RB_MAX_DEPTH);
	if (!real(r, below))
		return -EUCLEAN;
	below = after ? leftmost(r, below) : rightmost(r, below);
	if (!real(r, below) || child_of(r, below, after ? LEFT : RIGHT) != VL_NIL)
		return -EUCLEAN; /* a walk cut short by its bound: a tree too deep to be sound */
	return link_and_balance(r, root, n, below, after, VL_RB_MAX_DEPTH);
}

/* Restore the black height after a black node left from under xp. */
static void erase_fixup(const struct vl_region *r, uint32_t *root, uint32_t x, uint32_t xp)
{
	int rounds = 2 * VL_RB_MAX_DEPTH;

	while (x != *root && is_black(r, x) && xp != VL_NIL && rounds-- > 0) {
		int side = x == vl_node_at(r, xp)->left ? LEFT : RIGHT; /* x's side under xp */
		uint32_t w = child_of(r, xp, !side);              /* its sibling */

		if (!is_black(r, w)) {
			set_black(r, w, 1);
			set_black(r, xp, 0);
			rotate(r, root, xp, side);
			w = child_of(r, xp, !side);
		}
		if (is_black(r, child_of(r, w, LEFT)) && is_black(r, child_of(r, w, RIGHT))) {
			set_black(r, w, 0);
			x = xp;
			xp = parent_of(r, x);
			continue;
		}
		if (is_black(r, child_of(r, w, !side))) {
			set_black(r, child_of(r, w, side), 1);
			set_black(r, w, 0);
			rotate(r, root, w, !side);
			w = child_of(r, xp, !side);
		}
		set_black(r, w, is_black(r, xp));
		set_black(r, xp, 1);
		set_black(r, child_of(r, w, !side), 1);
		rotate(r, root, xp, side);
		x = *root;
		break;
	}
	set_black(r, x, 1);
}

void vl_rb_erase(const struct vl_region *r, uint32_t *root, uint32_t z)
{
	uint32_t x, xp, y = z;
	int removed_black = is_black(r, z);

	if (!real(r, z))
		return; /* only a link that lies leads here: nothing to take out */
	if (vl_node_at(r, z)->left == VL_NIL) {
		x = vl_node_at(r, z)->right;
		xp = parent_of(r, z);
		replace_child(r, root, z, x);
	} else if (vl_node_at(r, z)->right == VL_NIL) {
		x = vl_node_at(r, z)->left;
		xp = parent_of(r, z);
		replace_child(r, root, z, x);
	} else {
		/* z's successor y has no left child: it takes z's place */
		y = leftmost(r, vl_node_at(r, z)->right);
		if (!real(r, y))
			return; /* a scribbled right link: refuse before changing anything */
		removed_black = is_black(r, y);
		x = vl_node_at(r, y)->right;
		if (parent_of(r, y) == z) {
			xp = y;
		} else {
			xp = parent_of(r, y);
			replace_child(r, root, y, x);
			vl_set_right(r, y, vl_node_at(r, z)->right);
			set_parent(r, vl_node_at(r, y)->right, y);
		}
		replace_child(r, root, z, y);
		VL_STEP("rb erase: successor half moved");
		vl_set_left(r, y, vl_node_at(r, z)->left);
		set_parent(r, vl_node_at(r, y)->left, y);
		set_black(r, y, is_black(r, z));
	}
	vl_set_left(r, z, VL_NIL);
	vl_set_right(r, z, VL_NIL);
	vl_set_parent(r, z, VL_NIL);
	VL_STEP("rb erase: out, not balanced");
	if (removed_black)
		erase_fixup(r, root, x, xp);
}

uint32_t vl_rb_first(const struct vl_region *r, uint32_t root)
{
	return leftmost(r, root);
}

uint32_t vl_rb_last(const struct vl_region *r, uint32_t root)
{
	return rightmost(r, root);
}

uint32_t vl_rb_next(const struct vl_region *r, uint32_t n)
{
	uint32_t p;
	int depth = 0;

	if (vl_node_at(r, n)->right != VL_NIL)
		return leftmost(r, vl_node_at(r, n)->right);
	while ((p = parent_of(r, n)) != VL_NIL && vl_node_at(r, p)->right == n) {
		if (++depth > VL_RB_MAX_DEPTH)
			return VL_NIL;
		n = p;
	}
	return p;
}

uint32_t vl_rb_prev(const struct vl_region *r, uint32_t n)
{
	uint32_t p;
	int depth = 0;

	if (vl_node_at(r, n)->left != VL_NIL)
		return rightmost(r, vl_node_at(r, n)->left);
	while ((p = parent_of(r, n)) != VL_NIL && vl_node_at(r, p)->left == n) {
		if (++depth > VL_RB_MAX_DEPTH)
			return VL_NIL;
		n = p;
	}
	return p;
}

uint32_t vl_rb_end_at_least_after(const struct vl_region *r, uint32_t root, uint64_t x,
				  int strict, uint32_t *before)
{
	uint32_t best = VL_NIL, cur = root;
	int depth = 0;

	*before = VL_NIL;
	while (cur != VL_NIL && cur < r->node_cap && ++depth <= VL_RB_MAX_DEPTH) {
		uint64_t end = vl_node_at(r, cur)->end;

		if (end > x || (!strict && end == x)) {
			best = cur;
			cur = vl_node_at(r, cur)->left;
		} else {
			*before = cur;
			cur = vl_node_at(r, cur)->right;
		}
	}
	/*
	 * Stopped short of a leaf: a link (or the root) names no node, or the
	 * depth bound, which no sound tree reaches. The answer would take the
	 * garbage for "no range there"; *before then names no node, so that
	 * the caller who checks it says EUCLEAN (DESIGN 18).
	 */
	if (cur != VL_NIL)
		*before = r->node_cap;
	return best;
}

uint32_t vl_rb_end_at_least(const struct vl_region *r, uint32_t root, uint64_t x, int strict)
{
	uint32_t before;

	return vl_rb_end_at_least_after(r, root, x, strict, &before);
}

struct walk {
	const struct vl_region *r;
	uint32_t file;
	long count;
	int have_prev;
	uint64_t prev_end;
};

/* Returns the black height of the subtree at n, or -1 on a fault. */
static int check_subtree(struct walk *w, uint32_t n, uint32_t parent, int depth)
{
	const struct vl_region *r = w->r;
	struct vl_node *x;
	int lh, rh;

	if (n == VL_NIL)
		return 1;
	if (n >= r->node_cap || depth > VL_RB_MAX_DEPTH || w->count >= (long)r->node_cap)
		return -1;
	x = vl_node_at(r, n);
	if (parent_of(r, n) != parent)
		return -1;
	if (!is_black(r, n) && !is_black(r, parent))
		return -1;
	lh = check_subtree(w, x->left, n, depth + 1);
	if (lh < 0)
		return -1;
	/* in order: this node comes after everything on its left */
	if (!vl_node_ok(r, x) || vl_node_state(x) != VL_NODE_LIVE || vl_node_file(x) != w->file)
		return -1;
	if (w->have_prev && x->start < w->prev_end)
		return -1;
	w->have_prev = 1;
	w->prev_end = x->end;
	w->count++;
	rh = check_subtree(w, x->right, n, depth + 1);
	if (rh < 0 || rh != lh)
		return -1;
	return lh + (int)is_black(r, n);
}

long vl_rb_check(const struct vl_region *r, uint32_t root, uint32_t file)
{
	struct walk w = { .r = r, .file = file };

	if (root != VL_NIL && !is_black(r, root))
		return -EUCLEAN;
	if (check_subtree(&w, root, VL_NIL, 0) < 0)
		return -EUCLEAN;
	return w.count;
}
