"""The heartbeat: ``daemons/<id>.json``, what a daemon is doing, replaced every few seconds.

Clients read it for ``status``; a client on another host, where locks may lie, also takes a
heartbeat older than ``STALE_HEARTBEATS`` periods for a dead daemon
(:func:`~hdp_plugin.daemon.locks.heartbeat_fresh`).
"""

from __future__ import annotations

import os
import socket
import sys
import time
from typing import Callable

from .._version import __version__
from . import logs
from . import protocol as P

log = logs.logger(__name__)


def document(*, daemon_id: str, state: str, started: float, now: float, settings, workers: list,
             done: int, failed: int, process_started: float | None = None, wake_port: int | None = None) -> dict:
    """The heartbeat document of a daemon (``settings``: its :class:`~hdp_plugin.daemon.service.Settings`;
    ``wake_port``: the loopback port it listens on for nudges, :mod:`hdp_plugin.daemon.wake`)."""
    return {
        "protocol": P.PROTOCOL_VERSION, "daemon": daemon_id, "pid": os.getpid(), "host": socket.gethostname(),
        "version": __version__, "python": sys.executable, "state": state, "started_unix": started,
        "process_started_unix": process_started,
        "heartbeat": P.now_iso(), "heartbeat_unix": now, "heartbeat_seconds": settings.heartbeat,
        "workers": settings.workers, "ready_workers": sum(w.ready for w in workers),
        "worker_pids": [w.process.pid for w in workers],
        "busy": [{"job": w.job, "attempt": w.attempt, "since_unix": w.since} for w in workers if w.job],
        "poll_seconds": settings.poll, "idle_exit_seconds": settings.idle_exit,
        "limits": {"max_input_bytes": settings.limits.max_input_bytes,
                   "max_cardinality": settings.limits.max_cardinality,
                   "max_cells": settings.limits.max_cells},
        "done": done, "failed": failed, "wake_port": wake_port,
    }


class Heartbeat:
    """Writes a daemon's heartbeat file at most every ``seconds`` (at once when forced: a change of state)."""

    def __init__(self, spool: P.Spool, daemon_id: str, seconds: float):
        self.path = spool.heartbeat(daemon_id)
        self.seconds = seconds
        self.last = 0.0

    def beat(self, make: Callable[[float], dict], *, force: bool = False) -> None:
        """Write ``make(now)`` if a beat is due (or ``force``); a failure to write is only logged."""
        now = time.time()
        if not force and now - self.last < self.seconds:
            return
        self.last = now
        try:
            P.write_json(self.path, make(now), fsync=False)
        except OSError as exc:
            log.warning("cannot write the heartbeat: %s", exc)
