#!/usr/bin/env python3
"""The whole-cluster cost-regret frontier (bench/README.md "The cost target against the search
budget"): colltune-bench-cluster's budgeted bo-cluster row (c) at several search budgets, with
every listed size verified and with the largest listed size left to the model's gate, on both
simulated clusters and all four collectives. One table row per (cluster, collective, setting),
seed means, against per-size bo (a) and the nearest-size extension (b) at (c)'s cost.

usage: cost_frontier.py BUILD_DIR CACHE_DIR BUDGETS [SEEDS] [--total] [--jsonl FILE]
                        [--first-seed N] [--verified-only] [--settings JSON]
                        [--profile NAME SIZES PPN TOP]... [--oracle-nominees]
                        [--final-repeats N] [--no-comm-lend] [--gated-only]
                        [--min-confidence X] [--remeasure]
  e.g. cost_frontier.py build OUT/cache 0.25,0.20,0.15 5
BUDGETS: --cluster-budget values (fractions of (a)'s search node-seconds); with --total,
--total-budget values instead (a budget for the whole campaign, search and final phases, as a
fraction of (a)'s node-seconds; every listed size verified, bench/README.md "A budget for the
whole campaign"). --jsonl FILE: every per-seed JSON line of the bench (one per seed and method),
with the row's profile, collective, budget and top size added, for per-seed comparisons.
--first-seed N: seeds N .. N + SEEDS - 1 (default 1); seeds 11 and up were not used to choose
any change, so two builds compared there are compared without the bias of the seeds 1-10 the
kept variants were chosen on (bench/README.md "The batch check on seeds no change was chosen
on"). --verified-only: without --total, only the rows with every listed size verified (the
default mode as a campaign runs it), not also those with the largest size gated. --settings
JSON: bo-cluster's settings (the bench's --settings), e.g. '{"cost_model_nodes": false}' for an
ablation in the same build. --profile NAME SIZES PPN TOP (repeatable): run these simulated
clusters instead of pise and hpc64x128, e.g. `--profile ethernet16 2,4,8,16,32,64,128,256 16
128` (TOP: the size above which the gated rows leave sizes unverified); the held-out profiles of
bench/README.md "Held-out clusters". --oracle-nominees (not with --total): (c)'s final phases
test the landscape's optimum at every message size instead of the model's picks (the bench's
--oracle-nominees): the regret the final phase leaves with a perfect model (bench/README.md "What
a perfect model would leave"). --final-repeats N: the final phases' runs of each configuration
(the bench's --final-repeats, the spec's final_repeats; default 3) for every method.
--no-comm-lend: (c)'s final phases do not pool the variance of the neighbouring comm sizes'
pairs (the bench's --no-comm-lend; docs/final-choice.md "Neighbouring communicator sizes").
--gated-only (not with --total or --verified-only): only the rows with the sizes above TOP left
to the model's gate; with TOP 1 every listed size is gated and no final phase runs
(bench/README.md "The third target against the promise"). --min-confidence X: the gate of those
cells (the bench's --min-confidence; its default 0.7, a campaign's 0.8). --remeasure (with
--gated-only): the gated sizes' picks are re-measured as a campaign's rules stage re-measures
its file, those proven slower go back to the default, and its runs count in (c)'s cost (the
bench's --remeasure). The bench is run as an argv vector, never through a shell.
"""
import json
import os
import statistics
import subprocess
import sys

# profile -> (listed comm sizes, ranks per node, the size above which --unverified-above
# leaves sizes unverified: the largest listed size only)
PROFILES = {
    "hpc64x128": ("2,4,16,64,256,1024", "128", "256"),
    "pise": ("2,4,8,16,32,64,128,256,576", "48", "256"),
}
COLLECTIVES = ["allreduce", "reduce", "bcast", "gather"]
A = "per-size bo (a)"
B = "nearest (b), equal cost, smallest first"
C = "bo-cluster (c), node-s budget"
C_TOTAL = "bo-cluster (c), total node-s budget"


def mean_of(rows, method, key):
    values = [r[key] for r in rows if r["method"] == method]
    return statistics.mean(values) if values else float("nan")


def take_option(args, flag, missing):
    """Removes `flag VALUE` from args and returns VALUE (None without the flag); exits with
    `missing` when the value is not there."""
    if flag not in args:
        return None
    at = args.index(flag)
    if at + 1 >= len(args):
        sys.exit(missing)
    value = args[at + 1]
    del args[at:at + 2]
    return value


def take_profiles(args):
    """Removes every `--profile NAME SIZES PPN TOP` from args; {NAME: (SIZES, PPN, TOP)}, or
    PROFILES without one."""
    profiles = {}
    while "--profile" in args:
        at = args.index("--profile")
        if at + 4 >= len(args):
            sys.exit("--profile needs NAME SIZES PPN TOP")
        name, sizes, ppn, top = args[at + 1:at + 5]
        profiles[name] = (sizes, ppn, top)
        del args[at:at + 5]
    return profiles or PROFILES


def main():
    args = sys.argv[1:]
    profiles = take_profiles(args)
    jsonl_path = take_option(args, "--jsonl", __doc__)
    jsonl = open(jsonl_path, "w", encoding="utf-8") if jsonl_path else None
    first_seed = take_option(args, "--first-seed", "--first-seed needs a number") or "1"
    settings = take_option(args, "--settings", "--settings needs a JSON object")
    final_repeats = take_option(args, "--final-repeats", "--final-repeats needs a number")
    min_confidence = take_option(args, "--min-confidence", "--min-confidence needs a number")
    total = "--total" in args
    verified_only = "--verified-only" in args
    oracle = "--oracle-nominees" in args
    gated_only = "--gated-only" in args
    remeasure = "--remeasure" in args
    if remeasure and not gated_only:
        sys.exit("--remeasure re-measures the gated sizes: only with --gated-only")
    if gated_only and (total or verified_only):
        sys.exit("--gated-only is for the default mode's gated rows: not with --total or "
                 "--verified-only")
    if oracle and total:
        sys.exit("--oracle-nominees is for the default mode: a whole campaign's plan of the "
                 "looks is made from the model's nominees")
    no_lend = "--no-comm-lend" in args
    args = [a for a in args
            if a not in ("--total", "--verified-only", "--oracle-nominees", "--no-comm-lend",
                         "--gated-only", "--remeasure")]
    if len(args) < 3:
        sys.exit(__doc__)
    build, cache, budgets = args[0], args[1], args[2].split(",")
    os.makedirs(cache, exist_ok=True)
    seeds = args[3] if len(args) > 3 else "5"
    c_method = C_TOTAL if total else C
    bench = f"{build}/bench/optimizer/colltune-bench-cluster"
    print("| cluster | collective | " + ("total budget" if total else "search budget")
          + " | top size | (a) regret %, node-s "
          "| (c) regret %, x (a) | (c) node-s, % of (a) (search) | (b)/(c) "
          + ("| nominated cells left untested |" if total else "| unverified cells > 5 % slower |")
          + " cells > 5 % slower than the default, (c) / (b) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for profile, (sizes, ppn, top) in profiles.items():
        for collective in COLLECTIVES:
            for budget in budgets:
                rows_of = ("0",) if total or verified_only else (top,) if gated_only else ("0", top)
                for unverified in rows_of:
                    argv = [bench, "--sim", profile, "--collective", collective,
                            "--comm-sizes", sizes, "--ppn", ppn, "--seeds", seeds,
                            "--first-seed", first_seed,
                            "--cache-dir", cache,
                            "--total-budget" if total else "--cluster-budget", budget,
                            "--unverified-above", unverified]
                    if settings is not None:
                        argv += ["--settings", settings]
                    if oracle:
                        argv.append("--oracle-nominees")
                    if no_lend:
                        argv.append("--no-comm-lend")
                    if final_repeats is not None:
                        argv += ["--final-repeats", final_repeats]
                    if min_confidence is not None:
                        argv += ["--min-confidence", min_confidence]
                    if remeasure:
                        argv.append("--remeasure")
                    done = subprocess.run(argv, capture_output=True, text=True)
                    if done.returncode != 0:
                        sys.exit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr[-500:]}")
                    rows = [json.loads(line) for line in done.stderr.splitlines()
                            if line.startswith("{")]
                    if jsonl:
                        for r in rows:
                            jsonl.write(json.dumps(dict(r, profile=profile, collective=collective,
                                                        budget=budget, unverified_above=unverified,
                                                        min_confidence=min_confidence or "0.7"))
                                        + "\n")
                        jsonl.flush()
                    a_regret, a_ns = mean_of(rows, A, "regret_mean"), mean_of(rows, A, "node_seconds")
                    b_regret = mean_of(rows, B, "regret_mean")
                    c_regret = mean_of(rows, c_method, "regret_mean")
                    c_ns = mean_of(rows, c_method, "node_seconds")
                    c_search = mean_of(rows, c_method, "search_node_seconds")
                    mine = [r for r in rows if r["method"] == c_method]
                    if oracle and not all(r.get("oracle_nominees") for r in mine):
                        sys.exit(f"{' '.join(argv)}: (c)'s rows were not run with oracle nominees")
                    if remeasure and not all(r.get("remeasure") for r in mine):
                        sys.exit(f"{' '.join(argv)}: (c)'s rows were not re-measured")
                    if any(r.get("comm_lend", True) == no_lend for r in mine):
                        sys.exit(f"{' '.join(argv)}: (c)'s rows do not say the comm sizes' "
                                 f"pooling is {'off' if no_lend else 'on'}")
                    for r in mine:  # every slower cell was tested (proven) or gated
                        if r["slower5_cells"] != (r.get("proven_slower5_cells", 0)
                                                  + r.get("unverified_slower_cells", 0)):
                            sys.exit(f"{' '.join(argv)}: seed {r['seed']}: (c)'s cells > 5 % "
                                     "slower than the default do not add up")
                    c_slower = sum(r["slower5_cells"] for r in mine)
                    b_slower = sum(r["slower5_cells"] for r in rows if r["method"] == B)
                    if total:  # nominated cells the budget could not pay to test
                        cells = sum(r.get("nominated_cells", 0) for r in mine)
                        slower = sum(r.get("untested_cells", 0) for r in mine)
                    else:
                        cells = sum(r.get("unverified_cells", 0) for r in mine)
                        slower = sum(r.get("unverified_slower_cells", 0) for r in mine)
                    print(f"| {profile} | {collective} | {budget} "
                          f"| {'verified' if unverified == '0' else 'gated'} "
                          f"| {100 * a_regret:.2f}, {a_ns:.0f} "
                          f"| {100 * c_regret:.2f}, {c_regret / a_regret:.2f}x "
                          f"| {100 * c_ns / a_ns:.1f} % ({100 * c_search / a_ns:.1f} %) "
                          f"| {b_regret / c_regret:.1f}x | {slower} of {cells} "
                          f"| {c_slower} / {b_slower} |", flush=True)


if __name__ == "__main__":
    main()
