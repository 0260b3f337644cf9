"""Weka's NaiveBayes, BayesNet (TAN search) and RandomForest on our cross-validation folds.

Each fold's train and test rows are written as ARFF files holding the ORIGINAL lines of the source
file (numeric values untouched, missing as ``?``), so Weka handles numeric attributes and missing
values as it does by default: NaiveBayes fits a Gaussian per numeric attribute and ignores missing
values, BayesNet discretises with its own supervised (MDL) filter and replaces missing values, and
RandomForest splits on the raw numbers. ``weka_peers/WekaPeers.java`` runs the classifiers in one
JVM per data set (Java 11+ source launcher) and writes the class probabilities of every test row.
The class path comes from ``tools/weka/classpath.sh``, as for the golden-file scripts.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
JAVA_SOURCE = HERE / "weka_peers" / "WekaPeers.java"
CLASSPATH_SCRIPT = ROOT / "tools" / "weka" / "classpath.sh"

WEKA_METHODS = {"Weka NB": "nb", "Weka TAN": "tan", "Weka RF": "rf"}


def weka_classpath(cache_dir: Path | None = None) -> str | None:
    """Weka and its run-time jars from ``tools/weka/classpath.sh``; None without Java or Weka."""
    if shutil.which("java") is None:
        return None
    r = subprocess.run(["bash", str(CLASSPATH_SCRIPT)], capture_output=True, text=True)
    cp = r.stdout.strip()
    return cp if r.returncode == 0 and cp else None


def split_arff(path: Path) -> tuple[list[str], list[str]]:
    """Header lines (through ``@data``) and data lines (one instance each) of a dense ARFF file."""
    header, rows = [], []
    in_data = False
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not in_data:
            header.append(line)
            if line.strip().lower().startswith("@data"):
                in_data = True
            continue
        s = line.strip()
        if s and not s.startswith("%"):
            if s.startswith("{"):
                raise ValueError(f"{path}: sparse ARFF is not supported by this benchmark")
            rows.append(line)
    return header, rows


def write_fold(header: list[str], rows: list[str], index: np.ndarray, out: Path) -> None:
    """Write the given rows (indices into ``rows``) under the source's header."""
    tmp = out.with_suffix(".tmp")
    tmp.write_text("\n".join(header + [rows[i] for i in index]) + "\n", encoding="utf-8")
    tmp.replace(out)


def run_weka(classpath: str, jobs: list[tuple[str, int, Path, Path, Path]]) -> None:
    """Run (method, seed, train.arff, test.arff, out.csv) jobs in one JVM."""
    args = []
    for method, seed, train, test, out in jobs:
        args += [method, str(seed), str(train), str(test), str(out)]
    subprocess.run(["java", "-Xmx2g", "-cp", classpath, str(JAVA_SOURCE), *args], check=True,
                   capture_output=True, text=True)


def read_output(out: Path) -> tuple[np.ndarray, float, float]:
    """Probabilities, train seconds and test seconds from one WekaPeers output file."""
    lines = out.read_text().splitlines()
    head = dict(kv.split("=") for kv in lines[0].lstrip("# ").split())
    proba = np.array([[float(v) for v in line.split(",")] for line in lines[1:]], dtype=np.float64)
    return proba, float(head["train_s"]), float(head["test_s"])
