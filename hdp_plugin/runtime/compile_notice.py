"""Say once, on stderr and in the log, that numba is compiling hdp_plugin's kernels.

The first use of the package on a machine compiles its numba kernels (seconds; later processes load
them from numba's on-disk cache). numba announces every real compilation (not cache loads) through
its event API; the first one of an hdp_plugin kernel logs one warning on the ``hdp_plugin.compile``
logger, which the command line shows on stderr and the daemon writes to its log.
"""

from __future__ import annotations

import logging
import threading

from numba.core import event

log = logging.getLogger("hdp_plugin.compile")

#: rough duration of the one-time compilation of everything a default fit and a prediction use, on a
#: machine of 2 cores: with the helper process of :mod:`hdp_plugin.runtime.warm`, and on one core
ESTIMATE_SECONDS = 15
ESTIMATE_SECONDS_ALONE = 30

_lock = threading.Lock()
_state = {"installed": False, "announced": False, "estimate": ESTIMATE_SECONDS_ALONE}


def helper_started() -> None:
    """:mod:`hdp_plugin.runtime.warm` started its helper process: the compilation takes about half as long."""
    _state["estimate"] = ESTIMATE_SECONDS


class _Listener(event.Listener):
    def on_start(self, ev):
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
        log.warning("compiling hdp_plugin's numba kernels once (about %d s; later runs load them from "
                    "numba's cache)...", _state["estimate"])

    def on_end(self, ev):
        pass


def install() -> None:
    """Register the listener (once per process)."""
    with _lock:
        if _state["installed"]:
            return
        _state["installed"] = True
    event.register("numba:compile", _Listener())
