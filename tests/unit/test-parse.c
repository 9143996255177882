/* SPDX-License-Identifier: MIT */
/*
 * test-parse.c - decimals, and sizes and thresholds as users write them (core/parse.c),
 * and the line reader that feeds /proc files to the parsers (sys.c).
 */
#include "harness.h"

#include "core/parse.h"
#include "sys.h"

#include <unistd.h>

#define SENTINEL 0xdeadbeefcafef00dull

static void size_ok(const char *s, uint64_t want)
{
	uint64_t v = SENTINEL;
	int err = vl_parse_size(s, &v);

	ck_assert_msg(err == 0, "vl_parse_size(\"%s\") = %d, want 0", s, err);
	ck_assert_msg(v == want, "vl_parse_size(\"%s\") gave %" PRIu64 ", want %" PRIu64, s, v,
		      want);
}

static void size_bad(const char *s, int want_err)
{
	uint64_t v = SENTINEL;
	int err = vl_parse_size(s, &v);

	ck_assert_msg(err == want_err, "vl_parse_size(\"%s\") = %d, want %d", s, err, want_err);
	ck_assert_msg(v == SENTINEL, "vl_parse_size(\"%s\") failed but wrote %" PRIu64, s, v);
}

START_TEST(test_plain_numbers)
{
	size_ok("0", 0);
	size_ok("1", 1);
	size_ok("4096", 4096);
	size_ok("000123", 123);
	size_ok("9223372036854775807", (uint64_t)INT64_MAX);
}
END_TEST

START_TEST(test_suffixes)
{
	size_ok("4K", 4096);
	size_ok("4k", 4096);
	size_ok("4KiB", 4096);
	size_ok("4KB", 4096);
	size_ok("4Kb", 4096);
	size_ok("16M", 16ull << 20);
	size_ok("16m", 16ull << 20);
	size_ok("16MiB", 16ull << 20);
	size_ok("2G", 2ull << 30);
	size_ok("2g", 2ull << 30);
	size_ok("2GB", 2ull << 30);
	size_ok("1T", 1ull << 40);
	size_ok("1t", 1ull << 40);
	size_ok("1TiB", 1ull << 40);
	size_ok("0K", 0);
	size_ok("0T", 0);
}
END_TEST

START_TEST(test_invalid)
{
	static const char *const bad[] = {
		"", "K", "4X", "-1", "4 K", "4KK", " 4", "4 ", "+4", "4.5K", "0x10", "4iB",
		"4Ki", "4KiBB", "4KBB", "4Kx", "K4", "%", "4%", "4P", "4E", "1e3",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		size_bad(bad[i], -EINVAL);
	{
		uint64_t v = SENTINEL;

		ck_assert_int_eq(vl_parse_size(NULL, &v), -EINVAL);
		ck_assert(v == SENTINEL);
	}
}
END_TEST

START_TEST(test_overflow)
{
	size_bad("9223372036854775808", -ERANGE);  /* 2^63 */
	size_bad("18446744073709551615", -ERANGE); /* 2^64 - 1 */
	size_bad("18446744073709551616", -ERANGE); /* 2^64 */
	size_bad("99999999999999999999999999", -ERANGE);
	size_bad("8589934592G", -ERANGE); /* 2^33 G = 2^63 */
	size_bad("8388608T", -ERANGE);    /* 2^23 T = 2^63 */
	size_bad("9007199254740992K", -ERANGE);
	/* the largest that fit */
	size_ok("8589934591G", ((1ull << 33) - 1) << 30);
	size_ok("8388607T", ((1ull << 23) - 1) << 40);
	size_ok("9007199254740991K", ((1ull << 53) - 1) << 10);
}
END_TEST

static void thr_ok(const char *s, int is_percent, uint32_t percent, uint64_t bytes)
{
	struct vl_threshold t;
	int err;

	memset(&t, 0x5a, sizeof(t));
	err = vl_parse_threshold(s, &t);
	ck_assert_msg(err == 0, "vl_parse_threshold(\"%s\") = %d, want 0", s, err);
	ck_assert_msg(t.is_percent == is_percent, "\"%s\": is_percent %d", s, t.is_percent);
	if (is_percent)
		ck_assert_msg(t.percent == percent, "\"%s\": percent %u", s, t.percent);
	else
		ck_assert_msg(t.bytes == bytes, "\"%s\": bytes %" PRIu64, s, t.bytes);
}

static void thr_bad(const char *s, int want_err)
{
	struct vl_threshold t;
	int err;

	memset(&t, 0, sizeof(t));
	err = vl_parse_threshold(s, &t);
	ck_assert_msg(err == want_err, "vl_parse_threshold(\"%s\") = %d, want %d", s, err,
		      want_err);
}

/* the one reader of decimals: blanks before, stops at the first non-digit */
START_TEST(test_decimal)
{
	const char *text = " \t42 kB", *p = text;
	uint64_t v = SENTINEL;

	ck_assert_int_eq(vl_parse_decimal(&p, &v), 0);
	ck_assert_uint_eq(v, 42);
	ck_assert_ptr_eq(p, text + 4);
	p = "18446744073709551609";
	ck_assert_int_eq(vl_parse_decimal(&p, &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX - 6);
	ck_assert_str_eq(p, "");
	text = "x1";
	p = text;
	v = SENTINEL;
	ck_assert_int_eq(vl_parse_decimal(&p, &v), -EINVAL);
	ck_assert_ptr_eq(p, text);
	ck_assert_uint_eq(v, SENTINEL);
	p = "-1";
	ck_assert_int_eq(vl_parse_decimal(&p, &v), -EINVAL);
	p = "";
	ck_assert_int_eq(vl_parse_decimal(&p, &v), -EINVAL);
	/* too large: -ERANGE, as for a size (the /proc readers once said -EINVAL) */
	text = "184467440737095516160";
	p = text;
	ck_assert_int_eq(vl_parse_decimal(&p, &v), -ERANGE);
	ck_assert_ptr_eq(p, text);
	ck_assert_uint_eq(v, SENTINEL);
}
END_TEST

START_TEST(test_ms)
{
	uint64_t v = 7;

	ck_assert_int_eq(vl_parse_ms("0", 3600000, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(vl_parse_ms("300", 3600000, &v), 0);
	ck_assert_uint_eq(v, 300);
	ck_assert_int_eq(vl_parse_ms("300ms", 3600000, &v), 0);
	ck_assert_uint_eq(v, 300);
	ck_assert_int_eq(vl_parse_ms("20s", 3600000, &v), 0);
	ck_assert_uint_eq(v, 20000);
	ck_assert_int_eq(vl_parse_ms("3600s", 3600000, &v), 0);
	ck_assert_uint_eq(v, 3600000);
	v = 7;
	ck_assert_int_eq(vl_parse_ms("3601s", 3600000, &v), -ERANGE);
	ck_assert_int_eq(vl_parse_ms("3600001", 3600000, &v), -ERANGE);
	ck_assert_int_eq(vl_parse_ms("99999999999999999999999", 3600000, &v), -ERANGE);
	ck_assert_int_eq(vl_parse_ms("", 3600000, &v), -EINVAL);
	ck_assert_int_eq(vl_parse_ms("-5", 3600000, &v), -EINVAL);
	ck_assert_int_eq(vl_parse_ms("5m", 3600000, &v), -EINVAL);
	ck_assert_int_eq(vl_parse_ms("5 s", 3600000, &v), -EINVAL);
	ck_assert_int_eq(vl_parse_ms("ms", 3600000, &v), -EINVAL);
	ck_assert_int_eq(vl_parse_ms(NULL, 3600000, &v), -EINVAL);
	ck_assert_uint_eq(v, 7); /* untouched by a failure */
}
END_TEST

START_TEST(test_threshold)
{
	thr_ok("10%", 1, 10, 0);
	thr_ok("0%", 1, 0, 0);
	thr_ok("100%", 1, 100, 0);
	thr_ok("5M", 0, 0, 5ull << 20);
	thr_ok("4096", 0, 0, 4096);
	thr_ok("0", 0, 0, 0);
	thr_ok("1G", 0, 0, 1ull << 30);
	thr_bad("101%", -ERANGE);
	thr_bad("1000%", -ERANGE);
	thr_bad("99999999999999999999999%", -ERANGE);
	thr_bad("9223372036854775808", -ERANGE);
	thr_bad("%", -EINVAL);
	thr_bad("", -EINVAL);
	thr_bad("10%%", -EINVAL);
	thr_bad("10 %", -EINVAL);
	thr_bad("-5%", -EINVAL);
	thr_bad("5%M", -EINVAL);
	thr_bad("5X", -EINVAL);
	thr_bad(NULL, -EINVAL);
}
END_TEST

START_TEST(test_threshold_fields_reset)
{
	struct vl_threshold t;

	memset(&t, 0x5a, sizeof(t));
	ck_assert_int_eq(vl_parse_threshold("50%", &t), 0);
	ck_assert_int_eq(t.is_percent, 1);
	ck_assert_uint_eq(t.percent, 50);
	ck_assert_uint_eq(t.bytes, 0);
	memset(&t, 0x5a, sizeof(t));
	ck_assert_int_eq(vl_parse_threshold("2K", &t), 0);
	ck_assert_int_eq(t.is_percent, 0);
	ck_assert_uint_eq(t.percent, 0);
	ck_assert_uint_eq(t.bytes, 2048);
}
END_TEST

/*
 * /proc/PID/stat: the start time is field 22, the stack's start field 28,
 * counted after the last ')'. (A count one off read field 23, the virtual
 * memory size, as the start time: a holder that mapped anything since it
 * registered was taken for dead and its locks taken from it.)
 */
START_TEST(test_proc_stat)
{
	struct vl_proc_stat ps;
	static const char line[] =
		"1234 (my (weird) prog) S 1 1234 1234 0 -1 4194304 100 0 0 0 5 3 0 0 20 0 1 0 "
		"516405 138153984 300 18446744073709551615 94000000000000 94000000100000 "
		"140720000000000 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";

	ck_assert_int_eq(vl_parse_proc_stat(line, &ps), 0);
	ck_assert_int_eq(ps.state, 'S');
	ck_assert_uint_eq(ps.start, 516405);
	ck_assert_uint_eq(ps.stack, 140720000000000ull);
	/* a zombie, the stack's start hidden from this reader */
	ck_assert_int_eq(vl_parse_proc_stat("7 (a) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0 "
					    "18446744073709551615 0 0 0 0 0",
					    &ps),
			 0);
	ck_assert_int_eq(ps.state, 'Z');
	ck_assert_uint_eq(ps.start, 99);
	ck_assert_uint_eq(ps.stack, 0);
	/* cut short, no ')', nothing after it */
	ck_assert_int_eq(vl_parse_proc_stat("7 (a) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99", &ps), -1);
	ck_assert_int_eq(vl_parse_proc_stat("7 a S 1", &ps), -1);
	ck_assert_int_eq(vl_parse_proc_stat("7 (a)", &ps), -1);
}
END_TEST

/* /proc/locks: an OFD lock held, its file and first byte; anything else refused */
START_TEST(test_lock_line)
{
	uint64_t dev, ino, start;

	ck_assert_int_eq(vl_parse_lock_line("3: OFDLCK ADVISORY  READ  -1 00:1b:41747 90123 90123",
					    &dev, &ino, &start),
			 0);
	ck_assert_uint_eq(dev, 0x1b);
	ck_assert_uint_eq(ino, 41747);
	ck_assert_uint_eq(start, 90123);
	/* a major and minor past 8 bits each */
	ck_assert_int_eq(vl_parse_lock_line("12: OFDLCK ADVISORY  WRITE -1 103:1a2:7 0 EOF", &dev,
					    &ino, &start),
			 0);
	ck_assert_uint_eq(dev, ((0x103ull & 0xfff) << 8) | ((0x1a2ull & 0xffffff00) << 12) | 0xa2);
	ck_assert_uint_eq(start, 0);
	/* a waiter, a POSIX lock, a flock, garbage */
	ck_assert_int_eq(vl_parse_lock_line("3: -> OFDLCK ADVISORY  READ  -1 00:1b:41747 9 9", &dev,
					    &ino, &start),
			 -1);
	ck_assert_int_eq(vl_parse_lock_line("1: POSIX  ADVISORY  WRITE 1234 00:2e:1047 0 EOF", &dev,
					    &ino, &start),
			 -1);
	ck_assert_int_eq(vl_parse_lock_line("2: FLOCK  ADVISORY  WRITE 8298 00:1b:49676 0 EOF", &dev,
					    &ino, &start),
			 -1);
	ck_assert_int_eq(vl_parse_lock_line("3: OFDLCK ADVISORY READ -1 zz", &dev, &ino, &start), -1);
}
END_TEST

static int mount_ok(const char *line, struct vl_mount_fields *m)
{
	memset(m, 0xa5, sizeof(*m));
	return vl_parse_mount_line(line, m);
}

#define field_eq(f, len, s) ck_assert_msg(vl_field_is(f, len, s), "field %.*s, want %s", (int)(len), f, s)

START_TEST(test_id_map)
{
	uint64_t in = 12345;

	/* the file's padding; our 0 is 0 there */
	ck_assert_int_eq(vl_id_map_inside("         0          0 4294967295", 0, &in), 0);
	ck_assert_uint_eq(in, 0);
	/* unshare -U --map-user=64989 as root: our 0 is their 64989 */
	ck_assert_int_eq(vl_id_map_inside("     64989          0          1\n", 0, &in), 0);
	ck_assert_uint_eq(in, 64989);
	/* a range: the offset in it carries over; its ends */
	ck_assert_int_eq(vl_id_map_inside("0 100000 65536", 100007, &in), 0);
	ck_assert_uint_eq(in, 7);
	ck_assert_int_eq(vl_id_map_inside("0 100000 65536", 165535, &in), 0);
	ck_assert_uint_eq(in, 65535);
	in = 12345;
	ck_assert_int_eq(vl_id_map_inside("0 100000 65536", 165536, &in), -1);
	ck_assert_int_eq(vl_id_map_inside("0 100000 65536", 99999, &in), -1);
	ck_assert_int_eq(vl_id_map_inside("1000 1000 0", 1000, &in), -1); /* maps nothing */
	/* not a map line */
	ck_assert_int_eq(vl_id_map_inside("", 0, &in), -1);
	ck_assert_int_eq(vl_id_map_inside("0 0", 0, &in), -1);
	ck_assert_int_eq(vl_id_map_inside("0 x 1", 0, &in), -1);
	ck_assert_int_eq(vl_id_map_inside("-1 0 1", 0, &in), -1);
	ck_assert_int_eq(vl_id_map_inside("99999999999999999999 0 1", 0, &in), -1);
	/* inside + offset past 64 bits */
	ck_assert_int_eq(vl_id_map_inside("18446744073709551615 0 10", 5, &in), -1);
	ck_assert_uint_eq(in, 12345); /* untouched on -1 */
}
END_TEST

START_TEST(test_mount_line)
{
	struct vl_mount_fields m;
	char name[64];

	ck_assert_int_eq(mount_ok("36 25 0:26 / /dev/shm rw,nosuid shared:1 master:3 - tmpfs tmpfs "
				  "rw,size=65536k", &m), 0);
	ck_assert_uint_eq(m.id, 36);
	ck_assert_uint_eq(m.dev, 26); /* makedev(0, 26) */
	field_eq(m.root, m.root_len, "/");
	field_eq(m.point, m.point_len, "/dev/shm");
	field_eq(m.fstype, m.fstype_len, "tmpfs");
	field_eq(m.superopts, m.superopts_len, "rw,size=65536k");
	/* a bind of a subdirectory, a big major and minor, escaped names, no optional field */
	ck_assert_int_eq(mount_ok("50 30 259:1048577 /sub\\040dir /mnt/a\\134b rw - ext4 /dev/x rw",
				  &m), 0);
	ck_assert_uint_eq(m.dev, ((259ull & 0xfff) << 8) | ((1048577ull & 0xffffff00) << 12) |
					 (1048577ull & 0xff));
	field_eq(m.root, m.root_len, "/sub\\040dir");
	ck_assert_int_eq(vl_mount_unescape(name, sizeof(name), m.root, m.root_len), 0);
	ck_assert_str_eq(name, "/sub dir");
	ck_assert_int_eq(vl_mount_unescape(name, sizeof(name), m.point, m.point_len), 0);
	ck_assert_str_eq(name, "/mnt/a\\b");
	/* a name that does not fit with its NUL */
	ck_assert_int_eq(vl_mount_unescape(name, 8, m.point, m.point_len), -1);
	ck_assert_int_eq(vl_mount_unescape(name, 9, "/mnt/abc", 8), 0);
	ck_assert_int_eq(vl_mount_unescape(name, 8, "/mnt/abc", 8), -1);
	/* a backslash not followed by three octal digits is itself */
	ck_assert_int_eq(vl_mount_unescape(name, sizeof(name), "a\\9x\\04", 7), 0);
	ck_assert_str_eq(name, "a\\9x\\04");
	/* a superblock with no options shown */
	ck_assert_int_eq(mount_ok("1 0 0:5 / / rw - rootfs rootfs", &m), 0);
	ck_assert_uint_eq(m.superopts_len, 0);
	/* not mountinfo lines */
	ck_assert_int_eq(mount_ok("", &m), -1);
	ck_assert_int_eq(mount_ok("36 25 0:26 / /dev/shm rw", &m), -1);
	ck_assert_int_eq(mount_ok("36 25 0x26 / /dev/shm rw - tmpfs tmpfs rw", &m), -1);
	ck_assert_int_eq(mount_ok("36 25 0: / /dev/shm rw - tmpfs tmpfs rw", &m), -1);
	ck_assert_int_eq(mount_ok("36 25 0:26 / - tmpfs tmpfs rw", &m), -1);
	ck_assert_int_eq(mount_ok("36 25 0:26 / /dev/shm rw - tmpfs", &m), -1);
	ck_assert_int_eq(mount_ok("x6 25 0:26 / /dev/shm rw - tmpfs tmpfs rw", &m), -1);
	ck_assert_int_eq(mount_ok("36x 25 0:26 / /dev/shm rw - tmpfs tmpfs rw", &m), -1);
}
END_TEST

START_TEST(test_fdinfo_mnt_id)
{
	uint64_t id = 7;

	ck_assert_int_eq(vl_fdinfo_mnt_id("pos:\t0\nflags:\t02\nmnt_id:\t24\nino:\t3\n", &id), 0);
	ck_assert_uint_eq(id, 24);
	/* a memfd's mount (an internal one), at the very end, no newline */
	ck_assert_int_eq(vl_fdinfo_mnt_id("pos:\t0\nmnt_id:\t0", &id), 0);
	ck_assert_uint_eq(id, 0);
	/* first in the text; a name that only ends so is not it */
	ck_assert_int_eq(vl_fdinfo_mnt_id("mnt_id:\t5\n", &id), 0);
	ck_assert_uint_eq(id, 5);
	id = 7;
	ck_assert_int_eq(vl_fdinfo_mnt_id("xmnt_id:\t5\n", &id), -1);
	ck_assert_int_eq(vl_fdinfo_mnt_id("pos:\t0\nflags:\t02\n", &id), -1);
	ck_assert_int_eq(vl_fdinfo_mnt_id("mnt_id:\t\n", &id), -1);
	ck_assert_int_eq(vl_fdinfo_mnt_id("mnt_id:\t-1\n", &id), -1);
	ck_assert_int_eq(vl_fdinfo_mnt_id("mnt_id:\t12x\n", &id), -1);
	ck_assert_int_eq(vl_fdinfo_mnt_id("mnt_id:\t99999999999999999999\n", &id), -1);
	ck_assert_int_eq(vl_fdinfo_mnt_id("", &id), -1);
	ck_assert_uint_eq(id, 7);
}
END_TEST

START_TEST(test_fdinfo_field)
{
	const char *t = "pos:\t0\nflags:\t0100002\nmnt_id:\t24\nino:\t3077\n";
	uint64_t v = 0;

	ck_assert_int_eq(vl_fdinfo_field(t, "flags", 8, &v), 0);
	ck_assert_uint_eq(v, 0100002);
	ck_assert_int_eq(vl_fdinfo_field(t, "ino", 10, &v), 0);
	ck_assert_uint_eq(v, 3077);
	ck_assert_int_eq(vl_fdinfo_field(t, "pos", 10, &v), 0);
	ck_assert_uint_eq(v, 0);
	/* a name is a whole name: "in" is not "ino", "mnt" not "mnt_id" */
	ck_assert_int_eq(vl_fdinfo_field(t, "in", 10, &v), -1);
	ck_assert_int_eq(vl_fdinfo_field(t, "mnt", 10, &v), -1);
	/* octal has no 8 or 9: a flags line that reads so is not taken */
	ck_assert_int_eq(vl_fdinfo_field("flags:\t0109\n", "flags", 8, &v), -1);
	ck_assert_int_eq(vl_fdinfo_field("flags:\t8\n", "flags", 8, &v), -1);
	ck_assert_int_eq(vl_fdinfo_field("ino:\t\n", "ino", 10, &v), -1);
}
END_TEST

static int hides(const char *line)
{
	struct vl_mount_fields m;

	ck_assert_int_eq(vl_parse_mount_line(line, &m), 0);
	return vl_mount_hides_pids(&m);
}

START_TEST(test_mount_hidepid)
{
	ck_assert(hides("22 1 0:21 / /proc rw,relatime - proc proc rw,hidepid=2"));
	ck_assert(hides("22 1 0:21 / /proc rw - proc proc rw,hidepid=invisible,subset=pid"));
	ck_assert(hides("22 1 0:21 / /proc rw - proc proc rw,hidepid=ptraceable"));
	ck_assert(!hides("22 1 0:21 / /proc rw - proc proc rw,hidepid=0"));
	ck_assert(!hides("22 1 0:21 / /proc rw - proc proc rw,hidepid=off"));
	ck_assert(!hides("22 1 0:21 / /proc rw,nosuid - proc proc rw"));
	/* another mount point, or another file system type at /proc */
	ck_assert(!hides("90 1 0:21 / /mnt/proc rw - proc proc rw,hidepid=2"));
	ck_assert(!hides("90 1 0:44 / /proc rw - tmpfs tmpfs rw,hidepid=2"));
	/* the per-mount options are not the superblock's */
	ck_assert(!hides("22 1 0:21 / /proc rw,hidepid=2 - proc proc rw"));
}
END_TEST

struct lines_seen {
	int n, stop_at;
	char first[8][32];
	size_t len[8];
};

static int on_line(void *a, char *line)
{
	struct lines_seen *ls = a;

	if (ls->n < 8) {
		snprintf(ls->first[ls->n], sizeof(ls->first[0]), "%s", line);
		ls->len[ls->n] = strlen(line);
	}
	ls->n++;
	return ls->n == ls->stop_at ? 7 : 0;
}

/* lines cut at '\n', one longer than the 4 KiB buffer skipped whole, not split */
START_TEST(test_each_line)
{
	char path[] = "/tmp/vl-lines-XXXXXX";
	int fd = mkstemp(path);
	FILE *f;
	struct lines_seen ls;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs("one\n\nthree\n", f);
	for (int i = 0; i < 10000; i++)
		fputc(i % 2 ? 'x' : 'y', f);
	fputs("\nafter the long one\n", f);
	for (int i = 0; i < 4095; i++) /* fills the buffer before its newline: skipped */
		fputc('z', f);
	fputs("\nlast\n", f);
	ck_assert_int_eq(fclose(f), 0);

	memset(&ls, 0, sizeof(ls));
	ck_assert_int_eq(vl_each_line(path, on_line, &ls), 0);
	ck_assert_int_eq(ls.n, 5);
	ck_assert_str_eq(ls.first[0], "one");
	ck_assert_str_eq(ls.first[1], "");
	ck_assert_str_eq(ls.first[2], "three");
	ck_assert_str_eq(ls.first[3], "after the long one");
	ck_assert_str_eq(ls.first[4], "last");

	memset(&ls, 0, sizeof(ls));
	ls.stop_at = 2;
	ck_assert_int_eq(vl_each_line(path, on_line, &ls), 7);
	ck_assert_int_eq(ls.n, 2);

	unlink(path);
	ck_assert_int_eq(vl_each_line(path, on_line, &ls), -ENOENT);
}
END_TEST

static Suite *parse_suite(void)
{
	Suite *s = suite_create("parse");
	TCase *tc = tcase_create("size");

	tcase_add_test(tc, test_plain_numbers);
	tcase_add_test(tc, test_suffixes);
	tcase_add_test(tc, test_invalid);
	tcase_add_test(tc, test_overflow);
	tcase_add_test(tc, test_decimal);
	tcase_add_test(tc, test_ms);
	suite_add_tcase(s, tc);
	tc = tcase_create("threshold");
	tcase_add_test(tc, test_threshold);
	tcase_add_test(tc, test_threshold_fields_reset);
	tcase_add_test(tc, test_proc_stat);
	tcase_add_test(tc, test_lock_line);
	tcase_add_test(tc, test_id_map);
	suite_add_tcase(s, tc);
	tc = tcase_create("lines");
	tcase_add_test(tc, test_each_line);
	tcase_add_test(tc, test_mount_line);
	tcase_add_test(tc, test_fdinfo_mnt_id);
	tcase_add_test(tc, test_fdinfo_field);
	tcase_add_test(tc, test_mount_hidepid);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return th_run(parse_suite());
}
