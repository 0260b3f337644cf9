"""Commands that neither train nor read data start without numba and pyarrow (issue 12)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import runpy, sys
sys.argv = ["hdp-bnc"] + sys.argv[1:]
try:
    runpy.run_module("hdp_plugin", run_name="__main__")
except SystemExit as e:
    code = e.code
else:
    code = 0
heavy = sorted(m for m in ("numba", "pyarrow", "numpy", "pandas", "scipy") if m in sys.modules)
print("HEAVY:" + ",".join(heavy), file=sys.stderr)
sys.exit(code)
"""


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["train", "--help"], ["evaluate", "--help"],
                                  ["daemon", "--help"], ["daemon", "submit", "--help"]])
def test_help_and_version_do_not_import_numba_or_pyarrow(argv):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, env=env,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "Usage" in proc.stdout or "hdp-bnc" in proc.stdout
    assert "HEAVY:" in proc.stderr, proc.stderr
    heavy = proc.stderr.rsplit("HEAVY:", 1)[1].splitlines()[0].split(",")
    assert not {"numba", "pyarrow", "numpy"} & set(heavy), heavy


def test_import_hdp_plugin_is_light_until_the_api_is_used():
    code = ("import sys, hdp_plugin; a = 'numba' in sys.modules or 'pyarrow' in sys.modules; "
            "hdp_plugin.BayesNetClassifier; b = 'numba' in sys.modules; print(a, b)")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                         cwd=ROOT)
    assert out.stdout.split() == ["False", "True"], out.stderr
