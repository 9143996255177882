#!/bin/sh
# SPDX-License-Identifier: MIT
# One list, doc/options.list, of every option of every subcommand and
# every VOLATILE_* name, and everything that names them agrees
# with it:
#   - `volatile SUB --help` names exactly SUB's options, `volatile --help`
#     all of them;
#   - man/volatile.1: each subcommand's SYNOPSIS entry and its section
#     name exactly its options;
#   - every VOLATILE_* variable the sources read (getenv, secure_getenv) is
#     in the list; every one for users or set by run is in libvolatile(7);
#     every VOLATILE_* name of the man pages and of the --help texts is in
#     the list;
#   - sizes take K, M, G and T, and --help and volatile(1) say so;
#   - README.md and doc/*.md, whatever their text: every VOLATILE_* name
#     is in the list, every option after `volatile SUB` is one of SUB's,
#     and every option alone in a code span is an option of ours or of
#     another program the list names.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

for sub in "" run status purge mark unmark daemon; do
	# shellcheck disable=SC2086
	vol $sub --help >"$WORK/help.${sub:-top}" || fail "volatile $sub --help: exit status $?"
done

# sizes: the suffixes the parser takes are those --help and the man page give
new_region
for sfx in K M G T; do
	ok "sfx-$sfx" vol purge --bytes "1$sfx"
done
run sfx-P vol purge --bytes 1P
[ "$rc" -eq 2 ] || { show sfx-P; fail "purge --bytes 1P: exit status $rc; the parser takes no P"; }
grep -q 'K, M, G and T suffixes' "$WORK/help.top" || fail "volatile --help does not give the suffixes K, M, G and T"
grep -q 'K, M, G or T' "$VL_TOP_SRCDIR/man/volatile.1" || fail "volatile(1) does not give the suffixes K, M, G or T"

"$PYTHON" - "$VL_TOP_SRCDIR" "$WORK" <<'PY' || fail "the documents and the command disagree with doc/options.list (above)"
import glob, os, re, sys

top, work = sys.argv[1], sys.argv[2]
subs = ["run", "status", "purge", "mark", "unmark", "daemon"]
problems = []


def bad(msg):
    problems.append(msg)


opts = {s: set() for s in subs}
env, consts, other = {}, set(), set()
with open(os.path.join(top, "doc/options.list")) as f:
    for n, line in enumerate(f, 1):
        w = line.split("#", 1)[0].split()
        if not w:
            continue
        if len(w) != 3:
            bad("doc/options.list:%d: not KIND WHERE NAME" % n)
        elif w[0] == "option" and w[1] in opts:
            opts[w[1]].add(w[2])
        elif w[0] == "env" and w[1] in ("user", "run", "test"):
            env[w[2]] = w[1]
        elif w[0] == "const":
            consts.add(w[2])
        elif w[0] == "other":
            other.add(w[2])
        else:
            bad("doc/options.list:%d: unknown kind or subcommand: %s" % (n, line.strip()))
ours = set().union(*opts.values())
names = set(env) | consts

OPT = re.compile(r"(?<![\w-])--[a-z0-9][a-z0-9-]+")
ROFF_OPT = re.compile(r"\\-\\-([a-z0-9][a-z0-9\\-]+)")
NAME = re.compile(r"\bVOLATILE_[A-Z0-9][A-Z0-9_]*\*?")


def unknown(found):
    """The names of found not in the list; NAME_* stands for the names it begins."""
    return {v for v in found if v not in names and not
            (v.endswith("_*") and any(k.startswith(v[:-1]) for k in names))}


def roff_opts(text):
    return {"--" + m.replace("\\-", "-") for m in ROFF_OPT.findall(text)}


def compare(where, got, want):
    for o in sorted(got - want):
        bad("%s names %s, which the list does not give it" % (where, o))
    for o in sorted(want - got):
        bad("%s does not name %s, which the list gives it" % (where, o))


# ---- --help ------------------------------------------------------------------
def help_text(sub):
    with open(os.path.join(work, "help." + (sub or "top"))) as f:
        return f.read()


for sub in subs:
    compare("volatile %s --help" % sub, set(OPT.findall(help_text(sub))) - {"--help"}, opts[sub])
compare("volatile --help", set(OPT.findall(help_text(""))) - {"--help"}, ours)

# ---- man/volatile.1: SYNOPSIS entries and sections ----------------------------
with open(os.path.join(top, "man/volatile.1")) as f:
    man1 = f.read()
synopsis = man1.split(".SH SYNOPSIS", 1)[1].split(".SH ", 1)[0]
seen = {s: set() for s in subs}
for entry in synopsis.split(".br"):
    m = re.search(r"^\.B volatile (\w+)", entry.strip())
    if m is None or m.group(1) not in seen:
        bad("man/volatile.1 SYNOPSIS: an entry of no known subcommand: %r" % entry.strip()[:40])
        continue
    seen[m.group(1)] |= roff_opts(entry)
for sub in subs:
    compare("man/volatile.1 SYNOPSIS of %s" % sub, seen[sub], opts[sub])
for sec in re.split(r"^\.SS ", man1, flags=re.M)[1:]:
    title, body = sec.split("\n", 1)
    body = re.split(r"^\.SH ", body, flags=re.M)[0]
    named = [s.strip() for s in title.split(",")]
    if not all(s in opts for s in named):
        bad("man/volatile.1: section %r is of no known subcommand" % title)
        continue
    compare("man/volatile.1 section %s" % title, roff_opts(body),
            set().union(*(opts[s] for s in named)))
# whatever else it names (EXAMPLES) is ours or another program's the list names
for o in sorted(roff_opts(man1) - ours - other):
    bad("man/volatile.1 names %s, in no line of the list" % o)

# ---- VOLATILE_* names ----------------------------------------------------------
read = set()
for path in glob.glob(os.path.join(top, "src/**/*.[ch]"), recursive=True):
    with open(path) as f:
        read |= set(re.findall(r'getenv\("(VOLATILE_[A-Z0-9_]+)"\)', f.read()))
for v in sorted(read - set(env)):
    bad("the sources read %s, which is not in the list" % v)
with open(os.path.join(top, "man/libvolatile.7")) as f:
    man7 = f.read()
man7_env = man7.split(".SH ENVIRONMENT", 1)[1].split("\n.SH ", 1)[0]
for v, kind in sorted(env.items()):
    if kind in ("user", "run") and v not in NAME.findall(man7_env):
        bad("libvolatile(7) ENVIRONMENT does not name %s" % v)
    if kind == "test" and (v in man7 or v in man1):
        bad("a man page names %s, which only the test build reads" % v)
for where, text in [("man/volatile.1", man1), ("man/libvolatile.7", man7)] + \
        [("volatile %s --help" % s, help_text(s)) for s in [""] + subs]:
    for v in sorted(unknown(NAME.findall(text))):
        bad("%s names %s, which is not in the list" % (where, v))

# ---- README.md and doc/*.md ------------------------------------------------------
CHAIN = re.compile(r"\bvolatile (%s)\b([^`|#;&\n]*)" % "|".join(subs))
docs = [os.path.join(top, "README.md")] + sorted(glob.glob(os.path.join(top, "doc/*.md")))
for path in docs:
    rel = os.path.relpath(path, top)
    with open(path) as f:
        text = f.read()
    for n, line in enumerate(text.split("\n"), 1):
        for v in sorted(unknown(NAME.findall(line))):
            bad("%s:%d names %s, which is not in the list" % (rel, n, v))
        for m in CHAIN.finditer(line):
            rest = m.group(2).split(" -- ", 1)[0]
            for o in OPT.findall(rest):
                if o not in opts[m.group(1)] and o != "--help":
                    bad("%s:%d: 'volatile %s %s': not an option of %s in the list"
                        % (rel, n, m.group(1), o, m.group(1)))
        for span in re.findall(r"`(--[a-z0-9][a-z0-9-]+)(?:[ =][^`]*)?`", line):
            if span not in ours and span not in other and span != "--help":
                bad("%s:%d: `%s` is no option in the list (ours, or another program's)"
                    % (rel, n, span))

for p in problems:
    print("options-list: " + p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
exit 0
