"""Speed, memory and accuracy of HDP training against the published implementation's figures.

Run:  python benchmarks/bench_hdp.py [--quick] [--threads 1,2]

Every workload runs in a fresh subprocess (so peak memory is its own, read from getrusage) and
prints one markdown row. The reference figures are those of docs/method.md section 8 (2 cores, one
thread used, train seconds summed over the two folds). Figures are measured, never estimated.
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

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "tests" / "data"
sys.path.insert(0, str(HERE))

# name: (data, structure, k, iterations, folds, reference seconds, reference HDP RMSE)
WORKLOADS = {
    "segment-kdb1": ("segment-challenge.arff", "kdb", 1, 5000, 2, 28.0, 0.0977),
    "segment-kdb5": ("segment-challenge.arff", "kdb", 5, 5000, 2, 123.0, 0.0978),
    "vote-kdb5": ("vote.arff", "kdb", 5, 5000, 2, 25.0, 0.2255),
    "soybean-skdb5": ("soybean.arff", "skdb", 5, 5000, 2, 32.0, 0.0631),
    "synthetic5k-kdb5": ("synthetic:5000", "kdb", 5, 1000, 1, 36.0, None),
    "synthetic50k-kdb5": ("synthetic:50000", "kdb", 5, 1000, 1, 171.0, None),
}


def _load(spec: str):
    from hdp_plugin import read_dataset

    if spec.startswith("synthetic:"):
        from synthetic import synthetic

        return synthetic(int(spec.split(":")[1]), seed=0)
    return read_dataset(DATA / spec)


def run_one(name: str, threads: int, iterations: int | None) -> dict:
    """Train one workload in this process and return its figures."""
    from hdp_plugin import BayesNetClassifier
    from hdp_plugin.hdp.sampler import sample
    from hdp_plugin.model.evaluation import cross_validate, stratified_folds

    spec, structure, k, its, folds, ref_s, ref_rmse = WORKLOADS[name]
    its = iterations or its
    data = _load(spec)
    # warm the numba caches so compile time is not counted
    BayesNetClassifier(structure=structure, k=k, iterations=20, random_state=0).fit(data.take(np.arange(min(200, data.n_rows))))

    def make(est):
        return lambda: BayesNetClassifier(structure=structure, k=k, estimator=est, iterations=its,
                                          random_state=1, n_jobs=threads)

    out = {"name": name, "threads": threads, "iterations": its, "rows": data.n_rows}
    if folds == 2:
        hdp = cross_validate(make("hdp"), data, n_folds=2, seed=1)
        mest = cross_validate(make("m-estimate"), data, n_folds=2, seed=1)
        out.update(train_s=hdp.train_seconds, rmse=hdp.rmse, zero_one=hdp.zero_one,
                   m_rmse=mest.rmse, m_zero_one=mest.zero_one)
        clf = make("hdp")().fit(data.take(stratified_folds(data.y, 2, 1) != 0))
    else:
        t0 = time.perf_counter()
        clf = make("hdp")().fit(data)
        out["train_s"] = time.perf_counter() - t0
    # sampler throughput on the last model's trees
    trees = clf.tables_.trees
    t0 = time.perf_counter()
    res = sample(trees, iterations=its, random_state=1, n_jobs=threads)
    sampler_s = time.perf_counter() - t0
    n, t = res.customer_counts, res.table_counts
    is_root = np.zeros(trees.n_nodes, bool)
    is_root[trees.tree_node_start[:-1]] = True
    cell_root = np.repeat(is_root, trees.tree_card[trees.node_tree])
    drawn = (n >= 2) & ~cell_root
    width = np.minimum(n, t + 10) - np.maximum(1, t - 10) + 1
    out.update(nodes=trees.n_nodes, cells=trees.n_cells, drawn_cells=int(drawn.sum()),
               sampler_s=sampler_s, draws_per_s=drawn.sum() * its / sampler_s,
               logweights_per_s=width[drawn].sum() * its / sampler_s,
               ref_s=ref_s, ref_rmse=ref_rmse)
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1024 if sys.platform != "darwin" else 1024**2)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="Only the two synthetic workloads and segment kDB-5.")
    ap.add_argument("--threads", default="1,2", help="Comma-separated thread counts to run.")
    ap.add_argument("--linearity", action="store_true", help="Also time 5k-row kDB-5 at 250..2000 iterations.")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--iterations", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    threads = [int(x) for x in args.threads.split(",")]
    if args.one:
        print(json.dumps(run_one(args.one, threads[0], args.iterations)))
        return 0

    names = ["segment-kdb5", "synthetic5k-kdb5", "synthetic50k-kdb5"] if args.quick else list(WORKLOADS)
    print(f"# HDP training benchmark ({platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()})\n")
    print("| workload | threads | iterations | train s | reference s | speed-up | HDP RMSE / 0-1 | "
          "m-est. RMSE / 0-1 | ref. HDP RMSE | nodes | cells | draws/s | log-weights/s | peak MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        for th in threads:
            r = _child(name, th, None)
            acc = f"{r['rmse']:.4f} / {r['zero_one']:.3f}" if "rmse" in r else ""
            macc = f"{r['m_rmse']:.4f} / {r['m_zero_one']:.3f}" if "m_rmse" in r else ""
            ref = f"{r['ref_rmse']:.4f}" if r["ref_rmse"] else ""
            print(f"| {name} | {th} | {r['iterations']} | {r['train_s']:.2f} | {r['ref_s']:.0f} | "
                  f"{r['ref_s'] / r['train_s']:.1f}x | {acc} | {macc} | {ref} | {r['nodes']} | {r['cells']} | "
                  f"{r['draws_per_s']:.3g} | {r['logweights_per_s']:.3g} | {r['peak_mb']:.0f} |", flush=True)
    if args.linearity:
        print("\n| iterations | sampler s (5k rows, kDB-5, 1 thread) |\n|---|---|")
        for its in (250, 500, 1000, 2000):
            r = _child("synthetic5k-kdb5", 1, its)
            print(f"| {its} | {r['sampler_s']:.2f} |", flush=True)
    return 0


def _child(name, threads, iterations):
    cmd = [sys.executable, __file__, "--one", name, "--threads", str(threads)]
    if iterations:
        cmd += ["--iterations", str(iterations)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    sys.exit(main())
