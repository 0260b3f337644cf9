"""Model size, memory and time of the default classifier, two checkouts of the code side by side.

Run:

    python benchmarks/bench_model_size.py DATA.arff [DATA.arff ...] [--before OLD_CHECKOUT] [--rounds 2]

Every data set is trained on whole with the defaults and seed 0 (as ``hdp-bnc train DATA -o MODEL
--seed 0``), the model saved, loaded back and its training rows predicted, each in a fresh process of
its own (so that its peak memory is its own). With ``--before`` the same runs use the code of another
checkout (its ``hdp_plugin`` put first on the path), alternating with this one round by round; times
are the minimum over the rounds. It prints per data set and code: the dense cells of the trees, the
cells stored (those with training rows), the model file's size, the peak resident memory of the
training process, and the training and prediction times (the first use's compilation is done by a
warm-up fit in each process before the timed one).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, os, resource, sys, tempfile, time
import numpy as np
from hdp_plugin import BayesNetClassifier, read_dataset
from hdp_plugin.model import load_model, save_model

data = read_dataset(sys.argv[1])
few = np.unique(np.linspace(0, data.n_rows - 1, 60).astype(np.int64))  # rows of every class, sorted files too
BayesNetClassifier(random_state=0, n_jobs=1).fit(data.take(few))  # compile/load
t0 = time.perf_counter()
clf = BayesNetClassifier(random_state=0, n_jobs=1).fit(data)
train = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
nets = [m.tables for m in clf.members_]
cells = sum(getattr(t, "trees", t).n_cells for t in nets)
observed = sum(getattr(t, "n_observed", 0) for t in nets)
with tempfile.TemporaryDirectory() as tmp:
    path = save_model(clf, os.path.join(tmp, "m.hdpbnc"))
    size = os.path.getsize(path)
    back = load_model(path)
    back.predict_proba(data.take(few))
    t0 = time.perf_counter()
    back.predict_proba(data)
    predict = time.perf_counter() - t0
print(json.dumps({"cells": cells, "observed": observed or None, "bytes": size, "peak": peak, "train": train,
                  "predict": predict}))
"""


def run(code_dir: Path, data: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code_dir))
    out = subprocess.run([sys.executable, "-c", CHILD, str(Path(data).resolve())], env=env, cwd=code_dir,
                         capture_output=True, text=True, check=True)  # cwd: "-c" puts it first on the path
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="+", help="ARFF (or other) files to train on.")
    ap.add_argument("--before", type=Path, help="Another checkout whose code runs beside this one.")
    ap.add_argument("--rounds", type=int, default=1, help="Rounds, alternating the two codes; times are minima.")
    args = ap.parse_args(argv)
    codes = [("before", args.before.resolve())] if args.before else []
    codes.append(("after", HERE.parent))
    print("| data set | code | cells | cells stored | model file MB | peak training MB | train s | predict s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for data in args.data:
        best: dict = {}
        for _ in range(args.rounds):
            for label, code_dir in codes:
                got = run(code_dir, data)
                old = best.get(label)
                best[label] = got if old is None else {**got, "train": min(got["train"], old["train"]),
                                                       "predict": min(got["predict"], old["predict"])}
        for label, _ in codes:
            r = best[label]
            stored = f"{r['observed']:,}" if r["observed"] else "all"
            print(f"| {Path(data).stem} | {label} | {r['cells']:,} | {stored} | {r['bytes'] / 1e6:.1f} | "
                  f"{r['peak'] / 2**20:.0f} | {r['train']:.2f} | {r['predict']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
