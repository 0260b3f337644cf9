"""Training time, peak memory and prediction speed as the data grows.

Run:  python benchmarks/bench_scale.py [--rows 5000,50000,500000,1000000] [--k 1,3,5]
                                       [--iterations 1000] [--threads 1,2]

Each (rows, k, threads) point trains in a fresh process on seeded synthetic data (20 attributes
with 2-5 values, 3 classes, each attribute depending on the class and the two previous ones; see
benchmarks/synthetic.py) and reports: fit seconds (discretisation, structure, trees and sampler),
the sampler's share, prediction seconds over the same rows, and the process's peak memory
(the child's own getrusage, which includes the synthetic data it generates). Targets on this 2-core machine: kDB-5 on 1,000,000 rows at 1000
iterations trains in under 2 minutes in under 4 GB; prediction over 1,000,000 rows takes under 2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def run_one(rows: int, k: int, iterations: int, threads: int) -> dict:
    import numpy as np

    from hdp_plugin import BayesNetClassifier
    from synthetic import synthetic

    t0 = time.perf_counter()
    data = synthetic(rows, seed=0)
    gen_s = time.perf_counter() - t0
    # compile (or load cached) kernels outside the timings
    BayesNetClassifier(structure="kdb", k=k, iterations=10, random_state=0).fit(data.take(np.arange(min(rows, 500))))
    clf = BayesNetClassifier(structure="kdb", k=k, iterations=iterations, random_state=1, n_jobs=threads)
    t0 = time.perf_counter()
    clf.fit(data)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    proba = clf.predict_proba(data)
    predict_s = time.perf_counter() - t0
    acc = float(np.mean(np.argmax(proba, axis=1) == data.y))
    trees = clf.members_[0].tables
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1024 if sys.platform != "darwin" else 1024**2)
    return {"peak_mb": peak, "rows": rows, "k": k, "iterations": iterations, "threads": threads, "generate_s": gen_s,
            "fit_s": fit_s, "sampler_s": clf.fit_info_.get("sampler_seconds", float("nan")),
            "predict_s": predict_s, "train_accuracy": acc, "nodes": trees.n_nodes, "cells": trees.n_cells}


def child(rows, k, iterations, threads) -> dict:
    """One point in a fresh process, whose peak memory (ru_maxrss) is its own."""
    proc = subprocess.run([sys.executable, __file__, "--one", f"{rows},{k},{iterations},{threads}"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"run {rows} rows, k={k} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="5000,50000,500000,1000000", help="Comma-separated row counts.")
    ap.add_argument("--k", default="1,3,5", help="Comma-separated k of kDB.")
    ap.add_argument("--iterations", type=int, default=1000, help="Gibbs iterations.")
    ap.add_argument("--threads", default="2", help="Comma-separated thread counts.")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        rows, k, its, th = (int(v) for v in args.one.split(","))
        print(json.dumps(run_one(rows, k, its, th)))
        return 0
    print(f"**Scale benchmark ({platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{args.iterations} iterations)**\n")
    print("| rows | k | threads | fit s | sampler s | predict s | predict rows/s | peak MB | nodes | cells |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    points = [(int(r), int(k), int(t)) for r in args.rows.split(",") for k in args.k.split(",")
              for t in args.threads.split(",")]
    points.sort(key=lambda p: (-p[0], -p[1]))
    for rows, k, th in points:
        r = child(rows, k, args.iterations, th)
        print(f"| {rows} | {k} | {th} | {r['fit_s']:.2f} | {r['sampler_s']:.2f} | {r['predict_s']:.2f} | "
              f"{rows / r['predict_s']:.3g} | {r['peak_mb']:.0f} | {r['nodes']} | {r['cells']} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
