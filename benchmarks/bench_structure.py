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

    t0 = time.perf_counter()
    stats = count_statistics(X, y, card, args.classes)
    t1 = time.perf_counter()
    full = kdb(stats, args.k)
    t2 = time.perf_counter()
    tries = build_context_tries(X, y, stats, full.parents)
    t3 = time.perf_counter()
    grid = loo_rmse_grid(X, y, stats, tries, np.array(full.order), args.k)
    t4 = time.perf_counter()
    print(f"  counting pass n(y), n(xi,y), n(xi,xj,y): {t1 - t0:6.2f} s")
    print(f"  MI, CMI and kDB-{args.k} parents:            {t2 - t1:6.2f} s")
    print(f"  SkDB pass 2, context tries:             {t3 - t2:6.2f} s  ({tries.n_nodes:,} nodes)")
    print(f"  SkDB pass 3, leave-one-out grid:        {t4 - t3:6.2f} s")
    print(f"kDB-{args.k} structure:            {t2 - t0:6.2f} s")
    print(f"kDB-{args.k} + SkDB selection:     {t4 - t0:6.2f} s")

    t5 = time.perf_counter()
    s = learn_structure(X, y, card, args.classes, kind="skdb", k=args.k)
    t6 = time.perf_counter()
    print(f"learn_structure(kind='skdb', k={args.k}) end to end: {t6 - t5:.2f} s; "
          f"n* = {s.info['n_star']}, k* = {s.info['k_star']}, "
          f"LOO RMSE {grid[s.info['n_star'], s.info['k_star']]:.4f} (prior {grid[0, 0]:.4f})")


if __name__ == "__main__":
    main()
