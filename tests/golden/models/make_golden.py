"""Write the golden model files and the probabilities Python computes with them.

Run from the repository root:  python tests/golden/models/make_golden.py

Every golden model is listed in ``manifest.json`` with the data it was trained on (a file in
``tests/data``), the classifier's parameters, its model file and a CSV of the class probabilities
the Python classifier gives for every row of that data (columns ``row`` then ``p_<class label>`` in
the order of the class labels, floats printed with 17 significant digits). Python's tests
(``tests/test_modelfile.py``) and, later, the Java reader's tests check both.

Re-run it only when a change to the model file format or to the estimates is intended, and say so
in the commit message: the files pin the estimates bit for bit.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from hdp_plugin import BayesNetClassifier, read_dataset  # noqa: E402
from hdp_plugin.model import save_model  # noqa: E402

#: name -> (data file in tests/data, classifier parameters)
MODELS = {
    "weather-kdb1-hdp": ("weather.nominal.arff",
                         dict(structure="kdb", k=1, estimator="hdp", iterations=50, random_state=1)),
    "vote-kdb2-hdp": ("vote.arff",
                      dict(structure="kdb", k=2, estimator="hdp", iterations=300, random_state=7)),
    "diabetes-tan-mestimate": ("diabetes.arff",
                               dict(structure="tan", estimator="m-estimate", random_state=0)),
}


def fit(name: str):
    data_file, params = MODELS[name]
    data = read_dataset(ROOT / "tests" / "data" / data_file)
    return data, BayesNetClassifier(n_jobs=1, **params).fit(data)


def write_probabilities(path: Path, clf, data) -> None:
    proba = clf.predict_proba(data)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["row"] + [f"p_{c}" for c in clf.classes_])
        for i, row in enumerate(proba):
            w.writerow([i] + [f"{p:.17g}" for p in row])


def main() -> int:
    manifest = {}
    for name, (data_file, params) in MODELS.items():
        data, clf = fit(name)
        save_model(clf, HERE / f"{name}.hdpbnc")
        write_probabilities(HERE / f"{name}.proba.csv", clf, data)
        manifest[name] = {"model": f"{name}.hdpbnc", "data": f"tests/data/{data_file}",
                          "class": data.class_attribute.name, "params": params,
                          "probabilities": f"{name}.proba.csv"}
        print(f"{name}: {clf.tables_.trees.n_cells} cells")
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
