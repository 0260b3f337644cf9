"""The examples run, so they never rot (with few iterations, to stay quick)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def _run(cmd, timeout=300):
    env = {**os.environ, "PYTHON": sys.executable, "COLUMNS": "120"}
    # prefer this interpreter's hdp-bnc over another one on PATH
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)


def test_python_api_example():
    p = _run([sys.executable, str(EXAMPLES / "python_api.py"), "--iterations", "50"])
    assert p.returncode == 0, p.stderr
    assert "the loaded model gives the same probabilities: True" in p.stdout
    assert "5-fold accuracy" in p.stdout


def test_quickstart_example():
    p = _run([sys.executable, str(EXAMPLES / "quickstart.py"), "--iterations", "50"])
    assert p.returncode == 0, p.stderr
    assert "kDB-3" in p.stdout and "m-estimate" in p.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_cli_walkthrough():
    p = _run(["bash", str(EXAMPLES / "cli_walkthrough.sh"), "50"])
    assert p.returncode == 0, p.stderr
    for text in ("RMSE", "kDB-2", "digraph", "p_democrat", "written by hdp_plugin", "predictions.arff"):
        assert text in p.stdout + p.stderr, text
