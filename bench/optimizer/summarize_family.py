#!/usr/bin/env python3
"""Summarise run_reduce_family.sh's JSON lines: per (comm size, truth, label) the regret over
landscapes x seeds (mean, median, p90 of each run's mean regret over message sizes, in %),
mean runs, and how many landscapes the label loses to exhaustive by more than 2 points (mean
over seeds). --per-landscape: one row per landscape too. Standard library only."""
import argparse
import json
import statistics
from collections import OrderedDict, defaultdict


def p90(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.9 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--per-landscape", action="store_true")
    args = ap.parse_args()
    runs = OrderedDict()  # (P, truth, label) -> {landscape: [lines]}
    for path in args.files:
        for line in open(path):
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            key = (r["comm_size"], r.get("truth", "all"), r.get("label", r["strategy"]))
            runs.setdefault(key, defaultdict(list))[r["landscape"]].append(r)
    print("| P | truth | strategy | landscapes x seeds | configs | runs | "
          "regret mean / median / p90 % "
          "| landscapes worse than exhaustive by > 2 points |")
    print("|---|---|---|---|---|---|---|---|")
    for (p, truth, label), by in sorted(runs.items()):
        lines = [r for rs in by.values() for r in rs]
        regrets = [100 * r["regret_mean"] for r in lines]
        worse = "-"
        ex = runs.get((p, truth, "exhaustive"))
        if ex and label != "exhaustive":
            n = sum(1 for name, rs in by.items() if name in ex and
                    100 * statistics.mean(r["regret_mean"] for r in rs) >
                    100 * statistics.mean(r["regret_mean"] for r in ex[name]) + 2)
            worse = f"{n} of {len(by)}"
        print(f"| {p} | {truth} | {label} | {len(by)} x {len(lines) // max(1, len(by))} | "
              f"{lines[0]['configs']} | {statistics.mean(r['runs'] for r in lines):.1f} | "
              f"{statistics.mean(regrets):.2f} / {statistics.median(regrets):.2f} / "
              f"{p90(regrets):.2f} | {worse} |")
    if args.per_landscape:
        print()
        print("| P | truth | landscape | " + " | ".join(
            sorted({k[2] for k in runs})) + " |")
        labels = sorted({k[2] for k in runs})
        keys = sorted({(k[0], k[1]) for k in runs})
        for p, truth in keys:
            names = sorted({n for k, by in runs.items() if k[:2] == (p, truth) for n in by},
                           key=lambda n: int(n.rsplit("s", 1)[-1]))
            for n in names:
                cells = []
                for lab in labels:
                    rs = runs.get((p, truth, lab), {}).get(n)
                    cells.append(f"{100 * statistics.mean(r['regret_mean'] for r in rs):.1f}"
                                 if rs else "")
                print(f"| {p} | {truth} | {n} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
