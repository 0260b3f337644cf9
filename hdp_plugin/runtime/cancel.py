"""Cancelling a fit from outside, between the steps of its long phases, and stopping it at once on
Ctrl-C.

The sampler asks its ``progress`` hook between chunks of iterations; the phases before it
(discretisation, the passes of structure learning over blocks of rows, an ensemble's members)
call :func:`check` between their steps. A caller that wants a fit stoppable, such as the daemon's
job (which stops on a ``cancel/<job>`` marker, or when the daemon stops), runs the fit inside
``with checking(fn):``; ``fn()`` then raises whatever should end the fit (``Cancelled``).

Ctrl-C raises ``KeyboardInterrupt`` in the main thread only, while the work of a fit runs on other
threads (the sampler's, an ensemble's members, blocks of rows). A thread that waits for such work
waits with :func:`wait_all` (or :func:`hdp_plugin.runtime.threads.pool_map`): in steps of
:data:`POLL` seconds, so that Ctrl-C is seen at once on every platform (a wait without a timeout
is not interrupted on Windows), and when it is interrupted, the work not started is dropped and,
until the work in flight has stopped, every :func:`check` raises :class:`~hdp_plugin.errors.Cancelled`:
the other threads stop at their next check instead of running the fit to its end.

The check is process-wide, so that the thread pools of a fit see it too: a daemon's worker process
runs one job at a time. :func:`check` calls ``fn`` at most every :data:`INTERVAL` seconds, so that
the steps may call it as often as they like.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator

#: the least time between two calls of the installed function (seconds)
INTERVAL = 0.05
#: the longest a waiting thread goes without looking for Ctrl-C (seconds)
POLL = 0.1

_lock = threading.Lock()
_check: Callable[[], None] | None = None
_last = 0.0
_raised: BaseException | None = None
_interrupts = 0  # threads interrupted while their fit's work is still in flight


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


@contextmanager
def interrupted() -> Iterator[None]:
    """While inside, every :func:`check` raises :class:`~hdp_plugin.errors.Cancelled` (this thread
    was interrupted; the other threads of its fit stop at their next check)."""
    global _interrupts
    with _lock:
        _interrupts += 1
    try:
        yield
    finally:
        with _lock:
            _interrupts -= 1


def check() -> None:
    """Raise what the installed function raises, if one is installed and the interval has passed;
    once it has raised, every later check raises the same (the other threads of the fit stop too).
    Inside :func:`interrupted`, raise :class:`~hdp_plugin.errors.Cancelled`."""
    global _last, _raised
    if _interrupts:
        from ..errors import Cancelled

        raise Cancelled("interrupted")
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


def _wait(futures: set, return_when) -> set:
    """The futures of ``futures`` not done when :func:`concurrent.futures.wait` returns, waited for
    in steps of :data:`POLL` seconds."""
    pending = set(futures)
    while pending:
        done, pending = concurrent.futures.wait(pending, timeout=POLL, return_when=return_when)
        if return_when == concurrent.futures.FIRST_EXCEPTION and any(
                not f.cancelled() and f.exception() is not None for f in done):
            break
    return pending


def wait_all(futures: Iterable[concurrent.futures.Future]) -> None:
    """Wait until every future is done, in steps of :data:`POLL` seconds (Ctrl-C is seen at once).
    Once one has failed, the ones not started are dropped (they would not change what is raised).
    If this thread is interrupted (``KeyboardInterrupt``, or any exception) while it waits, the
    ones not started are dropped and, while the others finish, every :func:`check` raises (they
    stop at their next check); then the interruption propagates."""
    futures = list(futures)
    try:
        pending = _wait(set(futures), concurrent.futures.FIRST_EXCEPTION)
        if pending:  # one failed: the work not started is dropped, the work in flight finishes
            for f in pending:
                f.cancel()
            _wait(pending, concurrent.futures.ALL_COMPLETED)
    except BaseException:
        for f in futures:
            f.cancel()
        with interrupted():
            _wait(set(futures), concurrent.futures.ALL_COMPLETED)
        raise
