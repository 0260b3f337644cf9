"""Say once, on stderr and in the log, that numba is compiling hdp_plugin's kernels, and keep the
time spent compiling, so that a fit's recorded time leaves it out.

The first use of the package on a machine compiles its numba kernels (later processes load them from
numba's on-disk cache; docs/hdp.md, "First use", says how long it takes). numba announces every real
compilation (not cache loads) through its event API; the first one of an hdp_plugin kernel logs one
warning on the ``hdp_plugin.compile`` logger, which the command line shows on stderr and the daemon
writes to its log. The notice states no duration: that depends on the machine and its load.

:func:`seconds` is the time this process has spent compiling: the outermost compilations of every
thread (numba compiles one function at a time in a process, under one lock, so they never overlap)
and the waits for the helper process of :mod:`hdp_plugin.runtime.warm`, which compiles for this one.
Importing this module does not import numba.
"""

from __future__ import annotations

import logging
import threading
import time

log = logging.getLogger("hdp_plugin.compile")

#: the notice, once per process, on the first compilation of an hdp_plugin kernel
NOTICE = "compiling hdp_plugin's numba kernels once (later runs load them from numba's cache)..."

_lock = threading.Lock()
_state = {"installed": False, "announced": False, "seconds": 0.0}
_local = threading.local()  # per thread: the depth of nested compilations and when the outermost began


def seconds() -> float:
    """The seconds this process has spent compiling kernels (or waiting for the helper that compiles
    them) so far; a fit's compile time is the difference of two readings."""
    with _lock:
        total = _state["seconds"]
    began = getattr(_local, "began", None)  # this thread's compilation in progress
    return total + (time.perf_counter() - began if began is not None and getattr(_local, "depth", 0) else 0.0)


def add_seconds(s: float) -> None:
    """Count ``s`` seconds as compiling (the wait for the helper process's kernels)."""
    with _lock:
        _state["seconds"] += max(0.0, float(s))


def _started(ev) -> None:
    depth = getattr(_local, "depth", 0)
    _local.depth = depth + 1
    if depth == 0:
        _local.began = time.perf_counter()
    if _state["announced"]:
        return
    disp = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
    module = getattr(getattr(disp, "py_func", None), "__module__", "") or ""
    if not module.startswith("hdp_plugin."):
        return
    with _lock:
        if _state["announced"]:
            return
        _state["announced"] = True
    log.warning(NOTICE)


def _ended(ev) -> None:
    depth = getattr(_local, "depth", 0) - 1
    _local.depth = max(depth, 0)
    if depth == 0:
        add_seconds(time.perf_counter() - _local.began)
        _local.began = None


def install() -> None:
    """Register the listener (once per process)."""
    with _lock:
        if _state["installed"]:
            return
        _state["installed"] = True
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev):
            _started(ev)

        def on_end(self, ev):
            _ended(ev)

    event.register("numba:compile", _Listener())


class Stopwatch:
    """The wall time since it was made, less what this process spent compiling meanwhile
    (:func:`seconds`): a fit's time, which a first use's compilation does not inflate."""

    def __init__(self) -> None:
        self.began, self.compiled = time.perf_counter(), seconds()

    def compiling(self) -> float:
        """The seconds spent compiling since it was made."""
        return max(0.0, seconds() - self.compiled)

    def elapsed(self) -> float:
        """The seconds since it was made, less :meth:`compiling`."""
        return max(0.0, time.perf_counter() - self.began - self.compiling())
