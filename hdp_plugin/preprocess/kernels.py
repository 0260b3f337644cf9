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

from ..runtime.radix import sort_nonnegative
from ..runtime.jit import NJIT_OPTIONS
from ..seeds.xoshiro import uniform

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
    """Weka's ``ContingencyTables.entropy``: entropy in bits of a row of class counts (0 if empty).

    Parameters
    ----------
    counts : ndarray of shape (n_classes,), int64
        The class counts (each >= 0).
    xlogx : ndarray, float64
        Table from :func:`xlogx_table` covering the counts' total.
    """
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
    """Weka's ``ContingencyTables.entropyConditionedOnRows`` for the two rows ``left``, ``right``:
    the class entropy in bits given the row, weighted by the rows' totals (0 if both are empty).

    Parameters
    ----------
    left, right : ndarray of shape (n_classes,), int64
        The class counts of the two parts of a split (each >= 0).
    xlogx : ndarray, float64
        Table from :func:`xlogx_table` covering the two parts' total.
    """
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
    """Weka's ``Utils.log2``: ``Math.log(x) / Math.log(2)`` (not ``log2``, to keep its rounding).

    Parameters
    ----------
    x : float
        The argument, > 0.
    """
    return math.log(x) / LN2


@njit(inline="always", **NJIT_OPTIONS)  # inlined, as _entropy_bits
def _n_present(counts):
    """The number of classes present: the entries of ``counts`` above 0.

    Parameters
    ----------
    counts : ndarray of shape (n_classes,), int64
        The class counts.
    """
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
    classes): close to linear in the rows for real-looking data, but when the accepted splits are
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


# -- stochastic MDL (hdp_plugin.preprocess.stochastic) ----------------------------------------------
# These follow the NumPy expressions of the rule's definition operation for operation, so the weights
# are the doubles those expressions give: a sum over the classes is taken left to right (the last of
# NumPy's ``cumsum``), logarithms are ``log`` and ``log2``.
@njit(inline="always", **NJIT_OPTIONS)  # inlined: a call passing arrays costs atomic reference counts
def _entropy_bits(counts, xlogx):
    """Entropy in bits of one row of class counts (0 for an empty row), the sum over the classes
    taken left to right.

    Parameters
    ----------
    counts : ndarray of shape (n_classes,), int64
        The class counts.
    xlogx : ndarray of float64
        :func:`xlogx_table` covering the row's total.
    """
    total = 0
    xl = 0.0
    for c in range(counts.shape[0]):
        total += counts[c]
        xl += xlogx[counts[c]]
    if total == 0:
        return 0.0
    return (xlogx[total] - xl) / (float(total) * LN2)


@njit(**NJIT_OPTIONS)
def stochastic_range_weights(values, classes, n_classes, first, last, at, margin, gain, xlogx):
    """The candidate cuts of rows ``[first, last)`` of a sorted column and their weights.

    Parameters
    ----------
    values : ndarray of float64
        The column's non-missing values, sorted ascending.
    classes : ndarray of int64
        Their class codes ``0 .. n_classes - 1``.
    n_classes : int
        Number of classes.
    first, last : int
        The range: rows ``first .. last - 1`` (``last - first >= 2``).
    at : ndarray of int64, at least ``last - first - 1`` long
        Out: ``at[j]`` the last row left of candidate ``j`` (a boundary between distinct values).
    margin : ndarray of float64, as long as ``at``
        Out: candidate ``j``'s MDL margin ``max(gain - (log2(M) + delta) / n, 0)``, ``M`` the range's
        candidates (:mod:`hdp_plugin.preprocess.stochastic`).
    gain : ndarray of float64, as long as ``at``
        Out: its information gain, at least 0.
    xlogx : ndarray of float64
        :func:`xlogx_table` of at least ``last - first``.

    Returns
    -------
    int
        ``M``, the number of candidates written; 0 when the range has none or fewer than two classes.
    """
    n = last - first
    prior = np.zeros(n_classes, np.int64)
    for r in range(first, last):
        prior[classes[r]] += 1
    k = _n_present(prior)
    m = 0
    for r in range(first, last - 1):
        if values[r] < values[r + 1]:
            m += 1
    if m == 0 or k < 2:
        return 0
    h = _entropy_bits(prior, xlogx)
    base = math.log2(3.0 ** k - 2.0)
    log2m = math.log2(float(m))
    left = np.zeros(n_classes, np.int64)
    right = np.empty(n_classes, np.int64)
    j = 0
    for r in range(first, last - 1):
        left[classes[r]] += 1
        if values[r] < values[r + 1]:
            for c in range(n_classes):
                right[c] = prior[c] - left[c]
            n1 = r - first + 1
            h1 = _entropy_bits(left, xlogx)
            h2 = _entropy_bits(right, xlogx)
            g = h - (float(n1) * h1 + float(n - n1) * h2) / float(n)
            gain[j] = max(g, 0.0)
            delta = base - (float(k) * h - float(_n_present(left)) * h1 - float(_n_present(right)) * h2)
            margin[j] = max(g - (log2m + delta) / float(n), 0.0)
            at[j] = r
            j += 1
    return m


@njit(**NJIT_OPTIONS)
def _draw_index(weights, m, rng):
    """An index of ``weights[:m]`` drawn with probability proportional to them (some weight is > 0):
    NumPy's ``min(searchsorted(cumsum(w), u * cumsum(w)[-1], "right"), m - 1)`` for one uniform ``u``
    (:func:`~hdp_plugin.seeds.xoshiro.uniform`).

    Parameters
    ----------
    weights : ndarray of float64, at least ``m`` long
        The weights (each >= 0); only the first ``m`` are read.
    m : int
        The number of candidates, >= 1.
    rng : ndarray (4,) uint64
        The column's xoshiro256** state: one uniform is drawn.
    """
    total = 0.0
    for j in range(m):
        total += weights[j]
    u = uniform(rng) * total
    c = 0.0
    for j in range(m):
        c += weights[j]
        if c > u:
            return j
    return m - 1


@njit(**NJIT_OPTIONS)
def stochastic_cuts_sorted(values, classes, n_classes, rng, xlogx, by_gain, min_cuts):
    """Cut points of one sorted column by a stochastic rule of :mod:`hdp_plugin.preprocess.stochastic`:
    ``"stochastic-mdl"`` (``by_gain`` False, ``min_cuts`` 0) or ``"stochastic-gain"`` (``by_gain``
    True), reproducing the Python definitions draw for draw.

    Ranges are split recursively, left part first. By MDL margin: a cut drawn in proportion to the
    candidates' margins, the range split further; if no margin is positive, the whole range only still
    gets one cut drawn by plain gain. By gain: a cut drawn in proportion to the gains, the range split
    further if that cut passes the MDL test (positive margin), kept at the whole range only if not;
    then, while fewer than ``min_cuts``, one more cut among the candidates of all the bins, drawn by
    gain times the bin's share of the rows.

    Parameters
    ----------
    values : ndarray of float64
        The column's non-missing values, sorted ascending.
    classes : ndarray of int64
        Their class codes ``0 .. n_classes - 1``.
    n_classes : int
        Number of classes.
    rng : ndarray (4,) uint64
        The column's own xoshiro256** state (:mod:`hdp_plugin.seeds.xoshiro`), advanced in place: one
        uniform per cut drawn, ranges split left part first.
    xlogx : ndarray of float64
        :func:`xlogx_table` of at least ``len(values)``.
    by_gain : bool
        The ``"stochastic-gain"`` rule (else ``"stochastic-mdl"``).
    min_cuts : int
        The fewest cuts an informative attribute gets (the gain rule's step 2; 0: none added).

    Returns
    -------
    ndarray of float64
        Ascending cut points (midpoints between consecutive distinct values); empty when no
        candidate carries any information.
    """
    n = values.shape[0]
    size = max(n, 1)
    at = np.empty(size, np.int64)
    margin = np.empty(size, np.float64)
    gain = np.empty(size, np.float64)
    st_first = np.empty(2 * size + 2, np.int64)
    st_last = np.empty(2 * size + 2, np.int64)
    st_top = np.zeros(2 * size + 2, np.bool_)
    cut_at = np.empty(size, np.int64)
    n_cuts = 0
    # Step 1: the recursive splits
    st_first[0], st_last[0], st_top[0] = 0, n, True
    sp = 1
    while sp > 0:
        sp -= 1
        first, last, top = st_first[sp], st_last[sp], st_top[sp]
        if last - first < 2:
            continue
        m = stochastic_range_weights(values, classes, n_classes, first, last, at, margin, gain, xlogx)
        if m == 0:
            continue
        w_max = 0.0
        g_max = 0.0
        for j in range(m):
            w_max = max(w_max, margin[j])
            g_max = max(g_max, gain[j])
        if by_gain:
            if g_max <= 0.0:
                continue
            j = _draw_index(gain, m, rng)
            split = margin[j] > 0.0
            if not split and not top:
                continue
        elif w_max > 0.0:
            j = _draw_index(margin, m, rng)
            split = True
        elif top and g_max > 0.0:  # the whole range only: one cut by plain gain, no further split
            j = _draw_index(gain, m, rng)
            split = False
        else:
            continue
        i = at[j]
        cut_at[n_cuts] = i
        n_cuts += 1
        if split:
            st_first[sp], st_last[sp], st_top[sp] = i + 1, last, False  # popped second: the right part
            st_first[sp + 1], st_last[sp + 1], st_top[sp + 1] = first, i + 1, False  # popped first: the left
            sp += 2
    # Step 2 (gain rule): while fewer than min_cuts, one more cut among the candidates of all the bins,
    # drawn by gain times the bin's share of the rows
    if n_cuts > 0 and n_cuts < min_cuts:
        pool_at = np.empty(size, np.int64)
        pool_w = np.empty(size, np.float64)
        bounds = np.empty(size + 2, np.int64)
        while n_cuts < min_cuts:
            for b in range(n_cuts):
                bounds[b] = cut_at[b] + 1
            sort_nonnegative(bounds, n_cuts)
            n_pool = 0
            w_max = 0.0
            for b in range(n_cuts + 1):
                lo = 0 if b == 0 else bounds[b - 1]
                hi = n if b == n_cuts else bounds[b]
                if hi - lo < 2:
                    continue
                m = stochastic_range_weights(values, classes, n_classes, lo, hi, at, margin, gain, xlogx)
                for j in range(m):
                    pool_at[n_pool] = at[j]
                    pool_w[n_pool] = gain[j] * float(hi - lo) / float(n)
                    w_max = max(w_max, pool_w[n_pool])
                    n_pool += 1
            if n_pool == 0 or w_max <= 0.0:
                break
            cut_at[n_cuts] = pool_at[_draw_index(pool_w, n_pool, rng)]
            n_cuts += 1
    # in the order of the rows, which is the order of the cut points (each lies between its row's value
    # and the next, larger one)
    sort_nonnegative(cut_at, n_cuts)
    cuts = np.empty(n_cuts, np.float64)
    for j in range(n_cuts):
        cuts[j] = (values[cut_at[j]] + values[cut_at[j] + 1]) / 2.0
    return cuts


@njit(**NJIT_OPTIONS)
def stochastic_cuts_columns(values, classes, col_start, n_classes, states, xlogx, by_gain, min_cuts):
    """:func:`stochastic_cuts_sorted` of every column of a member in one call, each column on its own
    xoshiro256** stream (a copy of its row of ``states``: ``states`` is not changed).

    Parameters
    ----------
    values : ndarray of float64
        Every column's sorted non-missing values, one column after the other.
    classes : ndarray of int64
        Their class codes.
    col_start : ndarray (n_columns + 1,) int64
        Column ``i`` is ``values[col_start[i]:col_start[i + 1]]``.
    n_classes : int
        Number of classes.
    states : ndarray (n_columns, 4) uint64
        Every column's generator state (:func:`hdp_plugin.seeds.stream_states`).
    xlogx : ndarray of float64
        :func:`xlogx_table` of at least the longest column.
    by_gain : bool
        The ``"stochastic-gain"`` rule (else ``"stochastic-mdl"``).
    min_cuts : ndarray (n_columns,) int64
        Every column's fewest cuts (the gain rule's step 2; 0: none added).

    Returns
    -------
    (cuts, cut_start) : ndarray float64, ndarray int64
        Column ``i``'s ascending cut points are ``cuts[cut_start[i]:cut_start[i + 1]]``.
    """
    n_cols = col_start.shape[0] - 1
    parts = []
    cut_start = np.zeros(n_cols + 1, np.int64)
    state = np.empty(4, np.uint64)
    for i in range(n_cols):
        for w in range(4):
            state[w] = states[i, w]
        lo, hi = col_start[i], col_start[i + 1]
        c = stochastic_cuts_sorted(values[lo:hi], classes[lo:hi], n_classes, state, xlogx, by_gain, min_cuts[i])
        parts.append(c)
        cut_start[i + 1] = cut_start[i] + c.shape[0]
    cuts = np.empty(cut_start[n_cols], np.float64)
    for i in range(n_cols):
        cuts[cut_start[i]:cut_start[i + 1]] = parts[i]
    return cuts, cut_start


@njit(**NJIT_OPTIONS)
def bin_columns(numeric, cols, cut_flat, cut_start, out):
    """Bin codes of several numeric columns at once: :func:`~hdp_plugin.preprocess.cutpoints.assign_bins`
    of column ``cols[i]`` at the cut points ``cut_flat[cut_start[i]:cut_start[i + 1]]`` into ``out[:, i]``
    (the first ``b`` with ``value <= cut[b]``, else the last bin; a missing value, NaN, the code after
    the last bin).

    Parameters
    ----------
    numeric : ndarray (n_rows, n_numeric) float64
        The numeric values, NaN for missing.
    cols : ndarray (n_out,) int64
        The column of ``numeric`` of each output column.
    cut_flat : ndarray float64
        Every output column's ascending cut points, one after the other.
    cut_start : ndarray (n_out + 1,) int64
        Where each output column's cut points start in ``cut_flat``.
    out : ndarray (n_rows, n_out) int64
        Written: the codes.
    """
    for i in range(cols.shape[0]):
        first = cut_start[i]
        n_cuts = cut_start[i + 1] - first
        c = cols[i]
        for r in range(numeric.shape[0]):
            v = numeric[r, c]
            if v != v:  # NaN: missing
                out[r, i] = n_cuts + 1
                continue
            lo = 0
            hi = n_cuts
            while lo < hi:
                mid = (lo + hi) >> 1
                if cut_flat[first + mid] < v:
                    lo = mid + 1
                else:
                    hi = mid
            out[r, i] = lo
