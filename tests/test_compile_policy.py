"""First use: the one-time compilation is announced, and the kernel cache has somewhere to go."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from hdp_plugin.runtime import jit

ROOT = Path(__file__).resolve().parents[1]
SMALL = "from hdp_plugin.hdp.stirling import log_stirling_table; log_stirling_table(4, 4)"
NOTICE = "compiling hdp_plugin's numba kernels once"


def _run(code, env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                          cwd=ROOT)


def test_first_compilation_is_announced_once_and_cached_kernels_are_not(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("HDP_NUMBA_CACHE", None)
    first = _run(SMALL, env)
    assert first.returncode == 0, first.stderr
    assert first.stderr.count(NOTICE) == 1
    assert any((tmp_path / "cache").rglob("*.nbi"))
    second = _run(SMALL, env)
    assert second.returncode == 0 and NOTICE not in second.stderr, second.stderr


def test_cache_goes_to_the_temporary_directory_when_nothing_else_is_writable(monkeypatch, tmp_path):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    writable = set()
    monkeypatch.setattr(jit, "_writable_dir", lambda path: any(path.startswith(w) for w in writable))
    assert jit._numba_cache_dir() == ""  # nowhere at all: no disk cache
    writable.add(str(tmp_path))
    got = jit._numba_cache_dir()
    assert got.startswith(str(tmp_path)) and "hdp_plugin-numba-cache" in got
    writable.add(os.path.dirname(os.path.dirname(jit.__file__)))  # a writable install: numba's own choice
    assert jit._numba_cache_dir() is None
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))  # an explicit choice always wins
    writable.clear()
    assert jit._numba_cache_dir() is None


def test_writable_dir_probes_for_real(tmp_path):
    assert jit._writable_dir(str(tmp_path / "new" / "dir"))
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert not jit._writable_dir(str(blocker / "sub"))


HELPED = """
import numpy as np
from numba.core import event
compiled = []
class L(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__name__)
    def on_end(self, ev):
        pass
event.register("numba:compile", L())
from hdp_plugin import BayesNetClassifier
from hdp_plugin.runtime import warm as _warm
from hdp_plugin.data import read_dataset
ds = read_dataset("tests/data/vote.arff")
clf = BayesNetClassifier(structure="nb", iterations=30, random_state=3, n_jobs=1).fit(ds)
np.save({out!r}, clf.predict_proba(ds))
print("helper", _warm.helper_running(), "compiled sample_trees here", "sample_trees" in compiled)
"""


def test_a_first_fit_takes_the_samplers_kernels_from_the_helper_and_the_same_model(tmp_path):
    """A cold cache: the helper process compiles the sampler's kernels, this one loads them, and the
    model is the one a warm process fits."""
    from hdp_plugin import BayesNetClassifier
    from hdp_plugin.data import read_dataset

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), HDP_WARM_HELPER="always",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("HDP_NUMBA_CACHE", None)
    out = tmp_path / "proba.npy"
    proc = _run(HELPED.format(out=str(out)), env)
    assert proc.returncode == 0, proc.stderr
    assert "helper True compiled sample_trees here False" in proc.stdout, proc.stdout + proc.stderr
    ds = read_dataset(ROOT / "tests" / "data" / "vote.arff")
    here = BayesNetClassifier(structure="nb", iterations=30, random_state=3, n_jobs=1).fit(ds).predict_proba(ds)
    assert np.array_equal(np.load(out), here)


def test_a_first_fit_records_its_compile_time_apart_from_its_fit_time(tmp_path):
    """A cold cache and no helper: ``train`` compiles the kernels in its fit; the model's fit time
    leaves that out (compile_seconds has it), and ``info`` and ``train`` say both. m-estimates: the
    kernels of counting and prediction are enough to show it, in half the time the sampler's take."""
    import json

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), HDP_WARM_HELPER="0",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("HDP_NUMBA_CACHE", None)
    model = tmp_path / "m.hdpbnc"
    cli = [sys.executable, "-m", "hdp_plugin"]
    train = subprocess.run([*cli, "train", ROOT / "tests" / "data" / "weather.nominal.arff", "-o", model, "-s", "nb",
                            "-e", "m-estimate", "--threads", "1"], capture_output=True, text=True, env=env, timeout=900)
    assert train.returncode == 0, train.stderr
    doc = json.loads(subprocess.run([*cli, "info", model, "--json"], capture_output=True, text=True, env=env,
                                    timeout=300, check=True).stdout)["training"]
    wall = float(re.search(r"wall time ([\d.]+) s", train.stderr).group(1))
    fit, compiled = doc["fit_seconds"], doc["compile_seconds"]
    # a fit of 14 rows takes a fraction of a second; compiling the kernels it uses takes the most of it
    assert compiled > 0.5 * wall and fit < 0.5 * compiled, (fit, compiled, wall)
    assert fit + compiled <= wall + 0.01
    assert re.search(r"fit time [\d.]+ s, wall time [\d.]+ s \(compiling numba's kernels: [\d.]+ s\)", train.stderr)
    text = subprocess.run([*cli, "info", model], capture_output=True, text=True, env=env, timeout=300,
                          check=True).stdout
    text = " ".join(text.split())  # a line wrapped at 80 columns
    assert re.search(rf"fit time {fit:.2f} s \(and {compiled:.2f} s compiling numba's kernels, once\)", text), text
