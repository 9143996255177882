#!/bin/sh
# SPDX-License-Identifier: MIT
# The budget (DESIGN 6): with VOLATILE_BUDGET=SIZE a process keeps the whole
# region within SIZE unpurged volatile bytes at each of its MARKs, purging
# the oldest ranges first (the new one last); without a budget nothing is
# purged. Ages: re-marking inside a range keeps its age; a merged range
# takes the age of its newest MARK.
. "$(dirname "$0")/lib.sh"

f=$WORK/cache
g=$WORK/other

# three 4 KiB ranges, apart so they never merge: A [0,4K) B [8K,12K) C [16K,20K)
# (split into words where it is used, unquoted)
unmark_all="unmark 0 4K unmark 8K 4K unmark 16K 4K"

# ---- 1. budget 8K: the third MARK purges the oldest, A ---------------------------
new_region
mkfile "$f" 64K A
ok b1 svte VOLATILE_BUDGET=8K -- open "$f" rw mark 0 4K mark 8K 4K mark 16K 4K \
	expect 0 4K zero expect 4K 60K A $unmark_all expect 0 4K zero expect 4K 60K A
expect_out b1 <<EOF
open $f rw = 3
mark 0 4K = 0
mark 8K 4K = 0
mark 16K 4K = 0
expect 0 4K zero ok
expect 4K 60K A ok
unmark 0 4K = 1
unmark 8K 4K = 0
unmark 16K 4K = 0
expect 0 4K zero ok
expect 4K 60K A ok
EOF

# ---- 2. no budget: nothing is purged ------------------------------------------------
new_region
mkfile "$f" 64K A
ok b2 svt open "$f" rw mark 0 4K mark 8K 4K mark 16K 4K mark 24K 4K $unmark_all \
	unmark 24K 4K expect 0 64K A
expect_out b2 <<EOF
open $f rw = 3
mark 0 4K = 0
mark 8K 4K = 0
mark 16K 4K = 0
mark 24K 4K = 0
unmark 0 4K = 0
unmark 8K 4K = 0
unmark 16K 4K = 0
unmark 24K 4K = 0
expect 0 64K A ok
EOF

# ---- 3. the budget is the region's: a process with a budget purges another's range --
new_region
mkfile "$f" 64K A
mkfile "$g" 64K G
ok b3a svt open "$g" rw mark 0 4K           # no budget: the oldest range
ok b3b svte VOLATILE_BUDGET=8K -- open "$f" rw mark 8K 4K mark 16K 4K
ok b3c svt open "$g" rw expect 0 4K zero expect 4K 60K G unmark 0 4K \
	open "$f" rw expect 0 64K A unmark 8K 4K unmark 16K 4K
expect_out b3c <<EOF
open $g rw = 3
expect 0 4K zero ok
expect 4K 60K G ok
unmark 0 4K = 1
open $f rw = 4
expect 0 64K A ok
unmark 8K 4K = 0
unmark 16K 4K = 0
EOF
# and a process without a budget enforces none, whatever the region holds
new_region
mkfile "$f" 64K A
ok b3d svte VOLATILE_BUDGET=8K -- open "$f" rw mark 0 4K mark 8K 4K
ok b3e svt open "$f" rw mark 16K 4K mark 24K 4K $unmark_all unmark 24K 4K
expect_out b3e <<EOF
open $f rw = 3
mark 16K 4K = 0
mark 24K 4K = 0
unmark 0 4K = 0
unmark 8K 4K = 0
unmark 16K 4K = 0
unmark 24K 4K = 0
EOF

# ---- 4. a new range that alone exceeds the budget goes too ----------------------------
new_region
mkfile "$f" 64K A
ok b4 svte VOLATILE_BUDGET=8K -- open "$f" rw mark 0 12K expect 0 12K zero expect 12K 52K A unmark 0 12K
expect_out b4 <<EOF
open $f rw = 3
mark 0 12K = 0
expect 0 12K zero ok
expect 12K 52K A ok
unmark 0 12K = 1
EOF

# ---- 5. marking inside a volatile range does not make it younger ------------------------
new_region
mkfile "$f" 64K A
ok b5 svte VOLATILE_BUDGET=8K -- open "$f" rw mark 0 4K mark 8K 4K mark 1K 1K mark 16K 4K $unmark_all
expect_out b5 <<EOF
open $f rw = 3
mark 0 4K = 0
mark 8K 4K = 0
mark 1K 1K = 0
mark 16K 4K = 0
unmark 0 4K = 1
unmark 8K 4K = 0
unmark 16K 4K = 0
EOF

# ---- 6. a merged range takes the age of its newest MARK ---------------------------------
# budget 12K: A [0,4K), B [8K,12K), then [2K,6K) merges with A into
# [0,6K), now the newest but one; C [16K,20K) brings 14K: B, now the
# oldest, goes, and 10K fit.
new_region
mkfile "$f" 64K A
ok b6 svte VOLATILE_BUDGET=12K -- open "$f" rw mark 0 4K mark 8K 4K mark 2K 4K mark 16K 4K \
	unmark 0 6K unmark 8K 4K unmark 16K 4K expect 0 8K A expect 8K 4K zero expect 12K 52K A
expect_out b6 <<EOF
open $f rw = 3
mark 0 4K = 0
mark 8K 4K = 0
mark 2K 4K = 0
mark 16K 4K = 0
unmark 0 6K = 0
unmark 8K 4K = 1
unmark 16K 4K = 0
expect 0 8K A ok
expect 8K 4K zero ok
expect 12K 52K A ok
EOF

# ---- 7. several purged at one MARK, oldest first, across two files --------------------
new_region
mkfile "$f" 64K A
mkfile "$g" 64K G
ok b7a svt open "$f" rw mark 0 4K open "$g" rw mark 0 4K open "$f" rw mark 8K 4K
ok b7b svte VOLATILE_BUDGET=6K -- open "$g" rw mark 8K 4K
ok b7c svt open "$f" rw unmark 0 4K unmark 8K 4K open "$g" rw unmark 0 4K unmark 8K 4K
expect_out b7c <<EOF
open $f rw = 3
unmark 0 4K = 1
unmark 8K 4K = 1
open $g rw = 4
unmark 0 4K = 1
unmark 8K 4K = 0
EOF
exit 0
