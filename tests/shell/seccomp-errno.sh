#!/bin/sh
# SPDX-License-Identifier: MIT
# Every error of MARK and UNMARK (DESIGN 5, in the kernel's order) is the
# same through `volatile run`'s supervisor as through the preloaded
# library: the same vt script runs as the dynamic vt with the library
# (svt) and as vt-static (and vt-musl, where built) under `volatile run`,
# and the outputs are identical. The scripts are errors.sh's, row by row
# (errors.sh pins the library's answers themselves), then the rows of the
# other errors*.sh files: append-only and immutable files (chattr), a disk
# file; then the region's own: full (ENOMEM, nothing changed), corrupt
# (EUCLEAN), open to others (EACCES).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_seccomp
need_static

progs=$VT_STATIC
if [ -x "$VT_MUSL" ]; then
	progs="$progs $VT_MUSL"
else
	say "vt-musl was not built (no musl-gcc): vt-static only"
fi

# compare NAME VT-ARGS...: svt against each static program under run,
# each in a fresh region (made the same way: by the first call)
compare() {
	_c=$1
	shift
	new_region
	run "$_c-svt" svt "$@"
	_want=$rc
	for _p in $progs; do
		_k=$_c-${_p##*/}
		new_region
		run "$_k" vrun -- "$_p" "$@"
		same "$_c-svt" "$_k" "$_c: ${_p##*/} under volatile run and vt with the library differ"
		[ "$rc" -eq "$_want" ] || fail "$_k: exit status $rc, with the library $_want"
		[ -s "$WORK/$_k.err" ] && { show "$_k"; fail "$_k: something on stderr"; }
	done
	return 0
}

f=$WORK/file
mkfile "$f" 64K A

# ---- fd not open (a closed fd, O_PATH): EBADF, before EINVAL ---------------------------
compare badf fd 99 mark 0 4096 unmark 0 4096 mark -1 4096 unmark 0 0 mark 0 -5 \
	fa 'MARK|UNMARK' 0 4096 fa 'MARK|PUNCH_HOLE' 0 4096 fa64 MARK 0 4096 \
	open "$f" rw close mark 0 4096 unmark 0 4096 mark -1 5 \
	open "$f" path mark 0 4096 unmark 0 4096 mark -1 1 mark 0 0 fa 'MARK|UNMARK' 0 4096

# ---- offset < 0, len <= 0: EINVAL ------------------------------------------------------------
compare inval open "$f" rw mark -1 5 mark -4096 4096 mark 0 0 mark 0 -1 mark 4096 -4096 \
	unmark -1 5 unmark 0 0 unmark 0 -1 fa64 MARK -1 1 fa64 UNMARK 0 0 sysfa MARK -1 1

# ---- both modes, or any flag but KEEP_SIZE: EINVAL (before "not open for writing") -----
compare modes open "$f" rw \
	fa 'MARK|UNMARK' 0 4096 fa 'MARK|UNMARK|KEEP_SIZE' 0 4096 \
	fa 'MARK|PUNCH_HOLE' 0 4096 fa 'MARK|PUNCH_HOLE|KEEP_SIZE' 0 4096 \
	fa 'UNMARK|PUNCH_HOLE|KEEP_SIZE' 0 4096 fa 'MARK|ZERO_RANGE' 0 4096 \
	fa 'UNMARK|COLLAPSE_RANGE' 0 4096 fa 'MARK|INSERT_RANGE' 0 4096 \
	fa 'MARK|NO_HIDE_STALE' 0 4096 fa 'UNMARK|UNSHARE_RANGE' 0 4096 \
	fa 'MARK|WRITE_ZEROES' 0 4096 fa 'MARK|0x100' 0 4096 fa 'UNMARK|0x40000000' 0 4096 \
	fa 'MARK|0x80000000' 0 4096 fa 'UNMARK|0x1000' 0 4096 \
	fa64 'MARK|PUNCH_HOLE' 0 4096 \
	fa 'MARK|KEEP_SIZE' 0 4096 fa 'UNMARK|KEEP_SIZE' 0 4096 \
	fa64 'MARK|KEEP_SIZE' 8K 4096 fa64 'UNMARK|KEEP_SIZE' 8K 4096 \
	open "$f" r fa 'MARK|PUNCH_HOLE' 0 4096 fa 'MARK|UNMARK' 0 4096 mark -1 1 \
	open "$f" r expect 0 64K A size

# ---- not open for writing: EBADF; write-only is enough ---------------------------------------
compare rdonly open "$f" r mark 0 4096 unmark 0 4096 fa 'MARK|KEEP_SIZE' 0 4096 \
	fa64 UNMARK 0 4096 open "$f" w mark 0 4096 unmark 0 4096

# ---- pipe, FIFO: ESPIPE (a pipe's read end: EBADF) ------------------------------------------
mkfifo "$WORK/fifo" || fail "mkfifo"
compare pipe pipe mark 0 4096 unmark 0 4096 fa64 MARK 0 1 open "$WORK/fifo" rw mark 0 4096 \
	unmark 0 1
compare piperead pipe fd 3 mark 0 4096 unmark 0 4096

# ---- a directory (read-only: EBADF, as the kernel says) --------------------------------------
compare dir open "$WORK" dir fa KEEP_SIZE 0 4096 mark 0 4096 unmark 0 4096

# ---- socket, character device: ENODEV --------------------------------------------------------
compare nodev socket mark 0 4096 unmark 0 4096 open /dev/null rw fa 0 0 4096 mark 0 4096 \
	unmark 0 4096 open /dev/zero rw mark 0 4096 fa64 UNMARK 0 1

# ---- offset + len overflows: EFBIG; up to the maximum size is fine ---------------------------
compare fbig open "$f" rw fa KEEP_SIZE max 1 mark max 1 mark max-10 100 mark 1 max unmark max 1 \
	fa64 MARK max-4095 4096 mark max-4096 4096 unmark max-4096 4096 memfd m 4096 mark max 1 \
	size

# ---- a memfd sealed against writing: MARK EPERM, UNMARK works ---------------------------------
compare sealed memfd s 64K fill 0 64K S mark 0 4K seal write mark 8K 4K \
	fa 'MARK|KEEP_SIZE' 8K 4K unmark 8K 4K unmark 0 4K unmark 0 4K expect 0 64K S \
	memfd fw 64K seal future-write mark 0 4K unmark 0 4K \
	memfd gs 64K seal grow,shrink mark 0 4K unmark 0 4K \
	memfd ws 64K seal write,seal mark 0 4K mark 0 4K unmark 0 4K

# the checks changed nothing
ok final vt open "$f" r expect 0 64K A size
expect_out final <<EOF
open $f r = 3
expect 0 64K A ok
size = 65536
EOF

# ---- a disk file: EOPNOTSUPP, after EINVAL, EBADF, EFBIG -------------------------------------
if [ -n "$DISK" ]; then
	d=$DISK/file
	vt open "$d" rwt fill 0 64K D >/dev/null || fail "cannot write $d"
	compare disk open "$d" rw mark 0 4096 unmark 0 4096 fa 'MARK|KEEP_SIZE' 0 4096 \
		fa64 UNMARK 0 4096 mark -1 4096 fa 'MARK|PUNCH_HOLE' 0 4096 \
		open "$d" r mark 0 4096 open "$d" rw mark max 1 mark 1P 4096 expect 0 64K D size
else
	say "no disk file system: its row is not compared"
fi

# ---- append-only, immutable: EPERM (where chattr works on tmpfs) ----------------------------
a=$WORK/append
i=$WORK/immutable
mkfile "$a" 64K P
mkfile "$i" 64K I
if ! command -v chattr >/dev/null 2>&1; then
	say "chattr (e2fsprogs) is not installed: the append-only and immutable rows are not compared"
elif ! chattr +a "$a" 2>"$WORK/chattr.err"; then
	say "chattr +a on tmpfs is not permitted here: $(cat "$WORK/chattr.err"): rows not compared"
else
	compare append open "$a" ra mark 0 4096 unmark 0 4096 fa 'MARK|KEEP_SIZE' 0 4096 \
		fa64 MARK 0 4096 fa KEEP_SIZE 0 4096 fa 'PUNCH_HOLE|KEEP_SIZE' 0 4096 \
		open "$a" a mark 0 4096 mark -1 1 open "$a" r mark 0 4096 expect 0 64K P
	chattr -a "$a"
	chattr +i "$i" || fail "chattr +i"
	compare immutable open "$i" r mark 0 4096 open "$i" r unmark 0 4096 expect 0 64K I
	chattr -i "$i"
	# a fd opened before the attribute was set
	exec 5<>"$i"
	chattr +i "$i" || fail "chattr +i"
	compare immutable-fd fd 5 mark 0 4096 unmark 0 4096 fa 'UNMARK|KEEP_SIZE' 0 4096 \
		fa64 MARK 0 4096 fa KEEP_SIZE 0 4096 expect 0 64K I
	exec 5>&-
	chattr -i "$i"
fi

# ---- the region full: ENOMEM, nothing changed (an UNMARK that must split too) -----------------
VOLATILE_REGION_RANGES=16
export VOLATILE_REGION_RANGES
# shellcheck disable=SC2046
compare full memfd m 1M fill 0 1M F mark 500K 100K $(seq 0 2 80 | sed 's/.*/mark & 1/') \
	unmark 550K 4K unmark 0 1 unmark 600K 100 expect 0 1M F
unset VOLATILE_REGION_RANGES
grep -q ' = -1 ENOMEM$' "$WORK/full-svt.out" || { cat "$WORK/full-svt.out" >&2; fail "full: no ENOMEM with a region of 16 ranges"; }

# ---- the region corrupt (EUCLEAN), or open to others (EACCES): nothing punched ----------------
# (not compare's fresh region: this one is made here)
for bad in corrupt open; do
	for how in svt ${progs}; do
		k=$bad-${how##*/}
		new_region
		if [ "$bad" = corrupt ]; then
			printf 'garbage' >"$VOLATILE_REGION"
			chmod 0600 "$VOLATILE_REGION"
		else
			svt memfd m 4K mark 0 4K unmark 0 4K >/dev/null || fail "cannot make a region"
			chmod 0644 "$VOLATILE_REGION"
		fi
		set -- memfd m 64K fill 0 64K R mark 0 4K fa KEEP_SIZE 0 4K unmark 0 4K expect 0 64K R
		if [ "$how" = svt ]; then
			run "$k" svt "$@"
		else
			run "$k" vrun -- "$how" "$@"
		fi
	done
	for p in $progs; do
		same "$bad-svt" "$bad-${p##*/}" "a region $bad: ${p##*/} under volatile run and vt with the library differ"
	done
done
grep -qx 'mark 0 4K = -1 EUCLEAN' "$WORK/corrupt-svt.out" || { cat "$WORK/corrupt-svt.out" >&2; fail "corrupt: the library did not say EUCLEAN"; }
grep -qx 'mark 0 4K = -1 EACCES' "$WORK/open-svt.out" || { cat "$WORK/open-svt.out" >&2; fail "open: the library did not say EACCES"; }
exit 0
