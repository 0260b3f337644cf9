"""Integer-coded categories: should integer columns with few values be nominal by default? (issue 24)

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
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hdp_plugin import BayesNetClassifier, read_dataset  # noqa: E402
from hdp_plugin.data.categorical import declare_categorical  # noqa: E402
from hdp_plugin.model.evaluation import cross_validate  # noqa: E402

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


def conditions(arff: Path, work: Path, thresholds) -> list[tuple[str, object, str]]:
    """``(condition, dataset, what was declared)`` for one data set."""
    ref = read_dataset(arff)
    path = work / f"{arff.stem}.csv"
    coded = coded_csv(ref, path)
    plain = read_dataset(path).with_class_values(ref.class_values)  # the class order of the ARFF header
    out = [("arff", ref, ""), ("csv-numeric", plain, "")]
    if coded:
        out.append(("csv-declared", declare_categorical(plain, coded), f"{len(coded)} coded"))
    for n in thresholds:
        names = integer_columns(plain, n)
        genuine = [nm for nm in names if nm not in coded]
        what = f"{len(names)} integer columns" + (f" ({len(genuine)} genuinely numeric)" if genuine else "")
        out.append((f"csv-auto-{n}", declare_categorical(plain, names), what))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DEFAULT_DATASETS),
                        help="comma list of tests/data names (and of --arff-dir files)")
    parser.add_argument("--arff-dir", type=Path, help="add every *.arff of this directory")
    parser.add_argument("--thresholds", default="10,20", help="the N of the rule, comma list")
    parser.add_argument("--structure", default="kdb")
    parser.add_argument("-k", type=int, default=2)
    parser.add_argument("--estimator", default="hdp")
    parser.add_argument("--iterations", type=int, default=None, help="default: auto")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--folds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    files = {p.stem: p for p in sorted((ROOT / "tests" / "data").glob("*.arff"))}
    if args.arff_dir is not None:
        files.update({p.stem: p for p in sorted(args.arff_dir.glob("*.arff"))})
    wanted = [s.strip() for s in args.datasets.split(",") if s.strip()]
    if args.arff_dir is not None and args.datasets == ",".join(DEFAULT_DATASETS):
        wanted += [p.stem for p in sorted(args.arff_dir.glob("*.arff")) if p.stem not in wanted]
    unknown = [w for w in wanted if w not in files]
    if unknown:
        parser.error(f"unknown data set(s) {', '.join(unknown)}; known: {', '.join(sorted(files))}")
    thresholds = [int(t) for t in args.thresholds.split(",") if t.strip()]
    params = dict(structure=args.structure, k=args.k, estimator=args.estimator, iterations=args.iterations,
                  random_state=args.seed)

    rows = []
    print(f"{args.structure} k={args.k} {args.estimator}, {args.repeats}x{args.folds} cross-validation")
    print(f"{'data set':<18} {'condition':<14} {'RMSE':>7} {'dRMSE':>8} {'0-1':>7} {'d0-1':>8} {'logloss':>8} "
          f"{'dlogloss':>9}  declared")
    with tempfile.TemporaryDirectory() as tmp:
        for name in wanted:
            base = None
            for cond, ds, what in conditions(files[name], Path(tmp), thresholds):
                res = cross_validate(lambda: BayesNetClassifier(**params), ds, n_folds=args.folds,
                                     repeats=args.repeats, seed=args.seed)
                r = {"dataset": name, "condition": cond, "declared": what, "rmse": res.rmse,
                     "zero_one_loss": res.zero_one, "log_loss": res.log_loss}
                base = base or r
                for m in ("rmse", "zero_one_loss", "log_loss"):
                    r[f"d_{m}"] = r[m] - base[m]
                rows.append(r)
                print(f"{name:<18} {cond:<14} {r['rmse']:7.4f} {r['d_rmse']:+8.4f} {r['zero_one_loss']:7.4f} "
                      f"{r['d_zero_one_loss']:+8.4f} {r['log_loss']:8.4f} {r['d_log_loss']:+9.4f}  {what}", flush=True)
    declared = [r for r in rows if r["condition"] == "csv-declared"]
    if declared:
        worst = max(abs(r["d_rmse"]) for r in declared)
        print(f"csv-declared vs arff: largest |dRMSE| {worst:.4f} over {len(declared)} data set(s)")
    if args.json is not None:
        args.json.write_text(json.dumps({"params": params, "repeats": args.repeats, "folds": args.folds,
                                         "results": rows}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
