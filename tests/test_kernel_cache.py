"""hdp_plugin's kernels are cached per digest of their sources, and a wheel's compiled kernels are used
only where they fit (hdp_plugin/_kernel_cache.py).

Real processes on copies of the package at other paths (as a wheel installs it), with one small
kernel (the radix sort) so that compiling stays quick; the full bundle of tools/build_wheel.py is
exercised by the Weka package's build (test_java_bridge) and measured by benchmarks/bench_first_use.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hdp_plugin import _kernel_cache

PACKAGE = Path(_kernel_cache.__file__).resolve().parent

# sorts a small array with the radix kernel and prints what numba's cache did for it
_PROBE = """
import json, numpy as np
from hdp_plugin import _radix, _kernel_cache
keys = np.array([5, 3, 9, 1, 7, 300, 2], np.int64)
_radix.sort_nonnegative(keys, keys.size)
st = _radix.sort_nonnegative.stats
print(json.dumps({"sorted": keys.tolist(), "hits": sum(st.cache_hits.values()),
                  "misses": sum(st.cache_misses.values()), "path": _radix.sort_nonnegative._cache._cache_path,
                  "digest": _kernel_cache.kernel_digest()}))
"""


def _copy_package(where: Path) -> Path:
    shutil.copytree(PACKAGE, where / "hdp_plugin",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc", "_kernels"))
    return where / "hdp_plugin"


def _probe(package: Path, cache: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(package.parent), NUMBA_CACHE_DIR=str(cache), HDP_NUMBA_CACHE="1",
               HDP_WARM_HELPER="0")
    done = subprocess.run([sys.executable, "-c", _PROBE], cwd=package.parent, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_digest_follows_every_kernel_source_and_nothing_else(tmp_path):
    pkg = _copy_package(tmp_path)
    sources = {p.relative_to(pkg).as_posix() for p in _kernel_cache.kernel_sources(pkg)}
    # every file with a kernel, and config.py, whose NJIT options and constants the kernels compile in
    assert {"config.py", "_radix.py", "hdp/kernels.py", "hdp/rng.py", "structure/kernels.py",
            "preprocess/kernels.py"} <= sources
    assert "cli.py" not in sources
    digest = _kernel_cache.kernel_digest(pkg)
    assert digest == _kernel_cache.kernel_digest(PACKAGE)  # the copy's sources are the same
    (pkg / "cli.py").write_text((pkg / "cli.py").read_text() + "\n# a comment\n")
    assert _kernel_cache.kernel_digest(pkg) == digest
    for name in ("hdp/rng.py", "config.py"):
        text = (pkg / name).read_text()
        (pkg / name).write_text(text + "\n# changed\n")
        assert _kernel_cache.kernel_digest(pkg) != digest, name
        (pkg / name).write_text(text)
    assert _kernel_cache.kernel_digest(pkg) == digest


def test_compiled_kernels_travel_with_the_package_and_are_used_only_where_they_fit(tmp_path):
    built = _copy_package(tmp_path / "build")
    first = _probe(built, tmp_path / "build-cache")
    assert first["sorted"] == [1, 2, 3, 5, 7, 9, 300] and first["misses"] == 1 and first["hits"] == 0
    # the kernel went into the digest's own directory under NUMBA_CACHE_DIR
    assert Path(first["path"]).parent == tmp_path / "build-cache" / _kernel_cache.cache_dir_name(first["digest"])
    manifest = _kernel_cache.store(built, tmp_path / "build-cache")
    assert manifest["files"] and all(f.count("/") == 1 for f in manifest["files"])
    assert any(f.endswith(".nbi") for f in manifest["files"])

    # installed elsewhere, with an empty cache: loaded, not compiled
    installed = tmp_path / "site"
    shutil.copytree(built, installed / "hdp_plugin")
    got = _probe(installed / "hdp_plugin", tmp_path / "user-cache")
    assert got["sorted"] == first["sorted"]
    assert (got["hits"], got["misses"]) == (1, 0)
    assert (tmp_path / "user-cache" / _kernel_cache.cache_dir_name(got["digest"])).is_dir()
    assert not list((tmp_path / "user-cache").glob(".*.tmp"))  # the copy's temporary folder is gone

    # a bundle for another CPU (or numba, Python, sources) is not copied: numba compiles, as without it
    mpath = installed / "hdp_plugin" / "_kernels" / "manifest.json"
    for key, value in (("target", ["x86_64-unknown-linux-gnu", "another-cpu", ""]), ("numba", "0.0.1"),
                       ("digest", "0" * 64)):
        foreign = dict(manifest, **{key: value})
        mpath.write_text(json.dumps(foreign))
        got = _probe(installed / "hdp_plugin", tmp_path / f"cache-{key}")
        assert got["sorted"] == first["sorted"] and (got["hits"], got["misses"]) == (0, 1), key

    # a manifest naming paths outside its folder copies nothing anywhere
    mpath.write_text(json.dumps(dict(manifest, files=manifest["files"] + ["../../escaped.nbi"])))
    got = _probe(installed / "hdp_plugin", tmp_path / "cache-escape")
    assert (got["hits"], got["misses"]) == (0, 1)
    assert not list(tmp_path.rglob("escaped.nbi"))

    # a changed kernel source: another digest, another directory; the old entries are never loaded
    mpath.write_text(json.dumps(manifest))
    radix = installed / "hdp_plugin" / "_radix.py"
    radix.write_text(radix.read_text() + "\n# changed\n")
    got = _probe(installed / "hdp_plugin", tmp_path / "user-cache")
    assert got["digest"] != first["digest"] and (got["hits"], got["misses"]) == (0, 1)


@pytest.mark.parametrize("argv", [[], ["build"], ["nonsense", "x"]])
def test_build_command_line_usage(argv, capsys):
    assert _kernel_cache.main(argv) == 2
    assert "usage: python -m hdp_plugin._kernel_cache build PACKAGE_DIR" in capsys.readouterr().err
