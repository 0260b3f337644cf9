"""Prediction rows per second in Python and in the Weka package's pure Java, on the same model.

Run:  python benchmarks/bench_java_predict.py [--rows 1000000] [--k 5]

Trains kDB-k (HDP, 200 iterations) on 50,000 seeded synthetic rows, writes the model file, then
predicts ROWS synthetic rows with BayesNetClassifier.predict_proba (all cores) and with the Java
HDPModel.distribution (one thread, after a warm-up pass), and checks both give the same
probabilities. Needs `mvn package` to have been run in java_bridge/ (it runs it if the jar is absent).
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))


def java_classpath() -> str:
    jars = glob.glob(str(ROOT / "java_bridge" / "target" / "hdp-bnc-weka-*.jar"))
    if not jars:
        subprocess.run(["mvn", "-q", "-B", "package", "-DskipTests"], cwd=ROOT / "java_bridge", check=True)
        jars = glob.glob(str(ROOT / "java_bridge" / "target" / "hdp-bnc-weka-*.jar"))
    cp = subprocess.run([str(ROOT / "tools" / "weka" / "classpath.sh")], capture_output=True, text=True,
                        check=True).stdout.strip()
    repo = Path(os.environ.get("MAVEN_REPO", Path.home() / ".m2" / "repository"))
    extra = glob.glob(str(repo / "org/apache/arrow/arrow-format/*/arrow-format-*.jar"))[:1]
    extra += glob.glob(str(repo / "com/google/flatbuffers/flatbuffers-java/*/flatbuffers-java-*.jar"))[:1]
    return os.pathsep.join(jars[:1] + extra + [cp])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000, help="Rows to predict.")
    ap.add_argument("--k", type=int, default=5, help="k of kDB.")
    args = ap.parse_args(argv)

    from hdp_plugin import BayesNetClassifier, save_model
    from synthetic import synthetic

    data = synthetic(50_000 + args.rows, seed=0)  # one network: train on the first rows, predict the rest
    train = data.take(np.arange(50_000))
    test = data.take(np.arange(50_000, 50_000 + args.rows))
    clf = BayesNetClassifier(structure="kdb", k=args.k, iterations=200, random_state=0).fit(train)
    clf.predict_proba(test.take(np.arange(100)))  # compile / load the kernels
    t0 = time.perf_counter()
    proba = clf.predict_proba(test)
    py_s = time.perf_counter() - t0
    print(f"Python: {args.rows} rows {py_s:.3f} s {args.rows / py_s:.0f} rows/s (predict_proba, all cores)")
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "model.arrow"
        save_model(clf, model)
        codes = Path(tmp) / "codes.bin"
        with open(codes, "wb") as f:
            np.array(test.X.shape, dtype="<i4").tofile(f)
            test.X.astype("<i4").tofile(f)
        out = subprocess.run(["java", "-Xmx4g", "-cp", java_classpath(), str(HERE / "java_predict" / "PredictBench.java"),
                              str(model), str(codes)], capture_output=True, text=True, check=True).stdout.strip()
    print(f"Java:   {out} (HDPModel.distribution, one thread)")
    checksum = float(out.split("checksum")[1])
    print(f"checksum Python {proba[:, 0].sum():.6f} / Java {checksum:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
