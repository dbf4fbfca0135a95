#!/usr/bin/env python3
"""Predicted vs measured medians, one dot per cell, log-log, as an SVG (standard library only).

Colour = collective; filled dots = cells the fit saw, rings = held-out cells. The diagonal is a
perfect model, the dashed lines a factor 2.

usage: plot_scatter.py OUT.svg CELLS.csv=TAG ... [--title TEXT]   (TAG "fit" is drawn filled)
"""
import argparse
import csv
import math

COLOURS = {"bcast": "#1f77b4", "reduce": "#ff7f0e", "allreduce": "#2ca02c", "gather": "#d62728"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("cells", nargs="+")
    ap.add_argument("--title", default="")
    args = ap.parse_args()
    points = []
    for item in args.cells:
        path, _, tag = item.partition("=")
        for r in csv.DictReader(open(path)):
            sim, meas = float(r["simulated_us"]), float(r["measured_us"])
            if sim > 0 and meas > 0 and math.isfinite(sim):
                points.append((meas, sim, r["collective"], tag))
    lo = math.floor(math.log10(min(min(p[0], p[1]) for p in points)))
    hi = math.ceil(math.log10(max(max(p[0], p[1]) for p in points)))
    size, margin = 560, 60

    def xy(meas, sim):
        fx = (math.log10(meas) - lo) / (hi - lo)
        fy = (math.log10(sim) - lo) / (hi - lo)
        return margin + fx * size, margin + (1 - fy) * size

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size + 2 * margin + 130}" '
           f'height="{size + 2 * margin}" font-family="sans-serif" font-size="12">',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{margin}" y="{margin - 25}" font-size="14">{args.title}</text>']
    for d in range(lo, hi + 1):
        x, y = xy(10 ** d, 10 ** d)
        out.append(f'<line x1="{x}" y1="{margin}" x2="{x}" y2="{margin + size}" stroke="#eee"/>')
        out.append(f'<line x1="{margin}" y1="{y}" x2="{margin + size}" y2="{y}" stroke="#eee"/>')
        out.append(f'<text x="{x}" y="{margin + size + 15}" text-anchor="middle">1e{d}</text>')
        out.append(f'<text x="{margin - 5}" y="{y + 4}" text-anchor="end">1e{d}</text>')
    for factor, dash in ((1, ""), (2, ' stroke-dasharray="4 4"'), (0.5, ' stroke-dasharray="4 4"')):
        x1, y1 = xy(10 ** lo, 10 ** lo * factor)
        x2, y2 = xy(10 ** hi, 10 ** hi * factor)
        out.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#444"{dash}/>')
    out.append(f'<rect x="{margin}" y="{margin}" width="{size}" height="{size}" fill="none" stroke="black"/>')
    for meas, sim, coll, tag in points:
        x, y = xy(meas, sim)
        c = COLOURS.get(coll, "#777")
        fill = c if tag == "fit" else "none"
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{fill}" stroke="{c}" '
                   f'stroke-width="0.8" opacity="0.6"/>')
    out.append(f'<text x="{margin + size / 2}" y="{margin + size + 35}" text-anchor="middle">'
               'measured median latency (µs)</text>')
    out.append(f'<text x="15" y="{margin + size / 2}" text-anchor="middle" '
               f'transform="rotate(-90 15 {margin + size / 2})">predicted latency (µs)</text>')
    ly = margin + 10
    for coll, c in COLOURS.items():
        out.append(f'<circle cx="{margin + size + 20}" cy="{ly}" r="4" fill="{c}"/>'
                   f'<text x="{margin + size + 30}" y="{ly + 4}">{coll}</text>')
        ly += 18
    out.append(f'<text x="{margin + size + 15}" y="{ly + 10}">filled: fit set</text>')
    out.append(f'<text x="{margin + size + 15}" y="{ly + 26}">ring: held out</text>')
    out.append("</svg>")
    open(args.out, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
