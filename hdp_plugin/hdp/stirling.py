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
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..config import NJIT_OPTIONS


@njit(**NJIT_OPTIONS)
def _fill_dense_and_big(dense, big, big_values):
    """Rows 0..len(dense)-1 into ``dense`` and rows ``big_values`` (ascending) into ``big``.

    Streams the recurrence with two row buffers, so rows beyond the dense part cost time but no
    memory unless they are wanted.
    """
    n_cols = dense.shape[1]
    n_dense = dense.shape[0] - 1
    n_last = n_dense
    if big_values.shape[0] > 0 and big_values[-1] > n_last:
        n_last = big_values[-1]
    prev = np.full(n_cols, -np.inf)
    cur = np.full(n_cols, -np.inf)
    prev[0] = 0.0
    dense[0, :] = prev
    k = 0
    for n in range(1, n_last + 1):
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
        if n <= n_dense:
            dense[n, :] = cur
        while k < big_values.shape[0] and big_values[k] == n:
            big[k, :] = cur
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


def log_stirling_table(n_max: int, t_max: int) -> np.ndarray:
    """Table of ``log S(n, t)`` for ``0 <= n <= n_max`` and ``0 <= t <= min(t_max, n_max)``.

    Entries that are zero Stirling numbers are ``-inf``.

    Returns
    -------
    ndarray of shape (n_max + 1, min(t_max, n_max) + 1), float64, C-contiguous
    """
    n_max = max(int(n_max), 1)
    return log_stirling_rows(n_max, max(min(int(t_max), n_max), 1), np.zeros(0, np.int64))[0]
