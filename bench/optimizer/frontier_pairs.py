#!/usr/bin/env python3
"""Pair two runs of cost_frontier.py (their --jsonl files) campaign by campaign.

  frontier_pairs.py BEFORE.jsonl AFTER.jsonl [METHOD]

Pairs the campaigns of METHOD (default "bo-cluster (c), total node-s budget"; the default
mode's is "bo-cluster (c), node-s budget") by (profile, collective, seed) and prints, per row,
the change of mean regret in points (AFTER - BEFORE, x 100) for every seed with the mean of
the row's node-seconds before and after; then the change pooled over every pair: mean +-
standard error, and how many pairs got worse, better (by more than 0.005 points) or stayed the
same. bench/README.md quotes these figures.
"""
import collections
import json
import math
import sys

TOTAL = "bo-cluster (c), total node-s budget"


def load(path, method):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["method"] == method:
                out[(r["profile"], r["collective"], r["seed"])] = r
    return out


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    method = sys.argv[3] if len(sys.argv) == 4 else TOTAL
    before, after = load(sys.argv[1], method), load(sys.argv[2], method)
    rows = collections.defaultdict(list)
    for key in sorted(before):
        if key in after:
            change = 100 * (after[key]["regret_mean"] - before[key]["regret_mean"])
            rows[key[:2]].append((key[2], change, before[key]["node_seconds"],
                                  after[key]["node_seconds"]))
    changes = [c for pairs in rows.values() for _, c, _, _ in pairs]
    if len(changes) < 2:
        sys.exit("fewer than two campaigns in both files")
    for (profile, collective), pairs in rows.items():
        mean = sum(c for _, c, _, _ in pairs) / len(pairs)
        seeds = " ".join(f"{seed}:{c:+.1f}" for seed, c, _, _ in pairs)
        ns_before = sum(b for _, _, b, _ in pairs) / len(pairs)
        ns_after = sum(a for _, _, _, a in pairs) / len(pairs)
        print(f"{profile} {collective}: {mean:+.2f} points ({seeds}), "
              f"node-s {ns_before:.0f} -> {ns_after:.0f}")
    n = len(changes)
    mean = sum(changes) / n
    se = math.sqrt(sum((c - mean) ** 2 for c in changes) / (n - 1) / n)
    worse = sum(c > 0.005 for c in changes)
    better = sum(c < -0.005 for c in changes)
    print(f"pooled: {mean:+.2f} +- {se:.2f} points over {n} pairs "
          f"({worse} worse, {better} better, {n - worse - better} the same)")


if __name__ == "__main__":
    main()
