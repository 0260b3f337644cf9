"""How many members the default ensemble needs: accuracy and training time against ``n_members``.

Run:  python benchmarks/bench_members.py [--members 5,10,15,20] [--repeats 5] [--datasets NAMES]
                                         [--mlbench-dir DIR]

On every fold of the accuracy benchmark's 5x2 cross-validation (``accuracy.fold_split``,
``random_state = 10*repeat + fold``) of the 1000-iteration accuracy tables' 26 data sets, it fits the
default classifier (``BayesNetClassifier(random_state=..., n_jobs=1)``) with each ``n_members`` in
turn on the same training rows (member ``e`` is the same whatever the number of members: it draws from
the stream ``(MEMBER, e)`` of the seed, so the smaller ensembles are prefixes of the larger ones' members
up to the shared trees' copies) and prints, per number of members, the mean over the data sets of the
test RMSE, log-loss and 0-1 loss (each data set's mean over its folds) and the summed mean training
time (one thread, wall clock: run it on a quiet machine).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import accuracy  # noqa: E402
import bench_eskdb_iterations  # noqa: E402


def scores(p: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Test RMSE, log-loss and 0-1 loss, as the accuracy tables have them (``accuracy.metrics``)."""
    m = accuracy.metrics(p, y, 0.0, 0.0)
    return m["rmse"], m["log_loss"], m["zero_one"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--members", default="5,10,15,20", help="Comma-separated n_members values.")
    ap.add_argument("--repeats", type=int, default=5, help="Repetitions of 2-fold cross-validation.")
    ap.add_argument("--datasets", default=",".join(bench_eskdb_iterations.DATASETS))
    ap.add_argument("--mlbench-dir", type=Path)
    args = ap.parse_args(argv)
    from hdp_plugin import BayesNetClassifier

    counts = [int(n) for n in args.members.split(",") if n]
    dirs = [accuracy.ROOT / "tests" / "data", accuracy.DEBIAN_EXAMPLES]
    per_set: dict = {n: {} for n in counts}
    for name in [d for d in args.datasets.split(",") if d]:
        path, why = accuracy.find_dataset(name, dirs, args.mlbench_dir, HERE / ".cache")
        if path is None:
            print(f"skipped {name}: {why}", file=sys.stderr)
            continue
        for repeat in range(args.repeats):
            for fold in range(2):
                train, test = accuracy.fold_split(path, repeat, fold)
                for n in counts:  # interleaved: every count on the same rows, one after the other
                    t0 = time.perf_counter()
                    clf = BayesNetClassifier(random_state=accuracy.seed_of(repeat, fold), n_jobs=1,
                                             n_members=n).fit(train)
                    seconds = time.perf_counter() - t0
                    per_set[n].setdefault(name, []).append((*scores(clf.predict_proba(test), test.y), seconds))
    done = sorted(set.intersection(*(set(s) for s in per_set.values()))) if per_set else []
    print(f"{len(done)} data sets, {args.repeats}x2 cross-validation, one thread; means over the data sets of "
          "each set's mean over its folds, training time summed over the sets")
    print("| members | RMSE | log-loss | 0-1 loss | training time (s) |")
    print("|---:|---:|---:|---:|---:|")
    for n in counts:
        means = np.array([np.mean(per_set[n][name], axis=0) for name in done]).reshape(len(done), 4)
        print(f"| {n} | {means[:, 0].mean():.4f} | {means[:, 1].mean():.4f} | {means[:, 2].mean():.4f} | "
              f"{means[:, 3].sum():.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
