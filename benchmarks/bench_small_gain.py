"""How few training rows can ``"stochastic-gain"``'s extra cuts take?

The ``"stochastic-gain"`` rule gives every informative numeric attribute at least
``GAIN_MIN_CUTS`` (2) cut points, where ESKDB's stochastic MDL gives about one. With many rows per
class that wins (docs/benchmarks.md, accuracy tables), but with a handful of rows an attribute cut
into three bins holds one or two rows per bin: on weather.numeric (7 training rows per fold) the rule
lost 0.114 of 0-1 loss against the stochastic MDL.

This benchmark finds where the extra cuts stop paying. From each numeric or mixed data set it draws
training sets of ``n`` rows (every class present at least once when ``n`` allows; ``--repeats``
draws per size, seeds 0..), tests on the remaining rows (at most ``--max-test``), and fits the
default ensemble (ESKDB, 20 SkDB-5 members, HDP, auto iterations, one thread, ``random_state`` the
draw's seed) with, on the same rows and seed:

* ``mdl``: ``discretization="stochastic-mdl"`` (the ESKDB of the method's authors);
* ``gain``: ``"stochastic-gain"``, the default;
* ``gain-tT``: ``"stochastic-gain"`` for attributes with at least ``T`` known training values, the
  stochastic MDL for the others (the fit's cut-point function patched in this process; the library
  has no such threshold).

It prints, per data set and size, the mean 0-1 loss, RMSE and log-loss of each rule, and per size
the means over the data sets; the rule wins where its mean is lower at every size.

Usage::

    python benchmarks/bench_small_gain.py                     # every set, sizes, rules (a few minutes)
    python benchmarks/bench_small_gain.py --sizes 7,14 --repeats 5 --datasets iris
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import accuracy  # noqa: E402
from hdp_plugin import BayesNetClassifier, read_dataset  # noqa: E402
import hdp_plugin.model.pipeline as pipeline  # noqa: E402
from hdp_plugin.preprocess import discretizer  # noqa: E402

DATASETS = ["weather.numeric", "labor", "iris", "glass", "diabetes", "ionosphere", "credit-g",
            "segment-challenge", "mlbench-Sonar", "mlbench-Vehicle", "mlbench-Vowel"]
SIZES = [7, 10, 14, 20, 28, 40, 60]
RULES = ["mdl", "gain", "gain-t10", "gain-t15", "gain-t20", "gain-t30"]


def draw_rows(y: np.ndarray, n: int, seed: int) -> np.ndarray:
    """``n`` row indices: one of each class first (as many classes as ``n`` allows, in a random order),
    the rest uniformly among the other rows."""
    rng = np.random.default_rng(seed)
    classes = rng.permutation(np.unique(y))[:n]
    first = np.array([rng.choice(np.nonzero(y == c)[0]) for c in classes], dtype=np.int64)
    rest = np.setdiff1d(np.arange(len(y)), first)
    more = rng.choice(rest, size=n - len(first), replace=False)
    return np.sort(np.concatenate([first, more]))


#: the threshold of the ``gain-tT`` rule being fitted (0: none)
_MIN_ROWS = [0]


def _gain_with_threshold(columns, seed, method="stochastic-mdl"):
    """:func:`~hdp_plugin.preprocess.discretizer.stochastic_cut_points`, but with ``"stochastic-gain"`` the
    stochastic MDL for an attribute with fewer than ``_MIN_ROWS`` known values (each attribute draws from its
    own stream, so the two calls give every column what it would get among all of them)."""
    if method != "stochastic-gain" or not _MIN_ROWS[0]:
        return _LIBRARY(columns, seed, method)
    small = {j: c for j, c in columns.items() if c.values.shape[0] < _MIN_ROWS[0]}
    large = {j: c for j, c in columns.items() if j not in small}
    out = _LIBRARY(large, seed, method) if large else {}
    out.update(_LIBRARY(small, seed, "stochastic-mdl") if small else {})
    return out


_LIBRARY = discretizer.stochastic_cut_points


def fit_rule(rule: str, train, seed: int) -> BayesNetClassifier:
    _MIN_ROWS[0] = int(rule.split("-t")[1]) if "-t" in rule else 0
    disc = "stochastic-mdl" if rule == "mdl" else "stochastic-gain"
    clf = BayesNetClassifier(structure="eskdb", discretization=disc, random_state=seed, n_jobs=1)
    return clf.fit(train)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--rules", default=",".join(RULES))
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--max-test", type=int, default=400)
    ap.add_argument("--arff-dir", type=Path, default=Path("/tmp/wekadeb/usr/share/doc/weka/examples"))
    ap.add_argument("--mlbench-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    rules = args.rules.split(",")
    sizes = [int(s) for s in args.sizes.split(",")]
    pipeline.stochastic_cut_points = _gain_with_threshold
    # per size, per rule: list of (0-1, rmse, log-loss) means of each data set
    per_size = {n: {r: [] for r in rules} for n in sizes}
    t0 = time.perf_counter()
    print(f"{'data set':<20} {'n':>3}  " + "  ".join(f"{r:>24}" for r in rules))
    print(f"{'':<20} {'':>3}  " + "  ".join(f"{'0-1   rmse   logloss':>24}" for _ in rules))
    for name in args.datasets.split(","):
        path, why = accuracy.find_dataset(name, [args.arff_dir], args.mlbench_dir)
        if path is None:
            print(f"{name}: skipped ({why})")
            continue
        data = read_dataset(path)
        data = data.take(np.nonzero(data.y >= 0)[0])
        for n in sizes:
            if n >= len(data.y) - 5:
                continue
            res = {r: [] for r in rules}
            for rep in range(args.repeats):
                rows = draw_rows(data.y, n, 1000 * n + rep)
                test_rows = np.setdiff1d(np.arange(len(data.y)), rows)
                if len(test_rows) > args.max_test:
                    test_rows = np.sort(np.random.default_rng(rep).choice(test_rows, args.max_test, replace=False))
                train, test = data.take(rows), data.take(test_rows)
                for r in rules:
                    clf = fit_rule(r, train, rep)
                    proba = clf.predict_proba(test)
                    m = accuracy.metrics(proba, test.y, 0.0, 0.0)
                    res[r].append((m["zero_one"], m["rmse"], m["log_loss"]))
            means = {r: np.mean(res[r], axis=0) for r in rules}
            for r in rules:
                per_size[n][r].append(means[r])
            print(f"{name:<20} {n:>3}  " + "  ".join(f"{a:.3f} {b:.4f} {c:8.4f}" for a, b, c in means.values()),
                  flush=True)
    pipeline.stochastic_cut_points = _LIBRARY
    print()
    print("Mean over the data sets, per training size:")
    for n in sizes:
        if not per_size[n][rules[0]]:
            continue
        k = len(per_size[n][rules[0]])
        print(f"{'mean of ' + str(k):<20} {n:>3}  "
              + "  ".join(f"{a:.3f} {b:.4f} {c:8.4f}" for a, b, c in (np.mean(per_size[n][r], axis=0) for r in rules)))
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
