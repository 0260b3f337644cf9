"""The moves of a daemon's jobs to their next state, and the counts the heartbeat reports.

Every transition the supervisor makes goes through a :class:`Ledger`: a finished job into ``done/`` or
``failed/`` (:meth:`~Ledger.finish`), a job back into ``new/`` (:meth:`~Ledger.put_back`), a run that
died with its worker or daemon (:meth:`~Ledger.lost`: requeued, or failed after ``MAX_ATTEMPTS``), and
an entry that is no job, or a job whose name another job holds, failed apart.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import logs
from . import protocol as P
from .jobs import Context, write_error

log = logs.logger(__name__)


class Ledger:
    """Moves the jobs of daemon ``daemon_id`` of ``spool`` and counts them (done, failed, put back)."""

    def __init__(self, spool: P.Spool, daemon_id: str):
        self.spool, self.daemon_id = spool, daemon_id
        self.done = self.failed = self.requeued = 0

    def key(self) -> bytes | None:
        """The spool's attempts key, or None if it cannot be read or made (a full disk: attempts then
        count from nothing, which gives a job more attempts, never fewer)."""
        try:
            return P.attempts_key(self.spool.attempts_key())
        except OSError as exc:
            log.warning("cannot read or create the spool's attempts key (%s); attempts are not counted", exc)
            return None

    def attempts(self, folder: Path) -> tuple[int, list]:
        """``(lost, history)`` of a claimed job: its attempts.json if a daemon wrote it for this job; any
        other attempts.json (a producer's, or a copy of another job's) is removed and counts for nothing."""
        key = self.key()
        own = P.read_attempts(folder, key) if key is not None else None
        if own is None and key is not None and os.path.isfile(folder / P.ATTEMPTS_FILE):
            P.remove_quietly(folder / P.ATTEMPTS_FILE)
        return own or (0, [])

    def context(self, attempt: int = 1) -> Context:
        """The :class:`Context` of an ``error.json`` the supervisor writes itself."""
        return Context(spool=self.spool, daemon_id=self.daemon_id, attempt=attempt)

    def finish(self, folder: Path, name: str, outcome: str, error: tuple | None = None, first: int = 0) -> None:
        """Move a job its worker finished (``outcome``: done, failed or requeue); ``error``: ``(code, message,
        attempt)`` of an error.json to write first; ``first=1``: never under the plain name."""
        if error is not None:
            code, message, attempt = error
            write_error(folder, name, code, message, self.context(attempt))
        elif outcome == "failed" and not os.path.isfile(folder / P.ERROR_FILE):
            # the worker could not write error.json (a full disk): try once more; if that fails too, the
            # job stays claimed and is put back by the next recovery pass, to run when space returns
            write_error(folder, name, "internal_error", "the job failed and its worker could not write "
                        "error.json (is the disk full?)", self.context())
        if outcome == "requeue":
            self.put_back(folder, name)
            log.info("job %s: put back in new/", name)
            return
        state = P.DONE if outcome == "done" else P.FAILED
        P.unseal_attempts(folder)  # a finished job's count is history: published again, it starts anew
        P.remove_quietly(self.spool.progress(name))  # first: a crash now leaves no stale progress
        final = P.move_final(folder, self.spool.dir(state), name, first=first)
        P.remove_quietly(self.spool.cancel(name))
        if outcome == "done":
            self.done += 1
        else:
            self.failed += 1
        log.info("job %s: %s -> %s", name, outcome, final)

    def put_back(self, folder: Path, name: str, *, count: bool = True) -> None:
        """Return a job to ``new/`` without what a run left in it (``count``: as a put-back job)."""
        P.clean_job_folder(folder)
        P.remove_quietly(self.spool.progress(name))
        P.move_final(folder, self.spool.dir(P.NEW), name)
        if count:
            self.requeued += 1

    def lost(self, folder: Path, name: str, reason: str) -> None:
        """A run of the job died with its worker or daemon: requeue it, or fail it after MAX_ATTEMPTS."""
        key = self.key()
        lost, history = (P.read_attempts(folder, key) if key is not None else None) or (0, [])
        lost = min(lost + 1, P.MAX_ATTEMPTS)
        history.append({"reason": reason, "time": P.now_iso()})
        P.clean_job_folder(folder)
        if lost < P.MAX_ATTEMPTS and key is not None:  # sealed: the next daemon to claim it counts it
            P.write_attempts(folder, key, lost, history)
        else:  # the record of a failed job (or no key): counts for nothing if published again
            P.write_json(folder / P.ATTEMPTS_FILE, {"protocol": P.PROTOCOL_VERSION, "lost": lost, "history": history})
        P.remove_quietly(self.spool.progress(name))
        if lost >= P.MAX_ATTEMPTS:
            write_error(folder, name, "too_many_attempts",
                        f"the job was started {lost} times and each run died before it finished "
                        f"(last: {reason}); it may need more memory than this machine has", self.context(lost),
                        history=history)
            P.move_final(folder, self.spool.dir(P.FAILED), name)
            P.remove_quietly(self.spool.cancel(name))
            self.failed += 1
        else:
            self.put_back(folder, name)

    def fail_entry(self, path: Path, name: str) -> None:
        """Something that is not a job folder was published: wrap it in one and fail it."""
        wrap = path.with_name(f".{name}.wrap")
        wrap.mkdir(mode=0o700)
        os.rename(path, wrap / name)
        self.finish(wrap, name, "failed", error=("bad_job", f"new/{name} is not a job folder (a job is a "
                                                 "directory holding job.json and its data)", 1))

    def fail_namesake(self, folder: Path, name: str, message: str) -> None:
        """Fail a job apart, as ``name~N``, because a job of ours holds its name; its progress file and
        cancel marker are that other job's, and stay."""
        write_error(folder, name, "bad_job", message, self.context())
        P.unseal_attempts(folder)
        P.move_final(folder, self.spool.dir(P.FAILED), name, first=1)
        self.failed += 1
