"""First use: compile the sampler's and the prediction's kernels in a second process while this one
discretises and learns the structure.

numba compiles one function at a time in a process, so a fit that finds numba's on-disk cache empty
spends its first use compiling, one kernel after another (about half of that time the sampler's).
When this process has another core to spare and the sampler's kernels are not in the cache yet,
:func:`start` launches a helper process (``python -m hdp_plugin.hdp.warmup``, the workload
:mod:`hdp_plugin.hdp.warmup` names) that runs a tiny sampler and a tiny prediction, so that numba
compiles their kernels into the shared cache,
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
import time

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


def cached(kernel) -> bool:
    """True if numba's cache index of the kernel (a dispatcher) exists and is newer than its source
    (the index is numba's to read: it is not opened here). A stale or foreign index only means the
    helper is not started."""
    try:
        cache_file = kernel._cache._cache_file
        index = cache_file._index_path
        source = kernel.py_func.__code__.co_filename
    except AttributeError:  # no disk cache (HDP_NUMBA_CACHE=0) or another numba: nothing to share
        return True
    try:
        return os.stat(index).st_mtime >= os.stat(source).st_mtime
    except OSError:
        return False


class _Helper:
    def __init__(self, module: str):
        self.sampler_ready = threading.Event()
        flags = getattr(subprocess, "CREATE_NO_WINDOW", 0)  # Windows: no console window for it
        self.proc = subprocess.Popen([sys.executable, "-m", module], stdin=subprocess.DEVNULL,
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


def start(module: str, sampler_cached) -> None:
    """Launch ``python -m module`` as the helper once per process, if ``sampler_cached()`` is false
    (the sampler's kernels are not cached yet) and there is a core to spare. Never raises: without the
    helper, this process compiles them itself."""
    mode = os.environ.get("HDP_WARM_HELPER", "1")
    if mode == "0" or os.environ.get("HDP_NUMBA_CACHE", "1") == "0":
        return
    with _lock:
        if _state["helper"] is not None:
            return
        _state["helper"] = False
        try:
            if (mode != "always" and not _spare_core()) or sampler_cached():
                return
            _state["helper"] = _Helper(module)
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
        from . import cancel, compile_notice

        started = time.monotonic()
        try:  # in short waits: Ctrl-C is seen at once on every platform
            while not helper.sampler_ready.wait(cancel.POLL):
                if time.monotonic() - started > WAIT_SECONDS:
                    log.debug("the helper process has not cached the sampler's kernels in %.0f s", WAIT_SECONDS)
                    break
        finally:
            compile_notice.add_seconds(time.monotonic() - started)  # the helper compiles for this process
