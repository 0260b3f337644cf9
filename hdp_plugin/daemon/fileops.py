"""File operations of the spool: atomic writes and renames, tolerant reads of the daemon's JSON files.

A job changes state only by renaming its folder (:func:`move`, :func:`move_final`); small files are
replaced in one step (:func:`write_json`, through :func:`hdp_plugin._fs.write_atomic`); a reader never
blocks on, or trusts, what a producer may have put in place of a file (:func:`read_json`,
:func:`read_attempts`).
"""

from __future__ import annotations

import datetime as _dt
import errno
import json
import math
import os
import stat
from pathlib import Path

from .. import config
from .._fs import fsync_directory, is_real_dir, remove_quietly, retry_sharing, write_atomic
from .layout import ATTEMPTS_FILE, DAEMON_FILES

__all__ = ["clean_job_folder", "is_real_dir", "move", "move_final", "now_iso", "number", "read_attempts",
           "read_json", "remove_quietly", "write_atomic", "write_json"]

#: largest JSON document (heartbeat, progress, result, error, attempts) a reader accepts
MAX_DOC_BYTES = config.MAX_DOC_BYTES
#: a job dies with too_many_attempts when its daemon or worker died during this many attempts
MAX_ATTEMPTS = config.MAX_ATTEMPTS


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_json(path: Path, doc: dict, *, fsync: bool = True) -> None:
    write_atomic(path, (json.dumps(doc, indent=2, allow_nan=False) + "\n").encode("utf-8"), fsync=fsync)


def read_json(path: Path) -> dict | None:
    """A JSON object the daemon or a client wrote, or None if it is missing, malformed, not an object,
    larger than MAX_DOC_BYTES or not a regular file (a reader never blocks on a FIFO)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as fh:
            data = fh.read(MAX_DOC_BYTES + 1)
        if len(data) > MAX_DOC_BYTES:
            return None
        doc = json.loads(data.decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def number(doc: dict | None, key: str, default: float = 0.0) -> float:
    """``doc[key]`` as a finite float, or ``default`` when it is missing or not a finite number."""
    v = (doc or {}).get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return default
    return float(v)


def read_attempts(folder: Path) -> tuple[int, list]:
    """``(lost, history)`` of a job's attempts.json; ``(0, [])`` unless it is a regular file (no link)
    holding what a daemon writes, so that a producer cannot spoof or break the retry count."""
    path = folder / ATTEMPTS_FILE
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return 0, []
    except OSError:
        return 0, []
    doc = read_json(path) or {}
    lost, history = doc.get("lost"), doc.get("history", [])
    if (isinstance(lost, bool) or not isinstance(lost, int) or not 0 <= lost <= MAX_ATTEMPTS
            or not isinstance(history, list)
            or not all(isinstance(h, dict) and isinstance(h.get("reason"), str) and isinstance(h.get("time"), str)
                       for h in history)):
        return 0, []
    return lost, [{"reason": h["reason"][:500], "time": h["time"][:40]} for h in history[-20:]]


def move(src: Path, dst: Path) -> bool:
    """Rename a job folder, never over an existing one. False if ``src`` is gone (someone else won).

    ``os.rename`` is one rename(2) on POSIX and one MoveFileEx (without REPLACE_EXISTING) on
    Windows: atomic within one file system, and it fails rather than replace an existing target.
    """
    if dst.exists():
        raise FileExistsError(errno.EEXIST, "target exists", str(dst))
    try:
        retry_sharing(os.rename, src, dst)
    except FileNotFoundError:
        return False
    fsync_directory(dst.parent)
    return True


def move_final(src: Path, state_dir: Path, name: str, *, first: int = 0) -> Path:
    """Rename a finished job into ``done/`` or ``failed/``; a reused name gets ``~1``, ``~2``...
    (``first=1``: never the plain name, for a job whose name belongs to another one)."""
    for i in range(first, 1000):
        dst = state_dir / (name if i == 0 else f"{name}~{i}")
        if dst.exists():
            continue
        try:
            retry_sharing(os.rename, src, dst)
        except (FileExistsError, IsADirectoryError):
            continue
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                continue
            raise
        fsync_directory(state_dir)
        return dst
    raise OSError(f"cannot find a free name for {name} in {state_dir}")


def clean_job_folder(folder: Path) -> None:
    """Remove what a run left in a job folder (results, error, temporary files) before a retry.

    A directory (or anything but a file or link) under a name the daemon writes is renamed out of the
    way, to ``.<name>.foreign``, so that it can neither block the daemon's writes nor be followed."""
    for name in DAEMON_FILES + (ATTEMPTS_FILE,):
        path = folder / name
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) or not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            try:
                os.rename(path, folder / f".{name}.{os.urandom(3).hex()}.foreign")
            except OSError:
                pass
        elif name != ATTEMPTS_FILE or stat.S_ISLNK(st.st_mode):
            remove_quietly(path)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if name.startswith(".") and name.endswith(".tmp"):
            remove_quietly(folder / name)
