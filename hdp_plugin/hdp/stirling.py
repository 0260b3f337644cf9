"""Log unsigned Stirling numbers of the first kind, in float64.

``log S(n, t)`` is tabulated by the recurrence
``log S(n, t) = logaddexp(log S(n-1, t-1), log(n-1) + log S(n-1, t))`` with ``S(0, 0) = 1``,
``S(n, 0) = 0`` for ``n > 0`` and ``S(n, t) = 0`` for ``t > n``.

The sampler's tables (:func:`log_stirling_rows`) have dense rows for the counts that move during
sampling (internal nodes' counts are sums of their children's table counts and stay small) and one
row for each distinct large leaf count (data counts, fixed, as large as the data). Columns go to
``t_max``: the sampler only needs ``t`` within a window of the current table count, so both
dimensions start small and the driver grows them when a tree comes near an edge. One pair of
tables is shared by all trees of a model.

The table sweep does not read log S itself but ratios of neighbouring Stirling numbers
(:func:`stirling_ratios`): the weights of consecutive candidate table counts differ by one ratio
along ``t`` for the cell, one ratio along ``n`` for its parent, the concentration and one factor of
the Gamma function, so a draw needs no ``exp``, ``log`` or ``lgamma`` per candidate.
"""

from __future__ import annotations

import math
import queue
import threading

import numpy as np
from numba import njit

from .. import config
from ..runtime.jit import NJIT_OPTIONS


@njit(inline="always", **NJIT_OPTIONS)
def _log_add(a, b):
    """log(exp(a) + exp(b)) for two terms of the recurrence.

    Parameters
    ----------
    a, b : float
        The logs of the two terms (either may be -inf).
    """
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


@njit(**NJIT_OPTIONS)
def _stream(n_from, n_to, t_lo, prev, left, left_base, right, right_base, dense, big, big_values, k):
    """Rows ``n_from .. n_to - 1`` of log S in the columns ``t_lo .. t_lo + w - 1`` (``w`` =
    ``len(prev)``), by the recurrence above, from row ``n_from - 1`` in ``prev``.

    A column depends only on itself and the column to its left, so any run of columns can be streamed
    on its own given the history of the column left of it: that is what lets the tables gain columns
    without streaming the old ones again, and two threads stream two runs of columns at once. Every
    entry is computed by the same operations whatever the runs, so the numbers are the same bit for bit.

    Parameters
    ----------
    n_from, n_to : int
        The rows streamed (``n_from >= 1``).
    t_lo : int
        The first column of the run.
    prev : ndarray (w,) float64
        Row ``n_from - 1`` of the run's columns on entry, row ``n_to - 1`` on return.
    left, left_base : ndarray float64, int
        ``left[n - left_base]`` is log S(n, t_lo - 1) for the rows ``n_from - 1 .. n_to - 2`` (not read
        when ``t_lo`` is 0).
    right, right_base : ndarray float64, int
        Written: ``right[n - right_base]`` = log S(n, t_lo + w - 1) for the rows streamed (an empty
        ``right`` is not written).
    dense : ndarray (n_dense + 1, columns) float64
        Written: the rows up to ``n_dense``, in the run's columns.
    big, big_values : ndarray (len(big_values), columns) float64, ndarray int64
        Written: the rows ``big_values`` (ascending), in the run's columns, from ``big_values[k]`` on.
    k : int
        The first entry of ``big_values`` not yet reached; returns the first one past ``n_to - 1``.
    """
    w = prev.shape[0]
    n_dense = dense.shape[0] - 1
    p = prev.copy()
    cur = np.empty(w)
    for n in range(n_from, n_to):
        log_nm1 = math.log(n - 1) if n > 1 else -np.inf
        top = min(n - t_lo, w - 1)  # the last entry of the run with t <= n (the rest are 0: -inf)
        i0 = 0
        if t_lo == 0:
            cur[0] = -np.inf
            i0 = 1
        elif top >= 0:  # the run's first column reads the column left of it
            cur[0] = _log_add(left[n - 1 - left_base], log_nm1 + p[0] if t_lo <= n - 1 else -np.inf)
            i0 = 1
        last = min(top, n - 1 - t_lo)  # entries below the diagonal t = n read both neighbours
        for i in range(i0, last + 1):
            cur[i] = _log_add(p[i - 1], log_nm1 + p[i])
        if top == n - t_lo and top >= i0:  # the diagonal: S(n - 1, n) = 0
            cur[top] = _log_add(p[top - 1], -np.inf)
        for i in range(max(top + 1, i0), w):
            cur[i] = -np.inf
        if n <= n_dense:  # element loops: slice assignment compiles broadcasting checks
            for i in range(w):
                dense[n, t_lo + i] = cur[i]
        while k < big_values.shape[0] and big_values[k] == n:
            for i in range(w):
                big[k, t_lo + i] = cur[i]
            k += 1
        if right.shape[0] > 0:
            right[n - right_base] = cur[w - 1]
        p, cur = cur, p
    for i in range(w):
        prev[i] = p[i]
    return k


#: a run of columns is streamed on two threads (in row chunks, one thread a chunk behind the other)
#: when it has at least this many entries
_PIPELINE_ENTRIES = 1 << 22
_NO_VALUES = np.zeros(0, np.float64)


def _stream_columns(t_lo, t_hi, n_last, first_row, left, dense, big, big_values, threads, keep_edge=True):
    """Columns ``t_lo .. t_hi`` of rows ``first_row .. n_last`` (row ``first_row - 1`` of those columns
    read from ``dense``), into ``dense`` and ``big`` (:func:`_stream`); ``left`` the history of column
    ``t_lo - 1`` (rows 0 .. n_last - 1; None when ``t_lo`` is 0). Returns the history of column
    ``t_hi`` (rows 0 .. n_last; those below ``first_row`` from ``dense``), or an empty array unless
    ``keep_edge``.

    With ``threads`` > 1 and enough entries, the columns are split into two runs: this thread streams
    the left run chunk by chunk and hands each chunk's last column to a second thread, which streams
    the right run one chunk behind.
    """
    left = _NO_VALUES if left is None else left
    edge = _NO_VALUES
    if keep_edge:
        edge = np.empty(n_last + 1, np.float64)
        edge[:first_row] = dense[:first_row, t_hi]
    k0 = int(np.searchsorted(big_values, first_row))
    width = t_hi - t_lo + 1
    if threads < 2 or width < 2 or (n_last - first_row) * width < _PIPELINE_ENTRIES:
        prev = np.array(dense[first_row - 1, t_lo:t_hi + 1])
        _stream(first_row, n_last + 1, t_lo, prev, left, 0, edge, 0, dense, big, big_values, k0)
        return edge
    mid = t_lo + width // 2  # the right run starts here
    chunk = max(2048, -(-(n_last + 1 - first_row) // 64))
    handed: queue.Queue = queue.Queue(maxsize=4)
    failed: list = []

    def right_run():
        try:  # every failure, the first copy's MemoryError too, drains the queue: the left run never blocks
            prev = np.array(dense[first_row - 1, mid:t_hi + 1])
            k = k0
            while True:
                item = handed.get()
                if item is None:
                    return
                lo, hi, hist = item
                k = _stream(lo, hi, mid, prev, hist, lo - 1, edge, 0, dense, big, big_values, k)
        except BaseException as exc:  # noqa: BLE001 - re-raised by the caller's thread
            failed.append(exc)
            while handed.get() is not None:  # drain, so that the left run never blocks
                pass

    worker = threading.Thread(target=right_run, name="hdp-stirling", daemon=True)
    worker.start()
    try:
        prev = np.array(dense[first_row - 1, t_lo:mid])
        k = k0
        carry = dense[first_row - 1, mid - 1]
        for lo in range(first_row, n_last + 1, chunk):
            hi = min(lo + chunk, n_last + 1)
            hist = np.empty(hi - lo + 1, np.float64)  # column mid - 1, rows lo - 1 .. hi - 1
            hist[0] = carry
            k = _stream(lo, hi, t_lo, prev, left, 0, hist, lo - 1, dense, big, big_values, k)
            carry = hist[-1]
            handed.put((lo, hi, hist))
    finally:
        handed.put(None)
        worker.join()
    if failed:
        raise failed[0]
    return edge


def _keeps_history(n_last: int) -> bool:
    """Whether the history of the last column (8 bytes a row up to ``n_last``) is kept for growing the
    columns later: up to ``config.STIRLING_HISTORY_BYTES``; beyond, a growth of the columns streams
    all of them again (slower, never different)."""
    return 8 * (n_last + 1) <= config.STIRLING_HISTORY_BYTES


def _streamed_rows(n_dense: int, t_max: int, big_values: np.ndarray, threads: int = 1):
    """:func:`log_stirling_rows` and the history of its last column: ``(dense, big, edge)``."""
    n_last = max(n_dense, int(big_values[-1]) if big_values.shape[0] else 0)
    dense = np.empty((n_dense + 1, t_max + 1), dtype=np.float64)
    big = np.empty((big_values.shape[0], t_max + 1), dtype=np.float64)
    dense[0] = -np.inf
    dense[0, 0] = 0.0
    edge = _stream_columns(0, t_max, n_last, 1, None, dense, big, big_values, threads, _keeps_history(n_last))
    return dense, big, edge


def log_stirling_rows(n_dense: int, t_max: int, big_values: np.ndarray):
    """A dense table for ``n <= n_dense`` and extra rows for the counts in ``big_values``.

    Internal nodes' counts (sums of their children's table counts) stay small and move during
    sampling, so they use the dense rows; leaves' counts are data counts, fixed, and can be as
    large as the data: each distinct large one gets one row of its own instead of the table
    growing to it. Both have ``t_max + 1`` columns.

    Returns
    -------
    dense : ndarray of shape (n_dense + 1, t_max + 1)
    big : ndarray of shape (len(big_values), t_max + 1)
    """
    big_values = np.ascontiguousarray(big_values, dtype=np.int64)
    return _streamed_rows(max(int(n_dense), 1), max(int(t_max), 1), big_values)[:2]


def grow_stirling_rows(previous, n_dense: int, t_max: int, big_values: np.ndarray, threads: int = 1):
    """:func:`log_stirling_rows`, reusing ``previous`` (an earlier result of this function): the old
    rows and columns are kept; new dense rows continue the recurrence in the old columns, and new
    columns are streamed from the history of the old last column (``_stream``: a column needs only
    the one left of it), so the recurrence runs up to the largest leaf count (the expensive part on
    large data) only in the columns that are new. The large leaves' rows are kept when the large
    leaves are among the old ones (growing the dense rows only ever drops some). ``threads``: new
    columns on that many threads (at most two are used).

    Returns ``(dense, big, big_values, edge)``, ``edge`` the history of the last column; ``dense`` and
    ``big`` are the same numbers as a fresh :func:`log_stirling_rows`, bit for bit.
    """
    n_dense = max(int(n_dense), 1)
    t_max = max(int(t_max), 1)
    big_values = np.ascontiguousarray(big_values, dtype=np.int64)
    n_last = max(n_dense, int(big_values[-1]) if big_values.shape[0] else 0)
    if previous is not None:
        old_dense, old_big, old_values, old_edge = previous
        old_rows, old_cols = old_dense.shape
        idx = np.searchsorted(old_values, big_values)
        kept = idx.size == 0 or (idx.max() < old_values.size and np.array_equal(old_values[idx], big_values))
        # the old last column's history must reach n_last, or the dense rows must (and give the rest)
        covered = old_edge.shape[0] > n_last or n_last == n_dense
        if kept and old_cols <= t_max + 1 and old_rows <= n_dense + 1 and covered:
            dense = np.empty((n_dense + 1, t_max + 1), dtype=np.float64)
            dense[:old_rows, :old_cols] = old_dense
            dense[0, old_cols:] = -np.inf
            big = np.empty((big_values.shape[0], t_max + 1), dtype=np.float64)
            big[:, :old_cols] = old_big[idx]
            if old_rows <= n_dense:  # the new dense rows, in the old columns (no large row among them)
                prev = np.array(old_dense[-1])
                _stream(old_rows, n_dense + 1, 0, prev, _NO_VALUES, 0, _NO_VALUES, 0, dense, big,
                        np.zeros(0, np.int64), 0)
            edge = old_edge[:n_last + 1]
            if edge.shape[0] <= n_last:
                edge = np.concatenate([edge, dense[edge.shape[0]:, old_cols - 1]])
            if old_cols < t_max + 1:
                edge = _stream_columns(old_cols, t_max, n_last, 1, edge, dense, big, big_values, threads,
                                       _keeps_history(n_last))
            return dense, big, big_values, edge
    dense, big, edge = _streamed_rows(n_dense, t_max, big_values, threads)
    return dense, big, big_values, edge


def log_stirling_table(n_max: int, t_max: int) -> np.ndarray:
    """Table of ``log S(n, t)`` for ``0 <= n <= n_max`` and ``0 <= t <= min(t_max, n_max)``.

    Entries that are zero Stirling numbers are ``-inf``.

    Returns
    -------
    ndarray of shape (n_max + 1, min(t_max, n_max) + 1), float64, C-contiguous
    """
    n_max = max(int(n_max), 1)
    return log_stirling_rows(n_max, max(min(int(t_max), n_max), 1), np.zeros(0, np.int64))[0]


@njit(**NJIT_OPTIONS)
def _fill_ratios(log_dense, log_big, rt, rn_t):
    """The ratio tables of :func:`stirling_ratios` from the log tables.

    Parameters
    ----------
    log_dense : ndarray (dense rows, columns) float64
        log S(n, t) for n = 0 .. dense rows - 1.
    log_big : ndarray (large-leaf rows, columns) float64
        log S of the large leaves' counts, one row each.
    rt : ndarray (dense rows + large-leaf rows, columns) float64
        Written: S(n, t + 1) / S(n, t), the dense rows then the large-leaf rows.
    rn_t : ndarray (columns, dense rows) float64
        Written: ``rn_t[t, n] = S(n + 1, t) / S(n, t)``.
    """
    n_rows, n_cols = log_dense.shape
    for n in range(n_rows):
        for t in range(n_cols):
            a = log_dense[n, t]
            if t + 1 < n_cols and t >= 1 and t < n:
                rt[n, t] = math.exp(log_dense[n, t + 1] - a)
            else:
                rt[n, t] = 0.0
            if n + 1 < n_rows and t >= 1 and t <= n:
                rn_t[t, n] = math.exp(log_dense[n + 1, t] - a)
            else:
                rn_t[t, n] = 0.0
    for r in range(log_big.shape[0]):
        for t in range(n_cols):
            if t >= 1 and t + 1 < n_cols and log_big[r, t + 1] > -np.inf:
                rt[n_rows + r, t] = math.exp(log_big[r, t + 1] - log_big[r, t])
            else:
                rt[n_rows + r, t] = 0.0


def stirling_ratios(log_dense: np.ndarray, log_big: np.ndarray):
    """Ratios of neighbouring Stirling numbers, from the tables of :func:`log_stirling_rows`.

    Returns
    -------
    rt : ndarray of shape (dense rows + large-leaf rows, columns)
        ``rt[n, t] = S(n, t + 1) / S(n, t)`` for ``1 <= t < n`` (0 elsewhere), then the same ratio
        for the large-leaf rows of ``log_big``, in their order.
    big_base : int
        the row of ``rt`` where the large-leaf rows start (the number of dense rows).
    rn_t : ndarray of shape (columns, dense rows)
        ``rn_t[t, n] = S(n + 1, t) / S(n, t)`` for ``1 <= t <= n`` (0 elsewhere), stored by ``t``
        so that the ratios a parent's candidates need (one ``t``, consecutive ``n``) are adjacent.
    """
    log_dense = np.ascontiguousarray(log_dense, dtype=np.float64)
    log_big = np.ascontiguousarray(log_big, dtype=np.float64).reshape(-1, log_dense.shape[1])
    rt = np.empty((log_dense.shape[0] + log_big.shape[0], log_dense.shape[1]), dtype=np.float64)
    rn_t = np.empty((log_dense.shape[1], log_dense.shape[0]), dtype=np.float64)
    _fill_ratios(log_dense, log_big, rt, rn_t)
    return rt, log_dense.shape[0], rn_t
