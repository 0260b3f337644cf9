"""Time structure learning on synthetic data: kDB-5, then SkDB selection (K = 5).

Usage::

    python benchmarks/bench_structure.py [--rows 1000000] [--attributes 20] [--classes 3]

The data: 2-5 values per attribute, each attribute a noisy function of the class and of the
previous attribute, uint8 codes. The first call of each kernel compiles it (or loads it from the
numba cache); that warm-up is timed separately on a small sample.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hdp_plugin.structure import count_statistics, kdb, learn_structure
from hdp_plugin.structure.selective import build_context_tries, loo_rmse_grid


def synthetic(n_rows: int, n_attr: int, n_classes: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    card = rng.integers(2, 6, n_attr)
    y = rng.integers(0, n_classes, n_rows).astype(np.int32)
    X = np.empty((n_rows, n_attr), np.uint8)
    prev = np.zeros(n_rows, np.int64)
    for j, cj in enumerate(card):
        signal = (y + prev) % cj
        X[:, j] = np.where(rng.random(n_rows) < 0.5, signal, rng.integers(0, cj, n_rows))
        prev = X[:, j]
    return X, y, (card + 1).astype(np.int64)  # + the missing slot


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--attributes", type=int, default=20)
    ap.add_argument("--classes", type=int, default=3)
    ap.add_argument("--k", type=int, default=5)
    args = ap.parse_args()

    t = time.perf_counter()
    Xw, yw, cw = synthetic(1000, args.attributes, args.classes)
    learn_structure(Xw, yw, cw, args.classes, kind="skdb", k=args.k)
    print(f"warm-up (compile or load cached kernels): {time.perf_counter() - t:.2f} s")

    X, y, card = synthetic(args.rows, args.attributes, args.classes)
    print(f"data: {args.rows:,} rows x {args.attributes} attributes, {args.classes} classes, "
          f"{X.nbytes / 1e6:.0f} MB of codes")  # fmt: skip

    # wall and CPU seconds of each step: the kernels are single-threaded, so on a shared
    # machine the CPU time is the figure that does not depend on the other jobs
    marks = [(time.perf_counter(), time.process_time())]

    def mark():
        marks.append((time.perf_counter(), time.process_time()))
        (w0, c0), (w1, c1) = marks[-2], marks[-1]
        return f"{w1 - w0:6.2f} s wall {c1 - c0:6.2f} s CPU"

    stats = count_statistics(X, y, card, args.classes)
    print(f"  counting pass n(y), n(xi,y), n(xi,xj,y): {mark()}")
    full = kdb(stats, args.k)
    print(f"  MI, CMI and kDB-{args.k} parents:            {mark()}")
    tries = build_context_tries(X, y, stats, full.parents)
    print(f"  SkDB pass 2, context tries:             {mark()}  ({tries.n_nodes:,} nodes)")
    grid = loo_rmse_grid(X, y, stats, tries, np.array(full.order), args.k)
    print(f"  SkDB pass 3, leave-one-out grid:        {mark()}")
    (w0, c0), (w1, c1) = marks[0], marks[-1]
    print(f"kDB-{args.k} + SkDB selection, total:      {w1 - w0:6.2f} s wall {c1 - c0:6.2f} s CPU")

    s = learn_structure(X, y, card, args.classes, kind="skdb", k=args.k)
    print(f"learn_structure(kind='skdb', k={args.k}) end to end: {mark()}; "
          f"n* = {s.info['n_star']}, k* = {s.info['k_star']}, "
          f"LOO RMSE {grid[s.info['n_star'], s.info['k_star']]:.4f} (prior {grid[0, 0]:.4f})")


if __name__ == "__main__":
    main()
