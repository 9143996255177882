/* SPDX-License-Identifier: MIT */
/*
 * tilecache.c - a tile cache whose off-screen tiles the system may reclaim.
 *
 * This is the use case of volatile ranges (John Stultz, LWN 2012): a
 * browser keeps decoded images in memory; the ones that are not on screen
 * are only a cache, so it marks them volatile and the system may throw them
 * away when memory is short. When one comes back into view the browser
 * unmarks it and learns whether it survived; if not, it decodes it again.
 *
 * Here the "images" are tiles of a Mandelbrot picture, rendered into one
 * memfd mapped MAP_SHARED. Each tile slot is a small header page, which is
 * never marked volatile (it stays pinned, like a real cache's index), then
 * the tile's pixels, which are marked volatile while the tile is off screen.
 * Because a pinned header sits between any two tiles, every tile is a
 * volatile range of its own and is purged (or not) on its own.
 *
 * The program uses nothing but libc's fallocate() with the volatile modes
 * of <volatile.h>. It is not linked against libvolatile:
 *
 *   - run under `volatile run` (or with libvolatile.so in LD_PRELOAD), MARK
 *     and UNMARK work, and purged tiles are rendered again;
 *   - run alone, the kernel refuses both modes with EOPNOTSUPP; the program
 *     says so once and keeps every tile pinned, and everything still works.
 *
 * The view is a window of V tiles that scrolls over the N tiles, one tile a
 * step, down to the end and back ("ping-pong"). At each step the tile that
 * comes into view is unmarked first (and checked, or rendered again), then
 * the tile that left the view is marked volatile.
 *
 * Every tile's checksum is recorded when it is first rendered. A tile that
 * UNMARK reports intact must still match it, byte for byte: libvolatile
 * promises never to touch bytes outside a volatile range, and never to
 * purge a range without telling. A mismatch is reported loudly and makes
 * the program exit 1.
 *
 * Build:  cc -Wall -Wextra -I include examples/tilecache.c -o tilecache
 * Run:    volatile run -- ./tilecache --tiles 12 --view 4
 *         ./tilecache                  (no shim: everything stays pinned)
 */
#define _GNU_SOURCE /* fallocate(), memfd_create(), getopt_long() */

#include <volatile.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A tile is 256 x 256 pixels of one byte: 64 KiB. */
#define TILE_W 256
#define TILE_H 256
#define TILE_BYTES ((size_t)TILE_W * TILE_H)

#define MAX_ITER 256          /* Mandelbrot iterations per pixel, at most */
#define MAX_TILES 4096        /* 4096 * 68 KiB = 272 MiB of memfd, at most */
#define PAUSE_TIMEOUT_S 600   /* --pause-after-mark gives up after this */

#define HEADER_MAGIC "TILEv1"

/* The first bytes of each slot's header page: pinned, never volatile. */
struct tile_header {
	char magic[8];        /* HEADER_MAGIC */
	uint32_t index;       /* the tile's number */
	uint32_t renders;     /* how many times it was rendered */
	uint64_t checksum;    /* of its pixels */
};

/* What happened, for the summary line. */
struct counters {
	unsigned long marks;           /* MARKs that succeeded */
	unsigned long mark_errors;     /* MARKs that failed, tile kept pinned */
	unsigned long intact;          /* tiles back in view with their content */
	unsigned long purged;          /* tiles UNMARK reported purged */
	unsigned long regenerated;     /* renders after the first one */
	unsigned long verify_failures; /* content that was not what it must be */
};

struct cache {
	int fd;                   /* the memfd */
	unsigned char *map;       /* all of it, MAP_SHARED */
	size_t map_size;
	size_t header_size;       /* one page */
	size_t slot_size;         /* header_size + TILE_BYTES */
	unsigned ntiles;
	uint64_t *expected;       /* checksum of each tile's first render */
	unsigned char *is_marked; /* tile is marked volatile now */
	int use_volatile;         /* 0 once the kernel said EOPNOTSUPP */
	struct counters n;
};

/* Print "tilecache: ..." on stderr and exit 2 (usage or system error). */
static void __attribute__((format(printf, 1, 2), noreturn)) die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("tilecache: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- the expensive, deterministic part: rendering a tile ----------------- */

/*
 * Render tile `index` of `ntiles` into pixels. The tiles, stacked top to
 * bottom, make one picture of the Mandelbrot set's "seahorse valley"
 * (re in [-0.9, -0.6], im in [-0.45, 0.45]), where most points take many
 * iterations: a tile costs milliseconds to tens of milliseconds. Each pixel
 * is its escape time, never 0, so a purged tile (all zeros) can never pass
 * for a rendered one.
 */
static void render_tile(unsigned char *pixels, unsigned index, unsigned ntiles)
{
	const double re0 = -0.9, re_span = 0.3, im0 = -0.45, im_span = 0.9;
	const double rows = (double)ntiles * TILE_H;

	for (unsigned y = 0; y < TILE_H; y++) {
		double ci = im0 + ((double)index * TILE_H + y + 0.5) * im_span / rows;

		for (unsigned x = 0; x < TILE_W; x++) {
			double cr = re0 + (x + 0.5) * re_span / TILE_W;
			double zr = 0, zi = 0, zr2 = 0, zi2 = 0;
			unsigned it = 0;

			while (it < MAX_ITER && zr2 + zi2 <= 4.0) {
				zi = 2 * zr * zi + ci;
				zr = zr2 - zi2 + cr;
				zr2 = zr * zr;
				zi2 = zi * zi;
				it++;
			}
			pixels[(size_t)y * TILE_W + x] =
				(unsigned char)(it >= MAX_ITER ? 255 : 1 + it % 254);
		}
	}
}

/* FNV-1a, 64 bits, seeded with the tile's number: a tile is only itself. */
static uint64_t checksum(const unsigned char *p, size_t len, unsigned index)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ ((uint64_t)index * 0x9e3779b97f4a7c15ULL);

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* ---- the cache --------------------------------------------------------------- */

static struct tile_header *header_of(const struct cache *c, unsigned i)
{
	return (struct tile_header *)(c->map + (size_t)i * c->slot_size);
}

/* Where tile i's pixels are in the memfd: the range that goes volatile. */
static off_t pixels_offset(const struct cache *c, unsigned i)
{
	return (off_t)((size_t)i * c->slot_size + c->header_size);
}

static unsigned char *pixels_of(const struct cache *c, unsigned i)
{
	return c->map + pixels_offset(c, i);
}

/* Render tile i into the cache and record it in its header. */
static void draw(struct cache *c, unsigned i)
{
	struct tile_header *h = header_of(c, i);

	render_tile(pixels_of(c, i), i, c->ntiles);
	memcpy(h->magic, HEADER_MAGIC, sizeof(HEADER_MAGIC));
	h->index = i;
	h->renders++;
	h->checksum = checksum(pixels_of(c, i), TILE_BYTES, i);
}

static void cache_open(struct cache *c, unsigned ntiles)
{
	long page = sysconf(_SC_PAGESIZE);

	memset(c, 0, sizeof(*c));
	c->ntiles = ntiles;
	c->use_volatile = 1;
	c->header_size = page > 0 ? (size_t)page : 4096;
	if (c->header_size < sizeof(struct tile_header))
		c->header_size = sizeof(struct tile_header);
	c->slot_size = c->header_size + TILE_BYTES;
	c->map_size = (size_t)ntiles * c->slot_size;

	/* A memfd lives on the kernel's internal tmpfs: volatile ranges apply. */
	c->fd = memfd_create("tilecache", MFD_CLOEXEC);
	if (c->fd < 0)
		die("memfd_create: %s", strerror(errno));
	if (ftruncate(c->fd, (off_t)c->map_size) != 0)
		die("ftruncate: %s", strerror(errno));
	c->map = mmap(NULL, c->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	if (c->map == MAP_FAILED)
		die("mmap: %s", strerror(errno));

	c->expected = calloc(ntiles, sizeof(*c->expected));
	c->is_marked = calloc(ntiles, sizeof(*c->is_marked));
	if (c->expected == NULL || c->is_marked == NULL)
		die("out of memory");
}

static void cache_close(struct cache *c)
{
	munmap(c->map, c->map_size);
	close(c->fd); /* the file, and its volatile ranges, are gone with it */
	free(c->expected);
	free(c->is_marked);
}

/* How much memory the memfd really holds now (purged tiles hold none). */
static unsigned long long resident_kib(const struct cache *c)
{
	struct stat st;

	if (fstat(c->fd, &st) != 0)
		return 0;
	return (unsigned long long)st.st_blocks * 512 / 1024;
}

/*
 * Check tile i: its pinned header and its pixels must be exactly what was
 * rendered. On a mismatch, say loudly what is wrong, count it, and render
 * the tile again so that the program can go on. Returns 1 if it was good.
 */
static int verify(struct cache *c, unsigned i, const char *claim)
{
	const struct tile_header *h = header_of(c, i);
	uint64_t sum = checksum(pixels_of(c, i), TILE_BYTES, i);
	const char *what = NULL;

	if (memcmp(h->magic, HEADER_MAGIC, sizeof(HEADER_MAGIC)) != 0 || h->index != i ||
	    h->checksum != c->expected[i])
		what = "its pinned header was changed";
	else if (sum != c->expected[i])
		what = "its pixels were changed";
	if (what == NULL)
		return 1;

	/* The expensive diagnosis, only on failure: compare with a fresh render. */
	{
		unsigned char *ref = malloc(TILE_BYTES);
		const unsigned char *px = pixels_of(c, i);
		size_t diff = 0, zeros = 0, first = TILE_BYTES;

		if (ref == NULL)
			die("out of memory");
		render_tile(ref, i, c->ntiles);
		for (size_t k = 0; k < TILE_BYTES; k++) {
			if (px[k] != ref[k]) {
				diff++;
				zeros += px[k] == 0;
				if (first == TILE_BYTES)
					first = k;
			}
		}
		free(ref);
		fflush(stdout);
		fprintf(stderr, "tilecache: VERIFY FAILED: tile %u (%s): %s; ", i, claim, what);
		if (diff == 0)
			fprintf(stderr, "its pixels are right\n");
		else
			fprintf(stderr,
				"%zu of %zu pixel bytes differ (%zu of them zero), the "
				"first at offset %zu\n",
				diff, TILE_BYTES, zeros, first);
	}
	c->n.verify_failures++;
	draw(c, i);
	c->n.regenerated++;
	printf("tile %u: VERIFY FAILED (%s), regenerated\n", i, claim);
	return 0;
}

/*
 * Tile i left the view: tell the system it may reclaim its pixels. Without
 * the shim the kernel answers EOPNOTSUPP: say so once, and from then on
 * keep every tile pinned (never try to mark again).
 */
static void mark(struct cache *c, unsigned i)
{
	if (!c->use_volatile)
		return;
	if (fallocate(c->fd, FALLOC_FL_MARK_VOLATILE, pixels_offset(c, i), TILE_BYTES) == 0) {
		c->is_marked[i] = 1;
		c->n.marks++;
		printf("tile %u: marked volatile\n", i);
		return;
	}
	if (errno == EOPNOTSUPP) {
		c->use_volatile = 0;
		printf("volatile ranges are unavailable (fallocate: %s): keeping all tiles "
		       "pinned\n",
		       strerror(errno));
		return;
	}
	/* Any other error (ENOMEM: the region is full...): keep this one pinned. */
	c->n.mark_errors++;
	printf("tile %u: cannot mark volatile (%s), kept pinned\n", i, strerror(errno));
}

/*
 * Tile i comes back into view: take it back from the system (UNMARK) and
 * make sure it holds the right pixels.
 *   0   intact: it must match its checksum exactly;
 *   1   purged: its pixels read as zeros; render it again;
 *  -1   error: its content is unknown, so treat it as purged.
 */
static void show(struct cache *c, unsigned i)
{
	double t0;
	int r;

	if (!c->is_marked[i]) {
		/* It was never given away (no shim, or MARK failed). */
		if (verify(c, i, "pinned")) {
			c->n.intact++;
			printf("tile %u: intact (pinned)\n", i);
		}
		return;
	}

	r = fallocate(c->fd, FALLOC_FL_UNMARK_VOLATILE, pixels_offset(c, i), TILE_BYTES);
	c->is_marked[i] = 0;
	if (r == 0) {
		if (verify(c, i, "UNMARK said intact")) {
			c->n.intact++;
			printf("tile %u: intact\n", i);
		}
		return;
	}

	if (r == 1) {
		c->n.purged++;
		printf("tile %u: purged, ", i);
	} else {
		printf("tile %u: unmark failed (%s), ", i, strerror(errno));
	}
	t0 = now_ms();
	draw(c, i);
	c->n.regenerated++;
	printf("regenerated in %.1f ms\n", now_ms() - t0);
	/* The render is deterministic: the new tile must be the old one. */
	verify(c, i, "regenerated");
}

/* ---- the program ---------------------------------------------------------------- */

/*
 * --pause-after-mark FILE: create FILE, then wait until someone removes it
 * (a demo script purges in between).
 */
static void pause_for(const char *path)
{
	char pid[32];
	int fd, len;
	double deadline;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (write(fd, pid, (size_t)len) != len || close(fd) != 0)
		die("%s: cannot write", path);
	printf("paused: remove %s to go on\n", path);
	fflush(stdout);

	deadline = now_ms() + PAUSE_TIMEOUT_S * 1e3;
	while (access(path, F_OK) == 0) {
		const struct timespec tick = { 0, 20 * 1000 * 1000 }; /* 20 ms */

		if (now_ms() > deadline)
			die("%s still exists after %d s, giving up", path, PAUSE_TIMEOUT_S);
		nanosleep(&tick, NULL);
	}
}

static unsigned number_arg(const char *name, const char *s, unsigned min, unsigned max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < min || v > max)
		die("--%s: '%s' is not a number from %u to %u", name, s, min, max);
	return (unsigned)v;
}

static void usage(void)
{
	fputs("Usage: tilecache [--tiles N] [--view V] [--steps S] [--pause-after-mark FILE]\n"
	      "A cache of N rendered tiles of 64 KiB in a memfd; a view of V tiles\n"
	      "scrolls over them, S steps of one tile, down and back. Tiles that leave\n"
	      "the view are marked volatile; tiles that come back are unmarked, then\n"
	      "checked if intact or rendered again if purged. Without libvolatile (run\n"
	      "it with 'volatile run -- tilecache ...'), all tiles stay pinned.\n"
	      "\n"
	      "  --tiles N    tiles in the cache (default 16, at most 4096)\n"
	      "  --view V     tiles on screen (default 4)\n"
	      "  --steps S    scroll steps (default 2*(N-V): to the end and back)\n"
	      "  --pause-after-mark FILE\n"
	      "               once the off-screen tiles are marked, create FILE and\n"
	      "               wait until it is removed\n"
	      "\n"
	      "Exit status: 0 if every tile checked out, 1 if one did not, 2 on error.\n",
	      stdout);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tiles", required_argument, NULL, 't' },
		{ "view", required_argument, NULL, 'v' },
		{ "steps", required_argument, NULL, 's' },
		{ "pause-after-mark", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned ntiles = 16, view = 4, steps = 0, first = 0;
	int have_steps = 0, dir = 1, opt;
	const char *pause_file = NULL;
	struct cache c;
	double t0;

	while ((opt = getopt_long(argc, argv, "t:v:s:p:h", opts, NULL)) != -1) {
		switch (opt) {
		case 't':
			ntiles = number_arg("tiles", optarg, 1, MAX_TILES);
			break;
		case 'v':
			view = number_arg("view", optarg, 1, MAX_TILES);
			break;
		case 's':
			steps = number_arg("steps", optarg, 0, UINT_MAX);
			have_steps = 1;
			break;
		case 'p':
			pause_file = optarg;
			break;
		case 'h':
			usage();
			return 0;
		default:
			fputs("Try 'tilecache --help'.\n", stderr);
			return 2;
		}
	}
	if (optind != argc)
		die("unexpected argument '%s' (try --help)", argv[optind]);
	if (view > ntiles)
		die("--view %u is more than --tiles %u", view, ntiles);
	if (!have_steps)
		steps = 2 * (ntiles - view);

	/* One line per event, in order, even into a pipe or a file. */
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* Render everything once; remember what each tile must look like. */
	cache_open(&c, ntiles);
	printf("tilecache: %u tiles of %zu KiB in a memfd, view of %u, %u steps\n", ntiles,
	       TILE_BYTES / 1024, view, steps);
	t0 = now_ms();
	for (unsigned i = 0; i < ntiles; i++) {
		draw(&c, i);
		c.expected[i] = header_of(&c, i)->checksum;
	}
	printf("rendered %u tiles in %.1f ms; the memfd holds %llu KiB\n", ntiles,
	       now_ms() - t0, resident_kib(&c));

	/*
	 * The view starts on tiles [0, view). Give the others away, farthest
	 * first: the system purges the least recently marked range first, so
	 * the tiles nearest the view, the likeliest to come back soon, go last.
	 */
	for (unsigned i = ntiles; i-- > view;)
		mark(&c, i);

	if (pause_file != NULL) {
		pause_for(pause_file);
		printf("resumed; the memfd holds %llu KiB\n", resident_kib(&c));
	}

	/* Scroll one tile a step, to the end of the cache and back. */
	for (unsigned s = 1; s <= steps && view < ntiles; s++) {
		unsigned next, entering, leaving;

		if ((dir > 0 && first + view == ntiles) || (dir < 0 && first == 0))
			dir = -dir;
		next = dir > 0 ? first + 1 : first - 1;
		entering = dir > 0 ? next + view - 1 : next;
		leaving = dir > 0 ? first : first + view - 1;
		printf("step %u: view %u-%u\n", s, next, next + view - 1);
		show(&c, entering); /* the new tile first: it is needed now */
		mark(&c, leaving);
		first = next;
	}

	printf("summary: marks=%lu intact=%lu purged=%lu regenerated=%lu "
	       "verify_failures=%lu mark_errors=%lu volatile=%s\n",
	       c.n.marks, c.n.intact, c.n.purged, c.n.regenerated, c.n.verify_failures,
	       c.n.mark_errors, c.use_volatile ? "yes" : "no");
	cache_close(&c);
	return c.n.verify_failures ? 1 : 0;
}
