#!/usr/bin/env python3
"""SYNTHETIC landscape generator: latencies for the full Open MPI 4.1.4 coll_tuned knob space
(algorithm x segment size x chain fan-out), written in the landscape format read by
colltune-bench-optimizer. Not measured data: a cost model shaped like what this machine shows
(docs/reference/osu-benchmarks.md §5: 4 ranks on 2 cores; small segments 5-20x slower;
per-size run-to-run CV from the measured table), meant for developing and testing the optimiser
until measured landscapes exist.

Model, per (algorithm, segment size, fan-out, message size m, P ranks):
  - a LogGP-like cost: alpha per message, beta per byte, gamma per segment per hop, delta per
    reduced byte (reduce); tree shapes (chain/pipeline/binary/binomial/k-nomial/scatter-
    allgather/ring...) set the number of hops and of sends per node;
  - P > cores (oversubscription) scales alpha and gamma up;
  - a smooth random per-algorithm distortion (about +-15 %, correlated across sizes), so the
    landscape is not exactly the model;
  - the default decision (id 0) follows the 4.1.4 fixed rules for bcast/reduce (segsize 0);
  - repeats: multiplicative log-normal noise with the per-size CV of
    docs/reference/osu-benchmarks.md §5.2 (-i 1000 column, interpolated on log2 size), or
    --noise low (2-5 %), plus 3 % outliers x1.3-1.8.
The noiseless model value is in the extra column model_latency_us (first repeat only), for
analysis; the benchmark ignores it and scores against the median of the repeats.
The search space is the one colltune's SearchSpace builds for 4.1.4 at P (fan-outs clamped to
P-1, chain fan-out 1 dropped as it equals pipeline, segmented ring with segment 0 = ring).

Example (the committed synthetic files):
  python3 bench/optimizer/synth_landscape.py --collective bcast --comm-size 4 --seed 1 \
      --output bench/data/synthetic-bcast-p4.csv
Standard library only; deterministic for a seed.
"""
import argparse
import bisect
import csv
import math
import random

SEGS = [0, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144]
FANOUTS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32]
# docs/reference/osu-benchmarks.md §5.2, OMB 7.0 at 4 ranks on 2 cores, -i 1000 -x 200: CV per size.
OSU_CV = [(4, .466), (64, .375), (256, .382), (512, .296), (1024, .296), (4096, .139),
          (8192, .071), (16384, .038), (32768, .033), (65536, .076), (131072, .065),
          (262144, .10), (524288, .041), (1048576, .20)]

ALGORITHMS = {
    "bcast": {1: "linear", 2: "chain", 3: "pipeline", 4: "split_bintree", 5: "bintree",
              6: "binomial", 7: "knomial", 8: "scatter_allgather", 9: "scatter_allgather_ring"},
    "reduce": {1: "linear", 2: "chain", 3: "pipeline", 4: "binary", 5: "binomial",
               6: "in_order_binary", 7: "rabenseifner"},
    "allreduce": {1: "basic_linear", 2: "nonoverlapping", 3: "recursive_doubling", 4: "ring",
                  5: "segmented_ring", 6: "rabenseifner"},
    "gather": {1: "basic_linear", 2: "binomial", 3: "linear_sync"},
}
USES_SEG = {"bcast": {2, 3, 4, 5, 6, 7}, "reduce": {2, 3, 4, 5, 6}, "allreduce": {5},
            "gather": {3}}
USES_FAN = {"bcast": {2}, "reduce": {2}, "allreduce": set(), "gather": set()}


def space(coll, p):
    pts = {(0, 0, 0)}
    for alg in ALGORITHMS[coll]:
        segs = SEGS if alg in USES_SEG[coll] else [0]
        fans = FANOUTS if alg in USES_FAN[coll] else [0]
        for s in segs:
            for f in fans:
                if f:
                    f = min(f, p - 1, 32)
                    if f <= 1:
                        alg2, f = 3, 0  # chain with one chain is the pipeline
                        pts.add((alg2, s, 0))
                        continue
                if coll == "allreduce" and alg == 5 and s == 0:
                    pts.add((4, 0, 0))
                    continue
                pts.add((alg, s, f))
    return sorted(pts)


def sizes_for(coll):
    first = 4 if coll in ("reduce", "allreduce") else 1
    out, s = [], first
    while s <= 1 << 20:
        out.append(s)
        s *= 2
    return out


def cv_at(size, noise):
    if noise == "low":
        return 0.02 + 0.03 * abs(math.log2(size) - 12) / 10
    xs = [math.log2(s) for s, _ in OSU_CV]
    x = math.log2(max(size, 4))
    i = bisect.bisect_left(xs, x)
    if i == 0:
        return OSU_CV[0][1]
    if i >= len(xs):
        return OSU_CV[-1][1]
    t = (x - xs[i - 1]) / (xs[i] - xs[i - 1])
    return OSU_CV[i - 1][1] * (1 - t) + OSU_CV[i][1] * t


class Model:
    def __init__(self, coll, p, cores, rng):
        self.coll, self.p = coll, p
        over = max(1.0, p / cores)
        self.alpha = 0.15 * over          # us per message
        self.beta = 7.0e-5 * over ** 0.5  # us per byte (~10 GB/s effective, shared memory)
        self.gamma = 1.5 * over           # us per extra segment per send
        self.delta = 2.0e-5               # us per reduced byte
        self.contention = 0.5 * (over - 1.0) if over > 1 else 0.1
        # Smooth distortion per algorithm: a few random sinusoids on log2 size.
        self.warp = {}
        for alg in list(ALGORITHMS[coll]) + [0]:
            self.warp[alg] = [(rng.uniform(0.3, 1.2), rng.uniform(0, 2 * math.pi),
                               rng.uniform(0.03, 0.08)) for _ in range(3)]
        self.seg_warp = rng.uniform(0.8, 1.25)

    def distortion(self, alg, m):
        x = math.log2(max(m, 1))
        return math.exp(sum(a * math.sin(f * x + ph) for f, ph, a in self.warp[alg]))

    def step(self, nbytes, nseg):
        # One send of one segment.
        return self.alpha + nbytes * self.beta + (self.gamma * self.seg_warp if nseg > 1 else 0.0)

    def tree(self, m, seg, k_root, k_inner, depth, reduce=False):
        """Segments flow down a tree: the root sends each segment to k_root children, inner
        nodes to k_inner; the pipeline needs depth - 1 more stages to drain."""
        nseg = max(1, math.ceil(m / seg)) if seg > 0 else 1
        sbytes = m / nseg
        t = self.step(sbytes, nseg) + (sbytes * self.delta * k_root if reduce else 0.0)
        busy = max(k_root, k_inner)
        total = nseg * busy * t + (depth - 1) * max(1, k_inner) * t
        # Ranks share cores: concurrent transfers of different nodes slow each other down.
        sends = nseg * (self.p - 1)
        return total + self.contention * sends * t / self.p

    def bcast(self, alg, seg, fan, m):
        p = self.p
        lg = math.ceil(math.log2(p))
        if alg == 1:
            return self.tree(m, 0, p - 1, 0, 1) * 0.9
        if alg in (2, 3):
            chains = max(1, min(fan if alg == 2 else 1, p - 1))
            return self.tree(m, seg, chains, 1, math.ceil((p - 1) / chains))
        if alg == 4:
            half = max(1, m // 2)
            return self.tree(half, seg, 2, 2, max(1, lg - 1)) + self.step(half, 1)
        if alg == 5:
            return self.tree(m, seg, 2, 2, max(1, lg - 1)) * 1.05
        if alg == 6:
            return self.tree(m, seg, lg, max(1, lg - 1), lg)
        if alg == 7:
            depth = max(1, math.ceil(math.log(p, 4)))
            return self.tree(m, seg, min(p - 1, 3 * depth), 3, depth) * 1.03
        if alg in (8, 9):
            if m < p:
                return self.bcast(1, 0, 0, m)
            scatter = lg * self.alpha + m * self.beta * (p - 1) / p
            if alg == 8:
                gather = lg * self.alpha + m * self.beta * (p - 1) / p
            else:
                gather = (p - 1) * self.alpha + m * self.beta * (p - 1) / p
            return 2.2 * (scatter + gather) + 6 * self.alpha
        raise ValueError(alg)

    def reduce(self, alg, seg, fan, m):
        p = self.p
        lg = math.ceil(math.log2(p))
        if alg == 1:
            return self.tree(m, 0, p - 1, 0, 1, reduce=True)
        if alg in (2, 3):
            chains = max(1, min(fan if alg == 2 else 1, p - 1))
            return self.tree(m, seg, chains, 1, math.ceil((p - 1) / chains), reduce=True)
        if alg in (4, 6):
            return self.tree(m, seg, 2, 2, max(1, lg - 1), reduce=True) * (1.08 if alg == 6 else 1.0)
        if alg == 5:
            return self.tree(m, seg, lg, max(1, lg - 1), lg, reduce=True)
        if alg == 7:
            if m / 4 < p:
                return self.reduce(1, 0, 0, m)
            return (2 * lg * self.alpha + 2 * m * (self.beta + self.delta / 2) * (p - 1) / p
                    + 4 * self.alpha)
        raise ValueError(alg)

    def allreduce(self, alg, seg, fan, m):
        p = self.p
        lg = math.ceil(math.log2(p))
        if alg == 1:
            return self.reduce(1, 0, 0, m) + self.bcast(1, 0, 0, m)
        if alg == 2:
            return self.reduce(5, 0, 0, m) + self.bcast(6, 0, 0, m)
        if alg == 3:
            return lg * (self.alpha + m * (self.beta + self.delta)) * 1.1
        if alg in (4, 5):
            if m / 4 < p:
                return self.allreduce(3, 0, 0, m)
            chunk = m / p
            if alg == 5 and seg > 0 and seg < chunk:
                nseg = math.ceil(chunk / seg)
                return 2 * (p - 1) * (nseg * self.alpha + chunk * self.beta) + m * self.delta + nseg * self.gamma
            return 2 * (p - 1) * (self.alpha + chunk * self.beta) + m * self.delta
        if alg == 6:
            if m / 4 < p:
                return self.allreduce(1, 0, 0, m)
            return 2 * lg * self.alpha + 2 * m * self.beta * (p - 1) / p + m * self.delta + 2 * self.alpha
        raise ValueError(alg)

    def gather(self, alg, seg, fan, m):
        p = self.p
        lg = math.ceil(math.log2(p))
        if alg == 1:
            return (p - 1) * (self.alpha + m * self.beta)
        if alg == 2:
            return lg * self.alpha + (p - 1) * m * self.beta * 1.2
        if alg == 3:
            first = min(seg, m) if seg > 0 else m
            return (p - 1) * (2 * self.alpha + m * self.beta) + (self.gamma if 0 < first < m else 0.0)
        raise ValueError(alg)

    def default_alg(self, m):
        p = self.p
        if self.coll == "bcast":
            if p < 4:
                rules = [(32, 3), (256, 5), (512, 3), (1024, 7), (32768, 1), (131072, 5),
                         (262144, 2), (524288, 1), (1048576, 6)]
                last = 5
            elif p < 8:
                rules, last = [(64, 5), (128, 6), (2048, 5), (8192, 6), (1048576, 1)], 2
            elif p < 16:
                rules, last = [(8, 7), (64, 5), (4096, 7), (16384, 5), (32768, 6)], 1
            elif p < 32:
                rules, last = [(4096, 7), (1048576, 6)], 8
            elif p < 64:
                rules, last = [(2048, 6)], 7
            else:
                rules, last = [], 7
        elif self.coll == "reduce":
            if p < 4:
                rules = [(8, 7), (16, 4), (32, 3), (262144, 1), (524288, 3), (1048576, 2)]
                last = 3
            elif p < 8:
                rules = [(4096, 4), (65536, 2), (262144, 5), (524288, 1), (1048576, 5)]
                last = 1
            elif p < 16:
                rules, last = [(8192, 4)], 5
            else:
                rules, last = [(4096, 4)], 5
        elif self.coll == "allreduce":
            if p < 8:
                rules, last = [(16, 4), (8192, 3)], 6
            else:
                rules, last = [(8192, 3)], 6
        else:
            rules, last = ([(1024, 2), (8192, 1), (32768, 2), (262144, 1)], 3) if p < 8 else ([], 2)
        for bound, alg in rules:
            if m < bound:
                return alg
        return last

    def latency(self, alg, seg, fan, m):
        f = getattr(self, self.coll)
        if alg == 0:
            a = self.default_alg(m)
            # The fixed rules pass fan-out 0 (chain -> 1 chain) and no segmentation.
            return f(a, 0, 1, m) * self.distortion(a, m)
        return f(alg, seg, fan, m) * self.distortion(alg, m)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--collective", default="bcast", choices=sorted(ALGORITHMS))
    ap.add_argument("--comm-size", type=int, default=4)
    ap.add_argument("--cores", type=int, default=2, help="cores the ranks share (oversubscription)")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--noise", default="osu", choices=["osu", "low"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--output", required=True)
    args = ap.parse_args()
    rng = random.Random(args.seed * 7919 + args.comm_size)
    model = Model(args.collective, args.comm_size, args.cores, rng)
    rows = 0
    with open(args.output, "w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["collective", "comm_size", "algorithm", "segsize", "fanout", "msg_size",
                      "latency_us", "repeat", "model_latency_us"])
        for alg, seg, fan in space(args.collective, args.comm_size):
            for m in sizes_for(args.collective):
                base = model.latency(alg, seg, fan, m)
                cv = cv_at(m, args.noise)
                for r in range(args.repeats):
                    x = base * math.exp(rng.gauss(0.0, cv) - 0.5 * cv * cv)
                    if rng.random() < 0.03:
                        x *= rng.uniform(1.3, 1.8)
                    out.writerow([args.collective, args.comm_size, alg, seg, fan, m,
                                  f"{x:.4g}", r, f"{base:.4g}" if r == 0 else ""])
                    rows += 1
    print(f"wrote {rows} rows ({len(space(args.collective, args.comm_size))} configurations) "
          f"to {args.output}")


if __name__ == "__main__":
    main()
