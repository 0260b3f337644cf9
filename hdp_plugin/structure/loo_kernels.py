"""Numba kernels of SkDB's leave-one-out pass: the squared errors of every (number of attributes, k)
candidate in one pass over the rows, read from the context tries of :mod:`.trie_kernels`, summed in
exact fixed point. Pure functions over flat arrays; the driver is :mod:`hdp_plugin.structure.selective`.
Every kernel has a slow twin in the tests.

Leave-one-out sums (:func:`loo_squared_errors_block`) are fixed point, so that they are associative
and the same whatever the order or split of the rows (streamed, distributed or in memory):
``acc[0, u, k]`` counts whole units and ``acc[1..2, u, k]`` are two digits of 62 bits below the point
(units of ``2**-62`` and ``2**-124``), each below ``2**62``; ``acc[3, u, k]`` counts rows whose error is
not a number (an empty context with m = 0: 0/0). A squared error ``e2`` in [0, 1] goes in as
``e2 * 2**62`` split into its whole part and its fraction in units of ``2**-124``, the fraction rounded
to the nearest unit: exact for every error of at least ``2**-72`` (its last bit is ``2**-124`` or above;
``e = 1 - p`` is then at least ``2**-36``) and for 0, and off by less than ``2**-125`` for the rest (a row
predicted within ``2**-36`` of certainty), which no comparison of two candidates' sums can feel. Adding a
digit below ``2**62``, an addend of at most ``2**62`` and a carry of 1 stays below ``2**63``; ``acc[0]`` is
at most the number of rows.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..runtime.jit import NJIT_OPTIONS

#: the leave-one-out kernel rescales a row's per-class products when their sum drops below this
RESCALE_BELOW = 1e-200

#: leave-one-out squared errors are summed in FIXED_DIGITS digits of FIXED_BITS bits below the
#: point, units of 2**-124 (see the module docstring)
FIXED_BITS = 62
FIXED_DIGITS = 2
FIXED_ONE = 1 << FIXED_BITS
FIXED_SCALE = float(FIXED_ONE)


# --------------------------------------------------------------------------------------------
# Pass 3 (SkDB): leave-one-out squared errors of every (n*, k*) in one pass over the rows
# --------------------------------------------------------------------------------------------
@njit(**NJIT_OPTIONS)
def loo_squared_errors_block(
    X, y, card, n_classes, order, par_ptr, par_idx, root, data, n_y, n_rows_total, m, hierarchical, max_k, acc,
):
    """Add one block's leave-one-out squared errors ``(1 - p(y_i | x_i))^2`` to ``acc``.

    ``acc[:, u, k]`` accumulates, in fixed point (:func:`fixed_add`, the module docstring), the
    error of the model made of the class and the first ``u`` attributes of ``order`` with at most
    ``k`` parents each; ``u = 0`` is the class prior alone. The sum is exact, so it is the same
    whatever order or split of the rows it is taken over. Estimates are m-estimates from the counts
    with the row itself removed: flat, ``(n(x, c) + m / |X|) / (n(c) + m)`` in every context, as the
    published SkDB has them, or ``hierarchical``, ``(n(x, c) + m p') / (n(c) + m)`` where ``p'`` is
    the estimate of the context one level up (``1 / |X|`` above the class-only one), which scores
    deep contexts as HDP tables estimate them (docs/method.md, "SkDB"). Each k's posterior is formed
    as the published SkDB forms it: walking
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
    Where a walk stops at ``k = s``, every ``k >= s`` gets the same error: it is added once, to a
    block-local sum that :func:`_add_suffix_sums` adds to every ``k >= s`` at the end of the block; the
    errors of ``k < s`` go to another block-local sum, added by :func:`fixed_merge` (the sums are
    exact, so this is the same sum as adding each error to ``acc`` where it belongs).

    Parameters
    ----------
    X : ndarray (n_rows, n_attributes) of unsigned integer codes
        The block's rows (codes checked: each below its attribute's cardinality).
    y : ndarray (n_rows,) of integer class codes
        The block's classes.
    card : ndarray (n_attributes,) int64
        The attributes' cardinalities.
    n_classes : int
        The number of classes, C.
    order : ndarray (n_order,) int64
        The attributes in the order they join the model (by mutual information with the class).
    par_ptr, par_idx, root, data : ndarray int64
        The context tries (:class:`~hdp_plugin.structure.selective.ContextTries`, the module
        docstring): attribute ``a``'s parents are ``par_idx[par_ptr[a]:par_ptr[a + 1]]`` in
        branching order, its class-only context is the block at ``root[a]`` of ``data``. The counts
        are those of all the rows, this block's included.
    n_y : ndarray (n_classes,) int64
        The class counts of all the rows.
    n_rows_total : float
        The number of all the rows.
    m : float
        The m-estimate's m.
    hierarchical : bool
        Each context's estimate smoothed towards its parent context's (True) or towards the uniform
        distribution (False, the published rule).
    max_k : int
        The most parents per attribute.
    acc : ndarray (FIXED_DIGITS + 2, n_order + 1, max_k + 1) int64
        The fixed-point sums, added to (the module docstring).
    """
    n_rows = X.shape[0]
    n_attr = order.shape[0]
    C = n_classes
    post = np.empty((max_k + 1, C))
    tail = np.empty(C)
    prior = np.empty(C)
    up = np.empty(C)  # hierarchical: the estimates of the context one level up, per class
    # the block's sums: rows 0-4 the errors of one k, rows 5-9 (``suffix[:, u, s]``) those that every k >= s
    # takes (added to acc at the end, by fixed_merge and _add_suffix_sums); a row's k picks its sum by
    # index, not by a branch (one the processor would mispredict at every walk's end)
    both = np.zeros((2 * (FIXED_DIGITS + 2), acc.shape[1], acc.shape[2]), np.int64)
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
        # every k's products start as the prior; rows above ``eq`` all hold ``tail`` without being written
        # (_materialize writes them when a deeper estimate is about to be multiplied in)
        for c in range(C):
            post[0, c] = prior[c]
            tail[c] = prior[c]
        eq = 0
        # every k takes the prior's error (int64 arguments: one specialisation)
        fixed_add(both, np.int64(FIXED_DIGITS + 2), np.int64(0), np.int64(0), e * e)
        # Step 2: add attributes in MI order
        for u in range(n_attr):
            a = order[u]
            ca = card[a]
            xa = np.int64(X[r, a])
            first = par_ptr[a]
            depth = par_ptr[a + 1] - first
            # walk down the row's path (it exists, with a value block for xa: the row itself was counted)
            block = root[a]
            vb = data[block + C + xa]
            if hierarchical:
                for c in range(C):
                    up[c] = 1.0 / ca
            d = 0
            stop = 0
            while True:
                eq = _materialize(post, tail, eq, np.int64(d), C)
                _multiply_estimates(post, np.int64(d), data, block, vb, ca, yi, C, m, hierarchical, up)
                if d == depth:
                    stop = d
                    break
                child = data[block + C + ca + np.int64(X[r, par_idx[first + d]])]
                child_vb = data[child + C + xa]
                cnt = 0
                if child_vb >= 0:
                    for c in range(C):
                        cnt += data[child_vb + c]
                if cnt < 2:  # back off: the depth-d estimate serves k = d + 1 as well
                    eq = _materialize(post, tail, eq, d + 1, C)
                    if hierarchical:  # ``up`` holds it
                        for c in range(C):
                            post[d + 1, c] *= up[c]
                    else:
                        _multiply_estimates(post, d + 1, data, block, vb, ca, yi, C, m, False, up)
                    stop = d + 1
                    break
                block = child
                vb = child_vb
                d += 1
            # every larger k takes the walk's last posterior: rows above stop stand for row stop
            eq = stop
            # Step 3: every k's squared error after the first u + 1 attributes (rows above eq hold row
            # eq's products, so its sum, error and rescaling: computed once, and its error added once
            # for every k >= eq)
            for k in range(eq + 1):
                s = 0.0
                for c in range(C):
                    s += post[k, c]
                e = 1.0 - post[k, yi] / s  # exactly 0 when C = 1
                fixed_add(both, np.int64(k == eq) * (FIXED_DIGITS + 2), u + 1, k, e * e)
                if s < RESCALE_BELOW:  # keep the unnormalised products away from underflow
                    for c in range(C):
                        post[k, c] /= s
            for c in range(C):
                tail[c] = post[eq, c]
    fixed_merge(acc, both[:FIXED_DIGITS + 2])
    _add_suffix_sums(acc, both[FIXED_DIGITS + 2:])


@njit(**NJIT_OPTIONS)
def _add_suffix_sums(acc, suffix):
    """Add to every ``acc[:, u, k]`` the fixed-point sums ``suffix[:, u, s]`` of every ``s <= k``,
    exactly (a running sum over ``k``, added cell by cell).

    Parameters
    ----------
    acc : ndarray (FIXED_DIGITS + 2, n_order + 1, max_k + 1) int64
        The fixed-point sums (the module docstring), added to.
    suffix : ndarray int64, the shape of ``acc``
        Sums each of which every larger ``k`` takes too; read only.
    """
    run = np.zeros(FIXED_DIGITS + 2, np.int64)
    for u in range(acc.shape[1]):
        for j in range(FIXED_DIGITS + 2):
            run[j] = 0
        for k in range(acc.shape[2]):
            _fixed_add_digits(run, suffix[:, u, k])
            _fixed_add_digits(acc[:, u, k], run)


@njit(inline="always", **NJIT_OPTIONS)
def _fixed_add_digits(to, add):
    """``to += add``, exactly, for one fixed-point sum each (the module docstring).

    Parameters
    ----------
    to : ndarray (FIXED_DIGITS + 2,) int64
        The sum added to.
    add : ndarray (FIXED_DIGITS + 2,) int64
        The sum added; read only.
    """
    c = 0
    for j in range(FIXED_DIGITS, 0, -1):
        lo = to[j] + add[j] + c  # both digits < 2**62
        c = 0
        if lo >= FIXED_ONE:
            lo -= FIXED_ONE
            c = 1
        to[j] = lo
    to[0] += add[0] + c
    to[FIXED_DIGITS + 1] += add[FIXED_DIGITS + 1]


@njit(inline="always", **NJIT_OPTIONS)  # inlined, as _multiply_estimates
def _materialize(post, tail, eq, r, C):
    """Write ``tail`` (what they hold) into rows ``eq + 1 .. r`` of ``post`` before row ``r`` is multiplied
    into; returns the new ``eq`` (``max(eq, r)``).

    Parameters
    ----------
    post : ndarray (max_k + 1, C) float64
        The row's per-class products; rows above ``eq`` hold ``tail`` but are not written.
    tail : ndarray (C,) float64
        The products of every row above ``eq``.
    eq : int
        The last row written.
    r : int
        The row about to be multiplied into.
    C : int
        The number of classes.
    """
    if r <= eq:
        return eq
    for k in range(eq + 1, r + 1):
        for c in range(C):
            post[k, c] = tail[c]
    return r


@njit(inline="always", **NJIT_OPTIONS)  # inlined: a call passing arrays costs atomic reference counts
def _multiply_estimates(post, k, data, block, vb, ca, yi, C, m, hierarchical, up):
    """post[k, c] *= the m-estimate of p(x_a | c, the block's context), the row left out: flat, or
    ``hierarchical`` (smoothed towards ``up``, the parent context's estimates, which it then holds).

    Parameters
    ----------
    post : ndarray (max_k + 1, C) float64
        The row's unnormalised per-class products, one row per k; row ``k`` is multiplied in place.
    k : int
        The row of ``post``.
    data : ndarray int64
        The context tries (the module docstring's layout).
    block : int
        The context's node block in ``data`` (its class totals n(y, context) first).
    vb : int
        The value block of the row's value of the attribute in that context (its counts by class).
    ca : int
        The attribute's cardinality, ``|X_a|``.
    yi : int
        The row's class (its own count is taken off that class's cells).
    C : int
        The number of classes.
    m : float
        The m-estimate's m.
    hierarchical : bool
        Smooth towards ``up`` (and write this context's estimates into it) instead of ``1 / ca``.
    up : ndarray (C,) float64
        Hierarchical: the parent context's estimates (``1 / ca`` above the class-only context).
    """
    for c in range(C):
        own = 1.0 if c == yi else 0.0
        den = data[block + c] - own + m
        if hierarchical:
            if den > 0.0:  # else an empty context with m = 0: its parent's estimate
                up[c] = (data[vb + c] - own + m * up[c]) / den
            post[k, c] *= up[c]
        elif den > 0.0:
            post[k, c] *= (data[vb + c] - own + m / ca) / den
        else:  # an empty context with m = 0: uniform
            post[k, c] /= ca


@njit(inline="always", **NJIT_OPTIONS)  # inlined into the passes, as _multiply_estimates
def fixed_add(acc, at, u, k, e2):
    """Add ``e2`` (a squared error, in [0, 1]) to the fixed-point sum ``acc[at:at + 4, u, k]`` (the
    module docstring: exact from ``2**-72`` up, the last digit rounded below); anything else (NaN) is
    counted in ``acc[at + 3, u, k]``.

    Parameters
    ----------
    acc : ndarray (>= at + FIXED_DIGITS + 2, n_order + 1, max_k + 1) int64
        Fixed-point sums (the module docstring), from row ``at`` on; ``acc[at:at + 4, u, k]`` is added to.
    at : int
        The sum's first row (its units): 0 for a sum array of its own.
    u, k : int
        The sum to add to: the first ``u`` attributes of the order, at most ``k`` parents each.
    e2 : float
        The squared error.

    The carries are computed, not branched on: a branch on them is one the processor mispredicts
    about as often as not.
    """
    if not (e2 >= 0.0 and e2 <= 1.0):
        acc[at + 3, u, k] += 1
        return
    # e2 * 2**62 is exact; its fraction times 2**62 is exact too when e2 >= 2**-72 (else rounded). e2 = 1
    # gives d1 = 2**62, which carries one unit; a fraction rounded up to 2**62 carries one into d1.
    x = e2 * FIXED_SCALE
    d1 = np.floor(x)
    lo = acc[at + 2, u, k] + np.int64(np.rint((x - d1) * FIXED_SCALE))
    c = np.int64(lo >= FIXED_ONE)
    acc[at + 2, u, k] = lo - c * FIXED_ONE
    lo = acc[at + 1, u, k] + np.int64(d1) + c
    c = np.int64(lo >= FIXED_ONE)
    acc[at + 1, u, k] = lo - c * FIXED_ONE
    acc[at + 0, u, k] += c


@njit(**NJIT_OPTIONS)
def fixed_merge(acc, other):
    """Add the fixed-point sums ``other`` into ``acc`` (the same shape), exactly.

    Parameters
    ----------
    acc : ndarray (FIXED_DIGITS + 2, n_order + 1, max_k + 1) int64
        The fixed-point sums (the module docstring), added to.
    other : ndarray int64, the shape of ``acc``
        The sums added; read only.
    """
    for u in range(acc.shape[1]):
        for k in range(acc.shape[2]):
            _fixed_add_digits(acc[:, u, k], other[:, u, k])
