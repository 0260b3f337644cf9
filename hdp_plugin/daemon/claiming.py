"""Claiming: take the oldest waiting jobs of ``new/`` and hand them to idle workers.

Claiming renames ``new/<job>`` to ``claimed/<daemon>/<job>``: the owner is part of the path and the
source exists once, so exactly one daemon wins. What is claimed but cannot run (not a job folder, an
invalid name, the name of a job that already exists) is failed at once.
"""

from __future__ import annotations

import os

from .. import config
from . import logs
from . import protocol as P
from .ledger import Ledger
from .workers import Worker

log = logs.logger(__name__)


def waiting(spool: P.Spool) -> list[str]:
    """Names in new/, oldest first (of the first MAX_WAITING_LISTED)."""
    new = spool.dir(P.NEW)
    out = []
    for name in spool.names(P.NEW)[:config.MAX_WAITING_LISTED]:
        try:
            out.append((os.stat(new / name).st_mtime, name))
        except OSError:
            continue
    return [n for _, n in sorted(out)]


class Claimer:
    """Claims jobs for daemon ``daemon_id`` of ``spool``."""

    def __init__(self, spool: P.Spool, daemon_id: str, ledger: Ledger):
        self.spool, self.daemon_id, self.ledger = spool, daemon_id, ledger

    def claim(self, w: Worker, names: list[str]) -> bool:
        """Claim the first job of ``names`` this daemon wins and hand it to worker ``w`` (the names
        tried are taken off ``names``)."""
        while names:
            name = names.pop(0)
            mine = self.spool.job(P.CLAIMED, name, self.daemon_id)
            try:
                if not P.move(self.spool.job(P.NEW, name), mine):
                    continue  # another daemon won it
            except FileExistsError:
                continue
            if not P.is_real_dir(mine):
                self.ledger.fail_entry(mine, name)
                continue
            # what the daemon writes into a job is the daemon's: a producer's copies are removed or ignored
            P.clean_job_folder(mine)
            attempt = self.ledger.attempts(mine)[0] + 1
            try:
                P.check_name(name)
            except P.JobError as exc:
                self.ledger.finish(mine, name, "failed", error=("bad_job", str(exc), attempt))
                continue
            taken = self.name_taken(name)
            if taken:
                log.warning("job %s: a job of that name is already in %s/; failing this one as %s~N", name, taken,
                            name)
                self.ledger.finish(mine, name, "failed", first=1, error=(
                    "bad_job", f"a job named {name} is already in {taken}/; job names must be unique in a "
                    "spool (a client finds its result by name)", attempt))
                continue
            if not w.assign(mine, name, attempt):
                log.warning("job %s: its worker %d is gone; putting the job back", name, w.process.pid)
                self.ledger.put_back(mine, name, count=False)
                return False
            log.info("job %s: claimed (attempt %d)", name, attempt)
            return True
        return False

    def name_taken(self, name: str) -> str | None:
        """The state of another job of this name (``done``, ``failed`` or ``claimed``), or None."""
        for state in (P.DONE, P.FAILED):
            if os.path.lexists(self.spool.job(state, name)):
                return state
        for d, names in self.spool.claimed().items():
            if d != self.daemon_id and name in names:
                return P.CLAIMED
        return None
