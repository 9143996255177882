#!/bin/sh
# SPDX-License-Identifier: MIT
# cache.sh - a shell script's cache that gives way under memory pressure.
#
# Usage: sh examples/cache.sh KEY...
#
# For each KEY the script needs a value that is slow to make (here, a few
# hundred KiB of text made by make_value; in real life a rendered page, a
# resized image, a downloaded index). It keeps each value in a file of a
# tmpfs, CACHE_DIR (default $XDG_RUNTIME_DIR/cache-demo, else
# /dev/shm/cache-demo.UID), and between runs the file is marked volatile
# with `volatile mark`: the system may throw its pages away (a budget, low
# memory, `volatile daemon`, `volatile purge`) instead of swapping or
# killing something. The next run takes the file back with `volatile
# unmark`, which says whether it survived:
#
#   exit 0  intact: use the file as it is
#   exit 1  purged: its bytes read as zeros, make the value again
#   other   volatile ranges are not available (no library, an unusable
#           region): the content is unknown, make the value again
#
# It prints one line a key: "KEY made" (no file yet), "KEY intact" or
# "KEY regenerated", then the size of the value it used.
#
# The script needs no library of its own: `volatile mark` and `volatile
# unmark` are separate processes, and the file keeps its ranges (they
# belong to the file, not to a process). Set VOLATILE to the command's path
# if `volatile` is not on PATH.
#
# Exit status: 0, or 1 if a value could not be made.

VOLATILE=${VOLATILE:-volatile}

if [ -n "${XDG_RUNTIME_DIR:-}" ]; then
	CACHE_DIR=${CACHE_DIR:-$XDG_RUNTIME_DIR/cache-demo}
else
	CACHE_DIR=${CACHE_DIR:-/dev/shm/cache-demo.$(id -u)}
fi

# make_value KEY: the slow part; here 8,192 numbered lines derived from KEY.
make_value() {
	awk -v key="$1" 'BEGIN { for (i = 0; i < 8192; i++) printf "%s %06d %s\n", key, i, "the value of this key, line by line" }'
}

# take_back FILE: unmark the whole file; 0 if every byte of it is intact.
take_back() {
	_size=$(wc -c <"$1") || return 1
	[ "$_size" -gt 0 ] || return 1
	"$VOLATILE" unmark "$1" 0 "$_size" >/dev/null 2>&1
}

# give_up FILE: mark the whole file volatile until the next run. A failure
# (no volatile ranges here) only keeps the file pinned.
give_up() {
	_size=$(wc -c <"$1") || return 0
	[ "$_size" -gt 0 ] || return 0
	"$VOLATILE" mark "$1" 0 "$_size" >/dev/null 2>&1 || true
}

[ $# -gt 0 ] || { echo "usage: $0 KEY..." >&2; exit 2; }
mkdir -p "$CACHE_DIR" && chmod 700 "$CACHE_DIR" || exit 1

for key in "$@"; do
	file=$CACHE_DIR/$key
	if ! [ -f "$file" ]; then
		state=made
	elif take_back "$file"; then
		state=intact
	else
		state=regenerated
	fi
	if [ "$state" != intact ]; then
		# written in place: the file's record (and its age) stays the file's
		make_value "$key" >"$file" || { echo "$key: cannot make its value" >&2; exit 1; }
	fi
	# ...the script's real work with "$file" goes here...
	echo "$key $state $(wc -c <"$file") bytes"
	give_up "$file"
done
