"""Locks and liveness: is a daemon (or a process) alive?

A live daemon holds an exclusive lock on byte 0 of ``daemons/<id>.lock`` for its whole life; the
kernel releases it when the process dies, even by SIGKILL, so the lock, not the heartbeat, tells a
dead daemon from a live one on this host. The heartbeat's age is the answer for clients elsewhere.
"""

from __future__ import annotations

import errno
import os
import sys
import time
from pathlib import Path

from .. import config
from ..errors import JobError
from .fileops import number
from .layout import Spool


def _lock_fd(fd: int) -> bool:
    """Try to take an exclusive lock on byte 0 of an open file; True if we got it.

    POSIX: an fcntl record lock (F_SETLK), the kind Java's FileChannel.tryLock takes, released by
    the kernel when the process dies, even by SIGKILL. Windows: LockFileEx through msvcrt.locking.
    """
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False
    import fcntl

    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
        return True
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EAGAIN):
            return False
        raise


def _unlock_fd(fd: int) -> None:
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        except OSError:
            pass
        return
    import fcntl

    fcntl.lockf(fd, fcntl.LOCK_UN, 1, 0)


class DaemonLock:
    """The lock a live daemon holds on ``daemons/<id>.lock`` for its whole life."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        if not _lock_fd(fd):
            os.close(fd)
            raise JobError(f"{self.path}: already locked by another process")
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            try:
                _unlock_fd(self.fd)
            finally:
                os.close(self.fd)
                self.fd = None


def daemon_alive(spool: Spool, daemon: str) -> bool:
    """Is the daemon ``daemon`` of this spool alive? Answered by its lock, not by its heartbeat.

    Never call this for a daemon id of the calling process: POSIX record locks belong to the
    process, so probing one's own lock would succeed and closing the probe would release it.
    """
    try:
        fd = os.open(spool.lock(daemon), os.O_RDWR)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # cannot tell: assume alive, never steal a live daemon's jobs
    try:
        got = _lock_fd(fd)
        if got:
            _unlock_fd(fd)
        return not got
    finally:
        os.close(fd)


def heartbeat_fresh(doc: dict | None) -> bool:
    """True when a heartbeat document is recent (for clients on another host, where locks may lie)."""
    if not doc:
        return False
    age = time.time() - number(doc, "heartbeat_unix")
    return age < config.STALE_HEARTBEATS * number(doc, "heartbeat_seconds", config.HEARTBEAT_SECONDS)


def pid_alive(pid: int) -> bool:
    """Is process ``pid`` (on this host) running? Used only to wait for a dead daemon's workers."""
    if pid <= 0:
        return False
    if sys.platform == "win32":
        import ctypes

        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x00100000, False, int(pid))  # SYNCHRONIZE
        if not handle:
            return False
        try:
            return kernel32.WaitForSingleObject(handle, 0) == 0x102  # WAIT_TIMEOUT: still running
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # Linux: a zombie nobody reaped yet is dead
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True
