/* SPDX-License-Identifier: MIT */
/*
 * status.c - `volatile status [--ranges] [--json] [--watch]`: the snapshot
 * (status.h), and the command; status_print.c prints it.
 *
 * Read with no lock: each file's record and ranges between two equal even
 * values of its `vers` (odd while its lock is held), the counters as they
 * are (atomic adds). A file whose lock a live process keeps (stopped,
 * traced) for STATUS_WAIT_MS is listed as not read, with that process
 * named; one whose holder is gone is taken, so that it is repaired.
 */
#include "cli.h"
#include "status.h"
#include "sysfind.h"
#include "age.h"

#include "env.h"
#include "sys.h"
#include "lock.h"
#include "core/ashmem_rules.h"
#include "core/pool.h"
#include "core/index.h"
#include "core/tomb.h"
#include "mem_state.h"
#include "file_route.h"
#include "region.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static const char help[] =
	"Usage: volatile status [--ranges] [--json] [--watch [--count N]]\n"
	"       volatile status --system [--uid UID]...\n"
	"Show the region: its files with volatile ranges, each with a summary and its\n"
	"oldest ranges (offset, length, purged or not, age in ms since its MARK), the\n"
	"volatile and purged bytes, capacity, the budget in force for this\n"
	"environment, available memory, and the daemons serving the region (pid,\n"
	"since when, last wake-up). A file whose recorded holders have all exited\n"
	"says \"holders gone\" (a purge forgets it once it is gone).\n"
	"  --ranges every range of every file, in offset order\n"
	"  --json   one JSON object instead of text, every range in it\n"
	"  --watch  redraw once a second: the totals, memory against the threshold,\n"
	"           the files with the most volatile bytes, the last purges and why\n"
	"           (plain frames when the output is not a terminal; Ctrl-C ends it)\n"
	"  --count N  with --watch: stop after N frames\n"
	"  --system (root) every user with a region in a default place, and each\n"
	"           name there refused, with why\n"
	"  --uid UID  with --system: only this user (repeatable)\n";

/* ranges a file shows in the text without --ranges: its oldest */
#define OLDEST_SHOWN 5

static void *grow(void *p, size_t n, size_t size)
{
	p = realloc(p, n * size);
	if (p == NULL)
		die("out of memory");
	return p;
}

#define STATUS_TRIES 20    /* ms of looking with no lock before the lock is asked for */

/* The pid of the process that holds l, as its slot says (0: none, or not known). */
static int32_t holder_pid(const struct vl_region *r, const struct vl_lock *l)
{
	uint32_t t = vl_lock_holder(l);

	return t == 0 ? 0 : (int32_t)__atomic_load_n(&vl_proc_at(r, VL_TOKEN_SLOT(t))->pid,
						      __ATOMIC_RELAXED);
}

/*
 * The ranges of file fi, as they are now (no lock: the caller checks vers
 * after), each with its MARK's stamp where its age goes (ages_now). A walk
 * that reached its bound lists none and says the index is unsound: what it
 * read before is a loop's repeats, not the file's ranges.
 */
static void copy_ranges(const struct vl_region *r, uint32_t fi, struct file_out *out)
{
	struct vl_ix_walk w;
	struct vl_ix_range x;
	size_t cap = 0;
	int got;

	free(out->ranges);
	out->ranges = NULL;
	out->n = 0;
	out->unsound = 0;
	/* an index changing under the walk is read as garbage, bounded, and thrown away */
	vl_ix_peek_init(&w, r, fi);
	while ((got = vl_ix_peek_next(&w, &x)) > 0) {
		if (out->n == cap) {
			cap = cap ? 2 * cap : 16;
			out->ranges = grow(out->ranges, cap, sizeof(*out->ranges));
		}
		out->ranges[out->n].start = x.start;
		out->ranges[out->n].end = x.end;
		out->ranges[out->n].purged = x.purged;
		out->ranges[out->n].age = x.age;
		out->n++;
	}
	if (got < 0) {
		out->n = 0;
		out->unsound = 1;
	}
}

/* File fi's record (its ways, an ashmem region's state) and ranges, as they are now. */
static void copy_record(const struct vl_region *r, uint32_t fi, struct file_out *out)
{
	const struct vl_file *f = vl_file_at(r, fi);

	vl_target_copy(r, fi, &out->t);
	out->ashmem = (f->h.flags & VL_FF_ASHMEM) && vl_ash_state_ok(&f->ash);
	if (out->ashmem) {
		memcpy(out->ash_name, f->ash.name, sizeof(out->ash_name));
		out->ash_name[sizeof(out->ash_name) - 1] = '\0';
		out->ash_size = f->ash.size;
	}
	copy_ranges(r, fi, out);
}

/*
 * A copy found whole: each range's age, the milliseconds since its MARK
 * by the age clock read now, after the copy (DESIGN 10): every stamp
 * copied was read from the clock before its file's vers or lock let us
 * see it, so none is later than this reading but by another CPU's tick;
 * one ahead of it reads as 0 (vl_age_back).
 */
static void ages_now(const struct vl_region *r, struct file_out *out)
{
	uint32_t now;

	(void)r;
	vl_age_attach();
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	now = vl_age_now_of(vl_now_ms());
	for (size_t k = 0; k < out->n; k++)
		out->ranges[k].age = vl_age_back(out->ranges[k].age, now);
}

/*
 * Is the file listed? Ranges, an ashmem region, ranges not read, or a
 * record flagged TOMB with none: its next UNMARK says 1, and a user
 * asking why finds it here (DESIGN 11, 15).
 */
static int shown(const struct file_out *out)
{
	return out->n > 0 || out->ashmem || out->unsound || (out->t.flags & VL_FF_TOMB);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Copy file fi with no lock: its record and ranges, read between two
 * equal even values of its `vers` (odd while its lock is held) and the
 * same generation, for STATUS_TRIES ms; then under its lock, waited for
 * STATUS_WAIT_MS. A file whose lock a live process keeps that long is
 * reported as not read, with that process; one whose holder is gone is
 * taken, so that it is repaired, and read again.
 * Returns 0 if the slot holds no file (any more), or a record with
 * nothing to show (no range, not an ashmem region).
 */
static int copy_file(const struct vl_region *r, uint32_t fi, struct file_out *out)
{
	struct vl_file *f = vl_file_at(r, fi);
	int repaired = 0;

	memset(out, 0, sizeof(*out));
	for (int waited = 0; waited <= STATUS_TRIES;) {
		uint32_t v1 = __atomic_load_n(&f->h.vers, __ATOMIC_ACQUIRE), gen, v2;
		uint32_t holder = vl_lock_holder(&f->h.lock);

		if (__atomic_load_n(&f->h.state, __ATOMIC_ACQUIRE) == VL_FILE_FREE)
			return 0;
		if (v1 & 1) {
			if (holder != 0 && !repaired && !vl_token_alive(r, holder) &&
			    vl_lock_file(r, fi) == 0) {
				vl_unlock_file(r, fi); /* taken over: repaired */
				repaired = 1;
				continue;
			}
			sleep_ms(1);
			waited++;
			continue;
		}
		gen = __atomic_load_n(&f->h.gen, __ATOMIC_ACQUIRE);
		copy_record(r, fi, out);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		v2 = __atomic_load_n(&f->h.vers, __ATOMIC_RELAXED);
		if (v1 == v2 && gen == __atomic_load_n(&f->h.gen, __ATOMIC_RELAXED) &&
		    gen == out->t.gen) {
			ages_now(r, out);
			return shown(out);
		}
		sleep_ms(1);
		waited++;
	}
	/*
	 * Still changing, or held: a file marked and unmarked without a
	 * pause may never show two equal values; its lock is then waited for
	 * (STATUS_WAIT_MS: VOLATILE_LOCK_WAIT, set by cmd_status).
	 */
	if (vl_lock_file(r, fi) == 0) {
		int show = 0;

		if (f->h.state == VL_FILE_LIVE) {
			copy_record(r, fi, out);
			ages_now(r, out);
			show = shown(out);
		}
		vl_unlock_file(r, fi);
		return show;
	}
	free(out->ranges);
	memset(out, 0, sizeof(*out));
	out->unread = 1;
	out->holder = holder_pid(r, &f->h.lock);
	return 1;
}

/*
 * Does the recorded holder still hold the file at that fd? Not if its pid
 * is gone, or its fd is closed or now another file (a pid or fd reused);
 * yes if that cannot be told (another user's process): a holder is shown
 * unless it is known to be gone.
 */
static int holder_still_there(const struct vl_holder *h, const struct vl_ident *id)
{
	char path[64];
	int fd, same;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)h->pid, (int)h->fd);
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT && errno != ESRCH;
	same = vl_fd_is(fd, id);
	close(fd);
	return same;
}

/* Which recorded holders of f are gone, and whether all of them are. */
static void look_at_holders(struct file_out *f)
{
	int recorded = 0, gone = 0;

	for (int h = 0; h < VL_HOLDERS; h++) {
		if (f->t.holders[h].pid <= 0)
			continue;
		recorded++;
		f->holder_gone[h] = !holder_still_there(&f->t.holders[h], &f->t.id);
		gone += f->holder_gone[h];
	}
	f->holders_gone = recorded > 0 && gone == recorded;
}

void take_snapshot(struct snapshot *s)
{
	struct vl_region r;
	struct vl_totals t;
	uint32_t hwm;
	size_t cap = 0;

	memset(s, 0, sizeof(*s));
	s->ndaemons = daemons_serving(s->daemons, MAX_DAEMONS);
	if (open_region(&r, 0) != 0)
		return;
	s->exists = 1;
	/* counters changed by atomic adds: each read at once, with no lock (pool.h) */
	s->c = r.hdr->c;
	/* the totals: the shared ones and every process's unfolded deltas */
	vl_totals_read(&r, NULL, &t);
	s->c.volatile_bytes = t.volatile_bytes;
	s->c.purged_bytes = t.purged_bytes;
	s->c.ranges = t.ranges;
	s->c.ranges_purged = t.ranges_purged;
	s->c.purged_total = vl_u128_load(&r.hdr->c.purged_total);
	s->g = r.hdr->geo;
	s->tomb_added = __atomic_load_n(&r.tomb->added, __ATOMIC_RELAXED);
	s->tomb_pushed = __atomic_load_n(&r.tomb->pushed, __ATOMIC_RELAXED);
	s->tomb_horizon = __atomic_load_n(&r.tomb->horizon, __ATOMIC_RELAXED);
	s->waiting = __atomic_load_n(&r.hdr->fate.waiting, __ATOMIC_ACQUIRE) == VL_WAITING;
	s->blind = __atomic_load_n(&r.hdr->fate.waiting, __ATOMIC_ACQUIRE) == VL_BLIND;
	s->retired = __atomic_load_n(&r.hdr->fate.retired, __ATOMIC_ACQUIRE) != 0;
	s->region_bytes = s->g.files_off + (uint64_t)s->c.file_hwm * sizeof(struct vl_file) +
			  (uint64_t)s->g.hash_cap * sizeof(uint32_t) +
			  (uint64_t)s->c.node_hwm * sizeof(struct vl_node);
	hwm = s->c.file_hwm < r.file_cap ? s->c.file_hwm : r.file_cap;
	for (uint32_t fi = 1; fi < hwm; fi++) {
		if (s->nfiles == cap) {
			cap = cap ? 2 * cap : 16;
			s->files = grow(s->files, cap, sizeof(*s->files));
		}
		if (copy_file(&r, fi, &s->files[s->nfiles])) {
			if (!s->files[s->nfiles].unread)
				look_at_holders(&s->files[s->nfiles]);
			s->with_ranges += s->files[s->nfiles].n > 0 || s->files[s->nfiles].unsound;
			s->nfiles++;
		}
	}
	s->npurges = vl_purge_log_read(&r.hdr->log, s->purges, VL_PURGE_LOG);
	s->now_ms = vl_now_ms();
	vl_region_unmap(&r);
}

void free_snapshot(struct snapshot *s)
{
	for (size_t i = 0; i < s->nfiles; i++)
		free(s->files[i].ranges);
	free(s->files);
	s->files = NULL;
	s->nfiles = 0;
}

void pressure_now(struct pressure *p)
{
	const struct vl_config *cfg = vl_config();

	memset(p, 0, sizeof(*p));
	p->have_cg = vl_own_cgroup(&p->cg) == 0;
	p->known = vl_memstate_read(p->have_cg ? &p->cg : NULL, &p->ms) == 0;
	if (!p->known)
		return;
	p->threshold = vl_threshold_bytes(&cfg->min_available, p->ms.total);
	p->low = p->ms.available < p->threshold;
}

/* hi * 2^64 + lo, in binary units */
static const char *human2(uint64_t hi, uint64_t lo, char *buf, size_t size)
{
	static const char units[] = "BKMGTPE";
	double d = (double)hi * 18446744073709551616.0 + (double)lo;
	int u = 0;

	while (d >= 1024 && u < 6) {
		d /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%lluB", (unsigned long long)lo);
	else
		snprintf(buf, size, "%.1f%c", d, units[u]);
	return buf;
}

const char *human(uint64_t v, char *buf, size_t size)
{
	return human2(0, v, buf, size);
}

const char *human128(const struct vl_u128 *v, char *buf, size_t size)
{
	return human2(v->hi, v->lo, buf, size);
}

/*
 * A region's count in decimal, exactly (up to 39 digits). Long division
 * by 10 of its four 32-bit limbs, so each step fits in 64 bits.
 */
const char *dec128(const struct vl_u128 *v, char buf[40])
{
	uint32_t limb[4] = { (uint32_t)(v->hi >> 32), (uint32_t)v->hi, (uint32_t)(v->lo >> 32),
			     (uint32_t)v->lo };
	char *p = buf + 39;

	*p = '\0';
	do {
		uint64_t rem = 0;

		for (int i = 0; i < 4; i++) {
			uint64_t cur = rem << 32 | limb[i];

			limb[i] = (uint32_t)(cur / 10);
			rem = cur % 10;
		}
		*--p = (char)('0' + rem);
	} while (limb[0] | limb[1] | limb[2] | limb[3]);
	return p;
}

/* "---- HH:MM:SS", the line before each frame that is not drawn over the last */
static void print_clock(int blank_before)
{
	char when[16] = "";
	time_t t = time(NULL);
	struct tm tm;

	if (localtime_r(&t, &tm) != NULL)
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	printf("%s---- %s\n", blank_before ? "\n" : "", when);
}

/*
 * --watch: a frame a second until interrupted (or `count` frames). On a
 * terminal each frame is drawn over the last; elsewhere (a pipe, a log)
 * frames follow each other, each after a line with the time.
 */
static int watch(uint64_t count)
{
	int tty = isatty(STDOUT_FILENO);

	for (uint64_t n = 0; count == 0 || n < count; n++) {
		struct snapshot s;
		struct timespec one = { 1, 0 };

		if (n > 0)
			nanosleep(&one, NULL);
		take_snapshot(&s);
		if (tty)
			printf("\033[H\033[2J");
		else
			print_clock(n > 0);
		print_watch(&s, vl_config());
		free_snapshot(&s);
		if (fflush(stdout) != 0)
			return EXIT_USAGE;
	}
	return 0;
}

static void uid_option(const char *s, uint32_t *uids, int *n)
{
	const char *why = vl_sys_uid_of(s, strlen(s), &uids[*n]);

	if (why != NULL)
		die("status: --uid '%s': %s", s, why);
	if (*n == VL_SYS_USERS_MAX)
		die("status: more than %d --uid", VL_SYS_USERS_MAX);
	(*n)++;
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
					      { "ranges", no_argument, NULL, 'r' },
					      { "watch", no_argument, NULL, 'w' },
					      { "count", required_argument, NULL, 'n' },
					      { "system", no_argument, NULL, 's' },
					      { "uid", required_argument, NULL, 'u' },
					      { "help", no_argument, NULL, 'h' },
					      { 0 } };
	static uint32_t uids[VL_SYS_USERS_MAX];
	struct snapshot s;
	int c, json = 0, all_ranges = 0, watching = 0, system = 0, nuids = 0;
	uint64_t count = 0;

	optind = 1;
	while ((c = next_opt(argc, argv, "+jrwn:su:h", opts, help)) != -1) {
		if (c == 'j')
			json = 1;
		else if (c == 'r')
			all_ranges = 1;
		else if (c == 'w')
			watching = 1;
		else if (c == 'n' && (count = size_arg("count", optarg)) == 0)
			die("status: --count must be 1 or more frames");
		else if (c == 's')
			system = 1;
		else if (c == 'u')
			uid_option(optarg, uids, &nuids);
	}
	if (optind != argc)
		die("status takes no arguments (try 'volatile status --help')");
	if (nuids > 0 && !system)
		die("status: --uid goes with --system");
	if (system) {
		if (json || all_ranges || watching || count)
			die("status --system takes none of --json, --ranges, --watch");
		return status_system(uids, nuids);
	}
	/* a look, not a wait: a lock a live process keeps is reported, not waited for */
	setenv("VOLATILE_LOCK_WAIT", STATUS_WAIT_MS, 1);
	vl_config_reload();
	if (count && !watching)
		die("status: --count goes with --watch");
	if (watching) {
		if (json || all_ranges)
			die("status --watch takes neither --json nor --ranges");
		return watch(count);
	}
	take_snapshot(&s);
	if (json)
		print_json(&s, vl_config());
	else
		print_text(&s, vl_config(), all_ranges);
	free_snapshot(&s);
	return fflush(stdout) == 0 ? 0 : EXIT_USAGE;
}
