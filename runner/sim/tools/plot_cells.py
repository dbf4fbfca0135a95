#!/usr/bin/env python3
"""Plots `colltune-sim compare --cells FILE` output as an SVG (standard library only).

One panel per (collective, comm size): latency against message size on log-log axes, measured
medians as dots and simulated latencies as lines, one colour per configuration.

usage: plot_cells.py CELLS.csv OUT.svg [--comm-size N] [--title TEXT]
"""
import argparse
import csv
import math
from collections import defaultdict

COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cells")
    ap.add_argument("out")
    ap.add_argument("--comm-size", type=int, action="append")
    ap.add_argument("--title", default="")
    args = ap.parse_args()

    panels = defaultdict(lambda: defaultdict(list))
    for r in csv.DictReader(open(args.cells)):
        p = int(r["comm_size"])
        if args.comm_size and p not in args.comm_size:
            continue
        sim = float(r["simulated_us"])
        meas = float(r["measured_us"])
        if not (sim > 0 and meas > 0):
            continue
        cfg = "alg %s" % r["algorithm"]
        if r["segsize"] != "0":
            cfg += " seg %s" % r["segsize"]
        if r["fanout"] != "0":
            cfg += " fo %s" % r["fanout"]
        panels[(r["collective"], p)][cfg].append((int(r["msg_size"]), meas, sim))

    keys = sorted(panels)
    cols = 2
    rows = (len(keys) + cols - 1) // cols
    pw, ph, ml, mt = 520, 330, 60, 40
    width, height = cols * pw, rows * ph + 30
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="18" font-size="14">%s (dots: measured median, lines: simulated)'
           '</text>' % args.title]
    for idx, key in enumerate(keys):
        ox, oy = (idx % cols) * pw, 30 + (idx // cols) * ph
        series = panels[key]
        xs = [s for v in series.values() for s, _, _ in v]
        ys = [y for v in series.values() for _, m, s in v for y in (m, s)]
        x0, x1 = math.log2(min(xs)), math.log2(max(xs))
        y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
        if x1 == x0:
            x1 = x0 + 1
        if y1 == y0:
            y1 = y0 + 1
        aw, ah = pw - ml - 150, ph - mt - 40

        def px(s):
            return ox + ml + (math.log2(s) - x0) / (x1 - x0) * aw

        def py(v):
            return oy + mt + ah - (math.log10(v) - y0) / (y1 - y0) * ah

        out.append('<text x="%d" y="%d" font-size="12">%s, %d ranks</text>'
                   % (ox + ml, oy + 25, key[0], key[1]))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>'
                   % (ox + ml, oy + mt, aw, ah))
        for e in range(int(y0), int(y1) + 1):
            y = py(10 ** e)
            out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>'
                       % (ox + ml, ox + ml + aw, y, y))
            out.append('<text x="%d" y="%.1f" text-anchor="end">1e%d</text>' % (ox + ml - 4, y + 4, e))
        for b in range(int(x0), int(x1) + 1, 4):
            x = px(2 ** b)
            label = "%dB" % 2 ** b if b < 10 else ("%dK" % 2 ** (b - 10) if b < 20 else "%dM" % 2 ** (b - 20))
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (x, oy + mt + ah + 14, label))
        out.append('<text x="%d" y="%d" text-anchor="middle">message size</text>'
                   % (ox + ml + aw // 2, oy + mt + ah + 28))
        for i, (cfg, pts) in enumerate(sorted(series.items())):
            colour = COLOURS[i % len(COLOURS)]
            pts.sort()
            line = " ".join("%.1f,%.1f" % (px(s), py(sim)) for s, _, sim in pts)
            out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"/>'
                       % (line, colour))
            for s, meas, _ in pts:
                out.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' % (px(s), py(meas), colour))
            out.append('<text x="%d" y="%d" fill="%s">%s</text>'
                       % (ox + ml + aw + 8, oy + mt + 12 + 13 * i, colour, cfg))
    out.append("</svg>")
    open(args.out, "w").write("\n".join(out))


if __name__ == "__main__":
    main()
