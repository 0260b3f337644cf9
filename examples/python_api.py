"""The Python API in one page: fit, predict_proba, a scikit-learn Pipeline, and the model file.

Run:  python3 examples/python_api.py [--iterations N]

1. Read an ARFF file, fit kDB-2 with HDP-estimated tables, look at the network and the probabilities.
2. Put the classifier in a scikit-learn ``Pipeline`` after a feature selection step, and score it with
   ``cross_val_score`` (numeric attributes are discretised inside each training fold).
3. Save the fitted classifier to a model file and load it back: the loaded model gives the same
   probabilities, bit for bit (the Weka plugin reads the same file).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from hdp_plugin import BayesNetClassifier, read_dataset
from hdp_plugin.data import to_arrow
from hdp_plugin.model import load_model, save_model

HERE = Path(__file__).resolve().parent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=1000, help="Gibbs iterations of the HDP sampler")
    args = ap.parse_args(argv)

    # 1. fit on a Dataset read from ARFF; the class is the last attribute, as in Weka
    data = read_dataset(HERE / "diabetes.arff")
    clf = BayesNetClassifier(structure="kdb", k=2, iterations=args.iterations, random_state=0).fit(data)
    print("network (attribute: its parents besides the class):")
    for name, parents in clf.parents_.items():
        print(f"  {name}: {', '.join(parents) or '-'}")
    proba = clf.predict_proba(data)  # shape (n_rows, n_classes), columns in clf.classes_ order
    print("classes:", list(clf.classes_))
    print("P(class | first 3 rows):\n", proba[:3].round(4))

    # 2. the same classifier inside a scikit-learn Pipeline, on a pandas DataFrame
    from sklearn.feature_selection import SelectKBest, mutual_info_classif
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline

    frame = to_arrow(data).to_pandas()
    X, y = frame.drop(columns=[data.class_attribute.name]), frame[data.class_attribute.name]
    pipe = make_pipeline(
        SelectKBest(mutual_info_classif, k=5),
        BayesNetClassifier(structure="kdb", k=2, iterations=args.iterations, random_state=0),
    ).set_output(transform="pandas")  # keep column names through the selection step
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
    scores = cross_val_score(pipe, X, y, cv=folds, scoring="accuracy")
    print(f"5-fold accuracy of SelectKBest(5) + kDB-2: {scores.mean():.4f} +- {scores.std():.4f}")

    # 3. the model file: save, load, same answers
    with tempfile.TemporaryDirectory() as tmp:
        path = save_model(clf, Path(tmp) / "diabetes.hdpbnc")
        loaded = load_model(path)
        same = np.array_equal(loaded.predict_proba(data), proba)
        print(f"saved {path.stat().st_size} bytes; the loaded model gives the same probabilities: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
