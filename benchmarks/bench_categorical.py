"""Integer-coded categories: should integer columns with few values be nominal by default?

A CSV export of a nominal data set holds its categories as integer codes (1 = red, 2 = green, ...),
which read as numbers and get discretised. For every data set this writes that CSV (each nominal
attribute's observed labels, in the ARFF header's order, as the codes 1, 2, ...; numeric attributes as
they are; the class as its labels) and compares, in the same 5x2 cross-validation (the same folds):

* ``arff``: the ARFF file, as Weka users have it (the reference);
* ``csv-numeric``: the CSV read as it is, the codes numbers (what a CSV user gets today);
* ``csv-declared``: the CSV with the coded columns declared categorical (``--categorical``);
* ``csv-auto-N``: the CSV with the rule "an integer column with at most N distinct values is nominal"
  (the candidate default), for each N of ``--thresholds``.

Declarations apply to the whole file, as ``hdp-bnc evaluate --categorical`` applies them. The rule's
risk is on genuinely numeric integer attributes (counts, ages, durations): data sets with such
attributes (credit-g, diabetes) show what the rule does to them, beside the nominal sets that show what
it gains; the rule may become a default only if it wins on the first kind and loses nothing on the
second. Columns: RMSE, 0-1 loss and log-loss (means over the folds) and each one's difference from
``arff``.

The data sets are tests/data's Weka files by default; ``--arff-dir DIR`` adds every ``*.arff`` of DIR
(for example Weka's data sets: ``apt-get download weka && dpkg -x weka_*.deb /tmp/weka``, then
``--arff-dir /tmp/weka/usr/share/doc/weka/examples``, or ARFFs written by ``benchmarks/mlbench.py``).
Nothing is downloaded here, and nothing is added to the repository.

Usage::

    python benchmarks/bench_categorical.py --datasets contact-lenses,breast-cancer --repeats 1 \\
        --estimator m-estimate                      # a quick look
    python benchmarks/bench_categorical.py         # every data set, 5x2, kDB-2 with HDP (long)
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from hdp_plugin import BayesNetClassifier, read_dataset  # noqa: E402
from hdp_plugin.data.categorical import declare_categorical  # noqa: E402
from hdp_plugin.model.evaluation import cross_validate  # noqa: E402
from hdp_plugin.params import default  # noqa: E402

#: Weka's data sets in tests/data: nominal ones (coded in the CSV), and ones with numeric integer
#: attributes (credit-g: durations, amounts, ages, counts; diabetes: pregnancies, ages, ...)
DEFAULT_DATASETS = ("breast-cancer", "contact-lenses", "soybean", "vote", "weather.nominal", "labor", "credit-g",
                    "diabetes")


def coded_csv(ds, path: Path) -> list[str]:
    """Write ``ds`` as a CSV export holds it; return the names of the coded (nominal) attributes."""
    numcols = ds.numeric_columns()
    columns, coded = [], []
    for j, a in enumerate(ds.attributes):
        if j in numcols:
            raw = ds.numeric[:, numcols[j]]
            columns.append(["" if np.isnan(v) else (str(int(v)) if v == int(v) else repr(float(v))) for v in raw])
            continue
        seen = np.unique(ds.X[:, j][ds.X[:, j] < a.missing_code])
        lut = np.full(a.n_codes, "", dtype=object)
        lut[seen] = [str(i + 1) for i in range(seen.size)]
        columns.append(list(lut[ds.X[:, j]]))
        coded.append(a.name)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(ds.names + [ds.class_attribute.name])
        for i in range(ds.n_rows):
            w.writerow([c[i] for c in columns] + [ds.class_values[ds.y[i]] if ds.y[i] >= 0 else ""])
    return coded


def integer_columns(ds, threshold: int) -> list[str]:
    """The rule under test: numeric columns whose values are all integers, at most ``threshold`` of them."""
    out = []
    for j, c in ds.numeric_columns().items():
        raw = ds.numeric[:, c]
        v = np.unique(raw[~np.isnan(raw)])
        if 0 < v.size <= threshold and np.all(v == np.round(v)):
            out.append(ds.attributes[j].name)
    return out


def fingerprint(ds) -> str:
    """What a model sees of a data set (codes, raw numbers, attributes, classes): two conditions with the
    same fingerprint give the same result, so it is run once and its cached result serves both."""
    h = hashlib.sha1()
    for arr in (ds.X, ds.y, ds.numeric if ds.numeric is not None else np.zeros(0)):
        h.update(np.ascontiguousarray(arr).tobytes())
        h.update(str(arr.shape).encode())
    h.update(repr([(a.name, a.values, a.numeric, a.cut_points) for a in ds.attributes]).encode())
    h.update(repr(ds.class_attribute.values).encode())
    return h.hexdigest()[:16]


def conditions(arff: Path, work: Path, thresholds) -> tuple[list[tuple[str, object, str]], dict]:
    """``(condition, dataset, what was declared)`` for one data set, and what the data set holds
    (``coded``: nominal attributes written as codes; ``genuine``: numeric integer attributes with
    at most N values, per N)."""
    ref = read_dataset(arff)
    path = work / f"{arff.stem}.csv"
    coded = coded_csv(ref, path)
    plain = read_dataset(path).with_class_values(ref.class_values)  # the class order of the ARFF header
    out = [("arff", ref, ""), ("csv-numeric", plain, "")]
    if coded:
        out.append(("csv-declared", declare_categorical(plain, coded), f"{len(coded)} coded"))
    info = {"rows": ref.n_rows, "classes": ref.n_classes, "attributes": len(ref.attributes), "coded": coded,
            "numeric": len(ref.numeric_columns()), "genuine": {}}
    for n in thresholds:
        names = integer_columns(plain, n)
        genuine = [nm for nm in names if nm not in coded]
        info["genuine"][n] = genuine
        what = f"{len(names)} integer columns" + (f" ({len(genuine)} genuinely numeric)" if genuine else "")
        out.append((f"csv-auto-{n}", declare_categorical(plain, names), what))
    return out, info


def data_files(args) -> dict[str, Path]:
    """Every data set name the run may use and its ARFF file."""
    files = {p.stem: p for p in sorted((ROOT / "tests" / "data").glob("*.arff"))}
    for d in args.arff_dir or []:
        files.update({p.stem: p for p in sorted(d.glob("*.arff"))})
    return files


def mlbench_file(name: str, mlbench_dir: Path | None) -> Path | None:
    """The ARFF of ``mlbench-<R name>``, converted by benchmarks/mlbench.py (git-ignored cache)."""
    import mlbench

    out = mlbench.DEFAULT_OUT
    if (out / f"{name}.arff").is_file():
        return out / f"{name}.arff"
    rda = mlbench.find_rda_dir(mlbench_dir)
    return None if rda is None else mlbench.convert(name, rda, out)


def run_condition(ds, params: dict, folds: int, repeats: int, seed: int, cache: Path | None) -> dict:
    """One condition's cross-validation (means and per-fold figures), from the cache if it holds it."""
    key = None
    if cache is not None:
        tag = hashlib.sha1(json.dumps([params, folds, repeats, seed], sort_keys=True).encode()).hexdigest()[:10]
        key = cache / tag / f"{fingerprint(ds)}.json"
        if key.is_file():
            return json.loads(key.read_text())
    t0 = time.perf_counter()
    res = cross_validate(lambda: BayesNetClassifier(**params), ds, n_folds=folds, repeats=repeats, seed=seed)
    r = {"rmse": res.rmse, "zero_one_loss": res.zero_one, "log_loss": res.log_loss,
         "per_fold": [list(map(float, f)) for f in res.folds], "seconds": time.perf_counter() - t0}
    if key is not None:
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_text(json.dumps(r))
    return r


METRICS = ("rmse", "zero_one_loss", "log_loss")
TOLERANCE = 0.005  # declared against ARFF: within this on every set


def decide(rows: list[dict], infos: dict, thresholds) -> list[str]:
    """The two tests on the results, as Markdown lines: declared within TOLERANCE of the ARFF on
    every set (RMSE and 0-1), and, per N, the sets where csv-auto-N declares genuinely numeric integer
    columns (the controls) and whether it makes any of them worse than the ARFF by more than TOLERANCE."""
    by = {(r["dataset"], r["condition"]): r for r in rows}
    lines = []
    dec = [r for r in rows if r["condition"] == "csv-declared"]
    if dec:
        bad = [r["dataset"] for r in dec if max(abs(r["d_rmse"]), abs(r["d_zero_one_loss"])) > TOLERANCE]
        worst = max(dec, key=lambda r: max(abs(r["d_rmse"]), abs(r["d_zero_one_loss"])))
        lines.append(f"- **csv-declared vs arff** on {len(dec)} data sets with coded columns: largest |dRMSE| "
                     f"{max(abs(r['d_rmse']) for r in dec):.4f}, largest |d0-1| "
                     f"{max(abs(r['d_zero_one_loss']) for r in dec):.4f} ({worst['dataset']}); "
                     + ("within 0.005 on every set." if not bad else f"outside 0.005 on: {', '.join(bad)}."))
        gain = [r for r in dec if (r["dataset"], "csv-numeric") in by]
        lines.append("- **csv-numeric vs csv-declared** (what declaring gains a CSV user): mean d0-1 "
                     f"{np.mean([by[(r['dataset'], 'csv-numeric')]['zero_one_loss'] - r['zero_one_loss'] for r in gain]):+.4f}, "
                     f"mean dRMSE {np.mean([by[(r['dataset'], 'csv-numeric')]['rmse'] - r['rmse'] for r in gain]):+.4f}, "
                     f"mean dlog-loss {np.mean([by[(r['dataset'], 'csv-numeric')]['log_loss'] - r['log_loss'] for r in gain]):+.4f} "
                     f"over {len(gain)} sets (positive: reading the codes as numbers is worse).")
    for n in thresholds:
        cond = f"csv-auto-{n}"
        ctrl = [r for r in rows if r["condition"] == cond and infos[r["dataset"]]["genuine"].get(n)]
        worse = [r for r in ctrl if r["d_rmse"] > TOLERANCE or r["d_zero_one_loss"] > TOLERANCE
                 or r["d_log_loss"] > TOLERANCE]
        missed = [r["dataset"] for r in rows if r["condition"] == cond and r["dataset"] in
                  {d["dataset"] for d in dec}
                  and (r["dataset"], "csv-declared") in by
                  and r["zero_one_loss"] - by[(r["dataset"], "csv-declared")]["zero_one_loss"] > TOLERANCE]
        desc = ", ".join(f"{r['dataset']} (d0-1 {r['d_zero_one_loss']:+.4f}, dRMSE {r['d_rmse']:+.4f}, "
                         f"dlog-loss {r['d_log_loss']:+.4f})" for r in worse)
        lines.append(f"- **{cond}** declares genuinely numeric integer columns on {len(ctrl)} set(s) "
                     f"({', '.join(r['dataset'] for r in ctrl) or 'none'}); worse than arff by more than 0.005 "
                     f"on RMSE, 0-1 or log-loss on {len(worse)}" + (f": {desc}" if worse else "")
                     + (f"; more than 0.005 worse on 0-1 than csv-declared: {', '.join(missed)}"
                        if missed else "") + ".")
    return lines


def markdown(rows: list[dict], infos: dict, thresholds, header: str) -> str:
    out = [header, ""]
    out.append("| data set | rows | classes | coded / numeric attributes | condition | declared | RMSE | dRMSE | 0-1 "
               "| d0-1 | log-loss | dlog-loss | folds worse on 0-1 |")
    out.append("|---|---:|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    last = None
    base = {}
    for r in rows:
        if r["condition"] == "arff":
            base[r["dataset"]] = r
    for r in rows:
        i = infos[r["dataset"]]
        first = r["dataset"] != last
        last = r["dataset"]
        b = base[r["dataset"]]
        w = sum(f[1] > g[1] for f, g in zip(r["per_fold"], b["per_fold"]))
        kinds = f"{len(i['coded'])} / {i['numeric']}"
        out.append(f"| {r['dataset'] if first else ''} | {i['rows'] if first else ''} | "
                   f"{i['classes'] if first else ''} | "
                   f"{kinds if first else ''} | {r['condition']} | {r['declared']} | "
                   f"{r['rmse']:.4f} | {r['d_rmse']:+.4f} | {r['zero_one_loss']:.4f} | {r['d_zero_one_loss']:+.4f} | "
                   f"{r['log_loss']:.4f} | {r['d_log_loss']:+.4f} | {'' if r['condition'] == 'arff' else w} |")
    out += ["", "Decision figures (tolerance 0.005):", ""] + decide(rows, infos, thresholds)
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DEFAULT_DATASETS),
                        help="comma list of tests/data names, --arff-dir files and mlbench-<R name>")
    parser.add_argument("--arff-dir", type=Path, action="append", help="add every *.arff of this directory")
    parser.add_argument("--mlbench-dir", type=Path, help="mlbench's .rda files (benchmarks/mlbench.py)")
    parser.add_argument("--thresholds", default="10,20", help="the N of the rule, comma list")
    parser.add_argument("--structure", default=default("structure"), help="default: the classifier's (eskdb)")
    parser.add_argument("-k", type=int, default=default("k"))
    parser.add_argument("--n-members", type=int, default=default("n_members"))
    parser.add_argument("--estimator", default=default("estimator"))
    parser.add_argument("--iterations", type=int, default=None, help="default: auto")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--folds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=1, help="threads per fit (default 1)")
    parser.add_argument("--cache-dir", type=Path, default=HERE / ".cache" / "categorical",
                        help="one JSON per (parameters, data) result, so a run resumes; 'none' for no cache. "
                             "Results are keyed by parameters and data, not by code: delete the cache after a "
                             "change to the model")
    parser.add_argument("--markdown", action="store_true",
                        help="print the results as a Markdown section (benchmarks/studies.md) instead of the log")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    files = data_files(args)
    wanted = [s.strip() for s in args.datasets.split(",") if s.strip()]
    for w in wanted:
        if w.startswith("mlbench-") and w not in files:
            p = mlbench_file(w, args.mlbench_dir)
            if p is not None:
                files[w] = p
    unknown = [w for w in wanted if w not in files]
    if unknown:
        parser.error(f"unknown data set(s) {', '.join(unknown)}; known: {', '.join(sorted(files))}")
    thresholds = [int(t) for t in args.thresholds.split(",") if t.strip()]
    params = dict(structure=args.structure, k=args.k, estimator=args.estimator, iterations=args.iterations,
                  random_state=args.seed, n_jobs=args.n_jobs)
    if args.structure == "eskdb":
        params["n_members"] = args.n_members
    cache = None if str(args.cache_dir) == "none" else args.cache_dir
    say = (lambda *a, **k: None) if args.markdown else print

    rows, infos = [], {}
    say(f"{params}, {args.repeats}x{args.folds} cross-validation")
    say(f"{'data set':<18} {'condition':<14} {'RMSE':>7} {'dRMSE':>8} {'0-1':>7} {'d0-1':>8} {'logloss':>8} "
        f"{'dlogloss':>9} {'secs':>6}  declared")
    with tempfile.TemporaryDirectory() as tmp:
        for name in wanted:
            base = None
            conds, infos[name] = conditions(files[name], Path(tmp), thresholds)
            for cond, ds, what in conds:
                res = run_condition(ds, params, args.folds, args.repeats, args.seed, cache)
                r = {"dataset": name, "condition": cond, "declared": what, **res}
                base = base or r
                for m in METRICS:
                    r[f"d_{m}"] = r[m] - base[m]
                rows.append(r)
                say(f"{name:<18} {cond:<14} {r['rmse']:7.4f} {r['d_rmse']:+8.4f} {r['zero_one_loss']:7.4f} "
                    f"{r['d_zero_one_loss']:+8.4f} {r['log_loss']:8.4f} {r['d_log_loss']:+9.4f} "
                    f"{r['seconds']:6.0f}  {what}", flush=True)
    if args.markdown:
        what = (f"ESKDB ({args.n_members} members, SkDB-{args.k})" if args.structure == "eskdb"
                else f"{args.structure} k={args.k}")
        print(markdown(rows, infos, thresholds,
                       f"### Integer-coded categories: {what}, {args.estimator}, iterations "
                       f"{args.iterations or 'auto'}, {args.repeats}x{args.folds} cross-validation, seed {args.seed}\n\n"
                       "d = the condition minus `arff` (positive: worse); the same folds for every condition; "
                       "'folds worse' counts the test folds whose 0-1 loss is above the ARFF's. Conditions that give "
                       "a model the same data (the same codes, numbers and attributes) are run once."))
    else:
        for line in decide(rows, infos, thresholds):
            print(line)
    if args.json is not None:
        args.json.write_text(json.dumps({"params": params, "repeats": args.repeats, "folds": args.folds,
                                         "results": rows, "datasets": infos}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
