"""How many cuts with many classes? The cap of ``"stochastic-gain"``'s class-dependent minimum.

The gain rule gives every informative numeric attribute at least ``max(2, min(c - 1, CAP))`` cuts for
the ``c`` classes present in its training rows (``hdp_plugin.preprocess.stochastic``:
``GAIN_MIN_CUTS``, ``GAIN_MAX_CLASS_CUTS``). This fits the default ensemble (ESKDB, 20 SkDB-5
members, HDP, auto iterations, one thread) in the 5x2 folds of benchmarks/accuracy.py with
``random_state = 10 r + f + --seed-offset`` (an offset other than 0 gives other draws than the
accuracy tables', to choose CAP without their test folds' seeds) for each CAP of ``--caps``
(``GAIN_MAX_CLASS_CUTS`` set in this process; 2 is the rule without a class-dependent minimum, 99
no cap), and prints the mean 0-1 loss, RMSE and log-loss over the 10 test folds as Markdown rows.

Usage::

    python benchmarks/bench_class_cuts.py --mlbench-dir DIR      # benchmarks/studies.md's table
    python benchmarks/bench_class_cuts.py --datasets glass --caps 2,4 --seed-offset 0
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
from hdp_plugin.preprocess import stochastic  # noqa: E402

DATASETS = ["glass", "mlbench-Vehicle", "mlbench-Vowel", "segment-challenge", "mlbench-Zoo"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--caps", default="2,3,4,6,99")
    ap.add_argument("--seed-offset", type=int, default=1000)
    ap.add_argument("--arff-dir", type=Path, default=Path("/tmp/wekadeb/usr/share/doc/weka/examples"))
    ap.add_argument("--mlbench-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    caps = [int(c) for c in args.caps.split(",")]
    keep = stochastic.GAIN_MAX_CLASS_CUTS
    print("| data set | classes | " + " | ".join(f"CAP {c}: 0-1 / RMSE / log-loss" for c in caps) + " |")
    print("|---|---:|" + "---|" * len(caps))
    for name in args.datasets.split(","):
        path, why = accuracy.find_dataset(name, [args.arff_dir], args.mlbench_dir)
        if path is None:
            print(f"{name}: skipped ({why})", file=sys.stderr)
            continue
        folds = [(r, f, *accuracy.fold_split(path, r, f)) for r in range(5) for f in range(2)]
        present = len(np.unique(folds[0][2].y))
        cells = []
        for cap in caps:
            stochastic.GAIN_MAX_CLASS_CUTS = cap
            res = []
            for r, f, train, test in folds:
                clf = accuracy.our_classifier("HDP ESKDB", 1000, accuracy.seed_of(r, f) + args.seed_offset).fit(train)
                m = accuracy.metrics(clf.predict_proba(test), test.y, 0.0, 0.0)
                res.append((m["zero_one"], m["rmse"], m["log_loss"]))
            cells.append(" / ".join(f"{x:.4f}" for x in np.mean(res, axis=0)))
        stochastic.GAIN_MAX_CLASS_CUTS = keep
        print(f"| {name} | {present} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
