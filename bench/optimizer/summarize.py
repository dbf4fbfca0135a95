#!/usr/bin/env python3
"""Summarise colltune-bench-optimizer JSON lines (stdin or files) as a Markdown table: one row
per (label, strategy, collective, comm_size), averaged over seeds.

Columns: seeds; configs (space size); runs (mean; search + final re-measurements);
benchmark seconds (mean); regret over sizes (mean over seeds of the per-seed mean, of the
per-seed median, and the worst per-seed max), in %; runs_to_target (median over seeds, and how
many seeds never reached it); decision ms (median over seeds of each seed's median).
A line may carry a "label" key (add one with --label) to tell settings apart.
Standard library only.
"""
import argparse
import json
import statistics
import sys
from collections import OrderedDict


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*")
    ap.add_argument("--label", default=None, help="label for lines without one")
    args = ap.parse_args()
    streams = [open(f) for f in args.files] if args.files else [sys.stdin]
    groups = OrderedDict()
    for stream in streams:
        for line in stream:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if "strategy" not in r:
                continue
            label = r.get("label", args.label or "")
            key = (label, r["strategy"], r["collective"], r["comm_size"])
            groups.setdefault(key, []).append(r)
    print("| label | strategy | coll | P | configs | seeds | runs (search+final) | bench s | "
          "regret mean % | regret median % | regret max % | runs to target (never) | decision ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (label, strategy, coll, p), rs in groups.items():
        runs = statistics.mean(r["runs"] for r in rs)
        search = statistics.mean(r["search_runs"] for r in rs)
        final = statistics.mean(r["final_runs"] for r in rs)
        secs = statistics.mean(r["benchmark_seconds"] for r in rs)
        rmean = 100 * statistics.mean(r["regret_mean"] for r in rs)
        rmed = 100 * statistics.mean(r["regret_median"] for r in rs)
        rmax = 100 * max(r["regret_max"] for r in rs)
        reached = [r["runs_to_target"] for r in rs if r["runs_to_target"] is not None]
        never = len(rs) - len(reached)
        ttt = f"{statistics.median(reached):.0f}" if reached else "-"
        dms = statistics.median(r["decision_ms"] for r in rs)
        print(f"| {label} | {strategy} | {coll} | {p} | {rs[0].get('configs', '')} | {len(rs)} | "
              f"{runs:.1f} ({search:.1f}+{final:.1f}) | {secs:.1f} | {rmean:.2f} | {rmed:.2f} | "
              f"{rmax:.1f} | {ttt} ({never}) | {dms:.1f} |")


if __name__ == "__main__":
    main()
