# SPDX-License-Identifier: MIT
# lib.sh - sourced by every shell test (tests/shell/*.sh).
#
# make check runs each test with VL_TOP_BUILDDIR, VL_TOP_SRCDIR and
# VOLATILE_LIBRARY in the environment. A test exits 0 (pass), 1 (fail) or
# 77 (skip: only when the machine forbids a step, saying why).
# VOLATILE_LIBRARY is the debug build (tests/debug: a lock precondition
# not met aborts, naming the lock and the function; the release library
# if that is not built); VOLATILE_RELEASE_LIBRARY the release one, for the
# tests about the library as installed (symbols.sh, run-abi.sh,
# fault-release.sh). The same for the command: VOLATILE_CMD is
# tests/debug/volatile where built, VOLATILE_RELEASE_CMD src/volatile
# (run-abi.sh, fault-release.sh).
#
# What a test gets:
#   $WORK      a private directory on tmpfs (/dev/shm), removed at exit
#   $DISK      a private directory on a disk file system, removed at exit
#   VOLATILE_REGION   a private region file (inside $WORK), not created yet
#   vt ARGS... / svt ARGS...    tests/helpers/vt without / with the shim
#   vol ARGS...                 the `volatile` command
#   shim CMD...                 any command with LD_PRELOAD=libvolatile.so
# Every one of these runs under `timeout`: a hang is a failure, not a
# stuck test suite. VL_KEEP=1 keeps $WORK for a look afterwards.

set -u

TEST_NAME=$(basename "$0" .sh)
: "${VL_TOP_BUILDDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${VOLATILE_RELEASE_LIBRARY:=$VL_TOP_BUILDDIR/src/.libs/libvolatile.so}"
if [ -z "${VOLATILE_LIBRARY:-}" ]; then
	VOLATILE_LIBRARY=$VL_TOP_BUILDDIR/tests/debug/.libs/libvolatile.so
	[ -r "$VOLATILE_LIBRARY" ] || VOLATILE_LIBRARY=$VOLATILE_RELEASE_LIBRARY
fi
# (VL_RUN_TOP: share_build's copy, when a --inside run follows one)
: "${VL_RUN_TOP:=$VL_TOP_BUILDDIR}"
VOLATILE_RELEASE_CMD=$VL_RUN_TOP/src/volatile
VOLATILE_CMD=$VL_RUN_TOP/tests/debug/volatile
[ -x "$VOLATILE_CMD" ] || VOLATILE_CMD=$VOLATILE_RELEASE_CMD
# The test suite's build of the command (tests/fault/volatile-fault): the
# same, but it may be told a shorter grace for gone files than the
# installed 3 s (purge.c, VOLATILE_FAULT_GONE_GRACE). A test of forgetting
# exports VOLATILE_FAULT_GONE_GRACE=$VL_GRACE, purges with it and waits
# for the purge that forgets (or past_grace). 2, not 1: two purges within
# one second of the wall clock are then within the grace whatever second
# boundaries the library's clock has.
VOLATILE_FAULT_CMD=$VL_RUN_TOP/tests/fault/volatile-fault
VL_GRACE=2
VT=$VL_RUN_TOP/tests/helpers/vt
# seconds any one command may take
VL_TIMEOUT=${VL_TIMEOUT:-20}
export VL_TOP_BUILDDIR VOLATILE_LIBRARY VOLATILE_RELEASE_LIBRARY

# Nothing from the caller's environment changes what the library does...
unset LD_PRELOAD VOLATILE_BUDGET VOLATILE_DEBUG VOLATILE_REGION_RANGES \
	VOLATILE_REGION_FILES VOLATILE_2012_ABI
# ...and memory pressure on the test machine purges nothing behind our back.
VOLATILE_MIN_AVAILABLE=0
VOLATILE_TMPFS_MIN_FREE=0
export VOLATILE_MIN_AVAILABLE VOLATILE_TMPFS_MIN_FREE
LC_ALL=C
export LC_ALL

say() {
	printf '%s: %s\n' "$TEST_NAME" "$*"
}

fail() {
	printf 'FAIL: %s: %s\n' "$TEST_NAME" "$*" >&2
	exit 1
}

skip() {
	printf 'SKIP: %s: %s\n' "$TEST_NAME" "$*"
	exit 77
}

# rerun_inside NS: run this test again as `$0 --inside`, under NS (an
# unshare command making a private mount namespace), in the same $WORK;
# rc gets its exit status.
rerun_inside() {
	VL_TEST_INNER=1
	export VL_TEST_INNER
	# shellcheck disable=SC2086
	$1 /bin/sh "$0" --inside
	rc=$?
}

# private_ns [UNSHARE OPTION...]: the command that runs a command in a
# private mount namespace (with the options given: -p -f --mount-proc...),
# in $PRIVATE_NS; 1 if none can be made, why in $WORK/unshare.err. In a
# chroot the root is no mount point, and unshare cannot make it private
# ("cannot change root filesystem propagation: Invalid argument"): there
# the namespace is made with propagation unchanged, and a script of $WORK's
# makes every mount of it private, those above the chroot's root too
# (private-ns.sh), mounts /proc where --mount-proc was
# asked, and runs the command; it exits 78 (why in $WORK/mount.err) where
# the mount that holds $WORK, where tests mount, is not private then.
# shellcheck disable=SC2120 # options are for some callers only
private_ns() {
	PRIVATE_NS="unshare -m --propagation private $*"
	unshare -m --propagation private "$@" true 2>"$WORK/unshare.err" && return 0
	grep -q 'cannot change root filesystem propagation' "$WORK/unshare.err" || return 1
	_opts=
	_proc=
	for _o in "$@"; do
		case $_o in
		--mount-proc) _proc=-proc ;;
		*) _opts="$_opts $_o" ;;
		esac
	done
	# shellcheck disable=SC2086 # words: options
	unshare -m --propagation unchanged $_opts true 2>"$WORK/unshare.err" || return 1
	_script=$WORK/private-mounts$_proc
	# The mount that holds the chroot's root is in no mountinfo here, and
	# stays as shared as the host made it: a mount on one of its directories
	# (/run, where the chroot mounts none) would be the host's too. perl
	# (Debian's perl-base) takes a descriptor of this namespace's true root
	# out of the chroot (a chroot into a directory below, then ".." past
	# it), comes back, and has every mount of the namespace made private
	# from there, in this namespace alone.
	cat >"$_script" <<EOF || return 1
perl -e '
	\$^F = 1023;
	mkdir \$ARGV[0];
	opendir(my \$back, "/") or die "/: \$!";
	chroot \$ARGV[0] or die "chroot \$ARGV[0]: \$!";
	chdir ".." for 1 .. 1024;
	sysopen(my \$top, ".", 0) or die "the true root: \$!";
	chdir \$back or die "back to the chroot: \$!";
	chroot "." or die "back to the chroot: \$!";
	chdir "/";
	exec "mount", "-c", "--make-rprivate", "/proc/self/fd/" . fileno(\$top);
' '$WORK/true-root' 2>'$WORK/mount.err' || exit 78
if [ -n "$_proc" ]; then mount -t proc proc /proc 2>'$WORK/mount.err' || exit 78; fi
p=\$(findmnt -n -o PROPAGATION -T '$WORK' 2>&1)
[ "\$p" = private ] || { echo "the mount that holds $WORK is not private here (\$p)" >'$WORK/mount.err'; exit 78; }
exec "\$@"
EOF
	PRIVATE_NS="unshare -m --propagation unchanged$_opts /bin/sh $_script"
}

# mount_ns: MOUNT_NS, a command that runs its arguments in a private mount
# namespace of their own: private_ns's as root, unshare -Urm (a user
# namespace too) otherwise. 1, with the reason in $WORK/unshare.err, where
# neither can be made.
mount_ns() {
	if [ "$(id -u)" -ne 0 ]; then
		MOUNT_NS="unshare -Urm --propagation private"
		$MOUNT_NS true 2>"$WORK/unshare.err"
		return
	fi
	private_ns
	_rc=$?
	MOUNT_NS=$PRIVATE_NS
	return $_rc
}

# own_proc CMD...: CMD in a pid namespace of its own, with its own /proc
# (unshare -pf --mount-proc, or private_ns's way in a chroot)
own_proc() {
	if unshare -pf --mount-proc true 2>/dev/null; then
		unshare -pf --mount-proc "$@"
	else
		private_ns -p -f --mount-proc || return 1
		$PRIVATE_NS "$@"
	fi
}

# in_private_tmpfs WHAT [NOTE]: as root, run this test again inside a
# private mount namespace, where its --inside part mounts WHAT (a tmpfs of
# its own) and exits 78, with $WORK/mount.err, if it cannot; then exit as
# that run did. NOTE ends each skip message.
in_private_tmpfs() {
	_note=${2:-}
	[ "$(id -u)" -eq 0 ] || skip "not root: cannot mount $1$_note"
	command -v unshare >/dev/null 2>&1 || skip "unshare (util-linux) is not installed$_note"
	private_ns ||
		skip "cannot make a mount namespace ($PRIVATE_NS): $(cat "$WORK/unshare.err")$_note"
	rerun_inside "$PRIVATE_NS"
	[ "$rc" -eq 78 ] && skip "cannot mount $1: $(cat "$WORK/mount.err")$_note"
	exit "$rc"
}

# ---- what the test needs --------------------------------------------------

[ -x "$VT" ] || fail "$VT is not built (make check builds it)"
[ -r "$VOLATILE_LIBRARY" ] || fail "$VOLATILE_LIBRARY is not built"
command -v timeout >/dev/null 2>&1 || skip "no timeout(1) on this machine"

need_cmd() {
	[ -x "$VOLATILE_CMD" ] || fail "$VOLATILE_CMD is not built"
}

# supervised: does `volatile run` have its seccomp supervisor here (DESIGN
# 21)? It says with --debug when it has not (built without libseccomp, a
# kernel or a sandbox refusing the filter).
supervised() {
	! timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run --debug -- true 2>&1 |
		grep -q '^volatile run: seccomp'
}

# supervisor_of TAG: the pid of the supervisor of the `volatile run` started
# with VL_RUN_TAG=TAG in its environment (DESIGN 21: run's grandchild, a
# process named volatile that leads a session of its own; run itself, until
# it execs CMD, is in the caller's session), waited for (60 s at most)
supervisor_of() {
	_i=0
	while :; do
		for _p in /proc/[0-9]*; do
			[ "$(cat "$_p/comm" 2>/dev/null)" = volatile ] || continue
			_sid=$(sed 's/^.*) //' "$_p/stat" 2>/dev/null | cut -d' ' -f4)
			[ "$_sid" = "${_p#/proc/}" ] || continue
			{ tr '\0' '\n' <"$_p/environ"; } 2>/dev/null | grep -qxF "VL_RUN_TAG=$1" || continue
			echo "$_sid"
			return 0
		done
		_i=$((_i + 1))
		[ "$_i" -le "$VL_WAIT_TICKS" ] || fail "timed out waiting for the supervisor of run $1"
		sleep 0.01
	done
}

# python3 reads the JSON of `volatile status --json`; the system's one
# if there is one (wrappers such as pyenv's shims cost half a second a call)
PYTHON=python3
[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3
need_python() {
	command -v "$PYTHON" >/dev/null 2>&1 || skip "python3 is needed to read JSON and is missing"
}

# need_fault_lib: FAULT_LIB names the library's test build (tests/fault:
# VT_STOP_AT stops a process at a named step, VOLATILE_FAULT_AGE_SHIFT
# moves its age clock), share_build's copy once it made one; the test
# fails where it is not built.
need_fault_lib() {
	FAULT_LIB=${VOLATILE_FAULT_LIBRARY:-$VL_TOP_BUILDDIR/tests/fault/.libs/libvolatile-fault.so}
	[ -r "$FAULT_LIB" ] || fail "$FAULT_LIB is not built (make check builds it)"
}

# need_lockword: LOCKWORD names tests/helpers/lockword (a file's record
# slot, a record's lock word, a pid's token, the region's counts);
# the test fails where it is not built.
need_lockword() {
	LOCKWORD=$VL_TOP_BUILDDIR/tests/helpers/lockword
	[ -x "$LOCKWORD" ] || fail "$LOCKWORD is not built (make check builds it)"
}

# need_plant: PLANT names tests/helpers/plant (records planted, fields of
# the region written without their sums, lock words); the test fails
# where it is not built.
need_plant() {
	PLANT=$VL_TOP_BUILDDIR/tests/helpers/plant
	[ -x "$PLANT" ] || fail "$PLANT is not built (make check builds it)"
}

# flag_by_repair FILE: FILE (64K, made here) gets [8K, 12K) marked and
# purged, its node's end written below its start without its sum, its lock
# made a dead holder's; the UNMARK of [32K, 36K), never marked, then
# repairs the file, the repair drops the range it cannot read and flags
# the record (DESIGN 11): that UNMARK says 1. The region is the test's.
flag_by_repair() {
	mkfile "$1" 64K F
	ok fr-m svt open "$1" rw mark 8K 4K
	ok fr-p vol purge --all
	ok fr-e "$PLANT" end "$1" 8192 4096
	ok fr-l "$PLANT" lockword "$1" dead
	ok fr-u svt open "$1" rw unmark 32K 4K
	expect_line fr-u "unmark 32K 4K = 1"
}

# never_zero NAME OFF LEN: NAME's UNMARK of OFF LEN over punched bytes said
# 1, or failed with EUCLEAN; never 0 (DESIGN 4), nor anything else.
never_zero() {
	grep -qx "unmark $2 $3 = 1" "$WORK/$1.out" ||
		grep -qx "unmark $2 $3 = -1 EUCLEAN" "$WORK/$1.out" ||
		{ show "$1" && fail "$1: an UNMARK over punched bytes [$2, +$3) said 0, or not 1"; }
}

# kernel_word: may this process have the kernel's word that a file is gone
# (src/inode_gone.c: open_by_handle_at, which needs CAP_DAC_READ_SEARCH, and which
# a seccomp filter may refuse)? 0 if so; else 1, why in $KERNEL_WORD_WHY.
kernel_word() {
	KERNEL_WORD_WHY=
	if [ "$(id -u)" -ne 0 ]; then
		KERNEL_WORD_WHY="not root: the kernel opens file handles only for CAP_DAC_READ_SEARCH"
		return 1
	fi
	_caps=$(awk '$1 == "CapEff:" { print $2 }' /proc/self/status)
	case $_caps in
	'' | *[!0-9a-f]*) fail "cannot read this process's capabilities: '$_caps'" ;;
	esac
	if [ $(((0x$_caps >> 2) & 1)) -ne 1 ]; then
		KERNEL_WORD_WHY="root without CAP_DAC_READ_SEARCH here: no file handle can be opened"
		return 1
	fi
	if ! command -v "$PYTHON" >/dev/null 2>&1; then
		KERNEL_WORD_WHY="python3 is missing: the kernel's word cannot be asked for"
		return 1
	fi
	# Does the kernel (or a seccomp filter) let us open a handle, and say
	# ESTALE for a gone memfd? Asked without the library.
	"$PYTHON" -c '
import ctypes, errno, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = os.memfd_create("a"), os.memfd_create("b")
h = ctypes.create_string_buffer(8 + 128)
struct.pack_into("I", h, 0, 128)
mnt = ctypes.c_int()
if libc.name_to_handle_at(a, b"", h, ctypes.byref(mnt), 0x1000) != 0:  # AT_EMPTY_PATH
    print("name_to_handle_at: " + os.strerror(ctypes.get_errno()))
    sys.exit(1)
os.close(a)
fd = libc.open_by_handle_at(b, h, os.O_PATH)
e = ctypes.get_errno()
if fd >= 0 or e != errno.ESTALE:
    print("open_by_handle_at of a gone memfd: " + ("opened" if fd >= 0 else os.strerror(e)))
    sys.exit(1)
' >"$WORK/kernel-word.out" 2>&1 && return 0
	KERNEL_WORD_WHY="file handles cannot be used here: $(cat "$WORK/kernel-word.out")"
	return 1
}

fs_type() {
	stat -f -c %T "$1" 2>/dev/null
}

# ---- private directories and region ----------------------------------------

BG_PIDS=
LOOP_DEVS=

cleanup() {
	for p in $BG_PIDS; do
		kill "$p" 2>/dev/null
	done
	for d in $LOOP_DEVS; do
		losetup -d "$d" 2>/dev/null
	done
	if command -v chattr >/dev/null 2>&1; then
		for d in ${WORK:-} ${DISK:-}; do
			[ -d "$d" ] && find "$d" -type f -exec chattr -a -i {} + 2>/dev/null
		done
	fi
	if [ "${VL_KEEP:-0}" = 1 ]; then
		printf '%s: kept %s %s\n' "$TEST_NAME" "${WORK:-}" "${DISK:-}" >&2
		return
	fi
	[ -n "${WORK:-}" ] && rm -rf "$WORK"
	[ -n "${DISK:-}" ] && rm -rf "$DISK"
}

if [ -z "${VL_TEST_INNER:-}" ]; then
	[ "$(fs_type /dev/shm)" = tmpfs ] || skip "/dev/shm is not a tmpfs here"
	WORK=$(mktemp -d /dev/shm/vltest.XXXXXXXX) || fail "cannot make a directory in /dev/shm"
	trap cleanup EXIT
	trap 'exit 1' HUP INT TERM
	# a disk file system: /tmp, unless it is a tmpfs; then the build tree
	DISK=
	for d in "${TMPDIR:-/tmp}" /var/tmp "$VL_TOP_BUILDDIR"; do
		case $(fs_type "$d") in
		tmpfs | ramfs | '') continue ;;
		esac
		DISK=$(mktemp -d "$d/vltest.XXXXXXXX" 2>/dev/null) && break
		DISK=
	done
	VOLATILE_REGION=$WORK/region
	export WORK DISK VOLATILE_REGION
fi

# where a region starts in its file (VL_MAP_OFFSET, src/core/layout.h)
VL_REGION_OFFSET=$((0x564c000))

REGION_N=0
# A fresh, not yet created, private region for what follows, in
# $REGION_DIR if the test sets it (a directory of another user's), else $WORK.
new_region() {
	REGION_N=$((REGION_N + 1))
	VOLATILE_REGION=${REGION_DIR:-$WORK}/region.$REGION_N
	export VOLATILE_REGION
}

need_disk() {
	[ -n "$DISK" ] || skip "no disk (non-tmpfs) file system to write to"
}

# ---- what other users run ---------------------------------------------------

# share_build UID: as root, make what a test runs as uid UID reachable by
# it. The tree may lie where no other user can read (a clone in /root,
# 0700): then the library, the volatile command, the test helpers and the
# fault library are copied, in the build tree's layout, to a directory every
# user can read, on a disk (a tmpfs may be mounted noexec or nosuid), else
# in $WORK; removed at exit with it. VT, VOLATILE_CMD, VOLATILE_LIBRARY,
# VOLATILE_FAULT_LIBRARY and VL_RUN_TOP (the top of what others run: the
# build tree or the copy; its src/.libs holds libvolatile.so.0) name what
# to run from then on, for root's processes too: one library, one command.
share_build() {
	[ "$(id -u)" -eq 0 ] || return 0
	command -v setpriv >/dev/null 2>&1 || return 0
	runs_as "$1" && return 0
	for _d in ${DISK:+"$DISK"} "$WORK"; do
		case $_d in
		"$VL_TOP_BUILDDIR"/*) continue ;; # as unreachable as the tree
		esac
		copy_build "$_d/shared" || continue
		runs_as "$1" && return 0
	done
	skip "uid $1 cannot run the build's programs, even copied: $(cat "$WORK/share.err" 2>/dev/null)"
}

# runs_as UID: can uid UID run vt with the library, and the volatile command?
runs_as() {
	setpriv --reuid="$1" --regid="$1" --clear-groups -- env LD_PRELOAD="$VOLATILE_LIBRARY" \
		timeout "$VL_TIMEOUT" "$VT" echo probe >"$WORK/share.out" 2>"$WORK/share.err" &&
		[ ! -s "$WORK/share.err" ] &&
		setpriv --reuid="$1" --regid="$1" --clear-groups -- \
			timeout "$VL_TIMEOUT" "$VOLATILE_CMD" --help >/dev/null 2>>"$WORK/share.err"
}

# copy_linked_helpers DIR: a helper linked with the library is a libtool
# wrapper script, which runs .libs/NAME with the build tree's library path:
# the program itself goes in its place, and LD_LIBRARY_PATH names the
# copy's library (the one every process of the test preloads anyway)
copy_linked_helpers() {
	for _p in "$VL_TOP_BUILDDIR"/tests/helpers/.libs/*; do
		[ -f "$_p" ] && [ -x "$_p" ] || continue
		case $_p in *.so | *.so.*) continue ;; esac
		cp "$_p" "$1/${_p##*/}" || return 1
	done
}

# copy_build DIR: the build's runnables into DIR (made readable to all,
# and the directories above it passable), VT and the others pointed there
copy_build() {
	_fault=${VOLATILE_FAULT_LIBRARY:-$VL_TOP_BUILDDIR/tests/fault/.libs/libvolatile-fault.so}
	# the library the test preloads (the debug build's, or the release one), where it lies in the tree
	case $VOLATILE_LIBRARY in
	"$VL_TOP_BUILDDIR"/*/.libs/*) _libdir=${VOLATILE_LIBRARY%/*} _libdir=${_libdir#"$VL_TOP_BUILDDIR"/} ;;
	*) _libdir=src/.libs ;;
	esac
	chmod 0711 "${1%/*}" && mkdir -p "$1/src/.libs" "$1/$_libdir" "$1/tests/helpers" "$1/tests/fault/.libs" \
		"$1/tests/debug" &&
		cp -P "$VL_TOP_BUILDDIR"/src/.libs/libvolatile.so* "$1/src/.libs/" &&
		cp -P "$VL_TOP_BUILDDIR/$_libdir"/libvolatile.so* "$1/$_libdir/" &&
		cp "$VOLATILE_RELEASE_CMD" "$1/src/" &&
		{ [ "$VOLATILE_CMD" = "$VOLATILE_RELEASE_CMD" ] || cp "$VOLATILE_CMD" "$1/tests/debug/"; } &&
		{ [ ! -e "$VOLATILE_FAULT_CMD" ] || cp "$VOLATILE_FAULT_CMD" "$1/tests/fault/"; } &&
		find "$VL_TOP_BUILDDIR/tests/helpers" -maxdepth 1 -type f -perm -u+x \
			-exec cp {} "$1/tests/helpers/" \; &&
		copy_linked_helpers "$1/tests/helpers" &&
		{ [ ! -d "$VL_TOP_BUILDDIR/src/preload" ] || cp -a "$VL_TOP_BUILDDIR/src/preload" "$1/src/"; } &&
		{ [ ! -e "$_fault" ] || cp "$_fault" "$1/tests/fault/.libs/"; } &&
		chmod -R a+rX "$1" 2>"$WORK/share.err" || return 1
	VL_RUN_TOP=$1
	LD_LIBRARY_PATH=$1/src/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export LD_LIBRARY_PATH
	VT=$1/tests/helpers/vt
	case $VOLATILE_CMD in
	"$VOLATILE_RELEASE_CMD") VOLATILE_CMD=$1/src/volatile ;;
	*) VOLATILE_CMD=$1/tests/debug/volatile ;;
	esac
	VOLATILE_RELEASE_CMD=$1/src/volatile
	VOLATILE_FAULT_CMD=$1/tests/fault/volatile-fault
	VOLATILE_LIBRARY=$1/$_libdir/${VOLATILE_LIBRARY##*/}
	VOLATILE_RELEASE_LIBRARY=$1/src/.libs/${VOLATILE_RELEASE_LIBRARY##*/}
	VOLATILE_FAULT_LIBRARY=$1/tests/fault/.libs/${_fault##*/}
	export VL_RUN_TOP VOLATILE_LIBRARY VOLATILE_RELEASE_LIBRARY VOLATILE_FAULT_LIBRARY
}

# ---- running things ---------------------------------------------------------

vt() {
	timeout "$VL_TIMEOUT" "$VT" "$@"
}

svt() {
	LD_PRELOAD=$VOLATILE_LIBRARY timeout "$VL_TIMEOUT" "$VT" "$@"
}

# svte VAR=VALUE... -- ARGS...: svt with more environment
svte() {
	_env=
	while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
		_env="$_env $1"
		shift
	done
	[ "$#" -gt 0 ] && shift
	# word splitting of $_env is intended: VAR=VALUE words without blanks
	# shellcheck disable=SC2086
	env $_env LD_PRELOAD="$VOLATILE_LIBRARY" timeout "$VL_TIMEOUT" "$VT" "$@"
}

shim() {
	LD_PRELOAD=$VOLATILE_LIBRARY timeout "$VL_TIMEOUT" "$@"
}

vol() {
	timeout "$VL_TIMEOUT" "$VOLATILE_CMD" "$@"
}

# run NAME CMD...: run CMD with its output in $WORK/NAME.out and its
# stderr in $WORK/NAME.err; $rc is its exit status.
run() {
	_name=$1
	shift
	"$@" >"$WORK/$_name.out" 2>"$WORK/$_name.err"
	rc=$?
}

show() {
	for _f in "$WORK/$1.out" "$WORK/$1.err"; do
		[ -s "$_f" ] || continue
		echo "---- ${_f##*/}"
		cat "$_f"
	done >&2
}

# ok NAME CMD...: run, and require exit status 0 and nothing on stderr
# (the library prints nothing unless VOLATILE_DEBUG is set).
ok() {
	_okname=$1
	run "$@"
	if [ "$rc" -ne 0 ] || [ -s "$WORK/$_okname.err" ]; then
		show "$_okname"
		fail "$_okname: exit status $rc (want 0, and an empty stderr)"
	fi
}

# expect_out NAME < expected: NAME's output must be exactly that.
expect_out() {
	cat >"$WORK/$1.want"
	if ! diff -u "$WORK/$1.want" "$WORK/$1.out" >"$WORK/$1.diff"; then
		echo "---- $1: expected output (-) against what ran (+)" >&2
		cat "$WORK/$1.diff" >&2
		show "$1"
		fail "$1: output differs"
	fi
}

# expect_line NAME LINE: NAME's output has this exact line.
expect_line() {
	if ! grep -qxF -- "$2" "$WORK/$1.out"; then
		show "$1"
		fail "$1: no line '$2'"
	fi
}

expect_no_line() {
	if grep -qxF -- "$2" "$WORK/$1.out"; then
		show "$1"
		fail "$1: unexpected line '$2'"
	fi
}

# soft CHECK ARGS...: run a check (expect_out, expect_line, ...) without
# stopping the test at its failure; the test ends with `exit $FAILED`.
FAILED=0
soft() {
	("$@") || FAILED=1
}

expect_eq() {
	# expect_eq WHAT GOT WANT
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

# How long wait_file, wait_line, wait_match and wait_stopped wait before
# they fail, in hundredths of a second: 60 s. The bound only says when to
# give up on something that never happens: a loaded machine (make -j check
# beside other work, under the sanitizers) can take seconds to start a
# process, and a test must not fail for that.
VL_WAIT_TICKS=6000

# wait_file PATH: until PATH exists (60 s at most)
wait_file() {
	_i=0
	while [ ! -e "$1" ]; do
		_i=$((_i + 1))
		[ "$_i" -le "$VL_WAIT_TICKS" ] || fail "timed out waiting for $1"
		sleep 0.01
	done
}

# past_grace: wait out the grace the test build of the command is told
# (VL_GRACE s): a purge after this is a second sighting, for the grace, of
# a file a purge before it found gone.
past_grace() {
	sleep "$VL_GRACE.1"
}

# ok_until NAME PATTERN CMD...: ok NAME CMD..., again every 0.2 s until
# NAME's output matches PATTERN (grep) or the grace has passed three
# times over: a purge that forgets a gone file, for one. $WORK/NAME.out
# holds the last run's output; whether it matched, the caller checks.
ok_until() {
	_ouname=$1
	_oupat=$2
	shift 2
	_ouend=$(($(date +%s) + 3 * VL_GRACE + 1))
	ok "$_ouname" "$@"
	while ! grep -q -- "$_oupat" "$WORK/$_ouname.out" && [ "$(date +%s)" -lt "$_ouend" ]; do
		sleep 0.2
		ok "$_ouname" "$@"
	done
}

# wait_line NAME LINE: until NAME's output has LINE (60 s at most)
wait_line() {
	_i=0
	while ! grep -qxF -- "$2" "$WORK/$1.out" 2>/dev/null; do
		_i=$((_i + 1))
		[ "$_i" -le "$VL_WAIT_TICKS" ] || { show "$1"; fail "timed out waiting for '$2' from $1"; }
		sleep 0.01
	done
}

# wait_match NAME out|err ERE: until NAME's stdout or stderr has a line
# matching the extended regular expression ERE (60 s at most)
wait_match() {
	_i=0
	while ! grep -qE -- "$3" "$WORK/$1.$2" 2>/dev/null; do
		_i=$((_i + 1))
		[ "$_i" -le "$VL_WAIT_TICKS" ] || { show "$1"; fail "timed out waiting for /$3/ in $1's std$2"; }
		sleep 0.01
	done
}

# wait_until SECONDS WHY CONDITION: until the shell CONDITION (a string,
# evaluated anew each 0.01 s: '! alive "$pid"') holds; after SECONDS the
# test fails saying WHY (-s NAME first: NAME's output shown before)
wait_until() {
	_wu_show=
	[ "$1" = -s ] && { _wu_show=$2; shift 2; }
	_wu_ticks=$(($1 * 100)) _wu_why=$2 _wu_cond=$3
	_wu_i=0
	until eval "$_wu_cond"; do
		_wu_i=$((_wu_i + 1))
		if [ "$_wu_i" -gt "$_wu_ticks" ]; then
			[ -z "$_wu_show" ] || show "$_wu_show"
			fail "$_wu_why"
		fi
		sleep 0.01
	done
}

# bg NAME CMD...: run in the background like `run`; wait_bg NAME gets $rc.
bg() {
	_name=$1
	shift
	# emptied here, not by the job's own redirection: a wait_match right
	# after must not read what a job of the same name printed before
	: >"$WORK/$_name.out"
	: >"$WORK/$_name.err"
	"$@" >"$WORK/$_name.out" 2>"$WORK/$_name.err" &
	eval "BG_$_name=\$!"
	BG_PIDS="$BG_PIDS $!"
}

wait_bg() {
	eval "_pid=\$BG_$1"
	wait "$_pid"
	rc=$?
}

# a tmpfs file of SIZE bytes of CHAR: mkfile PATH SIZE CHAR
mkfile() {
	vt open "$1" rwt fill 0 "$2" "$3" >/dev/null || fail "cannot write $1"
}

# status_json NAME: `volatile status --json` into $WORK/NAME.out, validated
status_json() {
	need_python
	ok "$1" vol status --json
	"$PYTHON" -m json.tool "$WORK/$1.out" >/dev/null 2>"$WORK/$1.jsonerr" || {
		cat "$WORK/$1.out" "$WORK/$1.jsonerr" >&2
		fail "$1: volatile status --json is not valid JSON"
	}
}

# jq_py NAME EXPR: evaluate a Python expression over the JSON in NAME.out
# (bound to d) and print the result.
jq_py() {
	need_python
	"$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = eval(sys.argv[2])
print(json.dumps(r) if not isinstance(r, str) else r)
' "$WORK/$1.out" "$2" || fail "cannot evaluate $2 over $1"
}

# ---- ages (DESIGN 10) -------------------------------------------------------

# purged_set NAME: the files with a purged range (their base names, sorted,
# or "none"), from `volatile status --json` into $WORK/NAME.out
purged_set() {
	status_json "$1"
	jq_py "$1" '" ".join(sorted(f["path"].rsplit("/", 1)[1] for f in d["file_list"]
		if any(r["purged"] for r in f["ranges"]))) or "none"'
}

# shifted NAME SECONDS VT-ARGS...: ok NAME, vt under the fault library
# (need_fault_lib) with its age clock SECONDS on (VOLATILE_FAULT_AGE_SHIFT)
shifted() {
	_n=$1
	_s=$2
	shift 2
	ok "$_n" env LD_PRELOAD="${FAULT_LIB:?}" VOLATILE_FAULT_AGE_SHIFT="$_s" \
		timeout "$VL_TIMEOUT" "$VT" "$@"
}

# wait_stopped NAME PID WHY: until process PID (NAME's, as bg started it)
# is stopped, 60 s at most; else show NAME and fail with WHY
wait_stopped() {
	_ws=0
	until [ "$(awk '{print $3}' "/proc/$2/stat" 2>/dev/null)" = T ]; do
		_ws=$((_ws + 1))
		[ "$_ws" -le "$VL_WAIT_TICKS" ] || { show "$1"; fail "$3"; }
		sleep 0.01
	done
}

# holder_stopped NAME [VAR=VALUE...]: a process (vt under the fault library
# $FAULT_LIB, with the environment given) marks a memfd and stops holding
# the region's lock (VT_STOP_AT). Sets $hpid once it is stopped there:
# `kill -CONT "$hpid"` lets it go; its output is $WORK/hNAME.out.
holder_stopped() {
	_hs=$1 # (not _name: bg sets that)
	shift
	bg "h$_hs" env "$@" LD_PRELOAD="${FAULT_LIB:?}" \
		VT_STOP_AT="finish: holder noted, region locked" \
		timeout 60 "$VT" pid memfd m 4K mark 0 4K echo over
	wait_match "h$_hs" out '^pid = '
	hpid=$(sed -n 's/^pid = //p' "$WORK/h$_hs.out")
	wait_stopped "h$_hs" "$hpid" "$_hs: the holder never stopped holding the lock"
}

# region_held_stopped NAME: holder_stopped, for a region it made at
# $WORK/made.NAME, then renamed to VOLATILE_REGION=$WORK/region.NAME
# (exported), so the next process to attach waits for the lock. (Not
# new_region: the parts of a test that use it run in subshells, and would
# count from the same number.)
region_held_stopped() {
	VOLATILE_REGION=$WORK/region.$1
	export VOLATILE_REGION
	holder_stopped "$1" VOLATILE_REGION="$WORK/made.$1"
	mv "$WORK/made.$1" "$VOLATILE_REGION" || fail "cannot rename the region"
}
