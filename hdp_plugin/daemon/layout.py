"""Names and paths of a spool: its directories, the files of a job folder, job and daemon names.

The layout is fixed by the protocol (``docs/spool-protocol.md``); :class:`Spool` maps a spool directory
to the paths of its states, jobs, markers and daemon files, and never follows a link where a directory
belongs.
"""

from __future__ import annotations

import os
import re
import socket
import stat
from pathlib import Path

from .._fs import is_real_dir
from ..errors import JobError

TMP, NEW, CLAIMED, DONE, FAILED = "tmp", "new", "claimed", "done", "failed"
PROGRESS, CANCEL, DAEMONS = "progress", "cancel", "daemons"
#: every sub-directory of a spool
SUBDIRS = (TMP, NEW, CLAIMED, DONE, FAILED, PROGRESS, CANCEL, DAEMONS)
#: file names inside a job folder
JOB_FILE, RESULT_FILE, ERROR_FILE, MODEL_FILE, ATTEMPTS_FILE = (
    "job.json", "result.json", "error.json", "model.arrow", "attempts.json")
#: data file names a job may use, by format
DATA_FILES = {"data.arff": "arff", "data.arrow": "arrow"}
#: files the daemon writes into a job folder (removed when a job is put back in new/)
DAEMON_FILES = (RESULT_FILE, ERROR_FILE, MODEL_FILE)
#: in daemons/: the spool's secret key, with which daemons seal the attempts.json they write
ATTEMPTS_KEY_FILE = ".attempts.key"
#: in daemons/: a stop request for every daemon that started before it (``daemon stop``)
STOP_ALL_FILE = ".stop-all"

#: a job (or daemon) name: safe on every file system, no path separators, no leading dot
NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,127}$")


def check_name(name: str, what: str = "job name") -> str:
    # fullmatch: NAME_RE's $ also matches before a final newline, and "job\n" is no job name
    if not isinstance(name, str) or not NAME_RE.fullmatch(name) or name.endswith(".tmp"):
        raise JobError(f"{what} must be 1-128 letters, digits or _ . @ + -, start with a letter, "
                       f"digit or _, and not end in .tmp; got {name!r}")
    return name


def new_daemon_id() -> str:
    host = re.sub(r"[^A-Za-z0-9_-]", "-", socket.gethostname())[:40] or "host"
    return f"{host}-{os.getpid()}-{os.urandom(3).hex()}"


class Spool:
    """The paths of one spool directory."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"Spool({str(self.root)!r})"

    def dir(self, state: str) -> Path:
        return self.root / state

    def job(self, state: str, name: str, daemon: str | None = None) -> Path:
        if state == CLAIMED:
            return self.root / CLAIMED / daemon / name
        return self.root / state / name

    def progress(self, name: str) -> Path:
        return self.root / PROGRESS / f"{name}.json"

    def cancel(self, name: str) -> Path:
        return self.root / CANCEL / name

    def lock(self, daemon: str) -> Path:
        return self.root / DAEMONS / f"{daemon}.lock"

    def heartbeat(self, daemon: str) -> Path:
        return self.root / DAEMONS / f"{daemon}.json"

    def stop_marker(self, daemon: str) -> Path:
        return self.root / DAEMONS / f"{daemon}.stop"

    def stop_all(self) -> Path:
        return self.root / DAEMONS / STOP_ALL_FILE

    def attempts_key(self) -> Path:
        return self.root / DAEMONS / ATTEMPTS_KEY_FILE

    def create(self) -> "Spool":
        """Make the spool and its sub-directories, private to the user (mode 0700); :class:`JobError`
        naming the spool when something else is in its place (a file, a device) or it cannot be made.

        A new spool is built under a hidden name beside it and renamed into place in one step, so that
        another process (``daemon stop``, a producer, a second daemon) sees no spool or a whole one,
        never a half-made one; an existing directory gets the sub-directories it lacks."""
        if os.path.exists(self.root) and not os.path.isdir(self.root):
            raise JobError(f"{self.root}: not a directory, so not a spool; give a directory (created if missing)")
        above = next((p for p in self.root.parents if os.path.exists(p)), None)
        if above is not None and not os.path.isdir(above):
            raise JobError(f"{self.root}: {above} is not a directory, so the spool cannot be made there; give a "
                           "directory (created if missing)")
        old = os.umask(0o077)
        try:
            if not os.path.lexists(self.root):
                self._create_whole()
            for d in SUBDIRS:
                (self.root / d).mkdir(mode=0o700, exist_ok=True)
        except OSError as exc:
            where = f" ({exc.filename})" if getattr(exc, "filename", None) not in (None, str(self.root)) else ""
            raise JobError(f"{self.root}: cannot make the spool directory: {exc.strerror or exc}{where}") from exc
        finally:
            os.umask(old)
        return self

    def _create_whole(self) -> None:
        """Build the spool in ``.<name>.<hex>.tmp`` beside it, then rename it to its name."""
        self.root.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = self.root.parent / f".{self.root.name}.{os.urandom(4).hex()}.tmp"
        tmp.mkdir(mode=0o700)
        made = []
        try:
            for d in SUBDIRS:
                (tmp / d).mkdir(mode=0o700)
                made.append(tmp / d)
            os.rename(tmp, self.root)
        except OSError:
            for path in [*made, tmp]:  # only the empty directories made here
                try:
                    os.rmdir(path)
                except OSError:
                    pass
            if not os.path.lexists(self.root):
                raise
            # another process made the spool meanwhile: the sub-directories it lacks are added in place

    def check(self) -> "Spool":
        """:class:`JobError` unless this looks like a spool (every sub-directory present)."""
        missing = [d for d in SUBDIRS if not (self.root / d).is_dir()]
        if missing:
            raise JobError(f"{self.root}: not a spool directory (no {', '.join(missing)}/); "
                           f"start a daemon on it or create it with 'daemon run'")
        return self

    def names(self, state: str) -> list[str]:
        """Entries of a state directory, ignoring hidden and temporary names ([] if it is not a directory)."""
        try:
            return sorted(n for n in os.listdir(self.root / state) if not n.startswith("."))
        except OSError:  # missing, or a stray file or link where a directory belongs
            return []

    def claimed_daemons(self) -> list[str]:
        """The entries of ``claimed/`` that are real directories (never links): one per daemon."""
        return [d for d in self.names(CLAIMED) if is_real_dir(self.root / CLAIMED / d)]

    def claimed(self) -> dict[str, list[str]]:
        """``{daemon id: [job names]}`` of ``claimed/`` (real directories only, never followed links)."""
        return {d: self.names(f"{CLAIMED}/{d}") for d in self.claimed_daemons()}

    def check_private(self) -> None:
        """:class:`JobError` unless the spool and each sub-directory is a real directory (no link) owned
        by this user and writable by nobody else (POSIX; Windows has no such modes)."""
        for path in [self.root] + [self.root / d for d in SUBDIRS]:
            try:
                st = os.lstat(path)
            except OSError as exc:
                raise JobError(f"{path}: cannot inspect the spool ({exc.strerror or exc})") from None
            if not stat.S_ISDIR(st.st_mode):
                raise JobError(f"{path}: is not a directory (a link or a file); the spool and its "
                               f"sub-directories must be real directories")
            if os.name != "posix":
                continue
            if st.st_uid != os.geteuid():
                raise JobError(f"{path}: is owned by user id {st.st_uid}, not by this user ({os.geteuid()}); "
                               "another user could run jobs as you. Use a spool of your own, or pass "
                               "--allow-shared-spool if you trust every user who can write it")
            if st.st_mode & 0o022:
                raise JobError(f"{path}: has mode {stat.S_IMODE(st.st_mode):o}, writable by other users, who "
                               f"could run jobs as you; 'chmod 700' it, or pass --allow-shared-spool if you "
                               "trust every user who can write it")

    def locate(self, name: str) -> tuple[str, Path] | None:
        """Where a job is now: ``(state, folder)``, or None.

        A job can move while we look (``new/`` -> ``claimed/`` just after we listed ``claimed/``),
        so a miss is looked again three times before it counts.
        """
        for _ in range(3):
            for state in (DONE, FAILED):
                p = self.job(state, name)
                if p.exists():
                    return state, p
            for daemon, jobs in self.claimed().items():
                if name in jobs:
                    return CLAIMED, self.job(CLAIMED, name, daemon)
            for state in (NEW, TMP):
                p = self.job(state, name)
                if p.exists():
                    return state, p
        return None
