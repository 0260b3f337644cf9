"""File operations of the spool: atomic writes and renames, tolerant reads of the daemon's JSON files.

A job changes state only by renaming its folder (:func:`move`, :func:`move_final`); small files are
replaced in one step (:func:`write_json`, through :func:`hdp_plugin._fs.write_atomic`); a reader never
blocks on, or trusts, what a producer may have put in place of a file (:func:`read_json`,
:func:`read_attempts`).
"""

from __future__ import annotations

import datetime as _dt
import errno
import hashlib
import hmac
import json
import math
import os
import stat
from pathlib import Path

from .. import config
from .._fs import fsync_directory, is_real_dir, remove_quietly, retry_sharing, write_atomic
from .layout import ATTEMPTS_FILE, DAEMON_FILES, JOB_FILE

__all__ = ["attempts_key", "cancel_requested", "clean_job_folder", "is_real_dir", "move", "move_final", "now_iso", "number",
           "read_attempts", "read_json", "remove_quietly", "unseal_attempts", "write_atomic", "write_attempts",
           "write_json"]

#: largest JSON document (heartbeat, progress, result, error, attempts) a reader accepts
MAX_DOC_BYTES = config.MAX_DOC_BYTES
#: a job dies with too_many_attempts when its daemon or worker died during this many attempts
MAX_ATTEMPTS = config.MAX_ATTEMPTS


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_json(path: Path, doc: dict, *, fsync: bool = True) -> None:
    write_atomic(path, (json.dumps(doc, indent=2, allow_nan=False) + "\n").encode("utf-8"), fsync=fsync)


#: a reader opens without waiting for a FIFO's writer (O_NONBLOCK, where the platform has it)
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def read_json(path: Path) -> dict | None:
    """A JSON object the daemon or a client wrote, or None if it is missing, malformed, not an object,
    larger than MAX_DOC_BYTES or not a regular file (a reader never blocks on a FIFO: the file is
    opened without waiting and its descriptor checked, so one swapped in after a look is refused too)."""
    try:
        with os.fdopen(os.open(path, _READ_FLAGS), "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
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


#: bytes of the spool's attempts key
_KEY_BYTES = 32


def attempts_key(path: Path) -> bytes:
    """The spool's secret key for sealing attempts files (``daemons/.attempts.key``, 32 random bytes,
    mode 0600), created by the first daemon that needs it.

    A key that is not a regular file of 32 bytes is replaced by a new one: the seals made with the old
    key then count for nothing, which only ever gives a job more attempts, never fewer.
    """
    for _ in range(3):
        key = _read_key(path)
        if key is not None:
            return key
        tmp = path.with_name(f".{path.name}.{os.urandom(4).hex()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
            try:
                os.write(fd, os.urandom(_KEY_BYTES))
                os.fsync(fd)
            finally:
                os.close(fd)
            if os.path.lexists(path):  # a broken key (a link, a wrong size): replace it
                os.replace(tmp, path)
            else:
                try:  # a hard link never replaces: the key another daemon made meanwhile stays
                    os.link(tmp, path)
                except FileExistsError:
                    pass
                except OSError:  # a file system without hard links
                    os.replace(tmp, path)
        finally:
            remove_quietly(tmp)
    raise OSError(f"{path}: cannot create the spool's attempts key")


def _read_key(path: Path) -> bytes | None:
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        with open(path, "rb") as fh:
            key = fh.read(_KEY_BYTES + 1)
    except OSError:
        return None
    return key if len(key) == _KEY_BYTES else None


def _seal(key: bytes, name: str, lost: int, history: list) -> str:
    """The HMAC-SHA256 that binds an attempts count to its job name under the spool's key."""
    text = json.dumps({"job": name, "lost": lost, "history": history}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True)
    return hmac.new(key, text.encode("ascii"), hashlib.sha256).hexdigest()


def write_attempts(folder: Path, key: bytes, lost: int, history: list) -> None:
    """Write a job's attempts.json, sealed with the spool's key for the job (the folder's name)."""
    write_json(folder / ATTEMPTS_FILE, {"protocol": 1, "lost": lost, "history": history,
                                        "seal": _seal(key, folder.name, lost, history)})


def read_attempts(folder: Path, key: bytes) -> tuple[int, list] | None:
    """``(lost, history)`` of a job's attempts.json, or None unless it is a daemon's: a regular file (no
    link) holding what a daemon writes, sealed with the spool's key for this job (the folder's name).
    A producer's file, however well formed, or the copy of another job's, is not (None)."""
    path = folder / ATTEMPTS_FILE
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
    except OSError:
        return None
    doc = read_json(path) or {}
    lost, history, seal = doc.get("lost"), doc.get("history"), doc.get("seal")
    if (isinstance(lost, bool) or not isinstance(lost, int) or not 0 <= lost <= MAX_ATTEMPTS
            or not isinstance(history, list) or len(history) > 100 or not isinstance(seal, str)
            or not all(isinstance(h, dict) and set(h) == {"reason", "time"} and isinstance(h["reason"], str)
                       and isinstance(h["time"], str) for h in history)
            or not seal.isascii() or not hmac.compare_digest(seal, _seal(key, folder.name, lost, history))):
        return None
    return lost, [{"reason": h["reason"], "time": h["time"]} for h in history]


def unseal_attempts(folder: Path) -> None:
    """Remove the seal of a finished job's attempts.json (kept for the record): a producer who
    publishes the folder again starts a new count."""
    path = folder / ATTEMPTS_FILE
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return
    except OSError:
        return
    doc = read_json(path)
    if doc is not None and "seal" in doc:
        doc.pop("seal")
        write_json(folder / ATTEMPTS_FILE, doc)


def _mtime_ns(path: Path) -> int | None:
    """``path``'s own modification time (a link's, never its target's), or None if it does not exist."""
    try:
        return os.lstat(path).st_mtime_ns
    except OSError:
        return None


def cancel_requested(marker: Path, folder: Path) -> bool:
    """Does the cancel marker ``marker`` (``cancel/<job>``) cancel the job in ``folder``? Only if it was
    written when the job already existed: a marker older than the job's job.json was meant for an
    earlier job of that name (or for none), and is ignored. Without a job.json, any marker counts."""
    written = _mtime_ns(marker)
    if written is None:
        return False
    job = _mtime_ns(folder / JOB_FILE)
    return job is None or written >= job


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
