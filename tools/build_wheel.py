"""Build the hdp_plugin wheel into a folder (the Weka package carries it; java_bridge's `mvn package` runs this).

    python3 tools/build_wheel.py [--no-kernels] OUTDIR

The source is copied to a temporary folder first, so that concurrent builds do not share setuptools'
build/ folder and the clone stays clean. In that copy, the numba kernels a default fit and a prediction
use are compiled for this machine's CPU and for numba's generic CPU (``python -m hdp_plugin.runtime.kernel_cache
build``, about a minute, the two at once) and go into the wheel, so that a first use with the same numba
and Python loads them instead of compiling: the native ones on a machine of the same CPU, the generic
ones on any other CPU of the platform (hdp_plugin/runtime/kernel_cache.py); elsewhere they are ignored.
The kernels are compiled by this Python when it has hdp_plugin's dependencies (numpy, numba, pyarrow,
liac-arff, typer); otherwise by a build environment this script makes for the purpose (a virtual
environment of this Python in the temporary folder, into which pip installs the dependencies named in
pyproject.toml from the package index; about 135 MB to download). If neither can compile them, the
build fails with one line saying why: a wheel without its kernels is never built unasked.
``--no-kernels`` leaves them out (``--kernels``, the default, is accepted for the sake of Maven's
``-Dhdp.wheel.kernels``). With setuptools 77 or later installed (the `test` extra brings it) the wheel
itself builds without the network (`--no-build-isolation`); otherwise pip fetches setuptools for an
isolated build.
"""

from __future__ import annotations

import importlib.util
import os
import re
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


#: the import name of each runtime dependency whose distribution name differs from it
_IMPORT_NAMES = {"liac-arff": "arff"}


def _dependencies() -> list[str]:
    """The runtime requirements of pyproject.toml's [project] dependencies (no TOML parser on Python 3.10)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^dependencies\s*=\s*\[(.*?)^\]", text, re.S | re.M)
    if block is None:
        raise SystemExit("error: no dependencies list in pyproject.toml")
    return re.findall(r'^\s*"([^"]+)"', block.group(1), re.M)


def _missing(requirements: list[str]) -> list[str]:
    """The requirements whose module this Python cannot import."""
    names = [re.split(r"[<>=!~ \[;]", r, maxsplit=1)[0] for r in requirements]
    return [n for n in names if importlib.util.find_spec(_IMPORT_NAMES.get(n, n).replace("-", "_")) is None]


def _last_line(done: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in (done.stderr or done.stdout or "").strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else f"exit code {done.returncode}"


def _build_python(tmp: Path) -> str:
    """A Python with hdp_plugin's dependencies: this one, or a virtual environment made for the build."""
    requirements = _dependencies()
    missing = _missing(requirements)
    if not missing:
        return sys.executable
    env = tmp / "build-env"
    print(f"kernels: {sys.executable} has no {', '.join(missing)}; making a build environment in which pip "
          f"installs {' '.join(requirements)} (about 135 MB to download, once per build)", file=sys.stderr)
    hint = (f"install them for {sys.executable} (or give mvn -Dhdp.python=A_PYTHON_THAT_HAS_THEM), or build "
            "without kernels (--no-kernels; mvn -Dhdp.wheel.kernels=--no-kernels), whose first use compiles them")
    done = subprocess.run([sys.executable, "-m", "venv", str(env)], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise _KernelsFailed(f"{sys.executable} has no {', '.join(missing)} and cannot make a virtual environment "
                             f"({_last_line(done)}); {hint}")
    python = str(env / ("Scripts" if os.name == "nt" else "bin") / ("python.exe" if os.name == "nt" else "python"))
    done = subprocess.run([python, "-m", "pip", "install", "--disable-pip-version-check", "--quiet", *requirements],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise _KernelsFailed(f"{sys.executable} has no {', '.join(missing)}, and pip could not install "
                             f"hdp_plugin's dependencies into a build environment ({_last_line(done)}); {hint}")
    return python


class _KernelsFailed(Exception):
    """The kernels cannot be compiled; the message says why and what to do."""


def _compile_kernels(package: Path, tmp: Path) -> None:
    python = _build_python(tmp)
    cmd = [python, "-m", "hdp_plugin.runtime.kernel_cache", "build", str(package)]
    env = dict(os.environ, PYTHONPATH=str(package.parent))
    done = subprocess.run(cmd, cwd=package.parent, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise _KernelsFailed(f"compiling the wheel's kernels failed ({' '.join(cmd)}: {_last_line(done)}); build "
                             "without kernels with --no-kernels (mvn -Dhdp.wheel.kernels=--no-kernels) to ship a "
                             "wheel whose first use compiles them")
    print(f"kernels: {done.stdout.strip()}", file=sys.stderr)


def main(argv: list[str]) -> int:
    kernels = "--no-kernels" not in argv
    argv = [a for a in argv if a not in ("--no-kernels", "--kernels")]
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
            try:
                _compile_kernels(src / "hdp_plugin", Path(tmp))
            except _KernelsFailed as exc:
                print(f"error: the wheel carries no compiled kernels: {exc}", file=sys.stderr)
                return 1
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
