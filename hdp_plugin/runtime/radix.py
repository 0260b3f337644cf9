"""An in-place sort of non-negative int64 keys, for the kernels that need one.

A least-significant-digit radix sort on bytes, only as many passes as the largest key has bytes.
It replaces ``ndarray.sort()`` inside numba kernels: numba's quicksort is compiled once per dtype
and is a large part of a first use's compilation; this compiles in a fraction of its time. The result
is the sorted array, the same whatever the algorithm for integers.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .jit import NJIT_OPTIONS


@njit(**NJIT_OPTIONS)
def sort_nonnegative(keys, n):
    """Sort ``keys[:n]`` ascending, in place.

    Parameters
    ----------
    keys : ndarray (>= n,) int64
        The keys, each >= 0 (a negative key would sort by its low bytes: the callers' keys are
        counts, codes and row indices).
    n : int
        How many of them to sort.
    """
    if n < 2:
        return
    largest = keys[0]
    for i in range(1, n):
        if keys[i] > largest:
            largest = keys[i]
    if n <= 16:  # insertion sort: a few keys
        for i in range(1, n):
            v = keys[i]
            j = i - 1
            while j >= 0 and keys[j] > v:
                keys[j + 1] = keys[j]
                j -= 1
            keys[j + 1] = v
        return
    other = np.empty(n, dtype=np.int64)
    count = np.empty(257, dtype=np.int64)
    shift = 0
    in_keys = True  # where the data is now: keys[:n] or other
    while shift < 64 and (largest >> shift) > 0:
        for b in range(257):
            count[b] = 0
        for i in range(n):
            v = keys[i] if in_keys else other[i]
            count[((v >> shift) & 255) + 1] += 1
        for b in range(1, 257):
            count[b] += count[b - 1]
        for i in range(n):
            v = keys[i] if in_keys else other[i]
            b = (v >> shift) & 255
            if in_keys:
                other[count[b]] = v
            else:
                keys[count[b]] = v
            count[b] += 1
        in_keys = not in_keys
        shift += 8
    if not in_keys:
        for i in range(n):
            keys[i] = other[i]
