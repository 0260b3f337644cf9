"""Build the hdp_plugin wheel into a folder (the Weka package carries it; java_bridge's `mvn package` runs this).

    python3 tools/build_wheel.py [--no-kernels] OUTDIR

The source is copied to a temporary folder first, so that concurrent builds do not share setuptools'
build/ folder and the clone stays clean. In that copy, the numba kernels a default fit and a prediction
use are compiled for this machine's CPU and for numba's generic CPU (``python -m hdp_plugin._kernel_cache
build``, about a minute, the two at once) and go into the wheel, so that a first use with the same numba
and Python loads them instead of compiling: the native ones on a machine of the same CPU, the generic
ones on any other CPU of the platform (hdp_plugin/_kernel_cache.py); elsewhere they are ignored.
``--no-kernels`` leaves them out; if compiling them fails, the wheel is built without them and a
warning says why. With setuptools 77 or later installed (the `test` extra brings
it) the build needs no network (`--no-build-isolation`); otherwise pip fetches setuptools for an isolated
build.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _setuptools_is_recent() -> bool:
    try:
        major = int(metadata.version("setuptools").split(".")[0])
    except (metadata.PackageNotFoundError, ValueError):
        return False
    return major >= 77  # the licence expression of pyproject.toml (PEP 639)


def _compile_kernels(package: Path) -> None:
    cmd = [sys.executable, "-m", "hdp_plugin._kernel_cache", "build", str(package)]
    env = dict(os.environ, PYTHONPATH=str(package.parent))
    done = subprocess.run(cmd, cwd=package.parent, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode == 0:
        print(f"kernels: {done.stdout.strip()}", file=sys.stderr)
    else:
        reason = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        print(f"warning: the wheel carries no compiled kernels (its first use compiles them): {reason[0]}",
              file=sys.stderr)
        shutil.rmtree(package / "_kernels", ignore_errors=True)
        shutil.rmtree(package / "_kernels_generic", ignore_errors=True)


def main(argv: list[str]) -> int:
    kernels = "--no-kernels" not in argv
    argv = [a for a in argv if a != "--no-kernels"]
    if len(argv) != 1 or argv[0].startswith("-"):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    out = Path(argv[0]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("hdp_plugin-*.whl"):
        old.unlink()
    with tempfile.TemporaryDirectory(prefix="hdp-wheel-") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        for name in ("pyproject.toml", "README.md", "LICENSE"):
            shutil.copy2(ROOT / name, src / name)
        shutil.copytree(ROOT / "hdp_plugin", src / "hdp_plugin",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc", "_kernels",
                                                      "_kernels_generic"))
        if kernels:
            _compile_kernels(src / "hdp_plugin")
        cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "--quiet",
               "-w", str(out), str(src)]
        if _setuptools_is_recent():
            cmd.insert(4, "--no-build-isolation")
        done = subprocess.run(cmd, check=False)
        if done.returncode != 0:
            print(f"error: building the hdp_plugin wheel failed: {' '.join(cmd)}", file=sys.stderr)
            return 1
    wheels = sorted(out.glob("hdp_plugin-*.whl"))
    if len(wheels) != 1:
        print(f"error: expected one hdp_plugin wheel in {out}, found {len(wheels)}", file=sys.stderr)
        return 1
    print(wheels[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
