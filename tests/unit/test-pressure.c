/* SPDX-License-Identifier: MIT */
/*
 * test-pressure.c - the memory-pressure parsers and arithmetic (src/core/
 * mem_state.c) against fixtures of cgroup v1 and v2, and the reading of a
 * cgroup hierarchy (src/mem_state.c) against fixture directories: this
 * machine has cgroup v1, so the v2 paths are proven here.
 */
#include "core/pressure.h"
#include "mem_state.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MiB (1024ull * 1024)
#define GiB (1024ull * MiB)

START_TEST(test_meminfo)
{
	static const char text[] = "MemTotal:       24683628 kB\n"
				   "MemFree:        23000000 kB\n"
				   "MemAvailable:   23456789 kB\n"
				   "Buffers:           12345 kB\n";
	struct vl_meminfo m;

	ck_assert_int_eq(vl_parse_meminfo(text, &m), 0);
	ck_assert_uint_eq(m.total, 24683628ull * 1024);
	ck_assert_uint_eq(m.available, 23456789ull * 1024);
	ck_assert_int_eq(vl_parse_meminfo("MemTotal: 100 kB\nMemFree: 50 kB\n", &m), -EINVAL);
	ck_assert_int_eq(vl_parse_meminfo("MemTotal: x kB\nMemAvailable: 5 kB\n", &m), -EINVAL);
	/* a key that only starts like another one is not it */
	ck_assert_int_eq(vl_parse_meminfo("MemTotalX: 1 kB\nMemTotal: 2 kB\nMemAvailable: 3 kB\n",
					  &m), 0);
	ck_assert_uint_eq(m.total, 2048);
}
END_TEST

START_TEST(test_proc_cgroup)
{
	char path[256];

	ck_assert_int_eq(vl_cgroup_line("4:memory:/process_api/673b", path, sizeof(path)), 1);
	ck_assert_str_eq(path, "/process_api/673b");
	ck_assert_int_eq(vl_cgroup_line("7:cpu,memory,blkio:/a/b\n", path, sizeof(path)), 1);
	ck_assert_str_eq(path, "/a/b");
	ck_assert_int_eq(vl_cgroup_line("0::/user.slice/user-1000.slice/session-2.scope", path,
					sizeof(path)), 2);
	ck_assert_str_eq(path, "/user.slice/user-1000.slice/session-2.scope");
	ck_assert_int_eq(vl_cgroup_line("0::/", path, sizeof(path)), 2);
	ck_assert_str_eq(path, "/");
	ck_assert_int_eq(vl_cgroup_line("3:cpuset:/", path, sizeof(path)), 0);
	ck_assert_int_eq(vl_cgroup_line("9:name=systemd:/", path, sizeof(path)), 0);
	ck_assert_int_eq(vl_cgroup_line("5:memoryx:/a", path, sizeof(path)), 0);
	ck_assert_int_eq(vl_cgroup_line("garbage", path, sizeof(path)), 0);
	/* a path that does not fit is not half copied */
	ck_assert_int_eq(vl_cgroup_line("0::/much/too/long", path, 5), 0);
}
END_TEST

START_TEST(test_mountinfo)
{
	static const char v1[] = "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup "
				 "rw,memory";
	static const char v1cpu[] = "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup "
				    "rw,cpu";
	static const char v2[] = "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime shared:9 - "
				 "cgroup2 cgroup2 rw,nsdelegate";
	static const char esc[] = "50 30 0:40 /sub /mnt/with\\040space rw - cgroup2 cgroup2 rw";
	static const char tmp[] = "36 25 0:26 / /dev/shm rw - tmpfs tmpfs rw";
	char mnt[256], root[256];

	ck_assert_int_eq(vl_mountinfo_line(v1, 1, mnt, sizeof(mnt), root, sizeof(root)), 1);
	ck_assert_str_eq(mnt, "/sys/fs/cgroup/memory");
	ck_assert_str_eq(root, "/");
	ck_assert_int_eq(vl_mountinfo_line(v1, 2, mnt, sizeof(mnt), root, sizeof(root)), 0);
	ck_assert_int_eq(vl_mountinfo_line(v1cpu, 1, mnt, sizeof(mnt), root, sizeof(root)), 0);
	ck_assert_int_eq(vl_mountinfo_line(v2, 2, mnt, sizeof(mnt), root, sizeof(root)), 1);
	ck_assert_str_eq(mnt, "/sys/fs/cgroup/unified");
	ck_assert_int_eq(vl_mountinfo_line(v2, 1, mnt, sizeof(mnt), root, sizeof(root)), 0);
	ck_assert_int_eq(vl_mountinfo_line(esc, 2, mnt, sizeof(mnt), root, sizeof(root)), 1);
	ck_assert_str_eq(mnt, "/mnt/with space");
	ck_assert_str_eq(root, "/sub");
	ck_assert_int_eq(vl_mountinfo_line(tmp, 2, mnt, sizeof(mnt), root, sizeof(root)), 0);
	ck_assert_int_eq(vl_mountinfo_line("", 2, mnt, sizeof(mnt), root, sizeof(root)), 0);
}
END_TEST

START_TEST(test_cgroup_dir_of)
{
	char dir[64];

	ck_assert_int_eq(vl_cgroup_dir_of("/sys/fs/cgroup", "/", "/a/b", dir, sizeof(dir)), 0);
	ck_assert_str_eq(dir, "/sys/fs/cgroup/a/b");
	ck_assert_int_eq(vl_cgroup_dir_of("/sys/fs/cgroup", "/", "/", dir, sizeof(dir)), 0);
	ck_assert_str_eq(dir, "/sys/fs/cgroup");
	/* a mount (a container's) that shows the hierarchy from /lxc/c1 */
	ck_assert_int_eq(vl_cgroup_dir_of("/sys/fs/cgroup", "/lxc/c1", "/lxc/c1/app", dir,
					  sizeof(dir)), 0);
	ck_assert_str_eq(dir, "/sys/fs/cgroup/app");
	ck_assert_int_eq(vl_cgroup_dir_of("/sys/fs/cgroup", "/lxc/c1", "/lxc/c10/app", dir,
					  sizeof(dir)), -ENOENT);
	ck_assert_int_eq(vl_cgroup_dir_of("/sys/fs/cgroup", "/lxc/c1", "/other", dir, sizeof(dir)),
			 -ENOENT);
	ck_assert_int_eq(vl_cgroup_dir_of("/sys/fs/cgroup/memory", "/",
					  "/a/very/long/path/that/does/not/fit/at/all", dir, 32),
			 -ENAMETOOLONG);
}
END_TEST

START_TEST(test_values)
{
	uint64_t v;

	ck_assert_int_eq(vl_parse_cgroup_value("max\n", &v), 0);
	ck_assert_uint_eq(v, VL_UNLIMITED);
	ck_assert_int_eq(vl_parse_cgroup_value("9223372036854771712\n", &v), 0); /* v1 "none" */
	ck_assert_uint_eq(v, VL_UNLIMITED);
	ck_assert_int_eq(vl_parse_cgroup_value("67108864\n", &v), 0);
	ck_assert_uint_eq(v, 67108864);
	ck_assert_int_eq(vl_parse_cgroup_value("0", &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(vl_parse_cgroup_value("maximum\n", &v), -EINVAL);
	ck_assert_int_eq(vl_parse_cgroup_value("12ab\n", &v), -EINVAL);
	ck_assert_int_eq(vl_parse_cgroup_value("", &v), -EINVAL);

	ck_assert_int_eq(vl_parse_stat_key("anon 100\nfile 200\ninactive_file 300\n",
					   "inactive_file", &v), 0);
	ck_assert_uint_eq(v, 300);
	ck_assert_int_eq(vl_parse_stat_key("total_inactive_file 5\ninactive_file 4\n",
					   "inactive_file", &v), 0);
	ck_assert_uint_eq(v, 4);
	ck_assert_int_eq(vl_parse_stat_key("anon 1\n", "inactive_file", &v), -ENOENT);
}
END_TEST

START_TEST(test_arithmetic)
{
	struct vl_threshold pct = { .is_percent = 1, .percent = 10 };
	struct vl_threshold size = { .bytes = 64 * MiB };
	struct vl_threshold off = { .is_percent = 1, .percent = 0 };

	ck_assert_uint_eq(vl_cgroup_headroom(VL_UNLIMITED, 5, 0), VL_UNLIMITED);
	ck_assert_uint_eq(vl_cgroup_headroom(100, 30, 0), 70);
	ck_assert_uint_eq(vl_cgroup_headroom(100, 130, 0), 0);
	ck_assert_uint_eq(vl_cgroup_headroom(100, 90, 20), 30);
	ck_assert_uint_eq(vl_cgroup_headroom(100, 10, 50), 100); /* reclaimable capped by usage */

	ck_assert_uint_eq(vl_threshold_bytes(&pct, 1000), 100);
	ck_assert_uint_eq(vl_threshold_bytes(&pct, 24 * GiB), 24 * GiB / 10);
	ck_assert_uint_eq(vl_threshold_bytes(&pct, VL_UNLIMITED), 0);
	ck_assert_uint_eq(vl_threshold_bytes(&size, 1000), 64 * MiB);
	ck_assert_uint_eq(vl_threshold_bytes(&off, 1000), 0);
	ck_assert(!vl_threshold_on(&off));
	ck_assert(vl_threshold_on(&pct));

	ck_assert_uint_eq(vl_purge_need(200, 100, MiB), 0);
	ck_assert_uint_eq(vl_purge_need(100, 100, MiB), 0);
	ck_assert_uint_eq(vl_purge_need(0, 0, MiB), 0);
	/* below: climb back over the threshold with a quarter of it to spare */
	ck_assert_uint_eq(vl_purge_need(60 * MiB, 100 * MiB, MiB), 40 * MiB + 25 * MiB);
	/* small thresholds: at least min_room more */
	ck_assert_uint_eq(vl_purge_need(1000, 2000, MiB), 1000 + MiB);
	ck_assert_uint_eq(vl_purge_need(1000, 2000, 0), 1000 + 500);

	/* the daemon's sleep: the time the gap takes to go at the rate, within bounds */
	ck_assert_uint_eq(vl_poll_ms(400 * MiB, 4 * GiB, 20, 1000), 97); /* 400 MiB at 4 GiB/s */
	ck_assert_uint_eq(vl_poll_ms(64 * MiB, 4 * GiB, 20, 1000), 20);  /* 15.6 ms: the floor */
	ck_assert_uint_eq(vl_poll_ms(0, 4 * GiB, 20, 1000), 20);
	ck_assert_uint_eq(vl_poll_ms(20 * GiB, 4 * GiB, 20, 1000), 1000);
	ck_assert_uint_eq(vl_poll_ms(VL_UNLIMITED, 4 * GiB, 20, 1000), 1000);
	ck_assert_uint_eq(vl_poll_ms(20 * GiB, 0, 20, 1000), 1000);
	ck_assert_uint_eq(vl_poll_ms(5000, 999, 20, 1000), 1000); /* under 1 byte a ms */
	ck_assert_uint_eq(vl_poll_ms(0, 4 * GiB, 5000, 1000), 5000); /* the floor wins */
}
END_TEST

/* The daemon's rate of fall: the floor, or what it saw since its last look if faster. */
START_TEST(test_fall_rate)
{
	const uint64_t least = 4 * GiB;

	ck_assert_uint_eq(vl_fall_rate(8 * GiB, 7 * GiB, 0, least), least); /* no last look */
	ck_assert_uint_eq(vl_fall_rate(7 * GiB, 8 * GiB, 1000000, least), least); /* rose */
	ck_assert_uint_eq(vl_fall_rate(8 * GiB, 8 * GiB, 1000000, least), least);
	/* 1 GiB in 1 s: slower than the floor */
	ck_assert_uint_eq(vl_fall_rate(8 * GiB, 7 * GiB, 1000000000, least), least);
	/* 100 MiB in 10 ms: 10,000 MiB/s */
	ck_assert_uint_eq(vl_fall_rate(8 * GiB, 8 * GiB - 100 * MiB, 10000000, least),
			  10000 * MiB);
	/* beyond 64 bits a second */
	ck_assert_uint_eq(vl_fall_rate(UINT64_MAX, 0, 1, least), UINT64_MAX);
}
END_TEST

/* ---- fixture hierarchies on disk ---- */

static char base[64];

static void put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void dir(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	ck_assert_int_eq(mkdir(path, 0700), 0);
}

static void make_base(void)
{
	strcpy(base, "/tmp/vl-pressure.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base));
}

static void remove_base(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	ck_assert_int_eq(system(cmd), 0);
}

/*
 * v2: the hierarchy's root has no memory files; a/ has a 1 GiB limit and
 * 900 MiB in use of which 50 MiB inactive file cache; a/b/ has no max but
 * a 2 GiB high and 100 MiB in use. The binding headroom is a's.
 */
START_TEST(test_v2_fixture)
{
	struct vl_cgroup cg;
	struct vl_memstate ms;

	make_base();
	dir("a");
	dir("a/b");
	put("cgroup.controllers", "cpu memory\n");
	put("a/memory.max", "1073741824\n");
	put("a/memory.high", "max\n");
	put("a/memory.current", "943718400\n");
	put("a/memory.stat", "anon 891289600\nfile 52428800\ninactive_file 52428800\n");
	put("a/b/memory.max", "max\n");
	put("a/b/memory.high", "2147483648\n");
	put("a/b/memory.current", "104857600\n");
	put("a/b/memory.stat", "anon 104857600\ninactive_file 0\n");

	memset(&cg, 0, sizeof(cg));
	cg.version = 2;
	snprintf(cg.mnt, sizeof(cg.mnt), "%s", base);
	snprintf(cg.dir, sizeof(cg.dir), "%s/a/b", base);
	ck_assert_int_eq(vl_memstate_read(&cg, &ms), 0);
	ck_assert_uint_eq(ms.cg_limit, 1073741824ull);
	ck_assert_uint_eq(ms.cg_headroom, 1073741824ull - (943718400ull - 52428800ull));
	ck_assert_uint_eq(ms.total, ms.mem_total < GiB ? ms.mem_total : GiB);
	ck_assert_uint_le(ms.available, ms.cg_headroom);
	ck_assert_int_eq(ms.by_cgroup, ms.cg_headroom < ms.mem_available);

	/* --cgroup DIR names a v2 cgroup by its files, and looks no higher */
	ck_assert_int_eq(vl_cgroup_at(cg.dir, &cg), 0);
	ck_assert_int_eq(cg.version, 2);
	ck_assert_int_eq(vl_memstate_read(&cg, &ms), 0);
	ck_assert_uint_eq(ms.cg_limit, 2147483648ull); /* only b: its memory.high */
	ck_assert_uint_eq(ms.cg_headroom, 2147483648ull - 104857600ull);

	/* no limit anywhere: the system's numbers */
	put("a/memory.max", "max\n");
	put("a/b/memory.high", "max\n");
	cg.version = 2;
	snprintf(cg.mnt, sizeof(cg.mnt), "%s", base);
	snprintf(cg.dir, sizeof(cg.dir), "%s/a/b", base);
	ck_assert_int_eq(vl_memstate_read(&cg, &ms), 0);
	ck_assert_uint_eq(ms.cg_limit, VL_UNLIMITED);
	ck_assert_uint_eq(ms.cg_headroom, VL_UNLIMITED);
	ck_assert_uint_eq(ms.available, ms.mem_available);
	ck_assert_uint_eq(ms.total, ms.mem_total);
	ck_assert_int_eq(ms.by_cgroup, 0);
	remove_base();
}
END_TEST

/* v1: limit_in_bytes/usage_in_bytes, total_inactive_file; v1's "no limit" */
START_TEST(test_v1_fixture)
{
	struct vl_cgroup cg;
	struct vl_memstate ms;

	make_base();
	dir("app");
	put("memory.limit_in_bytes", "9223372036854771712\n");
	put("memory.usage_in_bytes", "5000000000\n");
	put("app/memory.limit_in_bytes", "67108864\n");
	put("app/memory.usage_in_bytes", "60000000\n");
	put("app/memory.stat", "cache 4000000\ninactive_file 1000\ntotal_inactive_file 2000000\n");

	ck_assert_int_eq(vl_cgroup_at(base, &cg), 0);
	ck_assert_int_eq(cg.version, 1);
	memset(&cg, 0, sizeof(cg));
	cg.version = 1;
	snprintf(cg.mnt, sizeof(cg.mnt), "%s", base);
	snprintf(cg.dir, sizeof(cg.dir), "%s/app", base);
	ck_assert_int_eq(vl_memstate_read(&cg, &ms), 0);
	ck_assert_uint_eq(ms.cg_limit, 67108864ull);
	ck_assert_uint_eq(ms.cg_headroom, 67108864ull - (60000000ull - 2000000ull));
	ck_assert_uint_eq(ms.available, ms.cg_headroom);
	ck_assert_int_eq(ms.by_cgroup, 1);
	ck_assert_uint_eq(ms.total, 67108864ull);

	/* over the limit (usage can exceed it for a moment): no headroom, not a wrap */
	put("app/memory.usage_in_bytes", "70000000\n");
	put("app/memory.stat", "total_inactive_file 0\n");
	ck_assert_int_eq(vl_memstate_read(&cg, &ms), 0);
	ck_assert_uint_eq(ms.cg_headroom, 0);
	ck_assert_uint_eq(ms.available, 0);
	remove_base();
}
END_TEST

START_TEST(test_own_cgroup)
{
	struct vl_cgroup cg;
	struct vl_memstate ms;
	int err = vl_own_cgroup(&cg);

	/* whatever this machine has, the answer is consistent and readable */
	if (err == 0) {
		ck_assert(cg.version == 1 || cg.version == 2);
		ck_assert_int_eq(strncmp(cg.dir, cg.mnt, strlen(cg.mnt)), 0);
		ck_assert_int_eq(access(cg.dir, R_OK), 0);
	} else {
		ck_assert_int_eq(err, -ENOENT);
	}
	ck_assert_int_eq(vl_memstate_read(err == 0 ? &cg : NULL, &ms), 0);
	ck_assert_uint_gt(ms.mem_total, 0);
	ck_assert_uint_le(ms.available, ms.mem_available);
	ck_assert_uint_le(ms.total, ms.mem_total);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pressure");
	TCase *t = tcase_create("pressure");
	SRunner *sr;
	int failed;

	tcase_add_test(t, test_meminfo);
	tcase_add_test(t, test_proc_cgroup);
	tcase_add_test(t, test_mountinfo);
	tcase_add_test(t, test_cgroup_dir_of);
	tcase_add_test(t, test_values);
	tcase_add_test(t, test_arithmetic);
	tcase_add_test(t, test_fall_rate);
	tcase_add_test(t, test_v2_fixture);
	tcase_add_test(t, test_v1_fixture);
	tcase_add_test(t, test_own_cgroup);
	suite_add_tcase(s, t);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
