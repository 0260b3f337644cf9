"""How many Gibbs iterations the HDP estimates need: accuracy against iterations.

Run (resumable; one JSON file per data set, method and fold under --cache-dir):

    python benchmarks/convergence.py --jobs 2 -o benchmarks/studies.md --plot benchmarks/convergence.svg

Protocol: the 5x2 cross-validation folds of benchmarks/accuracy.py (same seeds), on the 16
classification ARFF files of Debian's ``weka`` package. Every (method, fold) runs the sampler once,
for the largest number of iterations of the grid, and reads the running sums of the estimates at
checkpoints (:func:`hdp_plugin.hdp.sampler.sample`'s ``on_checkpoint``). The chain does not depend
on the burn-in (it only decides which iterations are averaged), so the tables of a run of ``i``
iterations with the default burn-in ``b = min(1000, i // 10)`` are, exactly up to rounding,
``(S(i) - S(b)) / (i - b)`` where ``S(j)`` is the sum of the first ``j`` iterations' estimates.
One run therefore gives the test RMSE, log-loss and 0-1 loss of every point of the grid as if each
had been run on its own with the same seed.

It also records, at every point ``i`` whose half is on the grid, the change of the averaged tables
from ``i / 2`` to ``i``: the mean over the training rows' leaf cells of ``|log p_i - log p_{i/2}|``
(cells weighted by their data counts), which is what a stopping rule can read while sampling.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import accuracy  # noqa: E402
from report_sections import wrap, write_section  # noqa: E402

GRID = [50, 100, 125, 150, 200, 250, 300, 400, 500, 600, 750, 1000, 1250, 1500, 2000, 2500, 3000, 4000, 5000]
# the stopping rules compared: check at RULE_CHECKS (each against its half), stop when the change is
# below the tolerance, per tree ("tree") or for the whole model at once ("model")
RULE_CHECKS = [250, 500, 1000, 2000, 4000, 5000]
RULE_TOLS = [0.02, 0.01, 0.005, 0.0025, 0.001]
# name: (per tree or the whole model, first check, cells weighted by their data counts)
RULE_MODES = {"tree": ("tree", 250, True), "model": ("model", 250, True), "tree-from-500": ("tree", 500, True),
              "tree-unweighted": ("tree", 250, False), "tree-unweighted-from-500": ("tree", 500, False)}
METHODS = {f"kDB-{k}": ("kdb", k) for k in range(1, 6)} | {"SkDB": ("skdb", 5), "ESKDB": ("eskdb", 5)}
ESKDB_MEMBERS = 20


def burn(i: int) -> int:
    from hdp_plugin.hdp.sampler import default_burn_in

    return default_burn_in(i)


class _Recorder:
    """An engine whose sampler runs ``max(grid)`` iterations from burn-in 0 and keeps the running sums."""

    name = "convergence-study"

    def __init__(self, grid):
        self.grid = list(grid)
        self.sums: dict[int, np.ndarray] = {}
        self.trees = None
        self.sampled = None  # (trees, cells) the sampler ran on

    def sample(self, trees, **kw):
        from hdp_plugin.hdp.sampler import sample, sampler_cells

        checks = sorted(set(self.grid) | {burn(i) for i in self.grid} - {0})
        cells = kw.get("cells")
        self.sampled = (trees, sampler_cells(trees) if cells is None else cells)

        def keep(it, sums):
            self.sums[it] = sums

        kw.update(iterations=max(self.grid), burn_in=0, checkpoints=checks, on_checkpoint=keep)
        return sample(trees, **kw)

    def tables(self, i: int, b: int | None = None) -> np.ndarray:
        """The averaged tables of a run of ``i`` iterations with burn-in ``b`` (by default the default's),
        every value of every node of the model's trees (an unobserved value's as the lean tables derive it)."""
        from hdp_plugin.hdp.tables import ProbabilityTables

        b = burn(i) if b is None else b
        s = (self.sums[i] - (self.sums[b] if b else 0.0)) / (i - b)
        trees, cells = self.sampled
        return np.exp(ProbabilityTables.from_sampler(trees, cells, s, np.zeros(trees.n_classes)).dense_log_probs())


def recorded_fit(clf, train, grid):
    """Fit ``clf`` on ``train`` with a :class:`_Recorder` of ``grid`` as its engine: ``(recorder, seconds)``.

    The recorder's trees and sums are then those of all the model's trees (its members' one after the
    other): a tree that shares another's estimation problem is not sampled and takes that tree's sums
    (the sampler's ``sources``), as the fit gave it that tree's tables. ``recorder.copies`` marks those
    trees (no sampling of their own: no cost)."""
    from hdp_plugin.distributed import use_engine
    from hdp_plugin.hdp.trees import concatenate_trees, tree_sources
    from hdp_plugin.model.ensemble import member_trees

    rec = _Recorder(grid)
    t0 = time.perf_counter()
    with use_engine(rec):
        clf.fit(train)
    seconds = time.perf_counter() - t0
    nets = [member_trees(mb, train) for mb in clf.members_]  # the dense trees the fit sampled
    trees = nets[0] if len(nets) == 1 else concatenate_trees(nets)[0]
    source = tree_sources(trees)
    if rec.sampled[0].n_trees != trees.n_trees or rec.sampled[0].n_cells != trees.n_cells:
        raise RuntimeError("the recorded sums do not cover the model's cells")
    rec.trees, rec.copies = trees, source != np.arange(trees.n_trees)
    rec.nets = nets
    return rec, seconds


def _set_tables(clf, rec, p: np.ndarray) -> None:
    """Give every member of ``clf`` the (dense, all members one after the other) tables ``p``, made sparse
    as a fit makes them."""
    from hdp_plugin.hdp.tables import ProbabilityTables

    with np.errstate(divide="ignore"):
        logp = np.log(p)
    lo = 0
    for mb, trees in zip(clf.members_, rec.nets):
        n = trees.n_cells
        mb.tables = ProbabilityTables.from_dense(trees, logp[lo:lo + n], mb.tables.log_prior, backoff_to_parent=True)
        lo += n


def change(trees, p_new: np.ndarray, p_old: np.ndarray) -> float:
    """Mean |log p_new - log p_old| over the leaf cells, weighted by their data counts."""
    w = trees.leaf_counts.astype(np.float64)
    m = w > 0
    if not m.any():
        return 0.0
    return float(np.sum(w[m] * np.abs(np.log(p_new[m]) - np.log(p_old[m]))) / w[m].sum())


def tree_changes(trees, p_new: np.ndarray, p_old: np.ndarray, weighted: bool = True) -> np.ndarray:
    """:func:`change` of every tree on its own (``weighted=False``: every leaf cell with data counts once)."""
    cs = trees.node_cell_start[trees.tree_node_start]
    w = trees.leaf_counts.astype(np.float64)
    if not weighted:
        w = (w > 0).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(w > 0, w * np.abs(np.log(p_new) - np.log(p_old)), 0.0)
    num = np.add.reduceat(d, cs[:-1]) if trees.n_trees else np.zeros(0)
    den = np.add.reduceat(w, cs[:-1]) if trees.n_trees else np.zeros(0)
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def rule_tables(rec, mode: str, tol: float, first: int = RULE_CHECKS[0], weighted: bool = True):
    """The tables a stopping rule would give, and its cost: (tables, stop iteration per tree,
    cost as a fraction of running every tree to the last check)."""
    trees = rec.trees
    cs = trees.node_cell_start[trees.tree_node_start]
    cells = np.where(rec.copies, 0.0, np.diff(cs).astype(np.float64))  # a shared tree is sampled once
    stop = np.full(trees.n_trees, RULE_CHECKS[-1], np.int64)
    done = np.zeros(trees.n_trees, bool)
    for i in RULE_CHECKS[:-1]:
        if i < first:
            continue
        ch = tree_changes(trees, rec.tables(i), rec.tables(i // 2), weighted)
        if mode == "model":
            w = np.add.reduceat(trees.leaf_counts.astype(np.float64), cs[:-1]) if trees.n_trees else cells
            tot = float(np.sum(ch * w) / w.sum()) if w.sum() > 0 else 0.0
            now = np.full(trees.n_trees, tot < tol) & ~done
        else:
            now = (ch < tol) & ~done
        stop[now] = i
        done |= now
    p = np.empty(trees.n_cells)
    for tr in range(trees.n_trees):
        p[cs[tr]:cs[tr + 1]] = rec.tables(int(stop[tr]))[cs[tr]:cs[tr + 1]]
    cost = float(np.sum(stop * cells) / (RULE_CHECKS[-1] * cells.sum())) if cells.sum() else 0.0
    return p, stop, cost


def run_one(name: str, path: str, method: str, r: int, f: int, out: str) -> str:
    from hdp_plugin import BayesNetClassifier

    train, test = accuracy.fold_split(path, r, f)
    structure, k = METHODS[method]
    extra = {"n_members": ESKDB_MEMBERS} if structure == "eskdb" else {}
    clf = BayesNetClassifier(structure=structure, k=k, iterations=max(GRID), random_state=accuracy.seed_of(r, f),
                             n_jobs=1, **extra)
    rec, fit_s = recorded_fit(clf, train, GRID)
    points = {}
    for i in GRID:
        p = rec.tables(i)
        _set_tables(clf, rec, p)
        m = accuracy.metrics(clf.predict_proba(test), test.y, 0.0, 0.0)
        pt = {key: m[key] for key in ("rmse", "log_loss", "zero_one")}
        if i // 2 in rec.sums and i % 2 == 0 and i // 2 in GRID:
            pt["change"] = change(rec.trees, p, rec.tables(i // 2))
        points[str(i)] = pt
    rules = {}
    for mode in RULE_MODES:
        kind, first, weighted = RULE_MODES[mode]
        for tol in RULE_TOLS:
            p, stop, cost = rule_tables(rec, kind, tol, first, weighted)
            _set_tables(clf, rec, p)
            m = accuracy.metrics(clf.predict_proba(test), test.y, 0.0, 0.0)
            rules[f"{mode}:{tol}"] = {"rmse": m["rmse"], "log_loss": m["log_loss"], "zero_one": m["zero_one"],
                                      "cost": cost, "max_stop": int(stop.max(initial=0)),
                                      "mean_stop": float(stop.mean()) if stop.size else 0.0}
    accuracy.save(Path(out), {"method": method, "seed": accuracy.seed_of(r, f), "fit_s": fit_s,
                              "cells": int(rec.trees.n_cells), "points": points, "rules": rules})
    return f"{name} {method} r{r}f{f} {fit_s:.1f}s"


def collect(cache: Path, datasets, methods, repeats=5):
    res = {}
    for d in datasets:
        for m in methods:
            recs = [json.loads(p.read_text()) for r in range(repeats) for f in range(2)
                    if (p := cache / d / m / f"r{r}f{f}.json").exists()]
            if len(recs) == 2 * repeats:
                res[(d, m)] = recs
    return res


def render(res, datasets, methods, parts=("curves", "fewest", "rules")) -> str:
    """The report: per method, mean test RMSE/log-loss relative to 5000 iterations at each grid point
    (``curves``), the fewest iterations within a tolerance on every data set and the change statistic
    (``fewest``), and the stopping rules (``rules``)."""
    top = str(max(GRID))
    out = []
    lines = ["Mean over the 16 data sets of (measure at i iterations) - (measure at 5000 iterations), "
             "each data set's measure the mean of its 10 test folds. Positive: worse than 5000.", ""]
    lines.append("| method | measure | " + " | ".join(str(i) for i in GRID) + " |")
    lines.append("|---|---|" + "---:|" * len(GRID))
    for m in methods:
        sets = [d for d in datasets if (d, m) in res]
        if not sets:
            continue
        for meas in ("rmse", "log_loss"):
            row = []
            for i in GRID:
                diffs = [np.mean([r["points"][str(i)][meas] - r["points"][top][meas] for r in res[(d, m)]])
                         for d in sets]
                row.append(f"{np.mean(diffs):+.4f}")
            lines.append(f"| {m} ({len(sets)} sets) | {meas} | " + " | ".join(row) + " |")
    if "curves" in parts:
        out += lines
    lines = ["", "Fewest iterations whose mean test RMSE is within 0.001 (and log-loss within 0.005) of the "
              "5000-iteration figure on every data set, and the largest change of the averaged tables "
              "(from i/2 to i, see the module docstring) among the folds at that point:", ""]
    lines.append("| method | RMSE within 0.001 | log-loss within 0.005 | both | change at 'both' (max over folds) |")
    lines.append("|---|---:|---:|---:|---:|")
    for m in methods:
        sets = [d for d in datasets if (d, m) in res]
        if not sets:
            continue

        def first(meas, tol):
            for i in GRID:
                if all(np.mean([r["points"][str(i)][meas] for r in res[(d, m)]])
                       <= np.mean([r["points"][top][meas] for r in res[(d, m)]]) + tol for d in sets):
                    return i
            return None

        a, b = first("rmse", 0.001), first("log_loss", 0.005)
        both = max(a, b) if a and b else None
        ch = [r["points"][str(both)].get("change") for d in sets for r in res[(d, m)]] if both else []
        ch = [c for c in ch if c is not None]
        lines.append(f"| {m} | {a} | {b} | {both} | {max(ch):.4f} |" if ch else f"| {m} | {a} | {b} | {both} | - |")
    if "fewest" in parts:
        out += lines
    lines = ["", "Stopping rules, evaluated on the same runs (checks at 250, 500, 1000, 2000 and 4000 iterations, "
             "each against half as many): `tree` stops each tree on its own once the change of its averaged tables "
             "is below the tolerance, `model` stops all trees at once on the mean change over the model; "
             "`-from-500` checks from 500 iterations on; `unweighted` counts every leaf cell with data once instead "
             "of weighting it by its data count. hdp_plugin's `iterations=None` is `tree-from-500` at 0.005. "
             "Columns: the mean over the data sets of the test RMSE and log-loss minus those at 5000 iterations, "
             "the worst data set's RMSE difference, and the sampling done as a fraction of 5000 iterations of every "
             "tree (tree cells x iterations).", ""]
    lines.append("| method | rule | tolerance | RMSE | log-loss | worst RMSE | cost | most iterations |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|")
    for m in methods:
        sets = [d for d in datasets if (d, m) in res and "rules" in res[(d, m)][0]]
        if not sets:
            continue
        for key in res[(sets[0], m)][0]["rules"]:
            mode, tol = key.split(":")
            per = {meas: [np.mean([r["rules"][key][meas] - r["points"][top][meas] for r in res[(d, m)]])
                          for d in sets] for meas in ("rmse", "log_loss")}
            cost = np.mean([r["rules"][key]["cost"] for d in sets for r in res[(d, m)]])
            most = max(r["rules"][key]["max_stop"] for d in sets for r in res[(d, m)])
            lines.append(f"| {m} ({len(sets)} sets) | {mode} | {tol} | {np.mean(per['rmse']):+.4f} | {np.mean(per['log_loss']):+.4f} | "
                         f"{max(per['rmse']):+.4f} | {cost:.2f} | {most} |")
    if "rules" in parts:
        out += lines
    return "\n".join(out).strip("\n") + "\n"


def plot(res, datasets, methods, path: Path) -> None:
    """The curves: per method, the mean over the data sets of the test RMSE and log-loss at i iterations
    minus those at 5000, against i (log scale), as an SVG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "hdp-bnc"  # the same file for the same figures
    matplotlib.rcParams["svg.fonttype"] = "none"  # text as text, not as outlines: a small file
    top = str(max(GRID))
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for m in methods:
        sets = [d for d in datasets if (d, m) in res]
        if not sets:
            continue
        for ax, meas in zip(axes, ("rmse", "log_loss")):
            y = [np.mean([np.mean([r["points"][str(i)][meas] - r["points"][top][meas] for r in res[(d, m)]])
                          for d in sets]) for i in GRID]
            ax.plot(GRID, y, marker=".", label=f"{m} ({len(sets)} sets)")
    for ax, title in zip(axes, ("test RMSE", "test log-loss")):
        ax.set_xscale("log")
        ax.axhline(0.0, color="grey", lw=0.5)
        ax.set_xlabel("Gibbs iterations (default burn-in)")
        ax.set_title(f"mean {title} minus at {top} iterations")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=",".join(accuracy.DATASETS[:16]))
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--data-dir", type=Path, action="append", default=[])
    ap.add_argument("--cache-dir", type=Path, default=HERE / ".cache" / "convergence")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("-o", "--output", type=Path)
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--parts", default="curves,fewest,rules",
                    help="What the report shows: curves, fewest, rules (comma-separated).")
    ap.add_argument("--section", default="convergence", help="The section of --output to write.")
    ap.add_argument("--plot", type=Path, help="Also draw the curves into this SVG file (needs matplotlib).")
    args = ap.parse_args(argv)
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            ap.error("--plot needs matplotlib (pip install -e '.[bench]')")
    datasets = args.datasets.split(",")
    methods = args.methods.split(",")
    dirs = args.data_dir + [ROOT / "tests" / "data", accuracy.DEBIAN_EXAMPLES]
    if not args.report_only:
        todo = []
        for d in datasets:
            path, why = accuracy.find_dataset(d, dirs)
            if path is None:
                print(f"{d}: skipped ({why})", file=sys.stderr)
                continue
            for m in methods:
                for r in range(args.repeats):
                    for f in range(2):
                        out = args.cache_dir / d / m / f"r{r}f{f}.json"
                        if not out.exists():
                            todo.append((d, str(path), m, r, f, str(out)))
        # single networks first (SkDB, the dearest, leading), the ensembles last
        todo.sort(key=lambda j: (j[2] == "ESKDB", j[2] != "SkDB"))
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            futs = [pool.submit(run_one, *j) for j in todo]
            for fut in as_completed(futs):
                print(fut.result(), file=sys.stderr, flush=True)
    res = collect(args.cache_dir, datasets, methods, args.repeats)
    text = render(res, datasets, methods, args.parts.split(","))
    if args.plot:
        plot(res, datasets, methods, args.plot)
    print(text)
    if args.output:
        write_section(args.output, wrap(args.section, text, "benchmarks/convergence.py"), args.section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
