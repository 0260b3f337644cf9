"""Sweeping: remove what crashes, clients and producers left behind in a spool.

Progress files and cancel markers of finished jobs, and of jobs found nowhere in the spool once
``STALE_MARKER_SECONDS`` old (a client that cancels a job and then removes its folder, as the Weka
client does, or a cancel of a job that was never published); and ``tmp/`` entries a producer
abandoned (untouched for ``TMP_MAX_AGE_SECONDS``: maildir's rule). Run at the end of every recovery pass.
"""

from __future__ import annotations

import os
import shutil
import time

from .. import config
from . import logs
from . import protocol as P

log = logs.logger(__name__)


def sweep(spool: P.Spool) -> None:
    """Remove the progress files and cancel markers of finished jobs, and of jobs found nowhere (once
    untouched for STALE_MARKER_SECONDS), and producers' abandoned ``tmp/`` entries (untouched for
    TMP_MAX_AGE_SECONDS: maildir's rule). A cancel marker of a job queued in ``new/`` stays: it cancels
    the job when a daemon claims it, unless it is older than the job (then it is removed)."""
    now = time.time()
    for name in spool.names(P.TMP):
        path = spool.dir(P.TMP) / name
        try:
            touched = max([os.lstat(path).st_mtime] + [e.stat(follow_symlinks=False).st_mtime
                                                       for e in os.scandir(path)] if path.is_dir()
                          else [os.lstat(path).st_mtime])
        except OSError:
            continue
        if now - touched > config.TMP_MAX_AGE_SECONDS:
            log.warning("removing %s: abandoned by its producer (untouched for %.0f h)", path,
                        (now - touched) / 3600)
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                P.remove_quietly(path)
    running = {n for names in spool.claimed().values() for n in names}
    for state, suffix in ((P.PROGRESS, ".json"), (P.CANCEL, "")):
        for f in spool.names(state):
            name = f[: len(f) - len(suffix)] if suffix and f.endswith(suffix) else f
            if name in running:
                continue
            path = spool.dir(state) / f
            final = spool.job(P.DONE, name).exists() or spool.job(P.FAILED, name).exists()
            try:
                stale = time.time() - os.stat(path).st_mtime > config.STALE_MARKER_SECONDS
            except OSError:
                continue
            queued = spool.job(P.NEW, name)
            # a marker older than the queued job of its name was meant for another: it never cancels this one
            foreign = state == P.CANCEL and queued.exists() and not P.cancel_requested(path, queued)
            if (final and state == P.PROGRESS) or (final and not queued.exists()) or foreign or (
                    stale and spool.locate(name) is None):
                P.remove_quietly(path)
