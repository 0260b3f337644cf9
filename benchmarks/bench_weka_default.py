"""Weka's 10-fold cross-validation with no options: HDPBayesNet against weka.classifiers.trees.RandomForest.

    python benchmarks/bench_weka_default.py [--rounds 3] [--heap 2g] [--zip ZIP] [--mlbench-dir DIR] [DATA ...]

What a Weka user compares: ``weka.Run CLASSIFIER -t DATA`` (Weka's default 10-fold cross-validation
and the final model on all the data, 11 fits), once with ``weka.classifiers.bayes.HDPBayesNet`` (no
options: the default ESKDB) and once with ``weka.classifiers.trees.RandomForest`` (no options: 100
trees), one after the other, round by round, in the same minutes. The package zip (built with
``mvn -B -o package -DskipTests`` unless ``--zip`` names one) is installed into a temporary Weka home;
the daemon trains with the Python running this script, or ``--python`` (``HDP_BNC_PYTHON``), so no
environment is made.
A first HDPBayesNet run, not timed, starts the daemon and warms numba's cache; every timed run is a
whole ``java`` process (the JVM's start included, for both). Prints each run's wall time and Weka's
figures (percent correct, RMSE), and the minimum of each side with their ratio.
DATA: ARFF files or data set names (found as benchmarks/accuracy.py finds them); by default credit-g and
segment-challenge of Debian's weka package (--weka-examples DIR).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WEKA_EXAMPLES = Path("/tmp/wekadeb/usr/share/doc/weka/examples")
CLASSIFIERS = {"HDPBayesNet": "weka.classifiers.bayes.HDPBayesNet",
               "RandomForest": "weka.classifiers.trees.RandomForest"}


def _figures(output: str) -> str:
    """Weka's cross-validation figures: the last 'Correctly Classified' and 'Root mean squared error'."""
    correct = re.findall(r"Correctly Classified Instances\s+\d+\s+([\d.]+)\s*%", output)
    rmse = re.findall(r"Root mean squared error\s+([\d.]+)", output)
    return f"{correct[-1] if correct else '?'} % correct, RMSE {rmse[-1] if rmse else '?'}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="*", type=Path,
                    help="ARFF files, or data set names as benchmarks/accuracy.py finds them (--mlbench-dir for "
                         "mlbench's); default credit-g and segment-challenge")
    ap.add_argument("--mlbench-dir", type=Path, help="r-cran-mlbench's data folder (mlbench.py)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--heap", default="2g", help="the JVM's largest heap (-Xmx) for every Weka run")
    ap.add_argument("--zip", type=Path, help="the package zip (default: build it with Maven)")
    ap.add_argument("--weka-examples", type=Path, default=WEKA_EXAMPLES)
    ap.add_argument("--python", default=sys.executable,
                    help="the daemon's Python (HDP_BNC_PYTHON; default this one): a script that runs Python on "
                         "another checkout compares that code's daemon with the same script")
    args = ap.parse_args(argv)
    data = args.data or [args.weka_examples / "credit-g.arff", args.weka_examples / "segment-challenge.arff"]
    import accuracy

    for i, path in enumerate(data):
        data[i], why = accuracy.find_dataset(str(path), [args.weka_examples, ROOT / "tests" / "data"], args.mlbench_dir)
        if data[i] is None:
            ap.error(f"{path}: {why} (Debian's weka package: apt-get download weka; dpkg -x)")
    cp = subprocess.run(["bash", str(ROOT / "tools" / "weka" / "classpath.sh")], capture_output=True, text=True,
                        check=True).stdout.strip()
    zip_path = args.zip.resolve() if args.zip else None
    if zip_path is None:
        built = subprocess.run(["mvn", "-q", "-B", "-o", "package", "-DskipTests"], cwd=ROOT / "java_bridge",
                               capture_output=True, text=True)
        if built.returncode != 0:
            sys.exit(f"mvn package failed in {ROOT / 'java_bridge'}:\n{built.stdout}{built.stderr}")
        zip_path = next((ROOT / "java_bridge" / "target").glob("HDPBayesNet-*.zip"))
    home = Path(tempfile.mkdtemp(prefix="weka-home-"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env.update(WEKA_HOME=str(home), HDP_BNC_PYTHON=args.python)
    java = ["java", f"-Xmx{args.heap}", f"-Duser.home={home}", "-cp", cp]
    spool = home / "spool"
    try:
        subprocess.run(java + ["weka.core.WekaPackageManager", "-install-package", str(zip_path)], env=env, cwd=home,
                       check=True, capture_output=True, text=True)
        python = f"this Python ({platform.python_version()})" if args.python == sys.executable else args.python
        print(f"# {zip_path.name} in a fresh Weka home; {os.cpu_count()} CPUs; the daemon runs on {python}")
        for path in data:
            times: dict[str, list[float]] = {name: [] for name in CLASSIFIERS}
            for r in range(-1, args.rounds):
                for name, cls in CLASSIFIERS.items():
                    if r < 0 and name != "HDPBayesNet":
                        continue  # the untimed warm-up: daemon and caches
                    cmd = java + ["weka.Run", cls, "-t", str(path.resolve())]
                    if name == "HDPBayesNet":
                        cmd += ["-spool", str(spool)]
                    t = time.perf_counter()
                    done = subprocess.run(cmd, env=env, cwd=home, stdin=subprocess.DEVNULL, capture_output=True,
                                          text=True, errors="replace")
                    wall = time.perf_counter() - t
                    if done.returncode != 0 or "Correctly Classified Instances" not in done.stdout:
                        print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
                        return 1
                    label = "warm-up" if r < 0 else f"round {r + 1}"
                    if r >= 0:
                        times[name].append(wall)
                    print(f"{path.name}, {label}, {name}: {wall:.2f} s ({_figures(done.stdout)})", flush=True)
            ours, forest = min(times["HDPBayesNet"]), min(times["RandomForest"])
            print(f"== {path.name}: HDPBayesNet {ours:.2f} s, RandomForest {forest:.2f} s (minima of {args.rounds}), "
                  f"ratio {ours / forest:.2f}\n", flush=True)
    finally:
        if spool.exists():
            subprocess.run([sys.executable, "-m", "hdp_plugin", "daemon", "stop", str(spool)], capture_output=True,
                           timeout=60)
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
