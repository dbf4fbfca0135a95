#!/usr/bin/env python3
"""Convert the ORNL Summit/Peak coll/tuned sweep (landscape_long.csv) to the landscape format
read by colltune-bench-optimizer:

    collective,comm_size,algorithm,segsize,fanout,msg_size,latency_us,dataset,run

One output row per recorded run (so repeats stay repeats). comm_size = nranks, algorithm =
alg_id, segsize = 0 (the sweep never segmented). fanout = 4 for the chain algorithms (bcast 2,
reduce 2), the chain fan-out default those forced runs used; 0 elsewhere. Barrier (no message
size) is skipped. Standard library only.

--input is the sweep's landscape_long.csv: the complete table built from the raw outputs of
github.com/naughtont3/ompi-collectives-tuning (provenance: bench/data/README.md), or the subset
kept in tests/data/ornl/landscape_long.csv (2 and 16 ranks only).

Example (what bench/data/ornl-peak.csv was made with, from the complete table):
  python3 bench/optimizer/convert_ornl.py --input landscape_long.csv --dataset peak-2020-05 \
      --collectives bcast,reduce,allreduce,gather,allgather,alltoall,scatter \
      --ranks 16,128,512 --output bench/data/ornl-peak.csv
and bench/data/ornl-peak-other-sizes.csv (the remaining sizes of four collectives):
  python3 bench/optimizer/convert_ornl.py --input landscape_long.csv --dataset peak-2020-05 \
      --collectives bcast,reduce,allreduce,gather --ranks 2,4,8,32,64,256 --omit-dataset \
      --output bench/data/ornl-peak-other-sizes.csv
"""
import argparse
import csv
import sys

CHAIN = {("bcast", 2), ("reduce", 2)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", required=True,
                    help="landscape_long.csv of the ORNL sweeps (e.g. tests/data/ornl/landscape_long.csv)")
    ap.add_argument("--output", required=True)
    ap.add_argument("--dataset", default="peak-2020-05",
                    help="summit-2020-05, peak-2020-05 or peak-pr7730-2020-05-26")
    ap.add_argument("--collectives", default="bcast,reduce,allreduce,gather")
    ap.add_argument("--ranks", default="16,128,512", help="comma-separated rank counts")
    ap.add_argument("--omit-dataset", action="store_true",
                    help="leave out the dataset column (one dataset per file; smaller)")
    args = ap.parse_args()
    collectives = set(args.collectives.split(","))
    ranks = {int(r) for r in args.ranks.split(",")}

    rows = 0
    with open(args.input, newline="") as src, open(args.output, "w", newline="") as dst:
        out = csv.writer(dst, lineterminator="\n")
        header = ["collective", "comm_size", "algorithm", "segsize", "fanout", "msg_size",
                  "latency_us", "dataset", "run"]
        if args.omit_dataset:
            header.remove("dataset")
        out.writerow(header)
        for r in csv.DictReader(src):
            if r["dataset"] != args.dataset or r["collective"] not in collectives:
                continue
            if int(r["nranks"]) not in ranks or not r["msg_size_bytes"]:
                continue
            alg = int(r["alg_id"])
            fanout = 4 if (r["collective"], alg) in CHAIN else 0
            row = [r["collective"], r["nranks"], alg, 0, fanout, r["msg_size_bytes"],
                   r["avg_latency_us"], r["dataset"], r["run"]]
            if args.omit_dataset:
                del row[7]
            out.writerow(row)
            rows += 1
    print(f"wrote {rows} rows to {args.output}", file=sys.stderr)
    if rows == 0:
        sys.exit("no rows matched: check --dataset, --collectives and --ranks")


if __name__ == "__main__":
    main()
