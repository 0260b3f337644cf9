"""Stochastic MDL discretisation: cut points drawn in proportion to their MDL margin.

ESKDB (Zhang, Petitjean and Buntine 2020) varies its members partly by discretising every numeric
attribute differently per member. Like Fayyad and Irani's MDL method it splits a range of sorted
values recursively, but the cut is **drawn** instead of taken as the best:

1. candidates are the boundaries between distinct adjacent values of the range (cut value: the
   midpoint); with ``n`` rows, ``k`` classes present, ``M`` candidates, and for a candidate ``S1``,
   ``S2`` the two sides (``k1``, ``k2`` classes present, entropies ``H`` in bits),

   ``gain = H(S) - |S1|/n H(S1) - |S2|/n H(S2)``,
   ``delta = log2(3^k - 2) - (k H(S) - k1 H(S1) - k2 H(S2))``,
   ``weight = max(gain - (log2(M) + delta) / n, 0)``, the MDL margin ("better encoding": ``M`` is
   the number of candidates in the range, not ``n - 1``);
2. if some weight is positive, one candidate is drawn with probability proportional to its
   weight, and the left part, then the right part, are split by the same rule;
3. if none is, the attribute's whole range (only) still gets one cut, drawn in proportion to the
   plain information gain (none if every gain is 0), and the splitting stops there.

So every numeric attribute that carries any information gets at least one cut, where plain MDL
often keeps a small data set's attribute whole. Values then fall into bins as for MDL:
:func:`~hdp_plugin.preprocess.cutpoints.assign_bins`.

ESKDB's default here is a variant, ``"stochastic-gain"`` (:func:`stochastic_gain_reference` defines
it): the cut drawn in proportion to the plain gain and kept while it passes the MDL test, then at
least two cuts per informative attribute (up to four with many classes). It gives members more
varied and finer cut points than the margin-weighted rule, and scores better on 0-1 loss, RMSE and
log-loss over 30 data sets (docs/benchmarks.md).

Random numbers come from a xoshiro256** state given by the caller (:mod:`hdp_plugin.seeds.xoshiro`;
one independent stream per member and attribute, :func:`hdp_plugin.seeds.stream_states`), so the cut
points depend only on the seed and the data. The kernels and the Python definitions here draw the
same numbers from the same state.

References
----------
.. [1] H. Zhang, F. Petitjean and W. Buntine, "Bayesian network classifiers using ensembles and
   smoothing", Knowledge and Information Systems 62 (2020) 3457-3480.
.. [2] U. M. Fayyad and K. B. Irani, "Multi-interval discretization of continuous-valued
   attributes for classification learning", IJCAI 1993, 1022-1027.
"""

from __future__ import annotations

import numpy as np

from ..seeds.xoshiro import uniform
from .kernels import stochastic_cuts_sorted, stochastic_range_weights, xlogx_table

_LN2 = np.log(2.0)


class SortedColumn:
    """One numeric attribute's non-missing values sorted ascending, with their classes.

    Sorting is the costly step and does not depend on the member, so an ensemble sorts each
    attribute once and every member draws its cut points from the same :class:`SortedColumn`.
    """

    def __init__(self, values: np.ndarray, y: np.ndarray, n_classes: int):
        keep = ~np.isnan(values) & (y >= 0)
        v = values[keep]
        order = np.argsort(v, kind="stable")
        self.values = np.ascontiguousarray(v[order])
        self.classes = np.ascontiguousarray(y[keep][order].astype(np.int64))
        self.n_classes = int(n_classes)
        #: ``k ln k`` for every count the column's ranges can have (the kernels' entropies)
        self.xlogx = xlogx_table(max(self.values.shape[0], 1))


class _Ranges:
    """The candidates of ranges of one column and their weights, by the kernel
    :func:`~hdp_plugin.preprocess.kernels.stochastic_range_weights` (buffers allocated once per column)."""

    def __init__(self, col: SortedColumn):
        n = max(col.values.shape[0], 1)
        self.col = col
        self.at, self.margin, self.gain = np.empty(n, np.int64), np.empty(n), np.empty(n)

    def __call__(self, first: int, last: int):
        """``(at, margin, gain)`` of the candidates of rows ``[first, last)`` (views, valid until the next
        call), or None when the range has no candidate or fewer than two classes."""
        col = self.col
        m = stochastic_range_weights(col.values, col.classes, col.n_classes, first, last, self.at, self.margin,
                                     self.gain, col.xlogx)
        return (self.at[:m], self.margin[:m], self.gain[:m]) if m else None


# -- the rule's definition in NumPy: the reference the kernel is tested against (tests/test_eskdb.py),
# and the parts benchmarks/bench_numeric.py builds its variants from
def _entropy_bits(counts: np.ndarray) -> np.ndarray:
    """Entropy in bits of every row of class counts (0 for an empty row); the sum over the classes
    taken left to right (the last of ``cumsum``), as the kernels take it."""
    total = counts.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        xlogx = np.cumsum(np.where(counts > 0, counts * np.log(np.maximum(counts, 1)), 0.0), axis=-1)[..., -1]
        h = (total * np.log(np.maximum(total, 1)) - xlogx) / (np.maximum(total, 1) * _LN2)
    return np.where(total > 0, h, 0.0)


def _candidates(col: SortedColumn, first: int, last: int):
    """Candidate boundaries of rows ``[first, last)``: (index of the last row left of the cut,
    left class counts, right class counts, prior class counts)."""
    v = col.values[first:last]
    at = np.flatnonzero(v[:-1] < v[1:])
    onehot = np.zeros((last - first, col.n_classes), np.int64)
    onehot[np.arange(last - first), col.classes[first:last]] = 1
    cum = np.cumsum(onehot, axis=0)  # class counts of the rows up to each row, inclusive
    prior = cum[-1]
    left = cum[at]
    return first + at, left, prior[None, :] - left, prior


def _weights(left, right, prior, n_rows: int, margin: bool, candidates: int | None = None) -> np.ndarray:
    """MDL margins (``margin``) or plain information gains of every candidate (of the given rows of
    ``left``/``right``; ``candidates``: the range's number of candidates, by default their number)."""
    h = _entropy_bits(prior)
    h1, h2 = _entropy_bits(left), _entropy_bits(right)
    n1, n2 = left.sum(axis=1), right.sum(axis=1)
    gain = h - (n1 * h1 + n2 * h2) / n_rows
    if not margin:
        return np.maximum(gain, 0.0)
    k = np.count_nonzero(prior)
    k1, k2 = np.count_nonzero(left, axis=1), np.count_nonzero(right, axis=1)
    delta = np.log2(3.0**k - 2.0) - (k * h - k1 * h1 - k2 * h2)
    m = left.shape[0] if candidates is None else candidates
    return np.maximum(gain - (np.log2(m) + delta) / n_rows, 0.0)


def check_state(state) -> np.ndarray:
    """``state`` if it is a generator state (a (4,) uint64 array, :func:`hdp_plugin.seeds.stream_states`),
    else a one-line TypeError."""
    if not (isinstance(state, np.ndarray) and state.shape == (4,) and state.dtype == np.uint64):
        got = f"a {state.shape} {state.dtype} array" if isinstance(state, np.ndarray) else type(state).__name__
        raise TypeError(f"the stochastic cut points draw from a generator state, a (4,) uint64 array "
                        f"(hdp_plugin.seeds.stream_states), got {got}")
    return state


def _draw(weights: np.ndarray, state: np.ndarray) -> int:
    """An index drawn with probability proportional to ``weights`` (some weight is > 0), by one uniform
    of the xoshiro256** ``state`` (advanced)."""
    cum = np.cumsum(weights)
    return int(min(np.searchsorted(cum, uniform(state) * cum[-1], side="right"), len(cum) - 1))


def stochastic_mdl_cut_points(col: SortedColumn, rng: np.ndarray) -> np.ndarray:
    """Cut points of one attribute drawn by the stochastic MDL rule (see the module docstring).

    Parameters
    ----------
    col : SortedColumn
        The attribute's sorted training values and classes.
    rng : ndarray (4,) uint64
        The attribute's own xoshiro256** state (:func:`hdp_plugin.seeds.stream_states`), advanced in
        place; one uniform number is used per cut drawn, ranges are split left part first.

    Returns
    -------
    ndarray of float64
        Ascending cut points (midpoints between consecutive distinct values); empty when no
        candidate carries any information.
    """
    return stochastic_cuts_sorted(col.values, col.classes, col.n_classes, check_state(rng), col.xlogx, False, 0)


#: cut points of every informative attribute that ``"stochastic-gain"`` makes at least ...
GAIN_MIN_CUTS = 2
#: ... or, with more classes, one fewer than the classes present in its rows, up to this many
GAIN_MAX_CLASS_CUTS = 4


def gain_min_cuts(col: SortedColumn) -> int:
    """The fewest cuts ``"stochastic-gain"`` gives an informative attribute:
    ``max(GAIN_MIN_CUTS, min(c - 1, GAIN_MAX_CLASS_CUTS))`` for the ``c`` classes present among its
    known values (2 for two or three classes, 3 for four, 4 from five on)."""
    present = int(np.count_nonzero(np.bincount(col.classes, minlength=1))) if col.classes.size else 0
    return max(GAIN_MIN_CUTS, min(present - 1, GAIN_MAX_CLASS_CUTS))


def stochastic_gain_cut_points(col: SortedColumn, rng: np.ndarray, min_cuts: int | None = None) -> np.ndarray:
    """Cut points of one attribute by the ``"stochastic-gain"`` rule (ESKDB's default),
    drawn by the kernel :func:`~hdp_plugin.preprocess.kernels.stochastic_cuts_sorted`, which
    reproduces :func:`stochastic_gain_reference` (the rule's definition in Python) draw for draw on the
    same xoshiro256** state ``rng`` (advanced in place). ``min_cuts`` defaults to :func:`gain_min_cuts`."""
    if min_cuts is None:
        min_cuts = gain_min_cuts(col)
    return stochastic_cuts_sorted(col.values, col.classes, col.n_classes, check_state(rng), col.xlogx, True,
                                  int(min_cuts))


def stochastic_gain_reference(col: SortedColumn, rng: np.ndarray, min_cuts: int | None = None) -> np.ndarray:
    """The ``"stochastic-gain"`` rule in Python (the definition the kernel is tested against).

    Like :func:`stochastic_mdl_cut_points`, ranges are split recursively, left part first, but:

    1. the cut of a range is drawn in proportion to its plain information gain (not to its MDL
       margin), and the range is split further only if *that* cut passes Fayyad and Irani's MDL
       test (positive margin); a cut that fails it is kept at the attribute's whole range (so an
       informative attribute always gets one) and dropped below it;
    2. then, while the attribute has fewer than ``min_cuts`` cuts (default :func:`gain_min_cuts`:
       2, or one fewer than the classes present, up to 4), one more is drawn among the candidates of
       all its bins in proportion to the gain times the bin's share of the rows (the entropy it
       removes from the whole column), until no candidate gains anything.

    On numeric data with few rows per class (benchmarks/bench_numeric.py, docs/benchmarks.md) this
    gives members more varied cut points and at least three bins per informative attribute, where
    the margin-weighted rule gives about two. One uniform number of the xoshiro256** state ``rng``
    is used per cut drawn.
    """
    check_state(rng)
    n = col.values.shape[0]
    cut_at: list[int] = []
    ranges = _Ranges(col)
    stack = [(0, n, True)]
    while stack:
        first, last, top = stack.pop()
        if last - first < 2:
            continue
        found = ranges(first, last)
        if found is None:
            continue
        idx, margin, gain = found
        if gain.max() <= 0.0:
            continue
        j = _draw(gain, rng)
        ok = bool(margin[j] > 0.0)
        if not ok and not top:
            continue
        i = int(idx[j])
        cut_at.append(i)
        if ok:
            stack.append((i + 1, last, False))  # popped second: the right part
            stack.append((first, i + 1, False))  # popped first: the left part
    if cut_at:
        extra_cuts(col, cut_at, gain_min_cuts(col) if min_cuts is None else min_cuts, rng)
    return np.array(sorted((col.values[i] + col.values[i + 1]) / 2.0 for i in cut_at), dtype=np.float64)


def extra_cuts(col: SortedColumn, cut_at: list[int], min_cuts: int, rng: np.ndarray) -> int:
    """Step 2 of :func:`stochastic_gain_cut_points`: add cuts to ``cut_at`` (candidate positions in
    ``col``) while it has fewer than ``min_cuts``, each drawn among the candidates of all the bins in
    proportion to its gain times the bin's share of the rows, until no candidate gains anything.
    Returns how many were added."""
    n = col.values.shape[0]
    ranges = _Ranges(col)
    added = 0
    while len(cut_at) < min_cuts:
        bounds = [0] + sorted(b + 1 for b in cut_at) + [n]
        cands, weights = [], []
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            if hi - lo < 2:
                continue
            found = ranges(lo, hi)
            if found is None:
                continue
            cands.append(found[0].copy())
            weights.append(found[2] * (hi - lo) / n)
        if not cands or max(float(w.max()) for w in weights) <= 0.0:
            break
        cut_at.append(int(np.concatenate(cands)[_draw(np.concatenate(weights), rng)]))
        added += 1
    return added
