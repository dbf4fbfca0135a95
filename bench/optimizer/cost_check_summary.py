#!/usr/bin/env python3
"""Summarise `colltune-bench-cluster --cost-model-check` (its stderr JSON lines).

  cost_check_summary.py CHECK.jsonl                per collective: the 90th percentile, the
                                                   largest and the median of the modelled / true
                                                   run seconds as a factor (exp |log ratio|),
                                                   over every configuration and comm size
  cost_check_summary.py BEFORE.jsonl AFTER.jsonl   the same for both, then per collective and
                                                   configuration the ratio at every comm size,
                                                   before > after, where it moved by > 0.02
  cost_check_summary.py --run BENCH ARGS...        run BENCH ARGS... (an argv vector, no shell;
                                                   ARGS include --cost-model-check) and
                                                   summarise its stderr

Only the lines of the fit at every size ("fit": "all") count. The percentile is the nearest
rank. bench/README.md quotes these figures.
"""
import collections
import json
import math
import subprocess
import sys


def parse(lines):
    ratios = {}
    for line in lines:
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if r.get("fit") != "all" or "model_s" not in r:
            continue
        ratios[(r["collective"], r["config"], r["P"])] = r["model_s"] / r["true_s"]
    return ratios


def load(path):
    with open(path, encoding="utf-8") as f:
        return parse(f)


def summary(path, ratios):
    errors = collections.defaultdict(list)
    for (collective, _, _), ratio in ratios.items():
        errors[collective].append(abs(math.log(ratio)))
    parts = []
    for collective, e in sorted(errors.items()):
        e.sort()
        p90 = e[min(len(e) - 1, int(0.9 * (len(e) - 1) + 0.5))]
        parts.append(f"{collective} p90 {math.exp(p90):.2f}x, largest {math.exp(e[-1]):.2f}x, "
                     f"median {math.exp(e[len(e) // 2]):.2f}x")
    print(f"{path}: " + "; ".join(parts))


def compare(before, after):
    for collective in sorted({k[0] for k in before}):
        sizes = sorted({k[2] for k in before if k[0] == collective})
        print(f"{collective}, P = {' '.join(str(p) for p in sizes)}")
        for config in sorted({k[1] for k in before if k[0] == collective}):
            keys = [(collective, config, p) for p in sizes]
            if all(abs(before.get(k, 0) - after.get(k, 0)) <= 0.02 for k in keys):
                continue
            cells = [f"{before[k]:.2f}>{after.get(k, math.nan):.2f}" if k in before else "-"
                     for k in keys]
            print(f"  {config:<24} " + " ".join(cells))


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--run":
        done = subprocess.run(sys.argv[2:], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"{sys.argv[2]}: exit {done.returncode}: {done.stderr[-500:]}")
        ratios = parse(done.stderr.splitlines())
        if not ratios:
            sys.exit(f"{sys.argv[2]}: no check lines on its stderr (is --cost-model-check given?)")
        summary(sys.argv[2], ratios)
        return
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    loaded = [load(p) for p in sys.argv[1:]]
    for path, ratios in zip(sys.argv[1:], loaded):
        summary(path, ratios)
    if len(loaded) == 2:
        compare(*loaded)


if __name__ == "__main__":
    main()
