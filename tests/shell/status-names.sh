#!/bin/sh
# SPDX-License-Identifier: MIT
# Names a program chose (a path, an ashmem region's name) reach the user's
# terminal and JSON readers through `volatile status`: control bytes must
# not move the cursor or clear the screen (--watch draws on a terminal),
# a newline must not break a line, and bytes that are not UTF-8 must not
# make the JSON invalid. Before: printed raw (an ESC [2J cleared the
# screen; a \xff made `python3 -m json.tool` refuse the output).
. "$(dirname "$0")/lib.sh"

need_cmd
need_python
new_region
esc=$(printf '\033')
nl='
'
bad=$(printf '\377')
f="$WORK/a${esc}[2Jb${nl}c${bad}d"
ok mk svt open "$f" rwc truncate 64K mark 0 4K
ok text vol status
if grep -q "$esc" "$WORK/text.out"; then
	fail "status printed an ESC byte of a file's name to the terminal"
fi
grep -qF 'a\x1b[2Jb\x0ac\xffd' "$WORK/text.out" || { show text; fail "status does not show the name with its bytes escaped"; }
ok w vol status --watch --count 1
grep -q "$esc" "$WORK/w.out" && fail "--watch printed an ESC byte of a file's name"
grep -qF 'a\x1b[2Jb\x0ac\xffd' "$WORK/w.out" || { show w; fail "--watch does not show the name escaped"; }
status_json js
expect_eq "the name in JSON (a byte not UTF-8 as U+FFFD)" \
	"$(jq_py js 'ascii(d["file_list"][0]["path"].rsplit("/", 1)[1])')" "'a\\x1b[2Jb\\nc\\ufffdd'"
exit 0
