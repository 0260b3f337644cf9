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
    for name in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", _kernel_cache.PORTABLE_ENV):
        env.pop(name, None)
    env.update(extra)
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


def test_a_portable_bundle_serves_another_cpu_in_processes_that_may_switch(tmp_path):
    built = _copy_package(tmp_path / "build")
    native = _probe(built, tmp_path / "build-cache")
    # the target numba will use, computed before numba makes its codegen (so that it can still be chosen)
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
    # on this CPU the native bundle fits, and is used whether or not the process may switch
    for extra in ({}, {_kernel_cache.PORTABLE_ENV: "1"}):
        got = _probe(pkg, tmp_path / f"cache-native-{len(extra)}", **extra)
        assert (got["hits"], got["misses"]) == (1, 0) and got["target"] == native["target"], extra

    # another CPU (the native manifest made foreign): a process that may switch loads the portable kernels
    mpath = pkg / "_kernels" / "manifest.json"
    mpath.write_text(json.dumps(dict(json.loads(mpath.read_text()), target=[native["target"][0], "another-cpu", ""])))
    got = _probe(pkg, tmp_path / "cache-other", **{_kernel_cache.PORTABLE_ENV: "1"})
    assert got["sorted"] == [1, 2, 3, 5, 7, 9, 300]
    assert (got["hits"], got["misses"]) == (1, 0) and got["target"][1:] == ["generic", ""]
    assert (tmp_path / "cache-other" / _kernel_cache.cache_dir_name(got["digest"], "generic")).is_dir()
    assert not (tmp_path / "cache-other" / _kernel_cache.cache_dir_name(got["digest"])).exists()
    # one that may not (a Python program's default) keeps the native target and compiles
    got = _probe(pkg, tmp_path / "cache-api")
    assert (got["hits"], got["misses"]) == (0, 1) and got["target"] == native["target"]
    # NUMBA_CPU_NAME always wins; a process started with the generic CPU (a helper of a switched process)
    # loads the portable kernels too
    got = _probe(pkg, tmp_path / "cache-user", NUMBA_CPU_NAME="generic")
    assert (got["hits"], got["misses"]) == (1, 0)
    # a portable bundle for another numba is not used: the process stays native and compiles
    gpath = pkg / "_kernels_generic" / "manifest.json"
    gpath.write_text(json.dumps(dict(manifest, numba="0.0.1")))
    got = _probe(pkg, tmp_path / "cache-old", **{_kernel_cache.PORTABLE_ENV: "1"})
    assert (got["hits"], got["misses"]) == (0, 1) and got["target"] == native["target"]


def test_the_command_line_and_the_daemon_may_switch_to_the_portable_target():
    code = ("import os, sys\n"
            "from hdp_plugin import cli\n"
            "from hdp_plugin.daemon import commands\n"
            "sys.argv = ['hdp-bnc', '--help']\n"
            "for main in (cli.main, commands.main):\n"
            "    os.environ.pop('HDP_PORTABLE_KERNELS', None)\n"
            "    try:\n"
            "        main()\n"
            "    except SystemExit:\n"
            "        pass\n"
            "    print('SET', os.environ.get('HDP_PORTABLE_KERNELS'))\n")
    env = {k: v for k, v in os.environ.items() if k != _kernel_cache.PORTABLE_ENV}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stdout.splitlines() if line.startswith("SET")] == ["SET 1", "SET 1"]


@pytest.mark.parametrize("argv", [[], ["build"], ["nonsense", "x"]])
def test_build_command_line_usage(argv, capsys):
    assert _kernel_cache.main(argv) == 2
    assert "usage: python -m hdp_plugin._kernel_cache build PACKAGE_DIR" in capsys.readouterr().err
