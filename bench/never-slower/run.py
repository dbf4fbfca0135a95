#!/usr/bin/env python3
"""Never ship a slower rule: the demo campaign N times, each followed by an independent A/B.

For every run i (seed i):
  1. `colltune tune` with the paired final choice (this tree's binary) -> new.conf
  2. the same campaign with the earlier final phase (--baseline-colltune, e.g. main's binary, or
     this binary with --final-method median) -> old.conf
  3. an independent interleaved A/B with a separate benchmark binary (the bundled OSU-compatible
     one, or a real OMB with --osu-dir): per collective, rounds of
        default | new.conf | old.conf | aa.conf   then the reverse order (A B / B A),
     where aa.conf is a rules file that says "default" everywhere (A/A: the instrument's noise).
Per run it reports: sizes each file changed, changed sizes whose A/B ratio (file / default,
geometric mean over the rounds) is worse than the A/A worst case of that run, the geometric-mean
speed-up over the changed sizes with a 95 % t-interval, and the cost (runs, benchmark seconds)
of the final phase and of the verification phase, read from each campaign's store.

Nothing here is interpolated into a shell: every program runs from an argv list.
"""
import argparse
import json
import math
import os
import sqlite3
import statistics
import subprocess
import sys
import time

COLL_IDS = {"allreduce": 2, "bcast": 7, "gather": 9, "reduce": 11}  # Open MPI's coll ids
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042, 60: 2.000}


def t975(df):
    keys = sorted(T975)
    for k in keys:
        if df <= k:
            return T975[k]
    return 1.96


def parse_osu(text):
    rows = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].isdigit():
            try:
                rows[int(parts[0])] = float(parts[1])
            except ValueError:
                pass
    return rows


def osu_range(text):
    def value(v):
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        return int(v[:-1]) * units[v[-1].upper()] if v[-1].upper() in units else int(v)
    lo, _, hi = text.partition(":")
    return "%d:%d" % (value(lo), value(hi or lo))


def mpirun(args, coll, rules_file):
    argv = ["mpirun", "-np", str(args.np), "--oversubscribe", "--mca", "coll", "^hcoll",
            "--mca", "mpi_yield_when_idle", "1"]
    if rules_file:
        argv += ["--mca", "coll_tuned_use_dynamic_rules", "1",
                 "--mca", "coll_tuned_dynamic_rules_filename", os.path.abspath(rules_file)]
    argv += [os.path.join(args.osu_dir, "osu_" + coll), "-m", osu_range(args.sizes),
             "-i", str(args.ab_iterations), "-x", str(args.ab_warmup)]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    t0 = time.time()
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    if out.returncode != 0:
        raise RuntimeError("benchmark failed: %s\n%s" % (argv, out.stderr[-2000:]))
    return parse_osu(out.stdout), time.time() - t0


def write_aa_file(path, np_, collectives):
    # Classic format: one block per collective at the tuned comm size, "default" (algorithm 0)
    # from size 0 on: Open MPI runs its fixed decision everywhere.
    lines = [str(len(collectives))]
    for c in sorted(collectives, key=lambda c: COLL_IDS[c]):
        lines += [str(COLL_IDS[c]), "1", str(np_), "1", "0 0 0 0"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def changed_sizes(report_path):
    """(collective, msg_size) -> best config, for the sizes the file changes."""
    with open(report_path) as f:
        report = json.load(f)
    out = {}
    for r in report["results"]:
        if r["best"].get("algorithm", 0) != 0:
            out[(r["collective"], r["msg_size"])] = r["best"]
    return out, report


def phase_cost(db_path):
    db = sqlite3.connect(db_path)
    cost = {}
    for purpose, prov in db.execute("SELECT purpose, provenance FROM runs"):
        p = json.loads(prov) if prov else {}
        seconds = max(0.0, p.get("end_time", 0) - p.get("start_time", 0))
        key = ("search" if purpose == "search" else "final" if purpose == "final"
               else "verify")
        c = cost.setdefault(key, [0, 0.0])
        c[0] += 1
        c[1] += seconds
    return {k: {"runs": v[0], "seconds": round(v[1], 1)} for k, v in cost.items()}


def tune(binary, args, seed, folder, name, extra):
    db = os.path.join(folder, name + ".db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    argv = [binary, "tune", "--backend", "local", "--collectives", args.collectives,
            "--np", str(args.np), "--sizes", args.sizes, "--strategy", "bo",
            "--budget", str(args.budget), "--iterations", str(args.iterations),
            "--warmup", str(args.warmup), "--seed", str(seed), "--db", db,
            "--rules-out", os.path.join(folder, name + ".conf"),
            "--report-out", os.path.join(folder, name + ".json")] + extra
    if args.osu_dir_tune:
        argv += ["--osu-dir", args.osu_dir_tune]
    t0 = time.time()
    out = subprocess.run(argv, capture_output=True, text=True, timeout=7200)
    with open(os.path.join(folder, name + ".out"), "w") as f:
        f.write(out.stdout + "\n--- stderr ---\n" + out.stderr)
    return out.returncode, time.time() - t0, db


def geo_interval(logs):
    if not logs:
        return None
    m = statistics.fmean(logs)
    if len(logs) < 2:
        return (math.exp(-m), None, None)
    half = t975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return (math.exp(-m), math.exp(-(m + half)), math.exp(-(m - half)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--colltune", required=True, help="colltune binary with the paired final choice")
    ap.add_argument("--baseline-colltune", default="",
                    help="binary of the earlier final phase (default: --colltune with "
                         "--final-method median)")
    ap.add_argument("--osu-dir", required=True, help="benchmark binaries for the A/B (osu_*)")
    ap.add_argument("--osu-dir-tune", default="", help="benchmark for the campaigns (default bundled)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--collectives", default="bcast,allreduce,reduce,gather")
    ap.add_argument("--sizes", default="4:1M")
    ap.add_argument("--budget", type=int, default=20)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--ab-rounds", type=int, default=4, help="A/B rounds (pairs) per collective")
    ap.add_argument("--ab-iterations", type=int, default=100)
    ap.add_argument("--ab-warmup", type=int, default=10)
    ap.add_argument("--out", required=True, help="output folder")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    collectives = args.collectives.split(",")
    aa = os.path.join(args.out, "aa.conf")
    write_aa_file(aa, args.np, collectives)
    check = subprocess.run([args.colltune, "rules", "validate", aa], capture_output=True, text=True)
    if check.returncode != 0:
        sys.exit("the A/A file does not load: " + check.stdout + check.stderr)

    results = []
    for i in range(1, args.runs + 1):
        folder = os.path.join(args.out, "run%d" % i)
        os.makedirs(folder, exist_ok=True)
        load_before = os.getloadavg()[0]
        arms = {}
        rc, wall, db = tune(args.colltune, args, i, folder, "new", ["--final-method", "paired"])
        arms["new"] = {"rc": rc, "wall_s": round(wall, 1), "db": db}
        if args.baseline_colltune:
            rc, wall, db = tune(args.baseline_colltune, args, i, folder, "old", [])
        else:
            rc, wall, db = tune(args.colltune, args, i, folder, "old", ["--final-method", "median"])
        arms["old"] = {"rc": rc, "wall_s": round(wall, 1), "db": db}
        files = {"new": os.path.join(folder, "new.conf"), "old": os.path.join(folder, "old.conf"),
                 "aa": aa}
        for name in ("new", "old"):
            if not os.path.exists(files[name]):
                files.pop(name)
        # The independent A/B: per collective, rounds of default + every file, A B / B A.
        order = ["default"] + sorted(files)
        lat = {}  # (arm, coll, round) -> {size: us}
        ab_seconds = 0.0
        for coll in collectives:
            for r in range(args.ab_rounds):
                for arm in (order if r % 2 == 0 else list(reversed(order))):
                    rows, secs = mpirun(args, coll, None if arm == "default" else files[arm])
                    ab_seconds += secs
                    lat[(arm, coll, r)] = rows
        # Per (arm, collective, size): mean log-ratio (file / default) over the rounds.
        def mean_logs(arm):
            out = {}
            for coll in collectives:
                sizes = lat[("default", coll, 0)].keys()
                for s in sizes:
                    logs = [math.log(lat[(arm, coll, r)][s] / lat[("default", coll, r)][s])
                            for r in range(args.ab_rounds)
                            if s in lat[(arm, coll, r)] and lat[("default", coll, r)].get(s, 0) > 0]
                    if logs:
                        out[(coll, s)] = statistics.fmean(logs)
            return out
        aa_logs = mean_logs("aa")
        aa_worst = max(aa_logs.values())
        aa_sorted = sorted(aa_logs.values())
        aa_p95 = aa_sorted[min(len(aa_sorted) - 1, int(0.95 * len(aa_sorted)))]
        with open(os.path.join(folder, "ab.json"), "w") as f:
            json.dump([{"arm": a, "collective": c, "round": r, "rows": rows}
                       for (a, c, r), rows in lat.items()], f)
        entry = {"run": i, "load_before": round(load_before, 2), "aa_worst_ratio":
                 round(math.exp(aa_worst), 3), "aa_p95_ratio": round(math.exp(aa_p95), 3),
                 "ab_seconds": round(ab_seconds, 1), "arms": {}}
        for name in ("new", "old"):
            if name not in files:
                entry["arms"][name] = {"error": "no rules file", **arms[name]}
                continue
            changed, report = changed_sizes(os.path.join(folder, name + ".json"))
            logs = mean_logs(name)
            changed_logs = [logs[k] for k in changed if k in logs]
            worse = sorted(["%s %d (%.2fx)" % (k[0], k[1], math.exp(logs[k])) for k in changed
                            if k in logs and logs[k] > aa_worst])
            worse_p95 = sorted(["%s %d (%.2fx)" % (k[0], k[1], math.exp(logs[k])) for k in changed
                                if k in logs and logs[k] > aa_p95])
            slower = sum(1 for k in changed if k in logs and logs[k] > 0)
            gi = geo_interval(changed_logs)
            cost = phase_cost(arms[name]["db"])
            entry["arms"][name] = {
                "rc": arms[name]["rc"], "wall_s": arms[name]["wall_s"],
                "changed": len(changed),
                "worse_than_aa": worse,
                "worse_than_aa_p95": worse_p95,
                "slower_point_estimate": slower,
                "geomean_speedup_changed": None if gi is None else [
                    round(x, 3) if x is not None else None for x in gi],
                "cost": cost,
                "deployable": (report.get("rules") or {}).get("deployable"),
                "reverted": len((report.get("rules") or {}).get("reverted", []) or []),
            }
        results.append(entry)
        print(json.dumps(entry), flush=True)
        with open(os.path.join(args.out, "results.json"), "w") as f:
            json.dump(results, f, indent=1)
    summarize(results)


def summarize(results):
    def med(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None
    print("\nrun  load  A/A worst | new: changed worse geomean [95%]  final runs/s  verify runs/s"
          " | old: changed worse geomean  final runs/s  verify runs/s")
    for e in results:
        line = "%3d %5.2f %8.3f " % (e["run"], e["load_before"], e["aa_worst_ratio"])
        for name in ("new", "old"):
            a = e["arms"].get(name, {})
            if "changed" not in a:
                line += "| %s: no file " % name
                continue
            g = a["geomean_speedup_changed"]
            gtxt = "-" if not g else ("%.3f" % g[0] + (" [%.3f-%.3f]" % (g[1], g[2]) if g[1] else ""))
            f = a["cost"].get("final", {"runs": 0, "seconds": 0})
            v = a["cost"].get("verify", {"runs": 0, "seconds": 0})
            line += "| %s: %2d %2d %s  %d/%.0f  %d/%.0f " % (name, a["changed"], len(a["worse_than_aa"]),
                                                           gtxt, f["runs"], f["seconds"], v["runs"], v["seconds"])
        print(line)
    print("A/A noise floor per run (worst, 95th percentile of per-size A/A ratios): " +
          ", ".join("%.2f/%.2f" % (e["aa_worst_ratio"], e["aa_p95_ratio"]) for e in results))
    for name in ("new", "old"):
        arms = [e["arms"][name] for e in results if "changed" in e["arms"].get(name, {})]
        print("%s: changed sizes slower than the A/A 95th percentile: %d; changed sizes with A/B "
              "ratio > 1 (point estimate): %d of %d; reverted %d; deployable %s" % (
                  name, sum(len(a["worse_than_aa_p95"]) for a in arms),
                  sum(a["slower_point_estimate"] for a in arms), sum(a["changed"] for a in arms),
                  sum(a["reverted"] for a in arms), [a["deployable"] for a in arms]))
    for name in ("new", "old"):
        arms = [e["arms"][name] for e in results if "changed" in e["arms"].get(name, {})]
        print("%s: worse-than-A/A changed sizes total %d over %d runs; median final+verify runs %s, "
              "seconds %s; median changed %s" % (
                  name, sum(len(a["worse_than_aa"]) for a in arms), len(arms),
                  med([a["cost"].get("final", {}).get("runs", 0) + a["cost"].get("verify", {}).get("runs", 0) for a in arms]),
                  med([a["cost"].get("final", {}).get("seconds", 0) + a["cost"].get("verify", {}).get("seconds", 0) for a in arms]),
                  med([a["changed"] for a in arms])))


if __name__ == "__main__":
    main()
