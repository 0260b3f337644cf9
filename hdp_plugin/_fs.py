"""Small file-system helpers shared by the model file, the CLI's outputs and the spool (portable by design).

:func:`replacing` (and :func:`write_atomic` on top of it) is the one atomic write of the package: every
file a reader may see while it changes (a model, predictions, a job's JSON files) is written through it.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path


def fsync_directory(path: Path) -> None:
    """Make a rename inside ``path`` durable where the platform allows it (POSIX); a no-op elsewhere."""
    if not hasattr(os, "O_DIRECTORY"):  # Windows: directories cannot be opened for fsync
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def check_output(path: str | os.PathLike, inputs: tuple = (), *, directory: bool = False) -> tuple[Path, str | None]:
    """``(target, problem)`` for an output file: the real file to replace (a link is written through),
    and a sentence saying why it must not be written (None if it may): not a regular file (a device,
    FIFO, socket or directory), or one of ``inputs``; with ``directory``, also a directory that is
    missing, is not a directory, or takes no new file (:func:`directory_problem`), so that a command
    refuses its output before its work rather than after."""
    target = Path(os.path.realpath(path))
    try:
        st = os.stat(target)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError) or (directory and isinstance(exc, NotADirectoryError)):
            return target, directory_problem(target.parent) if directory else None
        return target, f"cannot inspect it ({exc.strerror or exc})"
    if not stat.S_ISREG(st.st_mode):
        kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
                else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        return target, f"is {kind}, not a regular file; it would be replaced, not written to"
    for p in inputs:
        try:
            if os.path.samefile(target, p):
                return target, f"is the input file {p}; it would be overwritten"
        except OSError:
            continue
    return target, directory_problem(target.parent) if directory else None


def directory_problem(directory: Path) -> str | None:
    """Why a new file cannot be written in ``directory`` (None if it can): it is missing, it is not a
    directory, or creating a file there fails (no write permission, a read-only file system). The test
    creates and removes a temporary file, as :func:`replacing` will: portable where permission bits do
    not tell (Windows ACLs, read-only mounts, the superuser)."""
    try:
        st = os.stat(directory)
    except (FileNotFoundError, NotADirectoryError):  # missing, or below a file
        return f"its directory {directory} does not exist"
    except OSError as exc:
        return f"its directory {directory} cannot be inspected ({exc.strerror or exc})"
    if not stat.S_ISDIR(st.st_mode):
        return f"{directory} is not a directory"
    try:
        fd, probe = tempfile.mkstemp(prefix=".hdp-bnc-", suffix=".tmp", dir=str(directory))
    except OSError as exc:
        return f"cannot create a file in its directory {directory} ({exc.strerror or exc})"
    os.close(fd)
    remove_quietly(Path(probe))
    return None


def retry_sharing(op, *args, attempts: int = 20):
    """Run a rename, retrying briefly on Windows sharing violations (a reader has the file open)."""
    for i in range(attempts):
        try:
            return op(*args)
        except PermissionError:
            if sys.platform != "win32" or i == attempts - 1:
                raise
            time.sleep(0.05)


def is_real_dir(path: Path) -> bool:
    """A directory itself, not a link to one (``lstat``: links are never followed)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def remove_quietly(path: Path) -> None:
    """Unlink ``path``; nothing if it is gone (or cannot be removed)."""
    try:
        os.unlink(path)
    except OSError:
        pass


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def replacing(target: Path, *, fsync: bool = False):
    """Write ``target`` atomically: yield a temporary path in its directory (``.<name>.<random>.tmp``),
    then rename it over ``target`` (a reader, or a full disk, never leaves half a file). The file gets
    the usual mode (0666 less the umask). ``fsync``: make the file and the rename durable before returning.
    On an error the temporary file is removed and the error propagates; ``target`` is untouched."""
    target = Path(target)
    directory = target.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=str(directory))
    os.close(fd)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600
        yield Path(tmp)
        if fsync:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        retry_sharing(os.replace, tmp, target)
        tmp = None
        if fsync:
            fsync_directory(directory)
    finally:
        if tmp is not None:
            remove_quietly(tmp)


def write_atomic(path: Path, data: bytes, *, fsync: bool = True) -> None:
    """Write ``data`` to ``path`` through :func:`replacing`."""
    with replacing(path, fsync=fsync) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
