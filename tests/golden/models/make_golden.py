"""Write the golden model files and the probabilities Python computes with them.

Run from the repository root:  python tests/golden/models/make_golden.py

Every golden model is listed in ``manifest.json`` with the data it was trained on (a file in
``tests/data``), the classifier's parameters, its model file and a CSV of the class probabilities
the Python classifier gives for every row of that data (columns ``row`` then ``p_<class label>`` in
the order of the class labels, floats printed with 17 significant digits), and the same for
``NAME.edge.arff``, rows that probe missing values, labels never seen in training, values exactly
on a cut point and far outside the training range. Python's tests
(``tests/test_modelfile.py``) and, later, the Java reader's tests check both.

Re-run it only when a change to the model file format or to the estimates is intended, and say so
in the commit message: the files pin the estimates bit for bit.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from hdp_plugin import BayesNetClassifier, read_dataset  # noqa: E402
from hdp_plugin.model import save_model  # noqa: E402

#: breast-cancer's nominal attributes as the integer codes of a CSV export (categorical_features)
BREAST_CODED = ["age", "menopause", "tumor-size", "inv-nodes", "node-caps", "deg-malig", "breast", "breast-quad",
                "irradiat"]
CODED_CSV = "tests/golden/models/breast-coded.csv"

#: name -> (data file in tests/data, or a path from the repository root; classifier parameters)
MODELS = {
    "weather-kdb1-hdp": ("weather.nominal.arff",
                         dict(structure="kdb", k=1, estimator="hdp", iterations=50, random_state=1)),
    "vote-kdb2-hdp": ("vote.arff",
                      dict(structure="kdb", k=2, estimator="hdp", iterations=300, random_state=7)),
    "diabetes-tan-mestimate": ("diabetes.arff",
                               dict(structure="tan", estimator="m-estimate", random_state=0)),
    # ensembles: members with their own cut points, orders and seeds
    "diabetes-eskdb-hdp": ("diabetes.arff",
                           dict(structure="eskdb", n_members=3, k=2, estimator="hdp", iterations=100,
                                random_state=3)),
    "vote-eskdb-mestimate": ("vote.arff",
                             dict(structure="eskdb", n_members=4, k=3, estimator="m-estimate", random_state=5)),
    # integer codes declared categorical: nominal attributes whose labels are the codes; Weka reads the
    # CSV's codes as numbers (the edge rows too), which must match the labels by number
    "breast-coded-kdb2-hdp": (CODED_CSV,
                              dict(structure="kdb", k=2, estimator="hdp", iterations=200, random_state=2,
                                   categorical_features=BREAST_CODED)),
}


def _data_path(data_file: str) -> Path:
    return ROOT / data_file if data_file.startswith("tests/") else ROOT / "tests" / "data" / data_file


def write_coded_csv(path: Path) -> None:
    """breast-cancer.arff as a CSV export holds it: each nominal attribute's observed labels, in
    declared order, as the codes 1, 2, ...; the class as its labels; ``?`` for missing (Weka's CSV
    loader and ours both read it so)."""
    ds = read_dataset(ROOT / "tests" / "data" / "breast-cancer.arff")
    cols = []
    for j, a in enumerate(ds.attributes):
        seen = np.unique(ds.X[:, j][ds.X[:, j] < a.missing_code])
        lut = np.full(a.n_codes, "?", dtype=object)
        lut[seen] = [str(i + 1) for i in range(seen.size)]
        cols.append(lut[ds.X[:, j]])
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(ds.names + [ds.class_attribute.name])
        for i in range(ds.n_rows):
            w.writerow([c[i] for c in cols] + [ds.class_values[ds.y[i]] if ds.y[i] >= 0 else "?"])


def fit(name: str):
    data_file, params = MODELS[name]
    data = read_dataset(_data_path(data_file))
    return data, BayesNetClassifier(n_jobs=1, **params).fit(data)


def _save_if_changed(clf, path: Path) -> None:
    """Write the model unless the file already holds the same model (only fit timings differ)."""
    if path.exists():
        import tempfile

        from hdp_plugin.errors import ModelFileError
        from hdp_plugin.model.modelfile import read_model_file

        with tempfile.TemporaryDirectory() as tmp:
            fresh = read_model_file(save_model(clf, Path(tmp) / path.name))
        try:
            old = read_model_file(path)
        except ModelFileError:  # another format: written anew
            save_model(clf, path)
            return
        same = fresh[0] == old[0] and len(fresh[2]) == len(old[2]) and all(
            np.array_equal(a[c], b[c], equal_nan=True) for a, b in zip(fresh[2], old[2]) for c in a)
        if same:
            return
    save_model(clf, path)


def write_probabilities(path: Path, clf, data) -> None:
    proba = clf.predict_proba(data)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["row"] + [f"p_{c}" for c in clf.classes_])
        for i, row in enumerate(proba):
            w.writerow([i] + [f"{p:.17g}" for p in row])


def _arff_value(v) -> str:
    if v is None:
        return "?"
    if isinstance(v, float):
        return repr(v)
    return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"


def write_edge_rows(path: Path, clf, relation: str, numeric_codes=()) -> None:
    """Rows that probe the corners a reader must get right, as an ARFF file.

    Every nominal attribute declares one extra label, ``unseen``, that training never saw (it must
    be treated as missing), except the attributes of ``numeric_codes`` (declared categorical), which are
    numeric here: their labels as numbers, ``unseen`` the code 99, which training never saw; numeric
    attributes take their cut points exactly (a value equal to a
    cut point belongs to the lower bin), the next double above them, values far outside the
    training range, and missing values. The class is missing in every row.
    """
    attrs = clf.attributes_
    rows = []

    def per_attribute(f):
        return [f(j, a) for j, a in enumerate(attrs)]

    def cut(j, a, which):
        return float(a.cut_points[which]) if a.cut_points else 0.0

    rows.append(per_attribute(lambda j, a: None))  # everything missing
    rows.append(per_attribute(lambda j, a: cut(j, a, 0) if a.numeric else "unseen"))
    rows.append(per_attribute(lambda j, a: cut(j, a, -1) if a.numeric else a.values[-1]))
    rows.append(per_attribute(lambda j, a: float(np.nextafter(cut(j, a, 0), np.inf)) if a.numeric else a.values[0]))
    rows.append(per_attribute(lambda j, a: -1e9 if a.numeric else (None if j % 2 else a.values[0])))
    rows.append(per_attribute(lambda j, a: 1e9 if a.numeric else (a.values[0] if j % 2 else None)))
    for member in clf.members_[1:]:  # an ensemble: every member's own cut points
        rows.append([float(m.cut_points[0]) if m.numeric and m.cut_points else (0.0 if a.numeric else a.values[0])
                     for a, m in zip(attrs, member.attributes)])
        rows.append([float(m.cut_points[-1]) if m.numeric and m.cut_points else (0.0 if a.numeric else None)
                     for a, m in zip(attrs, member.attributes)])
    for i in range(len(attrs)):  # one attribute known, the others missing (back-off everywhere)
        rows.append(per_attribute(lambda j, a: None if j != i else (cut(j, a, 0) if a.numeric else a.values[0])))
    if numeric_codes:
        codes = [j for j, a in enumerate(attrs) if a.name in numeric_codes]
        rows = [[(99.0 if v == "unseen" else float(v)) if j in codes and v is not None else v
                 for j, v in enumerate(row)] for row in rows]
    lines = [f"@relation '{relation}-edge-rows'", ""]
    for a in attrs:
        if a.numeric or a.name in numeric_codes:
            lines.append(f"@attribute {_arff_value(a.name)} numeric")
        else:
            labels = ", ".join(_arff_value(v) for v in (*a.values, "unseen"))
            lines.append(f"@attribute {_arff_value(a.name)} {{{labels}}}")
    cls = clf.class_attribute_
    lines.append(f"@attribute {_arff_value(cls.name)} {{{', '.join(_arff_value(v) for v in cls.values)}}}")
    lines += ["", "@data"]
    lines += [",".join(_arff_value(v) for v in row) + ",?" for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    manifest = {}
    write_coded_csv(ROOT / CODED_CSV)
    for name, (data_file, params) in MODELS.items():
        data, clf = fit(name)
        _save_if_changed(clf, HERE / f"{name}.hdpbnc")
        write_probabilities(HERE / f"{name}.proba.csv", clf, data)
        write_edge_rows(HERE / f"{name}.edge.arff", clf, data.relation, params.get("categorical_features", ()))
        edge = read_dataset(HERE / f"{name}.edge.arff")
        write_probabilities(HERE / f"{name}.edge.proba.csv", clf, edge)
        manifest[name] = {"model": f"{name}.hdpbnc", "data": str(_data_path(data_file).relative_to(ROOT)),
                          "class": data.class_attribute.name, "params": params,
                          "probabilities": f"{name}.proba.csv",
                          "edge_data": f"tests/golden/models/{name}.edge.arff",
                          "edge_probabilities": f"{name}.edge.proba.csv"}
        print(f"{name}: {sum(m.tables.n_observed for m in clf.members_)} cells")
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
