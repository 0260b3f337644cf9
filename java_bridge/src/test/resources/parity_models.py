"""Train models with hdp_plugin on the repository's data sets, for the Java parity test (ParityIT).

Usage: python parity_models.py REPO_ROOT OUT_DIR

For each case writes OUT_DIR/<name>.hdpbnc (the model file), OUT_DIR/<name>.proba.csv (Python's
probabilities for every row of the test data, 17 significant digits) and OUT_DIR/<name>.arff when
the data is made up here; prints one line per case: name, training data, test data, class name.
"""

import csv
import sys
from pathlib import Path

import numpy as np

from hdp_plugin import BayesNetClassifier, read_dataset
from hdp_plugin.model import save_model

CASES = {
    "weather-nb-mle": ("weather.nominal.arff", None, dict(structure="nb", estimator="mle")),
    "vote-kdb2-none": ("vote.arff", None, dict(structure="kdb", k=2, iterations=60, tying="none")),
    "diabetes-tan-laplace": ("diabetes.arff", None, dict(structure="tan", estimator="laplace")),
    "weathernum-kdb1-ew": ("weather.numeric.arff", None, dict(structure="kdb", k=1, iterations=40,
                                                              discretization="equal-width")),
    "soybean-skdb2-m": ("soybean.arff", None, dict(structure="skdb", k=2, estimator="m-estimate", m=0.5)),
    "labor-kdb1-single": ("labor.arff", None, dict(structure="kdb", k=1, iterations=40, tying="single")),
    "iris-kdb2-samepar": ("iris.arff", None, dict(structure="kdb", k=2, iterations=40, tying="same-parent")),
    "breast-kdb3": ("breast-cancer.arff", None, dict(structure="kdb", k=3, iterations=50)),
    "segment-train-test": ("segment-challenge.arff", "segment-test.arff", dict(structure="kdb", k=1, iterations=30)),
    "noise-skdb-prior": ("@noise", None, dict(structure="skdb", k=1, estimator="m-estimate")),
    "mixed-types": ("@mixed", "@mixed-test", dict(structure="kdb", k=2, iterations=40)),
}


def noise_arff(path: Path) -> None:
    """Pure noise: selective kDB keeps no attribute, so the model has no trees."""
    rng = np.random.default_rng(0)
    lines = ["@relation noise", "@attribute a {x,y,z}", "@attribute b {p,q}", "@attribute c numeric",
             "@attribute class {neg,pos}", "@data"]
    for _ in range(40):
        lines.append(f"{'xyz'[rng.integers(3)]},{'pq'[rng.integers(2)]},{rng.normal():.6f},"
                     f"{('neg', 'pos')[rng.integers(2)]}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def mixed_arff(path: Path, test: bool) -> None:
    """Attribute types that differ between training and test data, as conform handles them:
    a nominal attribute with number labels read from a numeric column (4 is unseen, so missing), a
    numeric attribute read from a nominal column whose labels are numbers, and an unseen label."""
    rng = np.random.default_rng(1)
    a_decl = "numeric" if test else "{1,2,3}"
    c_decl = "{0.5,1.5,2.5,7}" if test else "numeric"
    lines = ["@relation mixed", f"@attribute a {a_decl}", "@attribute b {p,q,r}", f"@attribute c {c_decl}",
             "@attribute class {neg,pos}", "@data"]
    for i in range(60):
        y = int(rng.integers(2))
        a = (y + int(rng.integers(2))) % 3 + 1
        if test and i % 7 == 0:
            a = 4
        b = "pqr"[(a + y) % 3 if not (test and i % 5 == 0) else 2]
        c = (0.5, 1.5, 2.5, 7)[(y * 2 + int(rng.integers(2))) % 4] if test else round(float(y * 2 + rng.normal()), 3)
        lines.append(f"{a},{b},{c},{('neg', 'pos')[y]}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    root, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for name, (train, test, params) in CASES.items():
        if train == "@noise":
            train_path = out / "noise.arff"
            noise_arff(train_path)
        elif train == "@mixed":
            train_path = out / "mixed-train.arff"
            mixed_arff(train_path, test=False)
        else:
            train_path = root / "tests" / "data" / train
        if test == "@mixed-test":
            test_path = out / "mixed-test.arff"
            mixed_arff(test_path, test=True)
        else:
            test_path = train_path if test is None else root / "tests" / "data" / test
        data = read_dataset(train_path)
        clf = BayesNetClassifier(random_state=3, n_jobs=1, **params).fit(data)
        save_model(clf, out / f"{name}.hdpbnc")
        proba = clf.predict_proba(read_dataset(test_path))
        with open(out / f"{name}.proba.csv", "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(["row"] + [f"p_{c}" for c in clf.classes_])
            for i, row in enumerate(proba):
                w.writerow([i] + [f"{p:.17g}" for p in row])
        print(f"{name}\t{train_path}\t{test_path}\t{data.class_attribute.name}\t{len(clf.structure_.kept)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
