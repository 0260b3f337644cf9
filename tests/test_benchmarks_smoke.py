"""Keep benchmarks/accuracy.py from rotting: one tiny data set, one repetition, few iterations.

Runs our configurations and whichever PyPI peers are installed (the ``bench`` extra); Weka's
peers are left to the full benchmark (they need a JVM per run).
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def accuracy():
    sys.path.insert(0, str(BENCH))
    try:
        yield importlib.import_module("accuracy")
    finally:
        sys.path.remove(str(BENCH))


def test_sign_test_is_the_exact_two_tailed_binomial(accuracy):
    p = accuracy.report.sign_test_p
    assert p(0, 0) == 1.0
    assert p(5, 5) == 1.0
    assert p(6, 0) == pytest.approx(2 / 64)  # 0.03125: significant at 0.05
    assert p(0, 5) == pytest.approx(2 / 32)  # 0.0625: not significant
    assert p(10, 2) == pytest.approx(2 * (1 + 12 + 66) / 4096)


def test_mean_ranks_share_ties(accuracy):
    table = {"a": {"x": 0.1, "y": 0.1, "z": 0.3}, "b": {"x": 0.3, "y": 0.2, "z": 0.1}}
    assert accuracy.report.mean_ranks(table, ["x", "y", "z"]) == {"x": 2.25, "y": 1.75, "z": 2.0}


def test_accuracy_runs_and_resumes_on_a_tiny_data_set(accuracy, tmp_path, capsys):
    methods = ["HDP NB", "HDP kDB-5", "HDP SkDB", "m-est. kDB-5"]
    methods += [m for m, mod in accuracy.peers_python.PYTHON_PEERS.items()
                if accuracy.peers_python.available(mod) and m != "skbn A2DE"]
    out = tmp_path / "benchmarks.md"
    out.write_text("# Benchmarks\n\nhand-written text that must survive\n")
    argv = ["--datasets", "contact-lenses", "--methods", ",".join(methods), "--iterations", "50",
            "--repeats", "1", "--cache-dir", str(tmp_path / "cache"), "--quiet", "-o", str(out)]
    assert accuracy.main(argv) == 0
    text = out.read_text()
    assert "hand-written text that must survive" in text
    for title in ("### RMSE", "### 0-1 loss", "### log-loss", "#### HDP kDB-5 against each method"):
        assert title in text
    assert "1 data set(s) complete" in text
    row = next(line for line in text.splitlines() if line.startswith("| contact-lenses |"))
    assert row.count("|") == len(methods) + 2 and "inf" not in row
    cached = sorted((tmp_path / "cache" / "contact-lenses").glob("*/r*f*.json"))
    assert len(cached) == 2 * len(methods)
    rec = json.loads(cached[0].read_text())
    assert 0.0 <= rec["rmse"] <= 1.0 and 0.0 <= rec["zero_one"] <= 1.0
    # a second run only rebuilds the report from the cache, and replaces its own section only
    before = {p: p.stat().st_mtime_ns for p in cached}
    assert accuracy.main(argv) == 0
    assert {p: p.stat().st_mtime_ns for p in cached} == before
    assert out.read_text().count("<!-- accuracy:begin") == 1


def test_bench_hdp_trains_on_reference_style_fold_files(tmp_path):
    """``bench_hdp.py --reference-folds DIR`` on fold files written here from vote.arff."""
    import subprocess

    import numpy as np

    src = (BENCH.parent / "tests" / "data" / "vote.arff").read_text().splitlines()
    at = next(i for i, line in enumerate(src) if line.strip().lower() == "@data")
    header = src[: at + 1]
    rows = [line for line in src[at + 1 :] if line.strip() and not line.startswith("%")]
    fold = np.arange(len(rows)) % 2
    folder = tmp_path / "vote"
    folder.mkdir()
    for f in (0, 1):
        train = [r for r, g in zip(rows, fold) if g != f]
        test = [r for r, g in zip(rows, fold) if g == f]
        (folder / f"fold{f}_train.arff").write_text("\n".join(header + train) + "\n")
        (folder / f"fold{f}_test.arff").write_text("\n".join(header + test) + "\n")
    proc = subprocess.run(
        [sys.executable, str(BENCH / "bench_hdp.py"), "--reference-folds", str(tmp_path), "--workloads",
         "vote:kdb:2", "--threads", "1", "--iterations", "60"],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    row = next(line for line in proc.stdout.splitlines() if line.startswith("| vote:kdb:2 | 1 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert float(cells[2]) > 0 and float(cells[4]) > 0  # CPU seconds, ns per cell and iteration
    assert 0.05 < float(cells[5]) < 0.5 and cells[6] == ""  # pooled RMSE; no other program's results here
    bad = subprocess.run([sys.executable, str(BENCH / "bench_hdp.py"), "--reference-folds", str(tmp_path),
                          "--workloads", "nowhere:kdb:2", "--threads", "1"], capture_output=True, text=True,
                         timeout=600)
    assert bad.returncode != 0 and "fold0_train.arff not found" in bad.stderr
