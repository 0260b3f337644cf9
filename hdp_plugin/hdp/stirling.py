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

import numpy as np
from numba import njit

from ..config import NJIT_OPTIONS


@njit(**NJIT_OPTIONS)
def _next_row(prev, cur, n):
    """Row ``n`` of log S into ``cur`` from row ``n - 1`` in ``prev`` (the recurrence above).

    Parameters
    ----------
    prev, cur : ndarray (columns,) float64
        Row ``n - 1`` (read) and row ``n`` (written), ``-inf`` for a zero Stirling number.
    n : int
        The row, >= 1.
    """
    n_cols = cur.shape[0]
    cur[0] = -np.inf
    log_nm1 = math.log(n - 1) if n > 1 else -np.inf
    top = min(n, n_cols - 1)
    for t in range(1, top + 1):
        a = prev[t - 1]
        b = log_nm1 + prev[t] if t <= n - 1 else -np.inf
        if a == -np.inf:
            cur[t] = b
        elif b == -np.inf:
            cur[t] = a
        elif a > b:
            cur[t] = a + math.log1p(math.exp(b - a))
        else:
            cur[t] = b + math.log1p(math.exp(a - b))
    for t in range(top + 1, n_cols):
        cur[t] = -np.inf


@njit(**NJIT_OPTIONS)
def _fill_dense_and_big(dense, big, big_values):
    """Rows 0..len(dense)-1 into ``dense`` and rows ``big_values`` (ascending) into ``big``.

    Streams the recurrence with two row buffers, so rows beyond the dense part cost time but no
    memory unless they are wanted.

    Parameters
    ----------
    dense : ndarray (n_dense + 1, columns) float64
        Written: rows 0 .. n_dense of log S.
    big : ndarray (len(big_values), columns) float64
        Written: the rows ``big_values``.
    big_values : ndarray int64
        Ascending row numbers (repeats allowed).
    """
    n_cols = dense.shape[1]
    n_dense = dense.shape[0] - 1
    n_last = n_dense
    if big_values.shape[0] > 0 and big_values[-1] > n_last:
        n_last = big_values[-1]
    prev = np.full(n_cols, -np.inf)
    cur = np.full(n_cols, -np.inf)
    prev[0] = 0.0
    for t in range(n_cols):  # element loops: slice assignment compiles broadcasting checks
        dense[0, t] = prev[t]
    k = 0
    for n in range(1, n_last + 1):
        _next_row(prev, cur, n)
        if n <= n_dense:
            for t in range(n_cols):
                dense[n, t] = cur[t]
        while k < big_values.shape[0] and big_values[k] == n:
            for t in range(n_cols):
                big[k, t] = cur[t]
            k += 1
        prev, cur = cur, prev


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
    n_dense = max(int(n_dense), 1)
    big_values = np.ascontiguousarray(big_values, dtype=np.int64)
    t_max = max(int(t_max), 1)
    dense = np.empty((n_dense + 1, t_max + 1), dtype=np.float64)
    big = np.empty((big_values.shape[0], t_max + 1), dtype=np.float64)
    _fill_dense_and_big(dense, big, big_values)
    return dense, big


@njit(**NJIT_OPTIONS)
def _continue_dense(dense, n_from):
    """Rows ``n_from + 1 ..`` of ``dense`` by the recurrence, from row ``n_from`` (already there).

    Parameters
    ----------
    dense : ndarray (rows, columns) float64
        Rows 0 .. n_from are read, the rest written.
    n_from : int
        The last row already filled.
    """
    for n in range(n_from + 1, dense.shape[0]):
        _next_row(dense[n - 1], dense[n], n)


def grow_stirling_rows(previous, n_dense: int, t_max: int, big_values: np.ndarray):
    """:func:`log_stirling_rows`, reusing ``previous`` (an earlier result ``(dense, big, big_values)``)
    when only the dense part grows: its rows are kept and continued by the recurrence, and the large
    leaves still beyond the dense rows keep their rows. Streaming the recurrence up to the largest
    leaf count (the expensive part on large data) then happens only when the columns change.

    Returns ``(dense, big, big_values)``, the same numbers as a fresh :func:`log_stirling_rows`.
    """
    n_dense = max(int(n_dense), 1)
    t_max = max(int(t_max), 1)
    big_values = np.ascontiguousarray(big_values, dtype=np.int64)
    if previous is not None:
        old_dense, old_big, old_values = previous
        if old_dense.shape[1] == t_max + 1 and old_dense.shape[0] <= n_dense + 1:
            idx = np.searchsorted(old_values, big_values)
            if idx.size == 0 or (idx.max() < old_values.size and np.array_equal(old_values[idx], big_values)):
                dense = np.empty((n_dense + 1, t_max + 1), dtype=np.float64)
                dense[: old_dense.shape[0]] = old_dense
                _continue_dense(dense, old_dense.shape[0] - 1)
                return dense, old_big[idx], big_values
    dense, big = log_stirling_rows(n_dense, t_max, big_values)
    return dense, big, big_values


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
