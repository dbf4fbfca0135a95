#!/usr/bin/env python3
"""SYNTHETIC family of reduce landscapes (issue #15, "single contexts first"): random
landscapes over the full Open MPI 4.1.4 reduce knob space whose optima are chains at one
particular fan-out or segmented trees at one particular segment size, under heavy-tailed
run-to-run noise. Drawn from the priors below, NOT fitted to bench/data: they are meant to
differ from the measured landscapes, so that a change of the optimizer judged on them is not a
change tuned on our own files.

Per landscape (one seed, one comm size P):
  - space: linear, chain at every fan-out 2..P-1, pipeline, binary, binomial, in-order binary
    (each at every segment size of --segments: unsegmented + powers of two) and rabenseifner,
    plus the default (id 0): 87 configurations at P=4 (14 segment sizes), 91 at P=6 (11);
  - base cost: the LogGP-like tree model of synth_landscape.py (same module) with its
    per-message, per-byte and per-segment costs each scaled by a log-uniform factor in
    [1/2, 2] and its own smooth per-algorithm distortion;
  - features (1-3, kind drawn at random): "chain": a chain at one fan-out f* (uniform in
    2..P-1) and segment sizes near s* becomes the fastest configuration over a band of
    3-9 message sizes, by a margin of 10-35 % below the best other configuration; its
    neighbouring fan-outs get nothing (narrow in fan-out). "segtree": one of pipeline /
    binary / binomial / in-order binary at one segment size s* <= 128 KiB (with a Gaussian
    fall-off of 0.5-1.5 octaves in log2 segment size) becomes the fastest over a band of 3-9
    sizes from >= 2 s*, margin 10-35 %; the chain feature falls off in segment size alike;
  - --shared-segment: a segmented-tree feature also makes the other three trees faster at the
    same segment size and sizes, by 30-90 % of its margin (one segment size that suits the
    machine suits every tree), so that measuring one tree tells about the others;
  - noise: per landscape a CV curve over log2 size (log-uniform 5-30 % at a few knots,
    interpolated); each repeat multiplicative log-normal with that CV, and with probability
    2-6 % (per landscape) an outlier x2-3; --repeats (5) per point.
Output: the landscape CSV format of colltune-bench-optimizer, plus model_latency_us (the
noiseless value, first repeat only; the benchmark ignores it).

  python3 bench/optimizer/reduce_family.py --comm-size 4 --seed 1 --output /tmp/fam/p4-s1.csv
  python3 bench/optimizer/reduce_family.py --comm-size 6 --count 20 --output-dir /tmp/fam
Standard library only; deterministic for (seed, comm size).
"""
import argparse
import csv
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import synth_landscape as synth  # noqa: E402

SIZES = [4 << i for i in range(19)]  # 4 B .. 1 MiB
TREES = [3, 4, 5, 6]  # pipeline, binary, binomial, in-order binary


def default_segments(p):
    # 87 configurations at P=4, 91 at P=6 (the space is 84-90).
    if p <= 4:
        return [0] + [1 << k for k in range(8, 22)][:13]
    return [0] + [1 << k for k in range(10, 20)]


def space(p, segments):
    pts = [(0, 0, 0), (1, 0, 0), (7, 0, 0)]
    for s in segments:
        for f in range(2, p):
            pts.append((2, s, f))
        for a in TREES:
            pts.append((a, s, 0))
    return sorted(set(pts))


def draw_landscape(p, seed, segments, shared=False):
    rng = random.Random(seed * 104729 + p * 31)
    model = synth.Model("reduce", p, 2, rng)
    model.alpha *= math.exp(rng.uniform(-math.log(2), math.log(2)))
    model.beta *= math.exp(rng.uniform(-math.log(2), math.log(2)))
    model.gamma *= math.exp(rng.uniform(-math.log(2), math.log(2)))
    pts = space(p, segments)
    base = {(c, m): model.latency(c[0], c[1], c[2], m) for c in pts for m in SIZES}
    features = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["chain", "segtree"])
        margin = rng.uniform(0.10, 0.35)
        width = rng.uniform(0.5, 1.5)
        if kind == "chain":
            f_star = rng.randint(2, p - 1)
            s_star = rng.choice(segments)
            lo = rng.randrange(0, len(SIZES) - 3)
            hi = min(len(SIZES), lo + rng.randint(3, 9))
            features.append(dict(kind=kind, alg=2, fan=f_star, seg=s_star, lo=lo, hi=hi,
                                 margin=margin, width=width))
        else:
            alg = rng.choice(TREES)
            s_star = rng.choice([s for s in segments[1:] if 8 * s <= SIZES[-1]])
            first = next(i for i, m in enumerate(SIZES) if m >= 2 * s_star)
            lo = rng.randint(first, len(SIZES) - 3)
            hi = min(len(SIZES), lo + rng.randint(3, 9))
            features.append(dict(kind=kind, alg=alg, fan=0, seg=s_star, lo=lo, hi=hi,
                                 margin=margin, width=width))
            if shared:  # the same segment size helps every tree, the others by less
                for other in TREES:
                    if other != alg:
                        features.append(dict(kind="shared", alg=other, fan=0, seg=s_star,
                                             lo=lo, hi=hi, margin=margin *
                                             rng.uniform(0.3, 0.9), width=width))

    def seg_distance(s, s_star):
        if s == s_star:
            return 0.0
        if s == 0 or s_star == 0:
            return 3.0  # unsegmented is far from every segment size
        return abs(math.log2(s) - math.log2(s_star))

    value = dict(base)
    # Shared (weaker) features first, so that each main feature is measured against them.
    for ft in sorted(features, key=lambda f: f["kind"] != "shared"):
        for i in range(ft["lo"], ft["hi"]):
            m = SIZES[i]
            best_other = min(v for (c, mm), v in value.items()
                             if mm == m and not (c[0] == ft["alg"] and c[2] == ft["fan"]))
            target = best_other * (1.0 - ft["margin"])
            for c in pts:
                if c[0] != ft["alg"] or c[2] != ft["fan"]:
                    continue
                w = math.exp(-(seg_distance(c[1], ft["seg"]) / ft["width"]) ** 2)
                if w < 1e-3:
                    continue
                # Geometric blend between the configuration's own value and the target.
                new = math.exp((1 - w) * math.log(value[(c, m)]) + w * math.log(target))
                value[(c, m)] = min(value[(c, m)], new)

    knots = [math.exp(rng.uniform(math.log(0.05), math.log(0.30))) for _ in range(4)]

    def cv_at(m):
        x = (math.log2(m) - 2) / 18 * (len(knots) - 1)
        i = min(int(x), len(knots) - 2)
        t = x - i
        return knots[i] * (1 - t) + knots[i + 1] * t

    p_out = rng.uniform(0.02, 0.06)
    return pts, value, features, cv_at, p_out, rng


def write(path, p, seed, segments, repeats, shared=False):
    pts, value, features, cv_at, p_out, rng = draw_landscape(p, seed, segments, shared)
    with open(path, "w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["collective", "comm_size", "algorithm", "segsize", "fanout", "msg_size",
                      "latency_us", "repeat", "model_latency_us"])
        for c in pts:
            for m in SIZES:
                v = value[(c, m)]
                cv = cv_at(m)
                for r in range(repeats):
                    x = v * math.exp(rng.gauss(0.0, cv) - 0.5 * cv * cv)
                    if rng.random() < p_out:
                        x *= rng.uniform(2.0, 3.0)
                    out.writerow(["reduce", p, c[0], c[1], c[2], m, f"{x:.5g}", r,
                                  f"{v:.5g}" if r == 0 else ""])
    return len(pts), features


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--comm-size", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=1, help="landscapes, seeds seed..seed+count-1")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--shared-segment", action="store_true",
                    help="a segmented-tree feature also speeds up the other trees at the same "
                         "segment size (by 30-90 %% of its margin): structure a model can transfer")
    ap.add_argument("--output", help="file (with --count 1)")
    ap.add_argument("--output-dir", help="directory: reduce-pP-sSEED.csv per landscape")
    args = ap.parse_args()
    if args.comm_size < 3:
        ap.error("--comm-size must be >= 3 (a chain needs a fan-out of 2)")
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    if not args.output and not args.output_dir:
        ap.error("--output or --output-dir is required")
    if args.output and args.count != 1:
        ap.error("--output takes one landscape; use --output-dir with --count")
    segments = default_segments(args.comm_size)
    for seed in range(args.seed, args.seed + args.count):
        path = args.output or os.path.join(args.output_dir,
                                           f"reduce-p{args.comm_size}-s{seed}.csv")
        n, features = write(path, args.comm_size, seed, segments, args.repeats,
                            args.shared_segment)
        features = [ft for ft in features if ft["kind"] != "shared"]
        desc = "; ".join(f"{ft['kind']} alg {ft['alg']} fan {ft['fan']} seg {ft['seg']} "
                         f"sizes {SIZES[ft['lo']]}-{SIZES[ft['hi'] - 1]} -{ft['margin']:.0%}"
                         for ft in features)
        print(f"{path}: {n} configurations; {desc}")


if __name__ == "__main__":
    main()
