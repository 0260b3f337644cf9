"""How should an ensemble with HDP tables select its members?

Each ESKDB member is an SkDB: kDB-K on the member's order, then the prefix n* and the parent count
k* <= K of the lowest leave-one-out RMSE on the training rows. The published SkDB scores the
candidates with flat m-estimates (m = 1: every context smoothed towards the uniform distribution),
which punish deep contexts of few rows hard; HDP tables smooth each context towards its parent
context's estimate, so deep contexts cost them far less. This fits the default ensemble (ESKDB, 20
members, K = 5, HDP, auto iterations, one thread) in the 5x2 folds of benchmarks/accuracy.py with
``random_state = 10 r + f + --seed-offset`` (an offset other than 0 gives other cut points, orders
and chains than the accuracy tables', to choose without their seeds) under each selection of
``--variants``:

* ``flat``: the published rule, flat m-estimates with m = 1 (a single SkDB's, and an ensemble's with m-estimate tables);
* ``hier-M``: hierarchical m-estimates with m = M, each context's estimate smoothed towards its
  parent context's (``config.HDP_SELECTION_M``; the default's M is 3);
* ``budget-M``: hierarchical m-estimates with m = M, among the models no larger (in table cells) than
  the one the flat rule selects for the same member (both leave-one-out grids computed; patched in
  here, not a library option);
* ``none``: no selection, every member kDB-5 on all its informative attributes (what the selection
  is weighed against);
* ``rows-N``: the default selection (``hier-3``), scoring about N rows of a larger training set
  (``config.SELECTION_ROWS``, 65,536 by default; the estimates still count every row);
* ``struct-N``: the default selection, both its passes (the tries' counts and the leave-one-out
  scores) on about N rows of a larger training set, chosen by a hash of each row (patched in here,
  not a library option); the member's order and parents, and its tables, still use every row. The
  cell cap is checked on the subsample's tries, so a member whose tables on every row pass it stops
  the fit (TooLargeError; seen on LetterRecognition at 2,048 and 4,096 rows);
* ``tying-T``: the default selection, the concentrations tied by ``T`` (``tying=T``: none, same-parent,
  level, the default, or single).

It prints, per data set, each variant's mean 0-1 loss, RMSE and log-loss over the 10 test folds and
its members' mean n* and k*, then the means over the data sets and each variant's wins and losses
against the first variant listed. Training seconds are printed for information only (the runs share the machine).
Results are cached per (offset, members, data set, variant, fold) under benchmarks/.cache/selection/, keyed
by those and not by code: delete the cache after a change to the model.

Usage::

    python benchmarks/bench_selection.py --mlbench-dir DIR --jobs 2          # the docs' 30 sets
    python benchmarks/bench_selection.py --datasets glass,vote --variants flat,hier-10
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import accuracy  # noqa: E402

#: the large sets first, so that two workers finish together
DATASETS = ["mlbench-LetterRecognition", "mlbench-Shuttle", "mlbench-Satellite", "mlbench-DNA", "weather.nominal",
            "weather.numeric", "contact-lenses", "labor", "iris", "iris.2D", "glass", "breast-cancer", "ionosphere",
            "vote", "diabetes", "soybean", "unbalanced", "credit-g", "segment-challenge", "supermarket",
            "mlbench-Zoo", "mlbench-Sonar", "mlbench-Glass", "mlbench-Ionosphere", "mlbench-HouseVotes84",
            "mlbench-Soybean", "mlbench-BreastCancer", "mlbench-PimaIndiansDiabetes", "mlbench-Vehicle",
            "mlbench-Vowel"]
VARIANTS = ["flat", "hier-3", "hier-10", "hier-30"]
CACHE = HERE / ".cache" / "selection"


def _apply(variant: str) -> None:
    """Set this process's selection to ``variant`` (see the module docstring)."""
    from hdp_plugin import config
    from hdp_plugin.model import pipeline
    from hdp_plugin.structure import selective

    from hdp_plugin.model import rows

    pipeline.FitPlan.selection_m = _PLAN_SELECTION
    selective.select_prefix_and_k = _SELECT
    config.HDP_SELECTION_M = _HDP_M
    config.SELECTION_ROWS = _ROWS
    rows.selective_kdb = selective.selective_kdb
    if variant.startswith("budget-"):
        config.HDP_SELECTION_M = float(variant[7:])
        rows.selective_kdb = _budgeted
    elif variant == "flat":
        pipeline.FitPlan.selection_m = property(lambda plan: selective.Smoothing(plan.m))
    elif variant.startswith("hier-"):
        config.HDP_SELECTION_M = float(variant[5:])
    elif variant.startswith("rows-"):
        config.SELECTION_ROWS = int(variant[5:])
    elif variant.startswith("struct-"):
        rows.selective_kdb = _on_rows(int(variant[7:]))
    elif variant.startswith("tying-"):
        pass  # a parameter of the classifier (run_one)
    elif variant == "none":
        selective.select_prefix_and_k = lambda rmse, allowed=None: (
            (rmse.shape[0] - 1, rmse.shape[1] - 1) if allowed is None or allowed[-1, -1] else _SELECT(rmse, allowed))
    else:
        raise ValueError(f"unknown variant {variant!r}")


def _budgeted(X, y, stats, max_k, *, m, order=None, max_cells=None):
    """``selective_kdb`` with hierarchical ``m``, among the models no larger than the flat rule's choice."""
    from hdp_plugin.structure import selective

    passes = selective.RowPasses(X, y)
    full = selective.kdb(stats, max_k, order=order)
    tries = passes.tries(stats, full.parents)
    order_ = np.asarray(full.order, dtype=np.int64)
    flat = selective._selected(stats, full, tries, passes.loo(stats, tries, order_, max_k, 1.0), max_k, 1.0, max_cells)
    cells = selective.tree_cells(stats, tries, max_k)[order_]
    grid = np.vstack([np.zeros((1, max_k + 1), np.int64), np.cumsum(cells, axis=0)])
    budget = int(grid[flat.info["n_star"], flat.info["k_star"]])
    budget = budget if max_cells is None else min(budget, max_cells)
    return selective._selected(stats, full, tries, passes.loo(stats, tries, order_, max_k, m), max_k, m, budget)


def _on_rows(n_rows: int):
    """``selective_kdb`` whose tries and leave-one-out pass read about ``n_rows`` of the rows (a row is
    read when a hash of its codes and class falls in the first ``n_rows / n`` of the hash's range)."""
    from hdp_plugin.structure import selective

    def select(X, y, stats, max_k, *, m, order=None, max_cells=None):
        if X.shape[0] > n_rows:
            h = selective._row_hash(X, y, np.uint64(0x9E3779B97F4A7C15))
            keep = h < np.uint64(min(int(n_rows / X.shape[0] * 2.0**64), 2**64 - 1))
            X, y = np.ascontiguousarray(X[keep]), np.ascontiguousarray(y[keep])
        return selective.selective_kdb(X, y, stats, max_k, m=selective.smoothing(m)._replace(rows=0), order=order,
                                       max_cells=max_cells)
    return select


def _originals():
    from hdp_plugin import config
    from hdp_plugin.model import pipeline
    from hdp_plugin.structure import selective

    return pipeline.FitPlan.selection_m, selective.select_prefix_and_k, config.HDP_SELECTION_M, config.SELECTION_ROWS


_PLAN_SELECTION, _SELECT, _HDP_M, _ROWS = _originals()


def cache_dir(root: Path, offset: int, n_members: int) -> Path:
    """Where the results of one seed offset and ensemble size are kept."""
    return root / f"{offset}-e{n_members}"


def run_one(task) -> None:
    name, path, variant, r, f, offset, n_members, root = task
    out = cache_dir(root, offset, n_members) / f"{name}__{variant}__{r}{f}.json"
    if out.exists():
        return
    _apply(variant)
    from hdp_plugin import BayesNetClassifier

    train, test = accuracy.fold_split(path, r, f)
    more = {"tying": variant[6:]} if variant.startswith("tying-") else {}
    clf = BayesNetClassifier(random_state=accuracy.seed_of(r, f) + offset, n_members=n_members, n_jobs=1, **more)
    t0 = time.perf_counter()
    clf.fit(train)
    secs = time.perf_counter() - t0
    m = accuracy.metrics(clf.predict_proba(test), test.y, secs, 0.0)
    m["nk"] = [[len(mb.structure.kept), mb.structure.k] for mb in clf.members_]
    m["cells"] = [int(mb.tables.log_probs.size) for mb in clf.members_]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(m))
    tmp.replace(out)


def summary(names: list[str], variants: list[str], offset: int, n_members: int = 20, root: Path = CACHE,
            repeats: int = 5) -> str:
    res = {}
    for n in names:
        for v in variants:
            folds = [cache_dir(root, offset, n_members) / f"{n}__{v}__{r}{f}.json" for r in range(repeats)
                     for f in range(2)]
            if all(p.exists() for p in folds):
                rec = [json.loads(p.read_text()) for p in folds]
                nk = np.array([x["nk"] for x in rec], dtype=float)
                res[n, v] = {"zero_one": np.mean([x["zero_one"] for x in rec]), "rmse": np.mean([x["rmse"] for x in rec]),
                             "log_loss": np.mean([x["log_loss"] for x in rec]), "n": nk[..., 0].mean(),
                             "k": nk[..., 1].mean(), "s": np.mean([x["train_s"] for x in rec])}
    names = [n for n in names if all((n, v) in res for v in variants)]
    lines = [f"ESKDB ({n_members} members, K = 5, HDP, auto iterations), {repeats}x2 cross-validation, `random_state` "
             f"+ {offset}; {len(names)} data sets. Each cell: 0-1 loss / RMSE / log-loss (means over the "
             f"{2 * repeats} test folds), then the members' mean n* and k*.", "",
             "| data set | " + " | ".join(variants) + " |", "|---|" + "---|" * len(variants)]
    for n in names:
        cells = [f"{res[n, v]['zero_one']:.4f} / {res[n, v]['rmse']:.4f} / {res[n, v]['log_loss']:.4f} "
                 f"(n* {res[n, v]['n']:.1f}, k* {res[n, v]['k']:.2f})" for v in variants]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    base = variants[0]  # the variant the others are weighed against
    lines += ["", f"| variant | mean 0-1 | mean RMSE | mean log-loss | mean k* | 0-1 against {base} | RMSE against "
              f"{base} | log-loss against {base} | train s per fold (summed over the sets; shared machine) |",
              "|---|---:|---:|---:|---:|---|---|---|---:|"]
    for v in variants:
        row = [f"{np.mean([res[n, v][m] for n in names]):.4f}" for m in ("zero_one", "rmse", "log_loss")]
        row.append(f"{np.mean([res[n, v]['k'] for n in names]):.2f}")
        for m in ("zero_one", "rmse", "log_loss"):
            a = np.array([round(res[n, v][m], 4) for n in names])
            b = np.array([round(res[n, base][m], 4) for n in names])
            row.append(f"{int((a < b).sum())}/{int((a == b).sum())}/{int((a > b).sum())}")
        row.append(f"{sum(res[n, v]['s'] for n in names):.1f}")
        lines.append(f"| {v} | " + " | ".join(row) + " |")
    lines += ["", f"Against {base}: wins/draws/losses at 4 decimals (a win is a lower mean)."]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--seed-offset", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=5, help="Repetitions of 2-fold cross-validation (5: the docs').")
    ap.add_argument("--n-members", type=int, default=20)
    ap.add_argument("--cache-dir", type=Path, default=CACHE)
    ap.add_argument("--arff-dir", type=Path, default=Path("/tmp/wekadeb/usr/share/doc/weka/examples"))
    ap.add_argument("--mlbench-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    variants = args.variants.split(",")
    for v in variants:
        numbered = any(v.startswith(p) and v[len(p):].replace(".", "", 1).isdigit()
                       for p in ("hier-", "budget-", "rows-", "struct-"))
        tied = v.startswith("tying-") and v[6:] in ("none", "same-parent", "level", "single")
        if v not in ("flat", "none") and not numbered and not tied:
            ap.error(f"unknown variant {v!r}: flat, none, hier-M, budget-M, rows-N, struct-N or tying-T")
    names, tasks = [], []
    for name in args.datasets.split(","):
        path, why = accuracy.find_dataset(name, [HERE.parent / "tests" / "data", args.arff_dir], args.mlbench_dir)
        if path is None:
            print(f"{name}: skipped ({why})", file=sys.stderr)
            continue
        names.append(name)
        tasks += [(name, path, v, r, f, args.seed_offset, args.n_members, args.cache_dir) for v in variants
                  for r in range(args.repeats) for f in range(2)]
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            list(pool.map(run_one, tasks))
    else:
        for t in tasks:
            run_one(t)
    print(summary(names, variants, args.seed_offset, args.n_members, args.cache_dir, args.repeats))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
