"""First use: compile the sampler's and the prediction's kernels in a second process while this one
discretises and learns the structure.

numba compiles one function at a time in a process, so a fit that finds numba's on-disk cache empty
spends its first use compiling, one kernel after another (about 25 s on a 2-core machine, half of
them the sampler's). When this process has another core to spare and the sampler's kernels are not
in the cache yet, :func:`start` launches ``python -m hdp_plugin._warm``: a helper process that runs a
tiny sampler and a tiny prediction, so that numba compiles their kernels into the shared cache,
and says ``sampler`` on its standard output once the sampler's are there. :func:`wait_for_sampler`
(called before the sampler's first run) waits for that line; the sampler's kernels are then loaded
from the cache instead of compiled. If anything goes wrong with the helper (it fails, is slow, the
cache is disabled), this process simply compiles the kernels itself, as without it: numba checks every
cache entry against its source file and the machine, so a stale or foreign entry is never loaded and
the helper can only save time, never change a result.

``HDP_WARM_HELPER=0`` turns the helper off; ``HDP_WARM_HELPER=always`` starts it whatever the cores
and the load (the tests use it).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading

log = logging.getLogger(__name__)

#: the longest wait for the helper's sampler kernels (seconds); then this process compiles them
WAIT_SECONDS = 120.0

_lock = threading.Lock()
_state: dict = {"helper": None}


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _spare_core() -> bool:
    """A core to spare: at least two, and (where the load is known) a one-minute load average of at
    most the cores less a half: on a busy machine the helper would only take time from this
    process. (A load of 1 on 2 cores is what this process's own previous minute of compiling leaves.)"""
    cores = _cores()
    if cores < 2:
        return False
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # Windows
        return True
    return load <= cores - 0.5


def _sampler_cached() -> bool:
    """True if numba's cache index of the sampler's main kernel exists and is newer than its source
    (the index is numba's to read: it is not opened here). A stale or foreign index only means the
    helper is not started."""
    from .hdp import kernels

    try:
        cache_file = kernels.sample_trees._cache._cache_file
        index = cache_file._index_path
        source = kernels.__file__
    except AttributeError:  # no disk cache (HDP_NUMBA_CACHE=0) or another numba: nothing to share
        return True
    try:
        return os.stat(index).st_mtime >= os.stat(source).st_mtime
    except OSError:
        return False


class _Helper:
    def __init__(self):
        self.sampler_ready = threading.Event()
        flags = getattr(subprocess, "CREATE_NO_WINDOW", 0)  # Windows: no console window for it
        self.proc = subprocess.Popen([sys.executable, "-m", "hdp_plugin._warm"], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                     creationflags=flags)
        threading.Thread(target=self._read, name="hdp-warm-helper", daemon=True).start()

    def _read(self) -> None:
        try:
            for line in self.proc.stdout:
                if line.strip() == "sampler":
                    self.sampler_ready.set()
        finally:
            self.sampler_ready.set()  # it ended: stop waiting, whatever it did
            self.proc.wait()


def start() -> None:
    """Launch the helper once per process, if the sampler's kernels are not cached yet and there is
    a core to spare. Never raises: without the helper, this process compiles them itself."""
    mode = os.environ.get("HDP_WARM_HELPER", "1")
    if mode == "0" or os.environ.get("HDP_NUMBA_CACHE", "1") == "0":
        return
    with _lock:
        if _state["helper"] is not None:
            return
        _state["helper"] = False
        try:
            if (mode != "always" and not _spare_core()) or _sampler_cached():
                return
            _state["helper"] = _Helper()
            from . import _compile_notice

            _compile_notice.helper_started()
            log.debug("compiling the sampler's kernels in a helper process (pid %d)", _state["helper"].proc.pid)
        except Exception as exc:  # noqa: BLE001 - an optimisation only
            log.debug("no helper process for the first compilation: %s", exc)


def helper_running() -> bool:
    """True once :func:`start` has launched a helper in this process."""
    return bool(_state["helper"])


def wait_for_sampler() -> None:
    """Before the sampler's first run: wait for the helper (if one runs) to have cached its kernels."""
    helper = _state["helper"]
    if helper:
        if not helper.sampler_ready.wait(WAIT_SECONDS):
            log.debug("the helper process has not cached the sampler's kernels in %.0f s", WAIT_SECONDS)


def _tiny_trees():
    """One context tree of the shapes and dtypes a fit makes: a root over two class nodes (leaves)."""
    import numpy as np

    from .hdp.trees import ContextTrees

    i64 = lambda *v: np.asarray(v, np.int64)  # noqa: E731
    return ContextTrees(attrs=i64(0), tree_card=i64(2), tree_node_start=i64(0, 3), tree_var_start=i64(0, 1),
                        branch_vars=i64(-1), node_parent=i64(-1, 0, 0), node_depth=i64(0, 1, 1),
                        node_branch=i64(-1, 0, 1), node_cell_start=i64(0, 2, 4, 6), node_tree=i64(0, 0, 0),
                        is_leaf=np.asarray([False, True, True]), child_start=i64(0, -1, -1), child_table=i64(1, 2),
                        leaf_counts=i64(0, 0, 3, 1, 2, 4), n_classes=2, cardinalities=i64(2))


def _compile_sampler() -> None:
    from .hdp.sampler import sample

    sample(_tiny_trees(), iterations=12, random_state=0, n_jobs=1)


def _compile_prediction() -> None:
    import numpy as np

    from .hdp.predict import predict_log_proba
    from .hdp.tables import ProbabilityTables

    trees = _tiny_trees()
    tables = ProbabilityTables.from_dense(trees, np.full(trees.n_cells, np.log(0.5)), np.log(np.full(2, 0.5)),
                                          backoff_to_parent=True)
    predict_log_proba(tables, np.zeros((3, 1), np.uint8))


def main() -> int:
    _compile_sampler()
    print("sampler", flush=True)
    _compile_prediction()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
