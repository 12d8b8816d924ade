"""Where a profiled run's GPU time went, kernel by kernel: reads the CSV that Nsight Compute
writes with `ncu --csv --print-units base --metrics gpu__time_duration.sum --log-file F`
(one row per kernel launch) and prints each kernel name's launches, total time and share
of the whole, largest first. scripts/gpu_check.sh's `profile` step runs it on a training
step of gpt2 and of TinyLlama.

usage: python3 bench/ncu_summary.py F [--top 25]
"""
import argparse
import collections
import csv
import sys


def launches(path):
    """(kernel name, nanoseconds) of each launch in the CSV; ncu's own lines are skipped."""
    with open(path, newline="") as f:
        rows = csv.reader(line for line in f if line.startswith('"'))
        header = next(rows, None)
        if header is None:
            sys.exit(f"{path}: no CSV rows (did ncu profile any kernel?)")
        name, metric, value = (header.index(c) for c in ("Kernel Name", "Metric Name", "Metric Value"))
        for row in rows:
            if row[metric] == "gpu__time_duration.sum":
                yield row[name], float(row[value].replace(",", ""))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("csv")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    count = collections.Counter()
    total = collections.Counter()
    for name, ns in launches(args.csv):
        count[name] += 1
        total[name] += ns
    whole = sum(total.values())
    if whole == 0:
        sys.exit(f"{args.csv}: no kernel durations")
    print(f"{sum(count.values())} launches, {whole * 1e-6:.2f} ms of kernel time in all")
    print(f"{'ms':>9} {'share':>6} {'launches':>8}  kernel")
    for name, ns in total.most_common(args.top):
        print(f"{ns * 1e-6:9.3f} {100 * ns / whole:5.1f}% {count[name]:8d}  {name[:100]}")


if __name__ == "__main__":
    main()
