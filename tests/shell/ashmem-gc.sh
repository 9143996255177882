#!/bin/sh
# SPDX-License-Identifier: MIT
# ashmem (DESIGN 7, 15): the record that holds a region's name, size and prot
# mask lives as long as the region, with no unpinned range at all and
# through purges; once the region is gone, it is forgotten like any gone
# file's (two sightings at least a grace apart, by `volatile purge`: here
# the test build of the command, told a grace of VL_GRACE s rather than 3).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ashmem-lib.sh"
need_python
new_region
VOLATILE_FAULT_GONE_GRACE=$VL_GRACE
export VOLATILE_FAULT_GONE_GRACE
gvol() {
	timeout "$VL_TIMEOUT" "$VOLATILE_FAULT_CMD" "$@"
}

bg g1 leg open setname keep setsize 8K setprot rw map 8K rw touch "$WORK/ready" \
	wait "$WORK/go" getname getsize getprot
wait_file "$WORK/ready"
ok pa gvol purge --all
past_grace
ok pb gvol purge --all
touch "$WORK/go"
wait_bg g1
[ "$rc" -eq 0 ] || { show g1; fail "the legacy program failed ($rc)"; }
expect_line g1 "getname = keep (4)"
expect_line g1 "getsize = 8192"
expect_line g1 "getprot = 3"

# ---- a region only mapped (its fd closed) cannot be reached, but is not gone --------
new_region
bg g3 leg open setname mapped setsize 8K map 8K rw fill 0 8K M close touch "$WORK/m-ready" \
	wait "$WORK/m-go" expect 0 8K M
wait_file "$WORK/m-ready"
ok pe gvol purge --all
status_json st3
expect_eq "records of a region that is only mapped, after a purge" "$(jq_py st3 'd["records"]')" 1
# status names the region as its program did
expect_eq "the region in status --json" "$(jq_py st3 '[x["ashmem"] for x in d["file_list"]]')" \
	'[{"name": "mapped", "size": 8192}]'
ok st3t vol status
grep -q '^file [0-9:]* ashmem region "mapped", 8192 bytes' "$WORK/st3t.out" ||
	{ show st3t; fail "status does not name the ashmem region"; }
touch "$WORK/m-go"
wait_bg g3
[ "$rc" -eq 0 ] || { show g3; fail "the legacy program failed ($rc)"; }

# ---- gone: seen gone once, then again the grace later, and forgotten ------------
# (purges every 0.2 s until one forgets it, 3 graces at most; as root the
# first may, by the kernel's word: inode_gone.h)
# "Gone" must be certain: no process of the user holds or maps the memfd,
# all of them looked into. Where one cannot be looked into (the init of
# some sandboxes, for root), the test runs in a PID namespace of its own.
new_region
blind=
me=$(id -u)
for p in /proc/[0-9]*; do
	[ "$(awk '/^Uid:/ { print $2; exit }' "$p/status" 2>/dev/null)" = "$me" ] || continue
	cat "$p/maps" >/dev/null 2>&1 || [ ! -d "$p" ] || blind="$blind ${p#/proc/}"
done
steps="'$VOLATILE_CMD' run -- '$LEGACY' open setname gone setsize 8K map 8K rw >/dev/null &&
	'$VOLATILE_CMD' status --json && i=0 &&
	until '$VOLATILE_FAULT_CMD' purge --all | grep -q forgotten || [ \$i -ge $((15 * VL_GRACE)) ]; do
		sleep 0.2; i=\$((i + 1)); done &&
	'$VOLATILE_CMD' status --json"
if [ -z "$blind" ]; then
	run g2 timeout 30 sh -c "$steps"
elif own_proc timeout 10 true 2>/dev/null; then
	say "processes$blind cannot be looked into: in a PID namespace of its own"
	run g2 own_proc timeout 30 sh -c "$steps"
else
	skip "processes$blind cannot be looked into, and no PID namespace may be made: a gone region cannot be told from a live one here"
fi
[ "$rc" -eq 0 ] || { show g2; fail "the steps failed ($rc)"; }
files=$("$PYTHON" -c '
import json, sys
dec = json.JSONDecoder()
text = open(sys.argv[1]).read()
pos, out = 0, []
while pos < len(text):
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos == len(text):
        break
    obj, pos = dec.raw_decode(text, pos)
    out.append(str(obj["records"]))
print(" ".join(out))
' "$WORK/g2.out") || fail "cannot read the status"
expect_eq "records before the purges, and after they found the region gone" "$files" "1 0"
exit 0
