"""Prediction rows per second in Python and in the Weka package's pure Java, on the same model.

Run:  python benchmarks/bench_java_predict.py [--rows 1000000] [--k 5]
      python benchmarks/bench_java_predict.py --data ARFF|NAME [--mlbench-dir DIR] [--before DIR] [--rounds 3]

Synthetic mode (no --data): trains kDB-k (HDP, 200 iterations) on 50,000 seeded synthetic rows, writes
the model file, then predicts ROWS synthetic rows with BayesNetClassifier.predict_proba (all cores) and
with the Java network's distribution (one thread, after a warm-up pass), and prints both probabilities'
checksums.

--data ARFF (or a data set name, as benchmarks/accuracy.py finds them, with --mlbench-dir for mlbench's):
trains the package default, ``BayesNetClassifier(random_state=0)``, on the file and predicts the file's rows
in Python (predict_proba of the saved model, after a warm-up) and in Java (a separate ``java`` process,
``java_predict/PredictArff.java``, predicting as HDPBayesNet does: row by row, as distributionForInstance,
and in blocks of 256 rows, as distributionsForInstances for Weka's evaluation, the two alternating in the
same process, each its shortest pass; the blocks must give the rows' probabilities exactly); every side's
Java probabilities must match its own Python's within 1e-6. With --before DIR, another
checkout does the same with its own code: its Python (subprocesses with PYTHONPATH=DIR) trains and writes
its own model file, and its own jar (DIR/java_bridge/target, built with `mvn package` if absent)
predicts. --rounds alternates the two codes and prints each side's minimum and the ratio after/before.

Needs `mvn package` to have been run in java_bridge/ (it runs it if the jar is absent).
"""

from __future__ import annotations

import argparse
import glob
import json
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


def java_classpath(root: Path = ROOT) -> str:
    """The class path of the Weka package's jar of the checkout ``root`` (built if absent), its Arrow
    dependencies and Weka."""
    pattern = str(root / "java_bridge" / "target" / "hdp-bnc-weka-*.jar")
    if not glob.glob(pattern):
        subprocess.run(["mvn", "-q", "-B", "package", "-DskipTests"], cwd=root / "java_bridge", check=True)
    jars = sorted(glob.glob(pattern))
    if not jars:
        raise SystemExit(f"no {pattern} after `mvn package` in {root / 'java_bridge'}")
    cp = subprocess.run([str(ROOT / "tools" / "weka" / "classpath.sh")], capture_output=True, text=True,
                        check=True).stdout.strip()
    repo = Path(os.environ.get("MAVEN_REPO", Path.home() / ".m2" / "repository"))
    extra = glob.glob(str(repo / "org/apache/arrow/arrow-format/*/arrow-format-*.jar"))[:1]
    extra += glob.glob(str(repo / "com/google/flatbuffers/flatbuffers-java/*/flatbuffers-java-*.jar"))[:1]
    return os.pathsep.join(jars[:1] + extra + [cp])


def worker(args) -> int:
    """One side's Python, run with PYTHONPATH set to its checkout: ``train`` fits the default on the ARFF
    file and writes the model file; ``predict`` loads it, predicts the file's rows (after a warm-up on a
    few), writes the probabilities (.npy) and prints the seconds."""
    import hdp_plugin
    from hdp_plugin import BayesNetClassifier, load_model, read_dataset, save_model

    where = Path(hdp_plugin.__file__).resolve()
    if args.root is not None and Path(args.root).resolve() not in where.parents:
        raise SystemExit(f"hdp_plugin comes from {where}, not from {args.root}: set PYTHONPATH")
    data = read_dataset(args.data)
    if args.worker == "train":
        save_model(BayesNetClassifier(random_state=0).fit(data), args.model)
        return 0
    clf = load_model(args.model)
    clf.predict_proba(data.take(np.arange(min(100, data.n_rows))))  # load the kernels
    t0 = time.perf_counter()
    proba = clf.predict_proba(data)
    seconds = time.perf_counter() - t0
    np.save(args.proba, proba)
    print(json.dumps({"seconds": seconds, "rows": int(data.n_rows)}))
    return 0


def data_mode(args) -> int:
    """--data: both sides train, then --rounds of Python and Java prediction, the sides alternating."""
    sides = {"after": ROOT}
    if args.before:
        sides["before"] = Path(args.before).resolve()
    script = Path(__file__).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)

        def python(side, *extra):
            env = dict(os.environ, PYTHONPATH=str(sides[side]))
            return subprocess.run([sys.executable, str(script), "--data", str(args.data), "--root", str(sides[side]),
                                   "--model", str(tmp / f"{side}.model"), *extra], env=env, check=True,
                                  capture_output=True, text=True).stdout

        classpath = {}
        for side in sides:
            t0 = time.perf_counter()
            python(side, "--worker", "train")
            where = f" ({sides[side]})" if args.before else ""
            print(f"{side}: trained the default on {args.data.name} in {time.perf_counter() - t0:.1f} s{where}",
                  flush=True)
            classpath[side] = java_classpath(sides[side])
        times = {side: {"python": [], "java": [], "java blocks": [], "java read": [], "java first read": []}
                 for side in sides}
        for r in range(args.rounds):
            for side in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
                doc = json.loads(python(side, "--worker", "predict", "--proba", str(tmp / f"{side}.npy")))
                proba = np.load(tmp / f"{side}.npy")
                run = subprocess.run(["java", "-Xmx4g", "-cp", classpath[side], str(HERE / "java_predict" / "PredictArff.java"),
                                      str(tmp / f"{side}.model"), str(args.data), str(tmp / f"{side}.java.bin")],
                                     capture_output=True, text=True)
                if run.returncode != 0:
                    print(f"{side}: PredictArff failed: {run.stderr.strip()}")
                    return 1
                lines = [line.split() for line in run.stdout.splitlines()]
                java = np.fromfile(tmp / f"{side}.java.bin", dtype="<f8").reshape(proba.shape)
                rows, java_s = int(lines[0][0]), float(lines[0][2])
                blocks_s = None if lines[1][1] == "unavailable" else float(lines[1][1])
                times[side]["java read"].append(float(lines[2][1]))
                times[side]["java first read"].append(float(lines[2][4]))
                gap = float(np.abs(java - proba).max())
                if rows != doc["rows"] or not gap <= 1e-6:
                    print(f"{side}: Java's {rows} rows differ from Python's {doc['rows']} by up to {gap:.3g}")
                    return 1
                times[side]["python"].append(doc["seconds"])
                times[side]["java"].append(java_s)
                if blocks_s is not None:
                    times[side]["java blocks"].append(blocks_s)
                blocks = "" if blocks_s is None else f", Java in blocks {blocks_s:.3f} s"
                print(f"round {r + 1} {side}: Python {doc['seconds']:.3f} s, Java row by row {java_s:.3f} s{blocks} "
                      f"({rows} rows, largest difference {gap:.2g}); Java reads the model file in "
                      f"{times[side]['java read'][-1]:.3f} s ({times[side]['java first read'][-1]:.3f} s the first time)",
                      flush=True)
        for side in sides:
            best = {lang: min(t) for lang, t in times[side].items() if t}
            blocks = ""
            if "java blocks" in best:
                blocks = (f", Java in blocks {best['java blocks']:.3f} s (blocks / row by row "
                          f"{best['java blocks'] / best['java']:.3f})")
            print(f"{side}: minimum of {args.rounds}: Python {best['python']:.3f} s, "
                  f"Java row by row {best['java']:.3f} s{blocks}; Java reads the model file in {best['java read']:.3f} s "
                  f"({best['java first read']:.3f} s the first time)")
        if "before" in sides:
            for lang in ("python", "java", "java read", "java first read"):
                ratio = min(times["after"][lang]) / min(times["before"][lang])
                print(f"{lang}: after / before = {ratio:.3f}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000, help="Rows to predict.")
    ap.add_argument("--k", type=int, default=5, help="k of kDB.")
    ap.add_argument("--data", type=Path, help="An ARFF file, or a data set name as benchmarks/accuracy.py finds "
                    "them: train the default on it and predict its rows.")
    ap.add_argument("--mlbench-dir", type=Path, help="With --data NAME: r-cran-mlbench's data folder (mlbench.py).")
    ap.add_argument("--before", type=Path, help="With --data: another checkout, timed beside this one.")
    ap.add_argument("--rounds", type=int, default=3, help="With --data: rounds, the two codes alternating.")
    ap.add_argument("--worker", choices=["train", "predict"], help=argparse.SUPPRESS)
    ap.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--model", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--proba", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args)
    if args.before and not args.data:
        ap.error("--before needs --data")
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    if args.data:
        import accuracy

        found, why = accuracy.find_dataset(str(args.data), [accuracy.DEBIAN_EXAMPLES, ROOT / "tests" / "data"],
                                           args.mlbench_dir)
        if found is None:
            ap.error(f"--data {args.data}: {why}")
        args.data = found
        return data_mode(args)

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
    print(f"Java:   {out} (a network's distribution, one thread)")
    checksum = float(out.split("checksum")[1])
    print(f"checksum Python {proba[:, 0].sum():.6f} / Java {checksum:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
