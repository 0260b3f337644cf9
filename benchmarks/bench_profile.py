"""Where the default classifier's training time goes, step by step, on one thread.

Run on a quiet machine (wall-clock times):

    python benchmarks/bench_profile.py [--mlbench-dir DIR] [--rounds 3] [DATA ...]

Fits ``BayesNetClassifier(random_state=0, n_jobs=1)`` (the default: ESKDB, 20 SkDB-5 members, HDP
tables) on every row of each data set (by default the 30 data sets' numeric ones with a thousand rows
or more: mlbench's LetterRecognition, Satellite and Shuttle, and segment-challenge, plus DNA, the
largest categorical one), after a warm-up fit on a few rows so that numba's compilation (or cache
load) is not counted. Each step is timed by a wrapper around the function that does it (the fit runs
on one thread, so the steps never overlap), and the shortest of ``--rounds`` fits is kept per step:

* **cut points**: each member's stochastic cut points (``stochastic_cut_points``);
* **code + count**: the rows coded on each member's attributes and counted (n(y), n(x, y), pairs);
* **tries** and **leave-one-out**: SkDB's selection, its context tries and its leave-one-out passes;
  **selection, rest**: the rest of the
  selection (orders, the choice of n* and k*);
* **trees**: every member's context trees from the rows;
* **sampler setup**: the sampler's cells, layout, state and Stirling tables;
* **sampling**: the Gibbs iterations (every tree until it stops or ends);
* **tables**: the members' probability tables from the sampler's averages;
* **rest**: everything else of the fit (the remainder of the whole fit's time).

Prints one Markdown table: per data set, rows and attributes, the fit's time and each step's
seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import accuracy  # noqa: E402

DATASETS = ["segment-challenge", "mlbench-Satellite", "mlbench-LetterRecognition", "mlbench-Shuttle", "mlbench-DNA"]


def _steps():
    """``(label, owner, attribute name)`` of every timed function, in the order of the fit."""
    import hdp_plugin.hdp.sampler as sampler
    import hdp_plugin.hdp.tables as tables
    import hdp_plugin.model.pipeline as pipeline
    import hdp_plugin.model.rows as rows
    import hdp_plugin.structure.selective as selective

    return [
        ("cut points", pipeline, "stochastic_cut_points"),
        ("code + count", rows._MemoryPart, "count"),
        ("selection", rows._MemoryPart, "select"),
        ("tries", selective, "build_context_tries"),
        ("leave-one-out", selective, "loo_squared_errors_block"),
        ("trees", rows._MemoryPart, "trees"),
        ("sampler setup", sampler, "sampler_cells"),
        ("sampler setup", sampler, "_setup"),
        ("sampling", sampler._TreeQueue, "run_all"),
        ("tables", tables.ProbabilityTables, "from_sampler"),
    ]


class Timer:
    """Wraps the functions of :func:`_steps`, summing each label's seconds (outermost calls only)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self._depth: dict[str, int] = {}
        for label, owner, name in _steps():
            self._wrap(label, owner, name)

    def _wrap(self, label, owner, name):
        fn = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        if isinstance(fn, classmethod):
            inner = fn.__func__

            def timed_cm(cls, *a, **k):
                return self._time(label, inner, cls, *a, **k)
            setattr(owner, name, classmethod(timed_cm))
            return

        def timed(*a, **k):
            return self._time(label, fn, *a, **k)
        setattr(owner, name, timed)

    def _time(self, label, fn, *a, **k):
        depth = self._depth.get(label, 0)
        self._depth[label] = depth + 1
        t0 = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            self._depth[label] = depth
            if depth == 0:
                self.seconds[label] = self.seconds.get(label, 0.0) + time.perf_counter() - t0

    def reset(self):
        self.seconds = {}


COLUMNS = ["cut points", "code + count", "tries", "leave-one-out", "selection, rest", "trees", "sampler setup",
           "sampling", "tables", "rest"]


def profile(path: Path, rounds: int, timer: Timer) -> tuple[int, int, float, dict]:
    from hdp_plugin import BayesNetClassifier, read_dataset

    ds = read_dataset(path)
    BayesNetClassifier(random_state=0, n_jobs=1).fit(ds.take(np.arange(0, ds.n_rows, max(1, ds.n_rows // 200))))
    best_total, best = np.inf, {}
    for _ in range(rounds):
        timer.reset()
        t0 = time.perf_counter()
        BayesNetClassifier(random_state=0, n_jobs=1).fit(ds)
        total = time.perf_counter() - t0
        s = dict(timer.seconds)
        s["selection, rest"] = s.get("selection", 0.0) - s.get("tries", 0.0) - s.get("leave-one-out", 0.0)
        s["rest"] = total - sum(s.get(c, 0.0) for c in COLUMNS if c != "rest")
        best_total = min(best_total, total)
        best = {c: min(best.get(c, np.inf), s.get(c, 0.0)) for c in COLUMNS}
    return ds.n_rows, len(ds.attributes), best_total, best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="*", help="Data set names (as benchmarks/accuracy.py finds them) or files.")
    ap.add_argument("--mlbench-dir", type=Path)
    ap.add_argument("--data-dir", action="append", type=Path, default=[])
    ap.add_argument("--rounds", type=int, default=3, help="Fits per data set; each step's shortest is kept.")
    args = ap.parse_args(argv)
    timer = Timer()
    print("| data set | rows | attributes | fit s | " + " | ".join(COLUMNS) + " |")
    print("|---|---:|---:|---:|" + "---:|" * len(COLUMNS))
    for name in args.data or DATASETS:
        path, why = accuracy.find_dataset(name, args.data_dir + [accuracy.DEBIAN_EXAMPLES, HERE.parent / "tests" / "data"],
                                          args.mlbench_dir)
        if path is None:
            print(f"bench_profile: {name}: {why}", file=sys.stderr)
            continue
        n, a, total, s = profile(path, args.rounds, timer)
        print(f"| {path.stem} | {n:,} | {a} | {total:.3f} | " + " | ".join(f"{s[c]:.3f}" for c in COLUMNS) + " |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
