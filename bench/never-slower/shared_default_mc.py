#!/usr/bin/env python3
"""Monte Carlo of the paired test's false "faster" rate when the variance of the log-ratio is
pooled over the nominees of a look as well as over neighbouring sizes (bench/README.md, "The
final phase tests the model's picks, not only its confident ones": a throw-away patch, not kept).

Every nominee of a look is paired with the same default run of each round, so the nominees'
log-ratios share the default's noise: pooled over K nominees, the K(R-1) degrees of freedom per
size overstate what the data hold when the default's noise dominates, and the interval is too
narrow. The test is the one of optimizer/paired_test.h at one look: the variance at the middle
of a window of S sizes is max(its own, the window's pooled), the t quantile at the pooled
degrees of freedom and 1 - alpha / looks / 2 (Bonferroni over 3 looks, docs/final-choice.md).
Every nominee is as fast as the default, so each "faster" is a false one; the promise per look
is alpha / looks / 2 (0.0083). Pure Python, no packages; about 30 seconds.

usage: shared_default_mc.py [TRIALS]
"""
import math
import random
import sys


def t_pdf(x, df):
    return math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi) * (
        1 + x * x / df) ** (-(df + 1) / 2)


def t_cdf(x, df, n=4000):  # x >= 0, Simpson's rule from 0
    h = x / n
    s = t_pdf(0, df) + t_pdf(x, df)
    for i in range(1, n):
        s += (4 if i % 2 else 2) * t_pdf(i * h, df)
    return 0.5 + s * h / 3


def t_quantile(p, df):
    lo, hi = 0.0, 50.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
    return lo


def false_faster_rate(nominees, rounds, sd_default, sd_nominee, pooled, trials, sizes=5,
                      alpha=0.05, looks=3, rng=random.Random(1)):
    df = (nominees if pooled else 1) * sizes * (rounds - 1)
    t = t_quantile(1 - alpha / looks / 2, df)
    hits = 0
    for _ in range(trials):
        default = [[rng.gauss(0, sd_default) for _ in range(sizes)] for _ in range(rounds)]
        ss_sum, mean0, own0 = 0.0, 0.0, 0.0
        for k in range(nominees if pooled else 1):
            for s in range(sizes):
                d = [rng.gauss(0, sd_nominee) - default[r][s] for r in range(rounds)]
                m = sum(d) / rounds
                ss = sum((x - m) ** 2 for x in d)
                ss_sum += ss
                if k == 0 and s == sizes // 2:
                    mean0, own0 = m, ss / (rounds - 1)
        half = t * math.sqrt(max(own0, ss_sum / df) / rounds)
        hits += mean0 + half < 0
    return hits / trials


def main():
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 40000
    print(f"promised per look: {0.05 / 3 / 2:.4f}; {trials} trials per cell "
          f"(standard error about {math.sqrt(0.0083 / trials):.4f})")
    print("| default's sd | nominee's sd | nominees | rounds | pooled over sizes | "
          "pooled over sizes and nominees |")
    print("|---|---|---|---|---|---|")
    for sd_default, sd_nominee in ((0.05, 0.05), (0.08, 0.03)):
        for nominees in (3, 9):
            for rounds in (2, 4):
                own = false_faster_rate(nominees, rounds, sd_default, sd_nominee, False, trials)
                pooled = false_faster_rate(nominees, rounds, sd_default, sd_nominee, True, trials)
                print(f"| {sd_default} | {sd_nominee} | {nominees} | {rounds} | {own:.4f} "
                      f"| {pooled:.4f} |", flush=True)


if __name__ == "__main__":
    main()
