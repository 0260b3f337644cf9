"""Dense data, shorter chains: an ensemble's trees at the rule's 100-iteration cap against 25 iterations.

The default ensemble's trees are checked at 25 and 50 iterations and run at most 100, or at most 25
once the training rows average ``config.DENSE_ROWS_PER_CLASS`` or more per class present
(``config.AUTO_DENSE_ITERATIONS``). This fits the default ensemble (ESKDB, 20 SkDB-5 members, HDP, one
thread) in the 5x2 folds of benchmarks/accuracy.py with ``random_state = 10 r + f + --seed-offset``
(other seeds than the accuracy tables', by default) twice per fold: under the rule with the dense cap
switched off (``100``) and with every tree at 25 iterations (``25``), and prints per data set, ordered
by training rows per class, the mean test RMSE, log-loss and 0-1 loss of ``100`` and the change that
``25`` makes (negative: 25 is better), with the rule's choice for that set. Nothing is timed.

Usage::

    python benchmarks/bench_dense_chains.py --mlbench-dir DIR     # benchmarks/studies.md's table
    python benchmarks/bench_dense_chains.py --datasets glass,segment-challenge --seed-offset 0
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import accuracy  # noqa: E402
from hdp_plugin import config  # noqa: E402
from hdp_plugin.params import resolved_iterations  # noqa: E402

def fold_measures(train, test, seed: int, iterations) -> tuple[float, float, float]:
    """(RMSE, log-loss, 0-1 loss) of the default ensemble fitted on ``train`` with ``iterations``."""
    clf = accuracy.our_classifier("HDP ESKDB", 1000, seed).set_params(iterations=iterations).fit(train)
    m = accuracy.metrics(clf.predict_proba(test), test.y, 0.0, 0.0)
    return m["rmse"], m["log_loss"], m["zero_one"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(accuracy.DATASETS), help="default: the accuracy tables' 30 sets")
    ap.add_argument("--seed-offset", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5, help="repetitions of 2-fold cross-validation")
    ap.add_argument("--arff-dir", type=Path, default=accuracy.DEBIAN_EXAMPLES)
    ap.add_argument("--mlbench-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    cut, short = config.DENSE_ROWS_PER_CLASS, config.AUTO_DENSE_ITERATIONS["eskdb"]
    rows = []
    try:
        config.DENSE_ROWS_PER_CLASS = float("inf")  # "100": the rule without its dense cap
        for name in args.datasets.split(","):
            path, why = accuracy.find_dataset(name, [HERE.parent / "tests" / "data", args.arff_dir], args.mlbench_dir)
            if path is None:
                print(f"{name}: skipped ({why})", file=sys.stderr)
                continue
            folds = [(r, f, *accuracy.fold_split(path, r, f)) for r in range(args.repeats) for f in range(2)]
            y = folds[0][2].y
            counts = np.bincount(y[y >= 0])
            per_class = len(y) / np.count_nonzero(counts)
            both = np.array([[fold_measures(tr, te, accuracy.seed_of(r, f) + args.seed_offset, it)
                              for it in (None, short)] for r, f, tr, te in folds])  # (fold, rule, measure)
            long, change = both[:, 0].mean(axis=0), (both[:, 1] - both[:, 0]).mean(axis=0)
            rows.append((per_class, name, len(y), counts, long, change))
            print(f"{name}: done", file=sys.stderr, flush=True)
    finally:
        config.DENSE_ROWS_PER_CLASS = cut
    rows.sort(key=lambda r: (r[0], r[1]))
    print(f"Default ensemble, {args.repeats}x2 cross-validation, seeds + {args.seed_offset}: test measures of the "
          f"trees at the rule's cap of {config.AUTO_ITERATIONS['eskdb']} (checked at "
          f"{config.AUTO_FIRST_CHECK['eskdb']} and {2 * config.AUTO_FIRST_CHECK['eskdb']}), and the change with "
          f"every tree at {short} iterations (negative: {short} is better); the rule: {short} from {cut} training "
          "rows per class on.\n")
    print("| data set | training rows | rows per class | rule | RMSE | log-loss | 0-1 loss | RMSE change | "
          "log-loss change | 0-1 change |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for per_class, name, n, counts, long, change in rows:
        rule = resolved_iterations("eskdb", None, counts)
        print(f"| {name} | {n} | {per_class:.0f} | {rule} | " + " | ".join(f"{v:.4f}" for v in long) + " | "
              + " | ".join(f"{v:+.4f}" for v in change) + " |")
    for label, keep in ((f"below {cut} rows per class", lambda r: r[0] < cut),
                        (f"{cut} or more rows per class", lambda r: r[0] >= cut)):
        part = [r for r in rows if keep(r)]
        if part:
            mean = np.mean([r[5] for r in part], axis=0)
            print(f"| mean change, {len(part)} sets {label} | | | | | | | " + " | ".join(f"{v:+.4f}" for v in mean)
                  + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
