#!/bin/sh
# SPDX-License-Identifier: MIT
# Root finds the users with a region in a default place (DESIGN 9, 22)
# trusting no name: `volatile status --system` lists a uid only for a
# regular file of that uid, mode 0600, one link, at /run/user/N/libvolatile
# (in a directory of N's, no symlink, writable by nobody else),
# /run/libvolatile.0 or /dev/shm/libvolatile.N; every other name of that
# form is named with why it is refused. In a fake tree: the test build's
# VOLATILE_FAULT_SYS_ROOT moves the places' roots (never the installed
# command's), so the machine's own places are not touched.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "not root: the fake users' files need chown, and status --system is root's"
[ -x "$VOLATILE_FAULT_CMD" ] || fail "no test build of the command: $VOLATILE_FAULT_CMD"

T=$WORK/t
mkdir -p "$T/run/user" "$T/dev/shm" || fail "cannot make the fake tree"
chmod 0755 "$T" "$T/run" "$T/run/user" && chmod 1777 "$T/dev/shm" || fail "chmod of the fake tree"
SHM=$T/dev/shm
RU=$T/run/user

# region PATH OWNER [GROUP]: a file as a region's name shows it (never opened by root)
region() {
	: >"$1" && chown "$2:${3:-$2}" "$1" && chmod 0600 "$1" || fail "cannot make $1"
}
# user_dir N OWNER MODE: /run/user/N
user_dir() {
	mkdir "$RU/$1" && chown "$2:$2" "$RU/$1" && chmod "$3" "$RU/$1" || fail "cannot make $RU/$1"
}

region "$SHM/libvolatile.61001" 61001 61077                    # good; its group 61077
ln -s libvolatile.61001 "$SHM/libvolatile.61002"               # a symlink at the name
region "$SHM/libvolatile.61003" 61099                          # not the name's uid
region "$SHM/libvolatile.61004" 61004 && chmod 0644 "$SHM/libvolatile.61004"
mkdir "$SHM/libvolatile.61005" && chown 61005:61005 "$SHM/libvolatile.61005" &&
	chmod 0600 "$SHM/libvolatile.61005" || fail "cannot make a directory at a name"
region "$SHM/libvolatile.61006" 61006 && ln "$SHM/libvolatile.61006" "$SHM/linked" ||
	fail "cannot make a second link"
region "$SHM/libvolatile.061007" 61007                         # a leading zero
region "$SHM/libvolatile.4294967295" 61001                     # (uid_t)-1 is no uid
: >"$SHM/libvolatile.61001.daemon"                             # a daemon's lock: no region's name
mkfifo "$SHM/libvolatile.61013" && chown 61013:61013 "$SHM/libvolatile.61013" &&
	chmod 0600 "$SHM/libvolatile.61013" || fail "cannot make a FIFO"
user_dir 61008 61099 0700                                      # another uid's directory
region "$RU/61008/libvolatile" 61008
user_dir 61010 61010 0700                                      # good
region "$RU/61010/libvolatile" 61010
ln -s 61010 "$RU/61009"                                        # /run/user/N a symlink
user_dir 61011 61011 0770                                      # group-writable
region "$RU/61011/libvolatile" 61011
user_dir 61012 61012 0700                                      # both places: the first one counts
region "$RU/61012/libvolatile" 61012
region "$SHM/libvolatile.61012" 61012
user_dir 61014 61014 0700                                      # a place with no region
region "$T/run/libvolatile.0" 0                                # root's, good

sys() {
	VOLATILE_FAULT_SYS_ROOT=$T timeout "$VL_TIMEOUT" "$VOLATILE_FAULT_CMD" status --system "$@"
}
sorted() {
	sort "$WORK/$1.out" >"$WORK/$1.sorted" && mv "$WORK/$1.sorted" "$WORK/$1.out"
}

ok all sys
sorted all
expect_out all <<EOF
refused $SHM/libvolatile.061007: a uid with a leading zero
refused $SHM/libvolatile.4294967295: not a uid
refused $SHM/libvolatile.61002: a symlink
refused $SHM/libvolatile.61003: owned by uid 61099, not 61003
refused $SHM/libvolatile.61004: mode 0644, not 0600
refused $SHM/libvolatile.61005: not a regular file
refused $SHM/libvolatile.61006: 2 links, not 1
refused $SHM/libvolatile.61013: not a regular file
refused $RU/61008: owned by uid 61099, not 61008
refused $RU/61009: a symlink
refused $RU/61011: writable by group or others
user 0 gid 0 $T/run/libvolatile.0
user 61001 gid 61077 $SHM/libvolatile.61001
user 61010 gid 61010 $RU/61010/libvolatile
user 61012 gid 61012 $RU/61012/libvolatile
EOF

# --uid: those users alone, and no other name looked at or refused
ok some sys --uid 61010 --uid 0 --uid 61006
sorted some
expect_out some <<EOF
refused $SHM/libvolatile.61006: 2 links, not 1
user 0 gid 0 $T/run/libvolatile.0
user 61010 gid 61010 $RU/61010/libvolatile
EOF
ok none sys --uid 61007 --uid 61020
expect_out none <<EOF
no user has a region in a default place
EOF
run baduid sys --uid 061001
[ "$rc" -eq 2 ] || fail "--uid 061001: exit status $rc, want 2"
run notsys "$VOLATILE_FAULT_CMD" status --uid 61001
[ "$rc" -eq 2 ] || fail "--uid without --system: exit status $rc, want 2"

# a name that stops being a region between two looks is refused at once
rm "$SHM/linked"
chmod 0666 "$RU/61010/libvolatile"
ok again sys --uid 61006 --uid 61010
sorted again
expect_out again <<EOF
refused $RU/61010/libvolatile: mode 0666, not 0600
user 61006 gid 61006 $SHM/libvolatile.61006
EOF

# the installed command looks at the machine's places, whatever the variable says
run release env VOLATILE_FAULT_SYS_ROOT="$T" timeout "$VL_TIMEOUT" "$VOLATILE_RELEASE_CMD" \
	status --system --uid 61001 --uid 61006
grep -F "$T" "$WORK/release.out" "$WORK/release.err" &&
	fail "the installed command read VOLATILE_FAULT_SYS_ROOT"

# more users than are served (4096): the lowest uids, each of the rest refused
if command -v "$PYTHON" >/dev/null 2>&1; then
	T2=$WORK/m
	mkdir -p "$T2/dev/shm" && chmod 0755 "$T2" && chmod 1777 "$T2/dev/shm" || fail "cannot make $T2"
	"$PYTHON" - "$T2/dev/shm" <<'PY' || fail "cannot make 4100 regions"
import os, sys
for uid in range(70000, 74100):
    p = os.path.join(sys.argv[1], "libvolatile.%d" % uid)
    os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o600))
    os.chown(p, uid, uid)
PY
	run many env VOLATILE_FAULT_SYS_ROOT="$T2" timeout "$VL_TIMEOUT" "$VOLATILE_FAULT_CMD" status --system
	[ "$rc" -eq 0 ] || { show many; fail "4100 users: exit status $rc"; }
	grep '^user ' "$WORK/many.out" | awk '{ print $2 }' >"$WORK/many.uids"
	seq 70000 74095 | cmp -s - "$WORK/many.uids" ||
		fail "4100 users: not the 4096 lowest uids in order ($(head -1 "$WORK/many.uids")..$(tail -1 "$WORK/many.uids"), $(wc -l <"$WORK/many.uids"))"
	for uid in 74096 74097 74098 74099; do
		expect_line many "refused $T2/dev/shm/libvolatile.$uid: beyond the 4096 users served (the lowest uids)"
	done
	[ "$(grep -c '^refused' "$WORK/many.out")" -eq 4 ] || { show many; fail "4100 users: not 4 refused"; }
fi

# as another user: one line, exit status 2
share_build 61001
run user setpriv --reuid=61001 --regid=61001 --clear-groups -- env VOLATILE_FAULT_SYS_ROOT="$T" \
	timeout "$VL_TIMEOUT" "$VOLATILE_FAULT_CMD" status --system
[ "$rc" -eq 2 ] || { show user; fail "status --system as uid 61001: exit status $rc, want 2"; }
[ ! -s "$WORK/user.out" ] && [ "$(wc -l <"$WORK/user.err")" -eq 1 ] ||
	{ show user; fail "status --system as uid 61001: not one line on stderr alone"; }
exit 0
