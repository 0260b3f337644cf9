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

#: rough duration of the one-time compilation of everything a fit and a prediction use
ESTIMATE_SECONDS = 15

_lock = threading.Lock()
_state = {"installed": False, "announced": False}


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
                    "numba's cache)...", ESTIMATE_SECONDS)

    def on_end(self, ev):
        pass


def install() -> None:
    """Register the listener (once per process)."""
    with _lock:
        if _state["installed"]:
            return
        _state["installed"] = True
    event.register("numba:compile", _Listener())
