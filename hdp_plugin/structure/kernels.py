"""Numba kernels of structure learning: pure functions over flat arrays.

Nothing here logs or raises: the counting kernel reports an out-of-range code through its
return status, and the drivers in :mod:`hdp_plugin.structure.counts` and
:mod:`hdp_plugin.structure.selective` check shapes, allocate the tables and raise. The only
allocation inside a kernel is the tries' growth by doubling. Every kernel has a slow twin in the
tests.

Layouts shared with the drivers
-------------------------------
Pairwise statistics (one counting pass, :func:`count_block`):

* ``n_y[y]``;
* ``n_xy[xy_off[i] + x * C + y]`` for attribute ``i``;
* ``n_xxy[pair_off[i, j] + (xi * card[j] + xj) * C + y]`` for ``i < j``.

Context tries for SkDB (:func:`trie_insert_block`), one trie per attribute ``a`` whose depth-``d``
nodes are the observed values of its first ``d`` parents (in branching order). Every node is one
*block* of the flat int64 array ``data``, at offset ``b`` (the root's is ``root[a]``)::

    data[b + y * |X_a| + x]           n(x_a = x, y, the node's context)      C * |X_a| cells
    data[b + C * |X_a| + y]           n(y, the node's context)               C cells
    data[b + C * |X_a| + C + v]       block of the child where the next      |next parent| cells,
                                      parent takes value v (-1: none)        not at the deepest level

A child slot holds the child's block offset itself, so descending one level is one load.
``sizes`` holds ``[n_nodes, cells used]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT_OPTIONS

#: the leave-one-out kernel rescales a row's per-class products when their sum drops below this
RESCALE_BELOW = 1e-200

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
def mutual_information_kernel(n_y, n_xy, xy_off, card, n_classes, n_rows):
    """MI(X_i; Y) in nats for every attribute, from raw frequencies (clamped at 0)."""
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
    """Symmetric matrix of CMI(X_i; X_j | Y) in nats (zero diagonal, clamped at 0)."""
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


# --------------------------------------------------------------------------------------------
# Pass 2 (SkDB): context tries of n(x_a, y, first d parents), d = 0..K
# --------------------------------------------------------------------------------------------
@njit(**NJIT_OPTIONS)
def _grow(arr, needed, fill):
    """``arr`` if it holds ``needed`` items, else a copy at least twice as long padded with ``fill``."""
    old = arr.shape[0]
    if needed <= old:
        return arr
    cap = max(needed, 2 * old, 16)
    out = np.empty(cap, dtype=arr.dtype)
    out[:old] = arr
    out[old:] = fill
    return out


@njit(**NJIT_OPTIONS)
def trie_insert_block(X, y, card, n_classes, par_ptr, par_idx, root, data, sizes):
    """Add one block of rows to every attribute's context trie.

    Nodes are created on first visit, so only contexts some row reaches exist. ``data`` grows
    by doubling; the (possibly new) array is returned and ``sizes`` is updated in place. Codes
    must already be validated (by the counting pass).
    """
    n_rows, n_attr = X.shape
    C = n_classes
    n_nodes = sizes[0]
    used = sizes[1]
    for r in range(n_rows):
        c = np.int64(y[r])
        for a in range(n_attr):
            ca = card[a]
            cell = c * ca + np.int64(X[r, a])
            tot = C * ca + c
            slots = C * ca + C
            block = root[a]
            data[block + cell] += 1
            data[block + tot] += 1
            first = par_ptr[a]
            depth = par_ptr[a + 1] - first
            for d in range(depth):
                slot = block + slots + np.int64(X[r, par_idx[first + d]])
                nxt = data[slot]
                if nxt < 0:
                    # a new node: zeroed counts and totals, then empty child slots
                    nxt = used
                    n_slots = card[par_idx[first + d + 1]] if d + 1 < depth else 0
                    used += slots + n_slots
                    data = _grow(data, used, 0)
                    for i in range(slots):
                        data[nxt + i] = 0
                    for i in range(n_slots):
                        data[nxt + slots + i] = -1
                    data[slot] = nxt
                    n_nodes += 1
                block = nxt
                data[block + cell] += 1
                data[block + tot] += 1
    sizes[0] = n_nodes
    sizes[1] = used
    return data


# --------------------------------------------------------------------------------------------
# Pass 3 (SkDB): leave-one-out squared errors of every (n*, k*) in one pass over the rows
# --------------------------------------------------------------------------------------------
@njit(**NJIT_OPTIONS)
def loo_squared_errors_block(
    X, y, card, n_classes, order, par_ptr, par_idx, root, data, n_y, n_rows_total, m, max_k, sq_err,
):
    """Add one block's leave-one-out squared errors ``(1 - p(y_i | x_i))^2`` to ``sq_err``.

    ``sq_err[u, k]`` accumulates the error of the model made of the class and the first ``u``
    attributes of ``order`` with at most ``k`` parents each; row ``u = 0`` is the class prior
    alone. Estimates are m-estimates from the counts with the row itself removed, and each k's
    posterior is formed as the published SkDB forms it (docs/method.md, "SkDB"): walking
    attribute ``a``'s context from the class-only node down its parents,

    * the estimate at depth ``d`` is multiplied into the posterior of ``k = d``;
    * before descending, if the child context for the row's next parent value holds fewer than
      2 rows with the row's value of ``a`` (over all classes, the row included), the walk stops
      and the depth-``d`` estimate is multiplied into ``k = d + 1`` too (back-off);
    * where the walk stops (back-off or the deepest context), that k's whole posterior is copied
      into every larger k.

    The per-class products are kept in linear space and normalised only to read p(y_i | x_i) off
    them, which avoids a log and an exp per (row, attribute, k, class); they are rescaled when
    their sum falls below ``RESCALE_BELOW``, so any number of attributes is safe from underflow.
    """
    n_rows = X.shape[0]
    n_attr = order.shape[0]
    C = n_classes
    post = np.empty((max_k + 1, C))
    prior = np.empty(C)
    n_loo = n_rows_total - 1.0  # rows left after removing this one
    for r in range(n_rows):
        yi = np.int64(y[r])
        # Step 1: class prior, (n_y + 1/C) / (N + 1) without this row
        s = 0.0
        for c in range(C):
            v = n_y[c] + 1.0 / C
            if c == yi:
                v -= 1.0
            prior[c] = v / (n_loo + 1.0)
            s += prior[c]
        for c in range(C):
            prior[c] /= s
        e = 1.0 - prior[yi]
        for k in range(max_k + 1):
            for c in range(C):
                post[k, c] = prior[c]
            sq_err[0, k] += e * e
        # Step 2: add attributes in MI order
        for u in range(n_attr):
            a = order[u]
            ca = card[a]
            xa = np.int64(X[r, a])
            tot = C * ca
            slots = tot + C
            first = par_ptr[a]
            depth = par_ptr[a + 1] - first
            # walk down the row's path (it exists: the row itself was counted)
            block = root[a]
            d = 0
            stop = 0
            while True:
                _multiply_estimates(post, d, data, block, ca, xa, tot, yi, C, m)
                if d == depth:
                    stop = d
                    break
                child = data[block + slots + np.int64(X[r, par_idx[first + d]])]
                cnt = 0
                for c in range(C):
                    cnt += data[child + c * ca + xa]
                if cnt < 2:  # back off: the depth-d estimate serves k = d + 1 as well
                    _multiply_estimates(post, d + 1, data, block, ca, xa, tot, yi, C, m)
                    stop = d + 1
                    break
                block = child
                d += 1
            for k in range(stop + 1, max_k + 1):
                for c in range(C):
                    post[k, c] = post[stop, c]
            # Step 3: every k's squared error after the first u + 1 attributes
            for k in range(max_k + 1):
                s = 0.0
                for c in range(C):
                    s += post[k, c]
                e = 1.0 - post[k, yi] / s  # exactly 0 when C = 1
                sq_err[u + 1, k] += e * e
                if s < RESCALE_BELOW:  # keep the unnormalised products away from underflow
                    for c in range(C):
                        post[k, c] /= s


@njit(**NJIT_OPTIONS)
def _multiply_estimates(post, k, data, block, ca, xa, tot, yi, C, m):
    """post[k, c] *= the m-estimate of p(x_a | c, the block's context), the row left out."""
    for c in range(C):
        own = 1.0 if c == yi else 0.0
        den = data[block + tot + c] - own + m
        if den > 0.0:
            post[k, c] *= (data[block + c * ca + xa] - own + m / ca) / den
        else:  # an empty context with m = 0: uniform
            post[k, c] /= ca
