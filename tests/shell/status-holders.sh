#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile status` and a file whose recorded holders have exited (DESIGN
# 8): shown "(holders gone)", never "[pid N fd M]" with a dead pid; a
# holder alive is shown as before, and one of two gone is left out.
# Forgetting the record stays the purge's business: status keeps it. And
# counts of one are singular ("1 range", "1 purge").
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

new_region
f=$WORK/cache
mkfile "$f" 64K A

# ---- 1. alive: its pid and fd shown ---------------------------------------------------------
bg a svt pid open "$f" rw mark 0 4K touch "$WORK/marked" wait "$WORK/go"
wait_file "$WORK/marked"
wait_match a out '^pid = [0-9]+$'
apid=$(sed -n 's/^pid = //p' "$WORK/a.out")
ok st1 vol status
grep -qE "^file .*/cache \[pid $apid fd [0-9]+\]$" "$WORK/st1.out" || { show st1; fail "status does not show alive holder pid $apid"; }
grep -q 'holders gone' "$WORK/st1.out" && { show st1; fail "status says 'holders gone' with pid $apid alive"; }
# one of each: singular words ("1 range", never "1 ranges")
ok w1 vol status --watch --count 1
grep -q 'in 1 range of 1 file; purged: 0B in 0 ranges$' "$WORK/w1.out" || { show w1; fail "--watch: not 'in 1 range of 1 file'"; }
grep -qE '^  4\.0K +1 range  ' "$WORK/w1.out" || { show w1; fail "--watch: not '1 range' for the file"; }

# ---- 2. it exits: "(holders gone)", no dead pid ------------------------------------------------
touch "$WORK/go"
wait_bg a
[ "$rc" -eq 0 ] || { show a; fail "the marker: exit status $rc"; }
ok st2 vol status
grep -qE "^file .*/cache \(holders gone\)$" "$WORK/st2.out" || { show st2; fail "status does not say '(holders gone)' for the file of exited pid $apid"; }
grep -q "\[pid $apid " "$WORK/st2.out" && { show st2; fail "status shows exited pid $apid as a holder"; }
status_json st2-json
[ "$(jq_py st2-json '[x["holders_gone"] for x in d["file_list"]]')" = "[true]" ] ||
	{ show st2-json; fail "status --json: holders_gone is not true"; }
[ "$(jq_py st2-json '[h["gone"] for x in d["file_list"] for h in x["holders"]]')" = "[true]" ] ||
	{ show st2-json; fail "status --json: the exited holder is not 'gone'"; }

# ---- 3. a memfd whose only holder exited: the same, until a purge forgets it ------------------
new_region
ok m svt memfd m 64K mark 0 4K
ok st3 vol status
grep -qE '^file .*\(memfd or unlinked\).* \(holders gone\)$' "$WORK/st3.out" || { show st3; fail "status does not say '(holders gone)' for an exited program's memfd"; }
grep -q '\[pid ' "$WORK/st3.out" && { show st3; fail "status shows the exited program's pid"; }
ok p3 vol purge --all
expect_line p3 "purged 0 ranges, 0 bytes; 1 file gone, forgotten"
new_region
mkfile "$WORK/g" 64K B
ok m4 svt open "$WORK/g" rw mark 0 4K
ok p4 vol purge --bytes 4K
ok st4 vol status
grep -q ' 4096 bytes in 1 purge so far$' "$WORK/st4.out" || { show st4; fail "status: not '1 purge so far'"; }
exit 0
