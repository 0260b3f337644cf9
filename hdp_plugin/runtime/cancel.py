"""Cancelling a fit from outside, between the steps of its long phases.

The sampler asks its ``progress`` hook between chunks of iterations; the phases before it
(discretisation, the passes of structure learning over blocks of rows, an ensemble's members)
call :func:`check` between their steps. A caller that wants a fit stoppable, such as the daemon's
job (which stops on a ``cancel/<job>`` marker, or when the daemon stops), runs the fit inside
``with checking(fn):``; ``fn()`` then raises whatever should end the fit (``Cancelled``).

The check is process-wide, so that the thread pools of a fit see it too: a daemon's worker process
runs one job at a time. :func:`check` calls ``fn`` at most every :data:`INTERVAL` seconds, so that
the steps may call it as often as they like.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

#: the least time between two calls of the installed function (seconds)
INTERVAL = 0.05

_lock = threading.Lock()
_check: Callable[[], None] | None = None
_last = 0.0
_raised: BaseException | None = None


@contextmanager
def checking(fn: Callable[[], None]) -> Iterator[None]:
    """While inside, :func:`check` calls ``fn`` (which raises to stop the fit)."""
    global _check, _last, _raised
    with _lock:
        previous, _check, _last, _raised = _check, fn, 0.0, None
    try:
        yield
    finally:
        with _lock:
            _check, _raised = previous, None


def check() -> None:
    """Raise what the installed function raises, if one is installed and the interval has passed;
    once it has raised, every later check raises the same (the other threads of the fit stop too)."""
    global _last, _raised
    fn = _check
    if fn is None:
        return
    if _raised is not None:
        raise _raised
    now = time.monotonic()
    if now - _last < INTERVAL:
        return
    _last = now
    try:
        fn()
    except BaseException as exc:
        _raised = exc
        raise
