"""Commands that neither train nor read data start without numba and pyarrow."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import os, runpy, sys
sys.argv = ["hdp-bnc"] + sys.argv[1:]

def report():
    heavy = sorted(m for m in ("numba", "pyarrow", "numpy", "pandas", "scipy") if m in sys.modules)
    print("HEAVY:" + ",".join(heavy), file=sys.stderr, flush=True)

exit_now = os._exit
def _exit(code):  # the command line leaves through os._exit on an error
    report()
    exit_now(code)
os._exit = _exit
try:
    runpy.run_module("hdp_plugin", run_name="__main__")
except SystemExit as e:
    code = e.code
else:
    code = 0
report()
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


def _probe(argv, cwd):
    """Run ``hdp-bnc ARGV`` in a fresh interpreter; its exit code, stdout and the heavy modules it loaded."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", PROBE, *map(str, argv)], capture_output=True, text=True, env=env,
                          timeout=120, cwd=cwd)
    assert "HEAVY:" in proc.stderr, proc.stderr
    heavy = proc.stderr.rsplit("HEAVY:", 1)[1].splitlines()[0].split(",")
    return proc, set(heavy) - {""}


GOLDEN = ROOT / "tests" / "golden" / "models"


@pytest.mark.parametrize("model", ["diabetes-eskdb-hdp", "vote-kdb2-hdp", "diabetes-tan-mestimate"])
def test_info_and_show_read_a_model_without_numba(model, tmp_path):
    """``hdp-bnc info`` reads and checks the whole file with numpy and pyarrow only, and
    prints what ``load_model`` sees: the same trees, cells and concentrations."""
    from hdp_plugin.model import load_model

    path = GOLDEN / f"{model}.hdpbnc"
    proc, heavy = _probe(["info", path], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not {"numba", "pandas", "scipy"} & heavy, heavy
    clf = load_model(path)
    nets = [m.tables for m in clf.members_]
    assert f"{sum(t.n_trees for t in nets)} trees, {sum(t.n_nodes for t in nets)} nodes, " \
           f"{sum(t.n_observed for t in nets)} cells with training rows (of {sum(t.n_cells for t in nets)})" \
           in proc.stdout
    assert f"model file     {path}" in proc.stdout
    if clf.estimator == "hdp":
        conc = [lo for lo, _ in clf.members_[0].concentration_ranges[0]]
        assert "concentrations" in proc.stdout  # "concentrations by depth", a header that may wrap at 80 columns
        assert f"{conc[0]:.3g}" in proc.stdout or f"{conc[0]:.3g}.." in proc.stdout
    proc, heavy = _probe(["show", path, "--member", "0"], tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("digraph network {"), proc.stderr
    assert not {"numba", "pandas", "scipy"} & heavy, heavy
    for j in clf.members_[0].structure.kept:
        assert f'"{clf.class_attribute_.name}" -> "{clf.attributes_[j].name}";' in proc.stdout
    proc, heavy = _probe(["show", path], tmp_path)  # an ensemble: what its members share
    assert proc.returncode == 0 and proc.stdout.startswith("digraph network {"), proc.stderr
    assert not {"numba", "pandas", "scipy"} & heavy, heavy


def test_info_on_a_freshly_trained_model_without_numba(tmp_path):
    """A model written now (not only the golden files), and a damaged copy: a clear error, still no numba."""
    from hdp_plugin import BayesNetClassifier, read_dataset, save_model

    ds = read_dataset(ROOT / "examples" / "vote.arff")
    path = save_model(BayesNetClassifier(structure="kdb", k=1, iterations=20, random_state=3).fit(ds),
                      tmp_path / "m.hdpbnc")
    proc, heavy = _probe(["info", path], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "structure      kDB-1" in proc.stdout or "kDB" in proc.stdout, proc.stdout
    assert "training       435 rows" in proc.stdout
    assert "numba" not in heavy, heavy
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad = tmp_path / "bad.hdpbnc"
    bad.write_bytes(bytes(data))
    proc, heavy = _probe(["info", bad], tmp_path)
    assert proc.returncode == 2 and "error:" in proc.stderr and str(bad) in proc.stderr, proc.stderr
    assert "numba" not in heavy, heavy


def test_daemon_submit_and_status_do_not_import_numba_or_pyarrow(tmp_path):
    spool = tmp_path / "spool"
    proc, heavy = _probe(["daemon", "submit", spool, ROOT / "examples" / "vote.arff", "--name", "j1", "-q"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("model.arrow")
    assert not {"numba", "pyarrow", "pandas"} & heavy, heavy
    proc, heavy = _probe(["daemon", "status", spool, "j1"], tmp_path)
    assert proc.returncode == 0 and "j1" in proc.stdout, proc.stderr
    assert not {"numba", "pyarrow", "numpy", "pandas"} & heavy, heavy
