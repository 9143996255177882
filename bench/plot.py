#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Plot the MARK+UNMARK pair's latency against the number of ranges.

    python3 bench/plot.py bench/bench.json > bench/latency.svg

Reads the JSON that `make bench` writes (bench/bench.json in the build
tree) and writes an SVG on stdout: the pair's cost with N ranges in one
file, and with N files holding a range each, beside the rejected raw
fallocate measured in the same rounds, and the target (1.5 times the pair
at one range). Python 3 standard library only.
"""
import json
import math
import sys

W, H = 820, 420
LEFT, RIGHT, TOP, BOTTOM = 70, 260, 40, 60


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: plot.py BENCH.json > latency.svg")
    with open(sys.argv[1]) as f:
        data = json.load(f)
    ranges = data.get("pair_by_ranges_in_one_file", [])
    files = data.get("pair_by_files", [])
    if not ranges:
        sys.exit("plot.py: no pair_by_ranges_in_one_file in %s" % sys.argv[1])
    base = ranges[0]["pair_ns"]
    series = [
        ("pair, N ranges in one file", "#1f77b4", [(p["count"], p["pair_ns"]) for p in ranges]),
        ("pair, N files, a range each", "#ff7f0e", [(p["count"], p["pair_ns"]) for p in files]),
        ("rejected raw fallocate", "#7f7f7f",
         [(p["count"], p["rejected_ns"]) for p in ranges]),
    ]
    xmax = max(p[0] for _, _, pts in series for p in pts)
    decades = max(1, math.ceil(math.log10(xmax)))
    ymax = max(max(p[1] for _, _, pts in series for p in pts), 1.5 * base) * 1.1
    step = 10 ** math.floor(math.log10(ymax / 5))
    for m in (1, 2, 5, 10):
        if ymax / (m * step) <= 8:
            step *= m
            break
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def x(v):
        return LEFT + pw * (math.log10(max(v, 1)) / decades)

    def y(v):
        return TOP + ph * (1 - v / ymax)

    out = []
    out.append('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
               'font-family="sans-serif" font-size="12">' % (W, H))
    out.append('<rect width="100%" height="100%" fill="white"/>')
    out.append('<text x="%d" y="22" font-size="14">MARK+UNMARK pair vs ranges held '
               '(%s)</text>' % (LEFT, esc(data.get("machine", ""))))
    # grid and axes
    v = 0.0
    while v <= ymax:
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>'
                   % (LEFT, y(v), LEFT + pw, y(v)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>'
                   % (LEFT - 6, y(v) + 4, v / 1000))
        v += step
    for d in range(decades + 1):
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>'
                   % (x(10 ** d), TOP, x(10 ** d), TOP + ph))
        label = "1" if d == 0 else "10" if d == 1 else "1e%d" % d
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
                   % (x(10 ** d), TOP + ph + 18, label))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>'
               % (LEFT, TOP, pw, ph))
    out.append('<text x="%d" y="%d" text-anchor="middle">ranges (log scale)</text>'
               % (LEFT + pw // 2, H - 18))
    out.append('<text x="18" y="%d" text-anchor="middle" transform="rotate(-90 18 %d)">'
               'microseconds per call (median)</text>' % (TOP + ph // 2, TOP + ph // 2))
    # the target
    out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#d62728" '
               'stroke-dasharray="6 4"/>' % (LEFT, y(1.5 * base), LEFT + pw, y(1.5 * base)))
    legend = [("target: 1.5 x the pair at 1 range", "#d62728", True)]
    for name, colour, pts in series:
        if not pts:
            continue
        path = " ".join("%s%.1f,%.1f" % ("M" if i == 0 else "L", x(c), y(v))
                        for i, (c, v) in enumerate(pts))
        out.append('<path d="%s" fill="none" stroke="%s" stroke-width="2"/>' % (path, colour))
        for c, v in pts:
            out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (x(c), y(v), colour))
        legend.append((name, colour, False))
    for i, (name, colour, dashed) in enumerate(legend):
        ly = TOP + 10 + 20 * i
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                   % (LEFT + pw + 12, ly, LEFT + pw + 36, ly, colour,
                      ' stroke-dasharray="6 4"' if dashed else ""))
        out.append('<text x="%d" y="%d">%s</text>' % (LEFT + pw + 40, ly + 4, esc(name)))
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
