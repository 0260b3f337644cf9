"""tools/build_wheel.py, the wheel the Weka package carries: it carries the compiled kernels or the build
fails. A Python without hdp_plugin's dependencies gets a build environment of the script's own making
(pip from the package index); where that cannot be made, the build stops with one line saying why and
what to do, instead of a wheel without kernels."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "build_wheel.py"


def _bare_python(where: Path) -> str:
    """A virtual environment of this Python with none of hdp_plugin's dependencies."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / ("Scripts" if os.name == "nt" else "bin") / ("python.exe" if os.name == "nt" else "python")
    assert subprocess.run([str(python), "-c", "import numpy"], capture_output=True).returncode != 0
    return str(python)


def test_a_python_without_numpy_fails_the_build_when_no_build_environment_can_be_filled(tmp_path):
    python = _bare_python(tmp_path / "bare")
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_FIND_LINKS="", PYTHONPATH="")  # pip finds nothing to install
    done = subprocess.run([python, str(SCRIPT), str(tmp_path / "out")], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 1, done.stderr
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert "the wheel carries no compiled kernels" in errors[0] and "has no numpy" in errors[0], errors[0]
    assert "pip could not install" in errors[0] and "--no-kernels" in errors[0], errors[0]
    assert not list((tmp_path / "out").glob("*.whl")), "a wheel without its kernels was built"
    assert "warning" not in done.stderr


@pytest.mark.slow
def test_a_python_without_numpy_builds_a_wheel_that_carries_the_kernels(tmp_path):
    """Needs the package index (pip installs numpy, numba, pyarrow... into the build environment)."""
    python = _bare_python(tmp_path / "bare")
    subprocess.run([python, "-m", "ensurepip", "--default-pip"], check=True, capture_output=True)
    done = subprocess.run([python, str(SCRIPT), str(tmp_path / "out")], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=""), timeout=3600)
    assert done.returncode == 0, done.stderr
    assert "making a build environment" in done.stderr
    (wheel,) = (tmp_path / "out").glob("hdp_plugin-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("hdp_plugin/_kernels/") and n.endswith(".nbc") for n in names), names[:20]
    assert any(n.startswith("hdp_plugin/_kernels_generic/") and n.endswith(".nbc") for n in names)
