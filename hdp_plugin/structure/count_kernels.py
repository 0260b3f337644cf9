"""Numba kernels of structure learning's counting pass and its scores: pairwise counts, mutual
information, conditional mutual information and kDB's parents. Pure functions over flat arrays.

Nothing here logs or raises: the counting kernel reports an out-of-range code through its return status,
and the driver in :mod:`hdp_plugin.structure.counts` checks shapes, allocates the tables and raises.
Every kernel has a slow twin in the tests.

Pairwise statistics (one counting pass, :func:`count_block`):

* ``n_y[y]``;
* ``n_xy[xy_off[i] + x * C + y]`` for attribute ``i``;
* ``n_xxy[pair_off[i, j] + (xi * card[j] + xj) * C + y]`` for ``i < j``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..runtime.jit import NJIT_OPTIONS

# Status codes returned by the counting kernels (the driver turns them into errors).
OK = 0
BAD_CLASS = 1
BAD_CODE = 2


# --------------------------------------------------------------------------------------------
# Pass 1: n(y), n(xi, y), n(xi, xj, y)
# --------------------------------------------------------------------------------------------
@njit(**NJIT_OPTIONS)
def count_block(X, y, card, n_classes, xy_off, pair_off, n_y, n_xy, n_xxy, bad):
    """Add the counts of one block of rows to ``n_y``, ``n_xy`` and ``n_xxy`` in place.

    Returns a status (``OK``, ``BAD_CLASS``, ``BAD_CODE``); on error ``bad`` holds
    ``[row in block, attribute, value]`` and the counts are partial.

    Parameters
    ----------
    X : ndarray (n_rows, n_attributes) of integer codes
        The block's rows; a code outside ``0 .. card[j] - 1`` stops the count with ``BAD_CODE``.
    y : ndarray (n_rows,) of integer class codes
        The block's classes (int32 from the driver); one outside ``0 .. n_classes - 1`` stops the
        count with ``BAD_CLASS``.
    card : ndarray (n_attributes,) int64
        The attributes' cardinalities.
    n_classes : int
        The number of classes, C.
    xy_off : ndarray (n_attributes + 1,) int64
        Where attribute ``i``'s cells start in ``n_xy`` (the module docstring's layout).
    pair_off : ndarray (n_attributes, n_attributes) int64
        Where the pair ``(i, j)``, ``i < j``, starts in ``n_xxy`` (the module docstring's layout);
        the entries on and below the diagonal are not read.
    n_y : ndarray (n_classes,) int64
        The class counts, added to.
    n_xy : ndarray (xy_off[-1],) int64
        The counts n(x_i, y), added to.
    n_xxy : ndarray int64
        The counts n(x_i, x_j, y) of every pair ``i < j``, added to.
    bad : ndarray (3,) int64
        Out, on error only: ``[row in block, attribute (-1 for the class), value]``.
    """
    n_rows, n_attr = X.shape
    codes = np.empty(n_attr, dtype=np.int64)
    # stride of attribute j's value inside any pair block, in cells
    stride = np.empty(n_attr, dtype=np.int64)
    for j in range(n_attr):
        stride[j] = card[j] * n_classes
    for r in range(n_rows):
        c = np.int64(y[r])
        if c < 0 or c >= n_classes:
            bad[0] = r
            bad[1] = -1
            bad[2] = c
            return BAD_CLASS
        for j in range(n_attr):
            v = np.int64(X[r, j])
            if v < 0 or v >= card[j]:
                bad[0] = r
                bad[1] = j
                bad[2] = v
                return BAD_CODE
            codes[j] = v * n_classes + c  # (x_j, y) cell inside a row of width C
        n_y[c] += 1
        for i in range(n_attr):
            xi = codes[i] // n_classes
            n_xy[xy_off[i] + codes[i]] += 1
            for j in range(i + 1, n_attr):
                n_xxy[pair_off[i, j] + xi * stride[j] + codes[j]] += 1
    return OK


@njit(**NJIT_OPTIONS)
def count_block_marginals(X, y, card, n_classes, xy_off, n_y, n_xy, bad):
    """:func:`count_block` without the pairs: ``n_y`` and ``n_xy`` only (what naive Bayes needs).

    Returns a status as :func:`count_block` does.

    Parameters
    ----------
    X, y, card, n_classes, xy_off, n_y, n_xy, bad :
        As in :func:`count_block`: the block's rows and classes, read; ``n_y`` and ``n_xy`` added
        to; ``bad`` written on error only.
    """
    n_rows, n_attr = X.shape
    for r in range(n_rows):
        c = np.int64(y[r])
        if c < 0 or c >= n_classes:
            bad[0] = r
            bad[1] = -1
            bad[2] = c
            return BAD_CLASS
        for j in range(n_attr):
            v = np.int64(X[r, j])
            if v < 0 or v >= card[j]:
                bad[0] = r
                bad[1] = j
                bad[2] = v
                return BAD_CODE
        n_y[c] += 1
        for j in range(n_attr):
            n_xy[xy_off[j] + np.int64(X[r, j]) * n_classes + c] += 1
    return OK


@njit(**NJIT_OPTIONS)
def mutual_information_kernel(n_y, n_xy, xy_off, card, n_classes, n_rows):
    """MI(X_i; Y) in nats for every attribute, from raw frequencies (clamped at 0).

    Returns an ndarray (n_attributes,) float64 (all 0 when ``n_rows`` is 0).

    Parameters
    ----------
    n_y : ndarray (n_classes,) int64
        The class counts.
    n_xy : ndarray (xy_off[-1],) int64
        The counts n(x_i, y) (the module docstring's layout).
    xy_off : ndarray (n_attributes + 1,) int64
        Where attribute ``i``'s cells start in ``n_xy``.
    card : ndarray (n_attributes,) int64
        The attributes' cardinalities (its length is the number of attributes).
    n_classes : int
        The number of classes, C.
    n_rows : int
        The number of rows counted (the sum of ``n_y``).
    """
    n_attr = card.shape[0]
    out = np.zeros(n_attr)
    if n_rows == 0:
        return out
    total = float(n_rows)
    for i in range(n_attr):
        base = xy_off[i]
        s = 0.0
        for x in range(card[i]):
            nx = 0
            for c in range(n_classes):
                nx += n_xy[base + x * n_classes + c]
            if nx == 0:
                continue
            for c in range(n_classes):
                n = n_xy[base + x * n_classes + c]
                if n > 0:
                    s += n * np.log((n * total) / (float(nx) * n_y[c]))
        out[i] = max(s / total, 0.0)
    return out


@njit(**NJIT_OPTIONS)
def conditional_mutual_information_kernel(
    n_y, n_xy, xy_off, n_xxy, pair_off, card, n_classes, n_rows
):
    """Symmetric matrix of CMI(X_i; X_j | Y) in nats (zero diagonal, clamped at 0).

    Returns an ndarray (n_attributes, n_attributes) float64 (all 0 when ``n_rows`` is 0).

    Parameters
    ----------
    n_y, n_xy, xy_off, card, n_classes, n_rows :
        As in :func:`mutual_information_kernel`.
    n_xxy : ndarray int64
        The counts n(x_i, x_j, y) of every pair ``i < j`` (the module docstring's layout).
    pair_off : ndarray (n_attributes, n_attributes) int64
        Where the pair ``(i, j)``, ``i < j``, starts in ``n_xxy``; the entries on and below the
        diagonal are not read.
    """
    n_attr = card.shape[0]
    out = np.zeros((n_attr, n_attr))
    if n_rows == 0:
        return out
    total = float(n_rows)
    for i in range(n_attr):
        for j in range(i + 1, n_attr):
            base = pair_off[i, j]
            s = 0.0
            for xi in range(card[i]):
                for xj in range(card[j]):
                    cell = base + (xi * card[j] + xj) * n_classes
                    for c in range(n_classes):
                        n = n_xxy[cell + c]
                        if n > 0:
                            a = n_xy[xy_off[i] + xi * n_classes + c]
                            b = n_xy[xy_off[j] + xj * n_classes + c]
                            s += n * np.log((float(n) * n_y[c]) / (float(a) * b))
            v = max(s / total, 0.0)
            out[i, j] = v
            out[j, i] = v
    return out


@njit(**NJIT_OPTIONS)
def kdb_parents(order, cmi, k):
    """kDB's parents of every attribute of ``order``: position ``u`` takes the ``min(u, k)`` earlier
    attributes with the highest CMI with it, in decreasing CMI, ties by attribute index (what a stable
    sort of the index-sorted candidates by decreasing CMI gives, cut to ``k``).

    Parameters
    ----------
    order : ndarray (n_order,) int64
        The attributes in the order they join the model.
    cmi : ndarray (n_attributes, n_attributes) float64
        CMI(X_i; X_j | Y).
    k : int
        The most parents.

    Returns
    -------
    ndarray (n_order, k) int64
        Row ``u``: the parents of ``order[u]`` in branching order, -1 after the last.
    """
    n = order.shape[0]
    out = np.full((n, max(k, 1)), -1, dtype=np.int64)
    for u in range(1, n):
        child = order[u]
        size = 0
        for i in range(u):  # insertion into the best min(u, k) so far
            j = order[i]
            w = cmi[child, j]
            pos = size
            while pos > 0:
                q = out[u, pos - 1]
                wq = cmi[child, q]
                if w > wq or (w == wq and j < q):
                    pos -= 1
                else:
                    break
            if pos >= k:
                continue
            last = min(size, k - 1)
            for s in range(last, pos, -1):
                out[u, s] = out[u, s - 1]
            out[u, pos] = j
            if size < k:
                size += 1
    return out
