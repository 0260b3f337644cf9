"""Weka's first run from a fresh Weka home: time to the result and the longest silence.

A Weka user installs the package zip and trains: the first training makes the package's own Python
environment from the wheel the zip carries (pip, from pip's cache when it is warm), starts the daemon,
compiles the numba kernels once, then cross-validates. This script does exactly that, the way a user
does it from the command line:

1. builds the zip (``mvn -B -o package -DskipTests`` in java_bridge/, unless ``--zip`` names one);
2. installs it into a new temporary ``WEKA_HOME`` with ``weka.core.WekaPackageManager -install-package``;
3. runs ``weka.Run weka.classifiers.bayes.HDPBayesNet -t DATA`` (no options: the default ensemble,
   Weka's 10-fold cross-validation and the final model) with no ``HDP_BNC_PYTHON`` and no ``PYTHONPATH``,
   timing every console line as it arrives (stdout and stderr merged);
4. runs the same command again (the environment and the numba cache now exist).

It prints the time of the milestones (environment made, daemon started, result), the run's total and
the longest gap between two console lines of each run. Nothing is left behind but pip's cache.

Usage::

    python benchmarks/bench_weka_first_run.py [--data tests/data/credit-g.arff] [--zip ZIP]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MILESTONES = {
    "making HDPBayesNet's own Python environment": "environment: started",
    "the Python environment is ready": "environment: ready",
    "starting the hdp-bnc daemon": "daemon: starting",
    "Correctly Classified Instances": "result",
}


def timed_run(cmd: list[str], env: dict, cwd: Path, timeout: float) -> tuple[int, list[tuple[float, str]]]:
    """Run ``cmd``; return its exit code and every console line with the seconds since the start."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, text=True, errors="replace", bufsize=1)
    lines: list[tuple[float, str]] = []
    killer = threading.Timer(timeout, p.kill)
    killer.start()
    try:
        for line in p.stdout:  # type: ignore[union-attr]
            lines.append((time.perf_counter() - t0, line.rstrip("\n")))
    finally:
        killer.cancel()
    return p.wait(), lines + [(time.perf_counter() - t0, "<end>")]


def report(title: str, code: int, lines: list[tuple[float, str]]) -> None:
    print(f"## {title}: exit code {code}, {lines[-1][0]:.1f} s in all, {len(lines) - 1} console lines")
    seen = set()
    for t, text in lines:
        for key, label in MILESTONES.items():
            if key in text and label not in seen:
                seen.add(label)
                print(f"  {t:7.1f} s  {label}")
    gaps = [(b[0] - a[0], a[0], a[1], b[1]) for a, b in zip([(0.0, "<start>")] + lines[:-1], lines)]
    gap, at, before, after = max(gaps)
    print(f"  longest silence: {gap:.1f} s, from {at:.1f} s, after {before[:90]!r}, until {after[:90]!r}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "tests" / "data" / "credit-g.arff")
    ap.add_argument("--zip", type=Path, help="the package zip (default: build it with Maven)")
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--keep", action="store_true", help="keep the temporary Weka home (printed)")
    args = ap.parse_args(argv)
    cp = subprocess.run(["bash", str(ROOT / "tools" / "weka" / "classpath.sh")], capture_output=True, text=True,
                        check=True).stdout.strip()
    zip_path = args.zip
    if zip_path is None:
        subprocess.run(["mvn", "-q", "-B", "-o", "package", "-DskipTests"], cwd=ROOT / "java_bridge", check=True)
        zip_path = next((ROOT / "java_bridge" / "target").glob("HDPBayesNet-*.zip"))
    home = Path(tempfile.mkdtemp(prefix="weka-home-"))
    env = {k: v for k, v in os.environ.items() if k not in ("HDP_BNC_PYTHON", "PYTHONPATH", "NUMBA_CACHE_DIR")}
    env["WEKA_HOME"] = str(home)
    # a new user's empty numba cache (not XDG_CACHE_HOME, which would also empty pip's cache)
    env["NUMBA_CACHE_DIR"] = str(home / "numba-cache")
    java = ["java", "-Xmx2g", f"-Duser.home={home}", "-cp", cp]
    try:
        t = time.perf_counter()
        subprocess.run(java + ["weka.core.WekaPackageManager", "-install-package", str(zip_path)], env=env, cwd=home,
                       check=True, capture_output=True, text=True)
        print(f"# package installed into a fresh Weka home in {time.perf_counter() - t:.1f} s ({zip_path.name}); "
              f"data {args.data.name}; {os.cpu_count()} CPUs")
        run = java + ["weka.Run", "weka.classifiers.bayes.HDPBayesNet", "-t", str(args.data.resolve()),
                      "-spool", str(home / "spool")]
        for title in ("first run (fresh Weka home)", "second run"):
            code, lines = timed_run(run, env, home, args.timeout)
            report(title, code, lines)
            if code != 0:
                print("\n".join(text for _, text in lines[-20:]), file=sys.stderr)
                return 1
    finally:
        # stop the daemon the runs left (with the package environment's own command), then remove the home
        cli = next(iter((home / "packages" / "HDPBayesNet" / "python-env").glob("*/hdp-bnc*")), None)
        if cli is not None and (home / "spool").exists():
            subprocess.run([str(cli), "daemon", "stop", str(home / "spool")], capture_output=True, timeout=60)
        if args.keep:
            print(f"# Weka home kept: {home}")
        else:
            shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
