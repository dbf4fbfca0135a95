#!/usr/bin/env python3
"""Calibration of bo-cluster's confidence, the gate of a predicted pick (docs/whole-cluster.md),
on the recorded sweeps: reads the JSON lines of
`colltune-bench-cluster --recorded ...` (stderr) and bins the predicted cells whose pick before
the gate is not the default by their confidence (the model's P(pick faster than the default)),
against how often the pick's recorded truth really is faster. A tie is a pick that runs the
algorithm of the default's fixed decision there (the same recorded latency).
Standard library only. usage: gate_calibration.py CELLS.jsonl [GATE]"""
import json
import sys
from collections import defaultdict

BINS = [(0.5, 0.6), (0.6, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, 0.95), (0.95, 1.0)]


def main():
    path = sys.argv[1]
    gate = float(sys.argv[2]) if len(sys.argv) > 2 else 0.8
    rows = defaultdict(list)  # bin -> [(confidence, truth ratio)]
    above = defaultdict(list)  # collective -> truth ratios at confidence >= gate
    for line in open(path):
        r = json.loads(line)
        for c in r.get("picks", []):
            ratio = c.get("ungated_over_default", 0)
            if c.get("measured") or c.get("ungated_pick", 0) == 0 or ratio <= 0:
                continue
            conf = c["confidence"]
            for lo, hi in BINS:
                if lo <= conf < hi or (hi == 1.0 and conf == 1.0):
                    rows[(lo, hi)].append((conf, ratio))
            if conf >= gate:
                above[r["collective"]].append(ratio)
    print("| confidence | cells | mean confidence | faster | faster or tie | faster by > 5 % "
          "| slower by > 5 % |")
    print("|---|---|---|---|---|---|---|")
    for lo, hi in BINS:
        cells = rows[(lo, hi)]
        if not cells:
            continue
        n = len(cells)
        share = lambda test: sum(1 for _, x in cells if test(x)) / n
        print(f"| {lo}-{hi} | {n} | {sum(c for c, _ in cells) / n:.3f} | {share(lambda x: x < 1):.3f} "
              f"| {share(lambda x: x <= 1):.3f} | {share(lambda x: x < 0.95):.3f} "
              f"| {share(lambda x: x > 1.05):.3f} |")
    total = sum(len(v) for v in above.values())
    slower = sum(1 for v in above.values() for x in v if x > 1.05)
    print(f"\nconfidence >= {gate}: {total} cells, {slower} slower than the default by > 5 %")
    for coll in sorted(above):
        v = above[coll]
        print(f"  {coll}: {sum(1 for x in v if x < 1)} of {len(v)} faster, "
              f"{sum(1 for x in v if x > 1.05)} slower by > 5 %")


if __name__ == "__main__":
    main()
