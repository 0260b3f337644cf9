"""How many Gibbs iterations the default ensemble needs (issue 23, item 4), on the accuracy tables' data.

Run (resumable; one JSON file per data set and fold under --cache-dir):

    python benchmarks/bench_eskdb_iterations.py --markdown

Protocol: the 5x2 cross-validation folds and seeds of benchmarks/accuracy.py on the 26 data sets of
its 1000-iteration tables (Weka's 16 ARFF files and 10 of mlbench's; ``--mlbench-dir`` as there), the
default ensemble (ESKDB: 20 members, SkDB-5, stochastic MDL, HDP, one thread). Every fold runs the
sampler once for 1000 iterations, the tables' setting, and reads the running sums at checkpoints
(benchmarks/convergence.py's recorder): the tables of a run of ``i`` iterations with its default
burn-in are ``(S(i) - S(b)) / (i - b)``, what a run of ``i`` iterations with the same seed gives,
exactly up to rounding. So each point of the grid is the default ensemble at that many iterations.

Printed: per grid point, the mean over the data sets of the test RMSE, log-loss and 0-1 loss minus
those at 1000 iterations (each data set's figure the mean of its 10 folds), the worst data set's
RMSE and log-loss differences, and how many data sets are within 0.001 RMSE and 0.002 log-loss.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import accuracy  # noqa: E402
import convergence  # noqa: E402

GRID = [50, 100, 150, 200, 300, 500, 1000]
MEASURES = ("rmse", "log_loss", "zero_one")
#: the 26 data sets of the 1000-iteration accuracy tables
DATASETS = accuracy.DATASETS[:16] + ["mlbench-Zoo", "mlbench-Sonar", "mlbench-Glass", "mlbench-Ionosphere",
                                     "mlbench-HouseVotes84", "mlbench-Soybean", "mlbench-BreastCancer",
                                     "mlbench-PimaIndiansDiabetes", "mlbench-Vehicle", "mlbench-Vowel"]


def run_fold(name: str, path: str, r: int, f: int, out: str) -> str:
    from hdp_plugin import BayesNetClassifier

    train, test = accuracy.fold_split(path, r, f)
    clf = BayesNetClassifier(structure="eskdb", n_members=20, k=5, iterations=max(GRID),
                             random_state=accuracy.seed_of(r, f), n_jobs=1)
    rec, fit_s = convergence.recorded_fit(clf, train, GRID)
    points = {}
    for i in GRID:
        convergence._set_tables(clf, rec.tables(i))
        m = accuracy.metrics(clf.predict_proba(test), test.y, 0.0, 0.0)
        points[str(i)] = {k: m[k] for k in MEASURES}
    accuracy.save(Path(out), {"seed": accuracy.seed_of(r, f), "fit_s": fit_s, "points": points})
    return f"{name} r{r}f{f} {fit_s:.1f}s"


def report(cache: Path, datasets: list[str]) -> str:
    per = {}  # data set -> grid point -> measure -> mean over folds
    for d in datasets:
        recs = [json.loads(p.read_text()) for r in range(5) for f in range(2)
                if (p := cache / d / f"r{r}f{f}.json").exists()]
        if len(recs) == 10:
            per[d] = {i: {m: float(np.mean([x["points"][str(i)][m] for x in recs])) for m in MEASURES}
                      for i in GRID}
    top = max(GRID)
    lines = [f"Default ensemble (ESKDB, 20 members, SkDB-5, HDP), 5x2 cross-validation on {len(per)} data sets; "
             f"each figure the test measure at i iterations minus that at {top} (mean over the data sets of each "
             "set's 10-fold mean; worst: the largest over the data sets). Positive: worse than "
             f"{top}.", "",
             "| iterations | RMSE | log-loss | 0-1 loss | worst RMSE | worst log-loss | sets within 0.001 RMSE "
             "and 0.002 log-loss |", "|---:|---:|---:|---:|---:|---:|---:|"]
    for i in GRID:
        d = {m: np.array([per[s][i][m] - per[s][top][m] for s in per]) for m in MEASURES}
        within = int(np.sum((d["rmse"] <= 0.001) & (d["log_loss"] <= 0.002)))
        lines.append(f"| {i} | {d['rmse'].mean():+.4f} | {d['log_loss'].mean():+.4f} | {d['zero_one'].mean():+.4f} | "
                     f"{d['rmse'].max():+.4f} | {d['log_loss'].max():+.4f} | {within} of {len(per)} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--data-dir", type=Path, action="append", default=[])
    ap.add_argument("--mlbench-dir", type=Path)
    ap.add_argument("--cache-dir", type=Path, default=HERE / ".cache" / "eskdb-iterations")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--markdown", action="store_true", help="Print the table only (for docs/benchmarks.md).")
    args = ap.parse_args(argv)
    datasets = [d for d in args.datasets.split(",") if d]
    dirs = args.data_dir + [accuracy.ROOT / "tests" / "data", accuracy.DEBIAN_EXAMPLES]
    todo = []
    for d in datasets:
        path, why = accuracy.find_dataset(d, dirs, args.mlbench_dir, accuracy.HERE / ".cache")
        if path is None:
            print(f"skipped {d}: {why}", file=sys.stderr)
            continue
        for r in range(5):
            for f in range(2):
                out = args.cache_dir / d / f"r{r}f{f}.json"
                if not out.exists():
                    todo.append((d, str(path), r, f, str(out)))
    if args.jobs > 1 and todo:
        with ProcessPoolExecutor(args.jobs) as pool:
            for fut in as_completed([pool.submit(run_fold, *t) for t in todo]):
                print(fut.result(), file=sys.stderr)
    else:
        for t in todo:
            print(run_fold(*t), file=sys.stderr)
    print(report(args.cache_dir, datasets))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
