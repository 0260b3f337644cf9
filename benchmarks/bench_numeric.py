"""Why ESKDB's members lose 0-1 on numeric data with few rows per class.

On the numeric data sets with few training rows per class this fits the default ensemble (ESKDB:
20 SkDB-5 members, HDP tables, auto iterations, one thread) in the 5x2 cross-validation of
benchmarks/accuracy.py (``stratified_folds(y, 2, r)``, r = 0..4, ``random_state = 10 r + f``: the
folds and seeds of docs/benchmarks.md's accuracy tables, so its Weka RF column is comparable) and
records, per member:

* the number of cut points it drew for every numeric attribute, and the stopping decision at the
  attribute's whole range: ``mdl`` (some candidate has a positive MDL margin: the recursion runs),
  ``forced`` (none has: the one cut drawn in proportion to the plain gain, then stop), ``none``
  (no candidate carries information: no cut); below the top, every range that stopped ``stops``;
* the attributes SkDB kept and its k*;
* its own 0-1 loss, RMSE and log-loss on the test fold, beside the ensemble's.

It compares, on the same folds and seeds, discretisation variants (each member's cut points drawn
by a function of this file, patched into the fit; the model code is not changed):

* ``smdl``: the stochastic MDL as it is (checked to draw the library's cut points bit for bit);
* ``smdl-min2``, ``smdl-min3``: the same, then further cuts drawn in proportion to the plain gain
  (weighted by the bin's share of the rows) until every informative attribute has at least 2 (3) cuts;
* ``smdl-half``: the MDL margin with half the description-length penalty (a looser stopping rule);
* ``gain-draw``: the cut drawn in proportion to the plain information gain, kept and split further
  only if *that* cut passes Fayyad and Irani's MDL test (the top range keeps its cut anyway);
  ``gain-min2``: that, then at least 2 cuts as ``smdl-min2``;
* ``mdl``: Fayyad and Irani's deterministic MDL for every member (members differ by order only);
* ``stochastic-gain``: the library's ``discretization="stochastic-gain"`` (``gain-min2`` implemented
  in :mod:`hdp_plugin.preprocess.stochastic`; it must give ``gain-min2``'s figures exactly);

and two ways of combining the members' probabilities, on every fit: ``mean`` (the arithmetic mean,
the model's) and ``logmean`` (the normalised geometric mean).

Usage::

    python benchmarks/bench_numeric.py                       # every set and variant, 5x2 (long)
    python benchmarks/bench_numeric.py --datasets iris --variants smdl --repeats 1   # a look
    python benchmarks/bench_numeric.py --markdown            # the docs section, from the cache

Results are cached per (data set, variant, fold) under benchmarks/.cache/numeric/, so a run resumes;
they are keyed by data set, variant and fold, not by code: delete the cache after a change to the model.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # one core: prediction blocks too

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import hdp_plugin.model.pipeline as pipeline  # noqa: E402
from hdp_plugin import BayesNetClassifier, read_dataset, seeds as _seeds  # noqa: E402
from hdp_plugin.hdp.predict import predict_log_proba  # noqa: E402
from hdp_plugin.model.evaluation import stratified_folds  # noqa: E402
from hdp_plugin.preprocess import Discretizer  # noqa: E402
from hdp_plugin.preprocess.stochastic import _candidates, _draw, _entropy_bits, extra_cuts, stochastic_mdl_cut_points  # noqa: E402

DEBIAN_EXAMPLES = Path("/tmp/wekadeb/usr/share/doc/weka/examples")
DATASETS = ["iris", "glass", "ionosphere", "diabetes", "segment-challenge", "mlbench-Sonar", "mlbench-Vehicle",
            "mlbench-Vowel"]
VARIANTS = ["smdl", "smdl-min2", "smdl-min3", "smdl-half", "gain-draw", "gain-min2", "mdl", "stochastic-gain"]
#: variants that are the library's own discretisation (nothing patched)
LIBRARY = {"mdl": "mdl", "stochastic-gain": "stochastic-gain"}
CLIP = 1e-15


# ----------------------------------------------------------------------------------------------
# cut points, traced
def _margins(left, right, prior, n_rows: int, penalty: float):
    """(plain gains, MDL margins with ``penalty`` times the description-length term) of every candidate."""
    h = _entropy_bits(prior)
    h1, h2 = _entropy_bits(left), _entropy_bits(right)
    n1, n2 = left.sum(axis=1), right.sum(axis=1)
    gain = h - (n1 * h1 + n2 * h2) / n_rows
    k = np.count_nonzero(prior)
    k1, k2 = np.count_nonzero(left, axis=1), np.count_nonzero(right, axis=1)
    delta = np.log2(3.0**k - 2.0) - (k * h - k1 * h1 - k2 * h2)
    m = left.shape[0]
    return np.maximum(gain, 0.0), np.maximum(gain - penalty * (np.log2(m) + delta) / n_rows, 0.0)


def traced_cut_points(col, rng, *, draw: str = "margin", penalty: float = 1.0, min_cuts: int = 0):
    """Cut points of one attribute and what decided them (see the module docstring).

    ``draw="margin", penalty=1, min_cuts=0`` is :func:`stochastic_mdl_cut_points` exactly (the same
    uniform numbers in the same order)."""
    trace = {"top": "none", "accepted": 0, "stops": 0, "extra": 0}
    cut_at: list[int] = []
    stack = [(0, col.values.shape[0], True)]
    while stack:
        first, last, top = stack.pop()
        if last - first < 2:
            continue
        idx, left, right, prior = _candidates(col, first, last)
        if idx.shape[0] == 0 or np.count_nonzero(prior) < 2:
            continue
        gain, margin = _margins(left, right, prior, last - first, penalty)
        if draw == "margin":
            if margin.max() > 0.0:
                i = int(idx[_draw(margin, rng)])
                ok = True
            elif top and gain.max() > 0.0:
                i, ok = int(idx[_draw(gain, rng)]), False
            else:
                trace["stops"] += not top
                continue
        else:  # gain-draw: drawn by the plain gain, then Fayyad and Irani's test on the drawn cut
            if gain.max() <= 0.0:
                continue
            j = _draw(gain, rng)
            i, ok = int(idx[j]), bool(margin[j] > 0.0)
            if not ok and not top:
                trace["stops"] += 1
                continue
        cut_at.append(i)
        if top:
            trace["top"] = "mdl" if ok else "forced"
        if ok:
            trace["accepted"] += 1
            stack.append((i + 1, last, False))
            stack.append((first, i + 1, False))
    if min_cuts and cut_at:  # more cuts, by the gain times the bin's share of the rows, up to min_cuts
        trace["extra"] += extra_cuts(col, cut_at, min_cuts, rng)
    cuts = sorted((col.values[i] + col.values[i + 1]) / 2.0 for i in cut_at)
    return np.array(cuts, dtype=np.float64), trace


VARIANT_ARGS = {"smdl": {}, "smdl-min2": {"min_cuts": 2}, "smdl-min3": {"min_cuts": 3}, "smdl-half": {"penalty": 0.5},
                "gain-draw": {"draw": "gain"}, "gain-min2": {"draw": "gain", "min_cuts": 2}}


class Recorder:
    """Stands in for ``pipeline.stochastic_cut_points`` during a fit: draws every member's cut points
    with a variant (from the same streams) and keeps the traces, in member order (one thread)."""

    def __init__(self, variant: str, check: bool = False):
        self.kwargs = VARIANT_ARGS[variant]
        self.check = check
        self.members: list[dict] = []

    def __call__(self, columns, seed, method="stochastic-mdl"):
        out, traces = {}, {}
        for j, col in columns.items():
            cuts, tr = traced_cut_points(col, _seeds.stream_states(seed, [_seeds.DISCRETIZE + j])[0], **self.kwargs)
            if self.check:
                ref = stochastic_mdl_cut_points(col, _seeds.stream_states(seed, [_seeds.DISCRETIZE + j])[0])
                assert np.array_equal(ref, cuts), (j, ref, cuts)
            out[j] = cuts
            traces[j] = {"cuts": int(cuts.size), **tr}
        self.members.append(traces)
        return out


# ----------------------------------------------------------------------------------------------
def measures(proba: np.ndarray, y: np.ndarray) -> dict:
    p_true = proba[np.arange(len(y)), y]
    onehot = np.zeros_like(proba)
    onehot[np.arange(len(y)), y] = 1.0
    return {"zero_one": float(np.mean(np.argmax(proba, axis=1) != y)),
            "rmse": float(np.sqrt(np.mean(np.sum((proba - onehot) ** 2, axis=1) / proba.shape[1]))),
            "log_loss": float(-np.mean(np.log(np.clip(p_true, CLIP, 1.0))))}


def run_fold(train, test, variant: str, seed: int, n_members: int, check: bool) -> dict:
    """One fit of one variant on one fold: the members' traces and figures, the ensemble's."""
    from hdp_plugin.model.evaluation import rmse

    rec = None
    saved = pipeline.stochastic_cut_points
    if variant not in LIBRARY:
        rec = Recorder(variant, check)
        pipeline.stochastic_cut_points = rec
    try:
        clf = BayesNetClassifier(n_members=n_members, random_state=seed, n_jobs=1,
                                 discretization=LIBRARY.get(variant, "auto"))
        t0 = time.perf_counter()
        clf.fit(train)
        secs = time.perf_counter() - t0
    finally:
        pipeline.stochastic_cut_points = saved
    codes = clf._codes(test)
    logp = np.stack([predict_log_proba(mb.tables, X) for mb, X in zip(clf.members_, codes)])  # (E, n, c)
    mean = np.exp(logp).mean(axis=0)
    lm = logp.mean(axis=0)
    logmean = np.exp(lm - lm.max(axis=1, keepdims=True))
    logmean /= logmean.sum(axis=1, keepdims=True)
    assert np.allclose(mean, clf.predict_proba(test))
    assert abs(measures(mean, test.y)["rmse"] - rmse(mean, test.y)) < 1e-9
    members = [measures(np.exp(lp), test.y) for lp in logp]
    numeric = list(train.numeric_columns())
    if rec is None:  # the library's own: each member's cut counts (the decisions are not traced)
        traces = [{str(j): {"cuts": len(mb.attributes[j].cut_points or ()),
                            "top": ("mdl" if mb.attributes[j].cut_points else "none") if variant == "mdl" else "?",
                            "accepted": 0, "stops": 0, "extra": 0} for j in numeric} for mb in clf.members_]
    else:
        traces = [{str(j): t for j, t in m.items()} for m in rec.members]
    mdl_cuts = Discretizer(method="mdl").fit(train).attributes_
    return {"seconds": secs, "ensemble_mean": measures(mean, test.y), "ensemble_logmean": measures(logmean, test.y),
            "members": members, "traces": traces,
            "kept": [len(mb.structure.kept) for mb in clf.members_], "k": [mb.structure.k for mb in clf.members_],
            "n_attributes": len(train.attributes), "n_numeric": len(numeric),
            "plain_mdl_cuts": [len(mdl_cuts[j].cut_points or ()) for j in numeric],
            "train_rows": int(train.n_rows), "classes": int(train.n_classes)}


def find(name: str, mlbench_dir: Path | None) -> Path:
    if name.startswith("mlbench-"):
        import mlbench

        p = mlbench.DEFAULT_OUT / f"{name}.arff"
        if not p.is_file():
            rda = mlbench.find_rda_dir(mlbench_dir)
            if rda is None:
                raise SystemExit(f"{name}: mlbench's .rda files not found (see benchmarks/mlbench.py)")
            p = mlbench.convert(name, rda, mlbench.DEFAULT_OUT)
        return p
    for d in (DEBIAN_EXAMPLES, ROOT / "tests" / "data"):
        if (d / f"{name}.arff").is_file():
            return d / f"{name}.arff"
    raise SystemExit(f"{name}.arff not found")


def summarise(recs: list[dict]) -> dict:
    """Means over the folds of one (data set, variant)."""
    out = {}
    for comb in ("mean", "logmean"):
        for m in ("zero_one", "rmse", "log_loss"):
            out[f"{comb}_{m}"] = float(np.mean([r[f"ensemble_{comb}"][m] for r in recs]))
    for m in ("zero_one", "rmse", "log_loss"):
        out[f"member_{m}"] = float(np.mean([np.mean([x[m] for x in r["members"]]) for r in recs]))
        out[f"best_member_{m}"] = float(np.mean([np.min([x[m] for x in r["members"]]) for r in recs]))
    cuts = [t["cuts"] for r in recs for mb in r["traces"] for t in mb.values()]
    tops = [t["top"] for r in recs for mb in r["traces"] for t in mb.values()]
    out["cuts_mean"] = float(np.mean(cuts)) if cuts else 0.0
    for c in (0, 1, 2):
        out[f"cuts_{c}"] = float(np.mean([x == c for x in cuts])) if cuts else 0.0
    out["cuts_3+"] = float(np.mean([x >= 3 for x in cuts])) if cuts else 0.0
    for t in ("mdl", "forced", "none"):
        out[f"top_{t}"] = float(np.mean([x == t for x in tops])) if tops else 0.0
    for key in ("accepted", "stops", "extra"):
        vals = [t[key] for r in recs for mb in r["traces"] for t in mb.values()]
        out[key] = float(np.mean(vals)) if vals else 0.0
    out["plain_mdl_cuts"] = float(np.mean([c for r in recs for c in r["plain_mdl_cuts"]]))
    out["plain_mdl_0"] = float(np.mean([c == 0 for r in recs for c in r["plain_mdl_cuts"]]))
    out["kept"] = float(np.mean([np.mean(r["kept"]) / r["n_attributes"] for r in recs]))
    out["k"] = float(np.mean([np.mean(r["k"]) for r in recs]))
    out["rows_per_class"] = float(np.mean([r["train_rows"] / r["classes"] for r in recs]))
    out["seconds"] = float(np.sum([r["seconds"] for r in recs]))
    out["folds"] = len(recs)
    out["fold_zero_one"] = [r["ensemble_mean"]["zero_one"] for r in recs]
    out["fold_rmse"] = [r["ensemble_mean"]["rmse"] for r in recs]
    return out


def tables(summary: dict, datasets, variants) -> str:
    lines = []
    lines.append("#### Per set: what the members draw and how they do (the model as it is, `smdl`)\n")
    lines.append("| data set | train rows / class | cuts per attribute (mean) | 0 / 1 / 2 / 3+ cuts | top range: MDL / "
                 "forced / no cut | MDL splits / stops below the top | plain MDL: cuts (attributes with none) | attributes kept | k* | member 0-1 "
                 "(best) | ensemble 0-1 mean / logmean | member RMSE | ensemble RMSE mean / logmean | "
                 "ensemble log-loss mean / logmean |")
    lines.append("|---|---:|---:|---|---|---|---|---:|---:|---|---|---:|---|---|")
    for d in datasets:
        s = summary.get((d, "smdl"))
        if s is None:
            continue
        lines.append(
            f"| {d} | {s['rows_per_class']:.0f} | {s['cuts_mean']:.2f} | {s['cuts_0']:.2f} / {s['cuts_1']:.2f} / "
            f"{s['cuts_2']:.2f} / {s['cuts_3+']:.2f} | {s['top_mdl']:.2f} / {s['top_forced']:.2f} / {s['top_none']:.2f} | "
            f"{s['accepted']:.2f} / {s['stops']:.2f} | "
            f"{s['plain_mdl_cuts']:.2f} ({s['plain_mdl_0']:.2f}) | {s['kept']:.2f} | {s['k']:.1f} | "
            f"{s['member_zero_one']:.4f} ({s['best_member_zero_one']:.4f}) | "
            f"{s['mean_zero_one']:.4f} / {s['logmean_zero_one']:.4f} | {s['member_rmse']:.4f} | "
            f"{s['mean_rmse']:.4f} / {s['logmean_rmse']:.4f} | {s['mean_log_loss']:.4f} / {s['logmean_log_loss']:.4f} |")
    lines.append("\nShares are of (member, numeric attribute, fold); 'MDL splits' are the cuts that passed the MDL "
                 "test (the recursion went on below them), 'stops' the ranges below the top where no candidate "
                 "passed it, both per (member, attribute); 'attributes kept' is SkDB's share of all "
                 "attributes; 'best' is the best member of each fold (in hindsight, on the test fold).\n")
    for metric, label in (("zero_one", "0-1 loss"), ("rmse", "RMSE"), ("log_loss", "log-loss")):
        lines.append(f"#### {label} of the ensemble, by variant (members combined by mean / by logmean)\n")
        lines.append("| data set | " + " | ".join(variants) + " |")
        lines.append("|---|" + "---:|" * len(variants))
        for d in datasets:
            cells = []
            for v in variants:
                s = summary.get((d, v))
                cells.append("" if s is None else f"{s[f'mean_{metric}']:.4f} / {s[f'logmean_{metric}']:.4f}")
            lines.append(f"| {d} | " + " | ".join(cells) + " |")
        full = [d for d in datasets if all((d, v) in summary for v in variants)]
        if full:
            cells = [f"{np.mean([summary[(d, v)][f'mean_{metric}'] for d in full]):.4f} / "
                     f"{np.mean([summary[(d, v)][f'logmean_{metric}'] for d in full]):.4f}" for v in variants]
            lines.append(f"| **mean over {len(full)} sets** | " + " | ".join(cells) + " |")
        lines.append("")
    ref = variants[0]
    lines.append(f"#### Test folds where a variant beats `{ref}` (0-1 loss; RMSE), all sets: better / worse / tied\n")
    lines.append("| | " + " | ".join(variants[1:]) + " |")
    lines.append("|---|" + "---:|" * (len(variants) - 1))
    for key, label in (("fold_zero_one", "0-1 loss"), ("fold_rmse", "RMSE")):
        cells = []
        for v in variants[1:]:
            pairs = [(a, b) for d in datasets if (d, v) in summary and (d, ref) in summary
                     for a, b in zip(summary[(d, v)][key], summary[(d, ref)][key])]
            cells.append(f"{sum(a < b for a, b in pairs)} / {sum(a > b for a, b in pairs)} / "
                         f"{sum(a == b for a, b in pairs)}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("#### Cut points per numeric attribute (mean over members and folds), by variant\n")
    lines.append("| data set | " + " | ".join(variants) + " |")
    lines.append("|---|" + "---:|" * len(variants))
    for d in datasets:
        lines.append(f"| {d} | " + " | ".join("" if (d, v) not in summary else f"{summary[(d, v)]['cuts_mean']:.2f}"
                                               for v in variants) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--n-members", type=int, default=20)
    ap.add_argument("--seed-offset", type=int, default=0,
                    help="add this to every fold's random_state (the same folds, other draws: is a difference "
                         "more than one set of seeds?)")
    ap.add_argument("--mlbench-dir", type=Path)
    ap.add_argument("--cache-dir", type=Path, default=HERE / ".cache" / "numeric")
    ap.add_argument("--check", action="store_true", help="assert smdl draws the library's cut points")
    ap.add_argument("--markdown", action="store_true", help="print the tables from the cache (runs what is missing)")
    args = ap.parse_args(argv)
    datasets = [s for s in args.datasets.split(",") if s]
    variants = [s for s in args.variants.split(",") if s]
    for v in variants:
        if v not in VARIANTS:
            ap.error(f"unknown variant {v!r}; known: {', '.join(VARIANTS)}")
    say = (lambda *a, **k: None) if args.markdown else print
    summary = {}
    for d in datasets:
        data = read_dataset(find(d, args.mlbench_dir))
        data = data.take(np.nonzero(data.y >= 0)[0])
        for v in variants:
            recs = []
            for r in range(args.repeats):
                fold = stratified_folds(data.y, 2, r)
                for f in range(2):
                    sub = f"e{args.n_members}" + (f"-s{args.seed_offset}" if args.seed_offset else "")
                    path = args.cache_dir / sub / d / v / f"r{r}f{f}.json"
                    if path.is_file():
                        recs.append(json.loads(path.read_text()))
                        continue
                    tr, te = np.nonzero(fold != f)[0], np.nonzero(fold == f)[0]
                    rec = run_fold(data.take(tr), data.take(te), v, 10 * r + f + args.seed_offset, args.n_members,
                                   args.check and v == "smdl")
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(json.dumps(rec))
                    recs.append(rec)
            s = summary[(d, v)] = summarise(recs)
            say(f"{d:<18} {v:<10} 0-1 {s['mean_zero_one']:.4f}/{s['logmean_zero_one']:.4f} "
                f"RMSE {s['mean_rmse']:.4f}/{s['logmean_rmse']:.4f} LL {s['mean_log_loss']:.4f}/{s['logmean_log_loss']:.4f} "
                f"member 0-1 {s['member_zero_one']:.4f} cuts {s['cuts_mean']:.2f} "
                f"(0:{s['cuts_0']:.2f} 1:{s['cuts_1']:.2f} 2:{s['cuts_2']:.2f} 3+:{s['cuts_3+']:.2f}) "
                f"top mdl/forced/none {s['top_mdl']:.2f}/{s['top_forced']:.2f}/{s['top_none']:.2f} "
                f"plainMDL {s['plain_mdl_cuts']:.2f} kept {s['kept']:.2f} k* {s['k']:.1f} {s['seconds']:.0f}s",
                flush=True)
    if args.markdown:
        seeds = "the accuracy tables' folds and seeds" if not args.seed_offset else \
            f"the accuracy tables' folds, seeds + {args.seed_offset}"
        print(f"### Numeric attributes, few rows per class: ESKDB ({args.n_members} members), {args.repeats}x2 "
              f"cross-validation, {seeds}\n")
        print(tables(summary, datasets, variants))
    return 0


if __name__ == "__main__":
    sys.exit(main())
