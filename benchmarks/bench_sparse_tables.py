"""How far the sparse tables of a model move its predictions from the dense tables its sampler averaged.

Run:

    python benchmarks/bench_sparse_tables.py [--datasets a,b] [--repeats 5] [--mlbench-dir DIR]

A fitted model keeps, at every node of its context trees, the cells its training rows hold and a
back-off weight for the others (docs/model-format.md, section 3); the sampler averages an estimate of
every cell. For the baseline estimators and for a single HDP sample the two are the same; averaged
over many samples an unseen value's estimate is the back-off weight times its parent's, where the
dense tables average the samples' products. This runs the default classifier on every fold of the
5x2 cross-validation of benchmarks/accuracy.py (same folds and seeds), keeps the dense tables the
sampler returned, and predicts each test fold twice from the same fit: with the model's sparse tables
and with the dense ones. It prints per data set the mean test RMSE, log-loss (probabilities clipped at
1e-15, as accuracy.py does) and 0-1 loss of both, and the largest change of a probability.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import accuracy  # noqa: E402


class _Keeping:
    """A sampling engine that samples as the default one does and keeps what the sampler returned."""

    name = "keeping"

    def sample(self, trees, **kw):
        from hdp_plugin.hdp.sampler import sample

        result = sample(trees, **kw)
        self.probabilities = result.probabilities
        return result


def dense_proba(clf, train, test, kept: _Keeping) -> np.ndarray:
    """The test rows' class probabilities from the dense tables the fit's sampler averaged."""
    import dataclasses

    from hdp_plugin.hdp.tables import ProbabilityTables, predict_log_proba
    from hdp_plugin.hdp.trees import concatenate_trees, tree_sources
    from hdp_plugin.model.ensemble import member_trees
    from hdp_plugin.model.estimate import shared_cells
    from hdp_plugin.preprocess import apply_cut_points

    nets = [member_trees(mb, train) for mb in clf.members_]
    trees = nets[0] if len(nets) == 1 else concatenate_trees(nets)[0]
    cells = shared_cells(trees, tree_sources(trees))
    p = kept.probabilities if cells is None else kept.probabilities[cells]
    with np.errstate(divide="ignore"):
        logp = np.log(p)
    total, first = 0.0, 0
    for mb, net in zip(clf.members_, nets):
        lp = logp[first:first + net.n_cells]
        first += net.n_cells
        sparse = ProbabilityTables.from_dense(net, lp, mb.tables.log_prior, backoff_to_parent=True)
        if not np.array_equal(sparse.log_probs, mb.tables.log_probs):
            raise RuntimeError("the kept tables are not the fit's")
        every = dataclasses.replace(net, leaf_counts=net.leaf_counts + np.repeat(net.is_leaf, net.tree_card[net.node_tree]))
        dense = ProbabilityTables.from_dense(every, lp, mb.tables.log_prior, backoff_to_parent=True)
        total = total + mb.weight * np.exp(predict_log_proba(dense, apply_cut_points(test, mb.attributes).X))
    return total / sum(mb.weight for mb in clf.members_)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(accuracy.DATASETS), help="Comma list (default: the 30 sets).")
    ap.add_argument("--repeats", type=int, default=5, help="Repeats of the 2-fold cross-validation.")
    ap.add_argument("--data-dir", type=Path, action="append", default=None,
                    help="Where the Weka ARFF files are (default: accuracy.py's places).")
    ap.add_argument("--mlbench-dir", type=Path, default=None, help="r-cran-mlbench's data folder.")
    args = ap.parse_args(argv)
    from hdp_plugin.distributed import use_engine

    dirs = args.data_dir or [accuracy.DEBIAN_EXAMPLES, accuracy.ROOT / "tests" / "data"]
    print("| data set | RMSE dense | RMSE sparse | log-loss dense | log-loss sparse | 0-1 dense | 0-1 sparse "
          "| largest change of a probability |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    sums = np.zeros(6)
    n = 0
    for name in args.datasets.split(","):
        path, why = accuracy.find_dataset(name, dirs, args.mlbench_dir)
        if path is None:
            print(f"| {name} | {why} |||||||", flush=True)
            continue
        m = np.zeros(6)
        moved = 0.0
        for r in range(args.repeats):
            for f in range(2):
                train, test = accuracy.fold_split(path, r, f)
                kept = _Keeping()
                clf = accuracy.our_classifier("HDP ESKDB", 0, accuracy.seed_of(r, f))
                with use_engine(kept):
                    clf.fit(train)
                sparse = clf.predict_proba(test)
                dense = dense_proba(clf, train, test, kept)
                for j, p in enumerate((dense, sparse)):
                    got = accuracy.metrics(p, test.y, 0.0, 0.0)
                    m[[j, 2 + j, 4 + j]] += [got["rmse"], got["log_loss"], got["zero_one"]]
                moved = max(moved, float(np.abs(sparse - dense).max()))
        m /= 2 * args.repeats
        sums += m
        n += 1
        print(f"| {name} | {m[0]:.5f} | {m[1]:.5f} | {m[2]:.5f} | {m[3]:.5f} | {m[4]:.5f} | {m[5]:.5f} | {moved:.2e} |",
              flush=True)
    if n:
        s = sums / n
        print(f"| mean of {n} | {s[0]:.5f} | {s[1]:.5f} | {s[2]:.5f} | {s[3]:.5f} | {s[4]:.5f} | {s[5]:.5f} | |")
        print(f"\nsparse - dense, mean over {n} data sets: RMSE {s[1] - s[0]:+.6f}, log-loss {s[3] - s[2]:+.6f}, "
              f"0-1 loss {s[5] - s[4]:+.6f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
