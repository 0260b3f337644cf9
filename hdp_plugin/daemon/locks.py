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

#: when this module was imported: the latest a process that imports it can have started
_IMPORTED = time.time()


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


def _linux_start(now: float) -> float | None:
    """Linux: the process's start from /proc/self/stat (clock ticks since boot) and the time since boot."""
    with open("/proc/self/stat", "rb") as fh:
        ticks = int(fh.read().rsplit(b")", 1)[1].split()[19])
    age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    return now - age


def _windows_start() -> float | None:
    """Windows: GetProcessTimes' creation time (100 ns since 1601)."""
    import ctypes
    from ctypes import wintypes

    kernel32 = ctypes.windll.kernel32
    kernel32.GetCurrentProcess.restype = wintypes.HANDLE
    times = [wintypes.FILETIME() for _ in range(4)]
    if not kernel32.GetProcessTimes(kernel32.GetCurrentProcess(), *[ctypes.byref(t) for t in times]):
        return None
    created = (times[0].dwHighDateTime << 32) | times[0].dwLowDateTime
    return created / 1e7 - 11644473600.0


def process_started() -> float:
    """When this process started, in seconds since the epoch: the operating system's figure on Linux and
    Windows, else (or if that looks wrong) the time this module was imported, which is a little later."""
    now = time.time()
    try:
        t = _linux_start(now) if sys.platform.startswith("linux") else \
            _windows_start() if sys.platform == "win32" else None
    except Exception:  # noqa: BLE001 - no /proc, an odd kernel: fall back to the import time
        t = None
    if t is None or not _IMPORTED - 600 <= t <= _IMPORTED:
        return _IMPORTED
    return t
