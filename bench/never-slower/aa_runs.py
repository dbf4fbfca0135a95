#!/usr/bin/env python3
"""Runs one OSU command line N times back to back and writes every run's per-size average
latency as JSON, for colltune-bench-aa (bench/README.md "Never ship a slower rule": the paired
test on two runs of the same code). The command is an argv vector, never a shell line.

usage: aa_runs.py --ranks 4 --runs 240 --osu BUILD/libexec/colltune/osu/osu_reduce --out p4.json
"""
import argparse
import json
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--osu", required=True, help="an OSU collective benchmark binary")
    ap.add_argument("--sizes", default="4:4096")
    ap.add_argument("--iterations", default="100")
    ap.add_argument("--warmup", default="10")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    argv = ["mpirun", "-np", str(a.ranks), "--oversubscribe", "--mca", "coll", "^hcoll",
            "--mca", "coll_tuned_use_dynamic_rules", "1", "--mca", "mpi_yield_when_idle", "1",
            a.osu, "-m", a.sizes, "-i", a.iterations, "-x", a.warmup, "-f"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    runs = []
    for i in range(a.runs):
        r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
        if r.returncode != 0:
            sys.exit(f"run {i} failed ({r.returncode}): {r.stderr.strip()[:500]}")
        rows = {}
        for line in r.stdout.splitlines():
            f = line.split()
            if len(f) >= 2 and f[0].isdigit():
                rows[f[0]] = float(f[1])
        if not rows:
            sys.exit(f"run {i}: no OSU rows in its output")
        runs.append(rows)
    with open(a.out, "w") as out:
        json.dump(runs, out)


if __name__ == "__main__":
    main()
