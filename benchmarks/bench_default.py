"""The default classifier against a random forest and the gradient boosting libraries, side by side.

Run on a quiet machine (the figures are wall-clock times):

    python benchmarks/bench_default.py [--reference-folds DIR] [--rounds 5] [--sum] [--peers CatBoost,LightGBM]

Each workload is one training set and one test set. Round by round, the two sides are fitted one
after the other on the same data, in this process, one thread each: hdp_plugin's default
(``BayesNetClassifier(random_state=0, n_jobs=1)``: ESKDB, 20 SkDB-5 members, stochastic-gain cut points, HDP,
auto iterations) and scikit-learn's ``RandomForestClassifier(n_estimators=100, n_jobs=1,
random_state=0)``, then each installed peer of ``--peers`` (default CatBoost and LightGBM, the bench extra)
as in the accuracy tables (benchmarks/peers_python.py: the raw rows, the library's native categorical
handling, one thread, defaults otherwise), with random_state 0. Printed: each side's shortest training
time over the rounds, the ratio (ours / forest's, ours / each peer's) and every side's test RMSE
(docs/method.md section 6). A warm-up fit of ours comes first, so
numba's compilation (or cache load) is not counted; first use is a figure of its own.

Workloads:

* ``--reference-folds DIR``: the published implementation's fold files (already discretised;
  ``DIR/segment-challenge/fold0_train.arff`` and ``fold0_test.arff``): ``ref-segment0``;
* Weka's raw ARFF files segment-challenge, ionosphere, credit-g and soybean (tests/data or Debian's
  weka examples): the first fold of the accuracy tables' 5x2 cross-validation (seed 0: train on
  fold 0, test on fold 1);
* ``--sum``: the same first fold of every data set of the 1000-iteration accuracy tables, the times
  summed (``--mlbench-dir`` as benchmarks/accuracy.py);
* ``--synthetic N``: N training rows of bench_scale's synthetic categorical data (benchmarks/synthetic.py:
  20 attributes, 3 classes) and 100,000 test rows of the same network: ``synthetic-N``.

``--members 5,10,20`` fits ours once per count in every round (``n_members``; member ``e`` draws from the
same stream whatever the count, so a smaller ensemble is the larger one's first members) and prints a row
per workload and count, named ``workload (E members)``, each against the forest of the same rounds: what
a smaller default would give on these workloads. The default, 20, prints the rows as named above.

The forest gets the attributes as numbers: numeric attributes as they are, nominal ones as their
codes, missing values as NaN (scikit-learn's forests split them natively).
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
import peers_python  # noqa: E402

RAW = ["segment-challenge", "ionosphere", "credit-g", "soybean"]
#: the gradient boosting peers printed beside the forest (each when its library is installed)
PEERS = ["CatBoost", "LightGBM"]


def forest_matrix(ds) -> np.ndarray:
    """The attributes of a Dataset as floats: numeric values, nominal codes, NaN for missing."""
    num = ds.numeric_columns()
    X = np.empty((ds.n_rows, ds.n_attributes), np.float64)
    for j, a in enumerate(ds.attributes):
        if j in num:
            X[:, j] = ds.numeric[:, num[j]]
        else:
            col = ds.X[:, j].astype(np.float64)
            col[ds.X[:, j] == a.missing_code] = np.nan
            X[:, j] = col
    return X


def first_fold(path: Path):
    """The accuracy tables' first fold of a data set: (train, test) Datasets (train on fold 0, test on
    fold 1 of repeat 0)."""
    return accuracy.fold_split(path, 0, 1)


def one_round(train, test, Xtr, Xte, frames, members) -> dict:
    """One fit of each side on the same data (ours once per member count): seconds and test RMSE,
    ``{count: record}`` for ours, each record also holding the forest's and the peers' figures of this
    round (``frames``: each peer's prepared training and test input)."""
    from sklearn.ensemble import RandomForestClassifier

    from hdp_plugin import BayesNetClassifier
    from hdp_plugin.model.evaluation import rmse

    ours = {}
    for e in members:
        t0 = time.perf_counter()
        fitted = BayesNetClassifier(random_state=0, n_jobs=1, n_members=e).fit(train)
        took = time.perf_counter() - t0
        ours[e] = {"ours_s": took, "ours_rmse": rmse(fitted.predict_proba(test), test.y),
                   "structure_s": fitted.fit_info_.get("structure_seconds", 0.0),
                   "sampler_s": fitted.fit_info_.get("sampler_seconds", 0.0),
                   "iterations": fitted.fit_info_.get("iterations")}
    t1 = time.perf_counter()
    forest = RandomForestClassifier(n_estimators=100, n_jobs=1, random_state=0).fit(Xtr, train.y)
    t2 = time.perf_counter()
    p_forest = np.zeros((test.n_rows, train.n_classes))
    p_forest[:, forest.classes_] = forest.predict_proba(Xte)
    side = {"forest_s": t2 - t1, "forest_rmse": rmse(p_forest, test.y)}
    for peer, (Ftr, Fte) in frames.items():
        t1 = time.perf_counter()
        predict = peers_python.fit_raw_peer(peer, Ftr, train.y, train.n_classes, 0)
        t2 = time.perf_counter()
        side[f"{peer}_s"], side[f"{peer}_rmse"] = t2 - t1, rmse(predict(Fte), test.y)
    return {e: {**rec, **side} for e, rec in ours.items()}


def run(workloads: dict, rounds: int, members, peers=()) -> dict:
    """``{(workload, count): [record per round]}``: every workload's rounds, per member count."""
    from hdp_plugin import BayesNetClassifier

    prepared = {}
    for name, (train, test) in workloads.items():
        frames = {p: (peers_python.raw_frame(p, train), peers_python.raw_frame(p, test)) for p in peers}
        prepared[name] = (train, test, forest_matrix(train), forest_matrix(test), frames)
    first = next(iter(prepared.values()))
    BayesNetClassifier(random_state=0, n_jobs=1).fit(first[0])  # warm-up: numba's compilation or cache load
    out = {(name, e): [] for name in prepared for e in members}
    for _ in range(rounds):  # round by round, every workload, the two sides one after the other
        for name, args in prepared.items():
            for e, rec in one_round(*args, members=members).items():
                out[name, e].append(rec)
    return out


def summary(name: str, recs: list, peers=()) -> dict:
    best = lambda k: min(r[k] for r in recs)  # noqa: E731
    out = {"name": name, "ours_s": best("ours_s"), "forest_s": best("forest_s"), "ours_rmse": recs[0]["ours_rmse"],
           "forest_rmse": recs[0]["forest_rmse"], "structure_s": best("structure_s"), "sampler_s": best("sampler_s"),
           "iterations": recs[0]["iterations"]}
    for p in peers:
        out[f"{p}_s"], out[f"{p}_rmse"] = best(f"{p}_s"), recs[0][f"{p}_rmse"]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reference-folds", type=Path, help="The published implementation's fold files.")
    ap.add_argument("--datasets", default=",".join(RAW), help="Raw data sets (first fold of the 5x2).")
    ap.add_argument("--sum", action="store_true", help="Also the sum over the accuracy tables' 26 data sets.")
    ap.add_argument("--mlbench-dir", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--synthetic", type=int, help="Also N rows of synthetic categorical data (bench_scale's).")
    ap.add_argument("--members", help="Ensemble sizes to fit (comma-separated; default the classifier's, 20).")
    ap.add_argument("--peers", default=",".join(PEERS),
                    help="Gradient boosting peers beside the forest (comma-separated, of " + ", ".join(PEERS)
                         + "; empty for none). A peer whose library is not installed is skipped with a warning.")
    args = ap.parse_args(argv)
    from hdp_plugin import BayesNetClassifier, read_dataset

    default = (BayesNetClassifier().n_members,)
    try:
        members = tuple(int(e) for e in args.members.split(",")) if args.members is not None else default
    except ValueError:
        ap.error(f"--members: a comma-separated list of whole numbers, got {args.members!r}")
    if not members or min(members) < 1:
        ap.error(f"--members: every count at least 1, got {args.members!r}")
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    unknown = [p for p in peers if p not in PEERS]
    if unknown:
        ap.error(f"--peers: unknown peer(s) {', '.join(unknown)}; known: {', '.join(PEERS)}")
    for p in [p for p in peers if not peers_python.available(peers_python.RAW_PEERS[p])]:
        print(f"skipped {p}: {peers_python.RAW_PEERS[p]} is not installed (pip install -e .[bench])", file=sys.stderr)
        peers.remove(p)

    dirs = [accuracy.ROOT / "tests" / "data", accuracy.DEBIAN_EXAMPLES]
    workloads = {}
    if args.reference_folds:
        d = args.reference_folds / "segment-challenge"
        workloads["ref-segment0"] = (read_dataset(d / "fold0_train.arff"), read_dataset(d / "fold0_test.arff"))
    for name in [d for d in args.datasets.split(",") if d]:
        path, why = accuracy.find_dataset(name, dirs, args.mlbench_dir, HERE / ".cache")
        if path is None:
            print(f"skipped {name}: {why}", file=sys.stderr)
            continue
        workloads[name] = first_fold(path)
    if args.synthetic:
        from synthetic import synthetic

        # two parts of one network's rows (synthetic.py's rows_seed), to train on and to test on
        workloads[f"synthetic-{args.synthetic}"] = (synthetic(args.synthetic, rows_seed=1),
                                                    synthetic(100_000, rows_seed=2))
    summed = []
    if args.sum:
        import bench_eskdb_iterations

        for name in bench_eskdb_iterations.DATASETS:
            path, why = accuracy.find_dataset(name, dirs, args.mlbench_dir, HERE / ".cache")
            if path is None:
                print(f"skipped {name} (sum): {why}", file=sys.stderr)
                continue
            key = f"sum:{name}"
            workloads[key] = first_fold(path)
            summed.append(key)
    res = run(workloads, args.rounds, members, peers)
    print(f"{args.rounds} rounds, one thread each, the same training and test rows; shortest training time per side")
    print("| workload | ours (s) | structure (s) | sampler (s) | iterations | forest (s) | ours / forest | "
          "RMSE ours | RMSE forest |" + "".join(f" {p} (s) | ours / {p} | RMSE {p} |" for p in peers))
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|" + "---:|---:|---:|" * len(peers))
    label = (lambda name, e: name) if members == default else (lambda name, e: f"{name} ({e} members)")
    rows = []
    for e in members:
        rows += [summary(label(n, e), res[n, e], peers) for n in workloads if n not in summed]
        if summed:
            parts = [summary(n, res[n, e], peers) for n in summed]
            sides = ("ours", "forest", *peers)
            rows.append({"name": label(f"sum over {len(parts)} data sets", e), "iterations": "",
                         **{k: sum(p[k] for p in parts)
                            for k in ("structure_s", "sampler_s", *(f"{x}_s" for x in sides))},
                         **{f"{x}_rmse": float(np.mean([p[f"{x}_rmse"] for p in parts])) for x in sides}})
    for s in rows:
        print(f"| {s['name']} | {s['ours_s']:.3f} | {s['structure_s']:.3f} | {s['sampler_s']:.3f} | {s['iterations']} | "
              f"{s['forest_s']:.3f} | {s['ours_s'] / s['forest_s']:.2f} | {s['ours_rmse']:.4f} | "
              f"{s['forest_rmse']:.4f} |"
              + "".join(f" {s[f'{p}_s']:.3f} | {s['ours_s'] / s[f'{p}_s']:.2f} | {s[f'{p}_rmse']:.4f} |"
                        for p in peers))
    if summed:
        print("(sum row: times summed, RMSE the mean over the data sets)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
