"""The memory a fit may give to the tables it builds after the data is read, where a limit is in force.

``hdp-bnc`` and the daemon bound what reading and training hold by ``--max-input-mb``
(:mod:`hdp_plugin.data.limits`): training's working memory may be at most
``config.WORKING_MEMORY_FACTOR`` times it. The data's share is estimated when the data is read; the
pairwise statistics of structure learning (:mod:`hdp_plugin.structure.counts`) come later, inside the
fit, so the rest of the bound reaches them through this module: the caller runs the fit inside
``with bounded(nbytes, name):``, and every set of pairwise statistics is reserved here
(:func:`reserve`) before it is allocated and given back when its arrays are let go, so that the sets
alive at once (an ESKDB's members built on threads, the row parts of one count) never add up to more
than ``nbytes``. Outside ``bounded`` nothing is counted. The bound is process-wide, like
:mod:`hdp_plugin.runtime.cancel`'s check, so that the threads of a fit share it: a command and a daemon's
worker run one fit at a time.
"""

from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager
from typing import Iterator

_lock = threading.Lock()
_limit: int | None = None
_name = ""
_used = 0
_current = 0  # the token of the bound in force (0: none)
_count = 0  # tokens handed out so far: an ended bound's token is never in force again


@contextmanager
def bounded(nbytes: int | None, name: str) -> Iterator[None]:
    """While inside, :func:`reserve` grants at most ``nbytes`` in all (None: no bound); ``name`` names the
    limit in a refusal."""
    global _limit, _name, _used, _current, _count
    with _lock:
        previous = (_limit, _name, _used, _current)
        _count += 1
        _limit, _name, _used, _current = (None if nbytes is None else max(0, int(nbytes))), name, 0, _count
    try:
        yield
    finally:
        with _lock:
            _limit, _name, _used, _current = previous


def available() -> tuple[int, str] | None:
    """The bytes not reserved and the limit's name, or None outside :func:`bounded`."""
    with _lock:
        return None if _limit is None else (_limit - _used, _name)


def reserve(nbytes: int) -> int | None:
    """Reserve ``nbytes``: a token for :func:`hold` or :func:`release`, None if they do not fit (or 0
    outside :func:`bounded`, where nothing is counted)."""
    global _used
    with _lock:
        if _limit is None:
            return 0
        if _used + nbytes > _limit:
            return None
        _used += nbytes
        return _current


def release(token: int, nbytes: int) -> None:
    """Give back ``nbytes`` reserved with ``token`` (nothing once the bound they were reserved in ended)."""
    global _used
    with _lock:
        if token and token == _current:
            _used -= nbytes


def hold(token: int, nbytes: int, owner: object) -> None:
    """Keep ``nbytes`` reserved with ``token`` until ``owner`` (an array) is let go."""
    if token:
        weakref.finalize(owner, release, token, nbytes)
