"""hdp_plugin's kernels are cached per digest of their sources, and a wheel's compiled kernels are used
only where they fit (hdp_plugin/runtime/kernel_cache.py).

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

from hdp_plugin.runtime import kernel_cache as _kernel_cache

PACKAGE = Path(_kernel_cache.__file__).resolve().parents[1]

# sorts a small array with the radix kernel and prints what numba's cache did for it
_PROBE = """
import json, numpy as np
from hdp_plugin.runtime import radix as _radix, kernel_cache as _kernel_cache
keys = np.array([5, 3, 9, 1, 7, 300, 2], np.int64)
_radix.sort_nonnegative(keys, keys.size)
st = _radix.sort_nonnegative.stats
print(json.dumps({"sorted": keys.tolist(), "hits": sum(st.cache_hits.values()),
                  "misses": sum(st.cache_misses.values()), "path": _radix.sort_nonnegative._cache._cache_path,
                  "digest": _kernel_cache.kernel_digest(), "target": _kernel_cache._target_magic(),
                  "host": _kernel_cache._host_target()}))
"""


def _copy_package(where: Path) -> Path:
    shutil.copytree(PACKAGE, where / "hdp_plugin",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc", "_kernels",
                                                  "_kernels_generic"))
    return where / "hdp_plugin"


def _probe(package: Path, cache: Path, **extra: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(package.parent), NUMBA_CACHE_DIR=str(cache), HDP_NUMBA_CACHE="1",
               HDP_WARM_HELPER="0")
    for name in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES"):
        env.pop(name, None)
    env.update(extra)
    done = subprocess.run([sys.executable, "-c", _PROBE], cwd=package.parent, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_digest_follows_every_kernel_source_and_nothing_else(tmp_path):
    pkg = _copy_package(tmp_path)
    sources = {p.relative_to(pkg).as_posix() for p in _kernel_cache.kernel_sources(pkg)}
    # every file with a kernel, the NJIT options (runtime/jit.py) and config.py, whose constants the
    # kernels compile in
    assert {"config.py", "runtime/jit.py", "runtime/radix.py", "seeds/xoshiro.py", "hdp/kernels.py", "hdp/sweeps.py",
            "hdp/rng.py", "structure/count_kernels.py", "structure/trie_kernels.py", "structure/loo_kernels.py",
            "preprocess/kernels.py"} <= sources
    assert "cli/commands.py" not in sources
    digest = _kernel_cache.kernel_digest(pkg)
    assert digest == _kernel_cache.kernel_digest(PACKAGE)  # the copy's sources are the same
    (pkg / "cli/commands.py").write_text((pkg / "cli/commands.py").read_text() + "\n# a comment\n")
    assert _kernel_cache.kernel_digest(pkg) == digest
    for name in ("hdp/rng.py", "config.py", "runtime/jit.py"):
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
    radix = installed / "hdp_plugin" / "runtime" / "radix.py"
    radix.write_text(radix.read_text() + "\n# changed\n")
    got = _probe(installed / "hdp_plugin", tmp_path / "user-cache")
    assert got["digest"] != first["digest"] and (got["hits"], got["misses"]) == (0, 1)


def test_a_portable_bundle_serves_another_cpu_without_touching_the_process_target(tmp_path):
    built = _copy_package(tmp_path / "build")
    native = _probe(built, tmp_path / "build-cache")
    # the target numba will use, computed as numba does but without making its codegen
    assert native["host"] == native["target"]
    _kernel_cache.store(built, tmp_path / "build-cache")
    generic = _probe(built, tmp_path / "build-cache-generic", NUMBA_CPU_NAME="generic")
    assert generic["target"][1:] == ["generic", ""] and generic["host"] == generic["target"]
    assert (generic["hits"], generic["misses"]) == (0, 1)
    assert Path(generic["path"]).parent.name == _kernel_cache.cache_dir_name(generic["digest"], "generic")
    manifest = _kernel_cache.store(built, tmp_path / "build-cache-generic", portable=True)
    assert manifest["target"][1:] == ["generic", ""] and (built / "_kernels_generic" / "manifest.json").is_file()

    installed = tmp_path / "site"
    shutil.copytree(built, installed / "hdp_plugin")
    pkg = installed / "hdp_plugin"
    # on this CPU the native bundle fits and is used
    got = _probe(pkg, tmp_path / "cache-native")
    assert (got["hits"], got["misses"]) == (1, 0) and got["target"] == native["target"]

    # another CPU (the native manifest made foreign): the portable kernels are copied in and loaded, and the
    # process keeps numba's native target (a program's own numba functions are not affected)
    mpath = pkg / "_kernels" / "manifest.json"
    mpath.write_text(json.dumps(dict(json.loads(mpath.read_text()), target=[native["target"][0], "another-cpu", ""])))
    for _ in range(2):  # the second process finds them in its cache
        got = _probe(pkg, tmp_path / "cache-other")
        assert got["sorted"] == [1, 2, 3, 5, 7, 9, 300]
        assert (got["hits"], got["misses"]) == (1, 0) and got["target"] == native["target"]
        assert Path(got["path"]).parent.name == _kernel_cache.cache_dir_name(got["digest"])
    # a process told to compile for the generic CPU (NUMBA_CPU_NAME) loads them as its own
    got = _probe(pkg, tmp_path / "cache-user", NUMBA_CPU_NAME="generic")
    assert (got["hits"], got["misses"]) == (1, 0) and got["target"][1:] == ["generic", ""]
    # a portable bundle for another numba is not used: numba compiles, for this CPU
    gpath = pkg / "_kernels_generic" / "manifest.json"
    gpath.write_text(json.dumps(dict(manifest, numba="0.0.1")))
    got = _probe(pkg, tmp_path / "cache-old")
    assert (got["hits"], got["misses"]) == (0, 1) and got["target"] == native["target"]


@pytest.mark.skipif(__import__("platform").machine().lower() not in ("x86_64", "amd64"), reason="an x86-64 CPU name")
def test_only_the_generic_cpu_entries_of_hdp_plugin_kernels_are_looked_up(tmp_path):
    # an entry of another named CPU is never loaded (it may use instructions this CPU lacks); x86-64, which
    # this machine can run, stands for one here
    built = _copy_package(tmp_path / "build")
    _probe(built, tmp_path / "cache", NUMBA_CPU_NAME="x86-64", NUMBA_CPU_FEATURES="")
    dirs = list((tmp_path / "cache").glob("hdp_plugin-*-cpu-x86-64"))
    assert len(dirs) == 1
    shutil.copytree(dirs[0], tmp_path / "cache" / dirs[0].name.replace("-cpu-x86-64", ""))
    got = _probe(built, tmp_path / "cache")
    assert (got["hits"], got["misses"]) == (0, 1)


@pytest.mark.parametrize("argv", [[], ["build"], ["nonsense", "x"]])
def test_build_command_line_usage(argv, capsys):
    assert _kernel_cache.main(argv) == 2
    assert "usage: python -m hdp_plugin.runtime.kernel_cache build PACKAGE_DIR" in capsys.readouterr().err
