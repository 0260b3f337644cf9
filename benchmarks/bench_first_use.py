"""First use after a fresh `pip install` of the wheel: the default fit with an empty numba cache against
the same fit warm, for the wheel with its compiled kernels (on this CPU, and as on a machine of another
CPU) and for one without them.

    python benchmarks/bench_first_use.py [--rounds 2] [--data examples/diabetes.arff]

Builds both wheels with tools/build_wheel.py (with and without ``--no-kernels``), installs each into a
fresh virtual environment (pip's cache may serve the dependencies; the wheel with kernels twice, the
second time with its native kernels' manifest naming another CPU, which is what an installation on a
machine of another CPU sees: there the portable kernels apply), then, round by round, runs
``hdp-bnc train DATA -o MODEL --seed 0`` (the default ESKDB) in each environment with an empty cache
(a new ``XDG_CACHE_HOME`` and no ``NUMBA_CACHE_DIR``, as for a new user) and then again with that
cache warm, and prints each run's wall time, whether it announced a compilation, and the minima; in the
"another CPU" environment also a Python program's first default fit (``BayesNetClassifier().fit``).
Run it on an otherwise idle machine: it times processes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _venv(where: Path, wheel: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    py = where / ("Scripts" if os.name == "nt" else "bin") / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)],
                   check=True)
    return py


def _foreign_cpu(py: Path) -> None:
    """Make the installed wheel's native kernels those of another CPU (their manifest's CPU name)."""
    where = subprocess.run([str(py), "-c", "import hdp_plugin, pathlib; print(pathlib.Path(hdp_plugin.__file__).parent)"],
                           cwd=py.parent, capture_output=True, text=True, check=True).stdout.strip()
    path = Path(where) / "_kernels" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["target"][1] = "another-cpu"
    path.write_text(json.dumps(manifest))


#: the Python API's first fit (the classifier's default, as the command line's)
_API = ("import logging, sys\nlogging.basicConfig(level=logging.INFO)\n"
        "from hdp_plugin import BayesNetClassifier, read_dataset\n"
        "BayesNetClassifier(random_state=0).fit(read_dataset(sys.argv[1]))\n")


def _run(py: Path, data: Path, cache_home: Path, out: Path, api: bool = False) -> tuple[float, bool]:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env["XDG_CACHE_HOME"] = str(cache_home)
    cli = py.parent / ("hdp-bnc.exe" if os.name == "nt" else "hdp-bnc")
    cmd = [str(py), "-c", _API, str(data)] if api else [str(cli), "train", str(data), "-o", str(out), "--seed", "0"]
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=py.parent, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          check=True)
    return time.perf_counter() - started, "compiling" in done.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--data", type=Path, default=ROOT / "examples" / "diabetes.arff")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="hdp-first-use-") as tmp:
        tmp = Path(tmp)
        envs, built = {}, {}
        for name, extra in (("with kernels", []), ("without kernels", ["--no-kernels"])):
            wheels = tmp / f"wheel-{len(envs)}"
            subprocess.run([sys.executable, str(ROOT / "tools" / "build_wheel.py"), *extra, str(wheels)], check=True,
                           stdout=subprocess.DEVNULL)
            built[name] = next(wheels.glob("*.whl"))
            envs[name] = _venv(tmp / f"venv-{len(envs)}", built[name])
        name = "with kernels, another CPU"
        envs[name] = _venv(tmp / f"venv-{len(envs)}", built["with kernels"])
        _foreign_cpu(envs[name])
        runs = {name: (py, False) for name, py in envs.items()}
        runs["with kernels, another CPU, Python API"] = (envs[name], True)
        times = {(name, kind): [] for name in runs for kind in ("cold", "warm")}
        for r in range(args.rounds):
            for name, (py, api) in runs.items():
                cache = tmp / f"cache-{r}-{name.replace(' ', '-').replace(',', '')}"
                for kind in ("cold", "warm"):
                    wall, compiled = _run(py, args.data.resolve(), cache, tmp / "model.hdpbnc", api)
                    times[(name, kind)].append(wall)
                    print(f"round {r + 1}, {name}, {kind}: {wall:.2f} s{' (compiled)' if compiled else ''}", flush=True)
        print(f"\n`hdp-bnc train {args.data.name} -o MODEL --seed 0` (or the API's default fit) after a fresh pip "
              f"install, minimum of {args.rounds} rounds:")
        for name in runs:
            cold, warm = min(times[(name, "cold")]), min(times[(name, "warm")])
            print(f"  {name}: empty cache {cold:.2f} s, warm {warm:.2f} s, first use costs {cold - warm:+.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
