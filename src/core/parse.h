/* SPDX-License-Identifier: MIT */
/*
 * parse.h - sizes as users write them: "4096", "64K", "16M", "2G".
 */
#ifndef VL_PARSE_H
#define VL_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * The unsigned decimal at *p, after any blanks (spaces, tabs) before it;
 * *p is moved past its digits. 0, -EINVAL (no digit there) or -ERANGE
 * (too large for 64 bits). The one reader of decimals: sizes, durations,
 * and the numbers of /proc and cgroup files.
 */
int vl_parse_decimal(const char **p, uint64_t *v);

/*
 * A size: decimal digits and an optional K, M, G or T (powers of 1024,
 * either case, optionally followed by "B" or "iB"). Returns 0, -EINVAL
 * (not a size) or -ERANGE (more than 2^63-1).
 */
int vl_parse_size(const char *s, uint64_t *out);

/*
 * A duration in milliseconds: decimal digits, then nothing or "ms"
 * (milliseconds) or "s" (seconds), at most max_ms. Returns 0, -EINVAL
 * (not a duration) or -ERANGE (over max_ms).
 */
int vl_parse_ms(const char *s, uint64_t max_ms, uint64_t *out);

/* A threshold: a size, or a percentage "N%" (0-100, *percent set). */
struct vl_threshold {
	uint64_t bytes;
	uint32_t percent;  /* used when is_percent */
	int is_percent;
};
int vl_parse_threshold(const char *s, struct vl_threshold *t);

/* Does the threshold ask for anything (0 and 0% switch a rule off)? */
static inline int vl_threshold_on(const struct vl_threshold *t)
{
	return t->is_percent ? t->percent > 0 : t->bytes > 0;
}

/*
 * From a "/proc/PID/stat" line: the state (field 3), the start time (field
 * 22, clock ticks after boot) and the start of the stack (field 28, set
 * at each exec; 0 when the reader may not see it). Fields are counted
 * after the last ')', since the command name (field 2) may hold any
 * character. 0, or -1 if the line does not parse.
 */
struct vl_proc_stat {
	char state;
	uint64_t start;
	uint64_t stack;
};
int vl_parse_proc_stat(const char *line, struct vl_proc_stat *out);

/*
 * From a /proc/locks line of an OFD lock held (not waited for): "3: OFDLCK
 * ADVISORY  READ  -1 00:1b:41747 90123 90123": its file's device (major
 * and minor in hex, made into a dev_t), inode and first byte. 0, or -1 if
 * the line is not such a lock.
 */
int vl_parse_lock_line(const char *line, uint64_t *dev, uint64_t *ino, uint64_t *start);

/*
 * From a /proc/PID/uid_map (or gid_map) line, "INSIDE OUTSIDE COUNT" in
 * blank-padded decimals (OUTSIDE as the reader's user namespace sees it):
 * what id `outside` is inside that namespace, in *inside. 0, or -1 if the
 * line does not parse or does not map `outside`.
 */
int vl_id_map_inside(const char *line, uint64_t outside, uint64_t *inside);

/*
 * The fields of a /proc/PID/mountinfo line, "36 25 0:26 / /dev/shm
 * rw,nosuid shared:1 - tmpfs tmpfs rw,size=65536k" (ID PARENT MAJ:MIN
 * ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS): the
 * mount's id, the device (a dev_t), and where the root within the file system, the mount
 * point, the type and the super block's options are in the line, as it
 * shows them (names escaped: vl_mount_unescape). 0, or -1 if the line
 * is not such a line.
 */
struct vl_mount_fields {
	uint64_t id, dev;
	const char *root, *point, *fstype, *superopts;
	size_t root_len, point_len, fstype_len, superopts_len;
};
int vl_parse_mount_line(const char *line, struct vl_mount_fields *m);

/*
 * From the text of a /proc/PID/fdinfo/N file ("pos:\t0\nflags:\t02\n
 * mnt_id:\t24\nino:\t3\n..."): the id of the mount the file is on, as
 * mountinfo's first field names it. 0, or -1 if there is no such line.
 */
int vl_fdinfo_mnt_id(const char *text, uint64_t *id);

/*
 * The same for any numeric field of that text, by name without its colon
 * ("flags": octal, base 8; "ino": base 10): 0, or -1 if there is no such
 * line or its value is not a number of that base.
 */
int vl_fdinfo_field(const char *text, const char *name, int base, uint64_t *out);

/*
 * A name of a mountinfo field (len bytes at src) as it is: blanks, tabs,
 * newlines and backslashes come escaped as \ooo. 0, or -1 if it does not
 * fit in size bytes with its NUL (dst then holds nothing useful).
 */
int vl_mount_unescape(char *dst, size_t size, const char *src, size_t len);

/* Is it a /proc mounted hidepid (any value but 0 or off): processes others cannot trace are hidden? */
int vl_mount_hides_pids(const struct vl_mount_fields *m);

/* Are the len bytes at f the string s? */
static inline int vl_field_is(const char *f, size_t len, const char *s)
{
	return strncmp(f, s, len) == 0 && s[len] == '\0';
}

#endif
