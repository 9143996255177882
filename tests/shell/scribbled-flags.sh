#!/bin/sh
# SPDX-License-Identifier: MIT
# A record's flags scribbled (no sum covers them, DESIGN 18 "Not
# defended"). A repair that drops a purged range it cannot read flags
# the file (VL_FF_TOMB, rebuild.c lost_range): every UNMARK of it says 1,
# the only word left of the punched bytes. A stray write that clears the
# flag makes an UNMARK over them say 0 (DESIGN 4).
#   F's [8K, 12K) is marked and purged; its node's end then written below
#   its start without its sum (helpers/plant), and F's lock word made a
#   dead holder's: the UNMARK of [32K, 36K) repairs F, drops the range
#   and says 1 (the flag). F's record's flags are then written 0. The
#   UNMARK of [8K, 12K), punched and never said so, must say 1.
# An expected failure (XFAIL_TESTS) while the flags carry no sum.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_plant

F=$WORK/F
new_region
flag_by_repair "$F"
ok s "$PLANT" record "$F" flags 0
ok u2 svt open "$F" rw unmark 8K 4K
if ! grep -qx "unmark 8K 4K = 1" "$WORK/u2.out"; then
	show u2
	fail "UNMARK of [8K, 12K), punched, said 0 once the record's flags were scribbled"
fi
exit $FAILED
