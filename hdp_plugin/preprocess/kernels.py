"""Numba kernels of the discretisation stage: pure functions over sorted arrays.

Every kernel takes one attribute's **non-missing values sorted ascending** and returns cut points;
the drivers in :mod:`hdp_plugin.preprocess.cutpoints` validate, drop missing values, sort and
allocate. The floating-point operations follow Weka 3.8.6 in the same order (see the comments), so
the cut points are the same doubles Weka computes. Counts are whole numbers (every row has weight
one), so Weka's ``lnFunc(x) = x ln x`` (0 for ``x <= 0``) is looked up in a table of ``k ln k``
built with the same operations.

References
----------
.. [1] U. M. Fayyad and K. B. Irani, "Multi-interval discretization of continuous-valued
   attributes for classification learning", Proc. 13th International Joint Conference on
   Artificial Intelligence (IJCAI), 1993, pp. 1022-1027.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..config import NJIT_OPTIONS

#: ln 2 as Weka computes it (``Math.log(2)``); used to turn nats into bits
LN2 = math.log(2.0)


@njit(**NJIT_OPTIONS)
def xlogx_table(n_max):
    """Table ``t[k] = k ln k`` for ``k = 0 .. n_max`` (``t[0] = 0``), Weka's ``lnFunc`` on counts.

    Parameters
    ----------
    n_max : int
        Largest count that will be looked up.

    Returns
    -------
    ndarray of shape (n_max + 1,), float64
    """
    table = np.empty(n_max + 1, dtype=np.float64)
    table[0] = 0.0
    for k in range(1, n_max + 1):
        x = float(k)
        table[k] = x * math.log(x)
    return table


@njit(**NJIT_OPTIONS)
def _entropy(counts, xlogx):
    """Weka's ``ContingencyTables.entropy``: entropy in bits of one row of class counts."""
    ret = 0.0
    total = 0
    for c in range(counts.shape[0]):
        ret -= xlogx[counts[c]]
        total += counts[c]
    if total == 0:
        return 0.0
    return (ret + xlogx[total]) / (float(total) * LN2)


@njit(**NJIT_OPTIONS)
def _entropy_conditioned_on_rows(left, right, xlogx):
    """Weka's ``ContingencyTables.entropyConditionedOnRows`` for the two rows ``left``, ``right``."""
    ret = 0.0
    total_left = 0
    for c in range(left.shape[0]):
        ret = ret + xlogx[left[c]]
        total_left += left[c]
    ret = ret - xlogx[total_left]
    total_right = 0
    for c in range(right.shape[0]):
        ret = ret + xlogx[right[c]]
        total_right += right[c]
    ret = ret - xlogx[total_right]
    total = total_left + total_right
    if total == 0:
        return 0.0
    return -ret / (float(total) * LN2)


@njit(**NJIT_OPTIONS)
def _log2(x):
    """Weka's ``Utils.log2``: ``Math.log(x) / Math.log(2)`` (not ``log2``, to keep its rounding)."""
    return math.log(x) / LN2


@njit(**NJIT_OPTIONS)
def _n_present(counts):
    n = 0
    for c in range(counts.shape[0]):
        if counts[c] > 0:
            n += 1
    return n


@njit(**NJIT_OPTIONS)
def fayyad_irani_accepts(prior, left, right, n_instances, n_cut_points, xlogx):
    """The MDL stopping criterion of Fayyad & Irani: accept the split ``left | right``?

    Weka's ``FayyadAndIranisMDL``: with ``k``, ``k1``, ``k2`` the numbers of classes present in the
    whole set and in the two parts, and ``E``, ``E1``, ``E2`` their entropies, accept when

        gain > (log2(n_cut_points) + log2(3^k - 2) - (k E - k2 E2 - k1 E1)) / n_instances.

    Parameters
    ----------
    prior, left, right : ndarray of shape (n_classes,), int64
        Class counts of the set and of its two parts (``prior = left + right``).
    n_instances : int
        Number of rows in the set.
    n_cut_points : int
        Number of candidate cut points charged by the criterion; Weka's default
        (``useBetterEncoding = false``) charges ``n_instances - 1``.
    xlogx : ndarray, float64
        Table from :func:`xlogx_table` covering ``n_instances``.

    Returns
    -------
    bool
    """
    prior_entropy = _entropy(prior, xlogx)
    entropy = _entropy_conditioned_on_rows(left, right, xlogx)
    gain = prior_entropy - entropy
    k = _n_present(prior)
    k1 = _n_present(left)
    k2 = _n_present(right)
    entropy_left = _entropy(left, xlogx)
    entropy_right = _entropy(right, xlogx)
    # same association as Weka: ((k*E - k2*E2) - k1*E1)
    delta = _log2(math.pow(3.0, float(k)) - 2.0) - (
        float(k) * prior_entropy - float(k2) * entropy_right - float(k1) * entropy_left
    )
    return gain > (_log2(float(n_cut_points)) + delta) / float(n_instances)


@njit(**NJIT_OPTIONS)
def mdl_cut_points_sorted(values, classes, n_classes, xlogx):
    """Fayyad & Irani's recursive MDL discretisation of one attribute, as Weka 3.8 does it.

    Parameters
    ----------
    values : ndarray of shape (n,), float64
        The attribute's non-missing values, sorted ascending.
    classes : ndarray of shape (n,), integer
        The class code (``0 .. n_classes - 1``) of each value, in the same order.
    n_classes : int
        Number of classes.
    xlogx : ndarray of shape (>= n + 1,), float64
        Table from :func:`xlogx_table`.

    Returns
    -------
    ndarray of shape (n_cuts,), float64
        The accepted cut points in the order they were found (the caller sorts them: a sort
        inside the kernel would compile numba's quicksort, seconds on first use); each is the
        midpoint ``(a + b) / 2`` of two consecutive distinct values.

    Notes
    -----
    Weka's ``cutPointsForSubset`` recurses on the two halves of each accepted split; here an
    explicit stack of row ranges ``[first, last)`` does the same work; the cut points (which come
    from disjoint ranges), sorted, are Weka's.

    Each range is scanned once, so the cost is O(n * depth of the recursion) (times the number of
    classes): about 0.1 s per million rows for real-looking data, but when the accepted splits are
    lopsided (say, a class that alternates every 50 rows) the depth approaches the number of cut
    points, as in Weka.
    """
    n = values.shape[0]
    out = np.empty(max(n - 1, 0), dtype=np.float64)
    n_out = 0
    stack_first = np.empty(n + 1, dtype=np.int64)
    stack_last = np.empty(n + 1, dtype=np.int64)
    top = 0
    stack_first[0] = 0
    stack_last[0] = n
    top = 1
    prior = np.zeros(n_classes, dtype=np.int64)
    left = np.zeros(n_classes, dtype=np.int64)
    right = np.zeros(n_classes, dtype=np.int64)
    while top > 0:
        top -= 1
        first = stack_first[top]
        last = stack_last[top]
        # Step 1: a set of fewer than two rows cannot be split
        if last - first < 2:
            continue
        # Step 2: class counts and entropy of the whole set
        for c in range(n_classes):  # element loops: slice assignment compiles broadcasting checks
            prior[c] = 0
        for i in range(first, last):
            prior[classes[i]] += 1
        prior_entropy = _entropy(prior, xlogx)
        if _n_present(prior) < 2:
            continue  # one class: every split has entropy exactly 0, no gain (Weka would scan in vain)
        # Step 3: scan the boundaries between distinct values for the least class entropy;
        # the first of equal minima wins (strict <), as in Weka
        for c in range(n_classes):
            left[c] = 0
            right[c] = prior[c]
        best_entropy = prior_entropy
        best_index = -1
        for i in range(first, last - 1):
            c = classes[i]
            left[c] += 1
            right[c] -= 1
            if values[i] < values[i + 1]:
                e = _entropy_conditioned_on_rows(left, right, xlogx)
                if e < best_entropy:
                    best_entropy = e
                    best_index = i
        # Step 4: no gain, no split
        if prior_entropy - best_entropy <= 0.0:
            continue
        # Step 5: the MDL criterion, charging (n - 1) candidate cut points
        for c in range(n_classes):
            left[c] = 0
        for i in range(first, best_index + 1):
            left[classes[i]] += 1
        for c in range(n_classes):
            right[c] = prior[c] - left[c]
        n_rows = last - first
        if not fayyad_irani_accepts(prior, left, right, n_rows, n_rows - 1, xlogx):
            continue
        # Step 6: keep the cut and recurse on both sides
        out[n_out] = (values[best_index] + values[best_index + 1]) / 2.0
        n_out += 1
        stack_first[top] = best_index + 1
        stack_last[top] = last
        top += 1
        stack_first[top] = first
        stack_last[top] = best_index + 1
        top += 1
    return out[:n_out].copy()


@njit(**NJIT_OPTIONS)
def equal_frequency_cut_points_sorted(values, n_bins):
    """Weka's equal-frequency binning (``unsupervised.attribute.Discretize -F``) of one attribute.

    Walks the sorted values, closing a bin at the first boundary between distinct values where
    the bin holds at least its share ``freq`` of the rows, unless the previous boundary was closer
    to ``freq``; ``freq`` is then recomputed from the rows left and the bins left.

    Parameters
    ----------
    values : ndarray of shape (n,), float64
        The attribute's non-missing values, sorted ascending.
    n_bins : int
        Number of bins wanted (at least 1); fewer come out when ties leave no room.

    Returns
    -------
    ndarray of shape (<= n_bins - 1,), float64
        Cut points (midpoints between consecutive distinct values), ascending.
    """
    n = values.shape[0]
    n_cut = n_bins - 1
    cuts = np.empty(max(n_cut, 0), dtype=np.float64)
    remaining = float(n)  # Weka's sumOfWeights
    freq = remaining / float(n_bins)
    counter = 0.0
    last = 0.0
    last_index = -1
    cp = 0
    for i in range(n - 1):
        counter += 1.0
        remaining -= 1.0
        if values[i] < values[i + 1]:
            if counter >= freq:
                if cp >= n_cut:  # unreachable for valid input; guards the write below
                    break
                if (freq - last) < (counter - freq) and last_index != -1:
                    cuts[cp] = (values[last_index] + values[last_index + 1]) / 2.0
                    counter -= last
                    last = counter
                    last_index = i
                else:
                    cuts[cp] = (values[i] + values[i + 1]) / 2.0
                    counter = 0.0
                    last = 0.0
                    last_index = -1
                cp += 1
                freq = (remaining + counter) / float((n_cut + 1) - cp)
            else:
                last_index = i
                last = counter
    if cp < n_cut and last_index != -1:
        cuts[cp] = (values[last_index] + values[last_index + 1]) / 2.0
        cp += 1
    return cuts[:cp].copy()
