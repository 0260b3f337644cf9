"""ESKDB's training time: E members at 1000 iterations, 5x2 cross-validation, one and two threads.

Run:  python benchmarks/bench_eskdb.py [--dataset segment-challenge] [--members 20] [--k 5]
                                       [--iterations 1000] [--repeats 5] [--threads 1,2]

For every fold of the accuracy benchmark's 5x2 cross-validation (``stratified_folds(y, 2, r)``,
``random_state = 10*repeat + fold``) it trains ``BayesNetClassifier(structure="eskdb")`` on the
raw training fold once per thread count, times ``fit`` (stochastic MDL per member, structures,
trees, the sampler) and ``predict_proba`` on the test fold, and checks that every thread count gives
the same ensemble bit for bit: each member's seed, cut points, structure and log-probability
tables, and the test fold's probabilities. Kernels are compiled (or loaded from numba's cache)
before the timings. Wall-clock figures: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA_DIRS = [ROOT / "tests" / "data", Path("/tmp/wekadeb/usr/share/doc/weka/examples")]


def ensemble_digest(clf, proba: np.ndarray) -> str:
    """SHA-256 of everything a fitted ensemble is made of, and of its test probabilities."""
    h = hashlib.sha256()
    for mb in clf.members_:
        h.update(repr((mb.seed, mb.weight)).encode())
        h.update(repr([(a.name, a.values, a.cut_points) for a in mb.attributes]).encode())
        st = mb.structure
        h.update(repr((st.kind, st.k, st.parents, st.kept, st.order)).encode())
        h.update(np.ascontiguousarray(mb.tables.log_probs, "<f8").tobytes())
    h.update(np.ascontiguousarray(proba, "<f8").tobytes())
    return h.hexdigest()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="segment-challenge",
                    help="ARFF file stem (tests/data or Debian's examples) or a path.")
    ap.add_argument("--members", type=int, default=20)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5, help="Repetitions of 2-fold cross-validation.")
    ap.add_argument("--threads", default="1,2", help="Comma-separated n_jobs values to time.")
    args = ap.parse_args(argv)

    from hdp_plugin import BayesNetClassifier, read_dataset
    from hdp_plugin.model.evaluation import rmse, stratified_folds

    path = Path(args.dataset)
    if not path.is_file():
        path = next((d / f"{args.dataset}.arff" for d in DATA_DIRS if (d / f"{args.dataset}.arff").is_file()), None)
        if path is None:
            ap.error(f"{args.dataset}.arff not found in {', '.join(map(str, DATA_DIRS))}")
    threads = [int(t) for t in args.threads.split(",") if t]
    data, _ = read_dataset(path).drop_missing_class()

    def make(n_jobs, iterations=args.iterations, members=args.members, seed=0):
        return BayesNetClassifier(structure="eskdb", n_members=members, k=args.k, estimator="hdp",
                                  iterations=iterations, random_state=seed, n_jobs=n_jobs)

    t0 = time.perf_counter()
    for t in threads:  # compile, or load numba's cache, outside the timings
        warm = make(t, iterations=20, members=2).fit(data.take(np.arange(min(200, data.n_rows))))
        warm.predict_proba(data.take(np.arange(5)))
    warm_s = time.perf_counter() - t0

    fit_s = {t: [] for t in threads}
    pred_s = {t: [] for t in threads}
    losses = []
    mismatches = []
    for r in range(args.repeats):
        fold = stratified_folds(data.y, 2, r)
        for f in range(2):
            train, test = data.take(np.nonzero(fold != f)[0]), data.take(np.nonzero(fold == f)[0])
            digests = {}
            for t in threads:
                clf = make(t, seed=10 * r + f)
                a = time.perf_counter()
                clf.fit(train)
                b = time.perf_counter()
                proba = clf.predict_proba(test)
                c = time.perf_counter()
                fit_s[t].append(b - a)
                pred_s[t].append(c - b)
                digests[t] = ensemble_digest(clf, proba)
            losses.append(rmse(proba, test.y))
            if len(set(digests.values())) != 1:
                mismatches.append(f"r{r}f{f}")

    n_folds = 2 * args.repeats
    print(f"# ESKDB training time ({platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()})")
    print(f"# {path.stem}: {data.n_rows} rows, {data.n_attributes} attributes, {data.n_classes} classes; "
          f"{args.repeats}x2 cross-validation ({n_folds} folds of about {data.n_rows // 2} training rows)")
    print(f"# E = {args.members} members, K = {args.k}, HDP, {args.iterations} iterations (default burn-in), "
          f"stochastic MDL per member; kernel compile/cache load {warm_s:.1f}s, not counted")
    print(f"{'threads':>7} {'fit total s':>12} {'fit per fold s':>15} {'predict total s':>16} {'speed-up':>9}")
    base = sum(fit_s[threads[0]])
    for t in threads:
        tot = sum(fit_s[t])
        print(f"{t:>7} {tot:>12.1f} {tot / n_folds:>15.2f} {sum(pred_s[t]):>16.2f} {base / tot:>8.2f}x")
    print(f"mean test RMSE {np.mean(losses):.4f} over {n_folds} folds")
    if len(threads) > 1:
        print("same ensemble whatever the threads (seeds, cut points, structures, tables, test probabilities): "
              + ("yes, bit for bit on every fold" if not mismatches else f"NO on {', '.join(mismatches)}"))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
