"""Build the hdp_plugin wheel into a folder (the Weka package carries it; java_bridge's `mvn package` runs this).

    python3 tools/build_wheel.py OUTDIR

The source is copied to a temporary folder first, so that concurrent builds do not share setuptools'
build/ folder and the clone stays clean. With setuptools 77 or later installed (the `test` extra brings
it) the build needs no network (`--no-build-isolation`); otherwise pip fetches setuptools for an isolated
build.
"""

from __future__ import annotations

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


def main(argv: list[str]) -> int:
    if len(argv) != 1:
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
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc"))
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
