"""How many Gibbs iterations the default ensemble needs, on the accuracy tables' data.

Run (resumable; one JSON file per data set and fold under --cache-dir):

    python benchmarks/bench_eskdb_iterations.py --markdown

Protocol: the 5x2 cross-validation folds and seeds of benchmarks/accuracy.py on the 26 data sets of
its 1000-iteration tables (Weka's 16 ARFF files and 10 of mlbench's; ``--mlbench-dir`` as there), the
default ensemble with the stochastic MDL cut points of the method's authors (ESKDB: 20 members, SkDB-5,
HDP, one thread, ``DISCRETIZATION``, which the cached results are of; the library's default cut points
are ``"stochastic-gain"``). Every fold runs the
sampler once for 1000 iterations, the tables' setting, and reads the running sums at checkpoints
(benchmarks/convergence.py's recorder): the tables of a run of ``i`` iterations with its default
burn-in are ``(S(i) - S(b)) / (i - b)``, what a run of ``i`` iterations with the same seed gives,
exactly up to rounding. So each point of the grid is the default ensemble at that many iterations.

Printed: per grid point, the mean over the data sets of the test RMSE, log-loss and 0-1 loss minus
those at 1000 iterations (each data set's figure the mean of its 10 folds), the worst data set's
RMSE and log-loss differences, and how many data sets are within 0.001 RMSE and 0.002 log-loss.

``--burn-in-study``: the same folds and seeds, the sampler run to the largest of ``BURN_IN_POINTS``
only (a shorter run of the same seed is the same chain) and read at every ``(i, b)`` of it: the
tables of ``i`` iterations with a burn-in of ``b``, ``(S(i) - S(b)) / (i - b)``. Compared with the
1000-iteration figures of the main cache (the same models there).

``--rule-study``: per-tree stopping rules for the ensemble (``RULES``: first check, cap, tolerance), at
today's default (its own cut points), each fold run once to 1000 iterations and read at every point a
rule needs; each rule gets exactly the tables a run under it gives (every tree's decision reads only its
own chain), and its cost is the sampler's work against 200 iterations for every tree. ``--seed-offset``
moves every fold's seed (other cut points, orders and chains on the same folds), to check a choice on
seeds it was not made on.
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
#: (iterations, burn-in) of --burn-in-study: the default burn-in (a tenth), a quarter and a half
BURN_IN_POINTS = [(i, b) for i in (50, 75, 100, 150, 200) for b in sorted({i // 10, i // 4, i // 2})]
MEASURES = ("rmse", "log_loss", "zero_one")
#: the 26 data sets of the 1000-iteration accuracy tables
DATASETS = accuracy.DATASETS[:16] + ["mlbench-Zoo", "mlbench-Sonar", "mlbench-Glass", "mlbench-Ionosphere",
                                     "mlbench-HouseVotes84", "mlbench-Soybean", "mlbench-BreastCancer",
                                     "mlbench-PimaIndiansDiabetes", "mlbench-Vehicle", "mlbench-Vowel"]


#: the members' cut points in this study (the default when it ran; its caches hold these results)
DISCRETIZATION = "stochastic-mdl"


def run_fold(name: str, path: str, r: int, f: int, out: str) -> str:
    from hdp_plugin import BayesNetClassifier

    train, test = accuracy.fold_split(path, r, f)
    clf = BayesNetClassifier(structure="eskdb", n_members=20, k=5, iterations=max(GRID),
                             discretization=DISCRETIZATION, random_state=accuracy.seed_of(r, f), n_jobs=1)
    rec, fit_s = convergence.recorded_fit(clf, train, GRID)
    points = {}
    for i in GRID:
        convergence._set_tables(clf, rec, rec.tables(i))
        m = accuracy.metrics(clf.predict_proba(test), test.y, 0.0, 0.0)
        points[str(i)] = {k: m[k] for k in MEASURES}
    accuracy.save(Path(out), {"seed": accuracy.seed_of(r, f), "fit_s": fit_s, "points": points})
    return f"{name} r{r}f{f} {fit_s:.1f}s"


def point_key(i: int, b: int) -> str:
    return f"{i}b{b}"


def run_fold_burn_in(name: str, path: str, r: int, f: int, out: str) -> str:
    from hdp_plugin import BayesNetClassifier

    train, test = accuracy.fold_split(path, r, f)
    top = max(i for i, _ in BURN_IN_POINTS)
    clf = BayesNetClassifier(structure="eskdb", n_members=20, k=5, iterations=top,
                             discretization=DISCRETIZATION, random_state=accuracy.seed_of(r, f), n_jobs=1)
    rec, fit_s = convergence.recorded_fit(clf, train, sorted({x for p in BURN_IN_POINTS for x in p} - {0}))
    points = {}
    for i, b in BURN_IN_POINTS:
        convergence._set_tables(clf, rec, rec.tables(i, b))
        m = accuracy.metrics(clf.predict_proba(test), test.y, 0.0, 0.0)
        points[point_key(i, b)] = {k: m[k] for k in MEASURES}
    accuracy.save(Path(out), {"seed": accuracy.seed_of(r, f), "fit_s": fit_s, "points": points})
    return f"{name} r{r}f{f} {fit_s:.1f}s"


#: --rule-study: the fixed lengths compared, and the per-tree stopping rules compared: (first check, cap,
#: tolerance); a tree is checked at the first check, its double, ... below the cap (each against a run of
#: half as many iterations, as the sampler's tolerance does) and stops at the first check whose change is
#: below the tolerance, else at the cap
RULE_FIXED = [25, 50, 100, 200, 1000]
RULES = [(first, 100, tol) for first in (25, 50) for tol in (0.005, 0.01)] \
    + [(first, 200, tol) for first in (50, 75, 100) for tol in (0.0025, 0.005, 0.0075, 0.01)] \
    + [(first, 400, tol) for first in (50, 100) for tol in (0.005, 0.01)]
RULE_GRID = [12, 25, 37, 50, 75, 100, 150, 200, 400, 1000]


def rule_key(first: int, cap: int, tol: float) -> str:
    return f"{first}-{cap}@{tol}"


def tree_costs(trees) -> np.ndarray:
    """The sampler's estimate of one iteration's cost of each tree (hdp_plugin.hdp.sampler._setup's)."""
    from hdp_plugin.hdp.sampler import tree_layout

    layout = tree_layout(trees, "level", trees.raw_counts(compiled=True))
    cells = np.diff(trees.node_cell_start[trees.tree_node_start])
    return 35.0 * np.diff(layout.tree_act_start) + 2.5 * cells + 12.0 * np.diff(trees.tree_node_start)


def run_fold_rules(name: str, path: str, r: int, f: int, out: str, seed_offset: int = 0) -> str:
    """One fold of --rule-study: the default ensemble (its own cut points, today's default) run to
    ``max(RULE_GRID)`` iterations once, read as every fixed length of RULE_FIXED and every rule of RULES."""
    from hdp_plugin import BayesNetClassifier

    train, test = accuracy.fold_split(path, r, f)
    seed = accuracy.seed_of(r, f) + seed_offset
    clf = BayesNetClassifier(iterations=max(RULE_GRID), random_state=seed, n_jobs=1)
    rec, fit_s = convergence.recorded_fit(clf, train, RULE_GRID)
    trees = rec.trees
    cs = trees.node_cell_start[trees.tree_node_start]
    cost = np.where(rec.copies, 0.0, tree_costs(trees))  # a copy of another tree's tables costs nothing
    points = {}
    for i in RULE_FIXED:
        convergence._set_tables(clf, rec, rec.tables(i))
        m = accuracy.metrics(clf.predict_proba(test), test.y, 0.0, 0.0)
        points[str(i)] = {k: m[k] for k in MEASURES}
    changes = {i: convergence.tree_changes(trees, rec.tables(i), rec.tables(i // 2))
               for i in RULE_GRID if i // 2 in RULE_GRID}
    for first, cap, tol in RULES:
        stop = np.full(trees.n_trees, cap, np.int64)
        i = first
        while i < cap:
            stop[(stop == cap) & (changes[i] < tol)] = i
            i *= 2
        p = np.empty(trees.n_cells)
        for s in np.unique(stop):
            tab = rec.tables(int(s))
            for tr in np.nonzero(stop == s)[0]:
                p[cs[tr]:cs[tr + 1]] = tab[cs[tr]:cs[tr + 1]]
        convergence._set_tables(clf, rec, p)
        m = accuracy.metrics(clf.predict_proba(test), test.y, 0.0, 0.0)
        points[rule_key(first, cap, tol)] = {**{k: m[k] for k in MEASURES},
                                             "cost": float(np.sum(stop * cost) / (200.0 * cost.sum()))
                                             if cost.sum() else 0.0}
    accuracy.save(Path(out), {"seed": seed, "fit_s": fit_s, "points": points})
    return f"{name} r{r}f{f} {fit_s:.1f}s"


def report_rules(cache: Path, datasets: list[str]) -> str:
    top = max(RULE_FIXED)
    keys = [str(i) for i in RULE_FIXED] + [rule_key(*x) for x in RULES]
    per = {}
    for d in datasets:
        recs = [json.loads(p.read_text()) for r in range(5) for f in range(2)
                if (p := cache / d / f"r{r}f{f}.json").exists()]
        if len(recs) == 10:
            per[d] = {k: {m: float(np.mean([x["points"][k][m] for x in recs]))
                          for m in MEASURES + (("cost",) if "@" in k else ())} for k in keys}
    lines = [f"Default ensemble, 5x2 cross-validation on {len(per)} data sets: each length or rule's test measure minus "
             f"that at {top} iterations (mean over the data sets of each set's 10-fold mean; worst: the largest over "
             "the data sets; positive: worse); cost: the sampler's work as a fraction of 200 iterations for every "
             "tree (per-iteration cost of each tree as the sampler estimates it; mean over the data sets). A rule "
             "first-cap@tol checks each tree at first, 2 first, ... below cap against a run of half as many "
             "iterations and stops it once the change is below tol.", "",
             "| length or rule | cost | RMSE | log-loss | 0-1 loss | worst RMSE | worst log-loss | sets within 0.001 "
             "RMSE and 0.002 log-loss |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for k in keys:
        d = {m: np.array([per[s][k][m] - per[s][str(top)][m] for s in per]) for m in MEASURES}
        within = int(np.sum((d["rmse"] <= 0.001) & (d["log_loss"] <= 0.002)))
        c = float(np.mean([per[s][k]["cost"] for s in per])) if "@" in k else int(k) / 200.0
        worst = max(per, key=lambda s: per[s][k]["log_loss"] - per[s][str(top)]["log_loss"])
        lines.append(f"| {k} | {c:.2f} | {d['rmse'].mean():+.4f} | {d['log_loss'].mean():+.4f} | "
                     f"{d['zero_one'].mean():+.4f} | {d['rmse'].max():+.4f} | {d['log_loss'].max():+.4f} ({worst}) | "
                     f"{within} of {len(per)} |")
    return "\n".join(lines)


def _fold_means(cache: Path, d: str, keys) -> dict | None:
    recs = [json.loads(p.read_text()) for r in range(5) for f in range(2) if (p := cache / d / f"r{r}f{f}.json").exists()]
    if len(recs) != 10:
        return None
    return {k: {m: float(np.mean([x["points"][str(k)][m] for x in recs])) for m in MEASURES} for k in keys}


def report_burn_in(cache: Path, main_cache: Path, datasets: list[str]) -> str:
    top = max(GRID)
    keys = [point_key(i, b) for i, b in BURN_IN_POINTS]
    per = {}
    for d in datasets:
        ref, got = _fold_means(main_cache, d, [top]), _fold_means(cache, d, keys)
        if ref and got:
            per[d] = {k: {m: got[k][m] - ref[top][m] for m in MEASURES} for k in keys}
    lines = [f"Default ensemble, 5x2 cross-validation on {len(per)} data sets: the test measure at i iterations with "
             f"a burn-in of b minus that at {top} iterations (default burn-in), mean over the data sets of each set's "
             "10-fold mean; worst: the largest over the data sets. Positive: worse.", "",
             "| iterations | burn-in | RMSE | log-loss | 0-1 loss | worst RMSE | worst log-loss | sets within 0.001 "
             "RMSE and 0.002 log-loss |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (i, b), k in zip(BURN_IN_POINTS, keys):
        d = {m: np.array([per[s][k][m] for s in per]) for m in MEASURES}
        within = int(np.sum((d["rmse"] <= 0.001) & (d["log_loss"] <= 0.002)))
        worst = max(per, key=lambda s: per[s][k]["log_loss"])
        lines.append(f"| {i} | {b} | {d['rmse'].mean():+.4f} | {d['log_loss'].mean():+.4f} | "
                     f"{d['zero_one'].mean():+.4f} | {d['rmse'].max():+.4f} | {d['log_loss'].max():+.4f} ({worst}) | "
                     f"{within} of {len(per)} |")
    return "\n".join(lines)


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
    ap.add_argument("--markdown", action="store_true", help="Print the table only (for a generated section).")
    ap.add_argument("--burn-in-study", action="store_true",
                    help="Iterations against burn-in (BURN_IN_POINTS), cached under --cache-dir's sibling eskdb-burn-in.")
    ap.add_argument("--rule-study", action="store_true",
                    help="Per-tree stopping rules (RULES) at today's default, cached under eskdb-rules beside --cache-dir.")
    ap.add_argument("--seed-offset", type=int, default=0,
                    help="--rule-study: add this to every fold's seed (other chains and cut points on the same folds).")
    args = ap.parse_args(argv)
    main_cache = args.cache_dir
    if args.burn_in_study:
        args.cache_dir = args.cache_dir.parent / "eskdb-burn-in"
    if args.rule_study:
        args.cache_dir = args.cache_dir.parent / ("eskdb-rules" + (f"+{args.seed_offset}" if args.seed_offset else ""))
    fold = run_fold_rules if args.rule_study else run_fold_burn_in if args.burn_in_study else run_fold
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
                    todo.append((d, str(path), r, f, str(out)) + ((args.seed_offset,) if args.rule_study else ()))
    if args.jobs > 1 and todo:
        with ProcessPoolExecutor(args.jobs) as pool:
            for fut in as_completed([pool.submit(fold, *t) for t in todo]):
                print(fut.result(), file=sys.stderr)
    else:
        for t in todo:
            print(fold(*t), file=sys.stderr)
    if args.rule_study:
        print(report_rules(args.cache_dir, datasets))
    else:
        print(report_burn_in(args.cache_dir, main_cache, datasets) if args.burn_in_study
              else report(args.cache_dir, datasets))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
