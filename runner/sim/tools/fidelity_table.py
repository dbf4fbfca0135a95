#!/usr/bin/env python3
"""Model fidelity table from `colltune-sim compare --cells FILE` output (standard library only).

One row per (collective, algorithm, size band): the median over the band's cells of the
measured median and of the prediction, the median relative error |sim - real| / real and the
geometric-mean ratio sim / real; a summary line per collective and overall. Cells of several
files can be tagged (e.g. fit,held-out) to show the error on data the fit did not see.

usage: fidelity_table.py CELLS.csv[=TAG] ... [--by config]
"""
import argparse
import csv
import math
import statistics
from collections import OrderedDict

BANDS = [(0, 256, "4 B-256 B"), (257, 8192, "512 B-8 KiB"), (8193, 131072, "16-128 KiB"),
         (131073, 1 << 40, "256 KiB-1 MiB")]
NAMES = {
    "bcast": {0: "default", 1: "linear", 2: "chain", 3: "pipeline", 4: "split binary", 5: "binary",
              6: "binomial", 7: "knomial", 8: "scatter_allgather", 9: "scatter_allgather_ring"},
    "reduce": {0: "default", 1: "linear", 2: "chain", 3: "pipeline", 4: "binary", 5: "binomial",
               6: "in-order binary", 7: "rabenseifner"},
    "allreduce": {0: "default", 1: "basic linear", 2: "nonoverlapping", 3: "recursive doubling",
                  4: "ring", 5: "segmented ring", 6: "rabenseifner"},
    "gather": {0: "default", 1: "basic linear", 2: "binomial", 3: "linear sync"},
}


def band_of(size):
    for lo, hi, name in BANDS:
        if lo <= size <= hi:
            return name
    return "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cells", nargs="+", help="CELLS.csv or CELLS.csv=TAG")
    args = ap.parse_args()
    rows = []
    for item in args.cells:
        path, _, tag = item.partition("=")
        for r in csv.DictReader(open(path)):
            sim, meas = float(r["simulated_us"]), float(r["measured_us"])
            if not (sim > 0 and meas > 0 and math.isfinite(sim)):
                continue
            r["tag"] = tag
            rows.append(r)
    tags = list(OrderedDict.fromkeys(r["tag"] for r in rows))

    def stats(cells):
        meas = statistics.median(float(c["measured_us"]) for c in cells)
        sim = statistics.median(float(c["simulated_us"]) for c in cells)
        rel = statistics.median(abs(float(c["simulated_us"]) / float(c["measured_us"]) - 1) for c in cells)
        geo = math.exp(statistics.mean(math.log(float(c["simulated_us"]) / float(c["measured_us"])) for c in cells))
        return meas, sim, rel, geo

    groups = OrderedDict()
    for r in sorted(rows, key=lambda r: (r["collective"], int(r["algorithm"]), int(r["msg_size"]))):
        groups.setdefault((r["collective"], int(r["algorithm"]), band_of(int(r["msg_size"]))), []).append(r)
    head = "| collective | algorithm | sizes | cells | measured µs | predicted µs |"
    sep = "|---|---|---|---|---|---|"
    for t in tags:
        head += f" rel. error ({t or 'all'}) |"
        sep += "---|"
    print(head + " sim/real |")
    print(sep + "---|")
    for (coll, alg, band), cells in groups.items():
        meas, sim, rel, geo = stats(cells)
        line = (f"| {coll} | {alg} {NAMES.get(coll, {}).get(alg, '')} | {band} | {len(cells)} | "
                f"{meas:.1f} | {sim:.1f} |")
        for t in tags:
            sub = [c for c in cells if c["tag"] == t]
            line += f" {100 * stats(sub)[2]:.0f} % |" if sub else " – |"
        print(line + f" {geo:.2f} |")
    print()
    print("| data | cells | median rel. error | p90 rel. error | geometric mean sim/real |")
    print("|---|---|---|---|---|")
    for t in tags:
        for coll in ["bcast", "reduce", "allreduce", "gather", None]:
            cells = [c for c in rows if c["tag"] == t and (coll is None or c["collective"] == coll)]
            if not cells:
                continue
            errs = sorted(abs(float(c["simulated_us"]) / float(c["measured_us"]) - 1) for c in cells)
            p90 = errs[min(len(errs) - 1, int(0.9 * len(errs)))]
            geo = math.exp(statistics.mean(math.log(float(c["simulated_us"]) / float(c["measured_us"])) for c in cells))
            print(f"| {t or 'all'} {coll or 'all'} | {len(cells)} | {100 * statistics.median(errs):.0f} % | "
                  f"{100 * p90:.0f} % | {geo:.2f} |")


if __name__ == "__main__":
    main()
