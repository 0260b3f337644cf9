"""Child process of the suite's pytest-xdist controller: compile the kernels most tests use, once, into
the shared on-disk cache, before the workers start their tests.

Run as ``python tests/_warm_kernels.py``. Two workers that both find numba's cache empty compile the
same kernels at the same time, each for itself (numba compiles in the process that calls a kernel,
and the cache only serves a kernel once it is written); this process compiles them once while the
workers collect and wait (tests/conftest.py). It runs the commands whose kernels a wheel carries
(``kernel_cache.WORKLOAD``: the default on numeric, mixed and nominal data, a prediction, kDB, naive
Bayes), then m-estimates, TAN and a cross-validation. It exits at once when the sampler's kernels are
cached already. Its output is for a reader of a failed run only: the workers go on whatever it did.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

EXTRA = (
    ("train", "mixed.arff", "-s", "tan", "-e", "m-estimate", "-o", "tan.model"),
    ("evaluate", "mixed.arff", "-s", "kdb", "-k", "2", "-e", "hdp,m-estimate", "-i", "50", "--seed", "0"),
)


def main() -> int:
    from hdp_plugin.hdp import kernels
    from hdp_plugin.runtime import kernel_cache, warm

    if warm.cached(kernels.sample_trees):
        print("the sampler's kernels are cached: nothing to compile", file=sys.stderr)
        return 0
    from hdp_plugin.cli import app

    with tempfile.TemporaryDirectory(prefix="hdp-bnc-warm-") as tmp:
        work = Path(tmp)
        kernel_cache._write_arff(work / "mixed.arff", 240, 3, 3, 1)
        kernel_cache._write_arff(work / "numeric.arff", 240, 4, 0, 2)
        kernel_cache._write_arff(work / "nominal.arff", 240, 0, 5, 3)
        for args in (*kernel_cache.WORKLOAD, *EXTRA):
            args = [str(work / a) if a.endswith((".arff", ".model", ".csv")) else a for a in args]
            print(" ".join(args), file=sys.stderr, flush=True)
            app(args, prog_name="hdp-bnc", standalone_mode=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
