"""First use: the one-time compilation is announced, and the kernel cache has somewhere to go."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from hdp_plugin import config

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
    monkeypatch.setattr(config, "_writable_dir", lambda path: any(path.startswith(w) for w in writable))
    assert config._numba_cache_dir() == ""  # nowhere at all: no disk cache
    writable.add(str(tmp_path))
    got = config._numba_cache_dir()
    assert got.startswith(str(tmp_path)) and "hdp_plugin-numba-cache" in got
    writable.add(os.path.dirname(config.__file__))  # a writable install: numba's own choice
    assert config._numba_cache_dir() is None
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))  # an explicit choice always wins
    writable.clear()
    assert config._numba_cache_dir() is None


def test_writable_dir_probes_for_real(tmp_path):
    assert config._writable_dir(str(tmp_path / "new" / "dir"))
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert not config._writable_dir(str(blocker / "sub"))
