#!/usr/bin/env python3
"""Summarise colltune-bench-optimizer JSON lines (stdin or files) as a Markdown table: one row
per (label, strategy, collective, comm_size), averaged over seeds.

Columns: seeds; configs (space size); runs (mean; search + final re-measurements);
benchmark seconds (mean); regret over sizes (mean over seeds of the per-seed mean, of the
per-seed median, and the worst per-seed max), in %; runs_to_target (median over seeds, and how
many seeds never reached it); decision ms (median over seeds of each seed's median).
A line may carry a "label" key (add one with --label) to tell settings apart.
--compact: one row per (collective, comm_size, truth) comparing the suite's labels (run_suite.sh):
exhaustive 1 pass vs bo vs bo +engine final vs bo-per-size vs random at bo's cost.
--targets: the issue's three targets per (collective, comm_size, truth), met or missed.
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
    ap.add_argument("--compact", action="store_true", help="the README's comparison table")
    ap.add_argument("--name", default="", help="--compact: landscape name put before each row")
    ap.add_argument("--no-header", action="store_true", help="--compact/--targets: rows only")
    ap.add_argument("--targets", action="store_true",
                    help="the issue's three targets per (collective, P, truth), met or missed")
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
    if args.targets:
        targets(groups, args.name, not args.no_header)
        return
    if args.compact:
        compact(groups, args.name, not args.no_header)
        return
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


def suite_rows(groups):
    """(collective, P, truth) -> {(kind, strategy): lines}, kind from run_suite.sh's labels."""
    rows = OrderedDict()
    for (label, strategy, coll, p), rs in groups.items():
        truth = "held-out" if label.startswith("held-out") else "all"
        kind = label.split(" ", 2)[-1] if label not in ("all repeats", "held-out") else ""
        if label.startswith("all repeats"):
            kind = label[len("all repeats"):].strip()
        elif label.startswith("held-out"):
            kind = label[len("held-out"):].strip()
        rows.setdefault((coll, p, truth), {})[(kind, strategy)] = rs
    return rows


def targets(groups, name="", header=True):
    """Per (collective, P, truth) with 40+ configurations, the three targets of the issue on
    mean regret (mean over seeds): (1) bo at <= 20 % of one exhaustive pass's runs, regret no
    worse; (2) bo-per-size needs >= 20x bo's runs, and bo's regret is equal or better; (3) bo
    no worse than random at bo's cost. Tally at the end."""
    def mean(rs, key):
        return statistics.mean(r[key] for r in rs)

    if header:
        print("| landscape | configs | truth | (1) vs exhaustive 1 pass | (2) vs bo-per-size | "
              "(3) vs random at equal cost |")
        print("|---|---|---|---|---|---|")
    met = [0, 0, 0]
    total = 0
    for (coll, p, truth), k in suite_rows(groups).items():
        ex, bo = k.get(("exhaustive 1 pass", "exhaustive")), k.get(("", "bo"))
        ps, rnd = k.get(("", "bo-per-size")), k.get(("at bo cost", "random"))
        if not ex or not bo or not ps or not rnd or ex[0].get("configs", 0) < 40:
            continue
        total += 1
        b, e, q, r = (100 * mean(x, "regret_mean") for x in (bo, ex, ps, rnd))
        share = mean(bo, "runs") / mean(ex, "runs")
        factor = mean(ps, "runs") / mean(bo, "runs")
        ok = [share <= 0.2 + 1e-9 and b <= e, factor >= 20 and b <= q, b <= r]
        for i, v in enumerate(ok):
            met[i] += v
        word = lambda v: "**met**" if v else "missed"
        print(f"| {name} {coll} P={p} | {ex[0].get('configs', '')} | {truth} | "
              f"{word(ok[0])} {b:.2f} {'<=' if b <= e else '>'} {e:.2f} @ {100 * share:.0f} % | "
              f"{word(ok[1])} {factor:.1f}x, {b:.2f} {'<=' if b <= q else '>'} {q:.2f} | "
              f"{word(ok[2])} {b:.2f} {'<=' if b <= r else '>'} {r:.2f} |".replace("|  ", "| "))
    if header:
        print(f"\nmet: (1) {met[0]}/{total}, (2) {met[1]}/{total}, (3) {met[2]}/{total}")


def compact(groups, name="", header=True):
    """One row per (truth, collective, P): the figures the issue's targets are about."""
    rows = suite_rows(groups)

    def mean(rs, key):
        return statistics.mean(r[key] for r in rs)

    def fig(rs):
        return (100 * mean(rs, "regret_mean"), 100 * mean(rs, "regret_median"),
                100 * max(r["regret_max"] for r in rs), mean(rs, "runs"),
                mean(rs, "benchmark_seconds"))

    def target(rs):
        reached = [r["runs_to_target"] for r in rs if r["runs_to_target"] is not None]
        return f"{statistics.median(reached):.0f} ({len(rs) - len(reached)})" if reached else f"- ({len(rs)})"

    if header:
        print("| landscape | configs | truth | exhaustive 1 pass: regret mean/median/max @ runs, s | "
          "**bo**: regret mean/median/max @ runs (% of exh.), s; to target | "
          "bo +engine final: regret @ runs | bo-per-size: regret mean/median/max @ runs (x bo's) | "
          "random at bo's cost: regret |")
        print("|---|---|---|---|---|---|---|---|")
    for (coll, p, truth), k in rows.items():
        ex = k.get(("exhaustive 1 pass", "exhaustive"))
        bo = k.get(("", "bo"))
        if not ex or not bo:
            continue
        e, b = fig(ex), fig(bo)
        cells = [f"{name} {coll} P={p}".strip(), str(ex[0].get("configs", "")), truth,
                 f"{e[0]:.2f}/{e[1]:.2f}/{e[2]:.0f} @ {e[3]:.0f}, {e[4]:.0f} s",
                 f"{b[0]:.2f}/{b[1]:.2f}/{b[2]:.0f} @ {b[3]:.1f} ({100 * b[3] / e[3]:.0f} %), "
                 f"{b[4]:.0f} s; {target(bo)}"]
        fin = k.get(("+engine final", "bo"))
        cells.append(f"{fig(fin)[0]:.2f} @ {fig(fin)[3]:.1f}" if fin else "")
        ps = k.get(("", "bo-per-size"))
        if ps:
            q = fig(ps)
            cells.append(f"{q[0]:.2f}/{q[1]:.2f}/{q[2]:.0f} @ {q[3]:.0f} ({q[3] / b[3]:.0f}x)")
        else:
            cells.append("")
        rnd = k.get(("at bo cost", "random"))
        cells.append(f"{fig(rnd)[0]:.2f}" if rnd else "")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
