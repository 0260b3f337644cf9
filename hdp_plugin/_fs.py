"""Small file-system helpers shared by the model file and the spool (portable by design)."""

from __future__ import annotations

import os
import stat
import tempfile
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


def check_output(path: str | os.PathLike, inputs: tuple = ()) -> tuple[Path, str | None]:
    """``(target, problem)`` for an output file: the real file to replace (a link is written through),
    and a sentence saying why it must not be written (None if it may): not a regular file (a device,
    FIFO, socket or directory), or one of ``inputs``."""
    target = Path(os.path.realpath(path))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return target, None
    except OSError as exc:
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
    return target, None


@contextmanager
def replacing(target: Path):
    """Write ``target`` atomically: yield a temporary path in its directory, then rename it over
    ``target`` (a reader, or a full disk, never leaves half a file). The file gets the usual mode."""
    target = Path(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=str(target.parent))
    os.close(fd)
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(tmp, 0o666 & ~mask)
    try:
        yield Path(tmp)
        os.replace(tmp, target)
        tmp = None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
