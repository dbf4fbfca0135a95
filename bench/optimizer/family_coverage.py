#!/usr/bin/env python3
"""Where a strategy's regret on the reduce family comes from (bench/optimizer/run_reduce_family.sh
output): per (comm size, truth, label), the share of message sizes at which the search ran the
size's optimal configuration, and the mean regret at those sizes and at the others.
Standard library only."""
import json
import statistics
import sys
from collections import defaultdict


def main():
    g = defaultdict(lambda: ([], []))
    for path in sys.argv[1:]:
        for line in open(path):
            r = json.loads(line)
            if "optimum_searched" not in r:
                continue
            key = (r["comm_size"], r.get("truth", "all"), r.get("label", r["strategy"]))
            for regret, found in zip(r["regrets"], r["optimum_searched"]):
                if regret is not None:
                    g[key][0 if found else 1].append(100 * regret)
    print("| P | truth | strategy | sizes whose optimum was run | regret there % "
          "| regret elsewhere % |")
    print("|---|---|---|---|---|---|")
    for (p, truth, label), (there, elsewhere) in sorted(g.items()):
        n = len(there) + len(elsewhere)
        mean = lambda xs: f"{statistics.mean(xs):.1f}" if xs else "-"
        print(f"| {p} | {truth} | {label} | {100 * len(there) / n:.0f} % | {mean(there)} | "
              f"{mean(elsewhere)} |")


if __name__ == "__main__":
    main()
