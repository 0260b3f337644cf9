"""ESKDB's training time: E members at 1000 (or auto) iterations, 5x2 cross-validation, one and two threads.

Run:  python benchmarks/bench_eskdb.py [--dataset segment-challenge] [--members 20] [--k 5]
                                       [--iterations 1000,auto] [--repeats 5] [--threads 1,2]

For every fold of the accuracy benchmark's 5x2 cross-validation (``stratified_folds(y, 2, r)``,
``random_state = 10*repeat + fold``) it trains ``BayesNetClassifier(structure="eskdb")`` on the
raw training fold once per thread count, times ``fit`` (stochastic cut points per member, structures,
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
        h.update(np.ascontiguousarray(mb.tables.log_backoff, "<f8").tobytes())
    h.update(np.ascontiguousarray(proba, "<f8").tobytes())
    return h.hexdigest()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="segment-challenge",
                    help="ARFF file stem (tests/data or Debian's examples) or a path.")
    ap.add_argument("--members", type=int, default=20)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--iterations", default="1000",
                    help="Comma-separated iterations, 'auto' (the default: 200 for an ensemble) included; "
                         "every setting and thread count runs on every fold, interleaved.")
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
    settings = [None if i == "auto" else int(i) for i in args.iterations.split(",")]
    label = {i: "auto" if i is None else str(i) for i in settings}
    runs = [(i, t) for i in settings for t in threads]
    data, _ = read_dataset(path).drop_missing_class()

    def make(n_jobs, iterations, members=args.members, seed=0):
        return BayesNetClassifier(structure="eskdb", n_members=members, k=args.k, estimator="hdp",
                                  iterations=iterations, random_state=seed, n_jobs=n_jobs)

    t0 = time.perf_counter()
    for t in threads:  # compile, or load numba's cache, outside the timings
        warm = make(t, iterations=20, members=2).fit(data.take(np.arange(min(200, data.n_rows))))
        warm.predict_proba(data.take(np.arange(5)))
    warm_s = time.perf_counter() - t0

    fit_s = {key: [] for key in runs}
    pred_s = {key: [] for key in runs}
    losses = {i: [] for i in settings}
    ran = {i: [] for i in settings}
    mismatches = []
    for r in range(args.repeats):
        fold = stratified_folds(data.y, 2, r)
        for f in range(2):
            train, test = data.take(np.nonzero(fold != f)[0]), data.take(np.nonzero(fold == f)[0])
            bad = False
            for i in settings:
                digests = set()
                for t in threads:
                    clf = make(t, i, seed=10 * r + f)
                    a = time.perf_counter()
                    clf.fit(train)
                    b = time.perf_counter()
                    proba = clf.predict_proba(test)
                    c = time.perf_counter()
                    fit_s[(i, t)].append(b - a)
                    pred_s[(i, t)].append(c - b)
                    digests.add(ensemble_digest(clf, proba))
                losses[i].append(rmse(proba, test.y))
                # iterations run, per cell (auto: every tree its own)
                cells = np.concatenate([np.diff(mb.tables.tree_node_start) * mb.tables.tree_card
                                        for mb in clf.members_])
                its = clf.fit_info_.get("tree_iterations", np.full(cells.shape, clf.fit_info_["iterations"]))
                ran[i].append(float(np.sum(its * cells) / max(cells.sum(), 1)))
                bad |= len(digests) != 1
            if bad:
                mismatches.append(f"r{r}f{f}")

    n_folds = 2 * args.repeats
    print(f"# ESKDB training time ({platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()})")
    print(f"# {path.stem}: {data.n_rows} rows, {data.n_attributes} attributes, {data.n_classes} classes; "
          f"{args.repeats}x2 cross-validation ({n_folds} folds of about {data.n_rows // 2} training rows)")
    print(f"# E = {args.members} members, K = {args.k}, HDP, {', '.join(label.values())} iterations (default "
          f"burn-in; auto: the default, config.AUTO_ITERATIONS), stochastic-gain cut points per member, the settings and threads "
          f"interleaved fold by fold; kernel compile/cache load {warm_s:.1f}s, not counted")
    print(f"{'iterations':>10} {'threads':>7} {'fit total s':>12} {'fit per fold s':>15} {'predict total s':>16} "
          f"{'speed-up':>9} {'iterations run (mean per cell)':>31} {'mean test RMSE':>15}")
    for i in settings:
        base = sum(fit_s[(i, threads[0])])
        for t in threads:
            tot = sum(fit_s[(i, t)])
            print(f"{label[i]:>10} {t:>7} {tot:>12.1f} {tot / n_folds:>15.2f} {sum(pred_s[(i, t)]):>16.2f} "
                  f"{base / tot:>8.2f}x {np.mean(ran[i]):>31.0f} {np.mean(losses[i]):>15.4f}")
    if len(threads) > 1:
        print("same ensemble whatever the threads (seeds, cut points, structures, tables, test probabilities): "
              + ("yes, bit for bit on every fold" if not mismatches else f"NO on {', '.join(mismatches)}"))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
