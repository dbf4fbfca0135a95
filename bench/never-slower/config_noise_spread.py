#!/usr/bin/env python3
"""How much the run-to-run noise differs between configurations at one message size, on the
landscapes measured on this machine kind (bench/data/measured-p4.csv, measured-p6.csv: every
configuration run 5 times). The paired test pools a variance only over things assumed to share
a noise level (neighbouring message sizes); pooling it over a look's nominees as well would
assume that configurations do (bench/README.md, "Pooling the variance over a look's nominees,
measured and not kept"). Per (collective, comm size, message size): each configuration's
standard deviation of log latency over its repeats; the ratio of the 90th to the 10th
percentile of those over the configurations, observed, and the same ratio when every
configuration had the same noise (each configuration's residuals from its mean shuffled among
all configurations of that size, 200 shuffles: what 5 repeats and the tails alone give).
Pure Python, no packages; a few seconds.

usage: config_noise_spread.py [CSV ...]   (default: the two measured landscapes)
"""
import collections
import csv
import math
import os
import random
import statistics
import sys


def sd_ratio(groups):
    sds = sorted(statistics.stdev(g) for g in groups)
    lo, hi = sds[len(sds) // 10], sds[(len(sds) * 9) // 10]
    return hi / lo if lo > 0 else float("inf")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    files = sys.argv[1:] or [os.path.join(here, "..", "data", f)
                             for f in ("measured-p4.csv", "measured-p6.csv")]
    rng = random.Random(1)
    print("| landscape | collective | message sizes | configurations per size | sd ratio p90/p10 "
          "across configurations, median over sizes: observed | same noise (shuffled) | sizes "
          "where observed > every shuffle |")
    print("|---|---|---|---|---|---|---|")
    for path in files:
        cells = collections.defaultdict(list)
        for row in csv.DictReader(open(path, encoding="utf-8")):
            us = float(row["latency_us"])
            if us > 0:
                key = (row["collective"], row["comm_size"], int(row["msg_size"]))
                config = (row["algorithm"], row["segsize"], row["fanout"])
                cells[key, config].append(math.log(us))
        by_size = collections.defaultdict(list)
        for (key, config), values in cells.items():
            if len(values) >= 4:
                by_size[key].append(values)
        per_collective = collections.defaultdict(list)
        for (collective, comm, size), groups in sorted(by_size.items()):
            if len(groups) < 10:
                continue
            observed = sd_ratio(groups)
            residuals = [x - statistics.mean(g) for g in groups for x in g]
            shuffled = []
            for _ in range(200):
                rng.shuffle(residuals)
                at, regrouped = 0, []
                for g in groups:
                    regrouped.append(residuals[at:at + len(g)])
                    at += len(g)
                shuffled.append(sd_ratio(regrouped))
            per_collective[collective, comm].append(
                (observed, statistics.median(shuffled), observed > max(shuffled), len(groups)))
        for (collective, comm), rows in per_collective.items():
            print(f"| {os.path.basename(path)} | {collective} (P={comm}) | {len(rows)} "
                  f"| {statistics.median(r[3] for r in rows):.0f} "
                  f"| {statistics.median(r[0] for r in rows):.2f} "
                  f"| {statistics.median(r[1] for r in rows):.2f} "
                  f"| {sum(r[2] for r in rows)} of {len(rows)} |")


if __name__ == "__main__":
    main()
