"""Crash recovery: requeue the jobs of dead daemons, put back our claims that no worker runs.

A daemon is dead when its lock is free (:func:`~hdp_plugin.daemon.locks.daemon_alive`); its jobs are
moved into our ``claimed/`` and requeued with their attempt counters raised. Each pass ends with a
:func:`~hdp_plugin.daemon.sweeping.sweep`. Foreign entries (files or links where directories belong,
invalid names) are never followed or removed, only reported, once each.
"""

from __future__ import annotations

import os
import socket
import time

from .. import config
from . import logs
from . import protocol as P
from .ledger import Ledger
from .sweeping import sweep

log = logs.logger(__name__)


class Recovery:
    """The recovery passes of daemon ``daemon_id`` of ``spool``."""

    def __init__(self, spool: P.Spool, daemon_id: str, ledger: Ledger):
        self.spool, self.daemon_id, self.ledger = spool, daemon_id, ledger
        #: True when a dead daemon's workers still ran at the last pass: look again soon
        self.lingering = False
        self._reported: set[str] = set()

    def _report_once(self, key: str, message: str, *args) -> None:
        """Log a foreign or malformed spool entry once (it is skipped on every later pass)."""
        if key not in self._reported:
            self._reported.add(key)
            log.warning(message, *args)

    def run(self, running: set[str] | None) -> int:
        """One pass: requeue the jobs of dead daemons, put back our claims not in ``running`` (None at
        start, when there is nothing of ours yet), then :func:`sweep`; return how many jobs were requeued."""
        n = 0
        claimed = self.spool.dir(P.CLAIMED)
        for entry in self.spool.names(P.CLAIMED):
            if not P.is_real_dir(claimed / entry):
                self._report_once(f"claimed/{entry}", "ignoring claimed/%s: not a directory (a file or a link, "
                                  "never followed); remove it", entry)
        ids = set(self.spool.claimed_daemons())
        ids |= {f[: -len(".json")] for f in self.spool.names(P.DAEMONS) if f.endswith(".json")}
        self.lingering = False
        for d in sorted(ids - {self.daemon_id}):
            try:
                P.check_name(d, "daemon id")
            except P.JobError:
                self._report_once(f"daemon/{d}", "ignoring daemon id %r of the spool: not a valid name", d)
                continue
            if P.daemon_alive(self.spool, d):
                continue
            if self._workers_linger(d):
                self.lingering = True  # look again soon
                continue
            n += self._recover_daemon(d)
        if running is not None:
            self._put_back_strays(running)
        sweep(self.spool)
        return n

    def _recover_daemon(self, d: str) -> int:
        """Requeue the jobs of dead daemon ``d`` and remove its files; return how many were requeued."""
        n = 0
        theirs = self.spool.dir(P.CLAIMED) / d
        left = 0
        for name in self.spool.names(f"{P.CLAIMED}/{d}") if P.is_real_dir(theirs) else []:
            src = theirs / name
            if not P.is_real_dir(src):
                self._report_once(f"claimed/{d}/{name}", "ignoring claimed/%s/%s: not a job folder (a file "
                                  "or a link, never followed); remove it", d, name)
                left += 1
                continue
            mine = self.spool.job(P.CLAIMED, name, self.daemon_id)
            try:
                if not P.move(src, mine):
                    continue  # another daemon is recovering it
            except FileExistsError:  # a job of ours has the same name: never delete, fail it apart
                log.warning("job %s left by dead daemon %s has the name of a job running here; failing "
                            "it as %s~N", name, d, name)
                try:
                    self.ledger.fail_namesake(src, name, f"a job named {name} was already running when this "
                                              "one was recovered; job names must be unique in a spool")
                except OSError as exc:
                    log.error("job %s: cannot fail it (%s); it stays in %s", name, exc, src)
                    left += 1
                continue
            log.warning("job %s was left running by dead daemon %s", name, d)
            self.ledger.lost(mine, name, f"daemon {d} died while running it")
            n += 1
        if P.is_real_dir(theirs):
            try:
                os.rmdir(theirs)
            except OSError:
                if not left:
                    left = len(self.spool.names(f"{P.CLAIMED}/{d}"))
                self._report_once(f"rmdir/{d}", "leaving claimed/%s: it still holds %d foreign entr(ies)",
                                  d, left)
        for p in (self.spool.heartbeat(d), self.spool.stop_marker(d), self.spool.lock(d)):
            P.remove_quietly(p)
        return n

    def _put_back_strays(self, running: set[str]) -> None:
        """Put back the jobs in our claimed/ that no worker runs."""
        for name in self.spool.names(f"{P.CLAIMED}/{self.daemon_id}"):
            if name not in running:  # a claim whose rename reported failure but happened (NFS retries),
                # or a job whose bookkeeping failed (a full disk)
                log.warning("job %s: in our claimed/ but not running; putting it back", name)
                try:
                    self.ledger.put_back(self.spool.job(P.CLAIMED, name, self.daemon_id), name)
                except OSError as exc:
                    log.error("job %s: cannot put it back (%s); trying again later", name, exc)

    def _workers_linger(self, d: str) -> bool:
        """Are worker processes of dead daemon ``d`` still running (on this host)? They stop at their
        next progress step; recovering before that could let one write into a requeued job."""
        doc = P.read_json(self.spool.heartbeat(d)) or {}
        if doc.get("host") != socket.gethostname() or time.time() - P.number(doc, "heartbeat_unix") > \
                config.LINGER_HEARTBEAT_SECONDS:
            return False
        pids = doc.get("worker_pids")
        pids = [p for p in pids if isinstance(p, int) and not isinstance(p, bool)] if isinstance(pids, list) else []
        alive = [pid for pid in pids if P.pid_alive(pid)]
        if alive:
            log.info("dead daemon %s: waiting for its workers %s to exit", d, alive)
        return bool(alive)
